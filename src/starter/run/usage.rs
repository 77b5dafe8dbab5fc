//! Following a running job: its process group and cgroup
//! ([`Tracking`]: signals, kills, CPU and memory now and at its end), and
//! the usage attributes UPDATE_JOB_INFO and JOB_EXIT carry.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::log_line;
use crate::classad::{ClassAd, Expr, Value, parse_expr};
use crate::starter::cgroup::JobCgroup;

/// CPU seconds (user, system) of reaped children so far.
pub(super) fn children_cpu() -> (f64, f64) {
    use nix::sys::resource::{UsageWho, getrusage};
    match getrusage(UsageWho::RUSAGE_CHILDREN) {
        Ok(u) => {
            let t = |tv: nix::sys::time::TimeVal| {
                #[allow(clippy::cast_precision_loss)]
                let s = tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
                s
            };
            (t(u.user_time()), t(u.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

/// How the starter follows a running job: its process group, and its
/// cgroup when it has one.
pub(super) struct Tracking<'a> {
    pub(super) cgroup: Option<&'a JobCgroup>,
    /// The reaped children's CPU time before the job started.
    pub(super) before: (f64, f64),
}

impl Tracking<'_> {
    /// Sends a signal to the job's process group and every process in its
    /// cgroup (which includes any that left the group).
    pub(super) fn signal(&self, group: Pid, sig: Signal) {
        let _ = killpg(group, sig);
        if let Some(cg) = self.cgroup {
            cg.signal(sig);
        }
    }

    /// Kills the job's process group and everything in its cgroup.
    pub(super) fn kill(&self, group: Pid) {
        let _ = killpg(group, Signal::SIGKILL);
        if let Some(cg) = self.cgroup {
            cg.kill_all();
        }
    }

    /// (user s, sys s, VmSize KiB, VmRSS KiB, processes) now: the whole
    /// cgroup's CPU time and process count when there is one, else the
    /// job's main process and its process group.
    pub(super) fn usage(&self, pid: u32) -> (f64, f64, i64, i64, i64) {
        let mut u = proc_usage(pid).unwrap_or_default();
        if let Some(cg) = self.cgroup {
            if let Some((user, sys)) = cg.cpu() {
                (u.0, u.1) = (user, sys);
            }
            u.4 = i64::try_from(cg.pids().len()).unwrap_or(i64::MAX);
        }
        u
    }

    /// CPU time of the whole job once it has exited.
    pub(super) fn final_cpu(&self) -> (f64, f64) {
        if let Some(cpu) = self.cgroup.and_then(JobCgroup::cpu) {
            return cpu;
        }
        let after = children_cpu();
        (
            (after.0 - self.before.0).max(0.0),
            (after.1 - self.before.1).max(0.0),
        )
    }
}

/// Removes a job's cgroup (killing what is left in it), saying so if it
/// cannot.
pub(super) fn remove_cgroup(cgroup: Option<JobCgroup>) {
    if let Some(cg) = cgroup
        && let Err(e) = cg.remove()
    {
        log_line(&format!("cannot remove the job's cgroup: {e}"));
    }
}

/// The usage attributes of UPDATE_JOB_INFO and JOB_EXIT: from /proc (and
/// the cgroup) while the job runs, from the cgroup or the reaped
/// children's rusage after it exited.
pub(super) fn publish_usage(ad: &mut ClassAd, pid: u32, state: &str, track: &Tracking<'_>) {
    ad.insert_value("JobState", Value::from(state));
    let (user, sys, image, rss, pids) = if state == "Exited" {
        let (user, sys) = track.final_cpu();
        (user, sys, 0, 0, 0)
    } else {
        track.usage(pid)
    };
    ad.insert_value("NumPids", Value::Int(pids));
    ad.insert_value("RemoteUserCpu", Value::Real(user.floor()));
    ad.insert_value("RemoteSysCpu", Value::Real(sys.floor()));
    ad.insert_value("ImageSize", Value::Int(image));
    ad.insert_value("ResidentSetSize", Value::Int(rss));
    if let Ok(e) = parse_expr("((ResidentSetSize + 1023) / 1024)") {
        ad.insert("MemoryUsage", e);
    } else {
        ad.insert("MemoryUsage", Expr::from_value(Value::Int(0)));
    }
}

/// (user s, sys s, VmSize KiB, VmRSS KiB, processes in the job's group).
fn proc_usage(pid: u32) -> Option<(f64, f64, i64, i64, i64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = 100.0;
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let mut pids = 0;
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(n) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            if let Ok(s) = std::fs::read_to_string(format!("/proc/{n}/stat"))
                && let Some(r) = s.rsplit_once(')')
                && r.1.split_whitespace().nth(2) == Some(&pid.to_string())
            {
                pids += 1;
            }
        }
    }
    Some((
        utime / ticks,
        stime / ticks,
        kb("VmSize:"),
        kb("VmRSS:"),
        pids,
    ))
}
