//! Cutting the log's oldest events (retention): which records go and
//! what stays of the one the cut splits, the archive they are copied to
//! first, and their removal beside the writer.

use std::path::Path;

use sled::Transactional;
use sled::transaction::ConflictableTransactionError;

use super::{CACHE_BYTES, Positions, SledReader, Stored, decoded, io, seq_of, split, tx};
use crate::events::StoreError;
use crate::events::record::RecordWriter;

/// How many records and index entries one pruning transaction removes,
/// about (see [`SledReader::prune_before`]).
const PRUNE_CHUNK: usize = 128;

/// What a cut removes and keeps (see [`cut_records`]).
struct Cut {
    /// The events that go, by record, with their index entries (what an
    /// archive gets; the last is the part before the cut of the record
    /// holding it).
    gone: Vec<Stored>,
    /// Each gone record's index keys in the log as it is (the whole
    /// record's, for the one the cut splits).
    stale: Vec<Vec<Vec<u8>>>,
    /// What stays of the record the cut splits, keyed at the cut.
    kept: Option<Stored>,
    /// How many events go.
    events: u64,
}

/// Splits the records `doomed` (the log's, before `seq`) at `seq`.
fn cut_records(doomed: &[(sled::IVec, sled::IVec)], seq: u64) -> Result<Cut, StoreError> {
    let mut cut = Cut {
        gone: Vec::with_capacity(doomed.len()),
        stale: Vec::with_capacity(doomed.len()),
        kept: None,
        events: 0,
    };
    for (k, v) in doomed {
        let Some(key) = seq_of(k) else { continue };
        let parts = split(key, v)?;
        let mut positions = Positions::default();
        let envelopes = decoded(key, &parts);
        for ((_, _, env), i) in envelopes.iter().zip(0u32..) {
            match env {
                Ok(env) => positions.add(&env.actor, i),
                Err(e) => {
                    return Err(StoreError::corrupt(
                        key + u64::from(i),
                        format!("cannot prune past it (run roost-log repair): {e}"),
                    ));
                }
            }
        }
        let index = positions.entries(key);
        cut.stale
            .push(index.iter().map(|(ik, _)| ik.clone()).collect());
        if key + parts.len() as u64 <= seq {
            cut.events += parts.len() as u64;
            cut.gone.push(Stored {
                key,
                bytes: v.to_vec(),
                index,
            });
            continue;
        }
        // The record holding `seq`: split it.
        let mut before = (RecordWriter::with_capacity(v.len()), Positions::default());
        let mut after = (RecordWriter::with_capacity(v.len()), Positions::default());
        for (s, bytes, env) in &envelopes {
            let half = if *s < seq { &mut before } else { &mut after };
            let at = half.0.push(|buf| {
                buf.extend_from_slice(bytes);
                Ok::<(), StoreError>(())
            })?;
            if let Ok(env) = env {
                half.1.add(&env.actor, at);
            }
        }
        cut.events += u64::from(before.0.count());
        cut.gone.push(Stored {
            key,
            index: before.1.entries(key),
            bytes: before.0.finish(),
        });
        cut.kept = Some(Stored {
            key: seq,
            index: after.1.entries(seq),
            bytes: after.0.finish(),
        });
    }
    Ok(cut)
}

/// Copies the records `gone`, bytes and index, into a new log in `dir`,
/// durably.
fn archive_records(dir: &Path, gone: &[Stored]) -> Result<(), StoreError> {
    let open_error = |source| StoreError::Open {
        path: dir.to_path_buf(),
        locked: false,
        source,
    };
    let db = sled::Config::new()
        .path(dir)
        .cache_capacity(CACHE_BYTES)
        .open()
        .map_err(open_error)?;
    let log = db.open_tree("log").map_err(io)?;
    let by_actor = db.open_tree("by_actor").map_err(io)?;
    for r in gone {
        log.insert(r.key.to_be_bytes(), r.bytes.as_slice())
            .map_err(io)?;
        for (ik, iv) in &r.index {
            by_actor.insert(ik.as_slice(), iv.as_slice()).map_err(io)?;
        }
    }
    db.flush().map_err(open_error)?;
    Ok(())
}

impl<E> SledReader<E> {
    /// Each record's first sequence number and size in bytes, in order.
    pub fn record_sizes(&self) -> Vec<(u64, u64)> {
        self.log
            .iter()
            .flatten()
            .filter_map(|(k, v)| Some((seq_of(&k)?, v.len() as u64)))
            .collect()
    }

    /// Removes every event before `seq`: the records wholly before it, and
    /// the part before it of the record holding it, with their index
    /// entries. With `archive`, they are first copied, bytes and index, into
    /// a new log in that directory, which `roost-log --log` reads like any
    /// other. Returns how many events went.
    ///
    /// Safe beside the writer (retention runs on a thread of its own): it
    /// touches only records before the log's last, which the writer never
    /// changes, and removes them oldest first in small transactions (a
    /// sled transaction holds every writer of the database while it
    /// commits), each a record with its index entries, so no reader ever
    /// sees one without the other. A crash part way leaves the newest of
    /// what was to go; the next pass takes it.
    pub fn prune_before(&self, seq: u64, archive: Option<&Path>) -> Result<u64, StoreError> {
        // The log always keeps its last event: it numbers the next one.
        let seq = seq.min(self.last_seq());
        let doomed: Vec<(sled::IVec, sled::IVec)> = self
            .log
            .range(..seq.to_be_bytes())
            .collect::<Result<_, _>>()
            .map_err(io)?;
        if doomed.is_empty() {
            return Ok(0);
        }
        let cut = cut_records(&doomed, seq)?;
        if let Some(dir) = archive {
            archive_records(dir, &cut.gone)?;
        }
        // Oldest first, a few hundred index entries per transaction.
        let mut chunk: Vec<(u64, &[Vec<u8>])> = Vec::new();
        let mut entries = 0;
        for (i, (r, stale)) in cut.gone.iter().zip(&cut.stale).enumerate() {
            chunk.push((r.key, stale));
            entries += stale.len() + 1;
            let last = i + 1 == cut.gone.len();
            if entries >= PRUNE_CHUNK || last {
                self.remove_records(&chunk, cut.kept.as_ref().filter(|_| last))?;
                chunk.clear();
                entries = 0;
            }
        }
        self.log.flush().map_err(io)?;
        Ok(cut.events)
    }

    /// Removes the records at `records` (key, index keys) with their index
    /// entries in one transaction, and puts `kept` (what stays of the last
    /// of them) in its place.
    fn remove_records(
        &self,
        records: &[(u64, &[Vec<u8>])],
        kept: Option<&Stored>,
    ) -> Result<(), StoreError> {
        (&self.log, &self.by_actor)
            .transaction(|(log, by_actor)| {
                for (key, stale) in records {
                    log.remove(&key.to_be_bytes())?;
                    for ik in *stale {
                        by_actor.remove(ik.as_slice())?;
                    }
                }
                if let Some(r) = kept {
                    log.insert(&r.key.to_be_bytes(), r.bytes.as_slice())?;
                    for (ik, iv) in &r.index {
                        by_actor.insert(ik.as_slice(), iv.as_slice())?;
                    }
                }
                Ok::<(), ConflictableTransactionError<()>>(())
            })
            .map_err(tx)
    }
}
