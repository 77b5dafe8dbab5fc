//! The event log in sled: tree `log` maps the big-endian sequence number
//! to the encoded envelope; tree `by_actor` maps `actor \0 seq` to nothing,
//! so one actor's events are a prefix scan. A batch goes into both trees in
//! one sled transaction and is flushed before `append` returns.

use std::path::Path;

use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::{Envelope, Event, EventStore, SCHEMA, StoreError, decode, encode};

/// A sled-backed [`EventStore`].
pub struct SledStore {
    db: sled::Db,
    log: sled::Tree,
    by_actor: sled::Tree,
    next: u64,
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
            log,
            by_actor,
            next,
        })
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
        (&self.log, &self.by_actor)
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

    fn flush(&mut self) -> Result<(), StoreError> {
        self.db
            .flush()
            .map(|_| ())
            .map_err(|e| io(format!("flush failed: {e}")))
    }

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
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        let mut prefix = actor.as_bytes().to_vec();
        prefix.push(0);
        Box::new(self.by_actor.scan_prefix(prefix).map(move |r| {
            let (k, _) = r.map_err(io)?;
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
        }))
    }
}
