//! The public slot ad, compared with what a real HTCondor 23.9.6 node gave
//! FETCH_WORK (`../shared/reference/captures/`), and STARTD_ATTRS as the
//! manual describes them.

use roost::classad::ClassAd;
use roost::classad::unparse::{Syntax, expr_to_string_in};
use roost::config::{Scope, load_text};
use roost::policy::engine::{AdCache, Ctx, Input, Policy, decide};
use roost::policy::layout::{MachineInputs, layout, machine};
use roost::policy::publish::{Publish, StartdAttrs, public_ad};
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
            let attrs = StartdAttrs::from_config(&cfg, &id).expect("attrs");
            let mut slot = spec.new_slot(&m, "vm", 1000);
            let cache = AdCache::default();
            let ctx = Ctx {
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
            let p = Publish {
                machine: &m,
                detected: (2, 24105),
                host: "vm",
                total_slots: total,
                attrs: &attrs,
                drain_times: (0, 0),
            };
            public_ad(&slot, &ctx, &p)
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
