//! A slot as an actor: the shell around the pure policy state machine.
//! Each input is decided, the events appended durably, applied, and only
//! then are the effects carried out (hooks, starters, signals).

use std::rc::Rc;
use std::time::Duration;

use actix::prelude::*;
use tracing::{error, info, warn};

use super::cron_ad::SlotCronAd;
use super::hook::{HookActor, HookDone, InTurn, Unrecorded, hook_timeout, ignored};
use super::messages::{
    NewPolicy, NodeLink, PublicAd, Release, RunBenchmarks, SlotBorn, SlotGone, SlotInput,
    SlotStatus, StarterPids, Want, WorkFound, WriteHeld, deliver,
};
use super::phase::{fetch_phase, until};
use super::request::{starter_hooks, starter_request};
use super::shared::Shared;
use super::starter::{StarterActor, StarterCmd, StarterOwner};
use crate::classad::unparse::{OldOrder, ad_to_old};
use crate::classad::{ClassAd, FixedEnv, Value, parse_ad};
use crate::events::{DaemonEvent, Event};
use crate::hooks::HookRun;
use crate::hooks::output::{Fetched, classify_fetch, fetched};
use crate::policy::engine::{
    AdCache, Ctx, Decision, Effect, Input, Policy, decide, slot_ad, wants_news_of_work,
};
use crate::policy::layout::SlotSpec;
use crate::policy::node::{SlotView, wakeup};
use crate::policy::publish::{Publish, public_ad};
use crate::policy::quiet::QuietFetches;
use crate::policy::slot::{Slot, SlotEvent, apply};
use crate::startd::replay::OpenStarter;
use crate::startd::{LostClaim, Unanswered};
use crate::starter::protocol::Command;

/// One slot.
pub struct SlotActor {
    shared: Rc<Shared>,
    node: NodeLink,
    slot: Slot,
    spec: SlotSpec,
    policy: Policy,
    /// The slot ad and parsed jobs its decisions reuse (follows `policy`).
    cache: AdCache,
    /// The machine ad with this slot's cron ads merged in.
    merged: SlotCronAd,
    /// What the slot holds back from the log while it polls and finds
    /// nothing (`policy::quiet`), written when it goes or is asked to
    /// ([`WriteHeld`]).
    quiet: QuietFetches,
    starter: Option<Addr<StarterActor>>,
    pids: Option<StarterPids>,
    eval_at: Option<(i64, SpawnHandle)>,
    /// The FETCH_WORK timer: the second it is due in, and its handle.
    fetch_timer: Option<(i64, SpawnHandle)>,
    /// Whether the last FETCH_WORK printed a job (its next fetch then
    /// comes at the start of the second it is due).
    fetched_work: bool,
    /// Another slot with the same keyword that has fetched a job since
    /// this slot's last fetch (its next fetch then comes at the start of
    /// the second it is due, too, and says so in its event).
    work_seen: Option<String>,
    first: Option<Input>,
    /// Claims of the last run to tell EVICT_CLAIM about when it starts.
    lost: Vec<LostClaim>,
    /// Jobs the last run was handed, to answer with REPLY_FETCH when it
    /// starts.
    unanswered: Vec<Unanswered>,
    /// The last run's starter of this slot to take again when it starts
    /// (its actor and what the log says of it).
    reattach: Option<(String, OpenStarter)>,
    /// A claim of the last run that goes on, and when that run started:
    /// its `ClaimId` stays the one that run gave it.
    old_claim: Option<(u64, i64)>,
    /// Its snapshot is in the log already (the daemon's start batch).
    snapshot_recorded: bool,
}

impl SlotActor {
    /// A slot actor, which starts by handling `first`.
    pub fn new(
        shared: &Rc<Shared>,
        node: NodeLink,
        slot: Slot,
        spec: SlotSpec,
        policy: Policy,
        first: Input,
    ) -> SlotActor {
        SlotActor {
            shared: Rc::clone(shared),
            node,
            slot,
            spec,
            policy,
            cache: AdCache::default(),
            merged: SlotCronAd::default(),
            quiet: QuietFetches::default(),
            starter: None,
            pids: None,
            eval_at: None,
            fetch_timer: None,
            fetched_work: false,
            work_seen: None,
            first: Some(first),
            lost: Vec::new(),
            unanswered: Vec::new(),
            reattach: None,
            old_claim: None,
            snapshot_recorded: false,
        }
    }

    /// The slot's snapshot is in the log already (the daemon's start
    /// batch holds it): the actor does not record another.
    #[must_use]
    pub fn with_snapshot_recorded(mut self) -> SlotActor {
        self.snapshot_recorded = true;
        self
    }

    /// Claims the last run left open, for EVICT_CLAIM when the actor
    /// starts, and jobs it did not answer, for REPLY_FETCH.
    #[must_use]
    pub fn with_lost(mut self, lost: Vec<LostClaim>, unanswered: Vec<Unanswered>) -> SlotActor {
        self.lost = lost;
        self.unanswered = unanswered;
        self
    }

    /// The last run's starters of this slot still running (at most one),
    /// taken again when the actor starts, and its fetched claim between
    /// jobs kept (`idle`); that run started at `run_started` (the claim
    /// keeps the `ClaimId` it gave).
    #[must_use]
    pub fn with_reattach(
        mut self,
        taken: Vec<(String, OpenStarter)>,
        idle: Option<u64>,
        run_started: i64,
    ) -> SlotActor {
        if let Some(claim) = idle {
            self.old_claim = Some((claim, run_started));
        }
        if let Some((actor, st)) = taken.into_iter().next() {
            self.old_claim = Some((st.claim, run_started));
            self.reattach = Some((actor, st));
        }
        self
    }

    /// Calls `f` with the slot's decision context at `now`.
    fn with_ctx<R>(&self, now: i64, f: impl FnOnce(&Ctx<'_>) -> R) -> R {
        let node = self.shared.node.read();
        let machine =
            (self.merged).machine_ad(&self.shared, &node.machine, &self.slot, &self.spec, now);
        let publish = Publish {
            machine: &self.shared.machine,
            detected: self.shared.detected,
            host: &self.shared.host,
            total_slots: node.total_slots,
            drain_times: node.drain_times,
        };
        f(&Ctx {
            policy: &self.policy,
            spec: &self.spec,
            machine: &machine,
            now,
            drain: node.drain.as_ref(),
            publish: &publish,
            cache: &self.cache,
        })
    }

    fn public(&self, now: i64) -> ClassAd {
        let mut ad = self.with_ctx(now, |ctx| public_ad(&self.slot, ctx));
        if let Some(c) = &self.slot.claim {
            let id = format!(
                "<{}>#{}#{}#...",
                self.shared.host, self.shared.started, c.id
            );
            ad.insert_value("PublicClaimId", id.as_str());
        }
        if let Some(p) = &self.pids {
            ad.insert_value("StarterPid", i64::from(p.starter));
            if let Some(j) = p.job {
                ad.insert_value("JobPid", i64::from(j));
            }
        }
        ad
    }

    fn internal(&self, now: i64) -> ClassAd {
        self.with_ctx(now, |ctx| slot_ad(&self.slot, ctx))
    }

    /// Decide, append, apply, act. The append is awaited with the slot's
    /// mailbox and timers held (`ctx.wait`): nothing else reaches the slot
    /// between its decision and the decision's effects, while the thread
    /// goes on with the other actors' messages and the log's writer can
    /// flush their appends with this one.
    /// A poll that found nothing is held back from the log instead
    /// (`policy::quiet`).
    fn step(&mut self, input: &Input, ctx: &mut Context<Self>) {
        self.step_after(input, None, ctx);
    }

    /// [`SlotActor::step`] for the end of a FETCH_WORK run whose events
    /// (`hook`) are not in the log: they go with the decision's.
    fn step_after(&mut self, input: &Input, hook: Option<Unrecorded>, ctx: &mut Context<Self>) {
        let now = self.shared.clock.now();
        let d = self.with_ctx(now, |c| decide(&self.slot, c, input));
        let mine = (self.slot.id.as_str(), &mut self.quiet);
        let batch = super::quiet::batch(&self.shared, mine, &d.events, hook, now);
        if batch.is_empty() {
            self.carry_out(d, now, ctx);
            return;
        }
        let durable = self.shared.append_all_later(batch);
        ctx.wait(durable.into_actor(self).map(move |done, act, ctx| {
            if let Err(e) = done {
                // Nothing unrecorded is acted on. The log's writer has
                // stopped the daemon (`Prepared::start_over`); under a
                // store that may recover (tests), the input is dropped and
                // the next evaluation tries again.
                error!(message = "Cannot record slot events; not acting on them.",
                    slot = %act.slot.name, error = %e);
                act.reschedule(ctx, now);
                return;
            }
            if d.effects
                .iter()
                .any(|e| matches!(e, Effect::SpawnStarter { .. }))
            {
                crate::failpoint::hit("job-accepted");
            }
            act.carry_out(d, now, ctx);
        }));
    }

    /// Applies a decision whose events are durable, then acts on it.
    fn carry_out(&mut self, d: Decision, now: i64, ctx: &mut Context<Self>) {
        for e in &d.events {
            if let SlotEvent::ActivityChanged {
                state,
                activity,
                why,
                ..
            } = e
            {
                info!(message = "Slot changed.", slot = %self.slot.name,
                    from = %format!("{}/{}", self.slot.state, self.slot.activity),
                    to = %format!("{state}/{activity}"), why = %why);
            }
            apply(&mut self.slot, e);
            match e {
                SlotEvent::DynamicSlotCreated {
                    sub,
                    resources,
                    claim,
                    ..
                } => deliver(
                    &self.node.born,
                    SlotBorn {
                        parent: self.slot.id.clone(),
                        sub: *sub,
                        resources: resources.clone(),
                        claim: claim.clone(),
                    },
                    "a dynamic slot's birth",
                ),
                SlotEvent::SlotDeleted { .. } => {
                    deliver(
                        &self.node.gone,
                        SlotGone {
                            id: self.slot.id.clone(),
                            resources: self.slot.resources.clone(),
                        },
                        "a dynamic slot's deletion",
                    );
                }
                _ => {}
            }
        }
        // REPLY_FETCH goes last: no one waits for it, while the starter
        // spawned beside it after an accept has a job waiting.
        let mut effects = d.effects;
        effects.sort_by_key(|e| matches!(e, Effect::ReplyFetch { .. }));
        for eff in effects {
            self.act(eff, now, ctx);
        }
        if self.slot.deleted {
            ctx.stop();
            return;
        }
        deliver(
            &self.node.status,
            SlotStatus {
                id: self.slot.id.clone(),
                view: SlotView::of(&self.slot),
            },
            "a slot's state",
        );
        self.reschedule(ctx, now);
    }

    fn reschedule(&mut self, ctx: &mut Context<Self>, now: i64) {
        let eval_set = self.eval_at.as_ref().map(|(t, _)| *t);
        let fetch_set = self.fetch_timer.as_ref().map(|(t, _)| *t);
        let wake = self.with_ctx(now, |c| wakeup(&self.slot, c, eval_set, fetch_set));
        if let Some(want) = wake.evaluate_at {
            if let Some((_, h)) = self.eval_at.take() {
                ctx.cancel_future(h);
            }
            let secs = u64::try_from(want - now).unwrap_or(1);
            let h = ctx.run_later(Duration::from_secs(secs), |act, ctx| {
                act.eval_at = None;
                act.step(&Input::Evaluate, ctx);
            });
            self.eval_at = Some((want, h));
        }
        if let Some((_, h)) = self.fetch_timer.take() {
            ctx.cancel_future(h);
        }
        if let Some(due) = wake.fetch_at {
            // After a fetch that brought work, the next comes as soon as
            // the whole-second delay allows (HTCondor compares
            // `time(NULL)`s, so a delay of 1 can end a few ms later): a
            // partitionable slot that found a burst carves its next dynamic
            // slot at the next second's start, not a full second after the
            // first. So does the fetch of a slot that heard of another's
            // work (`WorkFound`, passed on by the node). Idle polls keep
            // the slot's own point of the second.
            let phase = if self.fetched_work || self.work_seen.is_some() {
                0
            } else {
                fetch_phase(&self.slot, &self.spec)
            };
            let wait = until(self.shared.clock.now_nanos(), due, phase);
            let h = ctx.run_later(wait, |act, ctx| {
                act.fetch_timer = None;
                let input = act
                    .work_seen
                    .clone()
                    .map_or(Input::FetchTimer, Input::WorkFound);
                act.step(&input, ctx);
            });
            self.fetch_timer = Some((due, h));
        }
    }

    fn hook_path(&self, hook: &str) -> Option<std::path::PathBuf> {
        let keyword = self.policy.keyword.as_deref()?;
        Some(
            self.shared
                .settings()
                .hook_path(keyword, hook)?
                .to_path_buf(),
        )
    }

    fn hook_run(
        &self,
        hook: &str,
        path: std::path::PathBuf,
        args: Vec<String>,
        stdin: String,
    ) -> HookRun {
        let kw = self.policy.keyword.as_deref().unwrap_or_default();
        let settings = self.shared.settings();
        let timeout = hook_timeout(&settings, kw, hook);
        HookRun {
            path,
            args,
            stdin: stdin.into_bytes(),
            cwd: self.shared.dirs.log.clone(),
            env: self.shared.hooks.env.clone(),
            user: self.shared.hooks.user,
            timeout: Some(Duration::from_secs(timeout.max(1))),
            stdout_limit: settings.pipe_buffer_max,
            capture: None,
        }
    }

    fn claim_id(&self, claim: u64) -> String {
        let started = match self.old_claim {
            Some((c, run_started)) if c == claim => run_started,
            _ => self.shared.started,
        };
        crate::startd::restart::claim_id(&self.shared.host, started, claim, &self.slot.id)
    }

    /// `job -----\n slot [ClaimId]` as REPLY_FETCH and EVICT_CLAIM read it.
    fn job_and_slot(&self, job: &str, now: i64, claim_id: Option<&str>) -> String {
        let job = parse_ad(job).unwrap_or_default();
        let mut text = ad_to_old(&job, OldOrder::Bytes);
        text.push_str("-----\n");
        text.push_str(&ad_to_old(&self.internal(now), OldOrder::Bytes));
        if let Some(id) = claim_id {
            let mut a = ClassAd::new();
            a.insert_value("ClaimId", Value::from(id));
            text.push_str(&ad_to_old(&a, OldOrder::Bytes));
        }
        text
    }

    /// Tells the fetcher of a claim the last run of the daemon left open:
    /// JOB_EXIT `evict` for a job that ended with the machine (as its
    /// starter would have, when the job has that hook), else EVICT_CLAIM
    /// for a fetched claim, with the ClaimId that run gave it.
    fn evict_lost(&self, lost: &LostClaim, now: i64) {
        if !lost.owed() {
            return;
        }
        if lost.node_restarted && self.job_ended_with_node(lost) {
            return;
        }
        let path = self.hook_path("EVICT_CLAIM").filter(|_| lost.fetched);
        let Some(path) = path else {
            let why = if lost.fetched {
                "the slot has no EVICT_CLAIM hook"
            } else {
                "the job has no JOB_EXIT hook and was not fetched"
            };
            let untold = DaemonEvent::LossUntold {
                teller: self.slot.id.clone(),
                claim: lost.claim,
                why: why.into(),
            };
            if let Err(e) = self.shared.record("daemon", vec![Event::Daemon(untold)]) {
                error!(message = "Cannot record a lost claim left untold.", slot = %lost.slot, error = %e);
            }
            return;
        };
        info!(message = "Telling the fetcher of a claim lost in a restart.",
            slot = %lost.slot, claim = lost.claim);
        let stdin = self.job_and_slot(&lost.job, now, Some(&lost.claim_id));
        let run = self.hook_run("EVICT_CLAIM", path, Vec::new(), stdin);
        HookActor::launch(
            &self.shared,
            "EVICT_CLAIM",
            &self.slot.id,
            Some(lost.claim),
            run,
            ignored,
            None,
        );
    }

    /// Runs the job's JOB_EXIT hook with `evict` for a job whose starter
    /// the machine's restart ended, its ad saying so in `ExitReason`;
    /// whether the job has that hook.
    fn job_ended_with_node(&self, lost: &LostClaim) -> bool {
        let mut job = parse_ad(&lost.job).unwrap_or_default();
        let fetched_with = self.policy.keyword.as_deref();
        let hooks = starter_hooks(&self.shared.settings(), &job, fetched_with);
        let paths: Vec<std::path::PathBuf> =
            hooks.each().filter_map(|h| h.job_exit.clone()).collect();
        if paths.is_empty() {
            return false;
        }
        info!(message = "Telling the fetcher of a job that ended with the machine.",
            slot = %lost.slot, claim = lost.claim);
        job.insert_value(
            "ExitReason",
            Value::from("the machine restarted while the job ran"),
        );
        let stdin = ad_to_old(&job, OldOrder::Bytes);
        // The job's own hook, then its fetcher's: in turn, as the starter
        // runs them.
        let runs = (paths.into_iter())
            .map(|path| self.hook_run("JOB_EXIT", path, vec!["evict".into()], stdin.clone()))
            .collect();
        InTurn::launch(
            &self.shared,
            "JOB_EXIT",
            (&self.slot.id, Some(lost.claim)),
            runs,
        );
        true
    }

    /// Runs REPLY_FETCH for a job the last run was handed and did not
    /// answer: accept under its claim's `ClaimId` when the claim goes on,
    /// else reject.
    fn answer_handout(&self, owed: &Unanswered, now: i64) {
        let Some(path) = self.hook_path("REPLY_FETCH") else {
            return;
        };
        let arg = if owed.accept.is_some() {
            "accept"
        } else {
            "reject"
        };
        info!(message = "Answering a job handed out before the restart.",
            slot = %self.slot.id, answer = arg);
        let stdin = self.job_and_slot(&owed.job, now, owed.accept.as_deref());
        let run = self.hook_run("REPLY_FETCH", path, vec![arg.into()], stdin);
        HookActor::launch(
            &self.shared,
            "REPLY_FETCH",
            &self.slot.id,
            None,
            run,
            ignored,
            None,
        );
    }

    fn act(&mut self, eff: Effect, now: i64, ctx: &mut Context<Self>) {
        let claim = self.slot.claim.as_ref().map(|c| c.id);
        match eff {
            Effect::FetchWork => {
                let Some(path) = self.hook_path("FETCH_WORK") else {
                    self.step(&Input::FetchFailed, ctx);
                    return;
                };
                let stdin = ad_to_old(&self.public(now), OldOrder::Bytes);
                let run = self.hook_run("FETCH_WORK", path, Vec::new(), stdin);
                HookActor::launch(
                    &self.shared,
                    "FETCH_WORK",
                    &self.slot.id,
                    None,
                    run,
                    classify_fetch,
                    Some(ctx.address().recipient()),
                );
            }
            Effect::ReplyFetch { accept, job } => {
                if let Some(path) = self.hook_path("REPLY_FETCH") {
                    let arg = if accept { "accept" } else { "reject" };
                    let id = claim.filter(|_| accept).map(|c| self.claim_id(c));
                    let stdin = self.job_and_slot(&job, now, id.as_deref());
                    let run = self.hook_run("REPLY_FETCH", path, vec![arg.into()], stdin);
                    HookActor::launch(
                        &self.shared,
                        "REPLY_FETCH",
                        &self.slot.id,
                        claim,
                        run,
                        ignored,
                        None,
                    );
                }
            }
            Effect::EvictClaim { job, claim } => {
                if let Some(path) = self.hook_path("EVICT_CLAIM") {
                    let stdin = self.job_and_slot(&job, now, Some(&self.claim_id(claim)));
                    let run = self.hook_run("EVICT_CLAIM", path, Vec::new(), stdin);
                    HookActor::launch(
                        &self.shared,
                        "EVICT_CLAIM",
                        &self.slot.id,
                        Some(claim),
                        run,
                        ignored,
                        None,
                    );
                }
            }
            Effect::SpawnStarter { job } => self.spawn_starter(&job, claim, now, ctx),
            Effect::RunBenchmarks => deliver(
                &self.node.benchmarks,
                RunBenchmarks(ctx.address().recipient()),
                "a slot's wish for benchmarks",
            ),
            Effect::Suspend => self.tell(StarterCmd::Send(Command::Suspend)),
            Effect::Continue => self.tell(StarterCmd::Send(Command::Continue)),
            Effect::SoftKill => self.tell(StarterCmd::Send(Command::SoftKill)),
            Effect::HardKill => self.tell(StarterCmd::Send(Command::HardKill)),
            Effect::KillStarter => self.tell(StarterCmd::KillAll),
            Effect::StartBackfill => deliver(
                &self.node.backfill.want,
                Want {
                    slot: self.slot.id.clone(),
                    addr: ctx.address().recipient(),
                },
                "a slot's wish for the backfill client",
            ),
            Effect::KillBackfill => deliver(
                &self.node.backfill.release,
                Release {
                    slot: self.slot.id.clone(),
                },
                "a slot's release of the backfill client",
            ),
            Effect::ReplyClaim { accept } => {
                warn!(message = "Claim request answered with no one to tell.", slot = %self.slot.name, accept);
            }
        }
    }

    /// Starts a starter for `job` (of claim `claim`).
    fn spawn_starter(&mut self, job: &str, claim: Option<u64>, now: i64, ctx: &mut Context<Self>) {
        let ad = parse_ad(job).unwrap_or_default();
        let settings = self.shared.settings();
        let env = FixedEnv::new(now);
        let label = format!(
            "{}.{} {}",
            match ad.eval_attr("ClusterId", &env) {
                Value::Int(i) => i,
                _ => 1,
            },
            match ad.eval_attr("ProcId", &env) {
                Value::Int(i) => i,
                _ => 0,
            },
            match ad.eval_attr("Owner", &env) {
                Value::Str(s) => s.to_string_lossy(),
                _ => String::new(),
            },
        );
        let req = starter_request(
            &self.shared,
            &settings,
            &self.slot.id,
            &ad,
            starter_hooks(&settings, &ad, self.policy.keyword.as_deref()),
            &self.public(now),
            self.slot
                .claim
                .as_ref()
                .map_or(0, |c| u64::try_from(c.pledged_vacate).unwrap_or(0)),
        );
        self.starter = Some(StarterActor::launch(
            &self.shared,
            StarterOwner {
                exited: ctx.address().recipient(),
                pids: ctx.address().recipient(),
            },
            &self.slot.id,
            claim.unwrap_or(0),
            label,
            req,
        ));
    }

    fn tell(&self, cmd: StarterCmd) {
        match &self.starter {
            Some(s) => s.do_send(cmd),
            None => warn!(message = "No starter to signal.", slot = %self.slot.name),
        }
    }
}

impl Actor for SlotActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // Replay of this slot starts here; the next durable append (the
        // first input's events) makes the snapshot durable too.
        if !self.snapshot_recorded
            && let Err(e) = self.shared.record(
                &self.slot.id,
                vec![Event::Slot(SlotEvent::snapshot(
                    self.shared.clock.now(),
                    &self.slot,
                ))],
            )
        {
            error!(message = "Cannot record the slot's snapshot.", slot = %self.slot.name, error = %e);
        }
        let now = self.shared.clock.now();
        for lost in std::mem::take(&mut self.lost) {
            self.evict_lost(&lost, now);
        }
        for owed in std::mem::take(&mut self.unanswered) {
            self.answer_handout(&owed, now);
        }
        if let Some((actor, st)) = self.reattach.take() {
            self.starter = Some(StarterActor::reattach(
                &self.shared,
                StarterOwner {
                    exited: ctx.address().recipient(),
                    pids: ctx.address().recipient(),
                },
                &actor,
                &st,
            ));
        }
        if let Some(first) = self.first.take() {
            self.step(&first, ctx);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.merged.leave();
        super::quiet::write_held(&self.shared, &self.slot.id, &mut self.quiet);
    }
}

impl Handler<WriteHeld> for SlotActor {
    type Result = ();

    fn handle(&mut self, _: WriteHeld, _: &mut Context<Self>) {
        super::quiet::write_held(&self.shared, &self.slot.id, &mut self.quiet);
    }
}

impl Handler<SlotInput> for SlotActor {
    type Result = ();

    fn handle(&mut self, SlotInput(input): SlotInput, ctx: &mut Context<Self>) {
        if matches!(input, Input::StarterExited | Input::StarterLost) {
            self.starter = None;
            self.pids = None;
        }
        self.step(&input, ctx);
    }
}

impl Handler<StarterPids> for SlotActor {
    type Result = ();

    fn handle(&mut self, p: StarterPids, _: &mut Context<Self>) {
        self.pids = Some(p);
    }
}

impl Handler<NewPolicy> for SlotActor {
    type Result = ();

    fn handle(&mut self, NewPolicy(policy): NewPolicy, ctx: &mut Context<Self>) {
        info!(message = "Slot policy reconfigured.", slot = %self.slot.name);
        self.policy = policy;
        self.step(&Input::Evaluate, ctx);
    }
}

impl Handler<PublicAd> for SlotActor {
    type Result = String;

    fn handle(&mut self, _: PublicAd, _: &mut Context<Self>) -> String {
        crate::classad::unparse::ad_to_string(&self.public(self.shared.clock.now()))
    }
}

impl Handler<HookDone> for SlotActor {
    type Result = ();

    fn handle(&mut self, mut done: HookDone, ctx: &mut Context<Self>) {
        let unrecorded = done.unrecorded.take();
        let input = match done.output {
            Err(_) => Input::FetchFailed,
            Ok(out) if out.timed_out => Input::FetchFailed,
            Ok(out) => match fetched(
                &out.stdout,
                out.truncated,
                self.shared.settings().pipe_buffer_max,
            ) {
                Fetched::NoWork => Input::FetchedNothing,
                Fetched::Job(ad) => Input::FetchedJob(crate::classad::unparse::ad_to_string(&ad)),
                Fetched::Malformed(m) => {
                    error!(message = "FETCH_WORK output refused.", slot = %self.slot.name, reason = %m);
                    Input::FetchFailed
                }
            },
        };
        self.fetched_work = matches!(input, Input::FetchedJob(_));
        self.work_seen = None;
        self.step_after(&input, unrecorded, ctx);
        if self.fetched_work
            && let Some(keyword) = &self.policy.keyword
        {
            self.node.work.do_send(WorkFound {
                by: self.slot.id.clone(),
                keyword: keyword.clone(),
            });
        }
    }
}

impl Handler<WorkFound> for SlotActor {
    type Result = ();

    /// A slot fetching from the same place found work: this one asks too,
    /// now if every rule of a fetch allows it (the engine decides), else
    /// at the start of the second it is due rather than at its own point
    /// of that second. Slots polling out of step (see [`fetch_phase`])
    /// thus all take part in a burst of work within the second, not over
    /// a whole one.
    fn handle(&mut self, w: WorkFound, ctx: &mut Context<Self>) {
        if !wants_news_of_work(&self.slot, &self.policy, &w.keyword) {
            return;
        }
        self.work_seen = Some(w.by.clone());
        self.step(&Input::WorkFound(w.by), ctx);
    }
}
