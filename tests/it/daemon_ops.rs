//! Operating the real daemon: what `roost startd` tells systemd through a
//! `NOTIFY_SOCKET` the test listens on (ready only once the slots answer,
//! the node's status as jobs come, reload around a reconfig, the watchdog
//! fed, stopping at a shutdown); `-json` views; the manual pages and shell
//! completions made from the command lines.

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use roost::events::Event;
use roost::hooks::Exit;
use roost::startd::{HookEvent, StarterEvent};

use super::daemon::{Daemon, wait_for};
use super::daemon_admin::{Node, records, text};

/// Every datagram the daemon sent, in order, gathered by a thread.
struct Listener {
    got: Arc<Mutex<Vec<String>>>,
}

impl Listener {
    fn bind(path: &std::path::Path) -> Listener {
        let socket = UnixDatagram::bind(path).expect("notify socket");
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 4096];
            while let Ok(n) = socket.recv(&mut buf) {
                let m = String::from_utf8_lossy(&buf[..n]).into_owned();
                sink.lock().expect("lock").push(m);
            }
        });
        Listener { got }
    }

    fn all(&self) -> Vec<String> {
        self.got.lock().expect("lock").clone()
    }

    /// Waits for a message holding every one of `lines`; returns its index.
    fn wait(&self, lines: &[&str], after: usize) -> usize {
        let mut found = 0;
        wait_for(&format!("systemd to be told {lines:?}"), || {
            let all = self.all();
            match all.iter().enumerate().skip(after).find(|(_, m)| {
                lines
                    .iter()
                    .all(|l| m.lines().any(|x| x == *l || x.starts_with(l)))
            }) {
                Some((i, _)) => {
                    found = i;
                    true
                }
                None => false,
            }
        });
        found
    }
}

#[test]
fn systemd_hears_ready_status_reload_watchdog_and_stopping() {
    let node = Node::setup("systemd", "");
    let path = node.dir.join("notify.sock");
    let listener = Listener::bind(&path);
    // The watchdog is for the daemon's own pid, which systemd sets; here a
    // shell sets it to its own and becomes the daemon.
    let mut daemon = Daemon::spawn(
        Command::new("/bin/sh")
            .args([
                "-c",
                "WATCHDOG_PID=$$ exec \"$0\" startd -f --config \"$1\"",
                env!("CARGO_BIN_EXE_roost"),
            ])
            .arg(&node.config)
            .env("NOTIFY_SOCKET", &path)
            .env("WATCHDOG_USEC", "600000")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );

    // Ready: the first word (slots start in Owner, as HTCondor's do), and
    // the slots answer at once after it.
    let ready = listener.wait(&["READY=1"], 0);
    assert_eq!(ready, 0, "{:?}", listener.all());
    assert!(
        listener.all()[0].contains("STATUS=2 slots: 2 Owner/Idle"),
        "{:?}",
        listener.all()
    );
    listener.wait(&["STATUS=2 slots: 2 Unclaimed/Idle"], 0);
    let o = node.roost(&["status", "-af", "Name"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2);

    // The watchdog is fed (every 0.3 s).
    let first = listener.wait(&["WATCHDOG=1"], 0);
    listener.wait(&["WATCHDOG=1"], first + 1);

    // A job: the status follows the slots.
    node.job("sleepy", 1, "300");
    let busy = listener.wait(&["STATUS=2 slots: 1 Claimed/Busy, 1 Unclaimed/Idle"], 0);

    // The same through -json, as condor_status -json prints ads.
    let o = node.roost(&["status", "-json"]);
    let ads: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status -json");
    let states: Vec<&str> = ads
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|a| a["State"].as_str())
        .collect();
    assert_eq!(states.len(), 2, "{ads}");
    assert!(states.contains(&"Claimed"), "{ads}");
    let o = node.roost(&["who", "-json"]);
    let working: serde_json::Value = serde_json::from_slice(&o.stdout).expect("who -json");
    assert_eq!(working.as_array().map(Vec::len), Some(1), "{working}");
    assert_eq!(working[0]["JobId"], "1.0", "{working}");
    assert_eq!(working[0]["Activity"], "Busy", "{working}");

    // A reconfig is framed by RELOADING=1 (with the monotonic time) and
    // READY=1.
    daemon.signal(nix::sys::signal::Signal::SIGHUP);
    let reloading = listener.wait(&["RELOADING=1", "MONOTONIC_USEC="], busy);
    let again = listener.wait(&["READY=1"], reloading);
    assert!(
        listener.all()[again].contains("STATUS=2 slots: 1 Claimed/Busy"),
        "{:?}",
        listener.all()
    );

    // A fast shutdown: STOPPING=1 with why, then the daemon ends.
    daemon.signal(nix::sys::signal::Signal::SIGQUIT);
    let stopping = listener.wait(&["STOPPING=1"], again);
    assert!(
        listener.all()[stopping].contains("; shutting down (fast)"),
        "{:?}",
        listener.all()
    );
    let status = daemon.wait(Duration::from_secs(60)).expect("daemon stops");
    assert!(status.success(), "daemon exit: {status}");
    let told = listener.all();
    assert_eq!(
        told.iter().filter(|m| m.contains("READY=1")).count(),
        2,
        "{told:?}"
    );
}

#[test]
fn manual_pages_and_completions_come_from_the_command_lines() {
    let dir = super::daemon::temp("man");
    for (program, pages) in [
        (
            env!("CARGO_BIN_EXE_roost"),
            ["roost.1", "roost-status.1", "roost-classad-eval.1"],
        ),
        (
            env!("CARGO_BIN_EXE_roost-log"),
            ["roost-log.1", "roost-log-claims.1", "roost-log-tui.1"],
        ),
    ] {
        let o = Command::new(program)
            .arg("man")
            .arg(&dir)
            .output()
            .expect("runs");
        assert!(o.status.success(), "{}", text(&o));
        for page in pages {
            let path = dir.join(page);
            assert!(
                text(&o).contains(&path.display().to_string()),
                "{}",
                text(&o)
            );
            let body = std::fs::read_to_string(&path).expect("page");
            assert!(body.starts_with(".ie \\n(.g .ds Aq"), "{body}");
            assert!(body.contains(".SH OPTIONS"), "{body}");
        }
        // Hidden subcommands get no page.
        assert!(!dir.join("roost-starter.1").exists());
        for (shell, mark) in [
            ("bash", "complete -F"),
            ("zsh", "#compdef"),
            ("fish", "complete -c"),
        ] {
            let o = Command::new(program)
                .args(["completions", shell])
                .output()
                .expect("runs");
            assert!(o.status.success(), "{}", text(&o));
            assert!(text(&o).contains(mark), "{shell}: {}", text(&o));
        }
    }
    let status = std::fs::read_to_string(dir.join("roost-status.1")).unwrap_or_default();
    assert!(status.contains("json"), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A port nothing listens on now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `GET /metrics`: each sample's `name{labels}` with its value (none while
/// the daemon is not listening yet).
fn scrape(port: u16) -> std::collections::BTreeMap<String, f64> {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return std::collections::BTreeMap::new();
    };
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .expect("request");
    let mut reply = String::new();
    s.read_to_string(&mut reply).expect("reply");
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert!(body.ends_with("# EOF\n"), "{body}");
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (name, value) = l.rsplit_once(' ')?;
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

fn sample(m: &std::collections::BTreeMap<String, f64>, name: &str) -> f64 {
    m.get(name).copied().unwrap_or(0.0)
}

#[test]
fn the_metrics_agree_with_the_event_log() {
    let port = free_port();
    let node = Node::setup(
        "metrics",
        // Drained slots poll no more, so the counts can be taken at rest
        // (a poll that finds nothing is counted as it ends but written
        // only in a later run).
        &format!(
            "ROOST_METRICS = true\nROOST_METRICS_ADDRESS = 127.0.0.1:{port}\n\
             FetchWorkDelay = ifThenElse(State == \"Drained\", 3600, 1)\n"
        ),
    );
    let daemon = node.start();
    node.job("a", 1, "300");
    node.job("b", 2, "300");
    // While both run.
    wait_for("both jobs to run", || {
        let m = scrape(port);
        sample(&m, "roost_jobs_started_total") == 2.0
            && sample(&m, r#"roost_slots{state="Claimed",activity="Busy"}"#) == 2.0
    });
    let m = scrape(port);
    assert_eq!(sample(&m, "roost_starters"), 2.0, "{m:?}");
    assert!(sample(&m, "process_resident_memory_bytes") > 1e6, "{m:?}");
    assert!(sample(&m, "process_open_fds") > 3.0, "{m:?}");
    assert!(
        sample(&m, "roost_event_log_replay_duration_seconds") > 0.0,
        "{m:?}"
    );
    assert!(sample(&m, "roost_event_log_size_bytes") > 0.0, "{m:?}");
    // A fast drain evicts both; fetching stops, and the log goes quiet.
    let o = node.roost(&["drain", "-how", "fast"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("both jobs to end", || {
        sample(&scrape(port), r#"roost_jobs_ended_total{how="evict"}"#) == 2.0
    });
    wait_for("the slots to drain", || {
        sample(
            &scrape(port),
            r#"roost_slots{state="Drained",activity="Idle"}"#,
        ) == 2.0
    });
    let mut last = (-1.0, -1.0);
    wait_for("the log and the polls to go quiet", || {
        std::thread::sleep(Duration::from_millis(700));
        let m = scrape(port);
        let polls: f64 = m
            .iter()
            .filter(|(k, _)| k.starts_with("roost_hook_runs_total{hook=\"FETCH_WORK\","))
            .map(|(_, v)| v)
            .sum();
        let now = (sample(&m, "roost_event_log_events_total"), polls);
        std::mem::replace(&mut last, now) == now
    });
    let m = scrape(port);
    let all = super::daemon::events(&node.dir.join("spool/roost-events"));
    // The runs of empty polls held when the daemon stops are written then.
    let status = super::daemon::stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let folded: u64 = super::daemon::events(&node.dir.join("spool/roost-events"))
        .iter()
        .filter_map(|e| e.pointer("/event/Slot/FetchesEmpty/count")?.as_u64())
        .sum();
    let started = all
        .iter()
        .rposition(|e| e.pointer("/event/Daemon/Started").is_some())
        .expect("the run's start");
    let run = &all[started..];
    let events =
        |pointer: &str, want: &str| super::daemon::count(run, pointer, |v| v == want) as f64;
    assert_eq!(
        sample(&m, "roost_event_log_events_total"),
        run.len() as f64,
        "{m:?}"
    );
    assert_eq!(sample(&m, "roost_starters"), 0.0, "{m:?}");
    assert_eq!(
        sample(&m, "roost_jobs_started_total"),
        super::daemon::count(run, "/event/Starter/JobStarted/pid", |_| true) as f64
    );
    assert_eq!(
        sample(&m, r#"roost_jobs_ended_total{how="evict"}"#),
        events("/event/Starter/JobExited/how", "evict")
    );
    for hook in ["FETCH_WORK", "REPLY_FETCH"] {
        let counted: f64 = m
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("roost_hook_runs_total{{hook=\"{hook}\",")))
            .map(|(_, v)| v)
            .sum();
        // Polls that found nothing are held in runs (`Slot.FetchesEmpty`),
        // written before the slot's next event or as the daemon stops.
        let folded = if hook == "FETCH_WORK" { folded } else { 0 };
        assert_eq!(
            counted,
            events("/event/Hook/Started/hook", hook) + folded as f64,
            "{hook}: {m:?}"
        );
        assert_eq!(
            sample(
                &m,
                &format!("roost_hook_duration_seconds_count{{hook=\"{hook}\"}}")
            ),
            counted,
            "{hook}"
        );
    }
    assert_eq!(
        sample(
            &m,
            r#"roost_hook_runs_total{hook="FETCH_WORK",outcome="job"}"#
        ),
        2.0
    );
    assert_eq!(
        sample(&m, r#"roost_hook_runs_total{hook="JOB_EXIT",outcome="ok"}"#),
        events("/event/Starter/Hook/hook", "JOB_EXIT")
    );
    assert_eq!(
        sample(&m, "roost_hook_duration_seconds_count{hook=\"JOB_EXIT\"}"),
        2.0
    );
    assert!(sample(&m, "roost_event_log_flush_duration_seconds_count") > 0.0);
}

/// Every metric the example Grafana dashboard plots is one the daemon
/// exports (a renamed metric breaks the dashboard, and this test).
#[test]
fn the_example_dashboard_plots_only_exported_metrics() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/grafana/roost-node.json"),
    )
    .expect("dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("dashboard is JSON");
    // Families show once they have a member: one of each.
    let metrics = roost::metrics::global();
    metrics.set_slots(&[(("Claimed".to_string(), "Busy".to_string()), 1)].into());
    let hook = |e| (0, "fetch1".to_string(), Event::Hook(e));
    metrics.observe_group(
        &[
            hook(HookEvent::Started {
                hook: "FETCH_WORK".into(),
                slot: "slot1".into(),
                path: "/bin/true".into(),
                args: Vec::new(),
                pid: 1,
                claim: None,
            }),
            hook(HookEvent::Finished {
                exit: Exit::Code(0),
                timed_out: false,
                truncated: false,
                stdout_bytes: 0,
                outcome: "no work".into(),
                elapsed: 0.01,
                handout: None,
            }),
            (
                0,
                "starter1".into(),
                Event::Starter(StarterEvent::JobExited {
                    exit: Exit::Code(0),
                    how: "exit".into(),
                    duration: 1.0,
                }),
            ),
        ],
        Duration::from_millis(1),
    );
    let exported = metrics.encode();
    let types: Vec<&str> = exported
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let mut plotted = 0;
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            let names = expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("roost_") || w.starts_with("process_"));
            for name in names {
                plotted += 1;
                let family = ["_total", "_bucket", "_count", "_sum"]
                    .iter()
                    .find_map(|s| name.strip_suffix(s))
                    .unwrap_or(name);
                assert!(
                    types.contains(&family),
                    "{} plots {name}, which is not exported:\n{exported}",
                    panel["title"]
                );
            }
        }
    }
    assert!(plotted >= 15, "{plotted}");
}

/// The daemon, as the policy engine: a job retiring because of a graceful
/// drain goes back to Claimed/Busy when the drain is cancelled
/// (transition 19), under the same claim, still running.
#[test]
fn a_cancelled_drain_resumes_the_retiring_job() {
    let node = Node::setup("drain-resume", "");
    let daemon = node.start();
    node.job("long", 1, "300");
    wait_for("the job to run", || node.states().contains("Claimed Busy"));
    let pid = node.job_pid();
    let o = node.roost(&["drain"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("the job to retire", || {
        node.states().contains("Claimed Retiring")
    });
    let o = node.roost(&["drain", "-cancel"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("the job to run on", || {
        node.states().contains("Claimed Busy")
    });
    assert_eq!(node.job_pid(), pid, "the same job runs on");
    assert!(records(&node.dir, "exit").is_empty(), "no JOB_EXIT");
    let log = super::daemon::events(&node.dir.join("spool/roost-events"));
    let resumed = super::daemon::count(&log, "/event/Slot/ActivityChanged/why", |v| {
        v == "drain cancelled"
    });
    assert_eq!(resumed, 1, "{log:?}");
    let o = node.roost(&["drain", "-how", "fast"]);
    assert!(o.status.success(), "{}", text(&o));
    let status = super::daemon::stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
}
