//! `decide`: what a slot does next, given its state, the policy, the
//! machine and an input (a timer, a hook's answer, a starter's exit, a
//! command). Returns the events to append (then `apply`) and the effects
//! for the shell to carry out. Follows HTCondor's `ResState::eval_policy`
//! and the fetch-work rules (`../shared/reference/htcondor-facts.md` §1,
//! §5); where HTCondor loses a fetched job, Roost keeps it.
//!
//! By concern: the knobs compiled into a [`Policy`] (`knobs`), the slot
//! ad they are evaluated in and the cache the shell keeps for it (`ad`),
//! the working copy a decision builds its events on (`work`), the policy
//! evaluation per state (`states`), fetching and accepting work and
//! carving dynamic slots (`fetch`), each input's handling (`decide`), and
//! the questions a shell asks between decisions: timers, retirement,
//! hibernation (`queries`).

use crate::classad::ClassAd;

pub use super::drain::{Drain, DrainHow, OnCompletion, drain_check};
use super::layout::SlotSpec;
pub use super::slot::Transition;
use super::slot::{Claim, Resources, SlotEvent};

mod ad;
mod decide;
mod fetch;
mod knobs;
mod queries;
mod states;
mod work;

pub use ad::{AdCache, slot_ad};
pub use decide::decide;
pub use knobs::{POLICY_KNOBS, Policy, PolicyError, StartdAttrs, backfill_job};
pub use queries::{
    evaluation_interval, fetch_delay, hibernate_state, next_fetch_at, retirement_remaining,
    wants_news_of_work,
};

/// What the slot is asked to react to.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// The periodic policy evaluation.
    Evaluate,
    /// The machine's attributes changed (a startd cron job published):
    /// the policy is evaluated again at once. Unlike [`Input::Evaluate`]
    /// it starts no fetch: fetches keep their own timers, so a cron job
    /// that publishes to every slot does not make them all poll together.
    AdChanged,
    /// The fetch timer fired.
    FetchTimer,
    /// Another slot with the same hook keyword (named here) has just
    /// fetched a job: there may be more where it came from. The slot
    /// fetches now if every rule of a fetch allows it now — in particular
    /// `FetchWorkDelay`, counted in whole seconds as HTCondor counts it —
    /// rather than at its own point of the second.
    WorkFound(String),
    /// FETCH_WORK printed nothing: no work.
    FetchedNothing,
    /// FETCH_WORK printed a job ad (already parsed; canonical new syntax).
    FetchedJob(String),
    /// FETCH_WORK failed (malformed output, timeout): no state change.
    FetchFailed,
    /// The benchmarks [`Effect::RunBenchmarks`] asked for have finished
    /// (the machine ad now has `LastBenchmark`, `Mips`, `KFlops`).
    BenchmarksDone,
    /// The starter exited.
    StarterExited,
    /// The starter died before running JOB_EXIT; the daemon has killed
    /// what was left of its job. A claim it ran ends (EVICT_CLAIM for a
    /// fetched one) instead of waiting for more work.
    StarterLost,
    /// `condor_vacate` for this slot: the job retires (its retirement
    /// time honoured), then is vacated.
    Vacate,
    /// `condor_vacate -fast`: the job is hard-killed at once.
    VacateFast,
    /// The fetcher no longer wants the running job (it was removed or held
    /// in the queue it came from; the reason given): the job is vacated at
    /// once, without retirement, as HTCondor's `condor_rm` does.
    JobWithdrawn(String),
    /// A new dynamic slot receives the claim it was carved for.
    Claimed(Claim),
    /// An external claim request for a job (canonical new syntax), as a
    /// schedd sends after a match.
    RequestClaim(String),
    /// The claimant starts the job on its idle claim (activation).
    Activate,
    /// A negotiator matched the slot with a job (canonical new syntax); a
    /// claim request should follow within MATCH_TIMEOUT.
    Match(String),
    /// The claimant's keep-alive: renews the lease of its claims.
    Alive,
    /// The backfill client runs and works for this slot.
    BackfillStarted,
    /// The backfill client no longer works for this slot (it exited, or
    /// was killed as [`Effect::KillBackfill`] asked).
    BackfillExited,
    /// A dynamic slot of this partitionable slot was deleted.
    ChildDeleted {
        /// Its sub-id.
        sub: u32,
        /// What it gives back.
        resources: Resources,
    },
}

/// What the shell must do. Carried out only after the events are durable.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Run FETCH_WORK with the slot ad.
    FetchWork,
    /// Run REPLY_FETCH.
    ReplyFetch {
        /// `accept` or `reject`.
        accept: bool,
        /// The job ad.
        job: String,
    },
    /// Start a starter for the job.
    SpawnStarter {
        /// The job ad.
        job: String,
    },
    /// Suspend the job (SIGSTOP).
    Suspend,
    /// Continue it (SIGCONT).
    Continue,
    /// Ask it to leave (the soft-kill signal).
    SoftKill,
    /// Kill it (SIGKILL to the job).
    HardKill,
    /// The starter did not go after KILLING_TIMEOUT: kill it and its children.
    KillStarter,
    /// Answer an external claim request (as a schedd's REQUEST_CLAIM).
    ReplyClaim {
        /// Whether the claim was granted.
        accept: bool,
    },
    /// Run the benchmarks (the machine's `Mips` and `KFlops`); answer
    /// with [`Input::BenchmarksDone`].
    RunBenchmarks,
    /// Start the backfill client for this slot (one client serves every
    /// slot in Backfill); answer with [`Input::BackfillStarted`].
    StartBackfill,
    /// This slot no longer wants the backfill client (it is killed when
    /// no slot wants it); answer with [`Input::BackfillExited`].
    KillBackfill,
    /// Run EVICT_CLAIM for a fetch claim that ended.
    EvictClaim {
        /// The job ad.
        job: String,
        /// The claim's number (for its `ClaimId` line).
        claim: u64,
    },
}

/// The outcome of `decide`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// Events to append, in order.
    pub events: Vec<SlotEvent>,
    /// Effects to carry out after the events are durable.
    pub effects: Vec<Effect>,
}

/// Everything outside the slot that a decision may look at.
pub struct Ctx<'a> {
    /// The policy.
    pub policy: &'a Policy,
    /// The slot's resources.
    pub spec: &'a SlotSpec,
    /// Machine attributes (KeyboardIdle, LoadAvg, …) and anything else the
    /// slot ad publishes.
    pub machine: &'a ClassAd,
    /// Now.
    pub now: i64,
    /// Draining, when the machine is being drained.
    pub drain: Option<&'a Drain>,
    /// What the slot ad publishes of the node beyond `machine`.
    pub publish: &'a crate::policy::publish::Publish<'a>,
    /// The shell's cache of this slot's ad and parsed jobs: one per slot,
    /// kept across decisions (a fresh one gives the same decisions, only
    /// slower).
    pub cache: &'a AdCache,
}
