//! The eventd's core, event-sourced: what the eventd knows
//! ([`EventdState`]: the active events with their progress, the requests
//! asked of machines and not yet answered, the expired configurations
//! removed), rebuilt from its log by [`apply`]; what it decides at a
//! wake-up or when a machine answers ([`decide`]: the events to record,
//! then the requests to send — a request is recorded before it is sent,
//! its answer after it comes). Pure: the time, the zone, the settings and
//! the pool's ads are given; nothing here reads a clock or the network.
//!
//! The timers of looks at the pool, of cleanups and of an active event's
//! next look for machines ([`Timers`]) are not recorded: a new run looks
//! and cleans at once, as a fresh eventd does. The pace of vacates is
//! recorded (`Round` says a round waits for its costly vacate, `Paced`
//! when the next may come), so a restarted eventd keeps to the bandwidth,
//! and so is what every round did, so it keeps its slow-start count. A lost log
//! costs the audit only: an eventd without one starts again from the
//! pool's ads, which say which machines are down until when (the spec's
//! stateless eventd; the slow-start count then starts over).

use std::collections::{BTreeMap, BTreeSet};

use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use super::event::EventdEvent;
use super::plan::{self, Pacing, Progress};
use super::settings::EventdSettings;
use crate::classad::ClassAd;

/// What the eventd asks of a machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    /// Put the machine down until `until`: the spec's shutdown statements.
    Configure {
        /// The event.
        event: String,
        /// Its `EndDownTime`.
        until: i64,
    },
    /// Vacate one of its slots, gracefully.
    Vacate {
        /// The event.
        event: String,
        /// The slot's name.
        slot: String,
        /// The seconds its job's vacate is estimated to take, when the
        /// event's next round waits for it (the spec's timer, set once the
        /// vacate is sent); 0 for a job that costs nothing.
        then_wait: i64,
    },
    /// Remove the machine's expired shutdown configuration.
    Clean {
        /// The `EndDownTime` it had.
        until: i64,
    },
}

/// A request recorded and not yet answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The machine (its startd's name).
    pub machine: String,
    /// What it is asked.
    pub ask: Ask,
}

/// An active event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Active {
    /// What its rounds have done.
    pub progress: Progress,
    /// Its last round's costly vacate is not answered yet: no round until
    /// it is.
    pub waiting: bool,
    /// No round before this time (milliseconds since the epoch): the
    /// estimated time of the last costly vacate, from when it was taken.
    pub paced_until: Option<i64>,
}

impl Active {
    /// Whether the vacates' pace lets a round be made at `now_ms`.
    fn paced(&self, now_ms: i64) -> bool {
        !self.waiting && self.paced_until.is_none_or(|t| now_ms >= t)
    }
}

/// What the eventd knows, as its log rebuilds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventdState {
    /// The active events, by name.
    pub active: BTreeMap<String, Active>,
    /// Requests recorded and not yet answered, by id.
    pub pending: BTreeMap<String, Pending>,
    /// Machines whose expired configuration was removed, with the
    /// `EndDownTime` it had (not asked again while their ads still show it).
    pub cleaned: BTreeSet<(String, i64)>,
    /// How many requests were ever asked (the next one's number).
    pub asked: u64,
}

/// When this run next looks at the pool for events to activate, for
/// expired configurations, and for each active event's machines
/// (milliseconds). Not recorded: a new run does each at once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timers {
    /// The next look for events to activate.
    pub next_look: i64,
    /// The next cleanup.
    pub next_cleanup: i64,
    /// Each active event's next round by its own timer (`EVENTD_INTERVAL`
    /// after a round with no costly vacate; sooner when the pool could not
    /// be read); none: at once.
    pub rounds: BTreeMap<String, i64>,
}

/// What a decision looks at besides the state.
pub struct Ctx<'a> {
    /// The knobs.
    pub settings: &'a EventdSettings,
    /// The eventd's time zone (the events' times are its local times).
    pub tz: &'a TimeZone,
    /// Now, in milliseconds since the epoch.
    pub now_ms: i64,
    /// This run's name, which the ids of its requests start with.
    pub run: &'a str,
}

/// What the eventd reacts to.
#[derive(Clone, Debug)]
pub enum Input<'a> {
    /// A wake-up, with the pool's slot ads when they were read (`None`:
    /// they could not be, or none were needed: [`wants_pool`]).
    Wake {
        /// The pool's ads.
        ads: Option<&'a [ClassAd]>,
    },
    /// A machine answered request `id`, or could not be asked.
    Answered {
        /// The request.
        id: String,
        /// Whether the machine did what it was asked.
        ok: bool,
        /// What it said, or why it could not be asked.
        answer: String,
    },
    /// The configuration was read again: events no longer in
    /// `EVENT_LIST` are given up.
    Reconfigured,
}

/// A decision: the events to record, in order, and the requests they ask
/// for (id, machine, what), to send once the events are durable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// The events.
    pub events: Vec<EventdEvent>,
    /// The requests.
    pub requests: Vec<(String, String, Ask)>,
    /// The timers after it.
    pub timers: Timers,
}

/// How long an active event waits to try a round again when the pool
/// could not be read (milliseconds).
const POOL_RETRY_MS: i64 = 10_000;

/// How long a removed configuration is remembered, so that a machine
/// whose ad still shows it is not asked again (seconds).
const CLEANED_KEPT: i64 = 7 * 86_400;

/// Whether a wake-up at `ctx.now_ms` needs the pool's ads: a cleanup, a
/// look at an event worth considering, or a round is due.
pub fn wants_pool(state: &EventdState, ctx: &Ctx<'_>, timers: &Timers) -> bool {
    let now = ctx.now_ms / 1000;
    let s = ctx.settings;
    ctx.now_ms >= timers.next_cleanup
        || (ctx.now_ms >= timers.next_look
            && s.events.iter().any(|e| {
                !state.active.contains_key(&e.name)
                    && e.to_consider(now, s.max_preparation, ctx.tz).is_some()
            }))
        || state
            .active
            .iter()
            .any(|(name, a)| round_due(name, a, ctx.now_ms, timers) && now < a.progress.end)
}

/// Whether active event `name`'s round is due at `now_ms`.
fn round_due(name: &str, a: &Active, now_ms: i64, timers: &Timers) -> bool {
    a.paced(now_ms) && timers.rounds.get(name).is_none_or(|t| now_ms >= *t)
}

/// When the eventd must wake next (milliseconds): the next look, cleanup,
/// round or end of an active event.
pub fn next_wake(state: &EventdState, timers: &Timers) -> i64 {
    let mut next = timers.next_look.min(timers.next_cleanup);
    for (name, a) in &state.active {
        next = next.min(a.progress.end.saturating_mul(1000));
        if !a.waiting {
            let own = timers.rounds.get(name).copied().unwrap_or(0);
            next = next.min(own.max(a.paced_until.unwrap_or(0)));
        }
    }
    next
}

/// The working copy a decision builds on: each event is applied as it is
/// made, so later steps of the same decision see it.
struct Work<'s> {
    state: std::borrow::Cow<'s, EventdState>,
    out: Decision,
}

impl Work<'_> {
    fn emit(&mut self, e: EventdEvent) {
        apply(self.state.to_mut(), &e);
        self.out.events.push(e);
    }

    /// Records request `ask` of `machine` under the next id.
    fn ask(&mut self, ctx: &Ctx<'_>, machine: String, ask: Ask) {
        let id = format!("{}-{}", ctx.run, self.state.asked);
        self.out
            .requests
            .push((id.clone(), machine.clone(), ask.clone()));
        self.emit(EventdEvent::Asked { id, machine, ask });
    }
}

/// What the eventd does on `input`, given what it knows and its timers.
pub fn decide(state: &EventdState, ctx: &Ctx<'_>, timers: &Timers, input: &Input<'_>) -> Decision {
    let mut w = Work {
        state: std::borrow::Cow::Borrowed(state),
        out: Decision {
            timers: timers.clone(),
            ..Decision::default()
        },
    };
    match input {
        Input::Wake { ads } => wake(&mut w, ctx, *ads),
        Input::Answered { id, ok, answer } => {
            let Some(p) = w.state.pending.get(id).cloned() else {
                return w.out;
            };
            w.emit(EventdEvent::Answered {
                id: id.clone(),
                ok: *ok,
                answer: answer.clone(),
            });
            // The spec's timer: the event's next round comes the vacate's
            // estimated time after it was sent (and taken); at once when
            // it was not taken.
            if let Ask::Vacate {
                event, then_wait, ..
            } = &p.ask
                && *then_wait > 0
                && w.state.active.contains_key(event)
            {
                let wait = if *ok { then_wait * 1000 } else { 0 };
                w.emit(EventdEvent::Paced {
                    event: event.clone(),
                    next_round: ctx.now_ms + wait,
                });
            }
        }
        Input::Reconfigured => {
            let gone: Vec<String> = (w.state.active.keys())
                .filter(|n| !ctx.settings.events.iter().any(|e| &e.name == *n))
                .cloned()
                .collect();
            for event in gone {
                w.emit(EventdEvent::Withdrawn { event });
            }
            w.out.timers.next_look = ctx.now_ms;
        }
    }
    w.out
}

/// A wake-up: cleanup, activation and the active events' rounds, each
/// when due.
fn wake(w: &mut Work<'_>, ctx: &Ctx<'_>, ads: Option<&[ClassAd]>) {
    let now = ctx.now_ms / 1000;
    let s = ctx.settings;
    if ctx.now_ms >= w.out.timers.next_cleanup
        && let Some(ads) = ads
    {
        for (machine, until) in plan::expired(ads, now) {
            let asked = w.state.pending.values().any(|p| {
                p.machine == machine && matches!(p.ask, Ask::Clean { until: u } if u == until)
            });
            if !asked && !w.state.cleaned.contains(&(machine.clone(), until)) {
                w.ask(ctx, machine, Ask::Clean { until });
            }
        }
        w.out.timers.next_cleanup = ctx.now_ms + s.cleanup_interval * 1000;
    }
    if ctx.now_ms >= w.out.timers.next_look {
        w.out.timers.next_look = ctx.now_ms + s.interval * 1000;
        for event in &s.events {
            if w.state.active.contains_key(&event.name) {
                continue;
            }
            let Some(ads) = ads else { continue };
            if let Some(act) = event.activation(now, s.interval, s.max_preparation, ads, ctx.tz) {
                w.emit(EventdEvent::Activated {
                    event: event.name.clone(),
                    start: act.start,
                    end: act.end,
                    needed: act.needed,
                });
            }
        }
    }
    for event in &s.events {
        let Some(active) = w.state.active.get(&event.name) else {
            continue;
        };
        if now >= active.progress.end {
            w.emit(EventdEvent::Ended {
                event: event.name.clone(),
            });
            continue;
        }
        if !round_due(&event.name, active, ctx.now_ms, &w.out.timers) {
            continue;
        }
        let Some(ads) = ads else {
            (w.out.timers.rounds).insert(event.name.clone(), ctx.now_ms + POOL_RETRY_MS);
            continue;
        };
        let pacing = Pacing {
            interval: s.interval,
            slow_start: s.slow_start,
        };
        let mut progress = active.progress.clone();
        let r = plan::round(event, ads, now, pacing, &mut progress);
        for (machine, until) in r.configure {
            let ask = Ask::Configure {
                event: event.name.clone(),
                until,
            };
            w.ask(ctx, machine, ask);
        }
        let last = r.vacate.len();
        for (i, slot) in r.vacate.into_iter().enumerate() {
            let machine = slot.split_once('@').map_or(slot.as_str(), |(_, m)| m);
            let then_wait = if i + 1 == last { r.vacate_wait } else { 0 };
            let ask = Ask::Vacate {
                event: event.name.clone(),
                slot: slot.clone(),
                then_wait,
            };
            w.ask(ctx, machine.to_string(), ask);
        }
        (w.out.timers.rounds).insert(event.name.clone(), ctx.now_ms + r.next_in * 1000);
        w.emit(EventdEvent::Round {
            event: event.name.clone(),
            waits: r.vacate_wait > 0,
        });
        debug_assert_eq!(
            w.state.active.get(&event.name).map(|a| &a.progress),
            Some(&progress),
            "the events of a round must give the round's progress"
        );
    }
    let active = &w.state.active;
    w.out
        .timers
        .rounds
        .retain(|name, _| active.contains_key(name));
}

/// What event `e` changes of what the eventd knows. Holds no logic beyond
/// bookkeeping; events of the logs written before the eventd recorded
/// requests (`Configured`, `Vacated`, `Cleaned`: asked and answered in
/// one) are read as both.
pub fn apply(state: &mut EventdState, e: &EventdEvent) {
    match e {
        EventdEvent::Activated { event, end, .. } => {
            state.active.insert(
                event.clone(),
                Active {
                    progress: Progress {
                        end: *end,
                        ..Progress::default()
                    },
                    ..Active::default()
                },
            );
        }
        EventdEvent::Asked { id, machine, ask } => {
            state.asked += 1;
            match ask {
                Ask::Configure { event, .. } => {
                    if let Some(a) = state.active.get_mut(event) {
                        a.progress.configured.insert(machine.clone());
                        a.progress.slow_start_pos += 1;
                    }
                }
                Ask::Vacate { event, slot, .. } => {
                    if let Some(a) = state.active.get_mut(event) {
                        a.progress.vacated.insert(slot.clone());
                    }
                }
                Ask::Clean { until } => {
                    state
                        .cleaned
                        .retain(|(_, u)| *u >= until.saturating_sub(CLEANED_KEPT));
                }
            }
            state.pending.insert(
                id.clone(),
                Pending {
                    machine: machine.clone(),
                    ask: ask.clone(),
                },
            );
        }
        EventdEvent::Answered { id, ok, .. } => {
            let Some(p) = state.pending.remove(id) else {
                return;
            };
            answered(state, &p.machine, &p.ask, *ok);
        }
        EventdEvent::Round { event, waits } => {
            if let Some(a) = state.active.get_mut(event) {
                a.waiting = *waits;
                a.paced_until = None;
            }
        }
        EventdEvent::Paced { event, next_round } => {
            if let Some(a) = state.active.get_mut(event) {
                a.waiting = false;
                a.paced_until = Some(*next_round);
            }
        }
        EventdEvent::Ended { event } | EventdEvent::Withdrawn { event } => {
            state.active.remove(event);
        }
        EventdEvent::Configured {
            event,
            machine,
            until,
            ok,
            ..
        } => {
            if let Some(a) = state.active.get_mut(event) {
                a.progress.configured.insert(machine.clone());
                a.progress.slow_start_pos += 1;
            }
            let ask = Ask::Configure {
                event: event.clone(),
                until: *until,
            };
            answered(state, machine, &ask, *ok);
        }
        EventdEvent::Vacated {
            event, slot, ok, ..
        } => {
            if let Some(a) = state.active.get_mut(event) {
                a.progress.vacated.insert(slot.clone());
            }
            let ask = Ask::Vacate {
                event: event.clone(),
                slot: slot.clone(),
                then_wait: 0,
            };
            answered(state, "", &ask, *ok);
        }
        EventdEvent::Cleaned { .. } => {}
    }
}

/// What an answer changes: a refused configuration or vacate is asked
/// again at the event's next round; a removed configuration is
/// remembered.
fn answered(state: &mut EventdState, machine: &str, ask: &Ask, ok: bool) {
    match ask {
        Ask::Configure { event, .. } if !ok => {
            if let Some(a) = state.active.get_mut(event) {
                a.progress.configured.remove(machine);
            }
        }
        Ask::Vacate { event, slot, .. } if !ok => {
            if let Some(a) = state.active.get_mut(event) {
                a.progress.vacated.remove(slot);
            }
        }
        Ask::Clean { until } if ok => {
            state.cleaned.insert((machine.to_string(), *until));
        }
        _ => {}
    }
}

/// The state a log's events give, in order.
pub fn replay<'e>(events: impl IntoIterator<Item = &'e EventdEvent>) -> EventdState {
    let mut state = EventdState::default();
    for e in events {
        apply(&mut state, e);
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;
    use crate::eventd::schedule::Shutdown;

    /// An event every day at 00:00 UTC for a day (so always on), 1 Mb/s,
    /// every slot, the biggest image first.
    fn settings() -> EventdSettings {
        let knobs = |k: &str| match k {
            "All" => Some("true".to_string()),
            "Big" => Some("ImageSize".to_string()),
            _ => None,
        };
        let e =
            Shutdown::parse("E", "SHUTDOWN MTWRFSU 00:00 86399 1 All Big", &knobs).expect("event");
        EventdSettings {
            interval: 900,
            max_preparation: 0,
            slow_start: 60,
            cleanup_interval: 3600,
            events: vec![e],
        }
    }

    fn pool(extra: &str) -> Vec<ClassAd> {
        [
            // A standard-universe job of 1,280 KiB: 10 s at 1 Mb/s.
            "Name = \"slot1@a\"; State = \"Claimed\"; JobUniverse = 1; ImageSize = 1280",
            "Name = \"slot1@b\"; State = \"Claimed\"; JobUniverse = 5; ImageSize = 99",
        ]
        .iter()
        .map(|a| parse_ad(&format!("[ {a}; {extra} ]")).expect("ad"))
        .collect()
    }

    /// The eventd's run `run` at `now_ms`.
    struct Run {
        state: EventdState,
        timers: Timers,
        log: Vec<EventdEvent>,
        run: String,
    }

    impl Run {
        fn new(log: Vec<EventdEvent>, run: &str, now_ms: i64) -> Run {
            Run {
                state: replay(&log),
                timers: Timers {
                    next_look: now_ms,
                    next_cleanup: now_ms,
                    rounds: BTreeMap::new(),
                },
                log,
                run: run.into(),
            }
        }

        fn step(&mut self, now_ms: i64, input: &Input<'_>) -> Decision {
            let s = settings();
            let tz = TimeZone::UTC;
            let ctx = Ctx {
                settings: &s,
                tz: &tz,
                now_ms,
                run: &self.run,
            };
            let d = decide(&self.state, &ctx, &self.timers, input);
            for e in &d.events {
                apply(&mut self.state, e);
            }
            self.log.extend(d.events.iter().cloned());
            self.timers = d.timers.clone();
            assert_eq!(
                replay(&self.log),
                self.state,
                "the log replays to the state"
            );
            d
        }
    }

    fn answer(id: &str) -> Input<'_> {
        Input::Answered {
            id: id.into(),
            ok: true,
            answer: "done".into(),
        }
    }

    #[test]
    fn requests_are_recorded_before_and_answers_after_and_a_restart_carries_on() {
        // 2026-12-07 12:00 UTC.
        let t0 = 1_796_644_800_000;
        let ads = pool("");
        let mut r = Run::new(Vec::new(), "r1", t0);
        let d = r.step(t0, &Input::Wake { ads: Some(&ads) });
        // Activated, both machines put down in RANK order with the slow
        // start, b's free vacate then a's costly one; the round waits for
        // a's answer.
        assert!(matches!(d.events[0], EventdEvent::Activated { .. }));
        let asked: Vec<(String, String, Ask)> = d.requests.clone();
        let end = 1_796_687_999; // the day's 23:59:59
        assert_eq!(
            asked,
            [
                (
                    "r1-0".into(),
                    "a".into(),
                    Ask::Configure {
                        event: "E".into(),
                        until: end
                    }
                ),
                (
                    "r1-1".into(),
                    "b".into(),
                    Ask::Configure {
                        event: "E".into(),
                        until: end + 60
                    }
                ),
                (
                    "r1-2".into(),
                    "a".into(),
                    Ask::Vacate {
                        event: "E".into(),
                        slot: "slot1@a".into(),
                        then_wait: 10
                    }
                ),
            ]
        );
        assert_eq!(r.state.pending.len(), 3);
        assert!(r.state.active["E"].waiting);
        // While a's vacate is unanswered, no round comes, however late.
        let d = r.step(t0 + 600_000, &Input::Wake { ads: Some(&ads) });
        assert!(d.requests.is_empty(), "{d:?}");
        for id in ["r1-0", "r1-1"] {
            r.step(t0 + 1_000, &answer(id));
        }
        // a's vacate taken at t0 + 1.5 s: the next round 10 s from then.
        let d = r.step(t0 + 1_500, &answer("r1-2"));
        assert_eq!(
            d.events.last(),
            Some(&EventdEvent::Paced {
                event: "E".into(),
                next_round: t0 + 11_500
            })
        );
        assert_eq!(next_wake(&r.state, &r.timers), t0 + 11_500);

        // The eventd dies and starts again at t0 + 5 s: it replays its log
        // and keeps to the pace — nothing before t0 + 11.5 s, and no
        // machine is put down twice.
        let mut r2 = Run::new(r.log.clone(), "r2", t0 + 5_000);
        assert_eq!(r2.state, r.state);
        let down = pool("EndDownTime = 1796687999");
        let d = r2.step(t0 + 5_000, &Input::Wake { ads: Some(&down) });
        assert!(d.requests.is_empty(), "{d:?}");
        let d = r2.step(t0 + 11_500, &Input::Wake { ads: Some(&down) });
        assert_eq!(
            d.requests,
            [(
                "r2-3".to_string(),
                "b".to_string(),
                Ask::Vacate {
                    event: "E".into(),
                    slot: "slot1@b".into(),
                    then_wait: 0
                }
            )],
            "after a's pace, b's vacate; nothing asked twice"
        );
        r2.step(t0 + 12_000, &answer("r2-3"));
        // A request recorded and never answered (the eventd died first)
        // stays pending across a restart, for the shell to look up.
        let mut r3 = Run::new(r2.log.clone(), "r3", t0 + 20_000);
        let joined = [
            ads.clone(),
            vec![parse_ad("[ Name = \"slot1@c\"; State = \"Unclaimed\" ]").expect("ad")],
        ]
        .concat();
        let d = r3.step(t0 + 20_000, &Input::Wake { ads: Some(&joined) });
        assert_eq!(d.requests.len(), 1, "{d:?}");
        assert_eq!(
            d.requests[0].2,
            Ask::Configure {
                event: "E".into(),
                until: end + 120
            },
            "the slow start goes on from the log"
        );
        let r4 = Run::new(r3.log.clone(), "r4", t0 + 21_000);
        assert_eq!(r4.state.pending.len(), 1);
        assert!(
            r4.state.pending.contains_key("r3-4"),
            "{:?}",
            r4.state.pending
        );
    }

    #[test]
    fn a_refused_configuration_is_asked_again_and_expired_ones_are_cleaned_once() {
        let t0 = 1_796_644_800_000;
        let ads = pool("");
        let mut r = Run::new(Vec::new(), "r", t0);
        r.step(t0, &Input::Wake { ads: Some(&ads) });
        r.step(
            t0 + 100,
            &Input::Answered {
                id: "r-1".into(),
                ok: false,
                answer: "unreachable".into(),
            },
        );
        assert!(!r.state.active["E"].progress.configured.contains("b"));
        // The next round (a's vacate answered and paced) asks b again.
        r.step(t0 + 200, &answer("r-2"));
        let d = r.step(t0 + 10_200, &Input::Wake { ads: Some(&ads) });
        assert!(
            d.requests
                .iter()
                .any(|(_, m, a)| m == "b" && matches!(a, Ask::Configure { .. })),
            "{d:?}"
        );
        // After the event: the expired configuration is removed once.
        let expired = pool("EndDownTime = 1796640000");
        let late = t0 + 86_400_000;
        let mut r = Run::new(Vec::new(), "c", late);
        let d = r.step(
            late,
            &Input::Wake {
                ads: Some(&expired),
            },
        );
        let cleans: Vec<&String> = (d.requests.iter())
            .filter(|(_, _, a)| matches!(a, Ask::Clean { .. }))
            .map(|(_, m, _)| m)
            .collect();
        assert_eq!(cleans, ["a", "b"]);
        r.step(late + 100, &answer("c-0"));
        let mut again = r.timers.clone();
        again.next_cleanup = late;
        r.timers = again;
        let d = r.step(
            late + 4_000_000,
            &Input::Wake {
                ads: Some(&expired),
            },
        );
        let cleans: Vec<&String> = (d.requests.iter())
            .filter(|(_, _, a)| matches!(a, Ask::Clean { .. }))
            .map(|(_, m, _)| m)
            .collect();
        assert!(cleans.is_empty(), "a cleaned, b still asked: {d:?}");
    }

    #[test]
    fn logs_written_before_requests_were_recorded_still_replay() {
        let log = vec![
            EventdEvent::Activated {
                event: "E".into(),
                start: 0,
                end: 100,
                needed: 0,
            },
            EventdEvent::Configured {
                event: "E".into(),
                machine: "a".into(),
                until: 100,
                answer: "ok".into(),
                ok: true,
            },
            EventdEvent::Configured {
                event: "E".into(),
                machine: "b".into(),
                until: 160,
                answer: "unreachable".into(),
                ok: false,
            },
            EventdEvent::Vacated {
                event: "E".into(),
                slot: "slot1@a".into(),
                answer: "ok".into(),
                ok: true,
            },
        ];
        let s = replay(&log);
        let p = &s.active["E"].progress;
        assert_eq!(p.slow_start_pos, 2);
        assert_eq!(p.configured.iter().collect::<Vec<_>>(), ["a"]);
        assert_eq!(p.vacated.iter().collect::<Vec<_>>(), ["slot1@a"]);
        assert!(s.pending.is_empty());
    }
}
