//! The public slot ad: what FETCH_WORK reads on stdin and a collector
//! would receive. Attribute names, types and forms follow what a real
//! HTCondor 23 node publishes (`../shared/reference/captures/`).

use crate::classad::{ClassAd, Expr, FixedEnv, Value, parse_ad, parse_expr};
use crate::config::Config;

use super::engine::{Ctx, PolicyError, fetch_delay};
use super::layout::Machine;
use super::slot::{Claim, Slot, SlotKind, State};

/// `STARTD_ATTRS` (and `SLOT<N>_STARTD_ATTRS`, and their older names
/// `STARTD_EXPRS`, `SLOT<N>_STARTD_EXPRS`, which HTCondor still reads and
/// the eventd's shutdown configuration extends) resolved for one slot:
/// each name with its expression (`SLOT<N>_<name>` overriding `<name>`).
#[derive(Clone, Debug, Default)]
pub struct StartdAttrs(pub Vec<(String, Expr)>);

impl StartdAttrs {
    /// Reads the attributes slot `slot_id` (`slot1`) publishes.
    pub fn from_config(config: &Config, slot_id: &str) -> Result<StartdAttrs, PolicyError> {
        let err = |knob: &str, message: String| PolicyError {
            knob: knob.to_string(),
            message,
        };
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

/// Everything the public ad needs besides the slot and its policy.
pub struct Publish<'a> {
    /// The machine's resources.
    pub machine: &'a Machine,
    /// Detected CPUs and memory (before configuration).
    pub detected: (u32, i64),
    /// The host name.
    pub host: &'a str,
    /// How many slots the machine advertises.
    pub total_slots: usize,
    /// The slot's STARTD_ATTRS.
    pub attrs: &'a StartdAttrs,
    /// When the machine's last drain started and stopped (0: never).
    pub drain_times: (i64, i64),
}

fn expr(text: &str) -> Expr {
    parse_expr(text).unwrap_or_else(|_| Expr::from_value(Value::Undefined))
}

/// The slot's public ad at `ctx.now`.
pub fn public_ad(slot: &Slot, ctx: &Ctx<'_>, p: &Publish<'_>) -> ClassAd {
    // These evaluate in the slot ad the policy keeps and refills; asked
    // while `internal` below holds it, each refill would copy all of it.
    let retirement = super::engine::retirement_remaining(slot, ctx);
    let fetch_delay = (ctx.policy.keyword.as_deref())
        .is_some_and(|k| !k.is_empty())
        .then(|| fetch_delay(slot, ctx));
    let internal = super::engine::slot_ad(slot, ctx);
    let mut ad = ClassAd::new();
    for (n, e) in ctx.machine.iter() {
        ad.insert(n.clone(), e.clone());
    }
    ad.insert_value("MyType", "Machine");
    ad.insert_value("TargetType", "Job");
    ad.insert_value("Name", slot.name.as_str());
    ad.insert_value("Machine", p.host);
    ad.insert_value("SlotID", i64::from(ctx.spec.id));
    ad.insert_value("SlotTypeID", i64::from(ctx.spec.type_id.max(1)));
    let (kind, pslot) = match slot.kind {
        SlotKind::Static => ("Static", false),
        SlotKind::Partitionable => ("Partitionable", true),
        SlotKind::Dynamic { .. } => ("Dynamic", false),
    };
    ad.insert_value("SlotType", kind);
    if pslot {
        ad.insert_value("PartitionableSlot", true);
        ad.insert_value(
            "NumDynamicSlots",
            i64::try_from(slot.children.len()).unwrap_or(0),
        );
    }
    if matches!(slot.kind, SlotKind::Dynamic { .. }) {
        ad.insert_value("DynamicSlot", true);
    }
    let m = p.machine;
    #[allow(clippy::cast_possible_truncation)]
    ad.insert_value("Cpus", slot.resources.cpus.round() as i64);
    ad.insert_value("Memory", slot.resources.memory_mb);
    ad.insert_value("Disk", slot.resources.disk_kb);
    #[allow(clippy::cast_precision_loss)]
    ad.insert_value("TotalCpus", m.cpus as f64);
    ad.insert_value("TotalMemory", m.memory_mb);
    ad.insert_value("TotalDisk", m.disk_kb);
    ad.insert_value("TotalVirtualMemory", m.swap_kb);
    ad.insert_value("DetectedCpus", i64::from(p.detected.0));
    ad.insert_value("DetectedMemory", p.detected.1);
    #[allow(clippy::cast_possible_truncation)]
    ad.insert_value("TotalSlotCpus", ctx.spec.cpus.round() as i64);
    ad.insert_value("TotalSlotMemory", ctx.spec.memory_mb);
    #[allow(clippy::cast_precision_loss)]
    ad.insert_value("TotalSlotDisk", ctx.spec.disk_kb(m) as f64);
    publish_custom(&mut ad, slot, ctx, m);
    ad.insert_value("TotalSlots", i64::try_from(p.total_slots).unwrap_or(0));
    ad.insert("SlotWeight", expr("Cpus"));
    for n in [
        "State",
        "Activity",
        "EnteredCurrentState",
        "EnteredCurrentActivity",
        "MyCurrentTime",
    ] {
        if let Some(e) = internal.lookup(n) {
            ad.insert(n, e.clone());
        }
    }
    for (key, secs) in &slot.total_time {
        if *secs > 0 {
            ad.insert_value(format!("TotalTime{key}").as_str(), *secs);
        }
    }
    let current = format!("{}{}", slot.state, slot.activity);
    let now_in = ctx.now - slot.entered_activity;
    if now_in > 0 {
        let before = slot.total_time.get(&current).copied().unwrap_or(0);
        ad.insert_value(format!("TotalTime{current}").as_str(), before + now_in);
    }
    ad.insert_value("CurrentRank", slot.claim.as_ref().map_or(0.0, |c| c.rank));
    for (published, knob) in [
        ("Start", "START"),
        ("Rank", "Rank"),
        ("MaxJobRetirementTime", "MaxJobRetirementTime"),
        ("MachineMaxVacateTime", "MachineMaxVacateTime"),
    ] {
        if let Some(e) = internal.lookup(knob) {
            ad.insert(published, e.clone());
        }
    }
    if !ad.contains("MaxJobRetirementTime") {
        ad.insert_value("MaxJobRetirementTime", 0i64);
    }
    if matches!(slot.state, State::Matched | State::Preempting) {
        ad.insert_value("Requirements", false);
    } else if slot.kind == SlotKind::Static {
        ad.insert("Requirements", expr("START"));
    } else {
        ad.insert("Requirements", expr("START && (WithinResourceLimits)"));
        if let Some(e) = internal.lookup("WithinResourceLimits") {
            ad.insert("WithinResourceLimits", e.clone());
        }
    }
    ad.insert_value("RetirementTimeRemaining", retirement);
    if let Some(t) = slot.last_fetch_spawned {
        ad.insert_value("LastFetchWorkSpawned", t);
    }
    if let Some(t) = slot.last_fetch_completed {
        ad.insert_value("LastFetchWorkCompleted", t);
    }
    if let Some(d) = fetch_delay {
        ad.insert_value("NextFetchWorkDelay", d);
    }
    if let Some(d) = ctx.drain.filter(|d| !d.shutdown) {
        ad.insert_value("Draining", true);
        ad.insert_value("DrainReason", d.reason.as_str());
        ad.insert_value("DrainingRequestId", d.request_id.to_string().as_str());
    }
    if p.drain_times.0 != 0 {
        ad.insert_value("LastDrainStartTime", p.drain_times.0);
    }
    if p.drain_times.1 != 0 {
        ad.insert_value("LastDrainStopTime", p.drain_times.1);
    }
    if let Some(c) = &slot.claim {
        publish_claim(&mut ad, c, ctx.now);
    }
    for (n, e) in &p.attrs.0 {
        ad.insert(n.as_str(), e.clone());
    }
    ad
}

/// Each custom resource of `m`: the slot's amount, the totals, its devices
/// (`Assigned<Name>`); and `MachineResources` naming them all.
fn publish_custom(ad: &mut ClassAd, slot: &Slot, ctx: &Ctx<'_>, m: &Machine) {
    let mut resources = String::from("Cpus Memory Disk Swap");
    for (name, total) in &m.custom {
        let have = slot.resources.custom.get(name).copied().unwrap_or(0.0);
        let slot_total = ctx.spec.custom.get(name).copied().unwrap_or(have);
        #[allow(clippy::cast_possible_truncation)]
        {
            ad.insert_value(name.as_str(), have.round() as i64);
            ad.insert_value(format!("Total{name}").as_str(), total.round() as i64);
            ad.insert_value(format!("Detected{name}").as_str(), total.round() as i64);
            ad.insert_value(
                format!("TotalSlot{name}").as_str(),
                slot_total.round() as i64,
            );
        }
        resources.push(' ');
        resources.push_str(name);
        if let Some((attr, ids)) = slot.resources.assigned(name) {
            ad.insert_value(attr.as_str(), ids.as_str());
        }
    }
    ad.insert_value("MachineResources", resources.as_str());
}

/// What a claimed slot says about its job: `RemoteOwner`, `RemoteUser`,
/// `JobId`, `GlobalJobId`, `JobStart`, and the job's `JobUniverse` and
/// `ImageSize` (0 when the job has none), as HTCondor's busy slot ad has
/// them (the eventd's vacate estimate reads them).
fn publish_claim(ad: &mut ClassAd, c: &Claim, now: i64) {
    let Ok(job) = parse_ad(&c.job) else {
        return;
    };
    let env = FixedEnv::new(now);
    let text = |n: &str| match job.eval_attr(n, &env) {
        Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    };
    if let Some(owner) = text("Owner") {
        ad.insert_value("RemoteOwner", owner.as_str());
    }
    if let Some(user) = text("User") {
        ad.insert_value("RemoteUser", user.as_str());
    }
    if let (Value::Int(cl), Value::Int(pr)) = (
        job.eval_attr("ClusterId", &env),
        job.eval_attr("ProcId", &env),
    ) {
        ad.insert_value("JobId", format!("{cl}.{pr}").as_str());
    }
    if let Some(g) = text("GlobalJobId") {
        ad.insert_value("GlobalJobId", g.as_str());
    }
    if let Some(t) = c.job_start {
        ad.insert_value("JobStart", t);
    }
    if let Value::Int(u) = job.eval_attr("JobUniverse", &env) {
        ad.insert_value("JobUniverse", u);
        let size = match job.eval_attr("ImageSize", &env) {
            Value::Int(n) => n,
            _ => 0,
        };
        ad.insert_value("ImageSize", size);
    }
}
