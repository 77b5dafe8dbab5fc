//! The policy knobs of one slot compiled into a [`Policy`]: START and
//! the other expressions HTCondor's startd binds into every slot ad, the
//! timers, the hook keyword, MODIFY_REQUEST_EXPR_*, and the backfill
//! client's job ad. Each knob that does not read is named in the error.

use crate::classad::{ClassAd, Expr, Value, parse_expr};
use crate::config::Config;

/// The policy knobs inserted into every slot ad, as HTCondor's startd does.
pub const POLICY_KNOBS: &[&str] = &[
    "START",
    "IS_OWNER",
    "SUSPEND",
    "CONTINUE",
    "PREEMPT",
    "KILL",
    "WANT_SUSPEND",
    "WANT_VACATE",
    "SUSPEND_VANILLA",
    "CONTINUE_VANILLA",
    "PREEMPT_VANILLA",
    "KILL_VANILLA",
    "WANT_SUSPEND_VANILLA",
    "WANT_VACATE_VANILLA",
    "MaxJobRetirementTime",
    "MachineMaxVacateTime",
    "CLAIM_WORKLIFE",
    "FetchWorkDelay",
    "HIBERNATE",
    "RunBenchmarks",
    "START_BACKFILL",
    "EVICT_BACKFILL",
];

/// HTCondor's value when a knob is not configured at all.
fn builtin_default(knob: &str) -> Option<&'static str> {
    Some(match knob {
        "START" | "CONTINUE" | "WANT_VACATE" => "True",
        "SUSPEND" | "PREEMPT" | "KILL" | "WANT_SUSPEND" | "IS_OWNER" | "START_BACKFILL"
        | "EVICT_BACKFILL" => "False",
        "CLAIM_WORKLIFE" => "1200",
        "MachineMaxVacateTime" => "600",
        _ => return None,
    })
}

/// A policy that cannot be used: names the knob.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{knob}: {message}")]
pub struct PolicyError {
    /// The knob.
    pub knob: String,
    /// What is wrong.
    pub message: String,
}

/// The compiled policy: the knobs as ClassAd expressions plus the timers.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Job hook keyword for this slot, if any.
    pub keyword: Option<String>,
    /// `POLLING_INTERVAL`.
    pub polling_interval: i64,
    /// `UPDATE_INTERVAL`.
    pub update_interval: i64,
    /// `KILLING_TIMEOUT`.
    pub killing_timeout: i64,
    /// `HIBERNATE_CHECK_INTERVAL` (0: never hibernate).
    pub hibernate_check_interval: i64,
    /// `MATCH_TIMEOUT`: how long a Matched slot waits for its claimant.
    pub match_timeout: i64,
    /// The lease of an external claim whose job has no `JobLeaseDuration`:
    /// `MAX_CLAIM_ALIVES_MISSED` × `ALIVE_INTERVAL`.
    pub default_lease: i64,
    /// `ENABLE_BACKFILL` (with `BACKFILL_SYSTEM = BOINC`).
    pub enable_backfill: bool,
    /// The RANK expression (`Rank` in the slot ad).
    pub rank: Option<Expr>,
    /// `MODIFY_REQUEST_EXPR_REQUEST{CPUS,MEMORY,DISK}`, by job attribute.
    pub modify_request: Vec<(String, Expr)>,
    /// `MUST_MODIFY_REQUEST_EXPRS`.
    pub must_modify: bool,
    /// `START && WithinResourceLimits`: the slot's Requirements when it
    /// is willing to be matched and not draining.
    pub(super) requirements: Expr,
    /// The slot's `STARTD_ATTRS`.
    pub attrs: StartdAttrs,
    /// The knobs bound in an ad, the `STARTD_ATTRS`, `Rank` and
    /// `WithinResourceLimits`: what every slot ad starts from (never
    /// changed once built).
    pub(super) template: ClassAd,
}

fn err(knob: &str, message: String) -> PolicyError {
    PolicyError {
        knob: knob.to_string(),
        message,
    }
}

impl Policy {
    /// Reads the policy for slot `slot_id` (`slot1`, `slot1_2`) of slot type
    /// `type_id` from configuration.
    pub fn from_config(
        config: &Config,
        slot_id: &str,
        type_id: u32,
    ) -> Result<Policy, PolicyError> {
        let rank = match config.get("RANK").map_err(|e| err("RANK", e.to_string()))? {
            Some(t) if !t.trim().is_empty() => Some(
                config
                    .parse_knob_expr("RANK", &t)
                    .map_err(|e| err("RANK", e.message))?,
            ),
            _ => None,
        };
        let keyword = config
            .get_first(&[
                &format!("{slot_id}_JOB_HOOK_KEYWORD"),
                "STARTD_JOB_HOOK_KEYWORD",
            ])
            .map_err(|e| err("STARTD_JOB_HOOK_KEYWORD", e.to_string()))?
            .map(|k| k.trim().to_string());
        let int = |knob: &str, default: i64| -> Result<i64, PolicyError> {
            Ok(config
                .int(knob)
                .map_err(|e| err(knob, e.message))?
                .unwrap_or(default))
        };
        let must_modify = config
            .bool("MUST_MODIFY_REQUEST_EXPRS")
            .map_err(|e| err("MUST_MODIFY_REQUEST_EXPRS", e.message))?
            .unwrap_or(false);
        let attrs = StartdAttrs::from_config(config, slot_id)?;
        Ok(Policy {
            template: template(config, rank.as_ref(), &attrs)?,
            attrs,
            requirements: fixed("START && WithinResourceLimits")?,
            modify_request: modify_requests(config, type_id)?,
            must_modify,
            keyword,
            polling_interval: int("POLLING_INTERVAL", 5)?.max(1),
            update_interval: int("UPDATE_INTERVAL", 300)?.max(1),
            killing_timeout: int("KILLING_TIMEOUT", 30)?,
            hibernate_check_interval: int("HIBERNATE_CHECK_INTERVAL", 0)?.max(0),
            match_timeout: int("MATCH_TIMEOUT", 120)?.max(1),
            default_lease: int("MAX_CLAIM_ALIVES_MISSED", 6)?.max(1)
                * int("ALIVE_INTERVAL", 300)?.max(1),
            enable_backfill: backfill_enabled(config)?,
            rank,
        })
    }
}

/// One of the expressions Roost writes itself (never fails to parse).
fn fixed(text: &str) -> Result<Expr, PolicyError> {
    parse_expr(text).map_err(|e| err("WithinResourceLimits", e.to_string()))
}

/// The ad every slot ad starts from: each policy knob (its configured
/// value, else HTCondor's built-in one), the `STARTD_ATTRS`, `Rank` (0.0
/// without RANK) and `WithinResourceLimits`. What the machine's ad and
/// its cron jobs publish is laid over it, as HTCondor lays a slot's
/// dynamic attributes over its configured ones.
fn template(
    config: &Config,
    rank: Option<&Expr>,
    attrs: &StartdAttrs,
) -> Result<ClassAd, PolicyError> {
    let mut template = ClassAd::new();
    for knob in POLICY_KNOBS {
        let text = config
            .get(knob)
            .map_err(|e| err(knob, e.to_string()))?
            .filter(|t| !t.trim().is_empty())
            .or_else(|| builtin_default(knob).map(str::to_string));
        if let Some(text) = text {
            let e = config
                .parse_knob_expr(knob, &text)
                .map_err(|e| err(knob, e.message))?;
            template.insert(*knob, e);
        }
    }
    for (n, e) in &attrs.0 {
        template.insert(n.as_str(), e.clone());
    }
    match rank {
        Some(r) => template.insert("Rank", r.clone()),
        None => template.insert_value("Rank", Value::Real(0.0)),
    }
    template.insert(
        "WithinResourceLimits",
        fixed(
            "MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus && MY.Memory > 0 && \
             TARGET.RequestMemory <= MY.Memory && MY.Disk > 0 && TARGET.RequestDisk <= MY.Disk",
        )?,
    );
    Ok(template)
}

/// `MODIFY_REQUEST_EXPR_REQUEST{CPUS,MEMORY,DISK}` (each overridden by
/// `SLOT_TYPE_<type_id>_…`), by the job attribute each rewrites.
fn modify_requests(config: &Config, type_id: u32) -> Result<Vec<(String, Expr)>, PolicyError> {
    let mut modify_request = Vec::new();
    for (attr, knob) in [
        ("RequestCpus", "MODIFY_REQUEST_EXPR_REQUESTCPUS"),
        ("RequestMemory", "MODIFY_REQUEST_EXPR_REQUESTMEMORY"),
        ("RequestDisk", "MODIFY_REQUEST_EXPR_REQUESTDISK"),
    ] {
        let per_type = format!("SLOT_TYPE_{type_id}_{knob}");
        let found = config
            .get_first_named(&[&per_type, knob])
            .map_err(|e| err(knob, e.to_string()))?;
        if let Some((name, t)) = found {
            let e = config
                .parse_knob_expr(name, &t)
                .map_err(|e| err(name, e.message))?;
            modify_request.push((attr.to_string(), e));
        }
    }
    Ok(modify_request)
}

/// `ENABLE_BACKFILL`, checked: backfill needs `BACKFILL_SYSTEM = BOINC`
/// and a client job ([`backfill_job`]) that reads.
fn backfill_enabled(config: &Config) -> Result<bool, PolicyError> {
    let enabled = config
        .bool("ENABLE_BACKFILL")
        .map_err(|e| err("ENABLE_BACKFILL", e.message))?
        .unwrap_or(false);
    if enabled {
        backfill_job(config)?;
        let system = config
            .get("BACKFILL_SYSTEM")
            .map_err(|e| err("BACKFILL_SYSTEM", e.to_string()))?
            .unwrap_or_default();
        if !system.trim().eq_ignore_ascii_case("BOINC") {
            return Err(err(
                "BACKFILL_SYSTEM",
                format!(
                    "is \"{}\" but ENABLE_BACKFILL is true; the only backfill system is BOINC",
                    system.trim()
                ),
            ));
        }
    }
    Ok(enabled)
}

/// The backfill client as a job ad for the starter, from HTCondor's
/// `BOINC_*` knobs: `BOINC_Executable`, `BOINC_InitialDir` and
/// `BOINC_Universe` (vanilla) are required; `BOINC_Arguments`,
/// `BOINC_Environment` (V1, or V2 in double quotes), `BOINC_Output`,
/// `BOINC_Error` and `BOINC_Owner` (the user it runs as when the daemon is
/// root) are optional.
pub fn backfill_job(config: &Config) -> Result<ClassAd, PolicyError> {
    let get = |knob: &str| -> Result<Option<String>, PolicyError> {
        Ok(config
            .get(knob)
            .map_err(|e| err(knob, e.to_string()))?
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty()))
    };
    let required = |knob: &str| -> Result<String, PolicyError> {
        get(knob)?.ok_or_else(|| err(knob, "is required when ENABLE_BACKFILL is true".into()))
    };
    let mut ad = ClassAd::new();
    ad.insert_value("Cmd", required("BOINC_Executable")?.as_str());
    ad.insert_value("Iwd", required("BOINC_InitialDir")?.as_str());
    let universe = required("BOINC_Universe")?;
    if !(universe.eq_ignore_ascii_case("vanilla") || universe == "5") {
        return Err(err(
            "BOINC_Universe",
            format!("is \"{universe}\"; the backfill client runs only in the vanilla universe"),
        ));
    }
    ad.insert_value("JobUniverse", 5i64);
    // V2 when quoted, as HTCondor's raw V1-or-V2 strings.
    let v1_or_v2 = |text: String, v1: &str, v2: &str| match text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
    {
        Some(inner) => (v2.to_string(), inner.to_string()),
        None => (v1.to_string(), text),
    };
    if let Some(a) = get("BOINC_Arguments")? {
        let (name, value) = v1_or_v2(a, "Args", "Arguments");
        ad.insert_value(name.as_str(), value.as_str());
    }
    if let Some(e) = get("BOINC_Environment")? {
        let (name, value) = v1_or_v2(e, "Env", "Environment");
        ad.insert_value(name.as_str(), value.as_str());
    }
    for (knob, attr) in [
        ("BOINC_Output", "Out"),
        ("BOINC_Error", "Err"),
        ("BOINC_Owner", "Owner"),
    ] {
        if let Some(v) = get(knob)? {
            ad.insert_value(attr, v.as_str());
        }
    }
    ad.insert_value("ClusterId", 0i64);
    ad.insert_value("ProcId", 0i64);
    ad.insert_value("IsBackfillClient", true);
    Ok(ad)
}

/// `STARTD_ATTRS` (and `SLOT<N>_STARTD_ATTRS`, and their older names
/// `STARTD_EXPRS`, `SLOT<N>_STARTD_EXPRS`, which HTCondor still reads and
/// the eventd's shutdown configuration extends) resolved for one slot:
/// each name with its expression (`SLOT<N>_<name>` overriding `<name>`).
/// They are part of the slot's [`Policy`]: bound in the ad every policy
/// expression is evaluated in, as they are in the ad the slot publishes.
#[derive(Clone, Debug, Default)]
pub struct StartdAttrs(pub Vec<(String, Expr)>);

impl StartdAttrs {
    /// Reads the attributes slot `slot_id` (`slot1`; a dynamic slot
    /// `slot1_2` reads its partitionable slot's `SLOT1_` knobs, as in
    /// HTCondor) publishes.
    pub fn from_config(config: &Config, slot_id: &str) -> Result<StartdAttrs, PolicyError> {
        let slot_id = slot_id.split('_').next().unwrap_or(slot_id);
        let mut names: Vec<String> = Vec::new();
        for knob in [
            "STARTD_ATTRS".to_string(),
            "STARTD_EXPRS".to_string(),
            format!("{slot_id}_STARTD_ATTRS"),
            format!("{slot_id}_STARTD_EXPRS"),
        ] {
            let list = config.get(&knob).map_err(|e| err(&knob, e.to_string()))?;
            for n in list
                .unwrap_or_default()
                .split([',', ' ', '\t', '\n'])
                .filter(|s| !s.is_empty())
            {
                if !names.iter().any(|x| x.eq_ignore_ascii_case(n)) {
                    names.push(n.to_string());
                }
            }
        }
        let mut out = Vec::new();
        for n in names {
            let per_slot = format!("{slot_id}_{n}");
            let found = config
                .get_first_named(&[&per_slot, &n])
                .map_err(|e| err(&n, e.to_string()))?;
            if let Some((name, t)) = found {
                let e = config
                    .parse_knob_expr(name, &t)
                    .map_err(|e| err(name, e.message))?;
                out.push((n, e));
            }
        }
        Ok(StartdAttrs(out))
    }
}
