//! The daemon and the simulator are two drivers of one core: the same
//! scenario, run through the daemon's real actors on virtual time and
//! through `roost policy simulate`, gives every slot the same transitions
//! at the same times for the same reasons, and the node the same drains
//! and shutdowns. If either driver grew a decision of its own, this fails.

use std::sync::Arc;
use std::time::Duration;

use roost::actors::common::clock::RuntimeClock;
use roost::actors::startd::node::{Control, DrainRequest};
use roost::policy::engine::DrainHow;
use roost::policy::node::NodeEvent;
use roost::policy::sim::{Recorded, Scenario, simulate_with};
use roost::policy::slot::SlotEvent;

use super::actors_virtual::prepare;
use super::daemon::{events, temp};

/// A Unix time to start the daemon's virtual clock at.
const T0: i64 = 1_800_000_000;

/// A command of a scenario, at a second of virtual time.
#[derive(Clone, Copy, Debug)]
enum Cmd {
    Drain(DrainHow),
    Cancel,
    Off(DrainHow),
    Vacate,
    /// Re-read the configuration with these lines added.
    Reconfig(&'static str),
}

/// A slot's transition: at, state, activity, the manual's number, why.
type Transition = (i64, String, String, u64, String);

/// What a driver did: each slot's transitions (at, state, activity,
/// transition, why), and the node's events with their times made
/// relative to the start.
#[derive(Debug, PartialEq)]
struct Story {
    slots: std::collections::BTreeMap<String, Vec<Transition>>,
    node: Vec<serde_json::Value>,
}

impl Story {
    fn new() -> Story {
        Story {
            slots: std::collections::BTreeMap::new(),
            node: Vec::new(),
        }
    }

    /// Takes one logged event (as `roost-log list --json` prints it).
    fn take(&mut self, actor: &str, event: &serde_json::Value, base: i64) {
        if let Some(c) = event.pointer("/Slot/ActivityChanged") {
            self.slots.entry(actor.to_string()).or_default().push((
                c["at"].as_i64().unwrap_or(0) - base,
                c["state"].as_str().unwrap_or("").to_string(),
                c["activity"].as_str().unwrap_or("").to_string(),
                c["transition"].as_u64().unwrap_or(0),
                c["why"].as_str().unwrap_or("").to_string(),
            ));
        }
        if let Some(serde_json::Value::Object(n)) = event.get("Node") {
            let mut n = serde_json::Value::Object(n.clone());
            if let Some(serde_json::Value::Object(inner)) =
                n.as_object_mut().and_then(|m| m.values_mut().next())
                && let Some(at) = inner.get("at").and_then(serde_json::Value::as_i64)
            {
                inner.insert("at".into(), (at - base).into());
            }
            self.node.push(n);
        }
    }
}

/// The daemon's and the simulator's configuration: two static slots of
/// one CPU, no hooks, no benchmarks, and `policy`.
fn config(policy: &str) -> String {
    format!(
        "NUM_CPUS = 2\nMEMORY = 4096\nSLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\n\
         RunBenchmarks = False\nUPDATE_INTERVAL = 300\n{policy}\n"
    )
}

/// The scenario as `roost policy simulate` reads it.
fn scenario(policy: &str, duration: i64, cmds: &[(i64, Cmd)]) -> String {
    let mut s = format!(
        "duration = {duration}\nconfig = \"\"\"\n{}\"\"\"\n[machine]\ncpus = 2\nmemory = 4096\n",
        config(policy)
    );
    for (t, c) in cmds {
        let command = match c {
            Cmd::Drain(DrainHow::Graceful) => "drain graceful".to_string(),
            Cmd::Drain(DrainHow::Quick) => "drain quick".to_string(),
            Cmd::Drain(_) => "drain fast".to_string(),
            Cmd::Cancel => "drain cancel".to_string(),
            Cmd::Off(how) => format!("off {}", format!("{how:?}").to_lowercase()),
            Cmd::Vacate => "vacate".to_string(),
            Cmd::Reconfig(lines) => {
                s.push_str(&format!(
                    "[[event]]\nt = {t}\ncommand = \"reconfig\"\nconfig = \"\"\"\n{lines}\n\"\"\"\n"
                ));
                continue;
            }
        };
        s.push_str(&format!("[[event]]\nt = {t}\ncommand = \"{command}\"\n"));
    }
    s
}

/// The simulator's story.
fn simulated(policy: &str, duration: i64, cmds: &[(i64, Cmd)]) -> Story {
    let sc = Scenario::parse(&scenario(policy, duration, cmds)).expect("the scenario parses");
    let mut story = Story::new();
    simulate_with(
        &sc,
        |_| {},
        |actor, recorded| {
            let events: Vec<serde_json::Value> = match recorded {
                Recorded::Slot(es) => es
                    .iter()
                    .filter(|e| matches!(e, SlotEvent::ActivityChanged { .. }))
                    .map(|e| serde_json::json!({ "Slot": e }))
                    .collect(),
                Recorded::Node(es) => es
                    .iter()
                    .map(|e: &NodeEvent| serde_json::json!({ "Node": e }))
                    .collect(),
            };
            for e in &events {
                story.take(actor, e, 0);
            }
            Ok::<(), std::convert::Infallible>(())
        },
    )
    .expect("the simulation runs");
    story
}

/// The daemon's story: its real actors on virtual time, each command sent
/// at its second, then the log read back.
fn daemon(name: &str, policy: &str, duration: i64, cmds: &[(i64, Cmd)]) -> Story {
    let dir = temp(&format!("drivers-{name}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let config_path = dir.join("condor_config");
    let base = format!(
        "LOCAL_DIR = {d}\nLOG = $(LOCAL_DIR)/log\nEXECUTE = $(LOCAL_DIR)/execute\n\
         SPOOL = $(LOCAL_DIR)/spool\n{}",
        config(policy),
        d = dir.display()
    );
    std::fs::write(&config_path, &base).expect("config");
    let (config, prepared, reload) = prepare(&config_path, T0);
    let cmds = cmds.to_vec();
    let path = config_path.clone();
    let sys = actix::System::new();
    let committer = sys.block_on(async move {
        tokio::time::pause();
        let clock = Arc::new(RuntimeClock::starting_at(T0));
        let (shared, node, committer) = prepared.start(config, clock, reload);
        let mut now = 0;
        let mut text = base;
        for (t, c) in cmds {
            tokio::time::sleep(Duration::from_secs(u64::try_from(t - now).unwrap_or(0))).await;
            now = t;
            let control = match c {
                Cmd::Drain(how) => Control::Drain(DrainRequest::new(how)),
                Cmd::Cancel => Control::CancelDrain(None),
                Cmd::Off(how) => Control::Off(how),
                Cmd::Vacate => Control::Vacate(None, false),
                Cmd::Reconfig(lines) => {
                    text = format!("{text}\n{lines}\n");
                    std::fs::write(&path, &text).expect("config");
                    Control::Reconfig
                }
            };
            let _ = node.send(control).await;
        }
        tokio::time::sleep(Duration::from_secs(
            u64::try_from(duration - now).unwrap_or(0),
        ))
        .await;
        drop(shared);
        committer
    });
    drop(sys);
    drop(committer.finish());
    // The process exits once its shutdown is complete; here, on a test's
    // runtime, the actors go on after the system is told to stop, so what
    // they log after it is not the daemon's.
    let mut story = Story::new();
    for e in events(&dir.join("spool/roost-events")) {
        let actor = e["actor"].as_str().unwrap_or("").to_string();
        if e["time"].as_i64().unwrap_or(0) - T0 <= duration {
            story.take(&actor, &e["event"], T0);
        }
        if e.pointer("/event/Node/ShutdownCompleted").is_some() {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    story
}

fn same_story(name: &str, policy: &str, duration: i64, cmds: &[(i64, Cmd)]) {
    let sim = simulated(policy, duration, cmds);
    let real = daemon(name, policy, duration, cmds);
    assert!(
        !sim.slots.is_empty() && sim.slots.values().all(|v| !v.is_empty()),
        "{name}: the scenario moves every slot: {sim:?}"
    );
    assert_eq!(real.slots, sim.slots, "{name}: the slots' transitions");
    assert_eq!(real.node, sim.node, "{name}: the node's events");
}

#[test]
fn owner_hours_drains_and_a_cancel_are_the_same_in_both_drivers() {
    // The owner has each slot for an hour; then it is offered for half an
    // hour, and taken back.
    let policy = "START = True\nIS_OWNER = (State == \"Owner\" && $(StateTimer) < 3600) || \
                  (State == \"Unclaimed\" && $(StateTimer) >= 1800)";
    same_story(
        "owner",
        policy,
        5 * 3600,
        &[
            (4000, Cmd::Drain(DrainHow::Graceful)),
            (5000, Cmd::Vacate),
            (6500, Cmd::Cancel),
            (9000, Cmd::Drain(DrainHow::Quick)),
            (9001, Cmd::Drain(DrainHow::Fast)),
            (12_000, Cmd::Cancel),
            (16_000, Cmd::Off(DrainHow::Graceful)),
        ],
    );
}

#[test]
fn a_reconfig_and_a_peaceful_shutdown_are_the_same_in_both_drivers() {
    let policy = "START = True\nIS_OWNER = False";
    same_story(
        "reconfig",
        policy,
        4 * 3600,
        &[
            (1000, Cmd::Reconfig("IS_OWNER = $(StateTimer) < 1800")),
            (2000, Cmd::Reconfig("IS_OWNER = (")),
            (7000, Cmd::Drain(DrainHow::Graceful)),
            (7000, Cmd::Off(DrainHow::Peaceful)),
        ],
    );
}
