//! HTCondor's `eval_policy`, one state at a time: what moves a slot out
//! of Owner, Unclaimed, Matched, Backfill, Drained, Claimed and
//! Preempting when its policy is evaluated, and the moves into and out of
//! Backfill and Preempting that several inputs share.

use super::super::slot::{Activity, EndCause, SlotEvent, SlotKind, State};
use super::ad::match_expires;
use super::work::{Work, int_of};
use super::{DrainHow, Effect, Transition};

impl Work<'_, '_> {
    /// Backfill/Idle with the client gone: where the slot goes next, if
    /// anywhere — to its claim (31), to Matched (32), or to Owner (30)
    /// when it is being evicted, vacated or drained. False when the slot
    /// stays (the client exited on its own and is started again).
    pub(super) fn leave_backfill(&mut self) -> bool {
        if self.s.claim.is_some() {
            self.go(Transition::BackfillToClaimed, "claimed during backfill");
        } else if self.s.matched_at.is_some() {
            self.go(Transition::BackfillToMatched, "matched during backfill");
        } else if self.s.backfill_ending || self.ctx.drain.is_some() {
            self.go(Transition::BackfillToOwner, "backfill ended");
        } else if !self.ctx.policy.enable_backfill {
            self.go(Transition::BackfillToOwner, "ENABLE_BACKFILL");
        } else if self.knob("EVICT_BACKFILL", false) == Some(true) {
            self.go(Transition::BackfillToOwner, "EVICT_BACKFILL");
        } else {
            return false;
        }
        true
    }

    /// The slot must leave Backfill: kill the client (28), or go at once
    /// when it is not running.
    pub(super) fn end_backfill(&mut self, ending: bool, why: &str) {
        if ending && !self.s.backfill_ending {
            self.emit(SlotEvent::BackfillEnding { at: self.ctx.now });
        }
        match self.s.activity {
            Activity::Busy => self.go(Transition::BackfillBusyToKilling, why),
            Activity::Idle => {
                self.leave_backfill();
            }
            _ => {}
        }
    }

    pub(super) fn begin_preempting(&mut self, transition: Transition, why: &str) {
        let vacate = self.knob("WANT_VACATE", true).unwrap_or(true);
        let act = if vacate {
            Activity::Vacating
        } else {
            Activity::Killing
        };
        self.change(State::Preempting, act, transition, why);
    }

    /// The claim is gone (its starter, if any, has exited): end it, run
    /// EVICT_CLAIM for a fetch claim, and go to Owner, or to Claimed/Idle
    /// when a better claim waits.
    pub(super) fn leave_preempting(&mut self) {
        let from = self.s.activity;
        let cause = self
            .s
            .claim
            .as_ref()
            .and_then(|c| c.ending)
            .unwrap_or(EndCause::Policy);
        if let Some(c) = self.s.claim.clone()
            && c.fetched
        {
            self.effect(Effect::EvictClaim {
                job: c.job,
                claim: c.id,
            });
        }
        self.emit(SlotEvent::ClaimEnded {
            at: self.ctx.now,
            cause,
        });
        if self.s.claim.is_some() {
            let t = if from == Activity::Killing {
                Transition::KillingToClaimed
            } else {
                Transition::VacatingToClaimed
            };
            self.go(t, "waiting claim takes over");
        } else {
            let t = if from == Activity::Killing {
                Transition::KillingToOwner
            } else {
                Transition::VacatingToOwner
            };
            self.go(t, "claim ended");
        }
    }

    /// One step of HTCondor's `eval_policy`; true if something changed.
    fn step(&mut self) -> bool {
        let (state, act) = (self.s.state, self.s.activity);
        if matches!(self.s.kind, SlotKind::Dynamic { .. })
            && matches!(state, State::Owner | State::Unclaimed)
        {
            // An unused dynamic slot goes away (after a running fetch).
            if !self.s.fetching && !self.s.deleted {
                self.emit(SlotEvent::SlotDeleted { at: self.ctx.now });
            }
            return false;
        }
        match state {
            State::Owner | State::Unclaimed if self.ctx.drain.is_some_and(|d| !d.shutdown) => {
                let t = if state == State::Owner {
                    Transition::OwnerToDrained
                } else {
                    Transition::UnclaimedToDrained
                };
                self.go(t, "draining");
                return true;
            }
            State::Drained => match self.ctx.drain {
                None => {
                    let t = if act == Activity::Idle {
                        Transition::DrainedIdleToOwner
                    } else {
                        Transition::DrainedRetiringToOwner
                    };
                    self.go(t, "draining ended");
                    return true;
                }
                Some(d) if d.all_drained && act == Activity::Retiring => {
                    self.go(Transition::DrainedRetiringToIdle, "all slots drained");
                    return true;
                }
                _ => {}
            },
            // Benchmarks run to their end (transition 4 on BenchmarksDone).
            State::Unclaimed if act == Activity::Benchmarking => return false,
            State::Owner
                if (self.knob("IS_OWNER", false) == Some(false)
                    || self.knob("IS_OWNER", false).is_none()) =>
            {
                self.go(Transition::OwnerToUnclaimed, "IS_OWNER");
                return true;
            }
            State::Unclaimed if self.knob("IS_OWNER", false) == Some(true) => {
                self.go(Transition::UnclaimedToOwner, "IS_OWNER");
                return true;
            }
            // Not while FETCH_WORK runs: its job must find the slot Idle.
            State::Unclaimed
                if act == Activity::Idle
                    && !self.s.fetching
                    && self.knob("RunBenchmarks", false) == Some(true) =>
            {
                self.go(Transition::IdleToBenchmarking, "RunBenchmarks");
                self.effect(Effect::RunBenchmarks);
                return true;
            }
            State::Unclaimed
                if act == Activity::Idle
                    && self.ctx.policy.enable_backfill
                    && !self.s.fetching
                    && self.ctx.drain.is_none()
                    && self.knob("START_BACKFILL", false) == Some(true) =>
            {
                self.go(Transition::UnclaimedToBackfill, "START_BACKFILL");
                return true;
            }
            State::Backfill if act == Activity::Busy => {
                if let Some(d) = self.ctx.drain {
                    let why = if d.shutdown { "shutdown" } else { "draining" };
                    self.end_backfill(true, why);
                    return true;
                }
                if self.knob("EVICT_BACKFILL", false) == Some(true) {
                    self.end_backfill(true, "EVICT_BACKFILL");
                    return true;
                }
                // A reconfiguration turned backfill off.
                if !self.ctx.policy.enable_backfill {
                    self.end_backfill(true, "ENABLE_BACKFILL");
                    return true;
                }
            }
            State::Backfill if act == Activity::Idle => return self.leave_backfill(),
            State::Matched => {
                if self.knob("START", false) == Some(false) {
                    self.go(Transition::MatchedToOwner, "START");
                    return true;
                }
                if self.ctx.now >= match_expires(&self.s, self.ctx.policy) {
                    self.go(Transition::MatchedToOwner, "MATCH_TIMEOUT");
                    return true;
                }
            }
            State::Claimed => return self.step_claimed(act),
            State::Preempting => {
                if act == Activity::Vacating {
                    if self.knob("KILL", true) == Some(true) {
                        self.go(Transition::VacatingToKilling, "KILL");
                        return true;
                    }
                    if self.vacate_time_over() {
                        self.go(Transition::VacatingToKilling, "MachineMaxVacateTime");
                        return true;
                    }
                } else if act == Activity::Killing
                    && self.s.starter
                    && self.ctx.now - self.s.entered_activity >= self.ctx.policy.killing_timeout
                {
                    self.effect(Effect::KillStarter);
                }
            }
            _ => {}
        }
        false
    }

    /// Whether the vacate time Vacating began with (retirement borrowed
    /// then) is over: the manual's hard kill "will not happen until the end
    /// of the retirement time".
    fn vacate_time_over(&self) -> bool {
        let began = self.s.entered_activity;
        self.ctx.now - began >= self.max_vacate_at(began)
    }

    /// Claimed: the claimant gone, a drain, the running job's policy, or
    /// the end of an idle claim.
    fn step_claimed(&mut self, act: Activity) -> bool {
        self.claimant_gone(act)
            || self.drain_claim()
            || self.step_running(act)
            || (act == Activity::Idle && !self.s.starter && self.idle_claim_ends())
    }

    /// A claim or a waiting claim whose lease ran out.
    fn claimant_gone(&mut self, act: Activity) -> bool {
        if let Some(c) = &self.s.claim
            && c.ending != Some(EndCause::LeaseExpired)
            && c.lease_end().is_some_and(|end| self.ctx.now >= end)
        {
            // HTCondor's `Claim::leaseExpired`: the claimant is gone, so
            // nobody would collect the job's result; kill it at once.
            self.end_claim(EndCause::LeaseExpired);
            let t = if act == Activity::Idle {
                Transition::ClaimedToPreempting
            } else {
                Transition::Unnumbered
            };
            self.kill_now(t, "claim lease expired");
            return true;
        }
        // A waiting claim whose claimant is gone is given up, as HTCondor
        // removes a preempting claim whose match or lease ran out; a job
        // that was retiring for it may then run on (19).
        if let Some(p) = &self.s.preempting
            && p.lease_end().is_some_and(|end| self.ctx.now >= end)
        {
            self.emit(SlotEvent::PreemptingClaimDropped { at: self.ctx.now });
            return true;
        }
        false
    }

    /// A drain ends every claim: a fast one kills the job, the others let
    /// it retire.
    fn drain_claim(&mut self) -> bool {
        let Some(d) = self.ctx.drain else {
            return false;
        };
        if self.s.claim.as_ref().is_none_or(|c| c.ending.is_some()) {
            return false;
        }
        self.end_claim(EndCause::Shutdown);
        if d.how == DrainHow::Fast && self.s.starter {
            self.kill_now(Transition::Unnumbered, "drain fast");
            return true;
        }
        self.retire("draining")
    }

    /// The running (or suspended, or retiring) job's policy: retirement
    /// running out, PREEMPT, SUSPEND, CONTINUE, a better claim.
    fn step_running(&mut self, act: Activity) -> bool {
        if self.in_retirement() && self.s.starter && self.retirement_expired() {
            if act == Activity::Busy {
                // "When an active claim is about to be preempted for any
                // reason, it enters retirement" (13); Preempting (18)
                // follows at once when no retirement time is left.
                let why = if self.s.preempting.is_some() {
                    if self.s.claim.as_ref().is_some_and(|c| c.ending.is_none()) {
                        self.end_claim(EndCause::BetterClaim);
                    }
                    "better claim waiting"
                } else {
                    "claim ending"
                };
                self.go(Transition::BusyToRetiring, why);
                return true;
            }
            let t = match act {
                Activity::Suspended => Transition::SuspendedToPreempting,
                Activity::Retiring => Transition::RetiringToPreempting,
                _ => Transition::Unnumbered,
            };
            self.begin_preempting(t, "retirement expired");
            return true;
        }
        let want_suspend = self.knob("WANT_SUSPEND", true) == Some(true);
        let preempted = self.preempt_was_true();
        if ((act == Activity::Busy && !want_suspend)
            || (act == Activity::Retiring && !preempted && !want_suspend)
            || (act == Activity::Suspended && !preempted))
            && self.knob("PREEMPT", true) == Some(true)
        {
            self.end_claim(EndCause::Preempt);
            self.retire("PREEMPT");
            return true;
        }
        if act == Activity::Retiring && self.s.preempting.is_none() {
            // The cause of the retirement went away: "the normal
            // Claimed/Busy state is resumed" (19), under the same claim.
            let why = match self.s.claim.as_ref().and_then(|c| c.ending) {
                Some(EndCause::BetterClaim) => Some("better claim went away"),
                Some(EndCause::Shutdown) if self.ctx.drain.is_none() => Some("drain cancelled"),
                _ => None,
            };
            if let Some(why) = why {
                self.emit(SlotEvent::ClaimEndingCancelled { at: self.ctx.now });
                self.go(Transition::RetiringToBusy, why);
                return true;
            }
        }
        if matches!(act, Activity::Busy | Activity::Retiring)
            && want_suspend
            && self.knob("SUSPEND", true) == Some(true)
        {
            let t = if act == Activity::Busy {
                Transition::BusyToSuspended
            } else {
                Transition::RetiringToSuspended
            };
            self.go(t, "SUSPEND");
            return true;
        }
        if act == Activity::Suspended && self.knob("CONTINUE", true) == Some(true) {
            if self.in_retirement() {
                self.go(Transition::SuspendedToRetiring, "CONTINUE");
            } else {
                self.go(Transition::SuspendedToBusy, "CONTINUE");
            }
            return true;
        }
        if act == Activity::Busy && self.s.preempting.is_some() {
            if self.s.claim.as_ref().is_some_and(|c| c.ending.is_none()) {
                self.end_claim(EndCause::BetterClaim);
            }
            self.go(Transition::BusyToRetiring, "better claim waiting");
            return true;
        }
        false
    }

    /// Claimed/Idle without a starter: whether the claim ends now (a
    /// better claim waits, it was told to end, START or CLAIM_WORKLIFE).
    fn idle_claim_ends(&mut self) -> bool {
        if self.s.preempting.is_some() {
            self.end_claim(EndCause::BetterClaim);
            self.begin_preempting(Transition::ClaimedToPreempting, "better claim waiting");
            return true;
        }
        if let Some(cause) = self.s.claim.as_ref().and_then(|c| c.ending) {
            self.begin_preempting(
                Transition::ClaimedToPreempting,
                match cause {
                    EndCause::NoMoreWork => "no more work",
                    EndCause::Vacate => "vacate",
                    _ => "claim ending",
                },
            );
            return true;
        }
        if self.knob("START", false) == Some(false) {
            self.end_claim(EndCause::Policy);
            self.begin_preempting(Transition::ClaimedToPreempting, "START");
            return true;
        }
        let worklife = int_of(&self.eval("CLAIM_WORKLIFE", None)).unwrap_or(-1);
        if let Some(c) = &self.s.claim
            && c.activations > 0
            && worklife >= 0
            && self.ctx.now - c.created > worklife
        {
            self.end_claim(EndCause::Policy);
            self.begin_preempting(Transition::ClaimedToPreempting, "CLAIM_WORKLIFE");
            return true;
        }
        false
    }

    /// Runs policy steps until nothing changes.
    pub(super) fn settle(&mut self) {
        for _ in 0..16 {
            if !self.step() {
                break;
            }
        }
    }
}
