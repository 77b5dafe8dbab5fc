//! Events of the daemon's shell actors: hook invocations, starters and the
//! daemon itself. Slot events live with the policy (`policy::slot`).

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::exit::Exit;

use super::replay::{Handout, OpenHook, OpenStarter};
use super::restart::LostClaim;

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

/// For `skip_serializing_if`: a field added since schema 1 is left out at
/// its default, so the events that do not use it encode as before.
#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// [`is_zero`] for flags.
#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// [`is_zero`] for seconds.
#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_zero_f64(n: &f64) -> bool {
    *n == 0.0
}

/// The daemon's own events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DaemonEvent {
    /// The daemon started.
    Started {
        /// Roost's version.
        version: String,
        /// Its pid.
        pid: u32,
        /// The host name it publishes.
        host: String,
        /// Slots it created or restored.
        slots: Vec<String>,
        /// The machine's boot it ran in (`/proc/sys/kernel/random/boot_id`;
        /// empty: not known). A later run in another boot knows that every
        /// process of this one is gone.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        boot: String,
    },
    /// A checkpoint: what replay needs beyond the slots' snapshots, which
    /// follow it in the same batch (one per slot alive). Replay can start
    /// here instead of at the run's `Started`, and retention cuts the log
    /// only at a `Started` or a checkpoint.
    Checkpoint {
        /// The run's start time and host (its `Started`), if the log has one.
        run: Option<(i64, String)>,
        /// Starters running, by actor.
        starters: BTreeMap<String, OpenStarter>,
        /// Hook invocations running, by actor.
        hooks: BTreeMap<String, OpenHook>,
        /// Jobs handed out and not answered yet, by slot.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        handouts: BTreeMap<String, Handout>,
        /// The machine's boot the run is in (its `Started`'s).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        boot: String,
        /// Claims lost in a restart whose loss the fetcher has yet to
        /// hear of, by `slot#claim`.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        owed: BTreeMap<String, LostClaim>,
    },
    /// A claim the last run left open is lost, and the fetcher is owed word
    /// of it (EVICT_CLAIM, or JOB_EXIT `evict` after a machine restart):
    /// recorded with the reconciliation, so that a run that dies before
    /// its hook starts leaves the word owed to the next.
    LossOwed {
        /// The claim.
        lost: LostClaim,
    },
    /// No hook tells of a lost claim (the slot has no EVICT_CLAIM hook, or
    /// the job no JOB_EXIT hook): the word owed is dropped.
    LossUntold {
        /// The slot whose hooks would have told of it.
        teller: String,
        /// The claim's number.
        claim: u64,
        /// Why nothing tells of it.
        why: String,
    },
    /// After a restart, something the log promised could not be resumed.
    Reconciled {
        /// The slot.
        slot: String,
        /// What was done.
        what: String,
    },
    /// A reconfiguration was tried.
    Reconfigured {
        /// Whether the new configuration was taken.
        ok: bool,
        /// What happened.
        message: String,
    },
    /// A drain or shutdown was asked for.
    Command {
        /// The command (`drain graceful`, `off fast`, `vacate slot1`, …).
        command: String,
    },
    /// A request came through the pool (`pool::inbox`): recorded before
    /// it is carried out, or with why it was refused.
    PoolRequest {
        /// The etcd user who asked, as the request's key proves it.
        by: String,
        /// The request's id.
        id: String,
        /// What was asked (for the runtime configuration: the statements).
        request: String,
        /// Why it was refused; empty: carried out.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        refused: String,
    },
    /// The backfill client started, exited, or could not be started.
    Backfill {
        /// What happened.
        what: String,
    },
    /// The daemon is exiting.
    Stopped {
        /// Why.
        why: String,
    },
}
