//! The slot ad a policy is evaluated in, and the cache a shell keeps for
//! it: a slot's ad is rebuilt in place at every evaluation from the
//! policy's knobs, the machine's attributes and the slot's state, and the
//! job ads its claims carry are parsed once.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::classad::{ClassAd, Expr, Name, Value, parse_ad};

use super::super::publish::{fill, publish_claim, retirement_names};
use super::super::slot::{Slot, State};
use super::work::Work;
use super::{Ctx, Policy};

/// One slot's cache, owned by its shell (the slot actor, the simulator's
/// slot) and lent to every decision in [`Ctx::cache`]. It only saves
/// work: a decision made with a fresh cache is the same decision. It
/// follows the policy it is used with (a reconfigured slot's new policy
/// starts it again), so it never needs clearing.
#[derive(Debug, Default)]
pub struct AdCache {
    ad: RefCell<Filled>,
    /// Parsed job ads by text, so a running job is not parsed at every
    /// evaluation (at most [`JOB_CACHE`]; cleared when full).
    jobs: RefCell<HashMap<String, ClassAd>>,
}

/// The slot ad as the last `slot_ad` left it, and what it was built from:
/// the policy's template and the machine ad (kept, so compared by
/// identity: a changed one is a new one), and whether its Requirements is
/// the policy's own.
#[derive(Debug, Default)]
struct Filled {
    template: Option<ClassAd>,
    ad: ClassAd,
    machine: Option<ClassAd>,
    own_requirements: bool,
    /// The claim whose attributes the ad holds (its id, its job's start
    /// and its job; `Some(None)`: no claim).
    claim: Option<Option<(u64, Option<i64>, String)>>,
}

/// How many parsed job ads a slot keeps. A slot evaluates its claim's job
/// and at most a waiting claim's, so a few suffice; every job a slot ever
/// ran is a different text, and a cache of thousands held megabytes per
/// slot of jobs long gone.
const JOB_CACHE: usize = 8;

impl AdCache {
    /// The job ad of a claim, parsed once (`None` when it does not parse).
    pub(crate) fn job_ad(&self, text: &str) -> Option<ClassAd> {
        if let Some(ad) = self.jobs.borrow().get(text) {
            return Some(ad.clone());
        }
        let ad = parse_ad(text).ok()?;
        let mut cache = self.jobs.borrow_mut();
        if cache.len() >= JOB_CACHE {
            cache.clear();
        }
        cache.insert(text.to_string(), ad.clone());
        Some(ad)
    }
}

/// The slot ad a policy is evaluated in: the policy's knobs and
/// `STARTD_ATTRS`, the machine's attributes (with its cron jobs' ads)
/// over them, and over those every attribute the slot publishes
/// ([`fill`]), `Requirements`, `RetirementTimeRemaining` and
/// `NextFetchWorkDelay`: what the slot publishes, its policy sees.
pub fn slot_ad(slot: &Slot, ctx: &Ctx<'_>) -> ClassAd {
    // The cache keeps one ad with the knobs bound; each call overwrites
    // the slot's dynamic attributes in place (nothing is copied unless a
    // caller still holds the last clone) and hands out a shared clone. What has
    // not changed since the last call (the machine's attributes, strings,
    // Requirements) is not copied in again.
    let mut filled = ctx.cache.ad.borrow_mut();
    let filled = &mut *filled;
    let new_machine = !(filled.machine.as_ref()).is_some_and(|m| ClassAd::ptr_eq(m, ctx.machine));
    // A machine attribute gone (a cron job's ad replaced by one without
    // it) must leave the slot ad too: start again.
    let machine_shrank = new_machine
        && (filled.machine.as_ref())
            .is_some_and(|old| old.iter().any(|(n, _)| ctx.machine.get(n).is_none()));
    if machine_shrank
        || !(filled.template.as_ref()).is_some_and(|t| ClassAd::ptr_eq(t, &ctx.policy.template))
    {
        // A new policy (or a new cache): start again from its knobs.
        *filled = Filled {
            template: Some(ctx.policy.template.clone()),
            ad: ctx.policy.template.clone(),
            machine: None,
            own_requirements: false,
            claim: None,
        };
    }
    let ad = &mut filled.ad;
    if !(filled.machine.as_ref()).is_some_and(|m| ClassAd::ptr_eq(m, ctx.machine)) {
        for (name, e) in ctx.machine.iter() {
            ad.insert(name.clone(), e.clone());
        }
        filled.machine = Some(ctx.machine.clone());
        // Whatever the machine ad bound is bound again below.
        filled.own_requirements = false;
        filled.claim = None;
    }
    let requirements = &*REQUIREMENTS;
    // Everything the slot publishes, as its public ad has it; its claim's
    // attributes again only when the claim (or its job's start) changed.
    fill(ad, slot, ctx);
    let same_claim = filled
        .claim
        .as_ref()
        .is_some_and(|held| match (held, slot.claim.as_ref()) {
            (None, None) => true,
            (Some((id, start, job)), Some(c)) => {
                *id == c.id && *start == c.job_start && *job == c.job
            }
            _ => false,
        });
    if !same_claim {
        publish_claim(ad, slot.claim.as_ref(), ctx);
        filled.claim = Some(
            slot.claim
                .as_ref()
                .map(|c| (c.id, c.job_start, c.job.clone())),
        );
    }
    // While draining, the draining START expression stands in for START in
    // Requirements (HTCondor leaves START itself alone, so drained slots
    // still fetch, and reject what they get).
    if matches!(
        slot.state,
        State::Matched | State::Preempting | State::Drained
    ) {
        ad.insert_value(requirements.clone(), false);
        filled.own_requirements = false;
    } else if ctx.drain.is_some() || !filled.own_requirements {
        ad.insert(requirements.clone(), self::requirements(ctx).clone());
        filled.own_requirements = ctx.drain.is_none();
    }
    // Last, what the policy's own knobs give, evaluated in the ad as it
    // now is (their last values left out, so that a fresh cache gives the
    // same ones).
    let (retirement, fetch_delay) = retirement_names();
    ad.insert_value(retirement.clone(), Value::Undefined);
    let fetches = ctx.policy.keyword.as_deref().is_some_and(|k| !k.is_empty());
    if fetches {
        ad.insert_value(fetch_delay.clone(), Value::Undefined);
    }
    let (remaining, delay) = {
        let w = Work::over(slot, ctx, ad.clone());
        (w.retirement_remaining(), fetches.then(|| w.fetch_delay()))
    };
    ad.insert_value(retirement.clone(), remaining);
    if let Some(d) = delay {
        ad.insert_value(fetch_delay.clone(), d);
    }
    ad.clone()
}

/// The slot's Requirements when it is willing to be matched: the
/// draining START expression's while draining, else `START &&
/// WithinResourceLimits`.
pub(super) fn requirements<'a>(ctx: &'a Ctx<'_>) -> &'a Expr {
    match ctx.drain {
        Some(d) => &d.requirements,
        None => &ctx.policy.requirements,
    }
}

/// When a Matched slot gives up waiting for its claimant: MATCH_TIMEOUT
/// after the match.
pub(super) fn match_expires(slot: &Slot, policy: &Policy) -> i64 {
    slot.matched_at.unwrap_or(slot.entered_state) + policy.match_timeout
}

/// `Requirements`, interned once.
static REQUIREMENTS: std::sync::LazyLock<Name> =
    std::sync::LazyLock::new(|| Name::new("Requirements"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::FixedEnv;

    #[test]
    fn the_job_cache_stays_small_whatever_a_slot_has_run() {
        let cache = AdCache::default();
        for i in 0..1000 {
            let text = format!("[ Cmd = \"/bin/true\"; BenchJob = \"t{i}\" ]");
            let ad = cache.job_ad(&text).expect("job parses");
            let name = ad.eval_attr("BenchJob", &FixedEnv::new(0));
            assert_eq!(
                name.as_str().map(|s| s.to_string_lossy()),
                Some(format!("t{i}"))
            );
            assert!(
                cache.jobs.borrow().len() <= 16,
                "a slot keeps a handful of job ads"
            );
        }
        // The running job's ad is served from the cache.
        let text = "[ Cmd = \"/bin/true\"; BenchJob = \"t999\" ]";
        assert!(cache.jobs.borrow().contains_key(text));
    }
}
