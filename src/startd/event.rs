//! The startd's events beyond its slots' and node's (which live with the
//! policy, `policy::slot` and `policy::node`): hook invocations and
//! starters.

use serde::{Deserialize, Serialize};

use crate::exit::Exit;

use crate::events::skip::{is_false, is_zero, is_zero_f64};

/// A hook invocation's life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum HookEvent {
    /// The hook process was started.
    Started {
        /// `FETCH_WORK`, `REPLY_FETCH`, `EVICT_CLAIM`.
        hook: String,
        /// For which slot.
        slot: String,
        /// The executable.
        path: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its pid.
        pid: u32,
        /// The claim it concerns, if any.
        claim: Option<u64>,
    },
    /// It finished.
    Finished {
        /// How it ended.
        exit: Exit,
        /// Killed at its timeout.
        timed_out: bool,
        /// Its stdout was cut at the limit.
        truncated: bool,
        /// Bytes of stdout kept.
        stdout_bytes: u64,
        /// What its output meant (`job`, `no work`, the parse error, …).
        outcome: String,
        /// Seconds it ran.
        elapsed: f64,
        /// The job FETCH_WORK handed out (its ad, new syntax): kept so that
        /// a daemon restarted before answering it answers it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handout: Option<String>,
    },
    /// It could not be run (refused path, spawn failure).
    Refused {
        /// The hook type.
        hook: String,
        /// For which slot.
        slot: String,
        /// The configured path.
        path: String,
        /// Why.
        reason: String,
    },
}

/// A starter's life, as it reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StarterEvent {
    /// The starter process was started for a claim.
    Spawned {
        /// The slot.
        slot: String,
        /// The claim.
        claim: u64,
        /// The starter's pid.
        pid: u32,
        /// The job's `ClusterId.ProcId` and `Owner`, for the audit trail.
        job: String,
        /// When the starter process started, in clock ticks after boot
        /// (with the pid, which process it is; 0: not known).
        #[serde(default, skip_serializing_if = "is_zero")]
        started: u64,
    },
    /// The job process exists.
    JobStarted {
        /// Its pid.
        pid: u32,
    },
    /// The job was not started.
    JobNotStarted {
        /// Why.
        reason: String,
    },
    /// A starter hook finished.
    Hook {
        /// Which.
        hook: String,
        /// Its arguments.
        args: Vec<String>,
        /// How it ended (`None`: not run).
        exit: Option<Exit>,
        /// Killed at its timeout.
        timed_out: bool,
        /// What came of it.
        outcome: String,
        /// Seconds it ran (0: not run, or not known: logs written before
        /// it was kept).
        #[serde(default, skip_serializing_if = "is_zero_f64")]
        elapsed: f64,
    },
    /// The job was stopped or continued.
    Suspended {
        /// True: stopped.
        stopped: bool,
    },
    /// The job's process ended.
    JobExited {
        /// How.
        exit: Exit,
        /// JOB_EXIT's argument.
        how: String,
        /// Seconds it ran.
        duration: f64,
    },
    /// A starter of the daemon's last run, still alive when this run
    /// began, is expected to call again (its job goes on under the same
    /// claim): what the last run's log said of it, carried into this run.
    Reattached {
        /// The slot.
        slot: String,
        /// The claim.
        claim: u64,
        /// The starter's pid.
        pid: u32,
        /// When it started, in clock ticks after boot.
        started: u64,
        /// The job's `ClusterId.ProcId` and `Owner`.
        job: String,
        /// The job's pid, if it had started.
        job_pid: Option<u32>,
        /// How many of its reports the log holds.
        reports: u32,
        /// The fetcher has heard the job's fate (JOB_EXIT ran).
        told: bool,
    },
    /// The starter process ended.
    Exited {
        /// How.
        exit: Exit,
        /// It left before running JOB_EXIT without saying it was done
        /// (`starter::gone`): its job was killed and cleaned up after, and
        /// the slot ended the claim as lost.
        #[serde(default, skip_serializing_if = "is_false")]
        lost: bool,
    },
    /// A warning the starter reported.
    Warning {
        /// The message.
        message: String,
    },
    /// The fetcher withdrew the running job (removed or held in its
    /// queue, said through UPDATE_JOB_INFO): the slot vacates it.
    Withdrawn {
        /// JOB_EXIT's argument: `remove` or `hold`.
        how: String,
        /// Why, as the queue said it.
        reason: String,
    },
}
