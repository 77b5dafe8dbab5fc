//! The eventd's decisions, as events in its own log (`$(SPOOL)/roost-eventd-events`,
//! read with `roost-log --log …`): for audit only — the eventd is
//! stateless, and a restarted one starts again from the pool's ads.

use serde::{Deserialize, Serialize};

/// One decision of the eventd, or what came of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum EventdEvent {
    /// An event became active: its vacates must start now to be done by
    /// its start.
    Activated {
        /// The event (its name in `EVENT_LIST`).
        event: String,
        /// The occurrence's start and end.
        start: i64,
        /// Its end.
        end: i64,
        /// The estimated seconds of vacates, at the event's bandwidth.
        needed: i64,
    },
    /// A machine was given (or refused) the shutdown configuration.
    Configured {
        /// The event.
        event: String,
        /// The machine (its startd's name).
        machine: String,
        /// Its `EndDownTime`.
        until: i64,
        /// What the machine answered (or why it could not be asked).
        answer: String,
        /// Whether it took it.
        ok: bool,
    },
    /// A slot was told to vacate.
    Vacated {
        /// The event.
        event: String,
        /// The slot.
        slot: String,
        /// What its machine answered.
        answer: String,
        /// Whether it took it.
        ok: bool,
    },
    /// A machine's expired shutdown configuration was removed.
    Cleaned {
        /// The machine.
        machine: String,
        /// What it answered.
        answer: String,
        /// Whether it took it.
        ok: bool,
    },
    /// The occurrence ended.
    Ended {
        /// The event.
        event: String,
    },
}
