//! `decide`: what a slot does next, given its state, the policy, the
//! machine and an input (a timer, a hook's answer, a starter's exit, a
//! command). Returns the events to append (then `apply`) and the effects
//! for the shell to carry out. Follows HTCondor's `ResState::eval_policy`
//! and the fetch-work rules (`../shared/reference/htcondor-facts.md` §1,
//! §5); where HTCondor loses a fetched job, Roost keeps it.

use crate::classad::unparse::ad_to_string;
use crate::classad::{ClassAd, Evaluator, Expr, FixedEnv, Name, Value, parse_ad, parse_expr};
use crate::config::Config;

pub use super::drain::{Drain, DrainHow, OnCompletion, drain_check};
use super::layout::SlotSpec;
use super::slot::{Activity, Claim, EndCause, Resources, Slot, SlotEvent, SlotKind, State, apply};

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
    requirements: Expr,
    /// The slot ad with the knobs bound, reused by `slot_ad`.
    template: std::cell::RefCell<ClassAd>,
    /// What `slot_ad` last copied into the template.
    filled: std::cell::RefCell<Filled>,

    /// Parsed job ads by text, so a running job is not parsed at every
    /// evaluation (at most [`JOB_CACHE`]; cleared when full).
    jobs: std::cell::RefCell<std::collections::HashMap<String, ClassAd>>,
}

/// What the template holds beyond the knobs: the machine ad whose
/// attributes it has (kept, so compared by identity: a changed machine ad
/// is a new one), and whether its Requirements is the policy's own.
#[derive(Clone, Debug, Default)]
struct Filled {
    machine: Option<ClassAd>,
    own_requirements: bool,
}

/// How many parsed job ads a slot's policy keeps. A slot evaluates its
/// claim's job and at most a waiting claim's, so a few suffice; every job a
/// slot ever ran is a different text, and a cache of thousands held
/// megabytes per slot of jobs long gone.
const JOB_CACHE: usize = 8;

impl Policy {
    /// The job ad of a claim, parsed once.
    fn job_ad(&self, text: &str) -> Option<ClassAd> {
        if let Some(ad) = self.jobs.borrow().get(text) {
            return Some(ad.clone());
        }
        let ad = parse_ad(text).ok()?;
        let mut cache = self.jobs.borrow_mut();
        if cache.len() >= JOB_CACHE {
            cache.clear();
        }
        cache.insert(text.to_string(), ad.clone());
        Some(ad)
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
        let err = |knob: &str, message: String| PolicyError {
            knob: knob.to_string(),
            message,
        };
        let mut exprs = Vec::new();
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
                exprs.push(((*knob).to_string(), e));
            }
        }
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
        let enable_backfill = config
            .bool("ENABLE_BACKFILL")
            .map_err(|e| err("ENABLE_BACKFILL", e.message))?
            .unwrap_or(false);
        if enable_backfill {
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
        let must_modify = config
            .bool("MUST_MODIFY_REQUEST_EXPRS")
            .map_err(|e| err("MUST_MODIFY_REQUEST_EXPRS", e.message))?
            .unwrap_or(false);
        let fixed =
            |text: &str| parse_expr(text).map_err(|e| err("WithinResourceLimits", e.to_string()));
        let mut template = ClassAd::new();
        for (name, e) in &exprs {
            template.insert(name.as_str(), e.clone());
        }
        match &rank {
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
        Ok(Policy {
            template: std::cell::RefCell::new(template),
            filled: std::cell::RefCell::default(),
            jobs: std::cell::RefCell::new(std::collections::HashMap::new()),
            requirements: fixed("START && WithinResourceLimits")?,
            modify_request,
            must_modify,
            keyword,
            polling_interval: int("POLLING_INTERVAL", 5)?.max(1),
            update_interval: int("UPDATE_INTERVAL", 300)?.max(1),
            killing_timeout: int("KILLING_TIMEOUT", 30)?,
            hibernate_check_interval: int("HIBERNATE_CHECK_INTERVAL", 0)?.max(0),
            match_timeout: int("MATCH_TIMEOUT", 120)?.max(1),
            default_lease: int("MAX_CLAIM_ALIVES_MISSED", 6)?.max(1)
                * int("ALIVE_INTERVAL", 300)?.max(1),
            enable_backfill,
            rank,
        })
    }
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
            .map_err(|e| PolicyError {
                knob: knob.into(),
                message: e.to_string(),
            })?
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty()))
    };
    let required = |knob: &str| -> Result<String, PolicyError> {
        get(knob)?.ok_or_else(|| PolicyError {
            knob: knob.into(),
            message: "is required when ENABLE_BACKFILL is true".into(),
        })
    };
    let mut ad = ClassAd::new();
    ad.insert_value("Cmd", required("BOINC_Executable")?.as_str());
    ad.insert_value("Iwd", required("BOINC_InitialDir")?.as_str());
    let universe = required("BOINC_Universe")?;
    if !(universe.eq_ignore_ascii_case("vanilla") || universe == "5") {
        return Err(PolicyError {
            knob: "BOINC_Universe".into(),
            message: format!(
                "is \"{universe}\"; the backfill client runs only in the vanilla universe"
            ),
        });
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

/// What the slot is asked to react to.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// The periodic policy evaluation.
    Evaluate,
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

/// The answer to a job offered by FETCH_WORK or by a claim request.
fn reply(fetched: bool, accept: bool, job: String) -> Effect {
    if fetched {
        Effect::ReplyFetch { accept, job }
    } else {
        Effect::ReplyClaim { accept }
    }
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
}

/// The slot ad a policy is evaluated in: machine attributes, resources,
/// state, and the policy knobs.
pub fn slot_ad(slot: &Slot, ctx: &Ctx<'_>) -> ClassAd {
    // The policy keeps one ad with the knobs bound; each call overwrites
    // the slot's dynamic attributes in place (the ad is not shared between
    // calls, so nothing is copied) and hands out a shared clone. What has
    // not changed since the last call (the machine's attributes, strings,
    // Requirements) is not copied in again.
    let mut ad = ctx.policy.template.borrow_mut();
    let mut filled = ctx.policy.filled.borrow_mut();
    if !(filled.machine.as_ref()).is_some_and(|m| ClassAd::ptr_eq(m, ctx.machine)) {
        for (name, e) in ctx.machine.iter() {
            ad.insert(name.clone(), e.clone());
        }
        filled.machine = Some(ctx.machine.clone());
        // Whatever the machine ad bound is bound again below.
        filled.own_requirements = false;
    }
    let n = &*NAMES;
    set_str(&mut ad, &n[0], slot.name.as_str());
    set_str(&mut ad, &n[1], state_str(slot.state));
    set_str(&mut ad, &n[2], activity_str(slot.activity));
    ad.insert_value(n[3].clone(), slot.entered_state);
    ad.insert_value(n[4].clone(), slot.entered_activity);
    ad.insert_value(n[5].clone(), ctx.now);
    #[allow(clippy::cast_possible_truncation)]
    ad.insert_value(n[6].clone(), slot.resources.cpus.round() as i64);
    ad.insert_value(n[7].clone(), slot.resources.memory_mb);
    ad.insert_value(n[8].clone(), slot.resources.disk_kb);
    ad.insert_value(n[9].clone(), i64::from(ctx.spec.id));
    ad.insert_value(n[10].clone(), i64::from(ctx.spec.type_id));
    ad.insert_value(n[11].clone(), slot.kind == SlotKind::Partitionable);
    ad.insert_value(n[12].clone(), matches!(slot.kind, SlotKind::Dynamic { .. }));
    for (k, v) in &slot.resources.custom {
        ad.insert_value(k.as_str(), *v);
    }
    let claim = slot.claim.as_ref();
    ad.insert_value(
        n[13].clone(),
        claim.map_or(Value::Undefined, |c| Value::Real(c.rank)),
    );
    ad.insert_value(
        n[14].clone(),
        claim
            .and_then(|c| c.job_start)
            .map_or(Value::Undefined, Value::Int),
    );
    // While draining, the draining START expression stands in for START in
    // Requirements (HTCondor leaves START itself alone, so drained slots
    // still fetch, and reject what they get).
    if matches!(
        slot.state,
        State::Matched | State::Preempting | State::Drained
    ) {
        ad.insert_value(n[15].clone(), false);
        filled.own_requirements = false;
    } else if ctx.drain.is_some() || !filled.own_requirements {
        ad.insert(n[15].clone(), requirements(ctx).clone());
        filled.own_requirements = ctx.drain.is_none();
    }
    ad.clone()
}

/// The slot's Requirements when it is willing to be matched: the
/// draining START expression's while draining, else `START &&
/// WithinResourceLimits`.
fn requirements<'a>(ctx: &'a Ctx<'_>) -> &'a Expr {
    match ctx.drain {
        Some(d) => &d.requirements,
        None => &ctx.policy.requirements,
    }
}

/// Binds `name` to the string `s` unless it already is.
fn set_str(ad: &mut ClassAd, name: &Name, s: &str) {
    let same = matches!(ad.get(name).and_then(Expr::as_literal),
        Some(Value::Str(v)) if v.as_bytes() == s.as_bytes());
    if !same {
        ad.insert_value(name.clone(), s);
    }
}

/// When a Matched slot gives up waiting for its claimant: MATCH_TIMEOUT
/// after the match.
fn match_expires(slot: &Slot, policy: &Policy) -> i64 {
    slot.matched_at.unwrap_or(slot.entered_state) + policy.match_timeout
}

/// Names of the attributes `slot_ad` sets on every call, interned once.
static NAMES: std::sync::LazyLock<Vec<Name>> = std::sync::LazyLock::new(|| {
    [
        "Name",
        "State",
        "Activity",
        "EnteredCurrentState",
        "EnteredCurrentActivity",
        "MyCurrentTime",
        "Cpus",
        "Memory",
        "Disk",
        "SlotID",
        "SlotTypeID",
        "PartitionableSlot",
        "DynamicSlot",
        "CurrentRank",
        "JobStart",
        "Requirements",
    ]
    .iter()
    .map(|n| Name::new(n))
    .collect()
});

fn state_str(s: State) -> &'static str {
    match s {
        State::Owner => "Owner",
        State::Unclaimed => "Unclaimed",
        State::Matched => "Matched",
        State::Claimed => "Claimed",
        State::Preempting => "Preempting",
        State::Backfill => "Backfill",
        State::Drained => "Drained",
    }
}

fn activity_str(a: Activity) -> &'static str {
    match a {
        Activity::Idle => "Idle",
        Activity::Busy => "Busy",
        Activity::Suspended => "Suspended",
        Activity::Retiring => "Retiring",
        Activity::Vacating => "Vacating",
        Activity::Killing => "Killing",
        Activity::Benchmarking => "Benchmarking",
    }
}

/// A working copy: events are applied as they are produced, so later
/// steps of the same decision see their effect.
struct Work<'c, 'a> {
    /// The slot as the decision's events leave it: borrowed until the
    /// first event, so a query or a decision that changes nothing copies
    /// nothing.
    s: std::borrow::Cow<'c, Slot>,
    ctx: &'c Ctx<'a>,
    out: Decision,
    /// The slot ad and the parsed job, built once until an event changes
    /// the slot.
    ad: std::cell::RefCell<Option<ClassAd>>,
    job_ad: std::cell::RefCell<Option<Option<ClassAd>>>,
}

fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Int(i) => Some(*i != 0),
        Value::Real(r) => Some(*r != 0.0),
        _ => None,
    }
}

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        #[allow(clippy::cast_possible_truncation)]
        Value::Real(r) if r.is_finite() => Some(*r as i64),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

fn is_vanilla(job: &ClassAd, env: &FixedEnv) -> bool {
    match job.eval_attr("JobUniverse", env) {
        Value::Int(u) => u == 5,
        _ => true,
    }
}

impl<'c, 'a> Work<'c, 'a> {
    fn new(slot: &'c Slot, ctx: &'c Ctx<'a>) -> Self {
        Work {
            s: std::borrow::Cow::Borrowed(slot),
            ctx,
            out: Decision::default(),
            ad: std::cell::RefCell::new(None),
            job_ad: std::cell::RefCell::new(None),
        }
    }

    fn emit(&mut self, e: SlotEvent) {
        apply(self.s.to_mut(), &e);
        self.out.events.push(e);
        self.ad.replace(None);
        self.job_ad.replace(None);
    }

    /// The slot ad (ClassAds are shared on clone, so this is cheap).
    fn ad(&self) -> ClassAd {
        if let Some(a) = &*self.ad.borrow() {
            return a.clone();
        }
        let a = slot_ad(&self.s, self.ctx);
        self.ad.replace(Some(a.clone()));
        a
    }

    fn effect(&mut self, e: Effect) {
        self.out.effects.push(e);
    }

    fn job(&self) -> Option<ClassAd> {
        if let Some(j) = &*self.job_ad.borrow() {
            return j.clone();
        }
        let j = self
            .s
            .claim
            .as_ref()
            .and_then(|c| self.ctx.policy.job_ad(&c.job));
        self.job_ad.replace(Some(j.clone()));
        j
    }

    /// Evaluates a slot-ad attribute with the current job as TARGET.
    fn eval(&self, name: &str, job: Option<&ClassAd>) -> Value {
        let ad = self.ad();
        let env = FixedEnv::new(self.ctx.now);
        Evaluator::new(Some(&ad), job, &env).eval_attr(&Name::new(name))
    }

    /// A boolean knob, trying `<NAME>_VANILLA` first for vanilla jobs;
    /// `None` when neither evaluates to a boolean.
    fn knob(&self, name: &str, with_vanilla: bool) -> Option<bool> {
        let job = self.job();
        let env = FixedEnv::new(self.ctx.now);
        if with_vanilla
            && job.as_ref().is_some_and(|j| is_vanilla(j, &env))
            && let Some(b) = truth(&self.eval(&format!("{name}_VANILLA"), job.as_ref()))
        {
            return Some(b);
        }
        truth(&self.eval(name, job.as_ref()))
    }

    fn change(&mut self, state: State, activity: Activity, transition: u8, why: &str) {
        let was = (self.s.state, self.s.activity);
        self.emit(SlotEvent::ActivityChanged {
            at: self.ctx.now,
            state,
            activity,
            transition,
            why: why.to_string(),
        });
        if was.1 == Activity::Suspended
            && activity != Activity::Suspended
            && state == State::Claimed
        {
            self.emit(SlotEvent::JobContinued { at: self.ctx.now });
            self.effect(Effect::Continue);
        }
        self.enter(was.0 != state, was);
    }

    /// What entering the new state and activity sets off.
    fn enter(&mut self, state_changed: bool, was: (State, Activity)) {
        match (self.s.state, self.s.activity) {
            (State::Claimed, Activity::Idle) => {
                let fetched = self
                    .s
                    .claim
                    .as_ref()
                    .is_some_and(|c| c.fetched && c.ending.is_none());
                if fetched
                    && (state_changed
                        || was.0 == State::Claimed && !self.s.starter && was.1 == Activity::Idle)
                {
                    self.spawn();
                }
            }
            (State::Claimed, Activity::Busy) if self.in_retirement() => {
                self.change(
                    State::Claimed,
                    Activity::Retiring,
                    13,
                    "better claim waiting",
                );
            }
            (State::Claimed, Activity::Suspended) => {
                self.emit(SlotEvent::JobSuspended { at: self.ctx.now });
                self.effect(Effect::Suspend);
            }
            (State::Preempting, Activity::Vacating) => {
                if self.s.starter {
                    self.effect(Effect::SoftKill);
                } else {
                    self.leave_preempting();
                }
            }
            (State::Preempting, Activity::Killing) => {
                if self.s.starter {
                    self.effect(Effect::HardKill);
                } else {
                    self.leave_preempting();
                }
            }
            (State::Backfill, Activity::Idle) => {
                // Unless the slot leaves, the client is (re)started.
                let stays = !self.leave_backfill();
                if stays {
                    self.effect(Effect::StartBackfill);
                }
            }
            (State::Backfill, Activity::Killing) => {
                if self.s.backfill {
                    self.effect(Effect::KillBackfill);
                } else {
                    self.change(State::Backfill, Activity::Idle, 29, "backfill client gone");
                }
            }
            (State::Owner, _) => {
                if self.s.preempting.is_some() {
                    // Never drop a waiting claim silently: evict it.
                    if let Some(c) = self.s.preempting.clone() {
                        self.effect(Effect::EvictClaim {
                            job: c.job,
                            claim: c.id,
                        });
                    }
                }
                if !matches!(self.s.kind, SlotKind::Dynamic { .. })
                    && self.knob("IS_OWNER", false) != Some(true)
                {
                    self.change(State::Unclaimed, Activity::Idle, 1, "IS_OWNER");
                }
            }
            _ => {}
        }
    }

    fn spawn(&mut self) {
        let Some(c) = self.s.claim.clone() else {
            return;
        };
        let pledged = self.eval("MachineMaxVacateTime", self.job().as_ref());
        self.emit(SlotEvent::JobStarted {
            at: self.ctx.now,
            pledged_vacate: int_of(&pledged).unwrap_or(600).max(0),
        });
        self.effect(Effect::SpawnStarter { job: c.job });
        self.change(State::Claimed, Activity::Busy, 11, "starter spawned");
    }

    /// Backfill/Idle with the client gone: where the slot goes next, if
    /// anywhere — to its claim (31), to Matched (32), or to Owner (30)
    /// when it is being evicted, vacated or drained. False when the slot
    /// stays (the client exited on its own and is started again).
    fn leave_backfill(&mut self) -> bool {
        if self.s.claim.is_some() {
            self.change(
                State::Claimed,
                Activity::Idle,
                31,
                "claimed during backfill",
            );
        } else if self.s.matched_at.is_some() {
            self.change(
                State::Matched,
                Activity::Idle,
                32,
                "matched during backfill",
            );
        } else if self.s.backfill_ending || self.ctx.drain.is_some() {
            self.change(State::Owner, Activity::Idle, 30, "backfill ended");
        } else if !self.ctx.policy.enable_backfill {
            self.change(State::Owner, Activity::Idle, 30, "ENABLE_BACKFILL");
        } else if self.knob("EVICT_BACKFILL", false) == Some(true) {
            self.change(State::Owner, Activity::Idle, 30, "EVICT_BACKFILL");
        } else {
            return false;
        }
        true
    }

    /// The slot must leave Backfill: kill the client (28), or go at once
    /// when it is not running.
    fn end_backfill(&mut self, ending: bool, why: &str) {
        if ending && !self.s.backfill_ending {
            self.emit(SlotEvent::BackfillEnding { at: self.ctx.now });
        }
        match self.s.activity {
            Activity::Busy => self.change(State::Backfill, Activity::Killing, 28, why),
            Activity::Idle => {
                self.leave_backfill();
            }
            _ => {}
        }
    }

    fn begin_preempting(&mut self, transition: u8, why: &str) {
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
    fn leave_preempting(&mut self) {
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
            let t = if from == Activity::Killing { 24 } else { 23 };
            self.change(
                State::Claimed,
                Activity::Idle,
                t,
                "waiting claim takes over",
            );
        } else {
            let t = if from == Activity::Killing { 25 } else { 22 };
            self.change(State::Owner, Activity::Idle, t, "claim ended");
        }
    }

    fn in_retirement(&self) -> bool {
        self.s.preempting.is_some() || self.s.claim.as_ref().is_some_and(|c| c.ending.is_some())
    }

    fn preempt_was_true(&self) -> bool {
        self.s.claim.as_ref().is_some_and(|c| {
            matches!(
                c.ending,
                Some(EndCause::Preempt | EndCause::Vacate | EndCause::Shutdown)
            )
        })
    }

    /// Seconds of retirement left for the running job (0 without one).
    fn retirement_remaining(&self) -> i64 {
        if self
            .ctx
            .drain
            .is_some_and(|d| matches!(d.how, DrainHow::Quick | DrainHow::Fast))
        {
            return 0;
        }
        let Some(c) = &self.s.claim else { return 0 };
        let Some(start) = c.job_start else { return 0 };
        let job = self.job();
        let env = FixedEnv::new(self.ctx.now);
        let mut mjrt = int_of(&self.eval("MaxJobRetirementTime", job.as_ref())).unwrap_or(0);
        if self.ctx.drain.is_some_and(|d| d.how == DrainHow::Peaceful) && mjrt != -1 {
            // A peaceful shutdown waits for the job, however long.
            mjrt = i64::from(i32::MAX);
        }
        if let Some(j) = &job
            && j.contains("MaxJobRetirementTime")
        {
            let ad = self.ad();
            let v = Evaluator::new(Some(j), Some(&ad), &env)
                .eval_attr(&Name::new("MaxJobRetirementTime"));
            if let Some(jv) = int_of(&v) {
                mjrt = mjrt.min(jv);
            }
        }
        let suspended = c.suspended_total + c.suspended_since.map_or(0, |s| self.ctx.now - s);
        let age = self.ctx.now - start - suspended;
        (mjrt - age).max(0)
    }

    /// MachineMaxVacateTime as pledged, lowered by the job's
    /// JobMaxVacateTime or raised by borrowing retirement time.
    fn max_vacate(&self) -> i64 {
        let Some(c) = &self.s.claim else { return 0 };
        let machine = c.pledged_vacate;
        let Some(job) = self.job() else {
            return machine;
        };
        let env = FixedEnv::new(self.ctx.now);
        let ad = self.ad();
        let name = if job.contains("JobMaxVacateTime") {
            "JobMaxVacateTime"
        } else if job.contains("KillSigTimeout") {
            "KillSigTimeout"
        } else {
            return machine;
        };
        let wanted =
            int_of(&Evaluator::new(Some(&job), Some(&ad), &env).eval_attr(&Name::new(name)))
                .unwrap_or(0);
        if wanted <= machine {
            return wanted;
        }
        let remaining = self.retirement_remaining();
        if remaining >= wanted {
            wanted
        } else if remaining > machine {
            remaining
        } else {
            machine
        }
    }

    fn retirement_expired(&self) -> bool {
        let remaining = self.retirement_remaining();
        remaining <= 0 || self.max_vacate() >= remaining
    }

    fn end_claim(&mut self, cause: EndCause) {
        self.emit(SlotEvent::ClaimEnding {
            at: self.ctx.now,
            cause,
        });
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
                let t = if state == State::Owner { 36 } else { 37 };
                self.change(State::Drained, Activity::Retiring, t, "draining");
                return true;
            }
            State::Drained => match self.ctx.drain {
                None => {
                    let t = if act == Activity::Idle { 35 } else { 34 };
                    self.change(State::Owner, Activity::Idle, t, "draining ended");
                    return true;
                }
                Some(d) if d.all_drained && act == Activity::Retiring => {
                    self.change(State::Drained, Activity::Idle, 33, "all slots drained");
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
                self.change(State::Unclaimed, Activity::Idle, 1, "IS_OWNER");
                return true;
            }
            State::Unclaimed if self.knob("IS_OWNER", false) == Some(true) => {
                self.change(State::Owner, Activity::Idle, 2, "IS_OWNER");
                return true;
            }
            // Not while FETCH_WORK runs: its job must find the slot Idle.
            State::Unclaimed
                if act == Activity::Idle
                    && !self.s.fetching
                    && self.knob("RunBenchmarks", false) == Some(true) =>
            {
                self.change(State::Unclaimed, Activity::Benchmarking, 3, "RunBenchmarks");
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
                self.change(State::Backfill, Activity::Idle, 7, "START_BACKFILL");
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
                    self.change(State::Owner, Activity::Idle, 8, "START");
                    return true;
                }
                if self.ctx.now >= match_expires(&self.s, self.ctx.policy) {
                    self.change(State::Owner, Activity::Idle, 8, "MATCH_TIMEOUT");
                    return true;
                }
            }
            State::Claimed => return self.step_claimed(act),
            State::Preempting => {
                if act == Activity::Vacating {
                    if self.knob("KILL", true) == Some(true) {
                        self.change(State::Preempting, Activity::Killing, 21, "KILL");
                        return true;
                    }
                    if self.ctx.now - self.s.entered_activity >= self.max_vacate() {
                        self.change(
                            State::Preempting,
                            Activity::Killing,
                            21,
                            "MachineMaxVacateTime",
                        );
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

    fn step_claimed(&mut self, act: Activity) -> bool {
        if let Some(c) = &self.s.claim
            && c.ending != Some(EndCause::LeaseExpired)
            && c.lease_end().is_some_and(|end| self.ctx.now >= end)
        {
            // HTCondor's `Claim::leaseExpired`: the claimant is gone, so
            // nobody would collect the job's result; kill it at once.
            self.end_claim(EndCause::LeaseExpired);
            let t = if act == Activity::Idle { 10 } else { 0 };
            self.change(
                State::Preempting,
                Activity::Killing,
                t,
                "claim lease expired",
            );
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
        if let Some(d) = self.ctx.drain
            && self.s.claim.as_ref().is_some_and(|c| c.ending.is_none())
        {
            self.end_claim(EndCause::Shutdown);
            match (d.how, act) {
                (DrainHow::Fast, _) if self.s.starter => {
                    self.change(State::Preempting, Activity::Killing, 0, "drain fast");
                    return true;
                }
                (_, Activity::Busy) => {
                    self.change(State::Claimed, Activity::Retiring, 13, "draining");
                    return true;
                }
                (_, Activity::Suspended) => {
                    self.change(State::Claimed, Activity::Retiring, 16, "draining");
                    return true;
                }
                _ => {}
            }
        }
        if self.in_retirement() && self.s.starter && self.retirement_expired() {
            let t = match act {
                Activity::Suspended => 17,
                Activity::Retiring => 18,
                _ => 0,
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
            if act != Activity::Retiring {
                let t = if act == Activity::Suspended { 16 } else { 13 };
                self.change(State::Claimed, Activity::Retiring, t, "PREEMPT");
            }
            return true;
        }
        if act == Activity::Retiring {
            let may_unretire = self.s.preempting.is_none()
                && self
                    .s
                    .claim
                    .as_ref()
                    .is_some_and(|c| c.ending == Some(EndCause::BetterClaim));
            if may_unretire {
                self.emit(SlotEvent::ClaimEndingCancelled { at: self.ctx.now });
                self.change(State::Claimed, Activity::Busy, 19, "better claim went away");
                return true;
            }
        }
        if matches!(act, Activity::Busy | Activity::Retiring)
            && want_suspend
            && self.knob("SUSPEND", true) == Some(true)
        {
            let t = if act == Activity::Busy { 14 } else { 20 };
            self.change(State::Claimed, Activity::Suspended, t, "SUSPEND");
            return true;
        }
        if act == Activity::Suspended && self.knob("CONTINUE", true) == Some(true) {
            if self.in_retirement() {
                self.change(State::Claimed, Activity::Retiring, 16, "CONTINUE");
            } else {
                self.change(State::Claimed, Activity::Busy, 15, "CONTINUE");
            }
            return true;
        }
        if act == Activity::Busy && self.s.preempting.is_some() {
            if self.s.claim.as_ref().is_some_and(|c| c.ending.is_none()) {
                self.end_claim(EndCause::BetterClaim);
            }
            self.change(
                State::Claimed,
                Activity::Retiring,
                13,
                "better claim waiting",
            );
            return true;
        }
        if act == Activity::Idle && !self.s.starter {
            if self.s.preempting.is_some() {
                self.end_claim(EndCause::BetterClaim);
                self.begin_preempting(10, "better claim waiting");
                return true;
            }
            if let Some(cause) = self.s.claim.as_ref().and_then(|c| c.ending) {
                self.begin_preempting(
                    10,
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
                self.begin_preempting(10, "START");
                return true;
            }
            let worklife = int_of(&self.eval("CLAIM_WORKLIFE", None)).unwrap_or(-1);
            if let Some(c) = &self.s.claim
                && c.activations > 0
                && worklife >= 0
                && self.ctx.now - c.created > worklife
            {
                self.end_claim(EndCause::Policy);
                self.begin_preempting(10, "CLAIM_WORKLIFE");
                return true;
            }
        }
        false
    }

    /// Runs policy steps until nothing changes.
    fn settle(&mut self) {
        for _ in 0..16 {
            if !self.step() {
                break;
            }
        }
    }

    /// FetchWorkDelay with the current job as TARGET (300 when not an
    /// integer).
    fn fetch_delay(&self) -> i64 {
        int_of(&self.eval("FetchWorkDelay", self.job().as_ref())).unwrap_or(300)
    }

    fn try_fetch(&mut self) {
        self.try_fetch_for(None);
    }

    /// [`Work::try_fetch`], for the work another slot found when
    /// `prompted_by` names it.
    fn try_fetch_for(&mut self, prompted_by: Option<&str>) {
        if self.ctx.policy.keyword.as_deref().is_none_or(str::is_empty)
            || self.s.fetching
            || self.s.deleted
            || self.ctx.drain.is_some_and(|d| d.shutdown)
        {
            return;
        }
        let ok_state = match self.s.state {
            State::Owner | State::Drained => true,
            State::Unclaimed => self.s.activity != Activity::Benchmarking,
            State::Claimed => self.s.activity != Activity::Suspended,
            State::Backfill => self.s.activity != Activity::Killing,
            _ => false,
        };
        if !ok_state {
            return;
        }
        // Beyond HTCondor, which fetches here too and then must reject what
        // it got: a partitionable slot with no CPU left cannot carve a
        // dynamic slot for any job, so it does not ask for one. Its
        // children's fetches (claim reuse) and a returned child bring work.
        if self.s.kind == SlotKind::Partitionable && self.s.resources.cpus <= 0.0 {
            return;
        }
        if self.s.state == State::Claimed && !self.idle_fetch_claim() && !self.could_outrank() {
            return;
        }
        let delay = self.fetch_delay();
        // The first fetch is not throttled.
        if let Some(last) = self.s.last_fetch_completed
            && delay > 0
            && self.ctx.now - last < delay
        {
            return;
        }
        if self.knob("START", false) == Some(false) {
            return;
        }
        self.emit(SlotEvent::FetchStarted {
            at: self.ctx.now,
            prompted_by: prompted_by.map(str::to_string),
        });
        self.effect(Effect::FetchWork);
    }

    /// Claimed/Idle on a fetched claim that is not ending: the next
    /// fetched job reuses the claim.
    fn idle_fetch_claim(&self) -> bool {
        self.s.state == State::Claimed
            && self.s.activity == Activity::Idle
            && !self.s.starter
            && self
                .s
                .claim
                .as_ref()
                .is_some_and(|c| c.fetched && c.ending.is_none())
    }

    /// Whether a fetched job could be accepted by this claimed slot, which
    /// takes one only to preempt by rank: not while a better claim already
    /// waits, nor when RANK refers to nothing of the job (its value for
    /// any job is its value now) and is no higher than the current claim's.
    /// Beyond HTCondor, whose busy slots fetch such jobs only to reject
    /// them.
    fn could_outrank(&self) -> bool {
        if self.s.preempting.is_some() {
            return false;
        }
        let Some(current) = self.s.claim.as_ref().map(|c| c.rank) else {
            return true;
        };
        let ad = self.ad();
        let env = FixedEnv::new(self.ctx.now);
        let Ok(probe) = crate::classad::parse_expr("unresolved(Rank)") else {
            return true;
        };
        let refs = crate::classad::eval_expr_in(&probe, Some(&ad), None, &env);
        if !matches!(&refs, Value::Str(s) if s.as_bytes().is_empty()) {
            return true;
        }
        let fixed = match self.eval("Rank", None) {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => i as f64,
            Value::Real(r) => r,
            _ => 0.0,
        };
        fixed > current
    }

    /// A new claim for a job (fetched or requested).
    /// An external claim gets a lease: the job's `JobLeaseDuration` when
    /// it is a positive integer, else the policy's default.
    fn fetch_claim(&self, job: String, rank: f64, fetched: bool) -> Claim {
        let lease = (!fetched).then(|| {
            let env = FixedEnv::new(self.ctx.now);
            match self
                .ctx
                .policy
                .job_ad(&job)
                .map(|j| j.eval_attr("JobLeaseDuration", &env))
            {
                Some(Value::Int(n)) if n > 0 => n,
                _ => self.ctx.policy.default_lease,
            }
        });
        let mut claim = Claim::new(self.s.next_claim, job, rank, fetched, self.ctx.now);
        claim.lease = lease;
        claim
    }

    /// The slot's RANK of a job (0.0 when not a number).
    fn rank_of(ad: &ClassAd, job: &ClassAd, env: &FixedEnv) -> f64 {
        match Evaluator::new(Some(ad), Some(job), env).eval_attr(&Name::new("Rank")) {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => i as f64,
            Value::Real(r) => r,
            _ => 0.0,
        }
    }

    /// A job for a partitionable slot: apply MODIFY_REQUEST_EXPR_*, check
    /// that a dynamic slot can really be carved, and only then accept.
    fn carve(&mut self, job: ClassAd, text: String, fetched: bool) {
        let env = FixedEnv::new(self.ctx.now);
        let ad = self.ad();
        let matches = |j: &ClassAd| {
            truth(&Evaluator::new(Some(&ad), Some(j), &env).eval_attr(&Name::new("Requirements")))
                == Some(true)
        };
        let mut edited = job.clone();
        for (attr, e) in &self.ctx.policy.modify_request {
            let v = crate::classad::eval_expr_in(e, Some(&job), Some(&ad), &env);
            if matches!(v, Value::Int(_) | Value::Real(_)) {
                edited.insert_value(attr.as_str(), v);
            }
        }
        let job = if matches(&edited) || self.ctx.policy.must_modify {
            edited
        } else {
            job
        };
        let reject = |w: &mut Self| w.effect(reply(fetched, false, text.clone()));
        if !matches(&job) {
            return reject(self);
        }
        let num = |attr: &str| match job.eval_attr(attr, &env) {
            Value::Int(i) => Some(i as f64),
            Value::Real(r) => Some(r),
            _ => None,
        };
        let (Some(memory), Some(disk)) = (num("RequestMemory"), num("RequestDisk")) else {
            // HTCondor cannot split a slot without memory and disk requests.
            return reject(self);
        };
        let mut want = Resources {
            cpus: num("RequestCpus").unwrap_or(1.0),
            #[allow(clippy::cast_possible_truncation)]
            memory_mb: memory.ceil() as i64,
            #[allow(clippy::cast_possible_truncation)]
            disk_kb: disk.ceil() as i64,
            custom: Default::default(),
        };
        for k in self.s.resources.custom.keys() {
            let n = num(&format!("Request{k}")).unwrap_or(0.0);
            want.custom.insert(k.clone(), n);
        }
        let have = &self.s.resources;
        let fits = want.cpus <= have.cpus
            && want.memory_mb <= have.memory_mb
            && want.disk_kb <= have.disk_kb
            && want
                .custom
                .iter()
                .all(|(k, v)| *v <= have.custom.get(k).copied().unwrap_or(0.0));
        if !fits || want.cpus <= 0.0 {
            return reject(self);
        }
        let rank = Self::rank_of(&ad, &job, &env);
        let job_text = ad_to_string(&job);
        self.effect(reply(fetched, true, text));
        let claim = self.fetch_claim(job_text, rank, fetched);
        let sub = self.s.free_child_id();
        self.emit(SlotEvent::DynamicSlotCreated {
            at: self.ctx.now,
            sub,
            resources: want,
            claim,
        });
    }

    /// A job offered to this slot: fetched by FETCH_WORK, or in an
    /// external claim request.
    fn offered_job(&mut self, text: &str, fetched: bool) {
        let Ok(mut job) = parse_ad(text) else {
            return;
        };
        if let Some(kw) = self.ctx.policy.keyword.as_ref().filter(|_| fetched) {
            let env = FixedEnv::new(self.ctx.now);
            if !matches!(job.eval_attr("HookKeyword", &env), Value::Str(_)) {
                job.insert_value("HookKeyword", kw.as_str());
            }
        }
        let text = ad_to_string(&job);
        // A static slot matches a job without Request* as if it asked for
        // one of each; the defaults are for matching only, never added to
        // the ad the hooks and the starter see.
        if self.s.kind != SlotKind::Partitionable {
            for attr in ["RequestCpus", "RequestMemory", "RequestDisk"] {
                if !job.contains(attr) {
                    job.insert_value(attr, 1i64);
                }
            }
        }
        let reject = |w: &mut Self, text: String| w.effect(reply(fetched, false, text));
        // A Matched slot is promised to the matched claimant: work fetched
        // meanwhile is refused (the fetch began before the match).
        if self.s.state == State::Preempting
            || (self.s.state == State::Backfill && self.s.claim.is_some())
            || (self.s.state == State::Matched && fetched)
        {
            return reject(self, text);
        }
        if self.s.kind == SlotKind::Partitionable {
            return self.carve(job, text, fetched);
        }
        let ad = self.ad();
        let env = FixedEnv::new(self.ctx.now);
        // A Matched slot publishes Requirements = false so that it is not
        // matched again; its claimant is judged by the real ones.
        let willing = if self.s.state == State::Matched {
            truth(&crate::classad::eval_expr_in(
                requirements(self.ctx),
                Some(&ad),
                Some(&job),
                &env,
            ))
        } else {
            truth(
                &Evaluator::new(Some(&ad), Some(&job), &env).eval_attr(&Name::new("Requirements")),
            )
        };
        if willing != Some(true) {
            return reject(self, text);
        }
        let rank = Self::rank_of(&ad, &job, &env);
        // Let go of the slot ad before the events change the slot: a held
        // copy makes the next evaluation copy the policy's whole ad.
        drop(ad);
        let idle_fetch_claim = fetched && self.idle_fetch_claim();
        if self.s.state == State::Claimed && !idle_fetch_claim {
            let current = self.s.claim.as_ref().map_or(0.0, |c| c.rank);
            if rank <= current || self.s.preempting.is_some() {
                return reject(self, text);
            }
        }
        self.effect(reply(fetched, true, text.clone()));
        let claim = self.fetch_claim(text, rank, fetched);
        if idle_fetch_claim {
            let mut claim = claim;
            if let Some(old) = &self.s.claim {
                claim.created = old.created;
                claim.activations = old.activations;
            }
            self.emit(SlotEvent::ClaimCreated {
                at: self.ctx.now,
                claim,
            });
            self.spawn();
        } else if self.s.state == State::Claimed {
            self.emit(SlotEvent::PreemptingClaimQueued {
                at: self.ctx.now,
                claim,
            });
        } else if self.s.state == State::Backfill {
            // The claim waits for the backfill client to go (31).
            self.emit(SlotEvent::ClaimCreated {
                at: self.ctx.now,
                claim,
            });
            let why = if fetched {
                "fetched job accepted"
            } else {
                "claim request granted"
            };
            self.end_backfill(false, why);
        } else {
            let t = match self.s.state {
                State::Unclaimed => 5,
                State::Matched => 9,
                _ => 0,
            };
            self.emit(SlotEvent::ClaimCreated {
                at: self.ctx.now,
                claim,
            });
            let why = if fetched {
                "fetched job accepted"
            } else {
                "claim request granted"
            };
            self.change(State::Claimed, Activity::Idle, t, why);
        }
    }
}

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
        Input::Activate => {
            let waiting = w.s.state == State::Claimed
                && w.s.activity == Activity::Idle
                && !w.s.starter
                && w.s
                    .claim
                    .as_ref()
                    .is_some_and(|c| !c.fetched && c.ending.is_none());
            if waiting {
                w.spawn();
                w.settle();
            }
        }
        Input::Match(_) => match (w.s.state, w.s.activity) {
            (State::Unclaimed, Activity::Idle) => {
                w.emit(SlotEvent::MatchReceived { at: ctx.now });
                w.change(State::Matched, Activity::Idle, 6, "matched");
            }
            (State::Backfill, _) if w.s.claim.is_none() && w.s.matched_at.is_none() => {
                w.emit(SlotEvent::MatchReceived { at: ctx.now });
                w.end_backfill(false, "matched");
                w.settle();
            }
            // Claimed slots are matched only to be preempted by rank, which
            // the claim request decides; elsewhere a match is stale.
            _ => {}
        },
        Input::Alive => {
            let leased = [&w.s.claim, &w.s.preempting]
                .into_iter()
                .flatten()
                .any(|c| c.lease.is_some());
            if leased {
                w.emit(SlotEvent::ClaimAlive { at: ctx.now });
            }
        }
        Input::BackfillStarted => {
            if w.s.state == State::Backfill && !w.s.backfill {
                w.emit(SlotEvent::BackfillStarted { at: ctx.now });
                if w.s.activity == Activity::Idle {
                    w.change(
                        State::Backfill,
                        Activity::Busy,
                        26,
                        "backfill client running",
                    );
                }
                w.settle();
            } else if !w.s.backfill {
                // The slot left Backfill before the client came up.
                w.effect(Effect::KillBackfill);
            }
        }
        Input::BackfillExited => {
            if w.s.backfill {
                w.emit(SlotEvent::BackfillExited { at: ctx.now });
                match (w.s.state, w.s.activity) {
                    (State::Backfill, Activity::Busy) => {
                        w.change(
                            State::Backfill,
                            Activity::Idle,
                            27,
                            "backfill client exited",
                        );
                    }
                    (State::Backfill, Activity::Killing) => {
                        w.change(State::Backfill, Activity::Idle, 29, "backfill client gone");
                    }
                    _ => {}
                }
                w.settle();
            }
        }
        Input::Claimed(claim) => {
            w.emit(SlotEvent::ClaimCreated {
                at: ctx.now,
                claim: claim.clone(),
            });
            w.change(
                State::Claimed,
                Activity::Idle,
                0,
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
                w.change(State::Unclaimed, Activity::Idle, 4, "benchmarks finished");
                w.settle();
                w.try_fetch();
            }
        }
        Input::StarterExited | Input::StarterLost => {
            if w.s.starter {
                w.emit(SlotEvent::StarterExited { at: ctx.now });
                let lost = matches!(input, Input::StarterLost);
                match w.s.state {
                    State::Claimed if lost => {
                        w.end_claim(EndCause::StarterLost);
                        w.change(State::Preempting, Activity::Killing, 10, "starter lost");
                    }
                    State::Claimed => {
                        w.change(State::Claimed, Activity::Idle, 12, "starter exited");
                    }
                    State::Preempting => w.leave_preempting(),
                    _ => {}
                }
                w.settle();
                w.try_fetch();
            }
        }
        Input::Vacate => {
            if w.s.state == State::Claimed {
                w.end_claim(EndCause::Vacate);
                match w.s.activity {
                    Activity::Busy | Activity::Suspended => {
                        let t = if w.s.activity == Activity::Busy {
                            13
                        } else {
                            16
                        };
                        w.change(State::Claimed, Activity::Retiring, t, "vacate");
                    }
                    _ => {}
                }
                w.settle();
            } else if w.s.state == State::Matched {
                w.change(State::Owner, Activity::Idle, 8, "vacate");
            } else if w.s.state == State::Backfill {
                w.end_backfill(true, "vacate");
                w.settle();
            }
        }
        Input::VacateFast => {
            if w.s.state == State::Claimed {
                w.end_claim(EndCause::Vacate);
                if w.s.starter {
                    w.change(State::Preempting, Activity::Killing, 0, "vacate fast");
                }
                w.settle();
            } else if w.s.state == State::Matched {
                w.change(State::Owner, Activity::Idle, 8, "vacate fast");
            } else if w.s.state == State::Backfill {
                w.end_backfill(true, "vacate fast");
                w.settle();
            }
        }
    }
    w.out
}

/// In how many seconds (at least 1) the policy should next be evaluated
/// without any other input: every POLLING_INTERVAL while Claimed,
/// Preempting or in Backfill, else every UPDATE_INTERVAL; sooner when a
/// match times out or a claim lease expires before then.
pub fn evaluation_interval(slot: &Slot, policy: &Policy, now: i64) -> i64 {
    let every = match slot.state {
        State::Claimed | State::Preempting | State::Backfill => policy.polling_interval,
        _ => policy.update_interval,
    };
    let deadline = match slot.state {
        State::Matched => Some(match_expires(slot, policy)),
        State::Claimed => [&slot.claim, &slot.preempting]
            .into_iter()
            .flatten()
            .filter_map(Claim::lease_end)
            .min(),
        _ => None,
    };
    deadline.map_or(every, |d| every.min(d - now)).max(1)
}

/// When FETCH_WORK may next run, if the slot fetches at all: when the
/// delay since the last fetch (`FetchWorkDelay`; 1 s when it is 0 or
/// less) ends. `None` before the first fetch and while one runs.
pub fn next_fetch_at(slot: &Slot, ctx: &Ctx<'_>) -> Option<i64> {
    if ctx.policy.keyword.as_deref().is_none_or(str::is_empty) || slot.fetching {
        return None;
    }
    let w = Work::new(slot, ctx);
    let delay = w.fetch_delay();
    let last = slot.last_fetch_completed?;
    Some(if delay > 0 { last + delay } else { last + 1 })
}

/// Seconds of retirement the slot's running job has left (0 without one).
pub fn retirement_remaining(slot: &Slot, ctx: &Ctx<'_>) -> i64 {
    Work::new(slot, ctx).retirement_remaining()
}

/// `FetchWorkDelay` evaluated with the current job as TARGET (300 when it
/// is not an integer): published as `NextFetchWorkDelay`.
pub fn fetch_delay(slot: &Slot, ctx: &Ctx<'_>) -> i64 {
    Work::new(slot, ctx).fetch_delay()
}

/// HTCondor's sleep states, lowest first, with the names HIBERNATE may
/// give them.
const SLEEP_STATES: &[(u32, &[&str])] = &[
    (0, &["NONE", "0"]),
    (1, &["S1", "STANDBY", "SLEEP", "1"]),
    (2, &["S2", "2"]),
    (4, &["S3", "RAM", "MEM", "SUSPEND", "3"]),
    (8, &["S4", "DISK", "HIBERNATE", "4"]),
    (16, &["S5", "SHUTDOWN", "OFF", "5"]),
];

/// The sleep state this slot's HIBERNATE asks for, as (level, name):
/// level 0 for NONE; `None` when HIBERNATE does not evaluate to a known
/// state (then the machine does not hibernate).
pub fn hibernate_state(slot: &Slot, ctx: &Ctx<'_>) -> Option<(u32, String)> {
    let w = Work::new(slot, ctx);
    let name = match w.eval("HIBERNATE", w.job().as_ref()) {
        Value::Str(s) => s.to_string_lossy(),
        Value::Int(i) => i.to_string(),
        _ => return None,
    };
    let upper = name.trim().to_ascii_uppercase();
    SLEEP_STATES
        .iter()
        .find(|(_, names)| names.contains(&upper.as_str()))
        .map(|(level, _)| (*level, upper))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Scope, load_text};

    #[test]
    fn the_job_cache_stays_small_whatever_a_slot_has_run() {
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        let config =
            load_text("condor_config", "START = True\n", scope, Vec::new()).expect("config loads");
        let policy = Policy::from_config(&config, "slot1", 1).expect("policy");
        for i in 0..1000 {
            let text = format!("[ Cmd = \"/bin/true\"; BenchJob = \"t{i}\" ]");
            let ad = policy.job_ad(&text).expect("job parses");
            let name = ad.eval_attr("BenchJob", &FixedEnv::new(0));
            assert_eq!(
                name.as_str().map(|s| s.to_string_lossy()),
                Some(format!("t{i}"))
            );
            assert!(
                policy.jobs.borrow().len() <= 16,
                "a slot keeps a handful of job ads"
            );
        }
        // The running job's ad is served from the cache.
        let text = "[ Cmd = \"/bin/true\"; BenchJob = \"t999\" ]";
        assert!(policy.jobs.borrow().contains_key(text));
    }
}
