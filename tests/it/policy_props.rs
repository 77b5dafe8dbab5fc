//! Invariants of the slot state machine over random runs: never Busy
//! without a job (or, in Backfill, without the backfill client), decisions are deterministic, replaying the events gives
//! the same state, and no accepted job is ever lost.

use std::collections::BTreeSet;

use proptest::prelude::*;
use roost::classad::{ClassAd, parse_ad};
use roost::config::{Scope, load_text};
use roost::policy::engine::{AdCache, Ctx, Effect, Input, Policy, decide};
use roost::policy::layout::{Machine, MachineInputs, SlotSpec, layout, machine};
use roost::policy::publish::Publish;
use roost::policy::slot::{Activity, Slot, State, apply};

const POLICY: &str = "STARTD_JOB_HOOK_KEYWORD = ROOST\nSLOT_TYPE_0_PARTITIONABLE = False\n\
    FetchWorkDelay = ifThenElse(Activity == \"Idle\", 0, 5)\n\
    RANK = TARGET.Prio\nWANT_SUSPEND = LoadAvg > 5\nSUSPEND = LoadAvg > 5\nCONTINUE = LoadAvg < 2\n\
    PREEMPT = KeyboardIdle < 30\nMaxJobRetirementTime = 20\nMachineMaxVacateTime = 5\n\
    KILL = LoadAvg > 8\nCLAIM_WORKLIFE = 50\nSTART = TARGET.Prio =!= 0\n\
    ENABLE_BACKFILL = True\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = KeyboardIdle > 500\n\
    EVICT_BACKFILL = KeyboardIdle < 100\nBOINC_Executable = /bin/true\nBOINC_InitialDir = /\n\
    BOINC_Universe = vanilla\nMATCH_TIMEOUT = 30\nALIVE_INTERVAL = 10\nMAX_CLAIM_ALIVES_MISSED = 3\n";

fn setup() -> (Policy, SlotSpec, Slot, Machine) {
    let scope = Scope {
        subsys: Some("STARTD".into()),
        localname: None,
    };
    let cfg = load_text(
        "c",
        POLICY,
        scope,
        vec![("DETECTED_CPUS".into(), "1".into())],
    )
    .expect("config");
    let inputs = MachineInputs {
        cpus: 1,
        memory_mb: 1024,
        disk_kb: 1000,
        swap_kb: 0,
        gpus: 0,
    };
    let m = machine(&cfg, &inputs).expect("machine");
    let spec = layout(&cfg, &m).expect("layout").remove(0);
    let slot = spec.new_slot(&m, "sim", 0);
    (
        Policy::from_config(&cfg, "slot1", spec.type_id).expect("policy"),
        spec,
        slot,
        m,
    )
}

#[derive(Clone, Debug)]
enum Step {
    Input(u8),
    Job(i64),
    Keyboard(i64),
    Load(i64),
}

fn step() -> impl Strategy<Value = (i64, Step)> {
    (
        0i64..15,
        prop_oneof![
            (0u8..12).prop_map(Step::Input),
            (0i64..4).prop_map(Step::Job),
            (0i64..100).prop_map(Step::Keyboard),
            (0i64..10).prop_map(Step::Load),
        ],
    )
}

fn check_invariants(s: &Slot) -> Result<(), String> {
    let running = matches!(
        s.activity,
        Activity::Busy | Activity::Retiring | Activity::Suspended
    );
    if s.state == State::Claimed && s.claim.is_none() {
        return Err(format!("Claimed without a claim: {s:?}"));
    }
    if running && s.state != State::Backfill && (s.state != State::Claimed || !s.starter) {
        return Err(format!(
            "{}/{} without a running job: {s:?}",
            s.state, s.activity
        ));
    }
    if s.starter && !matches!(s.state, State::Claimed | State::Preempting) {
        return Err(format!("a starter runs in {}: {s:?}", s.state));
    }
    let backfill_busy = s.state == State::Backfill && s.activity == Activity::Busy;
    if (s.backfill && s.state != State::Backfill) || (backfill_busy && !s.backfill) {
        return Err(format!(
            "the backfill client and the Backfill state disagree: {s:?}"
        ));
    }
    if s.state == State::Matched && (s.claim.is_some() || s.matched_at.is_none()) {
        return Err(format!("Matched with a claim, or without a match: {s:?}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_runs_keep_the_invariants(steps in prop::collection::vec(step(), 1..80)) {
        let (policy, spec, mut slot, m) = setup();
        let publish = Publish { machine: &m, detected: (1, 1024), host: "sim", total_slots: 1, drain_times: (0, 0) };
        let mut machine_ad: ClassAd = parse_ad("[ KeyboardIdle = 1000; LoadAvg = 0 ]").expect("ad");
        let cache = AdCache::default();
        let mut now = 0;
        let mut accepted: BTreeSet<String> = BTreeSet::new();
        let mut settled: BTreeSet<String> = BTreeSet::new();
        for (dt, st) in steps {
            now += dt;
            let input = match st {
                // An attribute that comes and goes (a cron job's): the
                // cached slot ad must lose it too.
                Step::Keyboard(k) if k % 7 == 0 => { machine_ad.remove("KeyboardIdle"); Input::Evaluate }
                Step::Keyboard(k) => { machine_ad.insert_value("KeyboardIdle", k * 10); Input::Evaluate }
                Step::Load(l) => { machine_ad.insert_value("LoadAvg", l); Input::Evaluate }
                Step::Job(p) => {
                    if !slot.fetching { continue; }
                    Input::FetchedJob(format!("[ Prio = {p}; JobUniverse = 5; Id = {now} ]"))
                }
                Step::Input(i) => match i {
                    0 => Input::Evaluate,
                    1 => Input::FetchTimer,
                    2 => if slot.fetching { Input::FetchedNothing } else { Input::Evaluate },
                    3 => if slot.starter { Input::StarterExited } else { Input::Evaluate },
                    4 => Input::Vacate,
                    5 => if slot.fetching { Input::FetchFailed } else { Input::Evaluate },
                    6 => Input::Match(format!("[ Prio = 3; Id = {now} ]")),
                    7 => Input::RequestClaim(format!("[ Prio = 2; JobUniverse = 5; Id = {now} ]")),
                    8 => Input::Alive,
                    9 => Input::BackfillStarted,
                    10 => Input::BackfillExited,
                    _ => if slot.starter { Input::StarterLost } else { Input::Evaluate },
                },
            };
            let ctx = Ctx { policy: &policy, spec: &spec, machine: &machine_ad, now, drain: None, publish: &publish, cache: &cache };
            let d = decide(&slot, &ctx, &input);
            prop_assert_eq!(&d, &decide(&slot, &ctx, &input), "decisions are deterministic");
            let fresh = AdCache::default();
            prop_assert_eq!(&d, &decide(&slot, &Ctx { cache: &fresh, ..ctx }, &input),
                "the cache only saves work");
            for e in &d.events {
                apply(&mut slot, e);
            }
            for e in &d.effects {
                match e {
                    Effect::ReplyFetch { accept: true, job } => { accepted.insert(job.clone()); }
                    Effect::SpawnStarter { job } | Effect::EvictClaim { job, .. } => { settled.insert(job.clone()); }
                    _ => {}
                }
            }
            if let Err(msg) = check_invariants(&slot) {
                prop_assert!(false, "{} after {:?} at {}", msg, input, now);
            }
            if slot.claim.is_none() && slot.preempting.is_none() {
                for job in &accepted {
                    prop_assert!(settled.contains(job), "accepted job neither run nor evicted: {}", job);
                }
            }
        }
    }
}

/// A random scenario for a 4-CPU machine with one partitionable slot:
/// offers of random sizes, exits, vacates, drains, claims, keyboard use.
fn random_scenario() -> impl Strategy<Value = String> {
    random_scenario_on(Just(""))
}

/// Slot layouts for [`random_scenario_on`]: HTCondor's default (one
/// partitionable slot), four static slots, and a partitionable slot beside
/// two static ones.
pub(crate) const LAYOUTS: [&str; 3] = [
    "",
    "NUM_SLOTS = 4\n",
    "SLOT_TYPE_1 = cpus=2\nSLOT_TYPE_1_PARTITIONABLE = true\nNUM_SLOTS_TYPE_1 = 1\n\
     SLOT_TYPE_2 = cpus=1\nNUM_SLOTS_TYPE_2 = 2\n",
];

/// A random scenario for a 4-CPU machine whose slots `layout` configures.
pub(crate) fn random_scenario_on(
    layout: impl Strategy<Value = &'static str>,
) -> impl Strategy<Value = String> {
    const SLOTS: [&str; 6] = ["slot1", "slot1_1", "slot1_2", "slot2", "slot3", "slot1_3"];
    let event = (0i64..20, 0u8..12, 1i64..4, 64i64..3000, 0usize..6).prop_map(|(dt, kind, cpus, mem, slot)| {
        let slot_id = SLOTS[slot];
        let body = match kind {
            0..=2 => format!(
                "offer = \"RequestCpus = {cpus}\\nRequestMemory = {mem}\\nRequestDisk = 1000\\nSimRunTime = {}\\nPrio = {cpus}\"",
                mem / 10
            ),
            3 => format!("exit = {{ slot = \"{slot_id}\", code = 0 }}"),
            4 => format!("command = \"vacate\"\nslot = \"{slot_id}\""),
            5 => "command = \"drain graceful\"".to_string(),
            6 => "command = \"drain cancel\"".to_string(),
            7 => format!("claim = \"RequestCpus = 1\\nRequestMemory = {mem}\\nRequestDisk = 10\\nSimRunTime = 50\\nPrio = 9\""),
            8 => format!("set = {{ KeyboardIdle = {} }}", mem / 100),
            9 => format!("match = \"Prio = {cpus}\"\nslot = \"{slot_id}\""),
            10 => "command = \"schedd gone\"".to_string(),
            _ => "command = \"backfill exit\"".to_string(),
        };
        (dt, body)
    });
    (layout, prop::collection::vec(event, 0..40)).prop_map(|(layout, events)| {
        let mut s = format!(
            "duration = 2000\nconfig = \"\"\"\nSTARTD_JOB_HOOK_KEYWORD = SIM\n\
             FetchWorkDelay = ifThenElse(Activity == \"Busy\", 120, 5)\nRANK = TARGET.Prio\n\
             MaxJobRetirementTime = 30\nMachineMaxVacateTime = 10\nPREEMPT = KeyboardIdle < 5\n\
             ENABLE_BACKFILL = True\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = KeyboardIdle > 20\n\
             EVICT_BACKFILL = KeyboardIdle < 10\nBOINC_Executable = /bin/true\n\
             BOINC_InitialDir = /\nBOINC_Universe = vanilla\nALIVE_INTERVAL = 20\n\
             {layout}\"\"\"\n[machine]\nCpus = 4\nMemory = 8192\n",
        );
        let mut t = 0;
        for (dt, body) in events {
            t += dt;
            s.push_str(&format!("[[event]]\nt = {t}\n{body}\n"));
        }
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The simulator checks after every instant that a partitionable
    /// slot's free resources and its dynamic slots' add up; a run fails
    /// with an error if they do not. Runs are also deterministic.
    #[test]
    fn random_partitionable_runs_keep_resources_and_are_deterministic(text in random_scenario()) {
        let sc = roost::policy::sim::Scenario::parse(&text).expect("scenario parses");
        let mut a = Vec::new();
        roost::policy::sim::simulate(&sc, |l| a.push(l.to_string())).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let mut b = Vec::new();
        roost::policy::sim::simulate(&sc, |l| b.push(l.to_string())).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(a, b);
    }
}
