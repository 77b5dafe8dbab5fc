//! The daemon's supervisor, a driver of the node core
//! (`policy::node`): it creates the slot actors, hands the core every
//! command, slot change, dynamic slot born or gone and news of fetched
//! work, appends the core's events, publishes what slots read of the node
//! (`Shared::node`), and carries out the core's effects (tell slots, start
//! dynamic slots, reconfigure, stop). It also refreshes the machine's
//! attributes, runs the benchmarks and keeps systemd told (`systemd`).

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use actix::prelude::*;
use tracing::{error, info, warn};

use super::backfill::BackfillActor;
use super::messages::{
    BackfillLink, NewPolicy, NodeLink, PublicAd, RunBenchmarks, SlotBorn, SlotGone, SlotInput,
    SlotStatus, WorkFound, WriteHeld, deliver,
};
use super::shared::{InForce, NodeFacts, Pens, Shared};
use super::slot::SlotActor;
use super::systemd;
use crate::actors::common::cron::{
    CronChanged, CronHost, CronIdle, CronManager, NewCron, RunNow, WhenIdle, restore,
};
use crate::actors::common::latest::Publisher;
use crate::actors::common::machine::machine_ad;
use crate::admin::Response;
use crate::classad::{ClassAd, Value, parse_ad};
use crate::config::Config;
use crate::config::daemon_knobs::DaemonSettings;
use crate::cron::config::{self as cron_config, Manager};
use crate::cron::event::CronState;
use crate::cron::merge::Published;
use crate::events::{DaemonEvent, Event};
use crate::policy::engine::{DrainHow, Input, Policy};
use crate::policy::layout::SlotSpec;
pub use crate::policy::node::DrainRequest;
use crate::policy::node::{
    self, NodeEffect, NodeEvent, NodeInput, NodeState, ShutdownCause, SlotView,
};
use crate::policy::slot::{Claim, Resources, Slot, SlotKind};
use crate::startd::replay::OpenStarter;
use crate::startd::{Kept, LostClaim, Unanswered};

/// A signal or an admin command.
#[derive(Message, Clone, Debug)]
#[rtype(result = "Response")]
pub enum Control {
    /// Drain every slot.
    Drain(DrainRequest),
    /// Cancel the drain (only the one with this request id, if given).
    CancelDrain(Option<String>),
    /// Shut down.
    Off(DrainHow),
    /// Vacate one slot or all; `true`: fast (hard-kill).
    Vacate(Option<String>, bool),
    /// Re-read the configuration.
    Reconfig,
    /// Run these cron or benchmark jobs now (none: every OnDemand one).
    CronRun(Vec<String>),
    /// The slots' public ads (new syntax).
    Status,
}

/// Exit code of the actor system when the daemon is to start again.
pub const RESTART: i32 = 3;

/// Re-reads the configuration the daemon was started with.
pub type Reload = Box<dyn Fn() -> anyhow::Result<Config>>;

/// What [`NodeActor`] calls with each configuration a reconfig takes
/// (what lives outside the actors, such as the daemon log's limits,
/// follows it).
pub type ConfigListener = Box<dyn Fn(&Config)>;

/// The supervisor.
pub struct NodeActor {
    pub(super) shared: Rc<Shared>,
    /// Where it publishes the configuration in force and the node's facts.
    config_pen: Publisher<InForce>,
    node_pen: Publisher<NodeFacts>,
    /// Where the cron actors publish their jobs' ads (theirs once they
    /// start).
    cron_pen: Rc<Publisher<Published>>,
    /// Told of each configuration a reconfig takes.
    on_config: Option<ConfigListener>,
    initial: Vec<(Slot, SlotSpec, Policy)>,
    slots: BTreeMap<String, Addr<SlotActor>>,
    /// The node core's state.
    state: NodeState,
    reload: Reload,
    lost: Vec<LostClaim>,
    /// Jobs the last run was handed and did not answer.
    unanswered: Vec<Unanswered>,
    /// Starters of the last run to take again, by actor, and when that run
    /// started.
    reattach: (Kept, i64),
    /// Each live slot's layout: its type (`SLOT_TYPE_<N>`), to rebuild its
    /// policy, and a partitionable slot's, for the dynamic slots it carves.
    specs: BTreeMap<String, SlotSpec>,
    /// Slots waiting for the benchmarks now running.
    benchmarking: Vec<Recipient<SlotInput>>,
    /// When the benchmarks last finished (`LastBenchmark`; 0: never).
    last_benchmark: i64,
    /// What the log said of the cron jobs, when its runs were in this boot.
    cron_last: Option<CronState>,
    /// The startd cron jobs' manager and the benchmarks'.
    cron: Option<(Addr<CronManager>, Addr<CronManager>)>,
    /// The backfill client's manager, which every slot reaches.
    backfill: BackfillLink,
    /// The pool the node publishes its ads in (`ROOST_POOL_ETCD`).
    pub(super) pool: Option<crate::pool::PoolSettings>,
    /// The thread publishing them, once started.
    pub(super) publisher: Option<crate::pool::publish::Publisher>,
    /// The thread reading the node's requests in the pool, once started.
    pub(super) inbox: Option<crate::pool::inbox::Inbox>,
    /// The status line systemd was last told, and whether it was told the
    /// daemon is stopping ([`super::systemd`]).
    told: (String, bool),
}

impl NodeActor {
    /// A supervisor that will create `slots`, with the backfill client's
    /// manager they share (started here, idle until a slot wants
    /// backfill). `reload` re-reads the configuration for
    /// `Control::Reconfig`. Called within the actor system.
    pub fn new(
        shared: Rc<Shared>,
        pens: Pens,
        slots: Vec<(Slot, SlotSpec, Policy)>,
        reload: Reload,
    ) -> NodeActor {
        let manager = BackfillActor::new(&shared).start();
        NodeActor {
            config_pen: pens.config,
            node_pen: pens.node,
            cron_pen: Rc::new(pens.cron),
            on_config: None,
            backfill: BackfillLink {
                want: manager.clone().recipient(),
                release: manager.recipient(),
            },
            shared,
            initial: slots,
            slots: BTreeMap::new(),
            state: NodeState::default(),
            reload,
            lost: Vec::new(),
            unanswered: Vec::new(),
            reattach: (Kept::default(), 0),
            specs: BTreeMap::new(),
            benchmarking: Vec::new(),
            last_benchmark: 0,
            cron_last: None,
            cron: None,
            pool: None,
            publisher: None,
            inbox: None,
            told: (String::new(), false),
        }
    }

    /// Claims the last run left open, and jobs it was handed and did not
    /// answer: each slot's EVICT_CLAIM and REPLY_FETCH hear of its own when
    /// the slot starts.
    #[must_use]
    pub fn with_lost(mut self, lost: Vec<LostClaim>, unanswered: Vec<Unanswered>) -> NodeActor {
        self.lost = lost;
        self.unanswered = unanswered;
        self
    }

    /// What goes on from the last run (started at `run_started`): its
    /// starters still running and its idle fetched claims; each slot
    /// takes its own when it starts.
    #[must_use]
    pub fn with_reattach(mut self, kept: Kept, run_started: i64) -> NodeActor {
        self.reattach = (kept, run_started);
        self
    }

    /// `tell` is called with each configuration a reconfig takes.
    #[must_use]
    pub fn with_config_listener(mut self, tell: Option<ConfigListener>) -> NodeActor {
        self.on_config = tell;
        self
    }

    /// What the log said of the cron jobs, when its runs were in this
    /// boot of the machine (their ads are published at once, OneShot jobs
    /// that ran are not run again, `LastBenchmark` is kept).
    #[must_use]
    pub fn with_cron(mut self, last: Option<CronState>) -> NodeActor {
        self.cron_last = last;
        self
    }

    fn refresh_machine(&self) {
        let mut ad = machine_ad(self.shared.clock.now());
        // 0 until the benchmarks have run, so that HTCondor's default
        // `RunBenchmarks = LastBenchmark == 0` runs them once at start
        // (their `Mips` and `KFlops` are the benchmark jobs' ads).
        ad.insert_value("LastBenchmark", Value::Int(self.last_benchmark));
        let settings = self.shared.settings();
        let (uid, fs) = &settings.domains;
        ad.insert_value("UidDomain", uid.as_str());
        ad.insert_value("FileSystemDomain", fs.as_str());
        self.node_pen.update(|facts| facts.machine = ad);
    }

    /// Starts the cron and benchmark managers, their ads of the last run
    /// published first; returns the cron state for the run's start batch.
    fn start_cron(&mut self, ctx: &Context<Self>) -> CronState {
        let config = self.shared.config();
        let cron = cron_config::read(&config, Manager::StartdCron);
        let bench = cron_config::read(&config, Manager::Benchmarks);
        let last = self.cron_last.take();
        let kept = last.as_ref().map_or_else(CronState::default, |l| {
            restore(&self.cron_pen, &[cron.clone(), bench.clone()], l)
        });
        self.last_benchmark = (kept.jobs.iter())
            .filter(|(a, _)| a.starts_with("benchmark."))
            .filter_map(|(_, j)| j.last_end)
            .max()
            .unwrap_or(0);
        let changed = ctx.address().recipient();
        let host: Rc<dyn CronHost> = self.shared.clone();
        let board = &self.cron_pen;
        let with = |settings| {
            CronManager::new(&host, board, settings, changed.clone(), last.clone()).start()
        };
        self.cron = Some((with(cron), with(bench)));
        kept
    }

    /// Stops the daemon once every slot has recorded what it held back
    /// from the log (no job is left).
    fn exit(&mut self, restart: bool, ctx: &mut Context<Self>) {
        let asks: Vec<_> = self.slots.values().map(|a| a.send(WriteHeld)).collect();
        let all_written = async move {
            for ask in asks {
                // A slot already gone wrote what it held as it went.
                let _ = ask.await;
            }
        };
        ctx.wait(all_written.into_actor(self).map(move |(), act, _| {
            act.record(DaemonEvent::Stopped {
                why: "shutdown: no job left".into(),
            });
            System::current().stop_with_code(if restart { RESTART } else { 0 });
        }));
    }

    pub(super) fn record(&self, e: DaemonEvent) {
        if let Err(err) = self.shared.append("daemon", vec![Event::Daemon(e)]) {
            error!(message = "Cannot record daemon event.", error = %err);
        }
    }

    /// Publishes what slots read of the node.
    fn publish(&self) {
        self.node_pen.update(|facts| {
            facts.drain = self.state.drain.clone();
            facts.drain_times = self.state.drain_times();
            facts.total_slots = self.state.total_slots();
        });
    }

    /// Decide, append, apply, act: one input to the node core. Returns
    /// the answer to a command, when the input was one.
    fn step(&mut self, input: NodeInput, ctx: &mut Context<Self>) -> Option<Response> {
        let now = self.shared.clock.now();
        let d = node::decide(&self.state, &input, now);
        if !d.events.is_empty() {
            let batch = d.events.iter().cloned().map(Event::Node).collect();
            // A dynamic slot's birth or deletion is already durable in the
            // slots' own events: no wait on the actors' thread for it.
            let written = if d.events.iter().all(NodeEvent::mirrors_slots) {
                self.shared.record("daemon", batch)
            } else {
                self.shared.append("daemon", batch).map(|_| ())
            };
            if let Err(e) = written {
                // Nothing unrecorded is acted on; the log's writer stops
                // the daemon.
                error!(message = "Cannot record node events; not acting on them.", error = %e);
                return Some(Response::refused(format!("cannot record it: {e}")));
            }
            for e in &d.events {
                log_event(e);
                node::apply(&mut self.state, e);
            }
            self.publish();
        }
        let mut reply = None;
        for effect in d.effects {
            match effect {
                NodeEffect::Reply(Ok(m)) => reply = Some(Response::done(m)),
                NodeEffect::Reply(Err(m)) => reply = Some(Response::refused(m.to_string())),
                NodeEffect::Tell { slot, input } => {
                    if let Some(a) = self.slots.get(&slot) {
                        deliver(a, SlotInput(input), "the node's word to a slot");
                    }
                }
                NodeEffect::WorkFound { slot, by, keyword } => {
                    if let Some(a) = self.slots.get(&slot) {
                        a.do_send(WorkFound { by, keyword });
                    }
                }
                NodeEffect::StartSlot {
                    id,
                    parent,
                    resources,
                    claim,
                } => self.start_dynamic(&id, &parent, resources, claim, ctx),
                NodeEffect::Reconfig => {
                    self.reconfig();
                }
                NodeEffect::Exit { restart } => self.exit(restart, ctx),
            }
        }
        self.tell_watchers();
        reply
    }

    /// Tells systemd the node's status when it changed, and that the
    /// daemon is stopping once a shutdown is in force; sets the slot
    /// metrics when they are served.
    fn tell_watchers(&mut self) {
        if self.shared.settings().metrics.is_some() {
            crate::metrics::global().set_slots(&self.state.counts());
        }
        if !systemd::enabled() {
            return;
        }
        let line = self.state.summary();
        let stopping = self.state.shutting_down();
        if stopping && !self.told.1 {
            systemd::stopping(&line);
        } else if line != self.told.0 {
            systemd::status(&line);
        }
        self.told = (line, stopping);
    }

    /// Re-reads the configuration and gives every slot its new policy; an
    /// invalid configuration, or one some slot's policy cannot be made
    /// from, is refused and the old one kept.
    pub(super) fn reconfig(&self) -> Response {
        systemd::reloading();
        let answer = self.reconfigure();
        systemd::ready(&self.state.summary());
        answer
    }

    /// [`NodeActor::reconfig`]'s work.
    fn reconfigure(&self) -> Response {
        use anyhow::Context as _;
        let checked = (self.reload)().and_then(|config| {
            let settings = DaemonSettings::read(&config)?;
            let mut policies = Vec::new();
            for (id, addr) in &self.slots {
                let type_id = self.specs.get(id).map_or(0, |s| s.type_id);
                let policy = Policy::from_config(&config, id, type_id)
                    .with_context(|| format!("policy of {id}"))?;
                policies.push((addr.clone(), policy));
            }
            Ok((config, settings, policies))
        });
        match checked {
            Ok((config, settings, policies)) => {
                if let Some((cron, bench)) = &self.cron {
                    cron.do_send(NewCron(cron_config::read(&config, Manager::StartdCron)));
                    bench.do_send(NewCron(cron_config::read(&config, Manager::Benchmarks)));
                }
                if let Some(tell) = &self.on_config {
                    tell(&config);
                }
                self.config_pen.publish(InForce {
                    config: Rc::new(config),
                    settings: Rc::new(settings),
                });
                let n = policies.len();
                for (addr, policy) in policies {
                    deliver(&addr, NewPolicy(policy), "a slot's new policy");
                }
                let message = format!(
                    "configuration re-read: {n} slot(s) use the new policy now; \
                     the slot layout changes at a restart"
                );
                info!(message = "Reconfigured.", slots = n);
                self.record(DaemonEvent::Reconfigured {
                    ok: true,
                    message: message.clone(),
                });
                Response::done(message)
            }
            Err(e) => {
                let e = format!("{e:#}");
                error!(message = "Reconfiguration refused; keeping the old configuration.", error = %e);
                self.record(DaemonEvent::Reconfigured {
                    ok: false,
                    message: e.clone(),
                });
                Response::refused(format!(
                    "reconfiguration refused, the old configuration stays: {e}"
                ))
            }
        }
    }

    /// Asks both cron managers to run `jobs` now; the answer names the
    /// jobs started, or refuses when none is known.
    fn cron_run(&self, jobs: Vec<String>) -> impl std::future::Future<Output = Response> + 'static {
        let managers: Vec<Addr<CronManager>> = self
            .cron
            .iter()
            .flat_map(|(c, b)| [c.clone(), b.clone()])
            .collect();
        async move {
            let mut asked = Vec::new();
            for m in managers {
                asked.extend(m.send(RunNow(jobs.clone())).await.unwrap_or_default());
            }
            let unknown: Vec<&String> = (jobs.iter())
                .filter(|j| !asked.iter().any(|a| a.eq_ignore_ascii_case(j)))
                .collect();
            if asked.is_empty() || !unknown.is_empty() {
                let names: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
                return Response::refused(if names.is_empty() {
                    "no OnDemand cron job is configured".to_string()
                } else {
                    format!("no such cron job: {}", names.join(", "))
                });
            }
            info!(message = "Cron jobs asked to run.", jobs = ?asked);
            Response::done(format!("running: {}", asked.join(", ")))
        }
    }

    /// Every live slot's public ad.
    pub(super) fn public_ads(&self) -> impl std::future::Future<Output = Vec<String>> + 'static {
        let addrs: Vec<Addr<SlotActor>> = self.slots.values().cloned().collect();
        async move {
            let mut ads = Vec::new();
            for a in addrs {
                match a.send(PublicAd).await {
                    Ok(ad) => ads.push(ad),
                    Err(e) => warn!(message = "Slot did not answer.", error = %e),
                }
            }
            ads
        }
    }

    /// Starts the actor of a dynamic slot the core has created.
    fn start_dynamic(
        &mut self,
        id: &str,
        parent: &str,
        resources: Resources,
        claim: Claim,
        ctx: &mut Context<Self>,
    ) {
        let Some(mut spec) = self.specs.get(parent).cloned() else {
            error!(message = "A dynamic slot's parent is unknown.", slot = %id, parent = %parent);
            return;
        };
        let config = self.shared.config();
        let policy = match Policy::from_config(&config, id, spec.type_id) {
            Ok(p) => p,
            Err(e) => {
                error!(message = "Cannot make the dynamic slot's policy.", slot = %id, error = %e);
                return;
            }
        };
        spec.partitionable = false;
        self.specs.insert(id.to_string(), spec.clone());
        let now = self.shared.clock.now();
        let kind = SlotKind::Dynamic {
            parent: parent.to_string(),
        };
        let slot = Slot::with(id, &self.shared.name, now, kind, resources);
        info!(message = "Dynamic slot created.", slot = %slot.name, parent = %parent);
        let addr = SlotActor::new(
            &self.shared,
            link(&ctx.address(), &self.backfill),
            slot,
            spec,
            policy,
            Input::Claimed(claim),
        )
        .start();
        self.slots.insert(id.to_string(), addr);
    }
}

/// The daemon log's line for a node event.
fn log_event(e: &NodeEvent) {
    match e {
        NodeEvent::DrainStarted {
            request_id,
            how,
            reason,
            ..
        } => info!(message = "Draining.", how = ?how, request = request_id, reason = %reason),
        NodeEvent::DrainCompleted { then, .. } => {
            info!(message = "Drain complete.", then = ?then);
        }
        NodeEvent::DrainEnded { why, .. } => info!(message = "Draining ended.", why = ?why),
        NodeEvent::ShutdownBegan {
            how,
            cause,
            restart,
            ..
        } => match cause {
            ShutdownCause::Command => info!(message = "Shutting down.", how = ?how),
            ShutdownCause::DrainCompleted => {
                info!(
                    message = "Drain complete.",
                    then = if *restart { "restarting" } else { "exiting" }
                );
            }
        },
        NodeEvent::ShutdownCompleted { .. } => info!(message = "Shutdown complete."),
        NodeEvent::DrainProgress { .. }
        | NodeEvent::VacateAsked { .. }
        | NodeEvent::SlotCreated { .. }
        | NodeEvent::SlotDeleted { .. }
        | NodeEvent::Snapshot { .. } => {}
    }
}

/// How a slot reaches the node at `addr` and the backfill client's
/// manager `backfill`.
fn link(addr: &Addr<NodeActor>, backfill: &BackfillLink) -> NodeLink {
    NodeLink {
        status: addr.clone().recipient(),
        born: addr.clone().recipient(),
        gone: addr.clone().recipient(),
        work: addr.clone().recipient(),
        benchmarks: addr.clone().recipient(),
        backfill: backfill.clone(),
    }
}

impl Actor for NodeActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let cron = self.start_cron(ctx);
        self.refresh_machine();
        let me = ctx.address();
        let initial = std::mem::take(&mut self.initial);
        self.state = NodeState::new(
            initial
                .iter()
                .map(|(s, ..)| (s.id.clone(), SlotView::of(s))),
        );
        self.publish();
        let names: Vec<String> = initial.iter().map(|(s, ..)| s.name.clone()).collect();
        // The run's start, every slot as it starts and every starter taken
        // again, in one batch: a replay that begins at this `Started` finds
        // all of them, even if the daemon dies at once.
        let now = self.shared.clock.now();
        let mut batch = vec![(
            "daemon".to_string(),
            Event::Daemon(DaemonEvent::Started {
                version: env!("CARGO_PKG_VERSION").into(),
                pid: std::process::id(),
                host: self.shared.host.clone(),
                slots: names,
                boot: crate::starter::boot_id(),
            }),
        )];
        for (slot, ..) in &initial {
            batch.push((
                slot.id.clone(),
                Event::Slot(crate::policy::slot::SlotEvent::snapshot(now, slot)),
            ));
        }
        for (actor, st) in &self.reattach.0.starters {
            batch.push((actor.clone(), Event::Starter(st.reattached())));
        }
        batch.extend(cron.snapshots().map(|(a, e)| (a, Event::Cron(e))));
        if let Err(err) = self.shared.append_all(batch) {
            error!(message = "Cannot record the daemon's start.", error = %err);
        }
        crate::failpoint::hit("started");
        for (slot, spec, policy) in initial {
            let id = slot.id.clone();
            self.specs.insert(id.clone(), spec.clone());
            let (mine, others) = std::mem::take(&mut self.lost)
                .into_iter()
                .partition(|l| l.teller == id);
            self.lost = others;
            let (owed, others) = std::mem::take(&mut self.unanswered)
                .into_iter()
                .partition(|u| u.teller == id);
            self.unanswered = others;
            let (kept, run_started) = &mut self.reattach;
            let taken: Vec<(String, OpenStarter)> = kept
                .starters
                .iter()
                .filter(|(_, st)| st.slot == id)
                .map(|(a, st)| (a.clone(), st.clone()))
                .collect();
            kept.starters.retain(|_, st| st.slot != id);
            let idle = kept.idle.remove(&id);
            let run_started = *run_started;
            let addr = SlotActor::new(
                &self.shared,
                link(&me, &self.backfill),
                slot,
                spec,
                policy,
                Input::Evaluate,
            )
            .with_lost(mine, owed)
            .with_reattach(taken, idle, run_started)
            .with_snapshot_recorded()
            .start();
            self.slots.insert(id, addr);
        }
        let every = self
            .shared
            .settings()
            .update_interval
            .clamp(1, 300)
            .unsigned_abs();
        ctx.run_interval(Duration::from_secs(every), |act, _| act.refresh_machine());
        self.start_pool(ctx);
        // The log is replayed and every slot started: the daemon is up.
        self.told = (self.state.summary(), false);
        self.tell_watchers();
        systemd::ready(&self.told.0);
        if let Some(every) = systemd::watchdog_every() {
            ctx.run_interval(every, |_, _| systemd::watchdog());
        }
    }
}

impl Handler<RunBenchmarks> for NodeActor {
    type Result = ();

    fn handle(&mut self, RunBenchmarks(slot): RunBenchmarks, ctx: &mut Context<Self>) {
        self.benchmarking.push(slot);
        if self.benchmarking.len() > 1 {
            return;
        }
        info!(message = "Running benchmarks.");
        match &self.cron {
            Some((_, bench)) => {
                bench.do_send(RunNow(Vec::new()));
                bench.do_send(WhenIdle(ctx.address().recipient()));
            }
            None => ctx.notify(CronIdle),
        }
    }
}

impl Handler<CronIdle> for NodeActor {
    type Result = ();

    fn handle(&mut self, _: CronIdle, _: &mut Context<Self>) {
        self.last_benchmark = self.shared.clock.now();
        info!(message = "Benchmarks done.", at = self.last_benchmark);
        self.refresh_machine();
        for slot in self.benchmarking.drain(..) {
            deliver(
                &slot,
                SlotInput(Input::BenchmarksDone),
                "the node's word to a slot",
            );
        }
    }
}

impl Handler<CronChanged> for NodeActor {
    type Result = ();

    fn handle(&mut self, _: CronChanged, _: &mut Context<Self>) {
        // A new value for START, RANK and the rest: every slot looks again.
        for a in self.slots.values() {
            deliver(a, SlotInput(Input::AdChanged), "a cron job's new ads");
        }
    }
}

impl Handler<WorkFound> for NodeActor {
    type Result = ();

    fn handle(&mut self, w: WorkFound, ctx: &mut Context<Self>) {
        self.step(
            NodeInput::WorkFound {
                by: w.by,
                keyword: w.keyword,
            },
            ctx,
        );
    }
}

impl Handler<SlotStatus> for NodeActor {
    type Result = ();

    fn handle(&mut self, st: SlotStatus, ctx: &mut Context<Self>) {
        self.state.observe(&st.id, st.view);
        self.step(NodeInput::SlotsChanged, ctx);
    }
}

impl Handler<SlotBorn> for NodeActor {
    type Result = ();

    fn handle(&mut self, b: SlotBorn, ctx: &mut Context<Self>) {
        self.step(
            NodeInput::SlotBorn {
                parent: b.parent,
                sub: b.sub,
                resources: b.resources,
                claim: b.claim,
            },
            ctx,
        );
    }
}

impl Handler<SlotGone> for NodeActor {
    type Result = ();

    fn handle(&mut self, g: SlotGone, ctx: &mut Context<Self>) {
        self.slots.remove(&g.id);
        self.specs.remove(&g.id);
        self.step(
            NodeInput::SlotGone {
                id: g.id,
                resources: g.resources,
            },
            ctx,
        );
    }
}

impl Handler<Control> for NodeActor {
    type Result = ResponseActFuture<Self, Response>;

    fn handle(&mut self, c: Control, ctx: &mut Context<Self>) -> Self::Result {
        let done = |r: Response| Box::pin(actix::fut::ready(r)) as Self::Result;
        let answer = |r: Option<Response>| r.unwrap_or_else(|| Response::done(""));
        match c {
            Control::Drain(request) => Box::pin(self.public_ads().into_actor(self).map(
                move |ads, act, ctx| {
                    let ads: Vec<ClassAd> = ads.iter().filter_map(|a| parse_ad(a).ok()).collect();
                    answer(act.step(NodeInput::Drain { request, ads }, ctx))
                },
            )),
            Control::CancelDrain(id) => done(answer(self.step(NodeInput::CancelDrain(id), ctx))),
            Control::Off(how) => done(answer(self.step(NodeInput::Off(how), ctx))),
            Control::Vacate(slot, fast) => {
                done(answer(self.step(NodeInput::Vacate { slot, fast }, ctx)))
            }
            Control::Reconfig => done(self.reconfig()),
            Control::CronRun(jobs) => Box::pin(self.cron_run(jobs).into_actor(self)),
            Control::Status => {
                Box::pin(
                    self.public_ads()
                        .into_actor(self)
                        .map(|ads, _, _| Response {
                            ads,
                            ..Response::done("")
                        }),
                )
            }
        }
    }
}
