//! The shell of `policy::quiet` for the slot actors: what of a slot's
//! decision goes to the log now (what the slot held, the FETCH_WORK run's
//! own events, the decision's events), the runs of empty polls written
//! when they have lasted long enough, and everything held written as the
//! slot goes or the daemon stops. Each slot keeps its own
//! [`QuietFetches`].

use tracing::warn;

use super::hook::Unrecorded;
use super::shared::Shared;
use crate::events::Event;
use crate::policy::quiet::{Pass, QuietFetches};
use crate::policy::slot::SlotEvent;

/// The events to append, by actor, for slot `slot`'s decision `events`
/// (`hook`: the FETCH_WORK run it answers, when that run's events are not
/// in the log). Empty when the decision is held (a poll that found
/// nothing); a run held long enough is recorded then.
pub fn batch(
    shared: &Shared,
    (slot, held): (&str, &mut QuietFetches),
    events: &[SlotEvent],
    hook: Option<Unrecorded>,
    now: i64,
) -> Vec<(String, Event)> {
    let (quiet, seconds) = hook.as_ref().map_or((false, 0.0), |h| (h.quiet, h.seconds));
    let first = match held.pass(events, quiet, seconds) {
        Pass::Held => {
            let due = held.due(now);
            match hook {
                Some(h) if h.quiet && shared.settings().metrics.is_some() => {
                    crate::metrics::global().quiet_fetch(h.seconds);
                }
                Some(h) if !h.quiet => record(shared, &h.actor, h.events),
                _ => {}
            }
            if let Some(run) = due {
                record(shared, slot, vec![Event::Slot(run)]);
            }
            return Vec::new();
        }
        Pass::Write { first } => first,
    };
    let mine = |e: SlotEvent| (slot.to_string(), Event::Slot(e));
    let mut out: Vec<(String, Event)> = first.into_iter().map(mine).collect();
    if let Some(h) = hook {
        out.extend(h.events.into_iter().map(|e| (h.actor.clone(), e)));
    }
    out.extend(events.iter().cloned().map(mine));
    out
}

/// Records what slot `slot` holds, as it goes or the daemon stops.
pub fn write_held(shared: &Shared, slot: &str, held: &mut QuietFetches) {
    let events = held.take_all();
    if !events.is_empty() {
        record(shared, slot, events.into_iter().map(Event::Slot).collect());
    }
}

fn record(shared: &Shared, actor: &str, events: Vec<Event>) {
    if let Err(e) = shared.record(actor, events) {
        warn!(message = "Cannot record a slot's held events.", actor = %actor, error = %e);
    }
}
