//! A scenario of `roost policy simulate`, read from TOML: the configuration,
//! the machine, and what happens when (machine attributes set, jobs offered
//! to FETCH_WORK, jobs exiting, external claims and matches, commands).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::classad::old::parse_ad_auto;
use crate::classad::unparse::ad_to_string;
use crate::classad::{ClassAd, Limits, Value};

use super::super::engine::DrainHow;
use super::super::layout::MachineInputs;

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
pub(super) enum Action {
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
    pub(super) inputs: MachineInputs,
    pub(super) attrs: Vec<(String, Value)>,
    pub(super) events: Vec<(i64, Action)>,
}

/// A scenario's machine attribute or `set` value as a ClassAd value;
/// `None` for a TOML value that has none (an array, a table, a date).
fn toml_to_value(v: &toml::Value) -> Option<Value> {
    Some(match v {
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Real(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::String(s) => Value::from(s.as_str()),
        _ => return None,
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
                    let value =
                        toml_to_value(v).ok_or_else(|| bad(&format!("unsupported value {v}")))?;
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
                        toml_to_value(x)
                            .ok_or_else(|| bad(format!("{k}: unsupported value {x}")))?,
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

/// The scenario's machine attributes, each set at time 0, with
/// `LastBenchmark = 0` unless the scenario gives it: before any benchmark
/// has run the daemon's machine ad says 0 (never), which HTCondor's default
/// `RunBenchmarks = LastBenchmark == 0` reads as "run them now".
pub(super) fn machine_attrs(given: &[(String, Value)]) -> Vec<(String, Value, i64)> {
    let mut attrs: Vec<(String, Value, i64)> = given
        .iter()
        .map(|(k, v)| (k.clone(), v.clone(), 0))
        .collect();
    if !attrs
        .iter()
        .any(|(n, _, _)| n.eq_ignore_ascii_case("LastBenchmark"))
    {
        attrs.push(("LastBenchmark".into(), Value::Int(0), 0));
    }
    attrs
}

/// Machine attributes at time `t`: idle times grow from when they were set.
pub(super) fn machine_ad(attrs: &[(String, Value, i64)], t: i64) -> ClassAd {
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
