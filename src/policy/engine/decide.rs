//! `decide`: each input's handling. Timers and hook answers settle the
//! policy (`states`) and may fetch (`fetch`); commands, matches, claim
//! requests, the starter's and the backfill client's news move the slot
//! as HTCondor's startd does on the same news.

use super::super::slot::{Activity, EndCause, Slot, SlotEvent, State};
use super::work::Work;
use super::{Ctx, Decision, Effect, Input, Transition};

/// Decides what `slot` does on `input`. Pure: the same arguments always
/// give the same decision.
pub fn decide(slot: &Slot, ctx: &Ctx<'_>, input: &Input) -> Decision {
    let mut w = Work::new(slot, ctx);
    if slot.deleted {
        return w.out;
    }
    match input {
        Input::RequestClaim(text) => {
            w.offered_job(text, false);
            w.settle();
        }
        Input::Activate => w.activate(),
        Input::Match(_) => w.matched(),
        Input::Alive => {
            let leased = [&w.s.claim, &w.s.preempting]
                .into_iter()
                .flatten()
                .any(|c| c.lease.is_some());
            if leased {
                w.emit(SlotEvent::ClaimAlive { at: ctx.now });
            }
        }
        Input::BackfillStarted => w.backfill_started(),
        Input::BackfillExited => w.backfill_exited(),
        Input::Claimed(claim) => {
            w.emit(SlotEvent::ClaimCreated {
                at: ctx.now,
                claim: claim.clone(),
            });
            w.change(
                State::Claimed,
                Activity::Idle,
                Transition::Unnumbered,
                "dynamic slot created for a fetched job",
            );
            w.settle();
        }
        Input::ChildDeleted { sub, resources } => {
            w.emit(SlotEvent::DynamicSlotReturned {
                at: ctx.now,
                sub: *sub,
                resources: resources.clone(),
            });
        }
        Input::Evaluate => {
            w.settle();
            w.try_fetch();
        }
        Input::AdChanged => w.settle(),
        Input::FetchTimer => w.try_fetch(),
        Input::WorkFound(by) => w.try_fetch_for(Some(by.as_str())),
        Input::FetchFailed => {
            w.emit(SlotEvent::FetchCompleted { at: ctx.now });
        }
        Input::FetchedNothing => {
            w.emit(SlotEvent::FetchCompleted { at: ctx.now });
            let idle_fetch_claim = w.s.state == State::Claimed
                && w.s.activity == Activity::Idle
                && w.s
                    .claim
                    .as_ref()
                    .is_some_and(|c| c.fetched && c.ending.is_none());
            if idle_fetch_claim {
                w.end_claim(EndCause::NoMoreWork);
            }
            w.settle();
        }
        Input::FetchedJob(text) => {
            w.emit(SlotEvent::FetchCompleted { at: ctx.now });
            w.offered_job(text, true);
            w.settle();
        }
        Input::BenchmarksDone => {
            if w.s.state == State::Unclaimed && w.s.activity == Activity::Benchmarking {
                w.go(Transition::BenchmarkingToIdle, "benchmarks finished");
                w.settle();
                w.try_fetch();
            }
        }
        Input::StarterExited => w.starter_gone(false),
        Input::StarterLost => w.starter_gone(true),
        Input::Vacate => w.vacate(false),
        Input::VacateFast => w.vacate(true),
        Input::JobWithdrawn(why) => w.withdrawn(why),
    }
    w.out
}

impl Work<'_, '_> {
    /// The claimant activates its idle claim: the job starts.
    fn activate(&mut self) {
        let waiting = self.s.state == State::Claimed
            && self.s.activity == Activity::Idle
            && !self.s.starter
            && self
                .s
                .claim
                .as_ref()
                .is_some_and(|c| !c.fetched && c.ending.is_none());
        if waiting {
            self.spawn();
            self.settle();
        }
    }

    /// A negotiator's match: an Unclaimed/Idle slot waits for the
    /// claimant, a Backfill one first sends its client away. Claimed slots
    /// are matched only to be preempted by rank, which the claim request
    /// decides; elsewhere a match is stale.
    fn matched(&mut self) {
        let now = self.ctx.now;
        match (self.s.state, self.s.activity) {
            (State::Unclaimed, Activity::Idle) => {
                self.emit(SlotEvent::MatchReceived { at: now });
                self.go(Transition::UnclaimedToMatched, "matched");
            }
            (State::Backfill, _) if self.s.claim.is_none() && self.s.matched_at.is_none() => {
                self.emit(SlotEvent::MatchReceived { at: now });
                self.end_backfill(false, "matched");
                self.settle();
            }
            _ => {}
        }
    }

    fn backfill_started(&mut self) {
        if self.s.state == State::Backfill && !self.s.backfill {
            self.emit(SlotEvent::BackfillStarted { at: self.ctx.now });
            if self.s.activity == Activity::Idle {
                self.go(Transition::BackfillIdleToBusy, "backfill client running");
            }
            self.settle();
        } else if !self.s.backfill {
            // The slot left Backfill before the client came up.
            self.effect(Effect::KillBackfill);
        }
    }

    fn backfill_exited(&mut self) {
        if !self.s.backfill {
            return;
        }
        self.emit(SlotEvent::BackfillExited { at: self.ctx.now });
        match (self.s.state, self.s.activity) {
            (State::Backfill, Activity::Busy) => {
                self.go(Transition::BackfillBusyToIdle, "backfill client exited")
            }
            (State::Backfill, Activity::Killing) => {
                self.go(Transition::BackfillKillingToIdle, "backfill client gone")
            }
            _ => {}
        }
        self.settle();
    }

    /// The starter exited, or (`lost`) died before running JOB_EXIT: a
    /// claim it ran then ends instead of waiting for more work.
    fn starter_gone(&mut self, lost: bool) {
        if !self.s.starter {
            return;
        }
        self.emit(SlotEvent::StarterExited { at: self.ctx.now });
        match self.s.state {
            State::Claimed if lost => {
                self.end_claim(EndCause::StarterLost);
                self.kill_now(Transition::ClaimedToPreempting, "starter lost");
            }
            State::Claimed => self.go(Transition::BusyToIdle, "starter exited"),
            State::Preempting => self.leave_preempting(),
            _ => {}
        }
        self.settle();
        self.try_fetch();
    }

    /// `condor_vacate`: the job retires (its retirement time honoured),
    /// then is vacated; with `-fast` (`fast`) it is hard-killed at once.
    /// The fetcher withdrew the running job: vacate it now (soft kill,
    /// then the hard kill after `MachineMaxVacateTime`), no retirement.
    fn withdrawn(&mut self, why: &str) {
        let running = self.s.state == State::Claimed
            && self.s.starter
            && matches!(
                self.s.activity,
                Activity::Busy | Activity::Suspended | Activity::Retiring
            );
        if !running {
            return;
        }
        self.end_claim(EndCause::Withdrawn);
        let why = format!("withdrawn by its fetcher: {why}");
        self.begin_preempting(Transition::Unnumbered, &why);
        self.settle();
    }

    fn vacate(&mut self, fast: bool) {
        let why = if fast { "vacate fast" } else { "vacate" };
        match self.s.state {
            State::Claimed => {
                self.end_claim(EndCause::Vacate);
                if !fast {
                    self.retire(why);
                } else if self.s.starter {
                    self.kill_now(Transition::Unnumbered, why);
                }
                self.settle();
            }
            State::Matched => self.go(Transition::MatchedToOwner, why),
            State::Backfill => {
                self.end_backfill(true, why);
                self.settle();
            }
            _ => {}
        }
    }
}
