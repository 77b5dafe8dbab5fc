//! The slot state machine, given/when/then: given a policy and a slot, when
//! an input arrives at a time, then these transitions (with the manual's
//! numbers) and effects. Every test also checks that replaying the events
//! onto the starting slot gives the state the decisions were made from.

use roost::classad::{ClassAd, parse_ad};
use roost::config::{Scope, load_text};
use roost::policy::engine::{
    AdCache, Ctx, Decision, Drain, DrainHow, Effect, Input, Policy, backfill_job, decide,
    evaluation_interval,
};
use roost::policy::layout::{MachineInputs, layout, machine};
use roost::policy::publish::Publish;
use roost::policy::slot::{Activity, EndCause, Slot, SlotEvent, State, apply};

struct Node {
    m: roost::policy::layout::Machine,
    policy: Policy,
    spec: roost::policy::layout::SlotSpec,
    machine: ClassAd,
    slot: Slot,
    log: Vec<(i64, String)>,
    drain: Option<Drain>,
    cache: AdCache,
}

/// The startd's view of configuration `text` on a 1-CPU machine.
fn load(text: &str) -> roost::config::Config {
    let scope = Scope {
        subsys: Some("STARTD".into()),
        localname: None,
    };
    load_text(
        "condor_config",
        text,
        scope,
        vec![("DETECTED_CPUS".into(), "1".into())],
    )
    .expect("config loads")
}

impl Node {
    fn new(config: &str) -> Node {
        let cfg = load(config);
        let inputs = MachineInputs {
            cpus: 1,
            memory_mb: 1024,
            disk_kb: 1_000_000,
            swap_kb: 0,
            gpus: 0,
        };
        let m = machine(&cfg, &inputs).expect("machine");
        let spec = layout(&cfg, &m).expect("layout").remove(0);
        let slot = spec.new_slot(&m, "sim", 0);
        Node {
            m,
            policy: Policy::from_config(&cfg, "slot1", spec.type_id).expect("policy"),
            spec,
            machine: parse_ad("[ KeyboardIdle = 1000; LoadAvg = 0.0; CondorLoadAvg = 0.0 ]")
                .expect("ad"),
            slot,
            log: Vec::new(),
            drain: None,
            cache: AdCache::default(),
        }
    }

    /// What the slot publishes of its one-slot machine.
    fn publish(&self) -> Publish<'_> {
        Publish {
            machine: &self.m,
            detected: (1, 1024),
            host: "sim",
            total_slots: 1,
            drain_times: (0, 0),
        }
    }

    /// What the slot would decide at `t` on `input`, nothing applied.
    fn decision(&self, t: i64, input: &Input) -> Decision {
        let publish = self.publish();
        let ctx = Ctx {
            publish: &publish,
            policy: &self.policy,
            spec: &self.spec,
            machine: &self.machine,
            now: t,
            drain: self.drain.as_ref(),
            cache: &self.cache,
        };
        decide(&self.slot, &ctx, input)
    }

    fn set(&mut self, attr: &str, value: i64) {
        self.machine.insert_value(attr, value);
    }

    /// Decides, checks the events replay, applies them, and returns the
    /// effects; transitions are logged as "from -> to (n, why)".
    fn at(&mut self, t: i64, input: Input) -> Vec<Effect> {
        let Decision { events, effects } = self.decision(t, &input);
        let mut replayed = self.slot.clone();
        for e in &events {
            if let SlotEvent::ActivityChanged {
                state,
                activity,
                transition,
                why,
                ..
            } = e
            {
                self.log.push((
                    t,
                    format!(
                        "{}/{} -> {state}/{activity} ({transition}, {why})",
                        replayed.state, replayed.activity
                    ),
                ));
            }
            apply(&mut replayed, e);
        }
        self.slot = replayed;
        effects
    }

    fn transitions(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
            .into_iter()
            .map(|(_, s)| s)
            .collect()
    }

    /// Whether this transition ("from -> to (n, why)") happened since the
    /// log was last taken.
    fn saw(&self, transition: &str) -> bool {
        self.log.iter().any(|(_, t)| t == transition)
    }

    fn is(&self, state: State, activity: Activity) {
        assert_eq!(
            (self.slot.state, self.slot.activity),
            (state, activity),
            "{:?}",
            self.slot
        );
    }
}

const FETCH: &str =
    "STARTD_JOB_HOOK_KEYWORD = ROOST\nFetchWorkDelay = 0\nSLOT_TYPE_0_PARTITIONABLE = False\n";
const JOB: &str = "[ Owner = \"u\"; Cmd = \"/bin/true\"; JobUniverse = 5 ]";

fn spawned(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::SpawnStarter { job } => Some(job.clone()),
        _ => None,
    })
}

#[test]
fn a_dedicated_slot_leaves_owner_at_once() {
    let mut n = Node::new("");
    n.at(0, Input::Evaluate);
    assert_eq!(
        n.transitions(),
        ["Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)"]
    );
}

#[test]
fn a_desktop_slot_stays_owner_while_the_keyboard_is_busy() {
    let mut n = Node::new("use POLICY : Desktop\n");
    n.set("KeyboardIdle", 10);
    n.at(0, Input::Evaluate);
    n.is(State::Owner, Activity::Idle);
    n.set("KeyboardIdle", 20 * 60);
    n.at(300, Input::Evaluate);
    n.is(State::Unclaimed, Activity::Idle);
    n.set("KeyboardIdle", 1);
    n.at(600, Input::Evaluate);
    assert_eq!(
        n.transitions(),
        [
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
            "Unclaimed/Idle -> Owner/Idle (2, IS_OWNER)"
        ]
    );
}

#[test]
fn a_fetched_job_runs_then_no_work_ends_the_claim() {
    let mut n = Node::new(FETCH);
    let fx = n.at(0, Input::Evaluate);
    assert!(fx.contains(&Effect::FetchWork), "{fx:?}");
    assert!(n.slot.fetching);
    let fx = n.at(1, Input::FetchedJob(JOB.into()));
    let reply = fx.iter().find_map(|e| match e {
        Effect::ReplyFetch { accept, job } => Some((*accept, job.clone())),
        _ => None,
    });
    let (accept, job) = reply.expect("REPLY_FETCH");
    assert!(accept);
    assert!(job.contains("HookKeyword = \"ROOST\""), "{job}");
    // As HTCondor: a static slot does not add requests the job lacks.
    assert!(!job.contains("RequestCpus"), "{job}");
    assert!(spawned(&fx).is_some());
    n.is(State::Claimed, Activity::Busy);

    let fx = n.at(5, Input::StarterExited);
    assert!(
        fx.contains(&Effect::FetchWork),
        "the claim fetches again: {fx:?}"
    );
    n.is(State::Claimed, Activity::Idle);
    let fx = n.at(6, Input::FetchedNothing);
    assert!(
        fx.iter().any(|e| matches!(e, Effect::EvictClaim { .. })),
        "{fx:?}"
    );
    n.is(State::Unclaimed, Activity::Idle);
    assert!(n.slot.claim.is_none());
    assert_eq!(
        n.transitions(),
        [
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
            "Unclaimed/Idle -> Claimed/Idle (5, fetched job accepted)",
            "Claimed/Idle -> Claimed/Busy (11, starter spawned)",
            "Claimed/Busy -> Claimed/Idle (12, starter exited)",
            "Claimed/Idle -> Preempting/Vacating (10, no more work)",
            "Preempting/Vacating -> Owner/Idle (22, claim ended)",
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
        ]
    );
    assert_eq!(n.slot.total_time.get("ClaimedBusy"), Some(&4));
}

#[test]
fn a_lost_starter_ends_the_claim_with_evict_claim_and_the_slot_fetches_again() {
    let mut n = Node::new(FETCH);
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.is(State::Claimed, Activity::Busy);
    let fx = n.at(5, Input::StarterLost);
    let evicted = fx.iter().find_map(|e| match e {
        Effect::EvictClaim { job, .. } => Some(job.clone()),
        _ => None,
    });
    assert!(
        evicted.is_some_and(|j| j.contains("HookKeyword = \"ROOST\"")),
        "{fx:?}"
    );
    assert!(fx.contains(&Effect::FetchWork), "fetches anew: {fx:?}");
    assert!(!fx.iter().any(|e| matches!(e, Effect::HardKill)), "{fx:?}");
    n.is(State::Unclaimed, Activity::Idle);
    assert!(n.slot.claim.is_none());
    assert_eq!(
        n.transitions()[2..],
        [
            "Claimed/Idle -> Claimed/Busy (11, starter spawned)",
            "Claimed/Busy -> Preempting/Killing (10, starter lost)",
            "Preempting/Killing -> Owner/Idle (25, claim ended)",
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
        ]
    );
    // A starter lost while the claim was already being vacated ends it
    // as the vacate would have.
    let mut n = Node::new(FETCH);
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.at(2, Input::VacateFast);
    n.is(State::Preempting, Activity::Killing);
    let fx = n.at(3, Input::StarterLost);
    assert!(
        fx.iter().any(|e| matches!(e, Effect::EvictClaim { .. })),
        "{fx:?}"
    );
    n.is(State::Unclaimed, Activity::Idle);
}

#[test]
fn a_second_job_reuses_the_claim() {
    let mut n = Node::new(FETCH);
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.at(5, Input::StarterExited);
    let fx = n.at(
        6,
        Input::FetchedJob("[ Owner = \"v\"; JobUniverse = 5 ]".into()),
    );
    let job = spawned(&fx).expect("spawned again");
    assert!(job.contains("\"v\""));
    n.is(State::Claimed, Activity::Busy);
    assert_eq!(n.slot.claim.as_ref().map(|c| c.activations), Some(2));
}

#[test]
fn fetch_waits_for_fetch_work_delay() {
    let mut n = Node::new(
        "STARTD_JOB_HOOK_KEYWORD = ROOST\nFetchWorkDelay = 60\nSLOT_TYPE_0_PARTITIONABLE = False\n",
    );
    let fx = n.at(100, Input::Evaluate);
    assert!(fx.contains(&Effect::FetchWork));
    n.at(101, Input::FetchedNothing);
    assert!(
        n.at(130, Input::FetchTimer).is_empty(),
        "30 s after the last fetch"
    );
    assert!(n.at(161, Input::FetchTimer).contains(&Effect::FetchWork));
}

#[test]
fn another_slots_work_prompts_a_fetch_when_fetch_work_delay_allows_one() {
    let mut n = Node::new(
        "STARTD_JOB_HOOK_KEYWORD = ROOST\nFetchWorkDelay = 1\nSLOT_TYPE_0_PARTITIONABLE = False\n",
    );
    assert!(n.at(100, Input::Evaluate).contains(&Effect::FetchWork));
    n.at(100, Input::FetchedNothing);
    // In the second of its last fetch, a delay of 1 is not over (HTCondor
    // counts whole seconds): the news changes nothing.
    assert!(n.at(100, Input::WorkFound("slot2".into())).is_empty());
    // From the next second on it is: the slot fetches at once, and the
    // event says which slot's work brought the fetch.
    let publish = n.publish();
    let ctx = Ctx {
        publish: &publish,
        policy: &n.policy,
        spec: &n.spec,
        machine: &n.machine,
        now: 101,
        drain: None,
        cache: &n.cache,
    };
    let d = decide(&n.slot, &ctx, &Input::WorkFound("slot2".into()));
    assert!(d.effects.contains(&Effect::FetchWork));
    assert_eq!(
        d.events,
        vec![SlotEvent::FetchStarted {
            at: 101,
            prompted_by: Some("slot2".into()),
        }]
    );
    // A fetch of its own says nothing of the kind.
    let d = decide(&n.slot, &Ctx { now: 101, ..ctx }, &Input::FetchTimer);
    assert_eq!(
        d.events,
        vec![SlotEvent::FetchStarted {
            at: 101,
            prompted_by: None,
        }]
    );
    // A fetch already running is not doubled.
    n.at(101, Input::WorkFound("slot2".into()));
    assert!(n.slot.fetching);
    assert!(n.at(101, Input::WorkFound("slot3".into())).is_empty());
}

#[test]
fn suspend_then_continue() {
    let mut n = Node::new(&format!(
        "{FETCH}WANT_SUSPEND = True\nSUSPEND = KeyboardIdle < 60\nCONTINUE = KeyboardIdle > 300\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.set("KeyboardIdle", 5);
    let fx = n.at(10, Input::Evaluate);
    assert_eq!(fx, [Effect::Suspend]);
    n.is(State::Claimed, Activity::Suspended);
    n.set("KeyboardIdle", 400);
    let fx = n.at(40, Input::Evaluate);
    assert!(fx.contains(&Effect::Continue), "{fx:?}");
    n.is(State::Claimed, Activity::Busy);
    assert_eq!(n.slot.claim.as_ref().map(|c| c.suspended_total), Some(30));
    let t = n.transitions();
    assert!(
        t.contains(&"Claimed/Busy -> Claimed/Suspended (14, SUSPEND)".to_string()),
        "{t:?}"
    );
    assert!(
        t.contains(&"Claimed/Suspended -> Claimed/Busy (15, CONTINUE)".to_string()),
        "{t:?}"
    );
}

#[test]
fn preempt_retires_then_vacates_then_kills() {
    let mut n = Node::new(&format!(
        "{FETCH}PREEMPT = KeyboardIdle < 60\nMaxJobRetirementTime = 100\nMachineMaxVacateTime = 10\n\
         FetchWorkDelay = ifThenElse(Activity == \"Idle\", 0, 1000)\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.set("KeyboardIdle", 5);
    assert!(n.at(20, Input::Evaluate).is_empty());
    n.is(State::Claimed, Activity::Retiring);
    assert!(
        n.at(50, Input::Evaluate).is_empty(),
        "80 s of retirement left"
    );
    // Retirement left (10 s at t=91) no longer exceeds the vacate time.
    let fx = n.at(91, Input::Evaluate);
    assert_eq!(fx, [Effect::SoftKill]);
    n.is(State::Preempting, Activity::Vacating);
    let fx = n.at(101, Input::Evaluate);
    assert_eq!(fx, [Effect::HardKill]);
    n.is(State::Preempting, Activity::Killing);
    assert_eq!(
        n.at(131, Input::Evaluate),
        [Effect::KillStarter],
        "KILLING_TIMEOUT"
    );
    let fx = n.at(132, Input::StarterExited);
    assert!(fx.iter().any(|e| matches!(e, Effect::EvictClaim { .. })));
    n.is(State::Unclaimed, Activity::Idle);
    let t = n.transitions();
    assert_eq!(
        t[3..],
        [
            "Claimed/Busy -> Claimed/Retiring (13, PREEMPT)",
            "Claimed/Retiring -> Preempting/Vacating (18, retirement expired)",
            "Preempting/Vacating -> Preempting/Killing (21, MachineMaxVacateTime)",
            "Preempting/Killing -> Owner/Idle (25, claim ended)",
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
        ]
    );
}

#[test]
fn the_job_may_only_lower_retirement_and_suspension_does_not_count() {
    let mut n = Node::new(&format!(
        "{FETCH}PREEMPT = KeyboardIdle < 60\nMaxJobRetirementTime = 1000\nMachineMaxVacateTime = 5\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(
        1,
        Input::FetchedJob("[ JobUniverse = 5; MaxJobRetirementTime = 50 ]".into()),
    );
    n.set("KeyboardIdle", 5);
    n.at(10, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    // 50 s of retirement (the job's), less 5 s of vacate time, from t=1.
    n.at(45, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    n.at(46, Input::Evaluate);
    n.is(State::Preempting, Activity::Vacating);
}

#[test]
fn suspension_does_not_count_against_retirement() {
    let mut n = Node::new(&format!(
        "{FETCH}PREEMPT = KeyboardIdle < 60\nMaxJobRetirementTime = 100\nMachineMaxVacateTime = 0\n\
         WANT_SUSPEND = LoadAvg > 5\nSUSPEND = LoadAvg > 5\nCONTINUE = LoadAvg < 1\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.set("LoadAvg", 10);
    n.at(11, Input::Evaluate);
    n.is(State::Claimed, Activity::Suspended);
    n.set("LoadAvg", 0);
    n.at(61, Input::Evaluate);
    n.is(State::Claimed, Activity::Busy);
    n.set("KeyboardIdle", 5);
    n.at(62, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    // Ran 10 s before and 1 s after 50 s suspended: 89 s of retirement left at t=62.
    n.at(150, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    n.at(151, Input::Evaluate);
    n.is(State::Preempting, Activity::Killing);
}

#[test]
fn vacate_retires_without_retirement_time_and_without_return() {
    let mut n = Node::new(FETCH);
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    let fx = n.at(3, Input::Vacate);
    assert_eq!(fx, [Effect::SoftKill]);
    n.is(State::Preempting, Activity::Vacating);
    n.at(4, Input::StarterExited);
    n.is(State::Unclaimed, Activity::Idle);
    let t = n.transitions();
    assert_eq!(
        t[3..5],
        [
            "Claimed/Busy -> Claimed/Retiring (13, vacate)",
            "Claimed/Retiring -> Preempting/Vacating (18, retirement expired)",
        ]
    );
}

#[test]
fn vacate_honours_retirement_and_fast_vacate_kills_at_once() {
    let mut n = Node::new(&format!("{FETCH}MaxJobRetirementTime = 3600\n"));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    // condor_vacate retires the job: it keeps running.
    assert!(n.at(3, Input::Vacate).is_empty());
    n.is(State::Claimed, Activity::Retiring);
    // -fast kills it, retirement or not.
    let fx = n.at(4, Input::VacateFast);
    assert_eq!(fx, [Effect::HardKill]);
    n.is(State::Preempting, Activity::Killing);
    let fx = n.at(5, Input::StarterExited);
    assert!(
        fx.iter().any(|e| matches!(e, Effect::EvictClaim { .. })),
        "the fetcher hears of it: {fx:?}"
    );
    n.is(State::Unclaimed, Activity::Idle);
}

#[test]
fn a_better_ranked_fetched_job_runs_when_the_slot_frees_never_lost() {
    let mut n = Node::new(&format!(
        "{FETCH}RANK = TARGET.Prio\nMaxJobRetirementTime = 30\nMachineMaxVacateTime = 5\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob("[ Prio = 1; JobUniverse = 5 ]".into()));
    // A worse job is refused.
    let fx = n.at(2, Input::FetchedJob("[ Prio = 1; JobUniverse = 5 ]".into()));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ReplyFetch { accept: false, .. })),
        "{fx:?}"
    );
    // A better one is accepted and waits.
    let fx = n.at(3, Input::FetchedJob("[ Prio = 5; JobUniverse = 5 ]".into()));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ReplyFetch { accept: true, .. })),
        "{fx:?}"
    );
    n.is(State::Claimed, Activity::Retiring);
    n.at(25, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    n.at(26, Input::Evaluate);
    n.is(State::Preempting, Activity::Vacating);
    let fx = n.at(27, Input::StarterExited);
    let job = spawned(&fx).expect("the waiting job starts");
    assert!(job.contains("Prio = 5"), "{job}");
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::EvictClaim { job, .. } if job.contains("Prio = 1")))
    );
    n.is(State::Claimed, Activity::Busy);
    let t = n.transitions();
    assert!(
        t.contains(
            &"Preempting/Vacating -> Claimed/Idle (23, waiting claim takes over)".to_string()
        ),
        "{t:?}"
    );
}

#[test]
fn start_false_ends_an_idle_claim_and_claim_worklife_too() {
    let mut n = Node::new(&format!(
        "{FETCH}CLAIM_WORKLIFE = 100\nFetchWorkDelay = 1000\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.at(5, Input::StarterExited);
    n.is(State::Claimed, Activity::Idle);
    n.at(50, Input::Evaluate);
    n.is(State::Claimed, Activity::Idle);
    n.at(102, Input::Evaluate);
    n.is(State::Unclaimed, Activity::Idle);
    let t = n.transitions();
    assert!(
        t.contains(&"Claimed/Idle -> Preempting/Vacating (10, CLAIM_WORKLIFE)".to_string()),
        "{t:?}"
    );
}

#[test]
fn a_job_that_does_not_match_start_is_rejected() {
    let mut n = Node::new(&format!("{FETCH}START = TARGET.Owner == \"good\"\n"));
    n.at(0, Input::Evaluate);
    let fx = n.at(1, Input::FetchedJob("[ Owner = \"bad\" ]".into()));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ReplyFetch { accept: false, .. }))
    );
    n.is(State::Unclaimed, Activity::Idle);
    let fx = n.at(2, Input::FetchedJob("[ Owner = \"good\" ]".into()));
    assert!(spawned(&fx).is_some());
}

#[test]
fn a_slot_without_a_keyword_never_fetches() {
    let mut n = Node::new("FetchWorkDelay = 0\n");
    assert!(n.at(0, Input::Evaluate).is_empty());
    assert!(n.at(10, Input::FetchTimer).is_empty());
}

#[test]
fn a_partitionable_slot_carves_a_rounded_up_dynamic_slot_or_rejects() {
    let mut n = Node::new("STARTD_JOB_HOOK_KEYWORD = ROOST\nFetchWorkDelay = 0\n");
    assert_eq!(n.slot.kind, roost::policy::slot::SlotKind::Partitionable);
    n.at(0, Input::Evaluate);
    let job = "[ RequestCpus = 1; RequestMemory = 100; RequestDisk = 10 ]";
    let d = n.decision(1, &Input::FetchedJob(job.into()));
    let created = d.events.iter().find_map(|e| match e {
        SlotEvent::DynamicSlotCreated {
            sub,
            resources,
            claim,
            ..
        } => Some((*sub, resources.clone(), claim.clone())),
        _ => None,
    });
    let (sub, res, claim) = created.expect("a dynamic slot");
    assert_eq!(sub, 1);
    assert_eq!(
        (res.cpus, res.memory_mb, res.disk_kb),
        (1.0, 128, 1024),
        "MODIFY_REQUEST_EXPR_* quantize"
    );
    assert!(claim.job.contains("RequestMemory = 128"), "{}", claim.job);
    assert!(
        d.effects
            .iter()
            .any(|e| matches!(e, Effect::ReplyFetch { accept: true, .. }))
    );
    n.at(1, Input::FetchedJob(job.into()));
    assert_eq!(n.slot.resources.memory_mb, 1024 - 128);
    assert_eq!(n.slot.free_child_id(), 2);

    n.at(2, Input::FetchTimer);
    let fx = n.at(
        3,
        Input::FetchedJob("[ RequestCpus = 1; RequestDisk = 10 ]".into()),
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ReplyFetch { accept: false, .. })),
        "no memory request: {fx:?}"
    );
    n.at(4, Input::FetchTimer);
    let fx = n.at(
        5,
        Input::FetchedJob("[ RequestCpus = 4; RequestMemory = 1; RequestDisk = 1 ]".into()),
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ReplyFetch { accept: false, .. })),
        "too big: {fx:?}"
    );
    n.is(State::Unclaimed, Activity::Idle);
}

#[test]
fn a_dynamic_slot_takes_the_first_devices_and_gives_them_back() {
    let mut n = Node::new(
        "STARTD_JOB_HOOK_KEYWORD = ROOST\nFetchWorkDelay = 0\n\
         MACHINE_RESOURCE_GPUs = CUDA0, CUDA1, CUDA2\n",
    );
    assert_eq!(n.slot.resources.ids["GPUs"], ["CUDA0", "CUDA1", "CUDA2"]);
    n.at(0, Input::Evaluate);
    let job = "[ RequestCpus = 1; RequestMemory = 100; RequestDisk = 10; RequestGPUs = 2 ]";
    let d = n.decision(1, &Input::FetchedJob(job.into()));
    let born = d.events.iter().find_map(|e| match e {
        SlotEvent::DynamicSlotCreated { resources, .. } => Some(resources.clone()),
        _ => None,
    });
    let res = born.expect("a dynamic slot");
    n.at(1, Input::FetchedJob(job.into()));
    assert_eq!(res.ids["GPUs"], ["CUDA0", "CUDA1"]);
    assert_eq!(n.slot.resources.ids["GPUs"], ["CUDA2"]);
    n.at(
        5,
        Input::ChildDeleted {
            sub: 1,
            resources: res,
        },
    );
    assert_eq!(n.slot.resources.ids["GPUs"].len(), 3);
    assert_eq!(n.slot.resources.custom["GPUs"], 3.0);
}

#[test]
fn a_busy_slot_fetches_only_when_a_job_could_outrank_its_own() {
    let fetches = |fx: &[Effect]| fx.iter().filter(|e| matches!(e, Effect::FetchWork)).count();
    // RANK refers to nothing of the job (default 0): no fetched job can
    // preempt, so a busy slot asks for none.
    let mut n = Node::new(FETCH);
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.is(State::Claimed, Activity::Busy);
    assert_eq!(fetches(&n.at(2, Input::FetchTimer)), 0);
    assert_eq!(fetches(&n.at(3, Input::Evaluate)), 0);
    // RANK that depends on the job: a better job may come, so it fetches.
    let mut n = Node::new(&format!("{FETCH}RANK = TARGET.Prio\n"));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    n.is(State::Claimed, Activity::Busy);
    assert_eq!(fetches(&n.at(2, Input::FetchTimer)), 1);
    // Once the job exits, the idle fetch claim fetches its next job.
    let mut n = Node::new(FETCH);
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    let fx = n.at(2, Input::StarterExited);
    let fx = if fetches(&fx) == 0 {
        n.at(3, Input::FetchTimer)
    } else {
        fx
    };
    assert_eq!(fetches(&fx), 1, "Claimed/Idle fetches: {:?}", n.slot);
}

#[test]
fn a_full_partitionable_slot_does_not_fetch_until_a_child_returns_its_cpus() {
    let mut n = Node::new("STARTD_JOB_HOOK_KEYWORD = ROOST\nFetchWorkDelay = 0\n");
    let fetches = |fx: &[Effect]| fx.iter().filter(|e| matches!(e, Effect::FetchWork)).count();
    assert_eq!(fetches(&n.at(0, Input::Evaluate)), 1, "room: it fetches");
    n.at(
        1,
        Input::FetchedJob("[ RequestCpus = 1; RequestMemory = 100; RequestDisk = 10 ]".into()),
    );
    assert_eq!(n.slot.resources.cpus, 0.0, "its only CPU is carved");
    // Full: the fetch timer and evaluations ask for no work it would have
    // to reject (HTCondor would fetch and reject here).
    assert_eq!(fetches(&n.at(2, Input::FetchTimer)), 0);
    assert_eq!(fetches(&n.at(3, Input::Evaluate)), 0);
    assert!(!n.slot.fetching);
    // The child goes and gives its CPU back: fetching resumes.
    let resources = roost::policy::slot::Resources {
        cpus: 1.0,
        memory_mb: 128,
        disk_kb: 1024,
        custom: std::collections::BTreeMap::new(),
        ..Default::default()
    };
    let fx = n.at(4, Input::ChildDeleted { sub: 1, resources });
    let fx = if fetches(&fx) == 0 {
        n.at(5, Input::FetchTimer)
    } else {
        fx
    };
    assert_eq!(fetches(&fx), 1, "room again: it fetches");
}

fn drain(how: DrainHow) -> Option<Drain> {
    Some(Drain::new(how, None).expect("drain"))
}

#[test]
fn draining_quick_skips_retirement_and_fast_kills() {
    for (how, first) in [
        (
            DrainHow::Graceful,
            "Claimed/Busy -> Claimed/Retiring (13, draining)",
        ),
        (
            DrainHow::Quick,
            "Claimed/Busy -> Claimed/Retiring (13, draining)",
        ),
        (
            DrainHow::Fast,
            "Claimed/Busy -> Preempting/Killing (0, drain fast)",
        ),
    ] {
        let mut n = Node::new(&format!(
            "{FETCH}MaxJobRetirementTime = 600\nMachineMaxVacateTime = 60\n"
        ));
        n.at(0, Input::Evaluate);
        n.at(1, Input::FetchedJob(JOB.into()));
        n.transitions();
        n.drain = drain(how);
        let mut fx = n.at(10, Input::Evaluate);
        fx.retain(|e| *e != Effect::FetchWork);
        let t = n.transitions();
        assert_eq!(t[0], first, "{how:?}: {t:?}");
        match how {
            DrainHow::Graceful | DrainHow::Peaceful => {
                assert!(fx.is_empty(), "{fx:?}");
                n.is(State::Claimed, Activity::Retiring);
            }
            DrainHow::Quick => {
                assert_eq!(fx, [Effect::SoftKill]);
                n.is(State::Preempting, Activity::Vacating);
            }
            DrainHow::Fast => {
                assert_eq!(fx, [Effect::HardKill]);
                n.is(State::Preempting, Activity::Killing);
            }
        }
        n.at(11, Input::StarterExited);
        n.is(State::Drained, Activity::Retiring);
        n.drain.as_mut().expect("draining").all_drained = true;
        n.at(12, Input::Evaluate);
        n.is(State::Drained, Activity::Idle);
        n.drain = None;
        n.at(13, Input::Evaluate);
        n.is(State::Unclaimed, Activity::Idle);
        let t = n.transitions();
        assert!(
            t.contains(&"Drained/Idle -> Owner/Idle (35, draining ended)".to_string()),
            "{t:?}"
        );
    }
}

#[test]
fn a_draining_slot_rejects_fetched_work() {
    let mut n = Node::new(FETCH);
    n.drain = drain(DrainHow::Graceful);
    let fx = n.at(0, Input::Evaluate);
    n.is(State::Drained, Activity::Retiring);
    assert!(
        fx.contains(&Effect::FetchWork),
        "drained slots keep fetching, as HTCondor's do"
    );
    let fx = n.at(1, Input::FetchedJob(JOB.into()));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ReplyFetch { accept: false, .. })),
        "{fx:?}"
    );
}

#[test]
fn benchmarks_run_once_from_unclaimed_and_hold_fetching_until_done() {
    // HTCondor's default RunBenchmarks is `LastBenchmark == 0`.
    let mut n = Node::new(FETCH);
    n.set("LastBenchmark", 0);
    let fx = n.at(0, Input::Evaluate);
    n.is(State::Unclaimed, Activity::Benchmarking);
    assert!(fx.contains(&Effect::RunBenchmarks), "{fx:?}");
    assert!(
        !fx.contains(&Effect::FetchWork),
        "no fetch while benchmarking: {fx:?}"
    );
    // Nothing moves it while the benchmarks run: no fetch, no evaluation.
    assert!(n.at(5, Input::FetchTimer).is_empty());
    assert!(n.at(300, Input::Evaluate).is_empty());
    n.is(State::Unclaimed, Activity::Benchmarking);
    // Done: the machine ad has its time stamp; back to Idle, and fetching.
    n.set("LastBenchmark", 301);
    let fx = n.at(301, Input::BenchmarksDone);
    n.is(State::Unclaimed, Activity::Idle);
    assert!(fx.contains(&Effect::FetchWork), "{fx:?}");
    assert!(!fx.contains(&Effect::RunBenchmarks), "{fx:?}");
    assert_eq!(
        n.transitions(),
        [
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
            "Unclaimed/Idle -> Unclaimed/Benchmarking (3, RunBenchmarks)",
            "Unclaimed/Benchmarking -> Unclaimed/Idle (4, benchmarks finished)"
        ]
    );
    // A late answer changes nothing.
    assert!(n.at(400, Input::BenchmarksDone).is_empty());
}

#[test]
fn run_benchmarks_false_never_benchmarks() {
    let mut n = Node::new(&format!("{FETCH}RunBenchmarks = False\n"));
    n.set("LastBenchmark", 0);
    let fx = n.at(0, Input::Evaluate);
    n.is(State::Unclaimed, Activity::Idle);
    assert!(!fx.contains(&Effect::RunBenchmarks), "{fx:?}");
}

#[test]
fn a_match_waits_for_its_claim_request_until_match_timeout() {
    let mut n = Node::new("SLOT_TYPE_0_PARTITIONABLE = False\nMATCH_TIMEOUT = 60\n");
    n.at(0, Input::Evaluate);
    n.at(5, Input::Match(JOB.into()));
    n.is(State::Matched, Activity::Idle);
    // Matched slots say no to everyone else, and wake up for the timeout.
    let publish = n.publish();
    let ctx = Ctx {
        publish: &publish,
        policy: &n.policy,
        spec: &n.spec,
        machine: &n.machine,
        now: 5,
        drain: None,
        cache: &n.cache,
    };
    let ad = roost::policy::engine::slot_ad(&n.slot, &ctx);
    assert!(matches!(
        ad.eval_attr("Requirements", &roost::classad::FixedEnv::new(5)),
        roost::classad::Value::Bool(false)
    ));
    assert_eq!(evaluation_interval(&n.slot, &n.policy, 5), 60);
    n.at(30, Input::Evaluate);
    n.is(State::Matched, Activity::Idle);
    n.at(65, Input::Evaluate);
    n.is(State::Unclaimed, Activity::Idle);
    let t = n.transitions();
    assert_eq!(
        t[1..],
        [
            "Unclaimed/Idle -> Matched/Idle (6, matched)",
            "Matched/Idle -> Owner/Idle (8, MATCH_TIMEOUT)",
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
        ]
    );
    // Matched again; work a fetch brings meanwhile is refused (the slot
    // is promised), then the claimant's request is judged by the real
    // Requirements (9).
    n.at(70, Input::Match(JOB.into()));
    let fx = n.at(75, Input::FetchedJob(JOB.into()));
    assert!(
        matches!(fx.as_slice(), [Effect::ReplyFetch { accept: false, .. }]),
        "{fx:?}"
    );
    n.is(State::Matched, Activity::Idle);
    let fx = n.at(80, Input::RequestClaim(JOB.into()));
    assert_eq!(fx, [Effect::ReplyClaim { accept: true }]);
    n.is(State::Claimed, Activity::Idle);
    assert_eq!(
        n.transitions().last().map(String::as_str),
        Some("Matched/Idle -> Claimed/Idle (9, claim request granted)")
    );
}

#[test]
fn start_false_gives_up_a_match() {
    let mut n = Node::new(
        "SLOT_TYPE_0_PARTITIONABLE = False\nSTART = KeyboardIdle > 100\n\
         IS_OWNER = KeyboardIdle < 100\n",
    );
    n.at(0, Input::Evaluate);
    n.at(1, Input::Match(JOB.into()));
    n.is(State::Matched, Activity::Idle);
    n.set("KeyboardIdle", 0);
    n.at(2, Input::Evaluate);
    n.is(State::Owner, Activity::Idle);
    assert!(n.saw("Matched/Idle -> Owner/Idle (8, START)"));
    // A match for a busy or owned slot changes nothing.
    assert!(n.at(3, Input::Match(JOB.into())).is_empty());
    n.is(State::Owner, Activity::Idle);
}

#[test]
fn an_expired_claim_lease_kills_the_job_and_keep_alives_renew_it() {
    let mut n = Node::new("SLOT_TYPE_0_PARTITIONABLE = False\n");
    n.at(0, Input::Evaluate);
    let job = "[ Owner = \"u\"; Cmd = \"/bin/true\"; JobLeaseDuration = 100 ]";
    n.at(1, Input::RequestClaim(job.into()));
    assert_eq!(n.slot.claim.as_ref().and_then(|c| c.lease), Some(100));
    n.at(2, Input::Activate);
    n.is(State::Claimed, Activity::Busy);
    n.at(90, Input::Alive);
    // The evaluation comes when the lease would run out.
    assert_eq!(evaluation_interval(&n.slot, &n.policy, 185), 5);
    assert_eq!(evaluation_interval(&n.slot, &n.policy, 188), 2);
    n.at(150, Input::Evaluate);
    n.is(State::Claimed, Activity::Busy);
    let fx = n.at(190, Input::Evaluate);
    assert_eq!(fx, [Effect::HardKill]);
    n.is(State::Preempting, Activity::Killing);
    assert_eq!(
        n.slot.claim.as_ref().and_then(|c| c.ending),
        Some(EndCause::LeaseExpired)
    );
    n.at(191, Input::StarterExited);
    n.is(State::Unclaimed, Activity::Idle);
    assert!(n.saw("Claimed/Busy -> Preempting/Killing (0, claim lease expired)"));
}

#[test]
fn a_claim_without_job_lease_duration_gets_the_alive_interval_lease_and_fetched_work_none() {
    let mut n = Node::new(&format!(
        "{FETCH}ALIVE_INTERVAL = 10\nMAX_CLAIM_ALIVES_MISSED = 3\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::RequestClaim(JOB.into()));
    assert_eq!(n.slot.claim.as_ref().and_then(|c| c.lease), Some(30));
    // An idle claim whose claimant is gone ends too (10, then 25).
    n.at(31, Input::Evaluate);
    n.is(State::Unclaimed, Activity::Idle);
    let mut f = Node::new(FETCH);
    f.at(0, Input::Evaluate);
    f.at(1, Input::FetchedJob(JOB.into()));
    assert_eq!(f.slot.claim.as_ref().map(|c| c.lease), Some(None));
}

const BACKFILL: &str = "SLOT_TYPE_0_PARTITIONABLE = False\nENABLE_BACKFILL = True\n\
    BACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = KeyboardIdle > 100\n\
    EVICT_BACKFILL = KeyboardIdle < 10\nBOINC_Executable = /usr/bin/boinc_client\n\
    BOINC_InitialDir = /var/lib/boinc\nBOINC_Universe = vanilla\n";

#[test]
fn backfill_starts_when_idle_and_leaves_for_the_owner() {
    let mut n = Node::new(BACKFILL);
    let fx = n.at(0, Input::Evaluate);
    assert_eq!(fx, [Effect::StartBackfill]);
    n.is(State::Backfill, Activity::Idle);
    // The client may come up late; until then the slot waits.
    assert!(n.at(1, Input::Evaluate).is_empty());
    n.at(2, Input::BackfillStarted);
    n.is(State::Backfill, Activity::Busy);
    assert!(n.slot.backfill);
    n.set("KeyboardIdle", 0);
    let fx = n.at(3, Input::Evaluate);
    assert_eq!(fx, [Effect::KillBackfill]);
    n.is(State::Backfill, Activity::Killing);
    n.at(4, Input::BackfillExited);
    // IS_OWNER is false: back to Unclaimed, where START_BACKFILL is false.
    n.is(State::Unclaimed, Activity::Idle);
    assert_eq!(
        n.transitions(),
        [
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
            "Unclaimed/Idle -> Backfill/Idle (7, START_BACKFILL)",
            "Backfill/Idle -> Backfill/Busy (26, backfill client running)",
            "Backfill/Busy -> Backfill/Killing (28, EVICT_BACKFILL)",
            "Backfill/Killing -> Backfill/Idle (29, backfill client gone)",
            "Backfill/Idle -> Owner/Idle (30, backfill ended)",
            "Owner/Idle -> Unclaimed/Idle (1, IS_OWNER)",
        ]
    );
}

#[test]
fn a_reconfig_that_turns_backfill_off_ends_it() {
    let mut n = Node::new(BACKFILL);
    n.at(0, Input::Evaluate);
    n.at(1, Input::BackfillStarted);
    n.is(State::Backfill, Activity::Busy);
    let cfg = load(&format!("{BACKFILL}ENABLE_BACKFILL = False\n"));
    n.policy = Policy::from_config(&cfg, "slot1", n.spec.type_id).expect("policy");
    assert_eq!(n.at(2, Input::Evaluate), [Effect::KillBackfill]);
    n.at(3, Input::BackfillExited);
    assert!(n.saw("Backfill/Busy -> Backfill/Killing (28, ENABLE_BACKFILL)"));
    // Back in Unclaimed, START_BACKFILL is no longer looked at.
    n.is(State::Unclaimed, Activity::Idle);
    assert!(n.at(4, Input::Evaluate).is_empty());
}

#[test]
fn backfill_gives_way_to_a_claim_and_a_late_client_is_let_go() {
    let mut n = Node::new(BACKFILL);
    n.at(0, Input::Evaluate);
    // A claim request arrives before the client runs: the slot is claimed
    // at once (31) …
    let fx = n.at(1, Input::RequestClaim(JOB.into()));
    assert_eq!(fx, [Effect::ReplyClaim { accept: true }]);
    n.is(State::Claimed, Activity::Idle);
    // … and the client that comes up afterwards is let go.
    assert_eq!(n.at(2, Input::BackfillStarted), [Effect::KillBackfill]);
    assert!(!n.slot.backfill);
    // A second claim while one waits for the client is refused.
    let mut m = Node::new(BACKFILL);
    m.at(0, Input::Evaluate);
    m.at(1, Input::BackfillStarted);
    let fx = m.at(2, Input::RequestClaim(JOB.into()));
    assert_eq!(
        fx,
        [Effect::ReplyClaim { accept: true }, Effect::KillBackfill]
    );
    m.is(State::Backfill, Activity::Killing);
    assert_eq!(
        m.at(3, Input::RequestClaim(JOB.into())),
        [Effect::ReplyClaim { accept: false }]
    );
    m.at(4, Input::BackfillExited);
    m.is(State::Claimed, Activity::Idle);
    assert!(m.saw("Backfill/Idle -> Claimed/Idle (31, claimed during backfill)"));
}

#[test]
fn backfill_needs_boinc_and_its_required_knobs() {
    let err = |text: &str| {
        Policy::from_config(&load(text), "slot1", 0)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(err(BACKFILL).is_empty());
    assert!(
        err("ENABLE_BACKFILL = True\nBACKFILL_SYSTEM = BOINC\n")
            .starts_with("BOINC_Executable: is required when ENABLE_BACKFILL is true"),
    );
    let e = err(&BACKFILL.replace("BOINC\n", "Folding\n"));
    assert!(e.starts_with("BACKFILL_SYSTEM: is \"Folding\""), "{e}");
    let e = err(&BACKFILL.replace("= vanilla", "= docker"));
    assert!(e.starts_with("BOINC_Universe: is \"docker\""), "{e}");
    // The client as the starter's job: V1 arguments, V2 in quotes.
    let env = roost::classad::FixedEnv::new(0);
    let job = backfill_job(&load(&format!(
        "{BACKFILL}BOINC_Arguments = -a b\nBOINC_Environment = \"X=1 Y=2\"\nBOINC_Owner = nobody\n"
    )))
    .expect("job");
    for (attr, want) in [
        ("Cmd", "/usr/bin/boinc_client"),
        ("Iwd", "/var/lib/boinc"),
        ("Args", "-a b"),
        ("Environment", "X=1 Y=2"),
        ("Owner", "nobody"),
    ] {
        assert_eq!(
            job.eval_attr(attr, &env).to_string(),
            format!("{want:?}"),
            "{attr}"
        );
    }
}

const RANKED: &str = "STARTD_JOB_HOOK_KEYWORD = ROOST\nFetchWorkDelay = 0\n\
    SLOT_TYPE_0_PARTITIONABLE = False\nRANK = TARGET.Prio\n";

fn prio(p: i64) -> String {
    format!("[ Owner = \"u\"; Cmd = \"/bin/true\"; JobUniverse = 5; Prio = {p} ]")
}

#[test]
fn retirement_that_ends_while_suspended_preempts_from_suspended() {
    // A desktop-style retirement that the owner's return cuts to nothing.
    let mut n = Node::new(&format!(
        "{RANKED}WANT_SUSPEND = True\nSUSPEND = LoadAvg > 5\nCONTINUE = LoadAvg < 2\n\
         MaxJobRetirementTime = ifThenElse(KeyboardIdle < 100, 0, 3600)\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(prio(1)));
    n.at(3, Input::FetchedJob(prio(5)));
    n.is(State::Claimed, Activity::Retiring);
    n.set("LoadAvg", 8);
    assert_eq!(n.at(4, Input::Evaluate), [Effect::Suspend]);
    n.is(State::Claimed, Activity::Suspended);
    n.set("KeyboardIdle", 0);
    n.at(5, Input::Evaluate);
    n.is(State::Preempting, Activity::Vacating);
    assert!(n.saw("Claimed/Retiring -> Claimed/Suspended (20, SUSPEND)"));
    assert!(n.saw("Claimed/Suspended -> Preempting/Vacating (17, retirement expired)"));
}

#[test]
fn a_waiting_claim_whose_claimant_is_gone_is_dropped_and_the_job_unretires() {
    let mut n = Node::new(&format!(
        "{RANKED}MaxJobRetirementTime = 3600\nALIVE_INTERVAL = 10\nMAX_CLAIM_ALIVES_MISSED = 3\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(prio(1)));
    // A better claim request: the fetched job retires for it.
    assert_eq!(
        n.at(2, Input::RequestClaim(prio(5))),
        [Effect::ReplyClaim { accept: true }]
    );
    n.is(State::Claimed, Activity::Retiring);
    n.at(20, Input::Alive);
    n.at(40, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    // Its lease (30 s) runs out at 50 with no keep-alive since 20.
    assert_eq!(evaluation_interval(&n.slot, &n.policy, 45), 5);
    n.at(50, Input::Evaluate);
    n.is(State::Claimed, Activity::Busy);
    assert!(n.slot.preempting.is_none());
    assert!(n.saw("Claimed/Retiring -> Claimed/Busy (19, better claim went away)"));
}

#[test]
fn a_killed_job_hands_the_slot_to_the_waiting_claim() {
    let mut n = Node::new(&format!("{RANKED}WANT_VACATE = False\n"));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(prio(1)));
    // No retirement: the better job preempts at once, by hard kill.
    let fx = n.at(2, Input::FetchedJob(prio(5)));
    assert!(fx.contains(&Effect::HardKill), "{fx:?}");
    n.is(State::Preempting, Activity::Killing);
    let fx = n.at(3, Input::StarterExited);
    assert!(
        spawned(&fx).is_some_and(|j| j.contains("Prio = 5")),
        "{fx:?}"
    );
    n.is(State::Claimed, Activity::Busy);
    assert!(n.saw("Preempting/Killing -> Claimed/Idle (24, waiting claim takes over)"));
}

#[test]
fn an_owned_slot_drains_and_a_cancelled_drain_returns_it_to_owner() {
    let mut n = Node::new("SLOT_TYPE_0_PARTITIONABLE = False\nIS_OWNER = KeyboardIdle < 100\n");
    n.set("KeyboardIdle", 0);
    n.at(0, Input::Evaluate);
    n.is(State::Owner, Activity::Idle);
    n.drain = drain(DrainHow::Graceful);
    n.at(1, Input::Evaluate);
    n.is(State::Drained, Activity::Retiring);
    n.drain = None;
    n.at(2, Input::Evaluate);
    n.is(State::Owner, Activity::Idle);
    assert!(n.saw("Owner/Idle -> Drained/Retiring (36, draining)"));
    assert!(n.saw("Drained/Retiring -> Owner/Idle (34, draining ended)"));
}

/// The slot ad is kept between calls and only what changed is copied into
/// it again: each call must still show the machine ad, the drain and the
/// state of that moment.
#[test]
fn the_slot_ad_shows_the_machine_drain_and_state_of_each_call() {
    use roost::classad::unparse::expr_to_string;
    let mut n = Node::new("SLOT_TYPE_0_PARTITIONABLE = False\nMATCH_TIMEOUT = 60\n");
    let ad_of = |n: &Node, machine: &ClassAd, drain: Option<&Drain>| {
        let publish = n.publish();
        let ctx = Ctx {
            publish: &publish,
            policy: &n.policy,
            spec: &n.spec,
            machine,
            now: 10,
            drain,
            cache: &n.cache,
        };
        roost::policy::engine::slot_ad(&n.slot, &ctx)
    };
    let text = |ad: &ClassAd, attr: &str| ad.lookup(attr).map(expr_to_string).unwrap_or_default();
    let own = text(&ad_of(&n, &n.machine, None), "Requirements");
    assert_eq!(own, "START && WithinResourceLimits");

    // A new machine ad (as a load-average update makes) shows; the same
    // one again leaves it as it is.
    let busy = parse_ad("[ KeyboardIdle = 5; LoadAvg = 1.5; CondorLoadAvg = 0.0 ]").expect("ad");
    assert_eq!(text(&ad_of(&n, &n.machine, None), "KeyboardIdle"), "1000");
    assert_eq!(text(&ad_of(&n, &busy, None), "KeyboardIdle"), "5");
    assert_eq!(text(&ad_of(&n, &busy, None), "KeyboardIdle"), "5");
    assert_eq!(text(&ad_of(&n, &n.machine, None), "KeyboardIdle"), "1000");

    // A drain's Requirements while it lasts, the policy's after it.
    let d = drain(DrainHow::Graceful).expect("drain");
    let draining = text(&ad_of(&n, &n.machine, Some(&d)), "Requirements");
    assert_ne!(draining, own);
    assert_eq!(text(&ad_of(&n, &n.machine, None), "Requirements"), own);

    // State and Activity strings follow the slot, and so does Requirements.
    n.at(0, Input::Evaluate);
    n.at(5, Input::Match(JOB.into()));
    n.is(State::Matched, Activity::Idle);
    let matched = ad_of(&n, &n.machine, None);
    assert_eq!(text(&matched, "State"), "\"Matched\"");
    assert_eq!(text(&matched, "Requirements"), "false");
    n.at(65, Input::Evaluate);
    n.is(State::Unclaimed, Activity::Idle);
    let back = ad_of(&n, &n.machine, None);
    assert_eq!(text(&back, "State"), "\"Unclaimed\"");
    assert_eq!(text(&back, "Requirements"), own);
    // An ad handed out earlier keeps what it showed.
    assert_eq!(text(&matched, "State"), "\"Matched\"");

    // A reconfigured slot's new policy shows at once, through the same
    // cache, and the machine's attributes are still there.
    assert_eq!(text(&back, "START"), "true");
    n.policy =
        Policy::from_config(&load("START = KeyboardIdle > 2000\n"), "slot1", 1).expect("policy");
    let after = ad_of(&n, &n.machine, None);
    assert_eq!(text(&after, "START"), "KeyboardIdle > 2000");
    assert_eq!(text(&after, "KeyboardIdle"), "1000");
    assert_eq!(text(&after, "State"), "\"Unclaimed\"");
}

/// "When an active claim is about to be preempted for any reason, it
/// enters retirement, while it waits for the current job to finish" —
/// even with no retirement time: Claimed/Busy → Claimed/Retiring (13),
/// then Preempting (18) at once.
#[test]
fn a_job_preempted_by_rank_without_retirement_time_passes_through_retiring() {
    let mut n = Node::new(&format!("{RANKED}MaxJobRetirementTime = 0\n"));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(prio(1)));
    n.transitions();
    let fx = n.at(2, Input::FetchedJob(prio(5)));
    assert!(fx.contains(&Effect::SoftKill), "{fx:?}");
    n.is(State::Preempting, Activity::Vacating);
    assert_eq!(
        n.transitions(),
        [
            "Claimed/Busy -> Claimed/Retiring (13, better claim waiting)",
            "Claimed/Retiring -> Preempting/Vacating (18, retirement expired)",
        ]
    );
    assert_eq!(
        n.slot.claim.as_ref().and_then(|c| c.ending),
        Some(EndCause::BetterClaim)
    );
}

/// "If JobMaxVacateTime is greater than MachineMaxVacateTime … the
/// transition to the Preempting state will happen X seconds before the end
/// of the retirement time, so that the hard-killing of the job will not
/// happen until the end of the retirement time."
#[test]
fn a_vacate_time_borrowed_from_retirement_kills_at_the_end_of_retirement() {
    let mut n = Node::new(&format!(
        "{RANKED}MaxJobRetirementTime = 100\nMachineMaxVacateTime = 10\n"
    ));
    n.at(0, Input::Evaluate);
    let job = "[ Owner = \"u\"; Cmd = \"/bin/true\"; JobUniverse = 5; Prio = 1; \
               JobMaxVacateTime = 40 ]";
    n.at(1, Input::FetchedJob(job.into()));
    n.at(2, Input::FetchedJob(prio(5)));
    n.is(State::Claimed, Activity::Retiring);
    // Retirement ends at 101 (the job started at 1): Vacating begins 40 s
    // before it.
    n.at(60, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    n.at(61, Input::Evaluate);
    n.is(State::Preempting, Activity::Vacating);
    // Not killed while retirement time is left, MachineMaxVacateTime or not.
    for t in [71, 80, 100] {
        n.at(t, Input::Evaluate);
        n.is(State::Preempting, Activity::Vacating);
    }
    n.at(101, Input::Evaluate);
    n.is(State::Preempting, Activity::Killing);
    assert!(n.saw("Preempting/Vacating -> Preempting/Killing (21, MachineMaxVacateTime)"));
}

/// "If the drain is cancelled while a job is retiring because of it, the
/// normal Claimed/Busy state is resumed (transition 19)": the claim goes on.
#[test]
fn cancelling_a_drain_resumes_the_retiring_job_under_its_claim() {
    let mut n = Node::new(&format!(
        "{FETCH}MaxJobRetirementTime = 600\nMachineMaxVacateTime = 60\n"
    ));
    n.at(0, Input::Evaluate);
    n.at(1, Input::FetchedJob(JOB.into()));
    let claim = n.slot.claim.as_ref().map(|c| c.id);
    n.drain = drain(DrainHow::Graceful);
    n.at(10, Input::Evaluate);
    n.is(State::Claimed, Activity::Retiring);
    n.transitions();
    n.drain = None;
    n.at(20, Input::Evaluate);
    n.is(State::Claimed, Activity::Busy);
    assert_eq!(
        n.transitions(),
        ["Claimed/Retiring -> Claimed/Busy (19, drain cancelled)"]
    );
    let c = n.slot.claim.as_ref().expect("the claim goes on");
    assert_eq!((Some(c.id), c.ending), (claim, None));
    // The job's end leaves the claim idle, as any fetched job's end does.
    n.at(30, Input::StarterExited);
    n.is(State::Claimed, Activity::Idle);
}
