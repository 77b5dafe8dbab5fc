//! Operating the real daemon: what `roost startd` tells systemd through a
//! `NOTIFY_SOCKET` the test listens on (ready only once the slots answer,
//! the node's status as jobs come, reload around a reconfig, the watchdog
//! fed, stopping at a shutdown); `-json` views; the manual pages and shell
//! completions made from the command lines.

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::daemon::{Daemon, wait_for};
use super::daemon_admin::{Node, text};

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
