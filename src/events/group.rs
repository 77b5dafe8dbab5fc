//! Group commit: many appenders, one writer. Each appender hands its batch
//! to the writer thread and waits; the writer takes every batch waiting,
//! appends them as one atomic, flushed batch, and then answers each
//! appender with the sequence number of its first event. Durability costs
//! one flush per group instead of one per batch.

use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use super::{Event, EventStore, StoreError};

type Batch = Vec<(i64, String, Event)>;
type Reply = Sender<Result<u64, String>>;

/// A handle to the single writer; clone it for every appender.
#[derive(Clone)]
pub struct Appender {
    tx: Sender<(Batch, Reply)>,
}

/// The writer thread; joining it returns the store.
pub struct GroupCommitter<S> {
    handle: Option<JoinHandle<S>>,
}

impl<S: EventStore + Send + 'static> GroupCommitter<S> {
    /// Starts the writer over `store`; returns it and the first appender.
    pub fn start(store: S) -> (GroupCommitter<S>, Appender) {
        let (tx, rx) = mpsc::channel::<(Batch, Reply)>();
        let handle = std::thread::Builder::new()
            .name("event-log-writer".into())
            .spawn(move || writer(store, &rx))
            .ok();
        (GroupCommitter { handle }, Appender { tx })
    }

    /// Waits for the writer to finish (after every appender is dropped)
    /// and returns the store.
    pub fn finish(mut self) -> Option<S> {
        self.handle.take().and_then(|h| h.join().ok())
    }
}

impl Appender {
    /// Appends `batch` durably; returns the sequence number of its first
    /// event once the group it went into is flushed.
    pub fn append(&self, batch: Batch) -> Result<u64, StoreError> {
        let (reply_tx, reply_rx) = mpsc::channel();
        self.tx
            .send((batch, reply_tx))
            .map_err(|_| StoreError::Io("the event log writer has stopped".into()))?;
        reply_rx
            .recv()
            .map_err(|_| StoreError::Io("the event log writer stopped before answering".into()))?
            .map_err(StoreError::Io)
    }
}

fn writer<S: EventStore>(mut store: S, rx: &Receiver<(Batch, Reply)>) -> S {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while let Ok(more) = rx.try_recv() {
            group.push(more);
        }
        let mut all: Batch = Vec::with_capacity(group.iter().map(|(b, _)| b.len()).sum());
        let mut starts = Vec::with_capacity(group.len());
        let base = store.next_seq();
        for (batch, _) in &mut group {
            starts.push(base + all.len() as u64);
            all.append(batch);
        }
        let result = store.append(base, &all).map_err(|e| e.to_string());
        for ((_, reply), start) in group.into_iter().zip(starts) {
            // An appender that went away no longer needs its answer.
            let _ = reply.send(result.clone().map(|_| start));
        }
    }
    store
}
