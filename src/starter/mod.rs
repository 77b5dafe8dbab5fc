//! The starter: one process per job (`roost starter`), as HTCondor's
//! `condor_starter`. [`job`] reads the job ad (pure); [`protocol`] is what
//! the daemon and the starter say to each other (the job event log it
//! writes, `StarterUserLog`, is formatted by `crate::userlog`); [`cgroup`] gives a job its own
//! cgroup where the machine allows; [`withdraw`] reads a fetcher's
//! withdrawal of a running job (pure); [`run`] is the process.

pub mod cgroup;
pub mod error;
pub mod gone;
pub mod job;
pub mod link;
pub mod protocol;
pub mod run;
pub mod transfer;
pub mod withdraw;

/// The sandbox a starter with process id `pid` makes for its job under
/// `EXECUTE` (HTCondor's `dir_<pid>`); the daemon removes it when that
/// starter dies without doing so.
pub fn sandbox_dir(execute: &std::path::Path, pid: u32) -> std::path::PathBuf {
    execute.join(format!("dir_{pid}"))
}

/// Moves the sandbox `dir` of a starter that is gone out of the way (to
/// `dir_<pid>.lost`, or `dir_<pid>.<n>.lost` if an earlier one is still
/// there) at once, so that no starter given the same pid later finds it;
/// returns where it went.
pub fn set_aside(dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let aside = (0u32..)
        .map(|n| match n {
            0 => dir.with_file_name(format!("{name}.lost")),
            n => dir.with_file_name(format!("{name}.{n}.lost")),
        })
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.with_extension("lost"));
    std::fs::rename(dir, &aside)?;
    Ok(aside)
}

/// Deletes set-aside sandboxes (see [`set_aside`]) on a thread of its own,
/// logging each: a big sandbox takes a while, and no one waits for it.
pub fn delete_in_background(dirs: Vec<std::path::PathBuf>) {
    if dirs.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("sandbox-delete".into())
        .spawn(move || {
            for dir in dirs {
                match std::fs::remove_dir_all(&dir) {
                    Ok(()) => tracing::info!(
                        message = "Removed a sandbox its starter left.",
                        sandbox = %dir.display()
                    ),
                    Err(e) => tracing::warn!(
                        message = "Cannot remove a sandbox its starter left.",
                        sandbox = %dir.display(),
                        error = %e
                    ),
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(message = "Cannot delete old sandboxes.", error = %e);
    }
}

/// The name of the job's cgroup a starter with process id `pid` makes for
/// slot `slot` under `BASE_CGROUP` ([`cgroup::JobCgroup::create`]); the
/// daemon finds it by this name when that starter dies.
pub fn cgroup_name(slot: &str, pid: u32) -> String {
    format!("{slot}.{pid}")
}

pub use crate::spawn::process::{is_same_process, process_started};

/// The machine's current boot, as the kernel names it
/// (`/proc/sys/kernel/random/boot_id`; empty when it cannot be read). Two
/// runs of the daemon with different boots know that no process of the
/// first is left, whatever pids and start times say. Tests pretend a
/// reboot with `ROOST_BOOT_ID` (never set it on a real node).
pub fn boot_id() -> String {
    if let Ok(b) = std::env::var("ROOST_BOOT_ID") {
        return b;
    }
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|b| b.trim().to_string())
        .unwrap_or_default()
}

/// Whether the machine booted again since the boot `last` (empty: not
/// known, so not taken as a reboot), with this boot's id.
pub fn rebooted_since(last: &str) -> (bool, String) {
    let boot = boot_id();
    (!last.is_empty() && !boot.is_empty() && last != boot, boot)
}

/// Kills what is left of a job whose starter (pid `starter`, started at
/// `started` ticks) died while no daemon ran: the job's cgroup under
/// `cgroup` (`BASE_CGROUP` and the daemon's cgroup home), and the process
/// group of `job_pid` if that process is still the job's — a group leader
/// started after the starter. Returns whether anything was found.
pub fn kill_remains(
    slot: &str,
    starter: u32,
    started: u64,
    job_pid: Option<u32>,
    cgroup: Option<(&str, &std::path::Path)>,
) -> bool {
    let mut found = false;
    if let Some((base, home)) = cgroup
        && let Some(cg) = cgroup::JobCgroup::existing(home, base, &cgroup_name(slot, starter))
    {
        cg.kill_all();
        found = true;
        if let Err(e) = cg.remove() {
            tracing::warn!(message = "Cannot remove a lost job's cgroup.", slot, error = %e);
        }
    }
    let leader = job_pid.filter(|&pid| {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
        // Field 5 is the process group, field 22 the start time.
        fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pid)
            && fields
                .get(19)
                .and_then(|t| t.parse::<u64>().ok())
                .is_some_and(|t| t >= started)
    });
    if let Some(pid) = leader.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
        found = true;
    }
    found
}

/// The sandboxes under `execute` whose starter is gone: `dir_<pid>` with no
/// process `pid` (a machine crash), and any set aside ([`set_aside`]) that a
/// daemon stopped before deleting. A sandbox whose pid names a live process
/// is left alone, whatever that process is.
pub fn orphaned_sandboxes(execute: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(execute) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let rest = name.strip_prefix("dir_")?;
            if let Some(aside) = rest.strip_suffix(".lost") {
                let (pid, n) = aside.split_once('.').unwrap_or((aside, "0"));
                pid.parse::<u32>().ok()?;
                n.parse::<u32>().ok()?;
                return Some(e.path());
            }
            let pid = rest.parse::<i32>().ok().filter(|p| *p > 0)?;
            let gone = matches!(
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
                Err(nix::errno::Errno::ESRCH)
            );
            gone.then(|| e.path())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_start_time_names_this_process_and_none_for_no_process() {
        let me = process_started(std::process::id()).expect("own start time");
        assert_eq!(process_started(std::process::id()), Some(me));
        let parent = std::os::unix::process::parent_id();
        assert!(process_started(parent).is_some_and(|p| p <= me));
        assert_eq!(process_started(u32::MAX), None);
    }

    #[test]
    fn a_sandbox_is_set_aside_beside_an_earlier_one_and_both_are_found() {
        let execute = std::env::temp_dir().join(format!("roost-aside-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&execute);
        let live = sandbox_dir(&execute, std::process::id());
        let earlier = execute.join("dir_4194304.lost");
        let dir = execute.join("dir_4194304");
        for d in [&live, &earlier, &dir] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let aside = set_aside(&dir).expect("set aside");
        assert_eq!(aside, execute.join("dir_4194304.1.lost"));
        assert!(earlier.is_dir() && !dir.exists());
        let mut found = orphaned_sandboxes(&execute);
        found.sort();
        let _ = std::fs::remove_dir_all(&execute);
        assert_eq!(found, [aside, earlier]);
    }
}
