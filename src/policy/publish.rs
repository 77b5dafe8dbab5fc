//! The public slot ad: what FETCH_WORK reads on stdin and a collector
//! would receive. Attribute names, types and forms follow what a real
//! HTCondor 23 node publishes (`../shared/reference/captures/`).

use crate::classad::{ClassAd, Expr, FixedEnv, Name, Value, parse_expr};

use super::engine::Ctx;
pub use super::engine::StartdAttrs;
use super::layout::Machine;
use super::slot::{Claim, Slot, SlotKind, State};

/// What the slot ad publishes of the node beyond the machine's ad: part
/// of every decision's [`Ctx`], since the policy is evaluated in the ad
/// that is published.
#[derive(Clone, Copy, Debug)]
pub struct Publish<'a> {
    /// The machine's resources.
    pub machine: &'a Machine,
    /// Detected CPUs and memory (before configuration).
    pub detected: (u32, i64),
    /// The host name.
    pub host: &'a str,
    /// How many slots the machine advertises.
    pub total_slots: usize,
    /// When the machine's last drain started and stopped (0: never).
    pub drain_times: (i64, i64),
}

fn expr(text: &str) -> Expr {
    parse_expr(text).unwrap_or_else(|_| Expr::from_value(Value::Undefined))
}

/// Names of the attributes [`fill`] sets, interned once.
macro_rules! names {
    ($($field:ident = $text:literal),* $(,)?) => {
        struct Names { $($field: Name),* }
        static N: std::sync::LazyLock<Names> =
            std::sync::LazyLock::new(|| Names { $($field: Name::new($text)),* });
    };
}

names! {
    my_type = "MyType",
    target_type = "TargetType",
    name = "Name",
    machine = "Machine",
    slot_id = "SlotID",
    slot_type_id = "SlotTypeID",
    slot_type = "SlotType",
    partitionable = "PartitionableSlot",
    num_dynamic = "NumDynamicSlots",
    dynamic = "DynamicSlot",
    cpus = "Cpus",
    memory = "Memory",
    disk = "Disk",
    total_cpus = "TotalCpus",
    total_memory = "TotalMemory",
    total_disk = "TotalDisk",
    total_vm = "TotalVirtualMemory",
    detected_cpus = "DetectedCpus",
    detected_memory = "DetectedMemory",
    slot_cpus = "TotalSlotCpus",
    slot_memory = "TotalSlotMemory",
    slot_disk = "TotalSlotDisk",
    machine_resources = "MachineResources",
    total_slots = "TotalSlots",
    slot_weight = "SlotWeight",
    state = "State",
    activity = "Activity",
    entered_state = "EnteredCurrentState",
    entered_activity = "EnteredCurrentActivity",
    current_time = "MyCurrentTime",
    current_rank = "CurrentRank",
    last_fetch_spawned = "LastFetchWorkSpawned",
    last_fetch_completed = "LastFetchWorkCompleted",
    draining = "Draining",
    drain_reason = "DrainReason",
    drain_request = "DrainingRequestId",
    drain_start = "LastDrainStartTime",
    drain_stop = "LastDrainStopTime",
    remote_owner = "RemoteOwner",
    remote_user = "RemoteUser",
    job_id = "JobId",
    global_job_id = "GlobalJobId",
    job_start = "JobStart",
    job_universe = "JobUniverse",
    image_size = "ImageSize",
    retirement = "RetirementTimeRemaining",
    fetch_delay = "NextFetchWorkDelay",
}

/// Binds `name` to `v` unless it already is (an unchanged ad is not
/// written to, so a clone of it handed out earlier is not copied).
fn set(ad: &mut ClassAd, name: &Name, v: impl Into<Value>) {
    let v = v.into();
    if !ad
        .get(name)
        .and_then(Expr::as_literal)
        .is_some_and(|old| old.identical(&v))
    {
        ad.insert(name.clone(), Expr::from_value(v));
    }
}

/// Removes `name` if the ad has it.
fn unset(ad: &mut ClassAd, name: &Name) {
    if ad.get(name).is_some() {
        ad.remove(name.as_str());
    }
}

/// Binds `name` to `v`, or removes it for `None`.
fn set_or_unset<V: Into<Value>>(ad: &mut ClassAd, name: &Name, v: Option<V>) {
    match v {
        Some(v) => set(ad, name, v),
        None => unset(ad, name),
    }
}

/// Writes into `ad` every attribute the slot publishes of itself and the
/// node — its identity, resources and totals, state and times, fetches
/// and the node's drain; its claim's are [`publish_claim`]'s — over what
/// it holds already (the
/// machine's ad, and for the policy's ad its knobs). The policy's ad
/// ([`super::engine::slot_ad`]) and the public one ([`public_ad`]) are
/// both written by it, so whatever a slot publishes its policy sees.
/// Attributes a slot publishes only sometimes (a claim's, a drain's) are
/// removed when they no longer hold. `RetirementTimeRemaining` and
/// `NextFetchWorkDelay`, which evaluate the policy's own knobs, are
/// written by the policy's ad.
pub(crate) fn fill(ad: &mut ClassAd, slot: &Slot, ctx: &Ctx<'_>) {
    let n = &*N;
    let p = ctx.publish;
    let m = p.machine;
    set(ad, &n.my_type, "Machine");
    set(ad, &n.target_type, "Job");
    set(ad, &n.name, slot.name.as_str());
    set(ad, &n.machine, p.host);
    set(ad, &n.slot_id, i64::from(ctx.spec.id));
    set(ad, &n.slot_type_id, i64::from(ctx.spec.type_id.max(1)));
    let kind = match slot.kind {
        SlotKind::Static => "Static",
        SlotKind::Partitionable => "Partitionable",
        SlotKind::Dynamic { .. } => "Dynamic",
    };
    set(ad, &n.slot_type, kind);
    let pslot = slot.kind == SlotKind::Partitionable;
    set_or_unset(ad, &n.partitionable, pslot.then_some(true));
    set_or_unset(
        ad,
        &n.num_dynamic,
        pslot.then(|| i64::try_from(slot.children.len()).unwrap_or(0)),
    );
    let dslot = matches!(slot.kind, SlotKind::Dynamic { .. });
    set_or_unset(ad, &n.dynamic, dslot.then_some(true));
    #[allow(clippy::cast_possible_truncation)]
    set(ad, &n.cpus, slot.resources.cpus.round() as i64);
    set(ad, &n.memory, slot.resources.memory_mb);
    set(ad, &n.disk, slot.resources.disk_kb);
    #[allow(clippy::cast_precision_loss)]
    set(ad, &n.total_cpus, m.cpus as f64);
    set(ad, &n.total_memory, m.memory_mb);
    set(ad, &n.total_disk, m.disk_kb);
    set(ad, &n.total_vm, m.swap_kb);
    set(ad, &n.detected_cpus, i64::from(p.detected.0));
    set(ad, &n.detected_memory, p.detected.1);
    #[allow(clippy::cast_possible_truncation)]
    set(ad, &n.slot_cpus, ctx.spec.cpus.round() as i64);
    set(ad, &n.slot_memory, ctx.spec.memory_mb);
    #[allow(clippy::cast_precision_loss)]
    set(ad, &n.slot_disk, ctx.spec.disk_kb(m) as f64);
    publish_custom(ad, slot, ctx, m);
    set(
        ad,
        &n.total_slots,
        i64::try_from(p.total_slots).unwrap_or(0),
    );
    if ad.get(&n.slot_weight).is_none() {
        ad.insert(n.slot_weight.clone(), expr("Cpus"));
    }
    set(ad, &n.state, slot.state.as_str());
    set(ad, &n.activity, slot.activity.as_str());
    set(ad, &n.entered_state, slot.entered_state);
    set(ad, &n.entered_activity, slot.entered_activity);
    set(ad, &n.current_time, ctx.now);
    for (key, secs) in &slot.total_time {
        if *secs > 0 {
            set(ad, &total_time_name(key), *secs);
        }
    }
    let now_in = ctx.now - slot.entered_activity;
    if now_in > 0 {
        let current = format!("{}{}", slot.state, slot.activity);
        let before = slot.total_time.get(&current).copied().unwrap_or(0);
        set(ad, &total_time_name(&current), before + now_in);
    }
    set(
        ad,
        &n.current_rank,
        slot.claim.as_ref().map_or(0.0, |c| c.rank),
    );
    set_or_unset(ad, &n.last_fetch_spawned, slot.last_fetch_spawned);
    set_or_unset(ad, &n.last_fetch_completed, slot.last_fetch_completed);
    let drain = ctx.drain.filter(|d| !d.shutdown);
    set_or_unset(ad, &n.draining, drain.map(|_| true));
    set_or_unset(ad, &n.drain_reason, drain.map(|d| d.reason.as_str()));
    set_or_unset(
        ad,
        &n.drain_request,
        drain.map(|d| d.request_id.to_string()).as_deref(),
    );
    set_or_unset(
        ad,
        &n.drain_start,
        (p.drain_times.0 != 0).then_some(p.drain_times.0),
    );
    set_or_unset(
        ad,
        &n.drain_stop,
        (p.drain_times.1 != 0).then_some(p.drain_times.1),
    );
}

/// `TotalTime<key>` for a state and activity's key (`ClaimedBusy`),
/// interned once per key.
fn total_time_name(key: &str) -> Name {
    static NAMES: std::sync::LazyLock<std::collections::HashMap<String, Name>> =
        std::sync::LazyLock::new(|| {
            use super::slot::{Activity as A, State as S};
            let states = [
                S::Owner,
                S::Unclaimed,
                S::Matched,
                S::Claimed,
                S::Preempting,
                S::Backfill,
                S::Drained,
            ];
            let activities = [
                A::Idle,
                A::Busy,
                A::Suspended,
                A::Retiring,
                A::Vacating,
                A::Killing,
                A::Benchmarking,
            ];
            let mut names = std::collections::HashMap::new();
            for st in states {
                for ac in activities {
                    let key = format!("{}{}", st.as_str(), ac.as_str());
                    names.insert(key.clone(), Name::new(&format!("TotalTime{key}")));
                }
            }
            names
        });
    NAMES
        .get(key)
        .cloned()
        .unwrap_or_else(|| Name::new(&format!("TotalTime{key}")))
}

/// The slot's public ad at `ctx.now`: the machine's attributes (with its
/// cron jobs' ads), the slot's [`fill`], and of the policy its `Start`,
/// `Rank`, retirement and vacate times and `Requirements`, the
/// `STARTD_ATTRS` under the machine's attributes as in the policy's ad.
pub fn public_ad(slot: &Slot, ctx: &Ctx<'_>) -> ClassAd {
    let internal = super::engine::slot_ad(slot, ctx);
    let mut ad = ClassAd::new();
    for (n, e) in &ctx.policy.attrs.0 {
        ad.insert(n.as_str(), e.clone());
    }
    for (n, e) in ctx.machine.iter() {
        ad.insert(n.clone(), e.clone());
    }
    fill(&mut ad, slot, ctx);
    publish_claim(&mut ad, slot.claim.as_ref(), ctx);
    for (published, knob) in [
        ("Start", "START"),
        ("Rank", "Rank"),
        ("MaxJobRetirementTime", "MaxJobRetirementTime"),
        ("MachineMaxVacateTime", "MachineMaxVacateTime"),
        ("RetirementTimeRemaining", "RetirementTimeRemaining"),
        ("NextFetchWorkDelay", "NextFetchWorkDelay"),
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
    ad
}

/// Each custom resource of `m`: the slot's amount, the totals, its devices
/// (`Assigned<Name>`); and `MachineResources` naming them all.
fn publish_custom(ad: &mut ClassAd, slot: &Slot, ctx: &Ctx<'_>, m: &Machine) {
    if m.custom.is_empty() {
        set(ad, &N.machine_resources, "Cpus Memory Disk Swap");
        return;
    }
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
        match slot.resources.assigned(name) {
            Some((attr, ids)) => ad.insert_value(attr.as_str(), ids.as_str()),
            None => {
                let attr = format!("Assigned{name}");
                if ad.contains(&attr) {
                    ad.remove(&attr);
                }
            }
        }
    }
    set(ad, &N.machine_resources, resources.as_str());
}

/// What a claimed slot says about its job: `RemoteOwner`, `RemoteUser`,
/// `JobId`, `GlobalJobId`, `JobStart`, and the job's `JobUniverse` and
/// `ImageSize` (0 when the job has none), as HTCondor's busy slot ad has
/// them (the eventd's vacate estimate reads them); none of them without
/// a claim.
pub(crate) fn publish_claim(ad: &mut ClassAd, c: Option<&Claim>, ctx: &Ctx<'_>) {
    let n = &*N;
    let job = c.and_then(|c| ctx.cache.job_ad(&c.job));
    let env = FixedEnv::new(ctx.now);
    let eval = |name: &str| {
        job.as_ref()
            .map_or(Value::Undefined, |j| j.eval_attr(name, &env))
    };
    let text = |name: &str| match eval(name) {
        Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    };
    set_or_unset(ad, &n.remote_owner, text("Owner").as_deref());
    set_or_unset(ad, &n.remote_user, text("User").as_deref());
    let job_id = match (eval("ClusterId"), eval("ProcId")) {
        (Value::Int(cl), Value::Int(pr)) => Some(format!("{cl}.{pr}")),
        _ => None,
    };
    set_or_unset(ad, &n.job_id, job_id.as_deref());
    set_or_unset(ad, &n.global_job_id, text("GlobalJobId").as_deref());
    set_or_unset(ad, &n.job_start, c.and_then(|c| c.job_start));
    let universe = match eval("JobUniverse") {
        Value::Int(u) => Some(u),
        _ => None,
    };
    set_or_unset(ad, &n.job_universe, universe);
    let size = universe.map(|_| match eval("ImageSize") {
        Value::Int(n) => n,
        _ => 0,
    });
    set_or_unset(ad, &n.image_size, size);
}

/// The names [`fill`] may remove, and the policy's ad writes itself.
pub(crate) fn retirement_names() -> (&'static Name, &'static Name) {
    (&N.retirement, &N.fetch_delay)
}
