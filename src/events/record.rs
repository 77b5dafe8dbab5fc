//! The bytes of one stored record: the envelopes of one appended batch.
//!
//! A batch record is the byte `0xc1` (which MessagePack never uses, so no
//! encoded envelope starts with it) followed by each envelope as a
//! little-endian `u32` length and its bytes; envelope `i` has sequence
//! number `key + i`. A record written before batches were stored whole is a
//! bare envelope: a batch of one. Per-actor index values list the positions
//! of the actor's envelopes in the record (`u32` each, little-endian); an
//! empty value is an index entry of the older layout, naming its record
//! whole.

/// The first byte of a batch record.
pub const BATCH: u8 = 0xc1;

/// Builds a batch record.
pub struct RecordWriter {
    bytes: Vec<u8>,
    count: u32,
}

impl RecordWriter {
    /// An empty record, with room for about `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> RecordWriter {
        let mut bytes = Vec::with_capacity(capacity + 1);
        bytes.push(BATCH);
        RecordWriter { bytes, count: 0 }
    }

    /// Appends an envelope whose bytes `write` puts at the end of the
    /// buffer it is given; returns its position in the record.
    pub fn push<E>(&mut self, write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<u32, E> {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&[0; 4]);
        if let Err(e) = write(&mut self.bytes) {
            self.bytes.truncate(at);
            return Err(e);
        }
        let len = u32::try_from(self.bytes.len() - at - 4).unwrap_or(u32::MAX);
        self.bytes[at..at + 4].copy_from_slice(&len.to_le_bytes());
        self.count += 1;
        Ok(self.count - 1)
    }

    /// How many envelopes it holds.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The record's bytes.
    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

/// Why a batch record cannot be split into its envelopes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The record ends inside an envelope's length.
    #[error("the batch record is cut inside the length of envelope {envelope}")]
    CutLength {
        /// The envelope's position in the record.
        envelope: usize,
    },
    /// An envelope's length runs past the record's end.
    #[error(
        "envelope {envelope} of the batch record says it is {length} bytes long, but {remaining} remain"
    )]
    TooLong {
        /// The envelope's position in the record.
        envelope: usize,
        /// The length it claims.
        length: usize,
        /// The bytes left in the record.
        remaining: usize,
    },
    /// The record has the batch marker and nothing else.
    #[error("the batch record holds no envelope")]
    Empty,
}

/// The envelopes' bytes in a record, in order; an error says why the
/// record cannot be split (its envelopes cannot then be found).
pub fn entries(record: &[u8]) -> Result<Vec<&[u8]>, RecordError> {
    let Some((&BATCH, mut rest)) = record.split_first() else {
        return Ok(vec![record]);
    };
    let mut out = Vec::new();
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Err(RecordError::CutLength {
                envelope: out.len(),
            });
        };
        let len = u32::from_le_bytes(*len) as usize;
        if len > tail.len() {
            return Err(RecordError::TooLong {
                envelope: out.len(),
                length: len,
                remaining: tail.len(),
            });
        }
        let (entry, tail) = tail.split_at(len);
        out.push(entry);
        rest = tail;
    }
    if out.is_empty() {
        return Err(RecordError::Empty);
    }
    Ok(out)
}

/// How many envelopes a record holds (1 for a bare envelope), if it can be
/// split.
pub fn count(record: &[u8]) -> Option<u64> {
    entries(record).ok().map(|e| e.len() as u64)
}

/// The positions an index value lists (none: the older layout's whole
/// record, which is position 0).
pub fn positions(value: &[u8]) -> Vec<u32> {
    if value.is_empty() {
        return vec![0];
    }
    value
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// An index value listing `positions`.
pub fn index_value(positions: &[u32]) -> Vec<u8> {
    positions.iter().flat_map(|p| p.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_record_splits_back_into_its_envelopes() {
        let mut w = RecordWriter::with_capacity(16);
        for bytes in [&b"\x81\xa1a\x01"[..], b"\x80", b"\x90"] {
            w.push(|buf| {
                buf.extend_from_slice(bytes);
                Ok::<(), ()>(())
            })
            .expect("push");
        }
        assert_eq!(w.count(), 3);
        let record = w.finish();
        assert_eq!(
            entries(&record).expect("splits"),
            vec![&b"\x81\xa1a\x01"[..], b"\x80", b"\x90"]
        );
        assert_eq!(count(&record), Some(3));
    }

    #[test]
    fn a_bare_envelope_is_a_batch_of_one() {
        assert_eq!(
            entries(b"\x85\x01").expect("splits"),
            vec![&b"\x85\x01"[..]]
        );
        assert_eq!(positions(b""), vec![0]);
        assert_eq!(positions(&index_value(&[1, 7])), vec![1, 7]);
    }

    #[test]
    fn a_cut_or_empty_batch_record_is_an_error_naming_the_envelope() {
        let mut w = RecordWriter::with_capacity(16);
        w.push(|buf| {
            buf.extend_from_slice(b"\x80\x80\x80");
            Ok::<(), ()>(())
        })
        .expect("push");
        let record = w.finish();
        let cut = &record[..record.len() - 1];
        assert!(matches!(
            entries(cut),
            Err(RecordError::TooLong { envelope: 0, .. })
        ));
        assert!(matches!(
            entries(&record[..3]),
            Err(RecordError::CutLength { envelope: 0 })
        ));
        assert_eq!(entries(&[BATCH]), Err(RecordError::Empty));
        assert_eq!(count(b"\xc1torn"), None);
    }

    #[test]
    fn a_failed_push_leaves_the_record_as_it_was() {
        let mut w = RecordWriter::with_capacity(16);
        let r = w.push(|buf| {
            buf.push(1);
            Err("no")
        });
        assert_eq!(r, Err("no"));
        assert_eq!(w.count(), 0);
        assert_eq!(w.finish(), vec![BATCH]);
    }
}
