//! The event log in sled: tree `log` maps the big-endian sequence number
//! to the encoded envelope; tree `by_actor` maps `actor \0 seq` to nothing,
//! so one actor's events are a prefix scan. A batch goes into both trees in
//! one sled transaction and is flushed before `append` returns.

use std::path::Path;

use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::{Envelope, Event, EventRead, EventStore, SCHEMA, StoreError, decode, encode, missing};

/// A sled-backed [`EventStore`].
pub struct SledStore {
    db: sled::Db,
    trees: SledReader,
    next: u64,
}

/// Reads a [`SledStore`] from another thread while it is being written
/// (sled lets only one process open a database: readers in the daemon's
/// process share it).
#[derive(Clone)]
pub struct SledReader {
    log: sled::Tree,
    by_actor: sled::Tree,
}

fn io(e: impl std::fmt::Display) -> StoreError {
    StoreError::Io(e.to_string())
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

impl SledStore {
    /// Opens (or creates) the log in directory `dir`.
    pub fn open(dir: &Path) -> Result<SledStore, StoreError> {
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
                Err(e) => {
                    return Err(StoreError::Io(format!(
                        "{}: {e}{}",
                        dir.display(),
                        if tries > 0 {
                            " (another process holds the event log)"
                        } else {
                            ""
                        }
                    )));
                }
            }
        };
        let log = db.open_tree("log").map_err(io)?;
        let by_actor = db.open_tree("by_actor").map_err(io)?;
        let next = match log.last().map_err(io)? {
            Some((k, _)) => seq_of(&k).map_or(1, |s| s + 1),
            None => 1,
        };
        Ok(SledStore {
            db,
            trees: SledReader { log, by_actor },
            next,
        })
    }

    /// Checks the log: every record decodes and says it is the record its
    /// key names, sequence numbers are contiguous, and the per-actor index
    /// has exactly one entry per record. One line per problem.
    pub fn verify(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut expected: Option<u64> = None;
        let mut records = 0u64;
        for item in self.trees.log.iter() {
            let (k, v) = match item {
                Ok(kv) => kv,
                Err(e) => {
                    problems.push(format!("the log cannot be read further: {e}"));
                    break;
                }
            };
            let Some(seq) = seq_of(&k).filter(|_| k.len() == 8) else {
                problems.push(format!("a log key is not a sequence number: {:?}", &k[..]));
                continue;
            };
            records += 1;
            if let Some(x) = expected
                && seq != x
                && !(x..seq).all(|q| self.quarantined(q))
            {
                problems.push(missing(x, seq - 1));
            }
            expected = Some(seq + 1);
            match decode(seq, &v) {
                Ok(env) => {
                    if !matches!(
                        self.trees.by_actor.contains_key(actor_key(&env.actor, seq)),
                        Ok(true)
                    ) {
                        problems.push(format!(
                            "record {seq} ({}) is missing from the per-actor index",
                            env.actor
                        ));
                    }
                }
                Err(e) => problems.push(e.to_string()),
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
        if problems.is_empty() && indexed != records {
            problems.push(format!(
                "the index has {indexed} entries for {records} records"
            ));
        }
        problems
    }

    /// Moves records that do not decode to tree `quarantine` (same key,
    /// same bytes: nothing is deleted) and rebuilds the per-actor index
    /// from the log. Returns one line per thing done.
    pub fn repair(&mut self) -> Result<Vec<String>, StoreError> {
        let quarantine = self.db.open_tree("quarantine").map_err(io)?;
        let mut done = Vec::new();
        let mut index = Vec::new();
        for item in self.trees.log.iter() {
            let (k, v) = item.map_err(io)?;
            match seq_of(&k)
                .filter(|_| k.len() == 8)
                .map(|seq| (seq, decode(seq, &v)))
            {
                Some((seq, Ok(env))) => index.push(actor_key(&env.actor, seq)),
                Some((seq, Err(e))) => {
                    quarantine.insert(&k, v).map_err(io)?;
                    self.trees.log.remove(&k).map_err(io)?;
                    done.push(format!("record {seq} set aside in tree quarantine: {e}"));
                }
                None => {
                    quarantine.insert(&k, v).map_err(io)?;
                    self.trees.log.remove(&k).map_err(io)?;
                    done.push(format!(
                        "a key that is not a sequence number set aside: {:?}",
                        &k[..]
                    ));
                }
            }
        }
        let wanted: std::collections::HashSet<&[u8]> = index.iter().map(Vec::as_slice).collect();
        let mut stale = 0;
        for item in self.trees.by_actor.iter() {
            let (k, _) = item.map_err(io)?;
            if !wanted.contains(&k[..]) {
                self.trees.by_actor.remove(&k).map_err(io)?;
                stale += 1;
            }
        }
        let mut added = 0;
        for k in &index {
            if self
                .trees
                .by_actor
                .insert(k.as_slice(), &[] as &[u8])
                .map_err(io)?
                .is_none()
            {
                added += 1;
            }
        }
        if stale > 0 {
            done.push(format!("{stale} index entries without a record removed"));
        }
        if added > 0 {
            done.push(format!("{added} missing index entries added"));
        }
        self.db.flush().map_err(io)?;
        self.next = match self.trees.log.last().map_err(io)? {
            Some((k, _)) => seq_of(&k).map_or(1, |s| s + 1),
            None => 1,
        };
        Ok(done)
    }

    /// Whether record `seq` was set aside by [`SledStore::repair`].
    fn quarantined(&self, seq: u64) -> bool {
        let exists = self
            .db
            .tree_names()
            .iter()
            .any(|n| n.as_ref() == b"quarantine");
        exists
            && self
                .db
                .open_tree("quarantine")
                .and_then(|t| t.contains_key(seq.to_be_bytes()))
                .unwrap_or(false)
    }

    /// A reader of this store for other threads.
    pub fn reader(&self) -> SledReader {
        self.trees.clone()
    }
}

impl SledReader {
    /// The sequence number of the last event (0: none).
    pub fn last_seq(&self) -> u64 {
        match self.log.last() {
            Ok(Some((k, _))) => seq_of(&k).unwrap_or(0),
            _ => 0,
        }
    }

    /// The envelope an index entry points at.
    fn indexed(
        &self,
        entry: sled::Result<(sled::IVec, sled::IVec)>,
    ) -> Result<Envelope, StoreError> {
        let (k, _) = entry.map_err(io)?;
        let seq = seq_of(&k).ok_or_else(|| io("an index key has no sequence number"))?;
        let bytes = self
            .log
            .get(seq.to_be_bytes())
            .map_err(io)?
            .ok_or_else(|| StoreError::Corrupt {
                seq,
                message: "indexed but missing from the log".into(),
            })?;
        decode(seq, &bytes)
    }
}

/// sled's page cache: the log is appended and read back in order, so a
/// small cache serves it; sled's default (1 GiB) would let a long-running
/// daemon's memory grow with its log.
const CACHE_BYTES: u64 = 4 << 20;

impl EventStore for SledStore {
    fn next_seq(&self) -> u64 {
        self.next
    }

    fn write(&mut self, expected: u64, batch: &[(i64, String, Event)]) -> Result<u64, StoreError> {
        if expected != self.next {
            return Err(StoreError::WrongSequence {
                expected,
                actual: self.next,
            });
        }
        let mut records = Vec::with_capacity(batch.len());
        for (i, (time, actor, event)) in batch.iter().enumerate() {
            let seq = self.next + i as u64;
            let env = Envelope {
                seq,
                time: *time,
                actor: actor.clone(),
                schema: SCHEMA,
                event: event.clone(),
            };
            records.push((seq, actor_key(actor, seq), encode(&env)?));
        }
        (&self.trees.log, &self.trees.by_actor)
            .transaction(|(log, by_actor)| {
                for (seq, akey, bytes) in &records {
                    log.insert(&seq.to_be_bytes(), bytes.as_slice())?;
                    by_actor.insert(akey.as_slice(), &[] as &[u8])?;
                }
                Ok::<(), ConflictableTransactionError<()>>(())
            })
            .map_err(|e: TransactionError<()>| io(format!("append failed: {e:?}")))?;
        self.next += batch.len() as u64;
        Ok(self.next)
    }

    fn truncate(&mut self, from: u64) -> Result<(), StoreError> {
        let doomed: Vec<(sled::IVec, sled::IVec)> = self
            .trees
            .log
            .range(from.to_be_bytes()..)
            .collect::<Result<_, _>>()
            .map_err(io)?;
        for (k, v) in doomed {
            if let Some(seq) = seq_of(&k)
                && let Ok(env) = decode(seq, &v)
            {
                self.trees
                    .by_actor
                    .remove(actor_key(&env.actor, seq))
                    .map_err(io)?;
            }
            self.trees.log.remove(&k).map_err(io)?;
        }
        self.next = from.min(self.next);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        self.db
            .flush()
            .map(|_| ())
            .map_err(|e| io(format!("flush failed: {e}")))
    }
}

impl EventRead for SledReader {
    fn read_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        Box::new(self.log.range(from.to_be_bytes()..).map(|r| {
            let (k, v) = r.map_err(io)?;
            let seq = seq_of(&k).ok_or_else(|| io("a log key is not a sequence number"))?;
            decode(seq, &v)
        }))
    }

    fn read_actor(
        &self,
        actor: &str,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        Box::new(
            self.by_actor
                .range(actor_key(actor, from)..=actor_key(actor, u64::MAX))
                .map(move |r| self.indexed(r)),
        )
    }

    fn read_actor_back(
        &self,
        actor: &str,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        Box::new(
            self.by_actor
                .scan_prefix(actor_prefix(actor))
                .rev()
                .map(move |r| self.indexed(r)),
        )
    }
}

impl EventRead for SledStore {
    fn read_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.trees.read_from(from)
    }

    fn read_actor(
        &self,
        actor: &str,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.trees.read_actor(actor, from)
    }

    fn read_actor_back(
        &self,
        actor: &str,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.trees.read_actor_back(actor)
    }
}
