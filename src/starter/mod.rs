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
