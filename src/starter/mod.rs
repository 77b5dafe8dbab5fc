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
