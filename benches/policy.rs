//! Policy speed: one evaluation round of a machine with 256 dynamic slots
//! under the Desktop policy, and 24 hours of a 64-slot machine with a job
//! arriving every second, simulated. Results are in `docs/performance.md`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use roost::classad::parse_ad;
use roost::config::{Scope, load_text};
use roost::policy::engine::{AdCache, Ctx, Input, Policy, decide};
use roost::policy::layout::{MachineInputs, layout, machine};
use roost::policy::publish::Publish;
use roost::policy::sim::{Scenario, simulate};
use roost::policy::slot::{Resources, Slot, SlotKind, apply};

/// The allocator the `roost` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bench_round(c: &mut Criterion) {
    let scope = Scope {
        subsys: Some("STARTD".into()),
        localname: None,
    };
    let cfg = load_text(
        "c",
        "use POLICY : Desktop\nSTARTD_JOB_HOOK_KEYWORD = SIM\n",
        scope,
        vec![("DETECTED_CPUS".into(), "256".into())],
    )
    .expect("config");
    let inputs = MachineInputs {
        cpus: 256,
        memory_mb: 512 * 1024,
        disk_kb: 1 << 30,
        swap_kb: 0,
        gpus: 0,
    };
    let m = machine(&cfg, &inputs).expect("machine");
    let spec = layout(&cfg, &m).expect("layout").remove(0);
    let machine_ad = parse_ad(
        "[ KeyboardIdle = 100000; ConsoleIdle = 100000; LoadAvg = 1.0; CondorLoadAvg = 1.0 ]",
    )
    .expect("ad");
    let publish = Publish {
        machine: &m,
        detected: (256, 512 * 1024),
        host: "bench",
        total_slots: 257,
        drain_times: (0, 0),
    };
    let mut slots = Vec::new();
    let mut policies = Vec::new();
    let caches: Vec<AdCache> = (0..256).map(|_| AdCache::default()).collect();
    for i in 1..=256u32 {
        let id = format!("slot1_{i}");
        let policy = Policy::from_config(&cfg, &id, spec.type_id).expect("policy");
        let res = Resources {
            cpus: 1.0,
            memory_mb: 2048,
            disk_kb: 1 << 20,
            custom: Default::default(),
            ids: Default::default(),
        };
        let mut slot = Slot::with(
            &id,
            "bench",
            0,
            SlotKind::Dynamic {
                parent: "slot1".into(),
            },
            res,
        );
        let job = format!(
            "[ Owner = \"u{i}\"; JobUniverse = 5; ImageSize = 1000; RequestCpus = 1; RequestMemory = 2048 ]"
        );
        let claim = roost::policy::slot::Claim::new(1, job, 0.0, true, 0);
        let ctx = Ctx {
            policy: &policy,
            spec: &spec,
            machine: &machine_ad,
            now: 10,
            drain: None,
            publish: &publish,
            cache: &caches[(i - 1) as usize],
        };
        for e in decide(&slot, &ctx, &Input::Claimed(claim)).events {
            apply(&mut slot, &e);
        }
        assert_eq!(slot.activity, roost::policy::slot::Activity::Busy);
        slots.push(slot);
        policies.push(policy);
    }
    c.bench_function("policy round: 256 busy dynamic slots, Desktop", |b| {
        b.iter(|| {
            let mut n = 0;
            for ((slot, policy), cache) in slots.iter().zip(&policies).zip(&caches) {
                let ctx = Ctx {
                    policy,
                    spec: &spec,
                    machine: &machine_ad,
                    now: 1000,
                    drain: None,
                    publish: &publish,
                    cache,
                };
                n += decide(black_box(slot), &ctx, &Input::Evaluate).events.len();
            }
            black_box(n)
        });
    });
}

/// 24 h of a 64-slot machine, a 60-second job arriving every second.
fn scenario_24h() -> String {
    let mut s = String::from(
        "duration = 86400\nconfig = \"\"\"\nSTARTD_JOB_HOOK_KEYWORD = SIM\nNUM_SLOTS = 64\n\
         SLOT_TYPE_0_PARTITIONABLE = False\nFetchWorkDelay = ifThenElse(Activity == \"Busy\", 3600, 1)\n\"\"\"\n\
         [machine]\nCpus = 64\nMemory = 262144\n",
    );
    for t in 0..86400 {
        s.push_str(&format!(
            "[[event]]\nt = {t}\noffer = \"Owner = \\\"u{}\\\"\\nSimRunTime = 60\\nJobUniverse = 5\"\n",
            t % 7
        ));
    }
    s
}

fn bench_sim(c: &mut Criterion) {
    let sc = Scenario::parse(&scenario_24h()).expect("scenario");
    let mut lines = 0usize;
    simulate(&sc, |_| lines += 1).expect("runs");
    eprintln!("24 h simulation: {lines} output lines");
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10).measurement_time(Duration::from_secs(60));
    g.bench_function("24 h, 64 static slots, a job every second", |b| {
        b.iter(|| {
            let mut n = 0usize;
            simulate(black_box(&sc), |_| n += 1).expect("runs");
            black_box(n)
        });
    });
    g.finish();
}

criterion_group!(benches, bench_round, bench_sim);
criterion_main!(benches);
