//! `roost eventd` end to end (`../shared/spec/eventd.txt`): three real
//! `roost startd` nodes in one private etcd, each running a job, and a
//! SHUTDOWN event due now. The eventd puts them down in RANK order with
//! the slow start (each one's `EndDownTime` a step after the last's) and
//! vacates their jobs in that order; a node killed and restarted during
//! the event stays down; the eventd killed mid-event and started again
//! leaves the machines already down alone and puts down a fourth node
//! that joined meanwhile; when each `EndDownTime` has passed, the
//! shutdown configurations are cleaned up and the nodes run jobs again.
//! Every decision is in the eventd's own event log.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::daemon::{Daemon, events, stop, temp, wait_for};
use super::daemon_admin::{Node, records, text};
use super::etcd::Etcd;

const SLOW_START: i64 = 3;
/// Long enough for the test's middle part, whatever second it starts at.
const DURATION: i64 = 60;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

/// Node `n` of a test's pool; `test` keeps its directory apart from the
/// other tests' nodes of the same name.
fn node(etcd: &Etcd, test: &str, n: u32) -> Node {
    let node = Node::setup(
        &format!("eventd-{test}-n{n}"),
        &format!(
            "ROOST_POOL_ETCD = {e}\nROOST_POOL_PREFIX = /ev\nROOST_POOL_ADMINS = anonymous\n\
             STARTD_NAME = n{n}@pool.test\nENABLE_PERSISTENT_CONFIG = True\n\
             PERSISTENT_CONFIG_DIR = $(LOCAL_DIR)/persist\nNodeRank = {n}\n\
             STARTD_ATTRS = NodeRank\nMAXJOBRETIREMENTTIME = 0\n",
            e = etcd.endpoint
        ),
    );
    std::fs::create_dir_all(node.dir.join("persist")).expect("mkdir");
    node
}

/// The eventd's configuration: one SHUTDOWN event starting at `start`
/// (UTC) for `duration` seconds, over the test's nodes, RANK NodeRank.
fn eventd_config(dir: &Path, etcd: &Etcd, start: i64, duration: i64) -> PathBuf {
    let day = ['U', 'M', 'T', 'W', 'R', 'F', 'S']
        [usize::try_from((start / 86400 + 4) % 7).expect("a weekday")];
    let (h, m) = ((start % 86400) / 3600, (start % 3600) / 60);
    std::fs::create_dir_all(dir).expect("mkdir");
    let cfg = dir.join("condor_config");
    std::fs::write(
        &cfg,
        format!(
            "LOCAL_DIR = {d}\nLOG = $(LOCAL_DIR)/log\nSPOOL = $(LOCAL_DIR)/spool\n\
             ROOST_POOL_ETCD = {e}\nROOST_POOL_PREFIX = /ev\nROOST_POOL_TIMEOUT = 10\n\
             EVENTD_INTERVAL = 120\nEVENTD_SHUTDOWN_SLOW_START_INTERVAL = {SLOW_START}\n\
             EVENTD_SHUTDOWN_CLEANUP_INTERVAL = 2\nEVENT_LIST = Nightly\n\
             Nightly = SHUTDOWN {day} {h:02}:{m:02} {duration} 10 OurNodes ByRank\n\
             OurNodes = regexp(\"@n[0-9]@pool.test$\", Name)\nByRank = NodeRank\n",
            d = dir.display(),
            e = etcd.endpoint
        ),
    )
    .expect("config");
    cfg
}

fn eventd(cfg: &Path) -> Daemon {
    Daemon::spawn(
        Command::new(env!("CARGO_BIN_EXE_roost"))
            .args(["eventd", "-f", "--config"])
            .arg(cfg)
            .env("TZ", "UTC")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

/// `EndDownTime` of each slot in the pool, `Name EndDownTime` per line.
fn down(node: &Node) -> Vec<String> {
    let o = node.roost(&["status", "-pool", "-af", "Name", "EndDownTime"]);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The eventd's decisions in its log, one line each: `Activated E`,
/// `Configured machine until`, `Vacated slot`, `Cleaned machine`, `Ended E`
/// (a request as it was recorded, before it was sent).
fn decisions(dir: &Path) -> Vec<String> {
    events(&dir.join("spool/roost-eventd-events"))
        .iter()
        .filter_map(|e| {
            let (kind, body) = e.pointer("/event/Eventd")?.as_object()?.iter().next()?;
            let s = |v: &serde_json::Value, k: &str| {
                v.get(k).and_then(|x| x.as_str()).map(str::to_string)
            };
            match kind.as_str() {
                "Activated" | "Ended" => Some(format!("{kind} {}", s(body, "event")?)),
                "Asked" => {
                    let machine = s(body, "machine")?;
                    let (what, ask) = body.get("ask")?.as_object()?.iter().next()?;
                    Some(match what.as_str() {
                        "configure" => format!("Configured {machine} {}", ask.get("until")?),
                        "vacate" => format!("Vacated {}", s(ask, "slot")?),
                        _ => format!("Cleaned {machine}"),
                    })
                }
                _ => None,
            }
        })
        .collect()
}

/// Each request of the eventd's log with how many answers it got.
fn answers_per_request(dir: &Path) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for e in events(&dir.join("spool/roost-eventd-events")) {
        if let Some(id) = e.pointer("/event/Eventd/Asked/id").and_then(|v| v.as_str()) {
            out.entry(id.to_string()).or_insert(0);
        }
        if let Some(id) = e
            .pointer("/event/Eventd/Answered/id")
            .and_then(|v| v.as_str())
        {
            *out.entry(id.to_string()).or_insert(0) += 1;
        }
    }
    out
}

#[test]
fn a_shutdown_event_puts_the_pool_down_in_rank_order_and_back() {
    let etcd = Etcd::start("eventd-etcd");
    let nodes: Vec<Node> = (1..=4).map(|n| node(&etcd, "e2e", n)).collect();
    let mut daemons: Vec<Option<Daemon>> = nodes[..3].iter().map(|n| Some(n.start())).collect();
    for (i, n) in nodes[..3].iter().enumerate() {
        n.job("long", u32::try_from(i + 1).expect("small"), "300");
    }
    wait_for("three busy nodes in the pool", || {
        nodes[..3]
            .iter()
            .all(|n| n.states().contains("Claimed Busy"))
            && down(&nodes[0]).len() == 6
    });

    // The event starts at the next whole minute at least 20 s away: due
    // at once (its start is within EVENTD_INTERVAL); it lasts a minute.
    let start = (now() + 20 + 59) / 60 * 60;
    let end = start + DURATION;
    let dir = temp("eventd-daemon");
    let cfg = eventd_config(&dir, &etcd, start, DURATION);
    let ev = eventd(&cfg);
    let expect_down = |n: u32, pos: i64| {
        let until = end + pos * SLOW_START;
        move |lines: &[String]| {
            lines
                .iter()
                .filter(|l| l.contains(&format!("@n{n}@pool.test")))
                .all(|l| l.ends_with(&format!(" {until}")))
        }
    };
    wait_for("the three nodes down, in RANK order", || {
        let d = down(&nodes[0]);
        expect_down(3, 0)(&d) && expect_down(2, 1)(&d) && expect_down(1, 2)(&d)
    });
    for n in &nodes[..3] {
        wait_for("the job vacated", || {
            records(&n.dir, "exit")
                .iter()
                .any(|r| r.starts_with("argv: evict\n"))
        });
    }
    ev.kill();
    let first = decisions(&dir);
    let vacated: Vec<&String> = first.iter().filter(|d| d.starts_with("Vacated")).collect();
    assert_eq!(vacated.len(), 3, "{first:#?}");
    for (v, n) in vacated.iter().zip([3, 2, 1]) {
        assert!(v.contains(&format!("@n{n}@pool.test")), "{first:#?}");
    }
    assert!(first[0].starts_with("Activated Nightly"), "{first:#?}");

    // A node restarted during the event stays down (its persistent
    // configuration); a job offered to it is not taken.
    daemons[1].take().expect("n2").kill();
    daemons[1] = Some(nodes[1].start());
    wait_for("n2 back in the pool", || {
        nodes[1].roost(&["status"]).status.success()
    });
    assert!(expect_down(2, 1)(&down(&nodes[0])), "{:?}", down(&nodes[0]));
    // Its START is false: it does not ask for work, and the job stays.
    nodes[1].job("turned-down", 9, "300");
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        nodes[1].dir.join("jobs/turned-down.job").exists(),
        "n2 took a job while down"
    );
    std::fs::remove_file(nodes[1].dir.join("jobs/turned-down.job")).expect("rm");

    // A fourth node joins with a job; the eventd, started again, replays
    // its log: it leaves the three alone and puts n4 down next in the
    // slow start (its count goes on from the log; without a log it would
    // start over, as the spec's stateless eventd's does).
    let d4 = nodes[3].start();
    nodes[3].job("long", 4, "300");
    wait_for("n4 busy in the pool", || {
        let o = nodes[0].roost(&["status", "-pool", "-af", "Name", "Activity"]);
        text(&o).contains("@n4@pool.test Busy")
    });
    let ev = eventd(&cfg);
    wait_for("n4 down", || expect_down(4, 3)(&down(&nodes[0])));
    wait_for("n4's job vacated", || {
        records(&nodes[3].dir, "exit")
            .iter()
            .any(|r| r.starts_with("argv: evict\n"))
    });
    daemons.push(Some(d4));

    // After the event: cleaned up, and jobs run again.
    let over = end + 3 * SLOW_START - now();
    if over > 0 {
        std::thread::sleep(std::time::Duration::from_secs(over.unsigned_abs() + 1));
    }
    wait_for("every shutdown configuration cleaned up", || {
        down(&nodes[0]).iter().all(|l| l.ends_with(" undefined"))
    });
    nodes[0].job("after", 10, "300");
    wait_for("a job runs after the event", || {
        nodes[0].states().contains("Claimed Busy")
    });
    let status = stop(ev);
    assert!(status.success(), "eventd exit: {status}");
    let all = decisions(&dir);
    let second = &all[first.len()..];
    let configured: Vec<&String> = second
        .iter()
        .filter(|d| d.starts_with("Configured"))
        .collect();
    assert_eq!(configured.len(), 1, "{second:#?}");
    assert_eq!(
        configured[0],
        &format!("Configured n4@pool.test {}", end + 3 * SLOW_START)
    );
    let cleaned = second.iter().filter(|d| d.starts_with("Cleaned")).count();
    assert_eq!(cleaned, 4, "{second:#?}");
    assert!(second.iter().any(|d| d == "Ended Nightly"), "{second:#?}");
    // The second run activated nothing again: the event was in its log.
    assert!(
        !second.iter().any(|d| d.starts_with("Activated")),
        "{second:#?}"
    );
    // Every request it recorded was answered once, those of the first run
    // it was killed before hearing of included.
    let answers = answers_per_request(&dir);
    assert!(answers.values().all(|n| *n == 1), "{answers:#?}");
    for (n, d) in nodes.iter().zip(daemons) {
        if let Some(d) = d {
            let _ = n;
            d.kill();
        }
    }
}

/// The eventd killed at each step of a request's life — recorded and not
/// sent, sent and not answered, answered and not recorded — then started
/// again: each run replays its log and looks up what the last one left
/// (taken from etcd if answered, waited for if sent, sent if not), so
/// every request is recorded once, reaches its machine once and is
/// answered once, and the event is carried to its end: both machines down
/// in RANK order, both jobs vacated.
#[test]
fn an_eventd_killed_at_each_step_of_a_request_neither_repeats_nor_skips_one() {
    let etcd = Etcd::start("eventd-crash-etcd");
    let nodes: Vec<Node> = (1..=2).map(|n| node(&etcd, "crash", n)).collect();
    let daemons: Vec<Daemon> = nodes.iter().map(Node::start).collect();
    for (i, n) in nodes.iter().enumerate() {
        n.job("long", u32::try_from(i + 1).expect("small"), "300");
    }
    wait_for("two busy nodes in the pool", || {
        nodes.iter().all(|n| n.states().contains("Claimed Busy")) && down(&nodes[0]).len() == 4
    });
    // An event on now: begun this minute, five minutes long.
    let start = now() / 60 * 60;
    let dir = temp("eventd-crash");
    let cfg = eventd_config(&dir, &etcd, start, 300);
    for failpoint in ["eventd-recorded", "eventd-sent", "eventd-answered"] {
        let mut ev = Daemon::spawn(
            Command::new(env!("CARGO_BIN_EXE_roost"))
                .args(["eventd", "-f", "--config"])
                .arg(&cfg)
                .env("TZ", "UTC")
                .env("ROOST_FAILPOINT", failpoint)
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        );
        let status = ev.wait(std::time::Duration::from_secs(60));
        assert!(
            status.is_some_and(|s| !s.success()),
            "the eventd did not die at {failpoint}: {status:?}"
        );
    }
    let ev = eventd(&cfg);
    for n in &nodes {
        wait_for("the job vacated", || {
            records(&n.dir, "exit")
                .iter()
                .any(|r| r.starts_with("argv: evict\n"))
        });
    }
    // Its log is the eventd's own while it runs: EventdLog says when each
    // request recorded has its answer recorded.
    wait_for("every request answered", || {
        let log = std::fs::read_to_string(dir.join("log/EventdLog")).unwrap_or_default();
        let asked = log.matches("Asking.").count();
        asked >= 4 && log.matches("Answered.").count() == asked
    });
    let status = stop(ev);
    assert!(status.success(), "eventd exit: {status}");
    // Decided once each: n2 (RANK 2) first.
    let d = decisions(&dir);
    // (Which of a node's two slots ran its job does not matter.)
    let asked: Vec<String> = (d.iter())
        .filter(|l| !l.starts_with("Activated"))
        .map(|l| l.replace("slot1@", "slot@").replace("slot2@", "slot@"))
        .collect();
    let end = start + 300;
    assert_eq!(
        asked,
        [
            format!("Configured n2@pool.test {end}"),
            format!("Configured n1@pool.test {}", end + SLOW_START),
            "Vacated slot@n2@pool.test".to_string(),
            "Vacated slot@n1@pool.test".to_string(),
        ],
        "{d:#?}"
    );
    assert_eq!(d.iter().filter(|l| l.starts_with("Activated")).count(), 1);
    // Answered once each.
    let answers = answers_per_request(&dir);
    assert!(answers.values().all(|n| *n == 1), "{answers:#?}");
    // Carried out once each by the machines.
    for n in &nodes {
        let log = n.start_log();
        let taken = log.matches("Pool request: runtime configuration.").count();
        assert_eq!(taken, 1, "{log}");
        let vacates = log.matches("Pool request: command.").count();
        assert_eq!(vacates, 1, "{log}");
    }
    for d in daemons {
        d.kill();
    }
}
