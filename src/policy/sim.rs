//! `roost policy simulate`: runs a machine's slots under a policy on
//! virtual time, driven by a scenario (machine inputs changing, jobs
//! offered to FETCH_WORK, jobs exiting, commands), and reports every
//! transition and effect as JSON lines. Same scenario, same output.
//!
//! Pure: the scenario comes in as text; output goes to a callback.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use serde::Deserialize;
use serde_json::{Value as Json, json};

use crate::classad::old::parse_ad_auto;
use crate::classad::unparse::ad_to_string;
use crate::classad::{ClassAd, Limits, Value};
use crate::config::{Scope, load_text};

use super::engine::{
    Ctx, Drain, DrainHow, Effect, Input, Policy, decide, evaluation_interval, hibernate_state,
    machine_hibernate_state, next_fetch_at,
};
use super::layout::{MachineInputs, SlotSpec, layout, machine};
use super::slot::{Slot, SlotEvent, SlotKind, State, apply};

/// A scenario that cannot be run: says where and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScenarioError(pub String);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    config: Option<String>,
    config_file: Option<String>,
    duration: i64,
    #[serde(default)]
    machine: BTreeMap<String, toml::Value>,
    #[serde(default)]
    event: Vec<RawEvent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    t: i64,
    set: Option<BTreeMap<String, toml::Value>>,
    offer: Option<String>,
    keyword: Option<String>,
    exit: Option<RawExit>,
    command: Option<String>,
    slot: Option<String>,
    claim: Option<String>,
    #[serde(rename = "match")]
    matched: Option<String>,
    config: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExit {
    slot: String,
    code: Option<i64>,
    signal: Option<i64>,
}

/// One scheduled action of a scenario.
#[derive(Clone, Debug)]
enum Action {
    Set(Vec<(String, Value)>),
    Offer {
        job: String,
        keyword: Option<String>,
    },
    Exit {
        slot: String,
    },
    /// Start (`Some`) or cancel (`None`) draining.
    Drain(Option<DrainHow>),
    /// Shut the daemon down.
    Off(DrainHow),
    /// An external claim request for a job, to a slot (or the first).
    Claim {
        job: String,
        slot: Option<String>,
    },
    /// A negotiator's match notification, to a slot (or the first).
    Match {
        job: String,
        slot: Option<String>,
    },
    /// The claimants of these slots (all: `None`) stop sending keep-alives.
    ScheddGone {
        slot: Option<String>,
    },
    /// The backfill client exits on its own.
    BackfillExit,
    Vacate {
        slot: Option<String>,
    },
    /// Re-read the configuration, with these lines added to it.
    Reconfig(Option<String>),
}

/// A parsed scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The configuration text (a `config_file` is read by the caller).
    pub config: String,
    /// A `config_file` to read instead of `config`.
    pub config_file: Option<String>,
    /// Seconds of virtual time.
    pub duration: i64,
    inputs: MachineInputs,
    attrs: Vec<(String, Value)>,
    events: Vec<(i64, Action)>,
}

fn toml_to_value(v: &toml::Value) -> Result<Value, String> {
    Ok(match v {
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Real(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::String(s) => Value::from(s.as_str()),
        other => return Err(format!("unsupported value {other}")),
    })
}

impl Scenario {
    /// Parses a scenario's TOML text.
    pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        let raw: RawScenario =
            toml::from_str(text).map_err(|e| ScenarioError(format!("scenario: {e}")))?;
        if raw.config.is_some() == raw.config_file.is_some() {
            return Err(ScenarioError(
                "scenario: give exactly one of `config` and `config_file`".into(),
            ));
        }
        if raw.duration < 0 {
            return Err(ScenarioError(
                "scenario: `duration` must not be negative".into(),
            ));
        }
        let mut inputs = MachineInputs {
            cpus: 1,
            memory_mb: 1024,
            disk_kb: 10 * 1024 * 1024,
            swap_kb: 1024 * 1024,
            gpus: 0,
        };
        let mut attrs = vec![
            ("KeyboardIdle".to_string(), Value::Int(1_000_000)),
            ("ConsoleIdle".to_string(), Value::Int(1_000_000)),
            ("LoadAvg".to_string(), Value::Real(0.0)),
            ("CondorLoadAvg".to_string(), Value::Real(0.0)),
        ];
        for (k, v) in &raw.machine {
            let bad = |what: &str| ScenarioError(format!("[machine] {k}: {what}"));
            let int = || v.as_integer().ok_or_else(|| bad("must be an integer"));
            match k.to_ascii_lowercase().as_str() {
                "cpus" => inputs.cpus = u32::try_from(int()?).map_err(|_| bad("out of range"))?,
                "memory" => inputs.memory_mb = int()?,
                "disk" => inputs.disk_kb = int()?,
                "swap" => inputs.swap_kb = int()?,
                "gpus" => inputs.gpus = u32::try_from(int()?).map_err(|_| bad("out of range"))?,
                _ => {
                    let value = toml_to_value(v).map_err(|e| bad(&e))?;
                    attrs.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
                    attrs.push((k.clone(), value));
                }
            }
        }
        let mut events = Vec::new();
        for (i, e) in raw.event.iter().enumerate() {
            let at = format!("event {} (t = {})", i + 1, e.t);
            let bad = |what: String| ScenarioError(format!("{at}: {what}"));
            // A job ad of the scenario, old or new syntax, as canonical text.
            let job_ad = |text: &str, what: &str| {
                parse_ad_auto(text.as_bytes(), &Limits::default())
                    .map(|ad| ad_to_string(&ad))
                    .map_err(|err| bad(format!("the {what} job ad does not parse: {err}")))
            };
            let kinds = [
                e.set.is_some(),
                e.offer.is_some(),
                e.exit.is_some(),
                e.command.is_some(),
                e.claim.is_some(),
                e.matched.is_some(),
            ]
            .iter()
            .filter(|b| **b)
            .count();
            if kinds != 1 {
                return Err(bad(
                    "give exactly one of set, offer, exit, command, claim, match".into(),
                ));
            }
            let action = if let Some(set) = &e.set {
                let mut v = Vec::new();
                for (k, x) in set {
                    v.push((
                        k.clone(),
                        toml_to_value(x).map_err(|m| bad(format!("{k}: {m}")))?,
                    ));
                }
                Action::Set(v)
            } else if let Some(offer) = &e.offer {
                Action::Offer {
                    job: job_ad(offer, "offered")?,
                    keyword: e.keyword.clone(),
                }
            } else if let Some(x) = &e.exit {
                if x.code.is_some() && x.signal.is_some() {
                    return Err(bad("exit takes `code` or `signal`, not both".into()));
                }
                Action::Exit {
                    slot: x.slot.clone(),
                }
            } else if let Some(c) = &e.command {
                if e.config.is_some() && c != "reconfig" {
                    return Err(bad(
                        "config = … goes only with command = \"reconfig\"".into()
                    ));
                }
                match c.as_str() {
                    "vacate" => Action::Vacate {
                        slot: e.slot.clone(),
                    },
                    "drain graceful" => Action::Drain(Some(DrainHow::Graceful)),
                    "drain quick" => Action::Drain(Some(DrainHow::Quick)),
                    "drain fast" => Action::Drain(Some(DrainHow::Fast)),
                    "drain cancel" => Action::Drain(None),
                    "off peaceful" => Action::Off(DrainHow::Peaceful),
                    "off graceful" => Action::Off(DrainHow::Graceful),
                    "off fast" => Action::Off(DrainHow::Fast),
                    "reconfig" => Action::Reconfig(e.config.clone()),
                    "schedd gone" => Action::ScheddGone {
                        slot: e.slot.clone(),
                    },
                    "backfill exit" => Action::BackfillExit,
                    other => return Err(bad(format!("unknown command \"{other}\""))),
                }
            } else if let Some(c) = &e.claim {
                Action::Claim {
                    job: job_ad(c, "claimed")?,
                    slot: e.slot.clone(),
                }
            } else if let Some(m) = &e.matched {
                Action::Match {
                    job: job_ad(m, "matched")?,
                    slot: e.slot.clone(),
                }
            } else {
                return Err(bad(
                    "give exactly one of set, offer, exit, command, claim, match".into(),
                ));
            };
            events.push((e.t, action));
        }
        events.sort_by_key(|(t, _)| *t);
        Ok(Scenario {
            config: raw.config.unwrap_or_default(),
            config_file: raw.config_file,
            duration: raw.duration,
            inputs,
            attrs,
            events,
        })
    }
}

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

/// The decision context of one simulated slot.
fn sim_ctx<'a>(
    s: &'a SimSlot,
    machine: &'a ClassAd,
    now: i64,
    drain: Option<&'a Drain>,
) -> Ctx<'a> {
    Ctx {
        policy: &s.policy,
        spec: &s.spec,
        machine,
        now,
        drain,
    }
}

impl SimSlot {
    /// Whether a scenario's `slot = "…"` names this slot (`slot1` or
    /// `slot1@sim`).
    fn is(&self, name: &str) -> bool {
        name == self.slot.id || name == self.slot.name
    }
}

struct SimSlot {
    slot: Slot,
    spec: SlotSpec,
    policy: Policy,
    next_eval: i64,
    gone: bool,
    /// When the claimant next sends a keep-alive, while it has a claim
    /// here.
    next_alive: Option<i64>,
    /// The claimant stopped sending keep-alives (`schedd gone`).
    claimant_gone: bool,
}

/// Runs a scenario, calling `emit` with each output line in time order.
pub fn simulate(sc: &Scenario, emit: impl FnMut(Json)) -> Result<(), ScenarioError> {
    simulate_with(sc, emit, |_, _| Ok(())).map(|_| ())
}

/// Runs a scenario like [`simulate`], also handing every decision's events
/// (with the deciding slot's id) to `record` before they are applied, as
/// the daemon appends them to its log; a `record` error stops the run.
/// Returns every slot's final state (deleted dynamic slots included).
pub fn simulate_with(
    sc: &Scenario,
    mut emit: impl FnMut(Json),
    mut record: impl FnMut(&str, &[SlotEvent]) -> Result<(), String>,
) -> Result<Vec<Slot>, ScenarioError> {
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
    let load = |text: &str| {
        load_text("scenario config", text, scope.clone(), specials.clone())
            .map_err(|e| format!("configuration: {e}"))
    };
    let mut text = format!("FULL_HOSTNAME = sim\nHOSTNAME = sim\n{}", sc.config);
    let mut config = load(&text).map_err(ScenarioError)?;
    let host = config
        .get("FULL_HOSTNAME")
        .ok()
        .flatten()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "sim".into());
    let alive_interval = config
        .int("ALIVE_INTERVAL")
        .ok()
        .flatten()
        .unwrap_or(300)
        .max(1);
    let m = machine(&config, &sc.inputs).map_err(|e| ScenarioError(format!("machine: {e}")))?;
    let specs = layout(&config, &m).map_err(|e| ScenarioError(format!("slots: {e}")))?;
    let mut slots = Vec::new();
    for spec in specs {
        let id = format!("slot{}", spec.id);
        let policy = Policy::from_config(&config, &id, spec.type_id)
            .map_err(|e| ScenarioError(format!("policy: {e}")))?;
        let slot = spec.new_slot(&m, &host, 0);
        record(
            &id,
            &[SlotEvent::Snapshot {
                at: 0,
                slot: Box::new(slot.clone()),
            }],
        )
        .map_err(|e| ScenarioError(format!("cannot record events: {e}")))?;
        slots.push(SimSlot {
            slot,
            spec,
            policy,
            next_eval: 0,
            gone: false,
            next_alive: None,
            claimant_gone: false,
        });
    }

    let mut attrs: Vec<(String, Value, i64)> = sc
        .attrs
        .iter()
        .map(|(k, v)| (k.clone(), v.clone(), 0))
        .collect();
    let mut offers: VecDeque<(String, Option<String>)> = VecDeque::new();
    let mut pending: Vec<Option<(String, Option<String>)>> = vec![None; slots.len()];
    let mut drain: Option<Drain> = None;
    let mut queue: BinaryHeap<Reverse<(i64, u64, Due)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |q: &mut BinaryHeap<Reverse<(i64, u64, Due)>>, t: i64, d: Due| {
        seq += 1;
        q.push(Reverse((t, seq, d)));
    };
    for (i, (t, _)) in sc.events.iter().enumerate() {
        push(&mut queue, *t, Due::Scenario(i));
    }
    for i in 0..slots.len() {
        push(&mut queue, 0, Due::Evaluate(i));
    }
    // HIBERNATE is checked when every slot's policy asks for it, at the
    // shortest interval.
    let hibernate_every = slots
        .iter()
        .map(|s| s.policy.hibernate_check_interval)
        .min()
        .unwrap_or(0);
    if hibernate_every > 0 {
        push(&mut queue, hibernate_every, Due::Hibernate);
    }

    while let Some(Reverse((t, _, due))) = queue.pop() {
        if t > sc.duration {
            break;
        }
        let mut machine_ad = machine_ad(&attrs, t);
        let mut inputs: Vec<(usize, Input)> = Vec::new();
        match due {
            Due::Scenario(i) => match &sc.events[i].1 {
                Action::Set(vals) => {
                    for (k, v) in vals {
                        attrs.retain(|(n, _, _)| !n.eq_ignore_ascii_case(k));
                        attrs.push((k.clone(), v.clone(), t));
                    }
                }
                Action::Offer { job, keyword } => offers.push_back((job.clone(), keyword.clone())),
                Action::Exit { slot } => {
                    if let Some(i) = slots.iter().position(|s| s.is(slot)) {
                        inputs.push((i, Input::StarterExited));
                    }
                }
                Action::Drain(how) => {
                    drain = match how {
                        Some(how) => {
                            Some(Drain::new(*how, None).map_err(|e| ScenarioError(e.to_string()))?)
                        }
                        None => None,
                    };
                    for (i, s) in slots.iter().enumerate() {
                        if !s.gone {
                            inputs.push((i, Input::Evaluate));
                        }
                    }
                }
                action @ (Action::Claim { job, slot } | Action::Match { job, slot }) => {
                    let target = slots
                        .iter()
                        .position(|s| !s.gone && slot.as_deref().is_none_or(|x| s.is(x)));
                    if let Some(i) = target {
                        if matches!(action, Action::Match { .. }) {
                            inputs.push((i, Input::Match(job.clone())));
                        } else {
                            // A new claimant: it sends keep-alives.
                            slots[i].claimant_gone = false;
                            inputs.push((i, Input::RequestClaim(job.clone())));
                        }
                    }
                }
                Action::ScheddGone { slot } => {
                    for s in &mut slots {
                        if slot.as_deref().is_none_or(|x| s.is(x)) {
                            s.claimant_gone = true;
                        }
                    }
                }
                Action::BackfillExit => {
                    for (i, s) in slots.iter().enumerate() {
                        if !s.gone && s.slot.backfill {
                            inputs.push((i, Input::BackfillExited));
                        }
                    }
                }
                Action::Off(how) => {
                    drain = Some(Drain::shutdown(*how));
                    for (i, s) in slots.iter().enumerate() {
                        if !s.gone {
                            inputs.push((i, Input::Evaluate));
                        }
                    }
                }
                Action::Vacate { slot } => {
                    for (i, s) in slots.iter().enumerate() {
                        if slot.as_deref().is_none_or(|x| s.is(x)) {
                            inputs.push((i, Input::Vacate));
                        }
                    }
                }
                Action::Reconfig(extra) => {
                    // As the daemon: the new configuration and every live
                    // slot's policy from it, or nothing changes.
                    let new_text = format!("{text}\n{}", extra.as_deref().unwrap_or(""));
                    let rebuilt = load(&new_text).and_then(|c| {
                        let policies = slots
                            .iter()
                            .map(|s| {
                                Policy::from_config(&c, &s.slot.id, s.spec.type_id)
                                    .map_err(|e| format!("policy of {}: {e}", s.slot.id))
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        Ok((c, policies))
                    });
                    match rebuilt {
                        Ok((c, policies)) => {
                            emit(json!({"t": t, "effect": "reconfig", "ok": true}));
                            config = c;
                            text = new_text;
                            for (i, (s, p)) in slots.iter_mut().zip(policies).enumerate() {
                                s.policy = p;
                                if !s.gone {
                                    inputs.push((i, Input::Evaluate));
                                }
                            }
                        }
                        Err(e) => {
                            emit(json!({"t": t, "effect": "reconfig", "ok": false, "error": e}));
                        }
                    }
                }
            },
            Due::Evaluate(i) => {
                if slots[i].next_eval != t || slots[i].gone {
                    continue;
                }
                inputs.push((i, Input::Evaluate));
            }
            Due::Fetch(i) => inputs.push((i, Input::FetchTimer)),
            Due::Hibernate => {
                let states: Vec<_> = slots
                    .iter()
                    .filter(|s| !s.gone)
                    .map(|s| {
                        let ctx = sim_ctx(s, &machine_ad, t, drain.as_ref());
                        hibernate_state(&s.slot, &ctx)
                    })
                    .collect();
                if let Some(state) = machine_hibernate_state(&states) {
                    emit(json!({"t": t, "effect": "hibernate", "state": state}));
                }
                push(&mut queue, t + hibernate_every, Due::Hibernate);
            }
            Due::Benchmarked(i) => {
                // The benchmarks leave their time stamp in the machine ad,
                // as the daemon's do (Mips and KFlops are machine inputs).
                attrs.retain(|(n, _, _)| !n.eq_ignore_ascii_case("LastBenchmark"));
                attrs.push(("LastBenchmark".into(), Value::Int(t), t));
                machine_ad = self::machine_ad(&attrs, t);
                inputs.push((i, Input::BenchmarksDone));
            }
            Due::Alive(i) => {
                let s = &mut slots[i];
                if s.next_alive != Some(t) {
                    continue;
                }
                s.next_alive = None;
                if !s.gone && !s.claimant_gone {
                    inputs.push((i, Input::Alive));
                }
            }
            Due::Exit(i, claim) => {
                let s = &slots[i].slot;
                if !slots[i].gone && s.starter && s.claim.as_ref().is_some_and(|c| c.id == claim) {
                    inputs.push((i, Input::StarterExited));
                }
            }
        }
        // Inputs can cause further inputs at the same time (a fetch
        // answered, a killed starter exiting).
        let mut guard = 0;
        let mut touched: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
        while let Some((i, input)) = (!inputs.is_empty()).then(|| inputs.remove(0)) {
            guard += 1;
            if guard > 10_000 {
                return Err(ScenarioError(format!(
                    "t = {t}: too many steps at one instant"
                )));
            }
            if slots[i].gone {
                continue;
            }
            touched.insert(i);
            let mut born: Vec<(String, SlotEvent)> = Vec::new();
            let mut exits: Vec<(i64, usize, u64)> = Vec::new();
            let mut bench: Vec<(i64, usize)> = Vec::new();
            let s = &mut slots[i];
            let ctx = sim_ctx(s, &machine_ad, t, drain.as_ref());
            let d = decide(&s.slot, &ctx, &input);
            if !d.events.is_empty() {
                record(&s.slot.id, &d.events)
                    .map_err(|e| ScenarioError(format!("t = {t}: cannot record events: {e}")))?;
            }
            for e in &d.events {
                if matches!(
                    e,
                    SlotEvent::DynamicSlotCreated { .. } | SlotEvent::SlotDeleted { .. }
                ) {
                    born.push((s.slot.id.clone(), e.clone()));
                }
                if let SlotEvent::ActivityChanged {
                    state,
                    activity,
                    transition,
                    why,
                    ..
                } = e
                {
                    let tr = if *transition == 0 {
                        Json::Null
                    } else {
                        Json::String(transition.to_string())
                    };
                    emit(json!({
                        "t": t,
                        "slot": s.slot.name,
                        "from": [s.slot.state.to_string(), s.slot.activity.to_string()],
                        "to": [state.to_string(), activity.to_string()],
                        "transition": tr,
                        "why": why,
                    }));
                }
                apply(&mut s.slot, e);
            }
            for eff in d.effects {
                let name = s.slot.name.clone();
                match eff {
                    Effect::FetchWork => {
                        emit(json!({"t": t, "slot": name, "effect": "fetch_work"}));
                        let kw = s.policy.keyword.clone().unwrap_or_default();
                        let pick = offers.iter().position(|(_, k)| {
                            k.as_deref().is_none_or(|k| k.eq_ignore_ascii_case(&kw))
                        });
                        match pick.and_then(|p| offers.remove(p)) {
                            Some((job, k)) => {
                                inputs.push((i, Input::FetchedJob(job.clone())));
                                // Kept in case REPLY_FETCH says reject.
                                pending[i] = Some((job, k));
                            }
                            None => inputs.push((i, Input::FetchedNothing)),
                        }
                    }
                    Effect::ReplyFetch { accept, .. } => {
                        emit(
                            json!({"t": t, "slot": name, "effect": "reply_fetch", "accept": accept}),
                        );
                        let offered = pending[i].take();
                        if !accept {
                            // The site's REPLY_FETCH puts a rejected job
                            // back at the end of its queue.
                            if let Some(o) = offered {
                                offers.push_back(o);
                            }
                        }
                    }
                    Effect::ReplyClaim { accept } => {
                        emit(
                            json!({"t": t, "slot": name, "effect": "reply_claim", "accept": accept}),
                        );
                    }
                    Effect::SpawnStarter { job } => {
                        emit(json!({"t": t, "slot": name, "effect": "spawn_starter"}));
                        // A simulated job with `SimRunTime = N` exits N s later.
                        let env = crate::classad::FixedEnv::new(t);
                        let run = crate::classad::parse_ad(&job)
                            .ok()
                            .map(|ad| ad.eval_attr("SimRunTime", &env));
                        if let (Some(Value::Int(n)), Some(c)) = (run, s.slot.claim.as_ref()) {
                            exits.push((t + n.max(0), i, c.id));
                        }
                    }
                    Effect::Suspend => emit(json!({"t": t, "slot": name, "effect": "suspend"})),
                    Effect::Continue => emit(json!({"t": t, "slot": name, "effect": "continue"})),
                    Effect::SoftKill => {
                        emit(json!({"t": t, "slot": name, "effect": "soft_kill"}));
                        // A simulated job leaves at once, unless its ad says
                        // `SimIgnoresSoftKill = true`.
                        let env = crate::classad::FixedEnv::new(t);
                        let stays = s.slot.claim.as_ref().is_some_and(|c| {
                            crate::classad::parse_ad(&c.job).is_ok_and(|ad| {
                                matches!(
                                    ad.eval_attr("SimIgnoresSoftKill", &env),
                                    Value::Bool(true)
                                )
                            })
                        });
                        if !stays {
                            inputs.push((i, Input::StarterExited));
                        }
                    }
                    Effect::HardKill | Effect::KillStarter => {
                        emit(json!({"t": t, "slot": name, "effect": "hard_kill"}));
                        inputs.push((i, Input::StarterExited));
                    }
                    Effect::EvictClaim { .. } => {
                        emit(json!({"t": t, "slot": name, "effect": "evict_claim"}))
                    }
                    // The simulated client starts and stops at once.
                    Effect::StartBackfill => {
                        emit(json!({"t": t, "slot": name, "effect": "start_backfill"}));
                        inputs.push((i, Input::BackfillStarted));
                    }
                    Effect::KillBackfill => {
                        emit(json!({"t": t, "slot": name, "effect": "kill_backfill"}));
                        inputs.push((i, Input::BackfillExited));
                    }
                    Effect::RunBenchmarks => {
                        emit(json!({"t": t, "slot": name, "effect": "benchmark"}));
                        // They take `SimBenchmarkTime` seconds (a machine
                        // input; default 1).
                        let took = match machine_ad
                            .eval_attr("SimBenchmarkTime", &crate::classad::FixedEnv::new(t))
                        {
                            Value::Int(n) => n.max(0),
                            _ => 1,
                        };
                        bench.push((t + took, i));
                    }
                }
            }
            for (at, slot, claim) in exits {
                push(&mut queue, at, Due::Exit(slot, claim));
            }
            for (at, slot) in bench.drain(..) {
                push(&mut queue, at, Due::Benchmarked(slot));
            }
            for (owner, e) in born {
                match e {
                    SlotEvent::DynamicSlotCreated {
                        sub,
                        resources,
                        claim,
                        ..
                    } => {
                        let id = format!("{owner}_{sub}");
                        let policy = Policy::from_config(&config, &id, slots[i].spec.type_id)
                            .map_err(|e| ScenarioError(format!("policy: {e}")))?;
                        let mut spec = slots[i].spec.clone();
                        spec.partitionable = false;
                        let kind = SlotKind::Dynamic {
                            parent: owner.clone(),
                        };
                        emit(json!({"t": t, "slot": format!("{id}@{host}"),
                            "effect": "dynamic_slot_created", "parent": slots[i].slot.name}));
                        let slot = Slot::with(&id, &host, t, kind, resources);
                        record(
                            &id,
                            &[SlotEvent::Snapshot {
                                at: t,
                                slot: Box::new(slot.clone()),
                            }],
                        )
                        .map_err(|e| {
                            ScenarioError(format!("t = {t}: cannot record events: {e}"))
                        })?;
                        slots.push(SimSlot {
                            slot,
                            spec,
                            policy,
                            next_eval: t,
                            gone: false,
                            next_alive: None,
                            claimant_gone: slots[i].claimant_gone,
                        });
                        pending.push(None);
                        inputs.push((slots.len() - 1, Input::Claimed(claim)));
                    }
                    SlotEvent::SlotDeleted { .. } => {
                        slots[i].gone = true;
                        let resources = slots[i].slot.resources.clone();
                        emit(
                            json!({"t": t, "slot": slots[i].slot.name, "effect": "dynamic_slot_deleted"}),
                        );
                        if let SlotKind::Dynamic { parent } = &slots[i].slot.kind {
                            let sub = owner
                                .rsplit('_')
                                .next()
                                .and_then(|n| n.parse().ok())
                                .unwrap_or(0);
                            if let Some(p) = slots.iter().position(|x| x.slot.id == *parent) {
                                inputs.push((p, Input::ChildDeleted { sub, resources }));
                            }
                        }
                    }
                    _ => {}
                }
            }
            // The simulated schedd activates every claim it was granted at
            // once. Only the slot that just decided can have a new claim (a
            // new dynamic slot gets its claim from its own `Claimed` input).
            let x = &slots[i];
            let waiting = !x.gone
                && !x.slot.starter
                && x.slot.state == State::Claimed
                && x.slot.activity == super::slot::Activity::Idle
                && x.slot
                    .claim
                    .as_ref()
                    .is_some_and(|c| !c.fetched && c.ending.is_none() && c.activations == 0);
            if waiting && !inputs.contains(&(i, Input::Activate)) {
                inputs.push((i, Input::Activate));
            }
            // When the last slot has drained, every drained slot moves to
            // Drained/Idle at once.
            if let Some(d) = &mut drain {
                let all = slots
                    .iter()
                    .filter(|x| !x.gone)
                    .all(|x| x.slot.state == State::Drained);
                if all && !d.all_drained {
                    for (j, x) in slots.iter().enumerate() {
                        if !x.gone && x.slot.activity == super::slot::Activity::Retiring {
                            inputs.push((j, Input::Evaluate));
                        }
                    }
                }
                d.all_drained = all;
            }
        }
        check_resources(&slots, &m).map_err(|e| ScenarioError(format!("t = {t}: {e}")))?;
        if drain.as_ref().is_some_and(|d| d.shutdown)
            && slots
                .iter()
                .all(|s| s.gone || (s.slot.claim.is_none() && !s.slot.starter && !s.slot.backfill))
        {
            emit(json!({"t": t, "effect": "exit_daemon"}));
            return Ok(slots.into_iter().map(|s| s.slot).collect());
        }
        // Reschedule the timers of the slots that decided something: the
        // next evaluation (sooner if the new state polls more often), and
        // the fetch timer.
        for i in touched {
            let s = &mut slots[i];
            if s.gone {
                continue;
            }
            // The claimant of an external claim keeps it alive every
            // ALIVE_INTERVAL, more often for a short lease (a third of
            // it, at least 10 s), as a schedd does.
            let lease = [&s.slot.claim, &s.slot.preempting]
                .into_iter()
                .flatten()
                .filter_map(|c| c.lease)
                .min();
            if let Some(lease) = lease
                && s.next_alive.is_none_or(|a| a <= t)
                && !s.claimant_gone
            {
                let at = t + alive_interval.min((lease / 3).max(10));
                s.next_alive = Some(at);
                push(&mut queue, at, Due::Alive(i));
            }
            let want = t + evaluation_interval(&s.slot, &s.policy, t);
            if s.next_eval <= t || want < s.next_eval {
                s.next_eval = want;
                push(&mut queue, s.next_eval, Due::Evaluate(i));
            }
            let ctx = sim_ctx(s, &machine_ad, t, drain.as_ref());
            if let Some(f) = next_fetch_at(&s.slot, &ctx)
                && f > t
                && f < s.next_eval
            {
                push(&mut queue, f, Due::Fetch(i));
            }
        }
    }
    Ok(slots.into_iter().map(|s| s.slot).collect())
}

/// A partitionable slot's free resources and its live dynamic slots' always
/// add up to what it was given.
fn check_resources(slots: &[SimSlot], m: &super::layout::Machine) -> Result<(), String> {
    for p in slots
        .iter()
        .filter(|s| s.slot.kind == SlotKind::Partitionable)
    {
        let mut cpus = p.slot.resources.cpus;
        let mut memory = p.slot.resources.memory_mb;
        for c in slots.iter().filter(|s| !s.gone) {
            if let SlotKind::Dynamic { parent } = &c.slot.kind
                && *parent == p.slot.id
            {
                cpus += c.slot.resources.cpus;
                memory += c.slot.resources.memory_mb;
            }
        }
        let spec = &p.spec;
        if (cpus - spec.cpus).abs() > 1e-9 || memory != spec.memory_mb {
            return Err(format!(
                "resources of {} and its dynamic slots do not add up: {cpus} CPUs, {memory} MiB of {} and {} (disk {})",
                p.slot.id,
                spec.cpus,
                spec.memory_mb,
                spec.disk_kb(m)
            ));
        }
    }
    Ok(())
}

/// Machine attributes at time `t`: idle times grow from when they were set.
fn machine_ad(attrs: &[(String, Value, i64)], t: i64) -> ClassAd {
    let mut ad = ClassAd::new();
    for (k, v, since) in attrs {
        let grows = k.eq_ignore_ascii_case("KeyboardIdle") || k.eq_ignore_ascii_case("ConsoleIdle");
        match (grows, v) {
            (true, Value::Int(i)) => ad.insert_value(k.as_str(), i + (t - since)),
            _ => ad.insert_value(k.as_str(), v.clone()),
        }
    }
    ad
}
