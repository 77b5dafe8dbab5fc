//! A quiet idle node: what of a slot's events the log is given, so that a
//! slot polling FETCH_WORK and finding nothing does not write four events
//! and flush twice per poll.
//!
//! A fetch that starts on its own (not prompted by another slot's work) is
//! held in memory; when it ends finding nothing, cleanly, it joins the run
//! of such fetches held before it. The run is written as one
//! [`SlotEvent::FetchesEmpty`] before any other event of the slot, when it
//! has lasted [`RUN_SPAN`], and when the daemon stops. Everything else —
//! and every fetch that brought a job — is written as it happens, after
//! whatever was held. So the log always holds, in order, a compression of a
//! prefix of the slot's events: replaying it gives the state the slot had
//! at that point, as if the fetches held were not yet done. Pure.

use super::slot::SlotEvent;

/// The longest a run of empty fetches is held before it is written, in
/// seconds: a live log is at most this far behind on when the slot last
/// polled, and a crash loses at most this much of a quiet slot's polling.
pub const RUN_SPAN: i64 = 300;

/// A run of fetches that each found nothing.
#[derive(Clone, Debug, Default, PartialEq)]
struct Run {
    /// When the first started.
    first: i64,
    /// When the last started.
    last_started: i64,
    /// When the last ended.
    last_ended: i64,
    /// How many.
    count: u64,
    /// Their hooks' time, summed.
    seconds: f64,
}

/// What one slot holds back from the log (see the module comment).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuietFetches {
    run: Option<Run>,
    /// A fetch under way whose start is not written.
    started: Option<i64>,
}

/// What becomes of one decision's events.
#[derive(Clone, Debug, PartialEq)]
pub enum Pass {
    /// Held: nothing to write; a fetch's hook events, if any, are folded
    /// into the run.
    Held,
    /// Write `first` (what was held, in order), then the hook's events,
    /// then the decision's own events.
    Write {
        /// The events held until now.
        first: Vec<SlotEvent>,
    },
}

impl QuietFetches {
    /// Takes one decision's `events`. `quiet_end`: the decision answers a
    /// FETCH_WORK run that exited 0 and printed nothing, taken in `seconds`.
    pub fn pass(&mut self, events: &[SlotEvent], quiet_end: bool, seconds: f64) -> Pass {
        match events {
            [
                SlotEvent::FetchStarted {
                    at,
                    prompted_by: None,
                },
            ] if self.started.is_none() => {
                self.started = Some(*at);
                Pass::Held
            }
            [SlotEvent::FetchCompleted { at }] if quiet_end && self.started.is_some() => {
                let started = self.started.take().unwrap_or(*at);
                let run = self.run.get_or_insert(Run {
                    first: started,
                    ..Run::default()
                });
                run.last_started = started;
                run.last_ended = *at;
                run.count += 1;
                run.seconds += seconds;
                Pass::Held
            }
            [] => Pass::Write { first: Vec::new() },
            _ => Pass::Write {
                first: self.take_all(),
            },
        }
    }

    /// The run held, when it has lasted [`RUN_SPAN`] by `now`: written
    /// now, so a quiet slot's log keeps up with it. A fetch under way
    /// stays held.
    pub fn due(&mut self, now: i64) -> Option<SlotEvent> {
        if self.run.as_ref().is_some_and(|r| now - r.first >= RUN_SPAN) {
            self.run.take().map(Run::event)
        } else {
            None
        }
    }

    /// Everything held, in order, to be written now (before the slot's
    /// next event, or as the daemon stops).
    pub fn take_all(&mut self) -> Vec<SlotEvent> {
        let mut out: Vec<SlotEvent> = self.run.take().map(Run::event).into_iter().collect();
        if let Some(at) = self.started.take() {
            out.push(SlotEvent::FetchStarted {
                at,
                prompted_by: None,
            });
        }
        out
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.run.is_none() && self.started.is_none()
    }
}

impl Run {
    fn event(self) -> SlotEvent {
        SlotEvent::FetchesEmpty {
            at: self.last_ended,
            first: self.first,
            last_started: self.last_started,
            count: self.count,
            hook_seconds: self.seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::slot::{Activity, Slot, State, Transition, apply};

    fn start(at: i64) -> SlotEvent {
        SlotEvent::FetchStarted {
            at,
            prompted_by: None,
        }
    }

    fn end(at: i64) -> SlotEvent {
        SlotEvent::FetchCompleted { at }
    }

    /// Feeds decisions (events, quiet end) through a fold, collecting what
    /// is written; checks the slot replayed from it against the slot that
    /// took every event, after each decision.
    fn check(decisions: &[(Vec<SlotEvent>, bool)]) -> Vec<SlotEvent> {
        let mut q = QuietFetches::default();
        let mut live = Slot::new("slot1", "h", 0);
        let mut written = Vec::new();
        for (events, quiet) in decisions {
            for e in events {
                apply(&mut live, e);
            }
            if let Pass::Write { first } = q.pass(events, *quiet, 0.5) {
                written.extend(first);
                written.extend(events.iter().cloned());
            }
            let at = events.last().map_or(0, SlotEvent::at);
            written.extend(q.due(at));
        }
        written.extend(q.take_all());
        assert!(q.is_empty());
        let mut replayed = Slot::new("slot1", "h", 0);
        for e in &written {
            apply(&mut replayed, e);
        }
        assert_eq!(replayed, live, "{written:?}");
        written
    }

    #[test]
    fn a_run_of_empty_fetches_is_one_event_before_the_next_change() {
        let mut ds: Vec<(Vec<SlotEvent>, bool)> = Vec::new();
        for t in 0..10 {
            ds.push((vec![start(t * 2)], false));
            ds.push((vec![end(t * 2 + 1)], true));
        }
        let change = SlotEvent::ActivityChanged {
            at: 30,
            state: State::Owner,
            activity: Activity::Idle,
            transition: Transition::Unnumbered,
            why: "test".into(),
        };
        ds.push((vec![change.clone()], false));
        let written = check(&ds);
        assert_eq!(
            written,
            vec![
                SlotEvent::FetchesEmpty {
                    at: 19,
                    first: 0,
                    last_started: 18,
                    count: 10,
                    hook_seconds: 5.0,
                },
                change
            ]
        );
    }

    #[test]
    fn a_fetch_that_brings_work_is_written_whole_after_the_run() {
        let claim = SlotEvent::MatchReceived { at: 5 };
        let written = check(&[
            (vec![start(1)], false),
            (vec![end(2)], true),
            (vec![start(3)], false),
            (vec![end(4), claim.clone()], false),
        ]);
        assert_eq!(written.len(), 4, "{written:?}");
        assert!(matches!(
            written[0],
            SlotEvent::FetchesEmpty { count: 1, .. }
        ));
        assert_eq!(written[1], start(3));
        assert_eq!(written[3], claim);
    }

    #[test]
    fn a_fetch_that_failed_or_was_prompted_is_written() {
        let prompted = SlotEvent::FetchStarted {
            at: 3,
            prompted_by: Some("slot2".into()),
        };
        let written = check(&[
            (vec![start(1)], false),
            (vec![end(2)], false),
            (vec![prompted.clone()], false),
            (vec![end(4)], true),
        ]);
        assert_eq!(written, vec![start(1), end(2), prompted, end(4)]);
    }

    #[test]
    fn a_long_run_is_written_every_span_and_a_fetch_under_way_stays_held() {
        let mut ds = Vec::new();
        for t in 0..(RUN_SPAN * 2 + 10) {
            ds.push((vec![start(t * 10)], false));
            ds.push((vec![end(t * 10 + 1)], true));
        }
        ds.push((vec![start(RUN_SPAN * 30)], false));
        let written = check(&ds);
        let runs = written
            .iter()
            .filter(|e| matches!(e, SlotEvent::FetchesEmpty { .. }))
            .count();
        let total: u64 = written
            .iter()
            .map(|e| match e {
                SlotEvent::FetchesEmpty { count, .. } => *count,
                _ => 0,
            })
            .sum();
        assert_eq!(total, u64::try_from(RUN_SPAN * 2 + 10).unwrap());
        // 31 fetches ten seconds apart span RUN_SPAN.
        assert!((19..=21).contains(&runs), "{runs} runs");
        assert_eq!(written.last(), Some(&start(RUN_SPAN * 30)));
    }

    proptest::proptest! {
        /// Whatever the slot's events, the log replays to the live state.
        #[test]
        fn replay_of_what_is_written_is_the_live_state(
            steps in proptest::collection::vec((0u8..5, proptest::bool::ANY), 0..60)
        ) {
            let mut ds = Vec::new();
            for (i, (kind, quiet)) in steps.into_iter().enumerate() {
                let at = i64::try_from(i).unwrap_or(0) * 7;
                let events = match kind {
                    0 => vec![start(at)],
                    1 => vec![end(at)],
                    2 => vec![SlotEvent::MatchReceived { at }],
                    3 => vec![end(at), start(at + 1)],
                    _ => Vec::new(),
                };
                ds.push((events, quiet));
            }
            check(&ds);
        }
    }
}
