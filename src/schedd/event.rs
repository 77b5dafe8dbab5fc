//! The job queue's events ([`JobEvent`], one actor per job in the log:
//! `job<cluster>.<proc>`) and the values they carry: job ids, HTCondor's
//! `JobStatus` and hold codes, and how a node reports a job's end.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::queue::QueueError;
/// `HoldReasonCode`s the queue sets (HTCondor's numbers).
pub mod hold_code {
    /// `condor_hold` (or `roost hold`).
    pub const USER_REQUEST: i64 = 1;
    /// The job's own policy.
    pub const JOB_POLICY: i64 = 3;
    /// `hold = true` at submit.
    pub const SUBMITTED_ON_HOLD: i64 = 15;
    /// The node could not start it (here: as many times in a row as
    /// `ROOST_QUEUE_MAX_START_FAILURES` allows).
    pub const FAILED_TO_CREATE_PROCESS: i64 = 6;
    /// The execute node held it.
    pub const STARTD_HELD_JOB: i64 = 21;
}

/// A job's exit that did not complete it, by its own policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OnExit {
    /// `OnExitRemove` was false: the job waits in the queue to run again.
    Requeued,
    /// `OnExitHold` was true: the job is held, for this reason.
    Held {
        /// `HoldReason`.
        reason: String,
    },
}

/// `ClusterId.ProcId`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct JobId {
    /// `ClusterId`.
    pub cluster: i64,
    /// `ProcId`.
    pub proc: i64,
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.cluster, self.proc)
    }
}

impl FromStr for JobId {
    type Err = QueueError;
    fn from_str(s: &str) -> Result<JobId, QueueError> {
        let bad = || QueueError::BadJobId(s.to_string());
        let (c, p) = s.split_once('.').ok_or_else(bad)?;
        Ok(JobId {
            cluster: c.trim().parse().map_err(|_| bad())?,
            proc: p.trim().parse().map_err(|_| bad())?,
        })
    }
}

impl JobId {
    /// The actor name of the job in the log: `job12.0`.
    pub fn actor(&self) -> String {
        format!("job{self}")
    }
}

/// HTCondor's `JobStatus` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// 1: waiting for a machine.
    Idle = 1,
    /// 2: running on a machine.
    Running = 2,
    /// 3: removed; leaves the queue once it no longer runs.
    Removed = 3,
    /// 4: exited; leaves the queue.
    Completed = 4,
    /// 5: held until released.
    Held = 5,
    /// 6: transferring output (not used by this queue).
    TransferringOutput = 6,
    /// 7: suspended (not used by this queue).
    Suspended = 7,
}

impl Status {
    /// The status of `JobStatus = n`.
    pub fn from_code(n: i64) -> Option<Status> {
        Some(match n {
            1 => Status::Idle,
            2 => Status::Running,
            3 => Status::Removed,
            4 => Status::Completed,
            5 => Status::Held,
            6 => Status::TransferringOutput,
            7 => Status::Suspended,
            _ => return None,
        })
    }

    /// condor_q's letter for it.
    pub fn letter(self) -> char {
        match self {
            Status::Idle => 'I',
            Status::Running => 'R',
            Status::Removed => 'X',
            Status::Completed => 'C',
            Status::Held => 'H',
            Status::TransferringOutput => '>',
            Status::Suspended => 'S',
        }
    }
}

/// How a lease handed out without a start ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeaseEnd {
    /// The node said `reject` (REPLY_FETCH).
    Rejected,
    /// No report came before the lease ran out.
    Expired,
    /// The node gave the claim back before the job started (EVICT_CLAIM).
    Evicted,
}

/// One change of the queue, in the past tense.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum JobEvent {
    /// A job entered the queue (its ad in new syntax, as submitted).
    Submitted {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// The job ad.
        ad: String,
    },
    /// The job was handed to a node's FETCH_WORK under a lease.
    Leased {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// The slot that asked (its `Name`).
        slot: String,
        /// The token the node's reports must carry.
        token: String,
        /// When the lease runs out if the job has not started.
        until: i64,
    },
    /// The lease ended without the job running.
    LeaseEnded {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// How.
        why: LeaseEnd,
    },
    /// The node took the job (REPLY_FETCH `accept`, or its first report).
    Started {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// Where (the slot's `Name`).
        slot: String,
    },
    /// Attributes set on the job (new-syntax expressions).
    Updated {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// Name and expression of each.
        attrs: Vec<(String, String)>,
    },
    /// The job exited on its own (JOB_EXIT `exit`).
    Exited {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// Its exit code, when it exited.
        code: Option<i64>,
        /// The signal that killed it, when one did.
        signal: Option<i64>,
        /// `ExitReason`, when the node gave one.
        #[serde(default)]
        reason: Option<String>,
        /// Seconds it ran (`JobDuration`), when the node said.
        #[serde(default)]
        duration: Option<i64>,
        /// What the job's `OnExitHold` / `OnExitRemove` made of the exit
        /// (absent: it completed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_exit: Option<OnExit>,
    },
    /// The job stopped running without finishing: back to the queue.
    Evicted {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// Seconds it ran, when the node said.
        #[serde(default)]
        duration: Option<i64>,
        /// The node could not start it, and said why (`VacateReason`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_started: Option<String>,
    },
    /// The job was put on hold.
    Held {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// `HoldReason`.
        reason: String,
        /// `HoldReasonCode`.
        code: i64,
        /// `HoldReasonSubCode`.
        subcode: i64,
    },
    /// The job was released from hold.
    Released {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// `ReleaseReason`.
        reason: String,
    },
    /// The job was removed.
    Removed {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// `RemoveReason`.
        reason: String,
    },
    /// A step of the job's file transfer, as the schedd's file server saw
    /// it (the first of each step in a run).
    Transferred {
        /// When.
        at: i64,
        /// Which.
        id: JobId,
        /// Which step.
        stage: crate::userlog::Stage,
    },
}

impl JobEvent {
    /// The job it concerns.
    pub fn id(&self) -> JobId {
        match self {
            JobEvent::Submitted { id, .. }
            | JobEvent::Leased { id, .. }
            | JobEvent::LeaseEnded { id, .. }
            | JobEvent::Started { id, .. }
            | JobEvent::Updated { id, .. }
            | JobEvent::Exited { id, .. }
            | JobEvent::Evicted { id, .. }
            | JobEvent::Held { id, .. }
            | JobEvent::Released { id, .. }
            | JobEvent::Removed { id, .. }
            | JobEvent::Transferred { id, .. } => *id,
        }
    }

    /// When it happened.
    pub fn at(&self) -> i64 {
        match self {
            JobEvent::Submitted { at, .. }
            | JobEvent::Leased { at, .. }
            | JobEvent::LeaseEnded { at, .. }
            | JobEvent::Started { at, .. }
            | JobEvent::Updated { at, .. }
            | JobEvent::Exited { at, .. }
            | JobEvent::Evicted { at, .. }
            | JobEvent::Held { at, .. }
            | JobEvent::Released { at, .. }
            | JobEvent::Removed { at, .. }
            | JobEvent::Transferred { at, .. } => *at,
        }
    }
}

/// How a node said the job ended (JOB_EXIT's argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitHow {
    /// It exited on its own.
    Exit,
    /// It was removed on the node.
    Remove,
    /// It was held on the node.
    Hold,
    /// It was evicted.
    Evict,
}

impl FromStr for ExitHow {
    type Err = QueueError;
    fn from_str(s: &str) -> Result<ExitHow, QueueError> {
        Ok(match s {
            "exit" => ExitHow::Exit,
            "remove" => ExitHow::Remove,
            "hold" => ExitHow::Hold,
            "evict" => ExitHow::Evict,
            other => return Err(QueueError::BadExitHow(other.to_string())),
        })
    }
}

/// What the schedd's log holds: its runs, schedd cron, the queue's jobs
/// and the router's jobs. Each variant is named as `events::Event` names
/// it, so the schedd's log reads as that union too (`roost-log`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ScheddEvent {
    /// The daemon (its starts).
    Daemon(crate::events::DaemonEvent),
    /// A schedd cron job.
    Cron(crate::cron::event::CronEvent),
    /// A job of the queue.
    Job(JobEvent),
    /// A routed job.
    Route(crate::schedd::router::RouteEvent),
}
