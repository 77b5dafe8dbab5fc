//! Group commit: many appenders, one writer. Each appender hands its batch
//! to the writer thread and waits — blocked, or awaiting a future while its
//! thread does other work; the writer takes every batch waiting,
//! appends them as one atomic, flushed batch, and then answers each
//! appender with the sequence number of its first event. Durability costs
//! one flush per group instead of one per batch.
//!
//! A batch may also be *recorded* rather than appended: the caller does not
//! wait; the batch is held by the appenders' shared queue and written, in
//! its place in the order, with the next durable append or at most
//! [`LAZY_FLUSH`] later, flushed either way. For facts nothing acts on at
//! once (a hook's output, a starter's report). Holding them costs no
//! thread wake-up and no store write per record, and whatever a reader of
//! the store sees is durable.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::keeper::Keeper;
use super::{Batch, CutSummary, Event, EventStore, LogEvent, Retention, StoreError};

/// What writes checkpoints into a log of events `E` after the groups the
/// writer appends: `startd::Checkpointer` for the startd's log (the
/// schedd's and the eventd's logs have none).
pub trait Checkpoints<E>: Send {
    /// Sees a group appended from sequence number `base` on.
    fn observe(&mut self, base: u64, group: &[(i64, String, E)]);
    /// The checkpoint to append now, if one is due.
    fn due(&mut self) -> Option<Batch<E>>;
    /// The checkpoint was appended at `at`.
    fn written(&mut self, at: u64, checkpoint: &[(i64, String, E)]);
    /// How much of the log to keep, cut after each checkpoint.
    fn retention(&self) -> &Retention;
    /// The time of the newest event seen.
    fn now(&self) -> i64;
    /// What to keep, apart from the log, of the events retention cuts.
    fn cut_summary(&self) -> Option<Arc<dyn CutSummary>> {
        None
    }
}

/// The writer's answer to an append: the sequence number of its first
/// event, or why it could not be written.
type Answer = Result<u64, std::sync::Arc<StoreError>>;

/// Where the writer sends an append's answer.
enum Reply {
    /// To a caller blocked in [`Appender::append`].
    Blocking(Sender<Answer>),
    /// To the future [`Appender::append_later`] returned.
    Later(tokio::sync::oneshot::Sender<Answer>),
}

impl Reply {
    /// Answers; an appender that went away no longer needs it.
    fn send(self, answer: Answer) {
        match self {
            Reply::Blocking(tx) => {
                let _ = tx.send(answer);
            }
            Reply::Later(tx) => {
                let _ = tx.send(answer);
            }
        }
    }
}

/// How long a recorded batch may wait for a flush when nothing durable
/// follows it.
pub const LAZY_FLUSH: Duration = Duration::from_millis(50);

/// What the writer is told.
enum Msg<E> {
    /// Append this batch durably (after the records held before it).
    Append(Batch<E>, Reply),
    /// Records are held: write them within [`LAZY_FLUSH`].
    Records,
}

/// Recorded batches not yet handed to the store, in order.
type Held<E> = Arc<Mutex<Vec<Batch<E>>>>;

/// What the writer calls when a group cannot be written.
pub type OnFailure = Box<dyn Fn(&StoreError) + Send>;

/// What the writer calls after each group it wrote: the group's events and
/// how long the store took to write and flush it (the daemon's metrics,
/// `crate::metrics`).
pub type OnCommit<E = Event> = Box<dyn FnMut(&[(i64, String, E)], Duration) + Send>;

/// What the writer tells of its work: the group written, a write failed.
pub struct Watchers<E = Event> {
    /// Each time a group cannot be written.
    pub on_failure: Option<OnFailure>,
    /// After each group written.
    pub on_commit: Option<OnCommit<E>>,
}

impl<E> Default for Watchers<E> {
    fn default() -> Self {
        Watchers {
            on_failure: None,
            on_commit: None,
        }
    }
}

/// A handle to the single writer; clone it for every appender.
pub struct Appender<E = Event> {
    tx: Sender<Msg<E>>,
    held: Held<E>,
}

impl<E> Clone for Appender<E> {
    fn clone(&self) -> Self {
        Appender {
            tx: self.tx.clone(),
            held: Arc::clone(&self.held),
        }
    }
}

/// The writer thread over a store of events `E`; joining it returns the
/// store.
pub struct GroupCommitter<S, E = Event> {
    handle: Option<JoinHandle<S>>,
    _events: std::marker::PhantomData<fn() -> E>,
}

impl<S: EventStore + Send + 'static> GroupCommitter<S> {
    /// Starts the writer over `store`, writing the checkpoints `checkpoints`
    /// says are due after the groups it writes.
    pub fn start_with<C: Checkpoints<Event> + 'static>(
        store: S,
        checkpoints: Option<C>,
    ) -> (GroupCommitter<S>, Appender) {
        Self::start_watched(
            store,
            checkpoints.map(|c| Box::new(c) as Box<dyn Checkpoints<Event>>),
            None,
        )
    }
}

impl<E: LogEvent, S: EventStore<E> + Send + 'static> GroupCommitter<S, E> {
    /// Starts the writer over `store`; returns it and the first appender.
    pub fn start(store: S) -> (GroupCommitter<S, E>, Appender<E>) {
        Self::start_observed(store, None, Watchers::default())
    }

    /// As [`GroupCommitter::start_with`], and calls `on_failure` with the
    /// error, on the writer's thread, each time a group cannot be written
    /// (its appenders get the error too): for a daemon that must stop when
    /// its log fails, since a store that failed a write may fail every
    /// write after it (sled does, until it is opened again).
    pub fn start_watched(
        store: S,
        checkpoints: Option<Box<dyn Checkpoints<E>>>,
        on_failure: Option<OnFailure>,
    ) -> (GroupCommitter<S, E>, Appender<E>) {
        Self::start_observed(
            store,
            checkpoints,
            Watchers {
                on_failure,
                on_commit: None,
            },
        )
    }

    /// As [`GroupCommitter::start_watched`], with every watcher.
    pub fn start_observed(
        store: S,
        checkpoints: Option<Box<dyn Checkpoints<E>>>,
        mut watchers: Watchers<E>,
    ) -> (GroupCommitter<S, E>, Appender<E>) {
        let (tx, rx) = mpsc::channel::<Msg<E>>();
        let held: Held<E> = Arc::default();
        let for_writer = Arc::clone(&held);
        let handle = std::thread::Builder::new()
            .name("event-log-writer".into())
            .spawn(move || writer(store, &rx, &for_writer, checkpoints, &mut watchers))
            .ok();
        (
            GroupCommitter {
                handle,
                _events: std::marker::PhantomData,
            },
            Appender { tx, held },
        )
    }

    /// Waits for the writer to finish (after every appender is dropped)
    /// and returns the store.
    pub fn finish(mut self) -> Option<S> {
        self.handle.take().and_then(|h| h.join().ok())
    }
}

impl<E: LogEvent> Appender<E> {
    /// Appends `batch` durably; returns the sequence number of its first
    /// event once the group it went into is flushed. An empty batch waits
    /// until everything appended or recorded before it is durable.
    pub fn append(&self, batch: Batch<E>) -> Result<u64, StoreError> {
        let (reply_tx, reply_rx) = mpsc::channel();
        self.tx
            .send(Msg::Append(batch, Reply::Blocking(reply_tx)))
            .map_err(|_| stopped())?;
        reply_rx
            .recv()
            .map_err(|_| stopped_before_answering())?
            .map_err(StoreError::Group)
    }

    /// Hands `batch` to the writer at once, to be appended durably as
    /// [`Appender::append`] does, without blocking the calling thread: the
    /// future it returns resolves to the sequence number of the batch's
    /// first event once its group is flushed. An actor thread awaits it
    /// while it goes on with other actors' messages, and the writer can
    /// gather their appends into the same flush. Dropping the future does
    /// not withdraw the batch.
    pub fn append_later(
        &self,
        batch: Batch<E>,
    ) -> impl std::future::Future<Output = Result<u64, StoreError>> + 'static {
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        let sent = self
            .tx
            .send(Msg::Append(batch, Reply::Later(reply_tx)))
            .map_err(|_| stopped());
        async move {
            sent?;
            reply_rx
                .await
                .map_err(|_| stopped_before_answering())?
                .map_err(StoreError::Group)
        }
    }

    /// Records `batch` in order without waiting for it to be durable (see
    /// the module comment). Fails only when the writer has stopped; a
    /// write error is logged by the writer.
    pub fn record(&self, batch: Batch<E>) -> Result<(), StoreError> {
        let first = {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            held.push(batch);
            held.len() == 1
        };
        if first {
            // The writer hears once per gathering, not once per record.
            self.tx.send(Msg::Records).map_err(|_| stopped())?;
        }
        Ok(())
    }
}

fn stopped() -> StoreError {
    StoreError::WriterStopped {
        before_answer: false,
    }
}

fn stopped_before_answering() -> StoreError {
    StoreError::WriterStopped {
        before_answer: true,
    }
}

fn writer<E: LogEvent, S: EventStore<E>>(
    mut store: S,
    rx: &Receiver<Msg<E>>,
    held: &Held<E>,
    mut checkpoints: Option<Box<dyn Checkpoints<E>>>,
    watchers: &mut Watchers<E>,
) -> S {
    // When the records held now must be written at the latest.
    let mut due: Option<Instant> = None;
    // Retention's thread, from the first pass asked for.
    let mut keeper: Option<Keeper> = None;
    loop {
        let first = match due {
            Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => break,
            },
        };
        let mut replies: Vec<Option<Reply>> = Vec::new();
        let mut batches: Vec<Batch<E>> = Vec::new();
        match first {
            Some(Msg::Records) => {
                due.get_or_insert_with(|| Instant::now() + LAZY_FLUSH);
                continue;
            }
            Some(Msg::Append(b, r)) => join(held, &mut batches, &mut replies, b, r),
            None => take_held(held, &mut batches, &mut replies),
        }
        while let Ok(more) = rx.try_recv() {
            if let Msg::Append(b, r) = more {
                join(held, &mut batches, &mut replies, b, r);
            }
        }
        // Anything recorded after the group's last append waits for the
        // next one or its own deadline.
        due = None;
        if !held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
        {
            due = Some(Instant::now() + LAZY_FLUSH);
        }
        if batches.is_empty() {
            continue;
        }
        write_group(
            &mut store,
            batches,
            replies,
            checkpoints.as_deref_mut(),
            &mut keeper,
            watchers,
        );
    }
    let mut batches = Vec::new();
    let mut replies = Vec::new();
    take_held(held, &mut batches, &mut replies);
    if !batches.is_empty() {
        write_group(
            &mut store,
            batches,
            replies,
            checkpoints.as_deref_mut(),
            &mut keeper,
            watchers,
        );
    }
    // A retention pass under way finishes before the store is handed back.
    drop(keeper);
    store
}

/// Adds an append to the group, after every record held before it.
fn join<E>(
    held: &Held<E>,
    batches: &mut Vec<Batch<E>>,
    replies: &mut Vec<Option<Reply>>,
    batch: Batch<E>,
    reply: Reply,
) {
    take_held(held, batches, replies);
    batches.push(batch);
    replies.push(Some(reply));
}

/// Moves the held records into the group (no one waits for them).
fn take_held<E>(held: &Held<E>, batches: &mut Vec<Batch<E>>, replies: &mut Vec<Option<Reply>>) {
    let mut h = held.lock().unwrap_or_else(PoisonError::into_inner);
    replies.extend(h.iter().map(|_| None));
    batches.append(&mut h);
}

/// Appends a group durably, answers whoever waits, writes a checkpoint
/// when one is due and then asks `keeper` (started at the first pass) to
/// keep the log to its retention, on its own thread; tells the watchers
/// of the group written, or that it cannot be.
fn write_group<E: LogEvent, S: EventStore<E>>(
    store: &mut S,
    mut batches: Vec<Batch<E>>,
    replies: Vec<Option<Reply>>,
    checkpoints: Option<&mut (dyn Checkpoints<E> + 'static)>,
    keeper: &mut Option<Keeper>,
    watchers: &mut Watchers<E>,
) {
    let mut all: Batch<E> = Vec::with_capacity(batches.iter().map(Vec::len).sum());
    let mut starts = Vec::with_capacity(batches.len());
    let base = store.next_seq();
    if batches.iter().all(Vec::is_empty) {
        // Empty appends ask only that what came before is durable: it is.
        for reply in replies.into_iter().flatten() {
            reply.send(Ok(base));
        }
        return;
    }
    for batch in &mut batches {
        starts.push(base + all.len() as u64);
        all.append(batch);
    }
    let began = Instant::now();
    let result = store.append(base, &all).map_err(std::sync::Arc::new);
    if let (Ok(_), Some(seen)) = (&result, watchers.on_commit.as_mut()) {
        seen(&all, began.elapsed());
    }
    if let Err(e) = &result
        && replies.iter().any(Option::is_none)
    {
        // No one waits for a recorded batch: the log says it is lost.
        tracing::error!(message = "Cannot record events.", events = all.len(), error = %e);
    }
    if let (Err(e), Some(tell)) = (&result, watchers.on_failure.as_ref()) {
        tell(e);
    }
    for (reply, start) in replies.into_iter().zip(starts) {
        if let Some(reply) = reply {
            reply.send(result.clone().map(|_| start));
        }
    }
    if let (Some(cp), Ok(_)) = (checkpoints, &result) {
        cp.observe(base, &all);
        if let Some(checkpoint) = cp.due() {
            let at = store.next_seq();
            let began = Instant::now();
            match store.append(at, &checkpoint) {
                Ok(_) => {
                    if let Some(seen) = watchers.on_commit.as_mut() {
                        seen(&checkpoint, began.elapsed());
                    }
                    cp.written(at, &checkpoint);
                    if !cp.retention().keeps_everything() {
                        if keeper.is_none() {
                            *keeper = store.keeper().and_then(Keeper::start);
                        }
                        if let Some(k) = keeper.as_ref() {
                            k.ask(cp.retention(), cp.now(), cp.cut_summary());
                        }
                    }
                }
                Err(e) => {
                    // Replay then starts at the one before: slower, not
                    // wrong. The next group tries again.
                    tracing::error!(message = "Cannot write a checkpoint.", error = %e);
                }
            }
        }
    }
}
