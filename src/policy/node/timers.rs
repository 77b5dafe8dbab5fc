//! A slot's timers after each of its steps, and whether the machine may
//! hibernate: the node core's answers about time.

use super::super::engine::{Ctx, evaluation_interval, fetch_delay, next_fetch_at};
use super::super::slot::Slot;

/// When a slot wakes up next, after a step at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wakeup {
    /// The next policy evaluation: `None` keeps the one already set.
    pub evaluate_at: Option<i64>,
    /// The FETCH_WORK timer (`None`: none; a fetch comes with the
    /// evaluation or later).
    pub fetch_at: Option<i64>,
}

/// A slot's timers after a step at `ctx.now`, given the evaluation and
/// the fetch timer already set and not yet fired (`eval_set`,
/// `fetch_set`; a timer that fires is no longer set during the step it
/// starts).
///
/// The evaluation is the one its state asks for (`evaluation_interval`),
/// unless the one set comes first and is still to come. The fetch timer,
/// as HTCondor's `tryFetchWork` arms it: at the end of the delay since the
/// last fetch (`next_fetch_at`); once that is past, the one set if it is
/// still to fire, else a whole delay from now (the step that fired it
/// found the fetch refused, START false say, and HTCondor re-arms it for
/// a full delay). None when the evaluation comes first: it tries a fetch
/// itself.
pub fn wakeup(slot: &Slot, ctx: &Ctx<'_>, eval_set: Option<i64>, fetch_set: Option<i64>) -> Wakeup {
    let now = ctx.now;
    let want = now + evaluation_interval(slot, ctx.policy, now);
    let keep = eval_set.is_some_and(|t| t > now && t <= want);
    let fetch_at = match next_fetch_at(slot, ctx) {
        None => None,
        Some(due) if due > now => Some(due),
        Some(_) => match fetch_set {
            Some(set) if set >= now => Some(set),
            _ => Some(now + fetch_delay(slot, ctx).max(1)),
        },
    }
    .filter(|f| *f < want);
    Wakeup {
        evaluate_at: (!keep).then_some(want),
        fetch_at,
    }
}

/// Whether the machine should hibernate, and to which state, given what
/// each slot's HIBERNATE asks for (`engine::hibernate_state`): only when
/// every slot asks for a state other than NONE; the deepest one wins.
pub fn hibernation(states: &[Option<(u32, String)>]) -> Option<String> {
    let mut best: Option<&(u32, String)> = None;
    for s in states {
        let s = s.as_ref()?;
        if s.0 == 0 {
            return None;
        }
        if best.is_none_or(|b| s.0 > b.0) {
            best = Some(s);
        }
    }
    best.map(|b| b.1.clone())
}
