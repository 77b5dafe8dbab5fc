//! The events every daemon logs about itself: started, checkpointed,
//! reconfigured, stopped. The startd's checkpoint carries what its replay
//! needs beyond the slots' snapshots (`startd::replay`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::startd::replay::{Handout, OpenHook, OpenStarter};
use crate::startd::restart::LostClaim;

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
