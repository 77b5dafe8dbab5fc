//! The daemon's supervisor: creates the slot actors, carves and deletes
//! dynamic slots, refreshes the machine's attributes, applies drains and
//! shutdowns, reconfigures on SIGHUP, and stops the system when a shutdown
//! has no job left.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use actix::prelude::*;
use tracing::{error, info, warn};

use super::machine::machine_ad;
use super::shared::Shared;
use super::slot::{NewPolicy, PublicAd, SlotActor, SlotInput, idle};
use crate::admin::Response;
use crate::classad::{ClassAd, Value, parse_ad};
use crate::config::Config;
use crate::events::{DaemonEvent, Event, LostClaim};
use crate::policy::engine::{Drain, DrainHow, Input, OnCompletion, Policy, drain_check};
use crate::policy::layout::SlotSpec;
use crate::policy::publish::StartdAttrs;
use crate::policy::slot::{Activity, Claim, Resources, Slot, SlotKind, State};

/// A slot's state, as the supervisor tracks it.
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub struct SlotStatus {
    /// Slot id.
    pub id: String,
    /// State.
    pub state: State,
    /// Activity.
    pub activity: Activity,
    /// Holds a claim, a starter, or the backfill client.
    pub busy: bool,
    /// Deleted (a dynamic slot that went).
    pub deleted: bool,
}

/// A partitionable slot carved a dynamic slot.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SlotBorn {
    /// The partitionable slot's id.
    pub parent: String,
    /// The new slot's sub-id.
    pub sub: u32,
    /// Its resources.
    pub resources: Resources,
    /// The claim it was carved for.
    pub claim: Claim,
    /// The parent's layout.
    pub spec: SlotSpec,
}

/// A dynamic slot was deleted.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SlotGone {
    /// Its id.
    pub id: String,
    /// What it gives back.
    pub resources: Resources,
}

/// A drain as `condor_drain` asks for it.
#[derive(Clone, Debug)]
pub struct DrainRequest {
    /// How running jobs go.
    pub how: DrainHow,
    /// `DrainReason`; default "by command".
    pub reason: Option<String>,
    /// START while draining; default: nothing starts.
    pub start: Option<String>,
    /// Must be true in every slot, else the drain is refused.
    pub check: Option<String>,
    /// What happens once every slot is drained.
    pub on_completion: OnCompletion,
}

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
    /// The slots' public ads (new syntax).
    Status,
}

/// A slot entered Unclaimed/Benchmarking: run the benchmarks (once for
/// every slot asking while they run) and tell it when they are done.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RunBenchmarks(pub Addr<SlotActor>);

/// The benchmarks' results, from their thread.
#[derive(Message)]
#[rtype(result = "()")]
struct BenchmarksMeasured {
    mips: i64,
    kflops: i64,
}

/// How long each benchmark loop runs.
const BENCHMARK_TIME: Duration = Duration::from_millis(250);

/// Re-reads the configuration the daemon was started with.
pub type Reload = Box<dyn Fn() -> Result<Config, String>>;

/// The supervisor.
pub struct NodeActor {
    shared: Rc<Shared>,
    initial: Vec<(Slot, SlotSpec, Policy, StartdAttrs)>,
    slots: BTreeMap<String, (Addr<SlotActor>, SlotStatus)>,
    stopped: bool,
    reload: Reload,
    lost: Vec<LostClaim>,
    /// Each slot's type (`SLOT_TYPE_<N>`), to rebuild its policy.
    types: BTreeMap<String, u32>,
    /// Slots waiting for the benchmarks now running.
    benchmarking: Vec<Addr<SlotActor>>,
    /// The last benchmarks: `Mips`, `KFlops`, `LastBenchmark`.
    benchmarks: Option<(i64, i64, i64)>,
}

impl NodeActor {
    /// A supervisor that will create `slots`.
    /// `reload` re-reads the configuration for `Control::Reconfig`.
    pub fn new(
        shared: Rc<Shared>,
        slots: Vec<(Slot, SlotSpec, Policy, StartdAttrs)>,
        reload: Reload,
    ) -> NodeActor {
        NodeActor {
            shared,
            initial: slots,
            slots: BTreeMap::new(),
            stopped: false,
            reload,
            lost: Vec::new(),
            types: BTreeMap::new(),
            benchmarking: Vec::new(),
            benchmarks: None,
        }
    }

    /// Claims the last run left open: each slot's EVICT_CLAIM hears of
    /// its own when the slot starts.
    #[must_use]
    pub fn with_lost(mut self, lost: Vec<LostClaim>) -> NodeActor {
        self.lost = lost;
        self
    }

    fn refresh_machine(&self) {
        let mut ad = machine_ad(self.shared.clock.now());
        // 0 until the benchmarks have run, so that HTCondor's default
        // `RunBenchmarks = LastBenchmark == 0` runs them once at start.
        let (mips, kflops, last) = self.benchmarks.unwrap_or((0, 0, 0));
        ad.insert_value("LastBenchmark", Value::Int(last));
        if last != 0 {
            ad.insert_value("Mips", Value::Int(mips));
            ad.insert_value("KFlops", Value::Int(kflops));
        }
        *self.shared.machine_ad.borrow_mut() = ad;
    }

    fn record(&self, e: DaemonEvent) {
        if let Err(err) = self.shared.append("daemon", vec![Event::Daemon(e)]) {
            error!(message = "Cannot record daemon event.", error = %err);
        }
    }

    /// Cancels the drain in force, if any.
    fn end_drain(&self, why: &str) {
        if self.shared.drain.borrow_mut().take().is_none() {
            return;
        }
        let (start, _) = self.shared.drain_times.get();
        self.shared
            .drain_times
            .set((start, self.shared.clock.now()));
        info!(message = "Draining ended.", why);
        self.record(DaemonEvent::Command {
            command: why.to_string(),
        });
        self.evaluate_all();
    }

    /// Re-reads the configuration and gives every slot its new policy; an
    /// invalid configuration, or one some slot's policy cannot be made
    /// from, is refused and the old one kept.
    fn reconfig(&self) -> Response {
        let checked = (self.reload)().and_then(|config| {
            let mut policies = Vec::new();
            for (id, (addr, status)) in &self.slots {
                if status.deleted {
                    continue;
                }
                let type_id = self.types.get(id).copied().unwrap_or(0);
                let policy = Policy::from_config(&config, id, type_id)
                    .map_err(|e| format!("policy of {id}: {e}"))?;
                let attrs =
                    StartdAttrs::from_config(&config, id).map_err(|e| format!("{id}: {e}"))?;
                policies.push((addr.clone(), policy, attrs));
            }
            Ok((config, policies))
        });
        match checked {
            Ok((config, policies)) => {
                self.shared.set_config(config);
                let n = policies.len();
                for (addr, policy, attrs) in policies {
                    addr.do_send(NewPolicy(policy, attrs));
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

    /// Every live slot's public ad.
    fn public_ads(&self) -> impl std::future::Future<Output = Vec<String>> + 'static {
        let addrs: Vec<Addr<SlotActor>> = self
            .slots
            .values()
            .filter(|(_, s)| !s.deleted)
            .map(|(a, _)| a.clone())
            .collect();
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

    /// Starts the drain `req`, unless one is in force or its check fails
    /// in `ads`.
    fn start_drain(&self, req: DrainRequest, ads: &[String]) -> Response {
        if let Some(d) = self.shared.drain.borrow().as_ref() {
            return Response::refused(if d.shutdown {
                "the daemon is shutting down".to_string()
            } else {
                format!(
                    "a drain is already in progress (request id {}); cancel it first",
                    d.request_id
                )
            });
        }
        let now = self.shared.clock.now();
        if let Some(check) = &req.check {
            let parsed: Vec<ClassAd> = ads.iter().filter_map(|a| parse_ad(a).ok()).collect();
            if let Err(e) = drain_check(check, &parsed, now) {
                return Response::refused(e);
            }
        }
        let mut d = match Drain::new(req.how, req.start.as_deref()) {
            Ok(d) => d,
            Err(e) => return Response::refused(e.to_string()),
        };
        let id = self.shared.drain_requests.get() + 1;
        self.shared.drain_requests.set(id);
        d.request_id = id;
        d.started = now;
        d.on_completion = req.on_completion;
        if let Some(r) = req.reason.filter(|r| !r.is_empty()) {
            d.reason = r;
        }
        let (_, stop) = self.shared.drain_times.get();
        self.shared.drain_times.set((now, stop));
        info!(message = "Draining.", how = ?req.how, request = id, reason = %d.reason);
        self.record(DaemonEvent::Command {
            command: format!(
                "drain {:?} request {id} reason {:?} on completion {:?}",
                req.how, d.reason, req.on_completion
            ),
        });
        *self.shared.drain.borrow_mut() = Some(d);
        self.evaluate_all();
        Response::done(format!("draining ({:?}), request id {id}", req.how))
    }

    fn evaluate_all(&self) {
        for (addr, st) in self.slots.values() {
            if !st.deleted {
                addr.do_send(SlotInput(Input::Evaluate));
            }
        }
    }

    fn check_done(&mut self) {
        let live: Vec<&SlotStatus> = self
            .slots
            .values()
            .map(|(_, s)| s)
            .filter(|s| !s.deleted)
            .collect();
        let mut retiring = Vec::new();
        if let Some(d) = self.shared.drain.borrow_mut().as_mut() {
            let all = live.iter().all(|s| s.state == State::Drained);
            if all && !d.all_drained {
                for s in &live {
                    if s.activity == Activity::Retiring {
                        retiring.push(s.id.clone());
                    }
                }
            }
            d.all_drained = all;
        }
        for id in retiring {
            if let Some((a, _)) = self.slots.get(&id) {
                a.do_send(SlotInput(Input::Evaluate));
            }
        }
        let completed = live
            .iter()
            .all(|s| s.state == State::Drained && s.activity == Activity::Idle);
        let action = self
            .shared
            .drain
            .borrow()
            .as_ref()
            .filter(|d| !d.shutdown && completed)
            .map(|d| d.on_completion);
        match action {
            None | Some(OnCompletion::Nothing) => {}
            Some(OnCompletion::Resume) => {
                self.end_drain("drain complete: resuming");
            }
            Some(OnCompletion::Reconfig) => {
                self.reconfig();
                self.end_drain("drain complete: reconfigured, resuming");
            }
            Some(how @ (OnCompletion::Exit | OnCompletion::Restart)) => {
                let restart = how == OnCompletion::Restart;
                self.shared.restart.set(restart);
                let what = if restart { "restarting" } else { "exiting" };
                info!(message = "Drain complete.", then = what);
                self.record(DaemonEvent::Command {
                    command: format!("drain complete: {what}"),
                });
                *self.shared.drain.borrow_mut() = Some(Drain::shutdown(DrainHow::Fast));
            }
        }
        let shutdown = self
            .shared
            .drain
            .borrow()
            .as_ref()
            .is_some_and(|d| d.shutdown);
        if shutdown && !self.stopped && live.iter().all(|s| idle(s.state, s.busy)) {
            self.stopped = true;
            info!(message = "Shutdown complete.");
            self.record(DaemonEvent::Stopped {
                why: "shutdown: no job left".into(),
            });
            System::current().stop();
        }
    }
}

impl Actor for NodeActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.refresh_machine();
        let me = ctx.address();
        let initial = std::mem::take(&mut self.initial);
        self.shared.total_slots.set(initial.len());
        let names: Vec<String> = initial.iter().map(|(s, ..)| s.name.clone()).collect();
        self.record(DaemonEvent::Started {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            host: self.shared.host.clone(),
            slots: names,
        });
        for (slot, spec, policy, attrs) in initial {
            let id = slot.id.clone();
            self.types.insert(id.clone(), spec.type_id);
            let status = SlotStatus {
                id: id.clone(),
                state: slot.state,
                activity: slot.activity,
                busy: false,
                deleted: false,
            };
            let (mine, others) = std::mem::take(&mut self.lost)
                .into_iter()
                .partition(|l| l.teller == id);
            self.lost = others;
            let addr = SlotActor::new(
                &self.shared,
                me.clone(),
                slot,
                spec,
                policy,
                attrs,
                Input::Evaluate,
            )
            .with_lost(mine)
            .start();
            self.slots.insert(id, (addr, status));
        }
        let every = self
            .shared
            .config()
            .int("UPDATE_INTERVAL")
            .ok()
            .flatten()
            .and_then(|v| u64::try_from(v).ok())
            .unwrap_or(300)
            .clamp(1, 300);
        ctx.run_interval(Duration::from_secs(every), |act, _| act.refresh_machine());
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
        let node = ctx.address();
        std::thread::spawn(move || {
            let (mips, kflops) = super::machine::benchmark(BENCHMARK_TIME);
            node.do_send(BenchmarksMeasured { mips, kflops });
        });
    }
}

impl Handler<BenchmarksMeasured> for NodeActor {
    type Result = ();

    fn handle(&mut self, m: BenchmarksMeasured, _: &mut Context<Self>) {
        let now = self.shared.clock.now();
        info!(
            message = "Benchmarks done.",
            mips = m.mips,
            kflops = m.kflops
        );
        self.benchmarks = Some((m.mips, m.kflops, now));
        self.refresh_machine();
        for slot in self.benchmarking.drain(..) {
            slot.do_send(SlotInput(Input::BenchmarksDone));
        }
    }
}

/// A slot's FETCH_WORK has just printed a job. Sent by the slot to the
/// node, which passes it on to the other slots that wait for work (Owner,
/// Unclaimed, Backfill); each fetches early if its keyword is the same
/// and a fetch is allowed now (see [`Input::WorkFound`]). Claimed slots
/// are not: they fetch on their own when their job ends, and a node of
/// many busy slots should not spend a decision per slot on every job
/// fetched.
#[derive(Message)]
#[rtype(result = "()")]
pub struct WorkFound {
    /// The slot's id (`slot1`, `slot1_2`).
    pub by: String,
    /// Its hook keyword.
    pub keyword: String,
}

impl Handler<WorkFound> for NodeActor {
    type Result = ();

    fn handle(&mut self, w: WorkFound, _: &mut Context<Self>) {
        for (id, (addr, status)) in &self.slots {
            let waiting = matches!(
                status.state,
                State::Owner | State::Unclaimed | State::Backfill
            );
            if *id != w.by && !status.deleted && waiting {
                addr.do_send(WorkFound {
                    by: w.by.clone(),
                    keyword: w.keyword.clone(),
                });
            }
        }
    }
}

impl Handler<SlotStatus> for NodeActor {
    type Result = ();

    fn handle(&mut self, st: SlotStatus, _: &mut Context<Self>) {
        if let Some(e) = self.slots.get_mut(&st.id) {
            e.1 = st;
        }
        self.check_done();
    }
}

impl Handler<SlotBorn> for NodeActor {
    type Result = ();

    fn handle(&mut self, b: SlotBorn, ctx: &mut Context<Self>) {
        let id = format!("{}_{}", b.parent, b.sub);
        let config = self.shared.config();
        let policy = match Policy::from_config(&config, &id, b.spec.type_id) {
            Ok(p) => p,
            Err(e) => {
                error!(message = "Cannot make the dynamic slot's policy.", slot = %id, error = %e);
                return;
            }
        };
        let attrs = StartdAttrs::from_config(&config, &id).unwrap_or(StartdAttrs(Vec::new()));
        let mut spec = b.spec.clone();
        spec.partitionable = false;
        self.types.insert(id.clone(), spec.type_id);
        let now = self.shared.clock.now();
        let slot = Slot::with(
            &id,
            &self.shared.host,
            now,
            SlotKind::Dynamic {
                parent: b.parent.clone(),
            },
            b.resources,
        );
        info!(message = "Dynamic slot created.", slot = %slot.name, parent = %b.parent);
        let status = SlotStatus {
            id: id.clone(),
            state: slot.state,
            activity: slot.activity,
            busy: true,
            deleted: false,
        };
        let addr = SlotActor::new(
            &self.shared,
            ctx.address(),
            slot,
            spec,
            policy,
            attrs,
            Input::Claimed(b.claim),
        )
        .start();
        self.slots.insert(id, (addr, status));
        self.shared
            .total_slots
            .set(self.slots.values().filter(|(_, s)| !s.deleted).count());
    }
}

impl Handler<SlotGone> for NodeActor {
    type Result = ();

    fn handle(&mut self, g: SlotGone, _: &mut Context<Self>) {
        self.slots.remove(&g.id);
        self.types.remove(&g.id);
        if let Some((parent, sub)) = g.id.rsplit_once('_')
            && let Ok(sub) = sub.parse::<u32>()
            && let Some((addr, _)) = self.slots.get(parent)
        {
            addr.do_send(SlotInput(Input::ChildDeleted {
                sub,
                resources: g.resources,
            }));
        }
        self.shared.total_slots.set(self.slots.len());
        self.check_done();
    }
}

impl Handler<Control> for NodeActor {
    type Result = ResponseActFuture<Self, Response>;

    fn handle(&mut self, c: Control, _: &mut Context<Self>) -> Self::Result {
        let done = |r: Response| Box::pin(actix::fut::ready(r)) as Self::Result;
        match c {
            Control::Drain(req) => {
                Box::pin(self.public_ads().into_actor(self).map(move |ads, act, _| {
                    let r = act.start_drain(req, &ads);
                    act.check_done();
                    r
                }))
            }
            Control::CancelDrain(id) => {
                let current = self
                    .shared
                    .drain
                    .borrow()
                    .as_ref()
                    .map(|d| (d.shutdown, d.request_id));
                match (current, id) {
                    (None, _) => done(Response::refused("the machine is not draining")),
                    (Some((true, _)), _) => done(Response::refused(
                        "the daemon is shutting down; that cannot be cancelled",
                    )),
                    (Some((false, n)), Some(want)) if want.trim() != n.to_string() => {
                        done(Response::refused(format!(
                            "no drain with request id {want}; the drain in progress is {n}"
                        )))
                    }
                    (Some(_), _) => {
                        self.end_drain("drain cancelled");
                        done(Response::done("drain cancelled"))
                    }
                }
            }
            Control::Off(how) => {
                info!(message = "Shutting down.", how = ?how);
                self.record(DaemonEvent::Command {
                    command: format!("off {how:?}"),
                });
                *self.shared.drain.borrow_mut() = Some(Drain::shutdown(how));
                self.evaluate_all();
                self.check_done();
                done(Response::done(format!("shutting down ({how:?})")))
            }
            Control::Vacate(which, fast) => {
                let input = if fast {
                    Input::VacateFast
                } else {
                    Input::Vacate
                };
                let mut n = 0;
                for (addr, st) in self.slots.values() {
                    let hit = which
                        .as_deref()
                        .is_none_or(|w| w == st.id || w.split('@').next() == Some(st.id.as_str()));
                    if hit && !st.deleted {
                        addr.do_send(SlotInput(input.clone()));
                        n += 1;
                    }
                }
                if n == 0 && which.is_some() {
                    return done(Response::refused(format!(
                        "no slot named {}",
                        which.unwrap_or_default()
                    )));
                }
                self.record(DaemonEvent::Command {
                    command: format!(
                        "vacate{} {}",
                        if fast { " -fast" } else { "" },
                        which.as_deref().unwrap_or("all")
                    ),
                });
                done(Response::done(format!("vacating {n} slot(s)")))
            }
            Control::Reconfig => done(self.reconfig()),
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
