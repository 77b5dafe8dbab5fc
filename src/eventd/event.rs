//! The eventd's decisions, as events in its own log (`$(SPOOL)/roost-eventd-events`,
//! read with `roost-log --log …`): each is recorded before the request it
//! asks for goes out, each answer when it comes; a restarted eventd
//! replays them (`core::apply`) and carries on. The variants
//! `Configured`, `Vacated` and `Cleaned` (a request and its answer in one)
//! are what logs written before requests were recorded hold; they are
//! still read.

use serde::{Deserialize, Serialize};

use super::core::Ask;

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
    /// A request to a machine, recorded before it is sent.
    Asked {
        /// Its id (the pool request's, unique across runs).
        id: String,
        /// The machine (its startd's name).
        machine: String,
        /// What it asks.
        ask: Ask,
    },
    /// What the machine answered (or why it could not be asked).
    Answered {
        /// The request's id.
        id: String,
        /// Whether the machine did what it was asked.
        ok: bool,
        /// Its answer.
        answer: String,
    },
    /// A round of an active event was made: its requests are the
    /// `Asked` before it.
    Round {
        /// The event.
        event: String,
        /// Whether its last vacate costs time: the next round waits for
        /// its answer, then for that time (`Paced`).
        waits: bool,
    },
    /// The costly vacate a round waited for was taken: the next round
    /// comes when its estimated vacate time has passed.
    Paced {
        /// The event.
        event: String,
        /// When its next round is due (milliseconds since the epoch).
        next_round: i64,
    },
    /// An active event left `EVENT_LIST` (a reconfiguration): given up.
    Withdrawn {
        /// The event.
        event: String,
    },
    /// A machine was given (or refused) the shutdown configuration (logs
    /// written before requests were recorded).
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
    /// A slot was told to vacate (logs written before requests were
    /// recorded).
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
    /// A machine's expired shutdown configuration was removed (logs
    /// written before requests were recorded).
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

/// What the eventd's log holds: its runs and its decisions. The variants
/// are named as `events::Event` names them, so the eventd's log reads as
/// that union too (`roost-log`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum EventdLogged {
    /// The daemon (its starts and stops).
    Daemon(crate::events::DaemonEvent),
    /// A decision of the eventd.
    Eventd(EventdEvent),
}
