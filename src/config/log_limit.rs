//! The value of `MAX_<SUBSYS>_LOG` (and `MAX_DEFAULT_LOG`): how far a
//! daemon log may grow before it is rotated, as a size or an age, read the
//! way HTCondor's log code reads it. Pure.
//!
//! An integer (`0`: no limit), optionally followed by a unit of which only
//! the first letter counts, in any case: `B`ytes, `K`b, `M`b, `G`b, `T`b
//! (powers of 1,024) or `S`ec, `M`in, `H`r, `D`ay, `W`k. `M` is both: `Mb`
//! (or `MiB`) is a size, `Min` a time, and a lone `M` is a size in upper
//! case and minutes in lower case. Without a unit the number is bytes;
//! HTCondor also takes a word that starts with none of these letters as
//! bytes, and so does this.

/// How far a log may grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLimit {
    /// No limit: the log is never rotated (`0`).
    Unbounded,
    /// Rotate once the file holds this many bytes.
    Bytes(u64),
    /// Rotate once the file has been written for this many seconds.
    Seconds(u64),
}

/// Reads a log limit; `None` when `text` is not one (no number, a
/// negative one, an `M` followed by a letter other than `b` or `i`, or
/// anything after the unit).
pub fn parse_log_limit(text: &str) -> Option<LogLimit> {
    let s = text.trim_start();
    let digits_at = usize::from(s.starts_with(['+', '-']));
    let digits = s[digits_at..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    if digits == 0 {
        return None;
    }
    let (number, rest) = s.split_at(digits_at + digits);
    let value: i64 = number.parse().ok()?;
    let value = u64::try_from(value).ok()?;
    let rest = rest.trim_start();
    let mut letters = rest.bytes();
    let (scale, time) = match letters.next() {
        None => (1, false),
        Some(first) => {
            let second = letters.next().map(|b| b.to_ascii_uppercase());
            let third = letters.next().map(|b| b.to_ascii_uppercase());
            match first.to_ascii_uppercase() {
                b'S' => (1, true),
                b'H' => (3_600, true),
                b'D' => (86_400, true),
                b'W' => (604_800, true),
                b'K' => (1 << 10, false),
                b'G' => (1 << 30, false),
                b'T' => (1 << 40, false),
                b'M' => {
                    let time = match second {
                        Some(b'B') => false,
                        Some(b'I') => third != Some(b'B'),
                        Some(c) if c.is_ascii_alphabetic() => return None,
                        _ => first == b'm',
                    };
                    if time { (60, true) } else { (1 << 20, false) }
                }
                _ => (1, false),
            }
        }
    };
    // Past the unit: the rest of its word, then only blanks.
    let tail = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    if !tail.trim().is_empty() {
        return None;
    }
    let value = value.checked_mul(scale)?;
    Some(match (value, time) {
        (0, _) => LogLimit::Unbounded,
        (v, true) => LogLimit::Seconds(v),
        (v, false) => LogLimit::Bytes(v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_read_as_htcondor_reads_them() {
        use LogLimit::{Bytes, Seconds, Unbounded};
        let cases = [
            ("10 Mb", Some(Bytes(10 << 20))),
            ("10Mb", Some(Bytes(10 << 20))),
            ("10 MiB", Some(Bytes(10 << 20))),
            ("10 M", Some(Bytes(10 << 20))),
            ("10 m", Some(Seconds(600))),
            ("10 Min", Some(Seconds(600))),
            ("10 minutes", Some(Seconds(600))),
            ("10 mb", Some(Bytes(10 << 20))),
            ("1000000", Some(Bytes(1_000_000))),
            ("  64 Kb  ", Some(Bytes(65_536))),
            ("2 Gb", Some(Bytes(2 << 30))),
            ("1 Tb", Some(Bytes(1 << 40))),
            ("100 bytes", Some(Bytes(100))),
            ("30 sec", Some(Seconds(30))),
            ("2 Hr", Some(Seconds(7_200))),
            ("1 day", Some(Seconds(86_400))),
            ("1 Wk", Some(Seconds(604_800))),
            ("0", Some(Unbounded)),
            ("0 Mb", Some(Unbounded)),
            ("+5 Kb", Some(Bytes(5_120))),
            ("7 furlongs", Some(Bytes(7))),
            ("", None),
            ("   ", None),
            ("Mb", None),
            ("-1", None),
            ("10 Mx", None),
            ("10 Mb extra", None),
            ("10 Mb 5", None),
            ("99999999999999999999", None),
            ("20000000 Tb", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_log_limit(text), want, "{text:?}");
        }
    }
}
