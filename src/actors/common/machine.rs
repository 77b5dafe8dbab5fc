//! What the daemon detects about its machine: CPUs, memory, the disk of
//! `EXECUTE`, swap, load average, keyboard and console idle time.

use std::path::Path;

use crate::classad::{ClassAd, Value};
use crate::policy::layout::MachineInputs;

fn meminfo_kb(key: &str) -> Option<i64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Free KiB of the file system holding `dir`.
pub fn disk_kb(dir: &Path) -> i64 {
    match nix::sys::statvfs::statvfs(dir) {
        Ok(s) => {
            let bytes = u128::from(s.blocks_available()) * u128::from(s.fragment_size());
            i64::try_from(bytes / 1024).unwrap_or(i64::MAX)
        }
        Err(_) => 0,
    }
}

/// Physical memory in MiB (1024 if /proc/meminfo cannot be read).
pub fn memory_mb() -> i64 {
    meminfo_kb("MemTotal:").map_or(1024, |k| k / 1024)
}

/// The machine's resources as detected now.
pub fn detect(execute: &Path) -> MachineInputs {
    let cpus =
        std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1));
    MachineInputs {
        cpus,
        memory_mb: memory_mb(),
        disk_kb: disk_kb(execute),
        swap_kb: meminfo_kb("SwapTotal:").unwrap_or(0),
        gpus: 0,
    }
}

/// The 1-minute load average.
pub fn load_avg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// Seconds since a terminal device was last used (its access time), the
/// smallest over `devices`; `None` when none exists.
fn idle_of(devices: &[&str], now: i64) -> Option<i64> {
    devices
        .iter()
        .filter_map(|d| std::fs::metadata(d).ok())
        .map(|m| {
            use std::os::unix::fs::MetadataExt;
            (now - m.atime()).max(0)
        })
        .min()
}

/// Seconds since boot.
fn uptime() -> i64 {
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|t| t.split('.').next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// The machine attributes every slot ad carries (the dynamic part).
pub fn machine_ad(now: i64) -> ClassAd {
    let mut ad = ClassAd::new();
    let load = load_avg();
    ad.insert_value("TotalLoadAvg", Value::Real(load));
    ad.insert_value("LoadAvg", Value::Real(load));
    ad.insert_value("TotalCondorLoadAvg", Value::Real(0.0));
    ad.insert_value("CondorLoadAvg", Value::Real(0.0));
    // Without a console device, idle since the machine booted.
    let console = idle_of(&["/dev/console", "/dev/tty0"], now).unwrap_or_else(uptime);
    ad.insert_value("ConsoleIdle", Value::Int(console));
    ad.insert_value("KeyboardIdle", Value::Int(console));
    ad.insert_value("MyCurrentTime", Value::Int(now));
    // The starter waits for a job's DeferralTime.
    ad.insert_value("HasJobDeferral", Value::Bool(true));
    // The starter fetches a job's files from its queue, and file:// URLs.
    ad.insert_value("HasFileTransfer", Value::Bool(true));
    ad.insert_value(
        "HasFileTransferPluginMethods",
        Value::from(crate::starter::transfer::METHODS),
    );
    ad.insert_value("OpSys", Value::from("LINUX"));
    ad.insert_value(
        "Arch",
        Value::from(if std::env::consts::ARCH == "x86_64" {
            "X86_64"
        } else {
            std::env::consts::ARCH
        }),
    );
    ad
}

/// Roost's MIPS benchmark (`roost benchmark mips`, the default
/// `BENCHMARKS_MIPS` job): millions of integer operations per second of
/// one core, from a loop run for about `each`. Not HTCondor's Dhrystone:
/// values compare Roost nodes with each other, on about the same scale.
pub fn mips(each: std::time::Duration) -> i64 {
    use std::hint::black_box;
    let mut lanes = black_box([0x9e37_79b9_u64, 0x85eb_ca6b, 0xc2b2_ae35, 0x27d4_eb2f]);
    let mut rounds = 0u64;
    let secs = timed(each, || {
        for i in 0..ROUND {
            // Four independent chains of four integer operations each,
            // as a processor's integer units run ordinary code.
            for (k, x) in lanes.iter_mut().enumerate() {
                *x = (x.wrapping_add(i) ^ (k as u64))
                    .rotate_left(5)
                    .wrapping_sub(i);
            }
        }
        lanes = black_box(lanes);
        rounds += 1;
    });
    black_box(lanes);
    rate(rounds, 16.0, secs, 1e6)
}

/// Roost's KFLOPS benchmark (`roost benchmark kflops`): thousands of
/// floating-point operations per second of one core (a chain of
/// multiply-adds), from a loop run for about `each`. Not HTCondor's
/// Linpack.
pub fn kflops(each: std::time::Duration) -> i64 {
    use std::hint::black_box;
    let mut lanes = black_box([1.000_000_1_f64, 0.999_999_7, 1.000_000_3, 0.999_999_9]);
    let mut rounds = 0u64;
    let secs = timed(each, || {
        for _ in 0..ROUND {
            // Four independent multiply-add chains: eight floating-point
            // operations per iteration.
            for y in &mut lanes {
                *y = *y * 0.999_999_9 + 1e-7;
            }
        }
        lanes = black_box(lanes);
        rounds += 1;
    });
    black_box(lanes);
    rate(rounds, 8.0, secs, 1e3)
}

/// Iterations of one benchmark round.
const ROUND: u64 = 100_000;

/// Runs `round` until `each` has passed; the seconds it took.
fn timed(each: std::time::Duration, mut round: impl FnMut()) -> f64 {
    let start = std::time::Instant::now();
    while start.elapsed() < each {
        round();
    }
    start.elapsed().as_secs_f64().max(1e-9)
}

/// Operations per second of `rounds` rounds of `ops` operations per
/// iteration in `secs`, in `unit`s.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn rate(rounds: u64, ops: f64, secs: f64, unit: f64) -> i64 {
    ((rounds * ROUND) as f64 * ops / secs / unit) as i64
}
