//! The public slot ad, compared with what a real HTCondor 23.9.6 node gave
//! FETCH_WORK (`../shared/reference/captures/`), and STARTD_ATTRS as the
//! manual describes them.

use roost::classad::ClassAd;
use roost::classad::unparse::{Syntax, expr_to_string_in};
use roost::config::{Scope, load_text};
use roost::policy::engine::{AdCache, Ctx, Input, Policy, decide};
use roost::policy::layout::{MachineInputs, layout, machine};
use roost::policy::publish::{Publish, public_ad};
use roost::policy::slot::apply;

const NODE: &str = "NUM_CPUS = 2\nMEMORY = 4096\nSTARTD_JOB_HOOK_KEYWORD = ROOST\n\
    FetchWorkDelay = ifThenElse(State == \"Claimed\" && Activity == \"Idle\", 0, 1)\n";

fn ads(extra: &str) -> Vec<ClassAd> {
    let scope = Scope {
        subsys: Some("STARTD".into()),
        localname: None,
    };
    let text = format!("{NODE}{extra}");
    let cfg = load_text(
        "c",
        &text,
        scope,
        vec![("DETECTED_CPUS".into(), "2".into())],
    )
    .expect("config");
    let inputs = MachineInputs {
        cpus: 2,
        memory_mb: 24105,
        disk_kb: 81_628_480,
        swap_kb: 24_684_084,
        gpus: 0,
    };
    let m = machine(&cfg, &inputs).expect("machine");
    let specs = layout(&cfg, &m).expect("layout");
    let machine_ad =
        roost::classad::parse_ad("[ KeyboardIdle = 1205; ConsoleIdle = 1205; LoadAvg = 0.0 ]")
            .expect("ad");
    let total = specs.len();
    specs
        .iter()
        .map(|spec| {
            let id = format!("slot{}", spec.id);
            let policy = Policy::from_config(&cfg, &id, spec.type_id).expect("policy");
            let mut slot = spec.new_slot(&m, "vm", 1000);
            let cache = AdCache::default();
            let p = Publish {
                machine: &m,
                detected: (2, 24105),
                host: "vm",
                total_slots: total,
                drain_times: (0, 0),
            };
            let ctx = Ctx {
                publish: &p,
                policy: &policy,
                spec,
                machine: &machine_ad,
                now: 1000,
                drain: None,
                cache: &cache,
            };
            for e in decide(&slot, &ctx, &Input::Evaluate).events {
                apply(&mut slot, &e);
            }
            let ctx = Ctx { now: 1007, ..ctx };
            public_ad(&slot, &ctx)
        })
        .collect()
}

fn attr(ad: &ClassAd, name: &str) -> String {
    ad.lookup(name)
        .map_or_else(|| "<absent>".into(), |e| expr_to_string_in(e, Syntax::Old))
}

#[test]
fn a_static_slot_publishes_what_htcondor_does() {
    let ads = ads("NUM_SLOTS = 2\nSLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\n");
    let ad = &ads[1];
    for (name, want) in [
        ("MyType", "\"Machine\""),
        ("TargetType", "\"Job\""),
        ("Name", "\"slot2@vm\""),
        ("Machine", "\"vm\""),
        ("SlotID", "2"),
        ("SlotTypeID", "1"),
        ("SlotType", "\"Static\""),
        ("Cpus", "1"),
        ("Memory", "2048"),
        ("Disk", "40814240"),
        ("TotalCpus", "2.0"),
        ("TotalMemory", "4096"),
        ("TotalDisk", "81628480"),
        ("TotalSlotCpus", "1"),
        ("TotalSlotMemory", "2048"),
        ("TotalSlotDisk", "40814240.0"),
        ("DetectedCpus", "2"),
        ("DetectedMemory", "24105"),
        ("GPUs", "0"),
        ("TotalGPUs", "0"),
        ("TotalSlotGPUs", "0"),
        ("MachineResources", "\"Cpus Memory Disk Swap GPUs\""),
        ("TotalSlots", "2"),
        ("SlotWeight", "Cpus"),
        ("State", "\"Unclaimed\""),
        ("Activity", "\"Idle\""),
        ("Start", "true"),
        ("Requirements", "START"),
        ("MachineMaxVacateTime", "10 * 60"),
        ("MaxJobRetirementTime", "0"),
        ("RetirementTimeRemaining", "0"),
        ("CurrentRank", "0.0"),
        ("NextFetchWorkDelay", "1"),
        ("TotalTimeUnclaimedIdle", "7"),
        ("LastFetchWorkSpawned", "1000"),
        ("KeyboardIdle", "1205"),
    ] {
        assert_eq!(attr(ad, name), want, "{name}");
    }
    assert_eq!(attr(ad, "PartitionableSlot"), "<absent>");
}

#[test]
fn a_slot_with_devices_publishes_them_as_assigned() {
    let listed = ads(
        "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1, CUDA2\nNUM_SLOTS_TYPE_1 = 2\nSLOT_TYPE_1 = cpus=1\n",
    );
    assert_eq!(attr(&listed[0], "AssignedGPUs"), "\"CUDA0,CUDA1\"");
    assert_eq!(attr(&listed[1], "AssignedGPUs"), "\"CUDA2\"");
    assert_eq!(attr(&listed[1], "GPUs"), "1");
    // A count is fungible: no devices to name.
    let counted = ads("MACHINE_RESOURCE_GPUs = 2\nNUM_SLOTS_TYPE_1 = 2\nSLOT_TYPE_1 = cpus=1\n");
    assert_eq!(attr(&counted[0], "AssignedGPUs"), "<absent>");
}

#[test]
fn a_partitionable_slot_publishes_within_resource_limits() {
    let ads = ads(
        "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=100%, memory=100%\nSLOT_TYPE_1_PARTITIONABLE = True\n",
    );
    let ad = &ads[0];
    assert_eq!(attr(ad, "SlotType"), "\"Partitionable\"");
    assert_eq!(attr(ad, "PartitionableSlot"), "true");
    assert_eq!(attr(ad, "NumDynamicSlots"), "0");
    assert_eq!(attr(ad, "Requirements"), "START && (WithinResourceLimits)");
    assert!(
        attr(ad, "WithinResourceLimits")
            .starts_with("MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus")
    );
    assert_eq!(
        (attr(ad, "Cpus"), attr(ad, "Memory")),
        ("2".into(), "4096".into())
    );
}

#[test]
fn startd_attrs_per_slot_as_in_the_manual() {
    let ads = ads(
        "NUM_SLOTS = 3\nSLOT_TYPE_0_PARTITIONABLE = False\nNUM_CPUS = 3\n\
         favorite_color = \"blue\"\nfavorite_season = \"spring\"\n\
         STARTD_ATTRS = favorite_color, favorite_season\n\
         SLOT2_favorite_color = \"green\"\nSLOT3_favorite_season = \"summer\"\n\
         SLOT1_STARTD_ATTRS = favorite_movie\nfavorite_movie = \"Alien\"\n",
    );
    let got: Vec<(String, String, String)> = ads
        .iter()
        .map(|a| {
            (
                attr(a, "favorite_color"),
                attr(a, "favorite_season"),
                attr(a, "favorite_movie"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("\"blue\"".into(), "\"spring\"".into(), "\"Alien\"".into()),
            ("\"green\"".into(), "\"spring\"".into(), "<absent>".into()),
            ("\"blue\"".into(), "\"summer\"".into(), "<absent>".into()),
        ]
    );
}

/// The startd's configuration `text` on a machine of `cpus` CPUs and
/// `cpus` GiB of memory, and its resources.
fn node(cpus: u32, text: &str) -> (roost::config::Config, roost::policy::layout::Machine) {
    let scope = Scope {
        subsys: Some("STARTD".into()),
        localname: None,
    };
    let detected = vec![("DETECTED_CPUS".into(), cpus.to_string())];
    let cfg = load_text("c", text, scope, detected).expect("config");
    let inputs = MachineInputs {
        cpus,
        memory_mb: 1024 * i64::from(cpus),
        disk_kb: 1_000_000,
        swap_kb: 0,
        gpus: 0,
    };
    let m = machine(&cfg, &inputs).expect("machine");
    (cfg, m)
}

/// What the slot publishes, its policy sees: every attribute of the public
/// ad, whatever its source — `STARTD_ATTRS` (and a slot's own value of
/// one), a cron job's or a benchmark's attribute in the machine's ad, a
/// custom machine resource, the slot's claim, the node's drain — is in the
/// ad the policy is evaluated in, bound to the same expression. The one
/// attribute that differs is `Requirements` of a static slot, which the
/// public ad gives as HTCondor's does (`START`) and the policy keeps whole
/// (`START && WithinResourceLimits`).
#[test]
fn every_attribute_the_slot_publishes_its_policy_sees() {
    use roost::classad::parse_ad;
    use roost::policy::engine::{Drain, DrainHow, slot_ad};
    use roost::policy::slot::Claim;
    let (cfg, m) = node(
        2,
        "NUM_CPUS = 2\nMEMORY = 4096\nSTARTD_JOB_HOOK_KEYWORD = ROOST\n\
         MACHINE_RESOURCE_GPUs = CUDA0, CUDA1\nNUM_SLOTS_TYPE_1 = 2\nSLOT_TYPE_1 = cpus=1\n\
         STARTD_ATTRS = MyAttr, Site\nMyAttr = 1\nSite = \"lab\"\nSLOT2_MyAttr = 2\n\
         START = MyAttr == 1\nMAXJOBRETIREMENTTIME = 600\n",
    );
    let specs = layout(&cfg, &m).expect("layout");
    // The machine's ad as the daemon makes it, with a cron job's and the
    // benchmarks' attributes merged in.
    let machine_ad = parse_ad(
        "[ KeyboardIdle = 1205; LoadAvg = 0.5; OpSys = \"LINUX\"; HealthOk = true; \
         LastBenchmark = 900; Mips = 12000; KFlops = 900000 ]",
    )
    .expect("ad");
    let drain = Drain {
        reason: "maintenance".into(),
        request_id: 7,
        started: 500,
        ..Drain::closed(DrainHow::Graceful)
    };
    let job = "[ Owner = \"alice\"; User = \"alice@lab\"; ClusterId = 4; ProcId = 2; \
               JobUniverse = 5; ImageSize = 1000; GlobalJobId = \"ap#4.2#1\" ]";
    let p = Publish {
        machine: &m,
        detected: (2, 2048),
        host: "vm",
        total_slots: specs.len(),
        drain_times: (500, 0),
    };
    let mut seen_policy = Vec::new();
    for spec in &specs {
        let id = format!("slot{}", spec.id);
        let policy = Policy::from_config(&cfg, &id, spec.type_id).expect("policy");
        let mut slot = spec.new_slot(&m, "vm", 1000);
        let cache = AdCache::default();
        for (claimed, drain) in [(false, None), (true, None), (true, Some(&drain))] {
            if claimed && slot.claim.is_none() {
                let mut claim = Claim::new(1, job.into(), 0.0, true, 0);
                claim.job_start = Some(1003);
                slot.claim = Some(claim);
            }
            let ctx = Ctx {
                policy: &policy,
                spec,
                machine: &machine_ad,
                now: 1010,
                drain,
                publish: &p,
                cache: &cache,
            };
            let public = public_ad(&slot, &ctx);
            let internal = slot_ad(&slot, &ctx);
            for (name, e) in public.iter() {
                if name.as_str() == "Requirements" {
                    continue;
                }
                let seen = internal
                    .get(name)
                    .map_or_else(|| "<absent>".into(), |e| expr_to_string_in(e, Syntax::Old));
                assert_eq!(
                    seen,
                    expr_to_string_in(e, Syntax::Old),
                    "{id} (claimed {claimed}, draining {}): {name}",
                    drain.is_some()
                );
            }
            // What the policy reads of them: START is MyAttr == 1.
            let env = roost::classad::FixedEnv::new(1010);
            seen_policy.push(format!(
                "{id} {:?} {:?}",
                internal.eval_attr("START", &env),
                internal.eval_attr("RemoteOwner", &env),
            ));
        }
        let public = public_ad(
            &slot,
            &Ctx {
                policy: &policy,
                spec,
                machine: &machine_ad,
                now: 1010,
                drain: Some(&drain),
                publish: &p,
                cache: &cache,
            },
        );
        for name in [
            "MyAttr",
            "Site",
            "HealthOk",
            "Mips",
            "GPUs",
            "AssignedGPUs",
            "TotalGPUs",
            "RemoteOwner",
            "JobId",
            "Draining",
            "LastDrainStartTime",
            "RetirementTimeRemaining",
            "TotalSlots",
            "DetectedCpus",
        ] {
            assert!(public.contains(name), "{id} publishes {name}");
        }
    }
    assert_eq!(
        seen_policy,
        [
            "slot1 true undefined",
            "slot1 true \"alice\"",
            "slot1 true \"alice\"",
            "slot2 false undefined",
            "slot2 false \"alice\"",
            "slot2 false \"alice\"",
        ]
    );
}

/// A cron job's attribute of the same name as one of `STARTD_ATTRS` wins,
/// in the published ad and in the policy's, as in HTCondor (the slot's
/// dynamic attributes lie over its configured ones).
#[test]
fn a_cron_attribute_wins_over_a_startd_attr_of_the_same_name_in_both_ads() {
    use roost::classad::{FixedEnv, parse_ad};
    use roost::policy::engine::slot_ad;
    let (cfg, m) = node(
        1,
        "NUM_CPUS = 1\nSTARTD_ATTRS = Value\nValue = 1\nSTART = Value == 10\n",
    );
    let spec = layout(&cfg, &m).expect("layout").remove(0);
    let policy = Policy::from_config(&cfg, "slot1", spec.type_id).expect("policy");
    let slot = spec.new_slot(&m, "vm", 0);
    let cache = AdCache::default();
    let p = Publish {
        machine: &m,
        detected: (1, 1024),
        host: "vm",
        total_slots: 1,
        drain_times: (0, 0),
    };
    let env = FixedEnv::new(5);
    for (machine_text, want) in [("[ LoadAvg = 0.0 ]", 1), ("[ Value = 10 ]", 10)] {
        let machine_ad = parse_ad(machine_text).expect("ad");
        let ctx = Ctx {
            policy: &policy,
            spec: &spec,
            machine: &machine_ad,
            now: 5,
            drain: None,
            publish: &p,
            cache: &cache,
        };
        let public = public_ad(&slot, &ctx);
        let internal = slot_ad(&slot, &ctx);
        let seen =
            |ad: &roost::classad::ClassAd, name: &str| format!("{:?}", ad.eval_attr(name, &env));
        assert_eq!(seen(&public, "Value"), want.to_string());
        assert_eq!(seen(&internal, "Value"), want.to_string());
        assert_eq!(
            seen(&internal, "START"),
            (want == 10).to_string(),
            "{machine_text}"
        );
    }
}
