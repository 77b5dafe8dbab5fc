//! The event log in sled. Tree `log` maps the big-endian sequence number
//! of the first event of each record to the record: the envelopes of (a
//! slice of) one appended batch (`record`). Tree `by_actor` maps
//! `actor \0 record key` to the positions of the actor's envelopes in that
//! record, so one actor's events are a prefix scan. Storing a batch as a
//! few records instead of one record per event is what makes appending and
//! reading fast: sled's cost is per key. A batch of one record (nearly
//! all) goes in as plain inserts, the record before its index entries (a
//! sled transaction would cost disk writes per batch), and a crash between
//! them is mended at `open`; a batch of several records goes in as one
//! sled transaction, so it survives a crash whole or not at all. `append`
//! flushes before it returns.

mod prune;
mod read;

use std::collections::HashMap;
use std::path::Path;

use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::record::{self, RecordWriter};
use super::{
    Envelope, Event, EventStore, LogEvent, LogKeeper, SCHEMA, StoreError, decode, encode_into,
    missing,
};

/// The most envelopes one record holds: a larger batch is stored as
/// several records (in the same transaction), so that a record stays well
/// under the size at which sled moves values out of its pages.
const RECORD_EVENTS: usize = 256;

/// A sled-backed [`EventStore`] of one daemon's event type `E` (the
/// startd's [`Event`] unless named).
pub struct SledStore<E = Event> {
    db: sled::Db,
    trees: SledReader<E>,
    next: u64,
}

/// Reads a [`SledStore`] from another thread while it is being written
/// (sled lets only one process open a database: readers in the daemon's
/// process share it).
pub struct SledReader<E = Event> {
    log: sled::Tree,
    by_actor: sled::Tree,
    _events: std::marker::PhantomData<fn() -> E>,
}

impl<E> Clone for SledReader<E> {
    fn clone(&self) -> Self {
        SledReader {
            log: self.log.clone(),
            by_actor: self.by_actor.clone(),
            _events: std::marker::PhantomData,
        }
    }
}

impl<E> SledReader<E> {
    /// The same log, read as events of type `F` (every daemon's log reads
    /// as [`Event`]).
    pub fn as_events<F>(&self) -> SledReader<F> {
        SledReader {
            log: self.log.clone(),
            by_actor: self.by_actor.clone(),
            _events: std::marker::PhantomData,
        }
    }
}

fn io(e: sled::Error) -> StoreError {
    StoreError::Sled(e)
}

/// A transaction's failure: sled's, kept.
fn tx(e: TransactionError<()>) -> StoreError {
    match e {
        TransactionError::Storage(e) => StoreError::Sled(e),
        TransactionError::Abort(()) => StoreError::Aborted,
    }
}

fn actor_key(actor: &str, seq: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(actor.len() + 9);
    k.extend_from_slice(actor.as_bytes());
    k.push(0);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

fn actor_prefix(actor: &str) -> Vec<u8> {
    let mut prefix = actor.as_bytes().to_vec();
    prefix.push(0);
    prefix
}

fn seq_of(key: &[u8]) -> Option<u64> {
    let tail: [u8; 8] = key.get(key.len().checked_sub(8)?..)?.try_into().ok()?;
    Some(u64::from_be_bytes(tail))
}

/// The actor an index key names.
fn actor_of(key: &[u8]) -> &[u8] {
    &key[..key.len().saturating_sub(9)]
}

/// A record's envelopes; the error names the record.
fn split(key: u64, bytes: &[u8]) -> Result<Vec<&[u8]>, StoreError> {
    record::entries(bytes).map_err(|e| StoreError::corrupt(key, e))
}

/// The sequence number after the last record of `log`.
fn next_after(log: &sled::Tree) -> Result<u64, StoreError> {
    Ok(match log.last().map_err(io)? {
        Some((k, v)) => seq_of(&k).map_or(1, |s| s + record::count(&v).unwrap_or(1)),
        None => 1,
    })
}

/// Per actor, in order of first appearance, the positions of its envelopes.
#[derive(Default)]
struct Positions<'a> {
    actors: Vec<(&'a str, Vec<u32>)>,
    at: HashMap<&'a str, usize>,
}

impl<'a> Positions<'a> {
    fn add(&mut self, actor: &'a str, position: u32) {
        match self.at.get(actor) {
            Some(&i) => self.actors[i].1.push(position),
            None => {
                self.at.insert(actor, self.actors.len());
                self.actors.push((actor, vec![position]));
            }
        }
    }

    /// The index entries of a record stored under `key`.
    fn entries(&self, key: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.actors
            .iter()
            .map(|(actor, p)| (actor_key(actor, key), record::index_value(p)))
            .collect()
    }
}

/// One record to store: its key, bytes and index entries.
struct Stored {
    key: u64,
    bytes: Vec<u8>,
    index: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Records and index entries for `batch`, whose first event is `first`.
fn records<E: LogEvent>(first: u64, batch: &[(i64, String, E)]) -> Result<Vec<Stored>, StoreError> {
    let mut out = Vec::with_capacity(batch.len().div_ceil(RECORD_EVENTS));
    for (c, chunk) in batch.chunks(RECORD_EVENTS).enumerate() {
        let key = first + (c * RECORD_EVENTS) as u64;
        let mut w = RecordWriter::with_capacity(chunk.len() * 160);
        let mut positions = Positions::default();
        for (i, (time, actor, event)) in chunk.iter().enumerate() {
            let seq = key + i as u64;
            let at = w.push(|buf| encode_into(buf, seq, *time, actor, SCHEMA, event))?;
            positions.add(actor, at);
        }
        out.push(Stored {
            key,
            index: positions.entries(key),
            bytes: w.finish(),
        });
    }
    Ok(out)
}

/// Envelopes decoded from the parts of a record.
fn decoded<'a>(key: u64, parts: &[&'a [u8]]) -> Vec<(u64, &'a [u8], Result<Envelope, StoreError>)> {
    parts
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let seq = key + i as u64;
            (seq, *bytes, decode(seq, bytes))
        })
        .collect()
}

/// Per actor, the positions in their record of the envelopes that decode.
fn decodable_positions<'a>(
    envelopes: &'a [(u64, &[u8], Result<Envelope, StoreError>)],
) -> Positions<'a> {
    let mut positions = Positions::default();
    for ((_, _, env), i) in envelopes.iter().zip(0u32..) {
        if let Ok(env) = env {
            positions.add(&env.actor, i);
        }
    }
    positions
}

impl SledStore {
    /// Opens (or creates) the startd's log in directory `dir`.
    pub fn open(dir: &Path) -> Result<SledStore, StoreError> {
        SledStore::open_as(dir)
    }
}

impl<E> SledStore<E> {
    /// Opens (or creates) a log of events of type `E` in directory `dir`.
    pub fn open_as(dir: &Path) -> Result<SledStore<E>, StoreError> {
        // A store just dropped keeps its lock until sled's flusher thread
        // lets go (up to its flush interval), and a daemon being restarted
        // may still be exiting: wait a little for the lock before failing.
        let mut tries = 0;
        let db = loop {
            match sled::Config::new()
                .path(dir)
                .cache_capacity(CACHE_BYTES)
                .open()
            {
                Ok(db) => break db,
                Err(sled::Error::Io(e))
                    if e.to_string().contains("could not acquire lock") && tries < 50 =>
                {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(source) => {
                    return Err(StoreError::Open {
                        path: dir.to_path_buf(),
                        locked: tries > 0,
                        source,
                    });
                }
            }
        };
        let log = db.open_tree("log").map_err(io)?;
        let by_actor = db.open_tree("by_actor").map_err(io)?;
        let next = next_after(&log)?;
        let store = SledStore {
            db,
            trees: SledReader {
                log,
                by_actor,
                _events: std::marker::PhantomData,
            },
            next,
        };
        store.index_last_record()?;
        Ok(store)
    }

    /// Adds the index entries the last record lacks (a crash between
    /// writing a record and its entries); a record that does not decode
    /// is left to `verify` and `repair`.
    fn index_last_record(&self) -> Result<(), StoreError> {
        let Some((k, v)) = self.trees.log.last().map_err(io)? else {
            return Ok(());
        };
        let Some(key) = seq_of(&k) else {
            return Ok(());
        };
        let Ok(parts) = split(key, &v) else {
            return Ok(());
        };
        let envelopes = decoded(key, &parts);
        let positions = decodable_positions(&envelopes);
        let mut added = 0;
        for (ik, iv) in positions.entries(key) {
            if self.trees.by_actor.get(&ik).map_err(io)?.as_deref() != Some(iv.as_slice()) {
                self.trees.by_actor.insert(ik, iv).map_err(io)?;
                added += 1;
            }
        }
        if added > 0 {
            tracing::warn!(
                message = "Indexed the last record of the event log, cut short by a crash.",
                record = key,
                entries = added
            );
            self.db.flush().map_err(io)?;
        }
        Ok(())
    }

    /// Checks the log: every record splits into envelopes that decode and
    /// say they are the events their place names, sequence numbers are
    /// contiguous, and the per-actor index lists exactly the envelopes of
    /// each actor in each record. One line per problem.
    pub fn verify(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut expected: Option<u64> = None;
        let mut wanted_entries = 0u64;
        for item in self.trees.log.iter() {
            let (k, v) = match item {
                Ok(kv) => kv,
                Err(e) => {
                    problems.push(format!("the log cannot be read further: {e}"));
                    break;
                }
            };
            let Some(key) = seq_of(&k).filter(|_| k.len() == 8) else {
                problems.push(format!("a log key is not a sequence number: {:?}", &k[..]));
                continue;
            };
            if let Some(x) = expected
                && key != x
                && !self.set_aside(x, key)
            {
                problems.push(missing(x, key - 1));
            }
            let parts = match split(key, &v) {
                Ok(parts) => parts,
                Err(e) => {
                    problems.push(e.to_string());
                    expected = None;
                    continue;
                }
            };
            expected = Some(key + parts.len() as u64);
            let mut positions = Positions::default();
            let envelopes = decoded(key, &parts);
            for ((_, _, env), i) in envelopes.iter().zip(0u32..) {
                match env {
                    Ok(env) => positions.add(&env.actor, i),
                    Err(e) => problems.push(e.to_string()),
                }
            }
            wanted_entries += positions.actors.len() as u64;
            for (actor, wanted) in &positions.actors {
                let listed = match self.trees.by_actor.get(actor_key(actor, key)) {
                    Ok(Some(value)) => record::positions(&value),
                    _ => Vec::new(),
                };
                for p in wanted.iter().filter(|p| !listed.contains(p)) {
                    problems.push(format!(
                        "record {} ({actor}) is missing from the per-actor index",
                        key + u64::from(*p)
                    ));
                }
                for p in listed.iter().filter(|p| !wanted.contains(p)) {
                    problems.push(format!(
                        "the index lists record {} for {actor}, which is another actor's",
                        key + u64::from(*p)
                    ));
                }
            }
        }
        let mut indexed = 0u64;
        for item in self.trees.by_actor.iter() {
            let Ok((k, _)) = item else {
                problems.push("the per-actor index cannot be read further".into());
                break;
            };
            indexed += 1;
            let Some(seq) = seq_of(&k) else {
                problems.push("an index key has no sequence number".into());
                continue;
            };
            if !matches!(self.trees.log.contains_key(seq.to_be_bytes()), Ok(true)) {
                problems.push(format!(
                    "the index names record {seq}, which is not in the log"
                ));
            }
        }
        if problems.is_empty() && indexed != wanted_entries {
            problems.push(format!(
                "the index has {indexed} entries where the log needs {wanted_entries}"
            ));
        }
        problems
    }

    /// Moves what does not decode to tree `quarantine` (each envelope that
    /// does not decode under its own sequence number, a record that cannot
    /// be split whole under its key: the same bytes, nothing is deleted),
    /// keeps every envelope that decodes, and rebuilds the per-actor index
    /// from the log. Returns one line per thing done.
    pub fn repair(&mut self) -> Result<Vec<String>, StoreError> {
        let quarantine = self.db.open_tree("quarantine").map_err(io)?;
        let mut done = Vec::new();
        let mut index: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        let records: Vec<(sled::IVec, sled::IVec)> = self
            .trees
            .log
            .iter()
            .collect::<Result<_, _>>()
            .map_err(io)?;
        for (k, v) in records {
            let Some(key) = seq_of(&k).filter(|_| k.len() == 8) else {
                quarantine.insert(&k, v).map_err(io)?;
                self.trees.log.remove(&k).map_err(io)?;
                done.push(format!(
                    "a key that is not a sequence number set aside: {:?}",
                    &k[..]
                ));
                continue;
            };
            let parts = match split(key, &v) {
                Ok(parts) => parts,
                Err(e) => {
                    quarantine.insert(&k, v.clone()).map_err(io)?;
                    self.trees.log.remove(&k).map_err(io)?;
                    done.push(format!("record {key} set aside in tree quarantine: {e}"));
                    continue;
                }
            };
            let envelopes = decoded(key, &parts);
            if envelopes.iter().all(|(_, _, e)| e.is_ok()) {
                index.extend(decodable_positions(&envelopes).entries(key));
                continue;
            }
            // Keep each run of envelopes that decode as a record of its
            // own; set each one that does not aside.
            self.trees.log.remove(&k).map_err(io)?;
            let mut run: Option<(u64, RecordWriter, Positions)> = None;
            let mut runs = Vec::new();
            for (seq, bytes, env) in &envelopes {
                match env {
                    Ok(env) => {
                        let (_, w, positions) = run.get_or_insert_with(|| {
                            (
                                *seq,
                                RecordWriter::with_capacity(v.len()),
                                Positions::default(),
                            )
                        });
                        let at = w.push(|buf| {
                            buf.extend_from_slice(bytes);
                            Ok::<(), StoreError>(())
                        })?;
                        positions.add(&env.actor, at);
                    }
                    Err(e) => {
                        runs.extend(run.take());
                        quarantine.insert(seq.to_be_bytes(), *bytes).map_err(io)?;
                        done.push(format!("record {seq} set aside in tree quarantine: {e}"));
                    }
                }
            }
            runs.extend(run.take());
            for (first, w, positions) in runs {
                index.extend(positions.entries(first));
                self.trees
                    .log
                    .insert(first.to_be_bytes(), w.finish())
                    .map_err(io)?;
            }
        }
        let mut stale = 0;
        let mut added = 0;
        for item in self.trees.by_actor.iter() {
            let (k, value) = item.map_err(io)?;
            match index.get(&k[..]) {
                None => {
                    self.trees.by_actor.remove(&k).map_err(io)?;
                    stale += 1;
                }
                // The older layout's empty value names its whole record.
                Some(wanted)
                    if *wanted == value[..]
                        || (value.is_empty() && record::positions(wanted) == [0]) =>
                {
                    index.remove(&k[..]);
                }
                Some(_) => {}
            }
        }
        for (k, v) in index {
            if self.trees.by_actor.insert(k, v).map_err(io)?.is_none() {
                added += 1;
            } else {
                done.push("an index entry listing the wrong records corrected".into());
            }
        }
        if stale > 0 {
            done.push(format!("{stale} index entries without a record removed"));
        }
        if added > 0 {
            done.push(format!("{added} missing index entries added"));
        }
        self.db.flush().map_err(io)?;
        self.next = next_after(&self.trees.log)?;
        Ok(done)
    }

    /// Whether the records from `from` to just before `to` are in tree
    /// `quarantine`, set aside by [`SledStore::repair`].
    fn set_aside(&self, from: u64, to: u64) -> bool {
        let exists = self
            .db
            .tree_names()
            .iter()
            .any(|n| n.as_ref() == b"quarantine");
        let Ok(quarantine) = self.db.open_tree("quarantine") else {
            return false;
        };
        let mut at = from;
        for item in quarantine.range(from.to_be_bytes()..to.to_be_bytes()) {
            let Some((k, v)) = item.ok() else {
                return false;
            };
            if seq_of(&k) != Some(at) {
                return false;
            }
            // A record that could not be split covers everything up to the
            // next one.
            at = match record::count(&v) {
                Some(n) => at + n,
                None => to,
            };
        }
        exists && at >= to
    }

    /// A reader of this store for other threads.
    pub fn reader(&self) -> SledReader<E> {
        self.trees.clone()
    }

    /// Removes every event before `seq` (see [`SledReader::prune_before`]).
    pub fn prune_before(&mut self, seq: u64, archive: Option<&Path>) -> Result<u64, StoreError> {
        self.trees.prune_before(seq, archive)
    }
}

impl<E> SledReader<E> {
    /// The sequence number of the last event (0: none).
    pub fn last_seq(&self) -> u64 {
        next_after(&self.log).map_or(0, |n| n - 1)
    }

    /// The sequence number of the first event kept (earlier ones were
    /// pruned; 0: none).
    pub fn first_seq(&self) -> u64 {
        match self.log.first() {
            Ok(Some((k, _))) => seq_of(&k).unwrap_or(0),
            _ => 0,
        }
    }

    /// The key of the record holding event `seq` (`seq` itself if none
    /// does).
    fn record_key(&self, seq: u64) -> u64 {
        match self.log.range(..=seq.to_be_bytes()).next_back() {
            Some(Ok((k, _))) => seq_of(&k).unwrap_or(seq),
            _ => seq,
        }
    }
}

/// sled's page cache: the log is appended and read back in order, so a
/// small cache serves it; sled's default (1 GiB) would let a long-running
/// daemon's memory grow with its log. At 4 MiB the cache was most of what
/// the daemon's memory gained per job until the log passed 4 MiB (after
/// 1,500 jobs 3.4 MB more anonymous memory than at 256 KiB), for no CPU
/// measurably saved: the writer appends to the last leaves, which stay cached
/// (`docs/performance.md`, "The daemon's memory").
const CACHE_BYTES: u64 = 1 << 18;

impl<E: LogEvent> EventStore<E> for SledStore<E> {
    fn next_seq(&self) -> u64 {
        self.next
    }

    fn write(&mut self, expected: u64, batch: &[(i64, String, E)]) -> Result<u64, StoreError> {
        if expected != self.next {
            return Err(StoreError::WrongSequence {
                expected,
                actual: self.next,
            });
        }
        let stored = records(self.next, batch)?;
        if stored.len() > 1 {
            // A batch of several records (hundreds of events: a large
            // checkpoint) must survive a crash whole or not at all: one
            // sled transaction over both trees.
            (&self.trees.log, &self.trees.by_actor)
                .transaction(|(log, by_actor)| {
                    for r in &stored {
                        log.insert(&r.key.to_be_bytes(), r.bytes.as_slice())?;
                        for (k, v) in &r.index {
                            by_actor.insert(k.as_slice(), v.as_slice())?;
                        }
                    }
                    Ok::<(), ConflictableTransactionError<()>>(())
                })
                .map_err(tx)?;
        } else {
            // One record: plain inserts, the record before its index
            // entries. A sled transaction seals sled's I/O buffer twice,
            // and each sealed buffer is written and synced to disk on
            // sled's thread pool: every batch cost disk writes. The record
            // is one key, whole or absent after a crash; sled recovers a
            // prefix of its operations, so only the last record can lack
            // index entries, and `open` adds them.
            let written = stored.iter().try_for_each(|r| {
                self.trees
                    .log
                    .insert(r.key.to_be_bytes(), r.bytes.as_slice())?;
                for (k, v) in &r.index {
                    self.trees.by_actor.insert(k.as_slice(), v.as_slice())?;
                }
                Ok::<(), sled::Error>(())
            });
            if let Err(e) = written {
                // Take back what of the batch got in: all or nothing.
                let _ = self.truncate(self.next);
                return Err(io(e));
            }
        }
        self.next += batch.len() as u64;
        Ok(self.next)
    }

    fn truncate(&mut self, from: u64) -> Result<(), StoreError> {
        let start = self.trees.record_key(from);
        let doomed: Vec<(sled::IVec, sled::IVec)> = self
            .trees
            .log
            .range(start.to_be_bytes()..)
            .collect::<Result<_, _>>()
            .map_err(io)?;
        for (k, v) in doomed {
            let Some(key) = seq_of(&k) else {
                self.trees.log.remove(&k).map_err(io)?;
                continue;
            };
            let parts = split(key, &v).unwrap_or_default();
            let envelopes = decoded(key, &parts);
            for (_, _, env) in &envelopes {
                if let Ok(env) = env {
                    self.trees
                        .by_actor
                        .remove(actor_key(&env.actor, key))
                        .map_err(io)?;
                }
            }
            self.trees.log.remove(&k).map_err(io)?;
            // What of the record comes before `from` stays.
            let mut w = RecordWriter::with_capacity(v.len());
            let mut positions = Positions::default();
            for (seq, bytes, env) in envelopes.iter().filter(|(seq, ..)| *seq < from) {
                let at = w.push(|buf| {
                    buf.extend_from_slice(bytes);
                    Ok::<(), StoreError>(())
                })?;
                match env {
                    Ok(env) => positions.add(&env.actor, at),
                    Err(e) => tracing::warn!(seq, error = %e, "kept undecodable record"),
                }
            }
            if w.count() > 0 {
                for (ik, iv) in positions.entries(key) {
                    self.trees.by_actor.insert(ik, iv).map_err(io)?;
                }
                self.trees.log.insert(&k, w.finish()).map_err(io)?;
            }
        }
        self.next = from.min(self.next);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        self.db.flush().map(|_| ()).map_err(io)
    }

    fn keeper(&self) -> Option<Box<dyn LogKeeper>> {
        Some(Box::new(self.trees.as_events::<Event>()))
    }
}

impl LogKeeper for SledReader {
    fn record_sizes(&self) -> Vec<(u64, u64)> {
        SledReader::record_sizes(self)
    }

    fn prune_before(&self, seq: u64, archive: Option<&Path>) -> Result<u64, StoreError> {
        SledReader::prune_before(self, seq, archive)
    }
}
