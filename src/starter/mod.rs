//! The starter: one process per job (`roost starter`), as HTCondor's
//! `condor_starter`. [`job`] reads the job ad (pure); [`protocol`] is what
//! the daemon and the starter say to each other; [`userlog`] formats the
//! job event log (`StarterUserLog`, pure); [`cgroup`] gives a job its own
//! cgroup where the machine allows; [`run`] is the process.

pub mod cgroup;
pub mod job;
pub mod protocol;
pub mod run;
pub mod userlog;

/// The sandbox a starter with process id `pid` makes for its job under
/// `EXECUTE` (HTCondor's `dir_<pid>`); the daemon removes it when that
/// starter dies without doing so.
pub fn sandbox_dir(execute: &std::path::Path, pid: u32) -> std::path::PathBuf {
    execute.join(format!("dir_{pid}"))
}

/// The name of the job's cgroup a starter with process id `pid` makes for
/// slot `slot` under `BASE_CGROUP` ([`cgroup::JobCgroup::create`]); the
/// daemon finds it by this name when that starter dies.
pub fn cgroup_name(slot: &str, pid: u32) -> String {
    format!("{slot}.{pid}")
}

/// The sandboxes under `execute` whose starter is gone: `dir_<pid>` with no
/// process `pid` (a machine crash, or a daemon killed while removing a lost
/// starter's), and any `dir_<pid>.lost`. A sandbox whose pid names a live
/// process is left alone, whatever that process is.
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
            if let Some(pid) = rest.strip_suffix(".lost") {
                pid.parse::<u32>().ok()?;
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
