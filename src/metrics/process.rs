//! The daemon process's own CPU time, memory, start time and open files,
//! read from `/proc` when the metrics are scraped (the fields of
//! `proc_pid_stat(5)`).

/// What the process uses now.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Process {
    /// User and system CPU seconds.
    pub cpu_seconds: f64,
    /// Resident bytes.
    pub resident_bytes: i64,
    /// Virtual bytes.
    pub virtual_bytes: i64,
    /// When it started, seconds since the epoch.
    pub start_time: i64,
    /// Open file descriptors.
    pub open_fds: i64,
}

/// Reads this process's figures (`None` without `/proc`).
pub fn read() -> Option<Process> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks = sysconf(nix::unistd::SysconfVar::CLK_TCK).unwrap_or(100);
    let page = sysconf(nix::unistd::SysconfVar::PAGE_SIZE).unwrap_or(4096);
    let mut p = parse(&stat, &boot, ticks, page)?;
    p.open_fds = std::fs::read_dir("/proc/self/fd")
        .map_or(0, |d| i64::try_from(d.count()).unwrap_or(i64::MAX));
    Some(p)
}

fn sysconf(var: nix::unistd::SysconfVar) -> Option<i64> {
    nix::unistd::sysconf(var).ok().flatten()
}

/// The figures from `/proc/self/stat` and `/proc/stat`'s `btime`, with the
/// clock ticks per second and the page size (pure).
pub fn parse(stat: &str, proc_stat: &str, ticks: i64, page: i64) -> Option<Process> {
    // The command name may hold spaces and parentheses: the fields start
    // after its last ')'. Field 3 (state) is the first after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Option<i64> { f.get(n.checked_sub(3)?)?.parse().ok() };
    let ticks = ticks.max(1);
    let (utime, stime) = (field(14)?, field(15)?);
    let started = field(22)?;
    let btime: i64 = proc_stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    #[allow(clippy::cast_precision_loss)]
    let cpu_seconds = (utime + stime) as f64 / ticks as f64;
    Some(Process {
        cpu_seconds,
        resident_bytes: field(24)?.saturating_mul(page),
        virtual_bytes: field(23)?,
        start_time: btime + started / ticks,
        open_fds: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_stat_fields_past_an_odd_command_name() {
        let stat = "4242 (roost (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 \
                    250 150 0 0 20 0 9 0 12345 104857600 2560 18446744073709551615";
        let p = parse(stat, "cpu 1 2 3\nbtime 1700000000\n", 100, 4096).unwrap_or_default();
        assert_eq!(
            p,
            Process {
                cpu_seconds: 4.0,
                resident_bytes: 2560 * 4096,
                virtual_bytes: 104_857_600,
                start_time: 1_700_000_000 + 123,
                open_fds: 0,
            }
        );
        assert_eq!(parse("garbage", "", 100, 4096), None);
    }

    #[test]
    fn this_process_can_be_read() {
        let p = read().unwrap_or_default();
        assert!(p.resident_bytes > 0, "{p:?}");
        assert!(p.open_fds > 0, "{p:?}");
        assert!(p.start_time > 1_600_000_000, "{p:?}");
    }
}
