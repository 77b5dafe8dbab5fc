//! What a shell asks of a slot between decisions: when to evaluate its
//! policy next, when it may fetch, how much retirement its job has left,
//! its `FetchWorkDelay`, and the sleep state its HIBERNATE asks for.

use crate::classad::Value;

use super::super::slot::{Claim, Slot, State};
use super::ad::match_expires;
use super::work::Work;
use super::{Ctx, Policy};

/// In how many seconds (at least 1) the policy should next be evaluated
/// without any other input: every POLLING_INTERVAL while Claimed,
/// Preempting or in Backfill, else every UPDATE_INTERVAL; sooner when a
/// match times out or a claim lease expires before then.
pub fn evaluation_interval(slot: &Slot, policy: &Policy, now: i64) -> i64 {
    let every = match slot.state {
        State::Claimed | State::Preempting | State::Backfill => policy.polling_interval,
        _ => policy.update_interval,
    };
    let deadline = match slot.state {
        State::Matched => Some(match_expires(slot, policy)),
        State::Claimed => [&slot.claim, &slot.preempting]
            .into_iter()
            .flatten()
            .filter_map(Claim::lease_end)
            .min(),
        _ => None,
    };
    deadline.map_or(every, |d| every.min(d - now)).max(1)
}

/// When FETCH_WORK may next run, if the slot fetches at all: when the
/// delay since the last fetch (`FetchWorkDelay`; 1 s when it is 0 or
/// less) ends; now before the first fetch (which is not throttled: a
/// slot whose START kept it from fetching tries again a whole delay
/// later, as HTCondor's fetch timer does). `None` while one runs.
pub fn next_fetch_at(slot: &Slot, ctx: &Ctx<'_>) -> Option<i64> {
    if ctx.policy.keyword.as_deref().is_none_or(str::is_empty) || slot.fetching {
        return None;
    }
    let Some(last) = slot.last_fetch_completed else {
        return Some(ctx.now);
    };
    let delay = fetch_delay(slot, ctx);
    Some(if delay > 0 { last + delay } else { last + 1 })
}

/// Whether news that a slot fetching with hook keyword `keyword` found
/// work is for this slot ([`super::Input::WorkFound`]): it fetches from the
/// same place, and no fetch of its own runs.
pub fn wants_news_of_work(slot: &Slot, policy: &Policy, keyword: &str) -> bool {
    policy.keyword.as_deref() == Some(keyword) && !slot.fetching
}

/// Seconds of retirement the slot's running job has left (0 without one).
pub fn retirement_remaining(slot: &Slot, ctx: &Ctx<'_>) -> i64 {
    Work::new(slot, ctx).retirement_remaining()
}

/// `FetchWorkDelay` evaluated with the current job as TARGET (300 when it
/// is not an integer): published as `NextFetchWorkDelay`.
pub fn fetch_delay(slot: &Slot, ctx: &Ctx<'_>) -> i64 {
    Work::new(slot, ctx).fetch_delay()
}

/// HTCondor's sleep states, lowest first, with the names HIBERNATE may
/// give them.
const SLEEP_STATES: &[(u32, &[&str])] = &[
    (0, &["NONE", "0"]),
    (1, &["S1", "STANDBY", "SLEEP", "1"]),
    (2, &["S2", "2"]),
    (4, &["S3", "RAM", "MEM", "SUSPEND", "3"]),
    (8, &["S4", "DISK", "HIBERNATE", "4"]),
    (16, &["S5", "SHUTDOWN", "OFF", "5"]),
];

/// The sleep state this slot's HIBERNATE asks for, as (level, name):
/// level 0 for NONE; `None` when HIBERNATE does not evaluate to a known
/// state (then the machine does not hibernate).
pub fn hibernate_state(slot: &Slot, ctx: &Ctx<'_>) -> Option<(u32, String)> {
    let w = Work::new(slot, ctx);
    let name = match w.eval("HIBERNATE", w.job().as_ref()) {
        Value::Str(s) => s.to_string_lossy(),
        Value::Int(i) => i.to_string(),
        _ => return None,
    };
    let upper = name.trim().to_ascii_uppercase();
    SLEEP_STATES
        .iter()
        .find(|(_, names)| names.contains(&upper.as_str()))
        .map(|(level, _)| (*level, upper))
}
