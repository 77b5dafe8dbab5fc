//! What the event-log benches share: the event they append.

use roost::events::Event;
use roost::policy::slot::{Activity, SlotEvent, State, Transition};

/// Event `i`: a slot (one of 64) starting its job, at time `i`.
pub fn event(i: i64) -> (i64, String, Event) {
    (
        i,
        format!("slot{}", i % 64),
        Event::Slot(SlotEvent::ActivityChanged {
            at: i,
            state: State::Claimed,
            activity: Activity::Busy,
            transition: Transition::IdleToBusy,
            why: "starter spawned".into(),
        }),
    )
}
