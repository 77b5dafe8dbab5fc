//! Reading the sled log: every envelope from a sequence number on,
//! record by record, and one actor's envelopes through its index
//! (forwards or newest first), each decoded as the log's event type.

use super::{SledReader, SledStore, actor_key, actor_of, actor_prefix, io, seq_of, split};
use crate::events::record;
use crate::events::{Envelope, EventRead, LogEvent, StoreError, decode_as};

impl<E> SledReader<E> {
    /// The envelopes an index entry points at, from sequence number `from`
    /// on, newest first when `back`.
    fn indexed(
        &self,
        entry: sled::Result<(sled::IVec, sled::IVec)>,
        from: u64,
        back: bool,
    ) -> Vec<Result<Envelope<E>, StoreError>>
    where
        E: LogEvent,
    {
        let one = |e| vec![Err(e)];
        let (k, value) = match entry {
            Ok(kv) => kv,
            Err(e) => return one(io(e)),
        };
        let Some(key) = seq_of(&k) else {
            return one(StoreError::BadKey { tree: "by_actor" });
        };
        let bytes = match self.log.get(key.to_be_bytes()) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                return one(StoreError::corrupt(key, "indexed but missing from the log"));
            }
            Err(e) => return one(io(e)),
        };
        let parts = match split(key, &bytes) {
            Ok(parts) => parts,
            Err(e) => return one(e),
        };
        let actor = actor_of(&k);
        let mut out: Vec<_> = record::positions(&value)
            .into_iter()
            .map(|p| (key + u64::from(p), p as usize))
            .filter(|(seq, _)| *seq >= from)
            .map(|(seq, p)| {
                let env = parts.get(p).ok_or_else(|| {
                    StoreError::corrupt(seq, "indexed but missing from its record")
                })?;
                let env = decode_as(seq, env)?;
                if env.actor.as_bytes() != actor {
                    return Err(StoreError::Corrupt {
                        seq,
                        message: format!(
                            "indexed for {} but it is {}'s",
                            String::from_utf8_lossy(actor),
                            env.actor
                        ),
                    });
                }
                Ok(env)
            })
            .collect();
        if back {
            out.reverse();
        }
        out
    }
}

/// Every envelope from a sequence number on, record by record.
struct Records<'a, E> {
    iter: sled::Iter,
    from: u64,
    current: std::vec::IntoIter<Result<Envelope<E>, StoreError>>,
    _reader: std::marker::PhantomData<&'a SledReader<E>>,
}

impl<E: LogEvent> Iterator for Records<'_, E> {
    type Item = Result<Envelope<E>, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.current.next() {
                return Some(e);
            }
            let (k, v) = match self.iter.next()? {
                Ok(kv) => kv,
                Err(e) => return Some(Err(io(e))),
            };
            let Some(key) = seq_of(&k) else {
                return Some(Err(StoreError::BadKey { tree: "log" }));
            };
            let parts = match split(key, &v) {
                Ok(parts) => parts,
                Err(e) => return Some(Err(e)),
            };
            let from = self.from;
            self.current = parts
                .iter()
                .enumerate()
                .map(|(i, bytes)| (key + i as u64, bytes))
                .filter(|(seq, _)| *seq >= from)
                .map(|(seq, bytes)| decode_as(seq, bytes))
                .collect::<Vec<_>>()
                .into_iter();
        }
    }
}

impl<E: LogEvent> EventRead<E> for SledReader<E> {
    fn read_from(
        &self,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_> {
        Box::new(Records {
            iter: self.log.range(self.record_key(from).to_be_bytes()..),
            from,
            current: Vec::new().into_iter(),
            _reader: std::marker::PhantomData,
        })
    }

    fn read_actor(
        &self,
        actor: &str,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_> {
        // The entry of the record holding `from`, if the actor has one
        // there, and every later one.
        let start = match self
            .by_actor
            .range(actor_key(actor, 0)..=actor_key(actor, from))
            .next_back()
        {
            Some(Ok((k, _))) => seq_of(&k).unwrap_or(from),
            _ => from,
        };
        Box::new(
            self.by_actor
                .range(actor_key(actor, start)..=actor_key(actor, u64::MAX))
                .flat_map(move |r| self.indexed(r, from, false)),
        )
    }

    fn read_actor_back(
        &self,
        actor: &str,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_> {
        Box::new(
            self.by_actor
                .scan_prefix(actor_prefix(actor))
                .rev()
                .flat_map(move |r| self.indexed(r, 0, true)),
        )
    }
}

impl<E: LogEvent> EventRead<E> for SledStore<E> {
    fn read_from(
        &self,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_> {
        self.trees.read_from(from)
    }

    fn read_actor(
        &self,
        actor: &str,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_> {
        self.trees.read_actor(actor, from)
    }

    fn read_actor_back(
        &self,
        actor: &str,
    ) -> Box<dyn Iterator<Item = Result<Envelope<E>, StoreError>> + '_> {
        self.trees.read_actor_back(actor)
    }
}
