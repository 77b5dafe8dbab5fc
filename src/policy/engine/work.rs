//! The working copy a decision builds on: the slot as its events leave
//! it (each event applied as it is produced, so later steps see it), the
//! decision so far, and what every step asks of it — the slot ad, the
//! claim's job, a knob's value, retirement left — plus the moves every
//! state shares: changing state, spawning a starter, ending a claim.

use std::borrow::Cow;
use std::cell::RefCell;

use crate::classad::{ClassAd, Evaluator, FixedEnv, Name, Value};

use super::super::slot::{Activity, EndCause, Slot, SlotEvent, SlotKind, State, apply};
use super::{Ctx, Decision, DrainHow, Effect, Transition, slot_ad};

/// A working copy: events are applied as they are produced, so later
/// steps of the same decision see their effect.
pub(super) struct Work<'c, 'a> {
    /// The slot as the decision's events leave it: borrowed until the
    /// first event, so a query or a decision that changes nothing copies
    /// nothing.
    pub(super) s: Cow<'c, Slot>,
    pub(super) ctx: &'c Ctx<'a>,
    pub(super) out: Decision,
    /// The slot ad and the parsed job, built once until an event changes
    /// the slot.
    ad: RefCell<Option<ClassAd>>,
    job_ad: RefCell<Option<Option<ClassAd>>>,
}

pub(super) fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Int(i) => Some(*i != 0),
        Value::Real(r) => Some(*r != 0.0),
        _ => None,
    }
}

pub(super) fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        #[allow(clippy::cast_possible_truncation)]
        Value::Real(r) if r.is_finite() => Some(*r as i64),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

pub(super) fn is_vanilla(job: &ClassAd, env: &FixedEnv) -> bool {
    match job.eval_attr("JobUniverse", env) {
        Value::Int(u) => u == 5,
        _ => true,
    }
}

impl<'c, 'a> Work<'c, 'a> {
    pub(super) fn new(slot: &'c Slot, ctx: &'c Ctx<'a>) -> Self {
        Work {
            s: Cow::Borrowed(slot),
            ctx,
            out: Decision::default(),
            ad: RefCell::new(None),
            job_ad: RefCell::new(None),
        }
    }

    /// A working copy whose slot ad is `ad` until its first event: the
    /// policy's ad asks its own knobs while it is being filled.
    pub(super) fn over(slot: &'c Slot, ctx: &'c Ctx<'a>, ad: ClassAd) -> Self {
        let w = Work::new(slot, ctx);
        w.ad.replace(Some(ad));
        w
    }

    pub(super) fn emit(&mut self, e: SlotEvent) {
        apply(self.s.to_mut(), &e);
        self.out.events.push(e);
        self.ad.replace(None);
        self.job_ad.replace(None);
    }

    /// The slot ad (ClassAds are shared on clone, so this is cheap).
    pub(super) fn ad(&self) -> ClassAd {
        if let Some(a) = &*self.ad.borrow() {
            return a.clone();
        }
        let a = slot_ad(&self.s, self.ctx);
        self.ad.replace(Some(a.clone()));
        a
    }

    pub(super) fn effect(&mut self, e: Effect) {
        self.out.effects.push(e);
    }

    pub(super) fn job(&self) -> Option<ClassAd> {
        if let Some(j) = &*self.job_ad.borrow() {
            return j.clone();
        }
        let j = self
            .s
            .claim
            .as_ref()
            .and_then(|c| self.ctx.cache.job_ad(&c.job));
        self.job_ad.replace(Some(j.clone()));
        j
    }

    /// Evaluates a slot-ad attribute with the current job as TARGET.
    pub(super) fn eval(&self, name: &str, job: Option<&ClassAd>) -> Value {
        let ad = self.ad();
        let env = FixedEnv::new(self.ctx.now);
        Evaluator::new(Some(&ad), job, &env).eval_attr(&Name::new(name))
    }

    /// A boolean knob, trying `<NAME>_VANILLA` first for vanilla jobs;
    /// `None` when neither evaluates to a boolean.
    pub(super) fn knob(&self, name: &str, with_vanilla: bool) -> Option<bool> {
        let job = self.job();
        let env = FixedEnv::new(self.ctx.now);
        if with_vanilla
            && job.as_ref().is_some_and(|j| is_vanilla(j, &env))
            && let Some(b) = truth(&self.eval(&format!("{name}_VANILLA"), job.as_ref()))
        {
            return Some(b);
        }
        truth(&self.eval(name, job.as_ref()))
    }

    /// Moves along the manual's numbered arrow `t` to where it leads (an
    /// arrow into Preempting goes through `begin_preempting`, which picks
    /// Vacating or Killing).
    pub(super) fn go(&mut self, t: Transition, why: &str) {
        match t.target() {
            Some((state, activity)) => self.change(state, activity, t, why),
            None => debug_assert!(false, "transition {t} has no fixed target"),
        }
    }

    /// Claimed/Busy or Claimed/Suspended into Retiring (13 or 16): the
    /// job may finish within its retirement time. True if it moved.
    pub(super) fn retire(&mut self, why: &str) -> bool {
        let t = match self.s.activity {
            Activity::Busy => Transition::BusyToRetiring,
            Activity::Suspended => Transition::SuspendedToRetiring,
            _ => return false,
        };
        self.go(t, why);
        true
    }

    /// Straight to Preempting/Killing, an arrow the manual does not number
    /// (a fast drain or vacate, a lease that ran out while the job ran).
    pub(super) fn kill_now(&mut self, t: Transition, why: &str) {
        self.change(State::Preempting, Activity::Killing, t, why);
    }

    pub(super) fn change(
        &mut self,
        state: State,
        activity: Activity,
        transition: Transition,
        why: &str,
    ) {
        let was = (self.s.state, self.s.activity);
        self.emit(SlotEvent::ActivityChanged {
            at: self.ctx.now,
            state,
            activity,
            transition,
            why: why.to_string(),
        });
        if was.1 == Activity::Suspended
            && activity != Activity::Suspended
            && state == State::Claimed
        {
            self.emit(SlotEvent::JobContinued { at: self.ctx.now });
            self.effect(Effect::Continue);
        }
        self.enter(was.0 != state, was);
    }

    /// What entering the new state and activity sets off.
    pub(super) fn enter(&mut self, state_changed: bool, was: (State, Activity)) {
        match (self.s.state, self.s.activity) {
            (State::Claimed, Activity::Idle) => {
                let fetched = self
                    .s
                    .claim
                    .as_ref()
                    .is_some_and(|c| c.fetched && c.ending.is_none());
                if fetched
                    && (state_changed
                        || was.0 == State::Claimed && !self.s.starter && was.1 == Activity::Idle)
                {
                    self.spawn();
                }
            }
            (State::Claimed, Activity::Busy) if self.in_retirement() => {
                self.go(Transition::BusyToRetiring, "better claim waiting");
            }
            (State::Claimed, Activity::Suspended) => {
                self.emit(SlotEvent::JobSuspended { at: self.ctx.now });
                self.effect(Effect::Suspend);
            }
            (State::Preempting, Activity::Vacating) => {
                if self.s.starter {
                    self.effect(Effect::SoftKill);
                } else {
                    self.leave_preempting();
                }
            }
            (State::Preempting, Activity::Killing) => {
                if self.s.starter {
                    self.effect(Effect::HardKill);
                } else {
                    self.leave_preempting();
                }
            }
            (State::Backfill, Activity::Idle) => {
                // Unless the slot leaves, the client is (re)started.
                let stays = !self.leave_backfill();
                if stays {
                    self.effect(Effect::StartBackfill);
                }
            }
            (State::Backfill, Activity::Killing) => {
                if self.s.backfill {
                    self.effect(Effect::KillBackfill);
                } else {
                    self.go(Transition::BackfillKillingToIdle, "backfill client gone");
                }
            }
            (State::Owner, _) => {
                if self.s.preempting.is_some() {
                    // Never drop a waiting claim silently: evict it.
                    if let Some(c) = self.s.preempting.clone() {
                        self.effect(Effect::EvictClaim {
                            job: c.job,
                            claim: c.id,
                        });
                    }
                }
                if !matches!(self.s.kind, SlotKind::Dynamic { .. })
                    && self.knob("IS_OWNER", false) != Some(true)
                {
                    self.go(Transition::OwnerToUnclaimed, "IS_OWNER");
                }
            }
            _ => {}
        }
    }

    pub(super) fn spawn(&mut self) {
        let Some(c) = self.s.claim.clone() else {
            return;
        };
        let pledged = self.eval("MachineMaxVacateTime", self.job().as_ref());
        self.emit(SlotEvent::JobStarted {
            at: self.ctx.now,
            pledged_vacate: int_of(&pledged).unwrap_or(600).max(0),
        });
        self.effect(Effect::SpawnStarter { job: c.job });
        self.go(Transition::IdleToBusy, "starter spawned");
    }

    pub(super) fn in_retirement(&self) -> bool {
        self.s.preempting.is_some() || self.s.claim.as_ref().is_some_and(|c| c.ending.is_some())
    }

    pub(super) fn preempt_was_true(&self) -> bool {
        self.s.claim.as_ref().is_some_and(|c| {
            matches!(
                c.ending,
                Some(EndCause::Preempt | EndCause::Vacate | EndCause::Shutdown)
            )
        })
    }

    /// Seconds of retirement left for the running job (0 without one).
    pub(super) fn retirement_remaining(&self) -> i64 {
        self.retirement_remaining_at(self.ctx.now)
    }

    /// [`Work::retirement_remaining`] as it was at `at` (the policy's
    /// expressions as they are now).
    fn retirement_remaining_at(&self, at: i64) -> i64 {
        if self
            .ctx
            .drain
            .is_some_and(|d| matches!(d.how, DrainHow::Quick | DrainHow::Fast))
        {
            return 0;
        }
        let Some(c) = &self.s.claim else { return 0 };
        let Some(start) = c.job_start else { return 0 };
        let job = self.job();
        let env = FixedEnv::new(self.ctx.now);
        let mut mjrt = int_of(&self.eval("MaxJobRetirementTime", job.as_ref())).unwrap_or(0);
        if self.ctx.drain.is_some_and(|d| d.how == DrainHow::Peaceful) && mjrt != -1 {
            // A peaceful shutdown waits for the job, however long.
            mjrt = i64::from(i32::MAX);
        }
        if let Some(j) = &job
            && j.contains("MaxJobRetirementTime")
        {
            let ad = self.ad();
            let v = Evaluator::new(Some(j), Some(&ad), &env)
                .eval_attr(&Name::new("MaxJobRetirementTime"));
            if let Some(jv) = int_of(&v) {
                mjrt = mjrt.min(jv);
            }
        }
        let suspended = c.suspended_total + c.suspended_since.map_or(0, |s| (at - s).max(0));
        let age = at - start - suspended;
        (mjrt - age).max(0)
    }

    /// MachineMaxVacateTime as pledged, lowered by the job's
    /// JobMaxVacateTime or raised by borrowing retirement time.
    pub(super) fn max_vacate(&self) -> i64 {
        self.max_vacate_at(self.ctx.now)
    }

    /// [`Work::max_vacate`] with the retirement left at `at`: a vacate
    /// that began at `at` borrowed what was left then, so the hard kill
    /// comes no earlier than the end of the retirement time.
    pub(super) fn max_vacate_at(&self, at: i64) -> i64 {
        let Some(c) = &self.s.claim else { return 0 };
        let machine = c.pledged_vacate;
        let Some(job) = self.job() else {
            return machine;
        };
        let env = FixedEnv::new(self.ctx.now);
        let ad = self.ad();
        let name = if job.contains("JobMaxVacateTime") {
            "JobMaxVacateTime"
        } else if job.contains("KillSigTimeout") {
            "KillSigTimeout"
        } else {
            return machine;
        };
        let wanted =
            int_of(&Evaluator::new(Some(&job), Some(&ad), &env).eval_attr(&Name::new(name)))
                .unwrap_or(0);
        if wanted <= machine {
            return wanted;
        }
        let remaining = self.retirement_remaining_at(at);
        if remaining >= wanted {
            wanted
        } else if remaining > machine {
            remaining
        } else {
            machine
        }
    }

    pub(super) fn retirement_expired(&self) -> bool {
        let remaining = self.retirement_remaining();
        remaining <= 0 || self.max_vacate() >= remaining
    }

    pub(super) fn end_claim(&mut self, cause: EndCause) {
        self.emit(SlotEvent::ClaimEnding {
            at: self.ctx.now,
            cause,
        });
    }
}
