//! `roost policy simulate`: runs a machine's slots under a policy on
//! virtual time, driven by a scenario (machine inputs changing, jobs
//! offered to FETCH_WORK, jobs exiting, commands), and reports every
//! transition and effect as JSON lines. Same scenario, same output.
//!
//! Pure: the scenario comes in as text; output goes to a callback.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use serde_json::{Value as Json, json};

use crate::classad::{ClassAd, Value};
use crate::config::{Config, Scope, load_text};

use super::engine::{
    AdCache, Ctx, Drain, Effect, Input, Policy, decide, hibernate_state, wants_news_of_work,
};
use super::layout::{Machine, SlotSpec, layout, machine};
use super::node::{
    self, DrainRequest, NodeEffect, NodeEvent, NodeInput, NodeSnapshot, NodeState, SlotView,
    hibernation,
};
use super::publish::Publish;
use super::slot::{Activity, Slot, SlotEvent, SlotKind, State, Transition, apply};

mod check;
mod scenario;

use check::check_resources;
use scenario::{Action, machine_ad, machine_attrs};
pub use scenario::{Scenario, ScenarioError};

/// What happens next in the simulation, in time order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Scenario(usize),
    Evaluate(usize),
    Fetch(usize),
    /// A job with `SimRunTime` ends: slot index and claim id.
    Exit(usize, u64),
    /// Time to check HIBERNATE on every slot.
    Hibernate,
    /// A slot's benchmarks end.
    Benchmarked(usize),
    /// A slot's claimant sends its keep-alive.
    Alive(usize),
}

/// What a simulation records, as the daemon appends it to its log: one
/// slot's events, or the node's.
#[derive(Clone, Copy, Debug)]
pub enum Recorded<'a> {
    /// A slot's events (the actor is the slot's id).
    Slot(&'a [SlotEvent]),
    /// The node's events (the actor is `daemon`).
    Node(&'a [NodeEvent]),
}

/// How a simulation ended.
#[derive(Clone, Debug)]
pub struct Finished {
    /// Every slot's final state, deleted dynamic slots included.
    pub slots: Vec<Slot>,
    /// The node's.
    pub node: NodeSnapshot,
}

struct SimSlot {
    slot: Slot,
    spec: SlotSpec,
    policy: Policy,
    /// The slot's ad cache, as the slot actor keeps one.
    cache: AdCache,
    /// The evaluation timer set, as the daemon's slot actor keeps it.
    next_eval: i64,
    /// The fetch timer set (a newer one replaces it).
    next_fetch: Option<i64>,
    gone: bool,
    /// When the claimant next sends a keep-alive, while it has a claim
    /// here.
    next_alive: Option<i64>,
    /// The claimant stopped sending keep-alives (`schedd gone`).
    claimant_gone: bool,
    /// A job offered by FETCH_WORK, kept in case REPLY_FETCH says reject.
    pending: Option<(String, Option<String>)>,
}

impl SimSlot {
    /// Whether a scenario's `slot = "…"` names this slot (`slot1` or
    /// `slot1@sim`).
    fn is(&self, name: &str) -> bool {
        name == self.slot.id || name == self.slot.name
    }
}

/// One step to take at the current instant.
enum Step {
    Slot(usize, Input),
    Node(NodeInput),
}

/// Loads the scenario's configuration from its text.
type Loader<'s> = Box<dyn Fn(&str) -> Result<Config, ScenarioError> + 's>;

/// The simulation: the node core and each slot's core, driven on virtual
/// time by the scenario and by a simulated world (FETCH_WORK's queue,
/// jobs that run `SimRunTime` seconds, claimants, the backfill client).
struct Sim<'s, E, R> {
    sc: &'s Scenario,
    emit: E,
    record: R,
    load: Loader<'s>,
    text: String,
    config: Config,
    host: String,
    alive_interval: i64,
    machine: Machine,
    slots: Vec<SimSlot>,
    node: NodeState,
    attrs: Vec<(String, Value, i64)>,
    machine_ad: ClassAd,
    offers: VecDeque<(String, Option<String>)>,
    queue: BinaryHeap<Reverse<(i64, u64, Due)>>,
    seq: u64,
    steps: VecDeque<Step>,
    now: i64,
}

/// Runs a scenario, calling `emit` with each output line in time order.
pub fn simulate(sc: &Scenario, emit: impl FnMut(Json)) -> Result<(), ScenarioError> {
    simulate_with(sc, emit, |_, _| Ok::<(), std::convert::Infallible>(())).map(|_| ())
}

/// Runs a scenario like [`simulate`], also handing every decision's events
/// (with the deciding slot's id, or `daemon` for the node's) to `record`
/// before they are applied, as the daemon appends them to its log; a
/// `record` error stops the run.
pub fn simulate_with<E: std::fmt::Display>(
    sc: &Scenario,
    emit: impl FnMut(Json),
    record: impl FnMut(&str, Recorded<'_>) -> Result<(), E>,
) -> Result<Finished, ScenarioError> {
    let mut sim = Sim::new(sc, emit, record)?;
    while let Some(Reverse((t, _, due))) = sim.queue.pop() {
        if t > sc.duration {
            break;
        }
        sim.now = t;
        sim.machine_ad = machine_ad(&sim.attrs, t);
        sim.fire(due)?;
        sim.run_steps()?;
        check_resources(&sim.slots, &sim.machine)
            .map_err(|ScenarioError(e)| ScenarioError(format!("t = {t}: {e}")))?;
        if sim.node.exit.is_some() {
            (sim.emit)(json!({"t": t, "effect": "exit_daemon"}));
            break;
        }
    }
    Ok(Finished {
        slots: sim.slots.into_iter().map(|s| s.slot).collect(),
        node: sim.node.record,
    })
}

impl<'s, E, R, X> Sim<'s, E, R>
where
    E: FnMut(Json),
    R: FnMut(&str, Recorded<'_>) -> Result<(), X>,
    X: std::fmt::Display,
{
    fn new(sc: &'s Scenario, emit: E, record: R) -> Result<Self, ScenarioError> {
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        let specials = vec![
            ("DETECTED_CPUS".to_string(), sc.inputs.cpus.to_string()),
            ("DETECTED_CORES".to_string(), sc.inputs.cpus.to_string()),
            (
                "DETECTED_MEMORY".to_string(),
                sc.inputs.memory_mb.to_string(),
            ),
        ];
        let load = Box::new(move |text: &str| {
            load_text("scenario config", text, scope.clone(), specials.clone())
                .map_err(|e| ScenarioError(format!("configuration: {e}")))
        });
        let text = format!("FULL_HOSTNAME = sim\nHOSTNAME = sim\n{}", sc.config);
        let config = load(&text)?;
        let knob = |e: crate::config::TypeError| ScenarioError(format!("configuration: {e}"));
        let host = config
            .expanded("FULL_HOSTNAME")
            .map_err(knob)?
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "sim".into());
        let alive_interval = config
            .int("ALIVE_INTERVAL")
            .map_err(knob)?
            .unwrap_or(300)
            .max(1);
        let m = machine(&config, &sc.inputs).map_err(|e| ScenarioError(format!("machine: {e}")))?;
        let specs = layout(&config, &m).map_err(|e| ScenarioError(format!("slots: {e}")))?;
        let mut sim = Sim {
            sc,
            emit,
            record,
            load,
            text,
            config,
            host,
            alive_interval,
            machine: m,
            slots: Vec::new(),
            node: NodeState::default(),
            attrs: machine_attrs(&sc.attrs),
            machine_ad: ClassAd::new(),
            offers: VecDeque::new(),
            queue: BinaryHeap::new(),
            seq: 0,
            steps: VecDeque::new(),
            now: 0,
        };
        for spec in specs {
            let slot = spec.new_slot(&sim.machine, &sim.host, 0);
            sim.add_slot(slot, spec)?;
        }
        sim.node = NodeState::new(
            sim.slots
                .iter()
                .map(|s| (s.slot.id.clone(), SlotView::of(&s.slot))),
        );
        for (i, (t, _)) in sc.events.iter().enumerate() {
            sim.at(*t, Due::Scenario(i));
        }
        for i in 0..sim.slots.len() {
            sim.at(0, Due::Evaluate(i));
        }
        if let Some(every) = sim.hibernate_every() {
            sim.at(every, Due::Hibernate);
        }
        Ok(sim)
    }

    /// A new slot (its snapshot recorded first, as a slot actor does).
    fn add_slot(&mut self, slot: Slot, spec: SlotSpec) -> Result<usize, ScenarioError> {
        let policy = Policy::from_config(&self.config, &slot.id, spec.type_id)
            .map_err(|e| ScenarioError(format!("policy: {e}")))?;
        let snapshot = [SlotEvent::snapshot(self.now, &slot)];
        self.log(&slot.id, Recorded::Slot(&snapshot))?;
        self.slots.push(SimSlot {
            next_eval: self.now,
            slot,
            spec,
            policy,
            cache: AdCache::default(),
            next_fetch: None,
            gone: false,
            next_alive: None,
            claimant_gone: false,
            pending: None,
        });
        Ok(self.slots.len() - 1)
    }

    fn log(&mut self, actor: &str, what: Recorded<'_>) -> Result<(), ScenarioError> {
        (self.record)(actor, what)
            .map_err(|e| ScenarioError(format!("t = {}: cannot record events: {e}", self.now)))
    }

    fn at(&mut self, t: i64, due: Due) {
        self.seq += 1;
        self.queue.push(Reverse((t, self.seq, due)));
    }

    /// HIBERNATE is checked when every slot's policy asks for it, at the
    /// shortest interval.
    fn hibernate_every(&self) -> Option<i64> {
        let every = self
            .slots
            .iter()
            .map(|s| s.policy.hibernate_check_interval)
            .min()
            .unwrap_or(0);
        (every > 0).then_some(every)
    }

    fn index(&self, id: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.slot.id == id && !s.gone)
    }

    /// The steps a due scenario action or timer starts.
    fn fire(&mut self, due: Due) -> Result<(), ScenarioError> {
        let t = self.now;
        match due {
            Due::Scenario(i) => self.scenario(i)?,
            Due::Evaluate(i) => {
                if self.slots[i].next_eval == t && !self.slots[i].gone {
                    self.steps.push_back(Step::Slot(i, Input::Evaluate));
                }
            }
            Due::Fetch(i) => {
                if self.slots[i].next_fetch == Some(t) {
                    self.slots[i].next_fetch = None;
                    self.steps.push_back(Step::Slot(i, Input::FetchTimer));
                }
            }
            Due::Hibernate => {
                let publish = self.publish();
                let states: Vec<_> = self
                    .slots
                    .iter()
                    .filter(|s| !s.gone)
                    .map(|s| {
                        let ctx =
                            sim_ctx(s, &self.machine_ad, t, self.node.drain.as_ref(), &publish);
                        hibernate_state(&s.slot, &ctx)
                    })
                    .collect();
                if let Some(state) = hibernation(&states) {
                    (self.emit)(json!({"t": t, "effect": "hibernate", "state": state}));
                }
                if let Some(every) = self.hibernate_every() {
                    self.at(t + every, Due::Hibernate);
                }
            }
            Due::Benchmarked(i) => {
                // The benchmarks leave their time stamp in the machine ad,
                // as the daemon's do (Mips and KFlops are machine inputs).
                self.attrs
                    .retain(|(n, _, _)| !n.eq_ignore_ascii_case("LastBenchmark"));
                self.attrs.push(("LastBenchmark".into(), Value::Int(t), t));
                self.machine_ad = machine_ad(&self.attrs, t);
                self.steps.push_back(Step::Slot(i, Input::BenchmarksDone));
            }
            Due::Alive(i) => {
                let s = &mut self.slots[i];
                if s.next_alive == Some(t) {
                    s.next_alive = None;
                    if !s.gone && !s.claimant_gone {
                        self.steps.push_back(Step::Slot(i, Input::Alive));
                    }
                }
            }
            Due::Exit(i, claim) => {
                let s = &self.slots[i];
                if !s.gone && s.slot.starter && s.slot.claim.as_ref().is_some_and(|c| c.id == claim)
                {
                    self.steps.push_back(Step::Slot(i, Input::StarterExited));
                }
            }
        }
        Ok(())
    }

    /// The steps a scenario's action starts.
    fn scenario(&mut self, i: usize) -> Result<(), ScenarioError> {
        let t = self.now;
        let named = |s: &SimSlot, slot: &Option<String>| slot.as_deref().is_none_or(|x| s.is(x));
        match &self.sc.events[i].1 {
            Action::Set(vals) => {
                for (k, v) in vals {
                    self.attrs.retain(|(n, _, _)| !n.eq_ignore_ascii_case(k));
                    self.attrs.push((k.clone(), v.clone(), t));
                }
            }
            Action::Offer { job, keyword } => {
                self.offers.push_back((job.clone(), keyword.clone()));
            }
            Action::Exit { slot } => {
                if let Some(i) = self.slots.iter().position(|s| s.is(slot)) {
                    self.steps.push_back(Step::Slot(i, Input::StarterExited));
                }
            }
            Action::Drain(Some(how)) => self.steps.push_back(Step::Node(NodeInput::Drain {
                request: DrainRequest::new(*how),
                ads: Vec::new(),
            })),
            Action::Drain(None) => self
                .steps
                .push_back(Step::Node(NodeInput::CancelDrain(None))),
            Action::Off(how) => self.steps.push_back(Step::Node(NodeInput::Off(*how))),
            Action::Vacate { slot } => self.steps.push_back(Step::Node(NodeInput::Vacate {
                slot: slot.clone(),
                fast: false,
            })),
            action @ (Action::Claim { job, slot } | Action::Match { job, slot }) => {
                if let Some(i) = self.slots.iter().position(|s| !s.gone && named(s, slot)) {
                    let input = if matches!(action, Action::Match { .. }) {
                        Input::Match(job.clone())
                    } else {
                        // A new claimant: it sends keep-alives.
                        self.slots[i].claimant_gone = false;
                        Input::RequestClaim(job.clone())
                    };
                    self.steps.push_back(Step::Slot(i, input));
                }
            }
            Action::ScheddGone { slot } => {
                for s in &mut self.slots {
                    if named(s, slot) {
                        s.claimant_gone = true;
                    }
                }
            }
            Action::BackfillExit => {
                for (i, s) in self.slots.iter().enumerate() {
                    if !s.gone && s.slot.backfill {
                        self.steps.push_back(Step::Slot(i, Input::BackfillExited));
                    }
                }
            }
            Action::Reconfig(extra) => self.reconfig(extra.as_deref()),
        }
        Ok(())
    }

    /// As the daemon: the configuration with `extra` added, and every live
    /// slot's policy from it, or nothing changes.
    fn reconfig(&mut self, extra: Option<&str>) {
        let t = self.now;
        let new_text = format!("{}\n{}", self.text, extra.unwrap_or(""));
        let rebuilt = (self.load)(&new_text).and_then(|c| {
            let policies = self
                .slots
                .iter()
                .map(|s| {
                    Policy::from_config(&c, &s.slot.id, s.spec.type_id)
                        .map_err(|e| ScenarioError(format!("policy of {}: {e}", s.slot.id)))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok((c, policies))
        });
        match rebuilt {
            Ok((c, policies)) => {
                (self.emit)(json!({"t": t, "effect": "reconfig", "ok": true}));
                self.config = c;
                self.text = new_text;
                for (i, p) in policies.into_iter().enumerate() {
                    self.slots[i].policy = p;
                    if !self.slots[i].gone {
                        self.steps.push_back(Step::Slot(i, Input::Evaluate));
                    }
                }
            }
            Err(ScenarioError(e)) => {
                (self.emit)(json!({"t": t, "effect": "reconfig", "ok": false, "error": e}));
            }
        }
    }

    /// Takes every step of this instant; steps cause further steps (a
    /// fetch answered, a killed starter exiting, the node told of a slot's
    /// change).
    fn run_steps(&mut self) -> Result<(), ScenarioError> {
        let mut guard = 0;
        while let Some(step) = self.steps.pop_front() {
            guard += 1;
            if guard > 10_000 {
                return Err(ScenarioError(format!(
                    "t = {}: too many steps at one instant",
                    self.now
                )));
            }
            match step {
                Step::Slot(i, input) => self.slot_step(i, &input)?,
                Step::Node(input) => self.node_step(&input)?,
            }
        }
        Ok(())
    }

    /// One decision of slot `i`, as its actor takes it: decide, record,
    /// apply, act, tell the node, set the timers.
    fn slot_step(&mut self, i: usize, input: &Input) -> Result<(), ScenarioError> {
        if self.slots[i].gone {
            return Ok(());
        }
        let t = self.now;
        let d = {
            let s = &self.slots[i];
            let publish = self.publish();
            let ctx = sim_ctx(s, &self.machine_ad, t, self.node.drain.as_ref(), &publish);
            decide(&s.slot, &ctx, input)
        };
        if !d.events.is_empty() {
            let id = self.slots[i].slot.id.clone();
            self.log(&id, Recorded::Slot(&d.events))?;
        }
        let mut node_inputs = Vec::new();
        for e in &d.events {
            let s = &mut self.slots[i];
            match e {
                SlotEvent::ActivityChanged {
                    state,
                    activity,
                    transition,
                    why,
                    ..
                } => {
                    let tr = if *transition == Transition::Unnumbered {
                        Json::Null
                    } else {
                        Json::String(transition.to_string())
                    };
                    (self.emit)(json!({
                        "t": t,
                        "slot": s.slot.name,
                        "from": [s.slot.state.to_string(), s.slot.activity.to_string()],
                        "to": [state.to_string(), activity.to_string()],
                        "transition": tr,
                        "why": why,
                    }));
                }
                SlotEvent::DynamicSlotCreated {
                    sub,
                    resources,
                    claim,
                    ..
                } => node_inputs.push(NodeInput::SlotBorn {
                    parent: s.slot.id.clone(),
                    sub: *sub,
                    resources: resources.clone(),
                    claim: claim.clone(),
                }),
                SlotEvent::SlotDeleted { .. } => {
                    (self.emit)(
                        json!({"t": t, "slot": s.slot.name, "effect": "dynamic_slot_deleted"}),
                    );
                    s.gone = true;
                    node_inputs.push(NodeInput::SlotGone {
                        id: s.slot.id.clone(),
                        resources: s.slot.resources.clone(),
                    });
                }
                _ => {}
            }
            apply(&mut self.slots[i].slot, e);
        }
        for effect in d.effects {
            self.slot_effect(i, effect);
        }
        // The simulated schedd activates every claim it was granted at
        // once (a new dynamic slot gets its claim from its own `Claimed`
        // input).
        let x = &self.slots[i];
        let waiting = !x.gone
            && !x.slot.starter
            && x.slot.state == State::Claimed
            && x.slot.activity == Activity::Idle
            && x.slot
                .claim
                .as_ref()
                .is_some_and(|c| !c.fetched && c.ending.is_none() && c.activations == 0);
        if waiting
            && !self
                .steps
                .iter()
                .any(|s| matches!(s, Step::Slot(j, Input::Activate) if *j == i))
        {
            self.steps.push_back(Step::Slot(i, Input::Activate));
        }
        for input in node_inputs {
            self.node_step(&input)?;
        }
        if !self.slots[i].gone {
            let id = self.slots[i].slot.id.clone();
            self.node.observe(&id, SlotView::of(&self.slots[i].slot));
            self.node_step(&NodeInput::SlotsChanged)?;
            self.reschedule(i);
        }
        Ok(())
    }

    /// One decision of the node core, as the node actor takes it.
    fn node_step(&mut self, input: &NodeInput) -> Result<(), ScenarioError> {
        let d = node::decide(&self.node, input, self.now);
        if !d.events.is_empty() {
            self.log("daemon", Recorded::Node(&d.events))?;
        }
        for e in &d.events {
            node::apply(&mut self.node, e);
        }
        for effect in d.effects {
            match effect {
                NodeEffect::Reply(Err(why)) => {
                    (self.emit)(
                        json!({"t": self.now, "effect": "refused", "why": why.to_string()}),
                    );
                }
                NodeEffect::Reply(Ok(_)) | NodeEffect::Exit { .. } => {}
                NodeEffect::Tell { slot, input } => {
                    if let Some(i) = self.index(&slot) {
                        self.steps.push_back(Step::Slot(i, input));
                    }
                }
                NodeEffect::WorkFound { slot, by, keyword } => {
                    if let Some(i) = self.index(&slot)
                        && wants_news_of_work(&self.slots[i].slot, &self.slots[i].policy, &keyword)
                    {
                        self.steps.push_back(Step::Slot(i, Input::WorkFound(by)));
                    }
                }
                NodeEffect::StartSlot {
                    id,
                    parent,
                    resources,
                    claim,
                } => {
                    let Some(p) = self.index(&parent) else {
                        continue;
                    };
                    let mut spec = self.slots[p].spec.clone();
                    spec.partitionable = false;
                    let parent_name = self.slots[p].slot.name.clone();
                    let claimant_gone = self.slots[p].claimant_gone;
                    let kind = SlotKind::Dynamic { parent };
                    let slot = Slot::with(&id, &self.host, self.now, kind, resources);
                    (self.emit)(json!({"t": self.now, "slot": slot.name,
                        "effect": "dynamic_slot_created", "parent": parent_name}));
                    let i = self.add_slot(slot, spec)?;
                    self.slots[i].claimant_gone = claimant_gone;
                    self.steps.push_back(Step::Slot(i, Input::Claimed(claim)));
                }
                NodeEffect::Reconfig => self.reconfig(None),
            }
        }
        Ok(())
    }

    /// What the simulated world does about one effect of slot `i`.
    fn slot_effect(&mut self, i: usize, effect: Effect) {
        let t = self.now;
        let env = crate::classad::FixedEnv::new(t);
        let name = self.slots[i].slot.name.clone();
        let line = |effect: &str| json!({"t": t, "slot": name, "effect": effect});
        match effect {
            Effect::FetchWork => {
                (self.emit)(line("fetch_work"));
                let kw = self.slots[i].policy.keyword.clone().unwrap_or_default();
                let pick = self
                    .offers
                    .iter()
                    .position(|(_, k)| k.as_deref().is_none_or(|k| k.eq_ignore_ascii_case(&kw)));
                match pick.and_then(|p| self.offers.remove(p)) {
                    Some((job, k)) => {
                        self.steps
                            .push_back(Step::Slot(i, Input::FetchedJob(job.clone())));
                        self.slots[i].pending = Some((job, k));
                    }
                    None => self.steps.push_back(Step::Slot(i, Input::FetchedNothing)),
                }
            }
            Effect::ReplyFetch { accept, .. } => {
                (self.emit)(
                    json!({"t": t, "slot": name, "effect": "reply_fetch", "accept": accept}),
                );
                // The site's REPLY_FETCH puts a rejected job back at the end
                // of its queue.
                if let Some(o) = self.slots[i].pending.take()
                    && !accept
                {
                    self.offers.push_back(o);
                }
            }
            Effect::ReplyClaim { accept } => {
                (self.emit)(
                    json!({"t": t, "slot": name, "effect": "reply_claim", "accept": accept}),
                );
            }
            Effect::SpawnStarter { job } => {
                (self.emit)(line("spawn_starter"));
                // A simulated job with `SimRunTime = N` exits N s later.
                let run = crate::classad::parse_ad(&job)
                    .ok()
                    .map(|ad| ad.eval_attr("SimRunTime", &env));
                if let (Some(Value::Int(n)), Some(c)) = (run, self.slots[i].slot.claim.as_ref()) {
                    let claim = c.id;
                    self.at(t + n.max(0), Due::Exit(i, claim));
                }
            }
            Effect::Suspend => (self.emit)(line("suspend")),
            Effect::Continue => (self.emit)(line("continue")),
            Effect::SoftKill => {
                (self.emit)(line("soft_kill"));
                // A simulated job leaves at once, unless its ad says
                // `SimIgnoresSoftKill = true`.
                let stays = self.slots[i].slot.claim.as_ref().is_some_and(|c| {
                    crate::classad::parse_ad(&c.job).is_ok_and(|ad| {
                        matches!(ad.eval_attr("SimIgnoresSoftKill", &env), Value::Bool(true))
                    })
                });
                if !stays {
                    self.steps.push_back(Step::Slot(i, Input::StarterExited));
                }
            }
            Effect::HardKill | Effect::KillStarter => {
                (self.emit)(line("hard_kill"));
                self.steps.push_back(Step::Slot(i, Input::StarterExited));
            }
            Effect::EvictClaim { .. } => (self.emit)(line("evict_claim")),
            // The simulated client starts and stops at once.
            Effect::StartBackfill => {
                (self.emit)(line("start_backfill"));
                self.steps.push_back(Step::Slot(i, Input::BackfillStarted));
            }
            Effect::KillBackfill => {
                (self.emit)(line("kill_backfill"));
                self.steps.push_back(Step::Slot(i, Input::BackfillExited));
            }
            Effect::RunBenchmarks => {
                (self.emit)(line("benchmark"));
                // They take `SimBenchmarkTime` seconds (a machine input;
                // default 1).
                let took = match self.machine_ad.eval_attr("SimBenchmarkTime", &env) {
                    Value::Int(n) => n.max(0),
                    _ => 1,
                };
                self.at(t + took, Due::Benchmarked(i));
            }
        }
    }

    /// What the simulated slots publish of the node, as the daemon's do.
    fn publish(&self) -> Publish<'_> {
        Publish {
            machine: &self.machine,
            detected: (self.sc.inputs.cpus, self.sc.inputs.memory_mb),
            host: &self.host,
            total_slots: self.node.total_slots(),
            drain_times: self.node.drain_times(),
        }
    }

    /// Slot `i`'s timers after a step, as its actor sets them
    /// ([`node::wakeup`]), and its claimant's next keep-alive.
    fn reschedule(&mut self, i: usize) {
        let t = self.now;
        let wake = {
            let s = &self.slots[i];
            let publish = self.publish();
            let ctx = sim_ctx(s, &self.machine_ad, t, self.node.drain.as_ref(), &publish);
            node::wakeup(&s.slot, &ctx, Some(s.next_eval), s.next_fetch)
        };
        if let Some(at) = wake.evaluate_at {
            self.slots[i].next_eval = at;
            self.at(at, Due::Evaluate(i));
        }
        self.slots[i].next_fetch = wake.fetch_at;
        if let Some(at) = wake.fetch_at {
            self.at(at, Due::Fetch(i));
        }
        // The claimant of an external claim keeps it alive every
        // ALIVE_INTERVAL, more often for a short lease (a third of it, at
        // least 10 s), as a schedd does.
        let s = &self.slots[i];
        let lease = [&s.slot.claim, &s.slot.preempting]
            .into_iter()
            .flatten()
            .filter_map(|c| c.lease)
            .min();
        if let Some(lease) = lease
            && s.next_alive.is_none_or(|a| a <= t)
            && !s.claimant_gone
        {
            let at = t + self.alive_interval.min((lease / 3).max(10));
            self.slots[i].next_alive = Some(at);
            self.at(at, Due::Alive(i));
        }
    }
}

/// The decision context of one simulated slot.
fn sim_ctx<'a>(
    s: &'a SimSlot,
    machine: &'a ClassAd,
    now: i64,
    drain: Option<&'a Drain>,
    publish: &'a Publish<'a>,
) -> Ctx<'a> {
    Ctx {
        policy: &s.policy,
        spec: &s.spec,
        machine,
        now,
        drain,
        publish,
        cache: &s.cache,
    }
}
