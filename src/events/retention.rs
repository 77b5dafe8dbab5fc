//! Retention: how much of the event log to keep, and where to cut. Pure:
//! the event-log writer asks after each checkpoint and does the cutting.
//!
//! The log is only ever cut at a place replay can begin (a
//! `Daemon.Started` or a checkpoint), so what is kept is self-contained;
//! what is cut is archived (a log of its own, which `roost-log --log`
//! reads) or deleted.

use std::path::PathBuf;

/// How much of the log to keep.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retention {
    /// Keep events this many seconds of event time (`None`: forever).
    pub keep_seconds: Option<i64>,
    /// Keep about this many bytes of records (`None`: no cap).
    pub keep_bytes: Option<u64>,
    /// Where cut events go, a directory per cut (`None`: deleted).
    pub archive: Option<PathBuf>,
    /// Keep the audit trail of claims whose events were cut, this many
    /// seconds after their acceptance, in `claims_file` (`None`: the
    /// claims go with their events).
    pub keep_claims_seconds: Option<i64>,
    /// The file of kept claims (JSON lines, `events::KEPT_CLAIMS_FILE`
    /// beside the log).
    pub claims_file: Option<PathBuf>,
}

impl Retention {
    /// Whether it keeps everything.
    pub fn keeps_everything(&self) -> bool {
        self.keep_seconds.is_none() && self.keep_bytes.is_none()
    }

    /// The event before which everything may go, if anything should:
    /// `boundaries` are where replay can begin (sequence number and time,
    /// oldest first), `now` the time of the last event, `records` the
    /// log's records (first sequence number and bytes, in order). The cut
    /// is the latest boundary that satisfies both limits (at most the last
    /// boundary: the log keeps the current run's replay whole).
    pub fn cut(&self, boundaries: &[(u64, i64)], now: i64, records: &[(u64, u64)]) -> Option<u64> {
        let first = records.first()?.0;
        let by_age = self.keep_seconds.and_then(|keep| {
            boundaries
                .iter()
                .filter(|(_, t)| *t <= now.saturating_sub(keep))
                .map(|(s, _)| *s)
                .max()
        });
        let by_size = self.keep_bytes.and_then(|cap| {
            let total: u64 = records.iter().map(|(_, b)| b).sum();
            if total <= cap {
                return None;
            }
            let before = |seq: u64| -> u64 {
                records
                    .iter()
                    .take_while(|(k, _)| *k < seq)
                    .map(|(_, b)| b)
                    .sum()
            };
            boundaries
                .iter()
                .find(|(s, _)| total - before(*s) <= cap)
                .or(boundaries.last())
                .map(|(s, _)| *s)
        });
        by_age.max(by_size).filter(|cut| *cut > first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Boundaries (sequence number, time) and records (key, bytes).
    type Log = (Vec<(u64, i64)>, Vec<(u64, u64)>);

    /// Boundaries every 100 events, a day apart; records of 10 events of
    /// 1,000 bytes.
    fn log() -> Log {
        let boundaries = (0..5).map(|i| (1 + 100 * i, i as i64 * 86_400)).collect();
        let records = (0..50).map(|i| (1 + 10 * i, 1000)).collect();
        (boundaries, records)
    }

    #[test]
    fn keeping_everything_cuts_nothing() {
        let (b, r) = log();
        assert_eq!(Retention::default().cut(&b, 5 * 86_400, &r), None);
        assert!(Retention::default().keeps_everything());
    }

    #[test]
    fn age_cuts_at_the_latest_boundary_old_enough() {
        let (b, r) = log();
        let two_days = Retention {
            keep_seconds: Some(2 * 86_400),
            ..Retention::default()
        };
        // Now is day 4.5: everything before the boundary of day 2 is older
        // than two days.
        assert_eq!(two_days.cut(&b, 4 * 86_400 + 43_200, &r), Some(201));
        // Nothing is two days old yet.
        assert_eq!(two_days.cut(&b, 86_400, &r), None);
    }

    #[test]
    fn size_cuts_at_the_first_boundary_that_fits_or_the_last() {
        let (b, r) = log();
        let cap = |bytes| Retention {
            keep_bytes: Some(bytes),
            ..Retention::default()
        };
        // 50,000 bytes; keep 25,000: from event 301 on is 20,000 bytes.
        assert_eq!(cap(25_000).cut(&b, 0, &r), Some(301));
        assert_eq!(cap(30_000).cut(&b, 0, &r), Some(201));
        assert_eq!(cap(50_000).cut(&b, 0, &r), None);
        // Less than the current stretch: cut at the last boundary only.
        assert_eq!(cap(1).cut(&b, 0, &r), Some(401));
    }

    #[test]
    fn the_stricter_limit_wins_and_the_first_boundary_cuts_nothing() {
        let (b, r) = log();
        let both = Retention {
            keep_seconds: Some(3 * 86_400),
            keep_bytes: Some(25_000),
            ..Retention::default()
        };
        assert_eq!(both.cut(&b, 4 * 86_400, &r), Some(301));
        let young = Retention {
            keep_seconds: Some(10),
            ..Retention::default()
        };
        assert_eq!(young.cut(&b[..1], 1_000_000, &r), None);
    }
}
