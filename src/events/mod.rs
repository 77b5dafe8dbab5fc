//! The event log: every state transition of every actor, durable, in order.
//!
//! An [`Envelope`] wraps each event with its global sequence number, time,
//! actor and schema version; envelopes are encoded with rmp-serde in its
//! named (map) form, so adding a field never breaks old logs. The store is
//! behind the [`EventStore`] trait; [`SledStore`] keeps it in sled with a
//! per-actor index. Only this module knows sled and rmp-serde.

pub mod daemon;
mod group;
mod keeper;
mod record;
pub mod retention;
pub mod skip;
mod sled_store;
pub mod upcast;

use serde::{Deserialize, Serialize};

use crate::policy::node::NodeEvent;
use crate::policy::sim::Recorded;
use crate::policy::slot::SlotEvent;
use crate::startd::{HookEvent, StarterEvent};

pub use daemon::DaemonEvent;
pub use group::{Appender, Checkpoints, GroupCommitter, OnCommit, OnFailure, Watchers};
pub use keeper::CutSummary;
pub use retention::Retention;
pub use sled_store::{SledReader, SledStore};
pub use upcast::{decode, decode_as};

/// The file in the event log's directory that names the admin socket of
/// the daemon holding the log, so readers can ask it for events.
pub const DAEMON_SOCKET_FILE: &str = "daemon.socket";

/// The file beside the log that keeps the audit trail of claims whose
/// events retention cut (JSON lines, one `audit::ClaimRecord` each).
pub const KEPT_CLAIMS_FILE: &str = "claims-kept.jsonl";

/// The schema version of envelopes written today.
pub const SCHEMA: u16 = 1;

/// Every kind of event the log holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// A slot's state machine.
    Slot(SlotEvent),
    /// A hook invocation.
    Hook(HookEvent),
    /// A starter.
    Starter(StarterEvent),
    /// The daemon.
    Daemon(DaemonEvent),
    /// The node as a whole (`policy::node`): drains, shutdowns, vacate
    /// commands, dynamic slots born and gone.
    Node(NodeEvent),
    /// A daemon ClassAd hook (startd cron job, benchmark).
    Cron(crate::cron::event::CronEvent),
    /// A job of `roost schedd`'s queue (that daemon's own log).
    Job(crate::schedd::event::JobEvent),
    /// A job of the schedd's job router (`route<c>.<p>`).
    Route(crate::schedd::router::RouteEvent),
    /// A decision of the eventd (that daemon's own log).
    Eventd(crate::eventd::event::EventdEvent),
}

impl Event {
    /// Whether replay can begin here (a daemon's `Started` or a
    /// checkpoint): the only places retention cuts the log.
    pub fn starts_replay(&self) -> bool {
        matches!(
            self,
            Event::Daemon(DaemonEvent::Started { .. } | DaemonEvent::Checkpoint { .. })
        )
    }
}

/// What the log engine needs of a daemon's event type: each daemon logs
/// its own enum (`Event` for the startd, `schedd::event::ScheddEvent`,
/// `eventd::event::EventdLogEvent`); their variants carry the same names
/// as [`Event`]'s, so every daemon's log also reads as [`Event`], which is
/// how `roost-log` and retention's keeper read any of them.
pub trait LogEvent:
    Serialize + serde::de::DeserializeOwned + Clone + std::fmt::Debug + Send + 'static
{
}

impl<E> LogEvent for E where
    E: Serialize + serde::de::DeserializeOwned + Clone + std::fmt::Debug + Send + 'static
{
}

/// A batch of events to append: (time, actor, event) each.
pub type Batch<E = Event> = Vec<(i64, String, E)>;

/// One logged event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "E: serde::de::DeserializeOwned"))]
pub struct Envelope<E = Event> {
    /// Global sequence number: contiguous from 1.
    pub seq: u64,
    /// When it happened (seconds since the epoch).
    pub time: i64,
    /// Whose event: `slot1`, `slot1_2`, `daemon`, …
    pub actor: String,
    /// The schema version it was written with.
    pub schema: u16,
    /// The event.
    pub event: E,
}

/// A failure of the log, naming what and where.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The appender's idea of the next sequence number was wrong.
    #[error("append expected the next sequence number to be {expected}, but it is {actual}")]
    WrongSequence {
        /// What the caller expected.
        expected: u64,
        /// What the log has.
        actual: u64,
    },
    /// A record could not be decoded.
    #[error("record {seq} cannot be decoded: {message}")]
    Corrupt {
        /// Its sequence number.
        seq: u64,
        /// Why.
        message: String,
    },
    /// What retention keeps of the events it cuts cannot be made.
    #[error("the summary of the events cut cannot be made: {0}")]
    Summary(String),
    /// sled failed.
    #[error("event store: {0}")]
    Sled(#[from] sled::Error),
    /// The log (or an archive of it) at `path` cannot be opened.
    #[error("event store {}: {source}{}", path.display(), if *locked { " (another process holds the event log)" } else { "" })]
    Open {
        /// Its directory.
        path: std::path::PathBuf,
        /// Whether another process held it for as long as opening waited.
        locked: bool,
        /// sled's error.
        #[source]
        source: sled::Error,
    },
    /// A file beside the log (the kept claims) cannot be read or written.
    #[error("event store: {path}: {source}", path = path.display())]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An event cannot be encoded.
    #[error("event store: cannot encode event {seq}: {source}")]
    Encode {
        /// Its sequence number.
        seq: u64,
        /// The encoder's error.
        #[source]
        source: rmp_serde::encode::Error,
    },
    /// A flush failed and the batch could not be taken back out either.
    #[error("{flush}; and the batch could not be taken back: {source}")]
    NotTakenBack {
        /// Why the flush failed.
        flush: Box<StoreError>,
        /// Why taking the batch back failed.
        #[source]
        source: Box<StoreError>,
    },
    /// The event-log writer wrote a group of appends, this one among
    /// them, and failed: every appender of the group gets its error.
    #[error("{0}")]
    Group(#[source] std::sync::Arc<StoreError>),
    /// The event-log writer has stopped (`before_answer`: after taking
    /// this append, before answering it).
    #[error("the event log writer {}", if *before_answer { "stopped before answering" } else { "has stopped" })]
    WriterStopped {
        /// It took the append, then stopped.
        before_answer: bool,
    },
    /// A key of the log's trees is not what Roost writes there.
    #[error("event store: a key of tree {tree} is not a sequence number")]
    BadKey {
        /// `log` or `by_actor`.
        tree: &'static str,
    },
    /// sled aborted a transaction Roost never aborts.
    #[error("event store: a transaction was aborted")]
    Aborted,
    /// Reading the log through the daemon that holds it failed.
    #[error("{0}")]
    Reader(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The daemon that holds the log, read through its admin socket,
    /// answered with an error (its text is all that crosses the socket).
    #[error("the daemon holding the event log says: {0}")]
    Remote(String),
}

impl StoreError {
    /// Record `seq` cannot be decoded, because of `why`.
    pub fn corrupt(seq: u64, why: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            seq,
            message: why.to_string(),
        }
    }
}

/// What a simulation recorded (`policy::sim::Recorded`), as a batch the
/// log takes: each event with its own time, under `actor`.
pub fn recorded_batch(actor: &str, recorded: Recorded<'_>) -> Vec<(i64, String, Event)> {
    match recorded {
        Recorded::Slot(events) => events
            .iter()
            .map(|e| (e.at(), actor.to_string(), Event::Slot(e.clone())))
            .collect(),
        Recorded::Node(events) => events
            .iter()
            .map(|e| (e.at(), actor.to_string(), Event::Node(e.clone())))
            .collect(),
    }
}

/// "record 4 is missing" / "records 4 to 9 are missing".
pub fn missing(first: u64, last: u64) -> String {
    if first == last {
        format!("record {first} is missing")
    } else {
        format!("records {first} to {last} are missing")
    }
}

/// Encodes an envelope (rmp-serde, named form).
pub fn encode<E: LogEvent>(e: &Envelope<E>) -> Result<Vec<u8>, StoreError> {
    let mut buf = Vec::new();
    encode_into(&mut buf, e.seq, e.time, &e.actor, e.schema, &e.event)?;
    Ok(buf)
}

/// The envelope's fields, borrowed: encodes exactly as [`Envelope`] does,
/// without copying the event.
#[derive(Serialize)]
struct EnvelopeRef<'a, E> {
    seq: u64,
    time: i64,
    actor: &'a str,
    schema: u16,
    event: &'a E,
}

/// Appends the encoding of an envelope made of these fields to `buf`.
fn encode_into<E: LogEvent>(
    buf: &mut Vec<u8>,
    seq: u64,
    time: i64,
    actor: &str,
    schema: u16,
    event: &E,
) -> Result<(), StoreError> {
    let env = EnvelopeRef {
        seq,
        time,
        actor,
        schema,
        event,
    };
    rmp_serde::encode::write_named(buf, &env).map_err(|source| StoreError::Encode { seq, source })
}

/// A durable, ordered log of envelopes of one daemon's event type `E`.
pub trait EventStore<E: LogEvent = Event>: EventRead<E> {
    /// The sequence number the next appended event gets.
    fn next_seq(&self) -> u64;

    /// Appends a batch atomically and durably: either every event is
    /// stored and flushed, or none is. `expected` must be
    /// [`EventStore::next_seq`]; returns the next sequence number after the
    /// batch.
    ///
    /// When the flush fails, the batch is taken back out
    /// ([`EventStore::truncate`]) so that what the caller was told failed
    /// does not turn up in the log later.
    fn append(&mut self, expected: u64, batch: &[(i64, String, E)]) -> Result<u64, StoreError> {
        let next = self.write(expected, batch)?;
        if let Err(e) = self.flush() {
            return Err(match self.truncate(expected) {
                Ok(()) => e,
                Err(t) => StoreError::NotTakenBack {
                    flush: Box::new(e),
                    source: Box::new(t),
                },
            });
        }
        Ok(next)
    }

    /// Removes every record from sequence number `from` on (with its index
    /// entries); the next append gets `from`. Used to take back a batch
    /// whose flush failed.
    fn truncate(&mut self, from: u64) -> Result<(), StoreError>;

    /// Appends a batch atomically but does not flush it: it becomes
    /// durable with the next [`EventStore::flush`] (or durable append).
    fn write(&mut self, expected: u64, batch: &[(i64, String, E)]) -> Result<u64, StoreError>;

    /// Makes everything written so far durable.
    fn flush(&mut self) -> Result<(), StoreError>;

    /// A handle for retention to read and cut the log from another
    /// thread while this store is written (a store that cannot give one
    /// is kept whole). It reads the log as [`Event`], as every daemon's
    /// log reads.
    fn keeper(&self) -> Option<Box<dyn LogKeeper>> {
        None
    }
}

/// Retention's access to a log beside its writer: reading it, and cutting
/// its oldest events.
pub trait LogKeeper: EventRead + Send {
    /// Each record's first sequence number and size in bytes, in order.
    fn record_sizes(&self) -> Vec<(u64, u64)>;

    /// Removes the events before `seq` (never the log's last), archiving
    /// them first in directory `archive` when given; returns how many
    /// went. Safe while the writer appends.
    fn prune_before(&self, seq: u64, archive: Option<&std::path::Path>) -> Result<u64, StoreError>;
}

/// Reading the log (the store itself, or a reader that shares it) as
/// events of type `E`.
pub trait EventRead<E: LogEvent = Event> {
    /// Every envelope from `from` on, in order; a record that cannot be
    /// decoded is an error item and reading goes on.
    fn read_from(
        &self,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_>;

    /// The envelopes of one actor from sequence number `from` on, in
    /// order, from its index.
    fn read_actor(
        &self,
        actor: &str,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_>;

    /// The envelopes of one actor, newest first.
    fn read_actor_back(
        &self,
        actor: &str,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_>;
}
