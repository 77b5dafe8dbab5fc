//! A configuration the daemon cannot use, against the real daemon: a knob
//! of its own that does not read (a hook timeout, the event log's
//! retention), a policy expression that does not parse, a slot layout this
//! machine cannot give. At a reconfig each is refused naming the knob, its
//! value and the file and line that set it, and the daemon runs on with the
//! configuration it had; at start it does not start.

use super::daemon::{stop, wait_for};
use super::daemon_admin::{Node, records, text};

/// `(at FILE, line N)` for the line a test appends to `base`.
fn appended_at(node: &Node, base: &str) -> String {
    format!(
        "(at {}, line {})",
        node.config.display(),
        base.lines().count() + 1
    )
}

#[test]
fn a_reconfig_that_does_not_read_is_refused_naming_knob_value_and_line_and_the_old_one_runs_on() {
    let node = Node::setup("config-refused", "");
    let daemon = node.start();
    node.job("before", 1, "0");
    wait_for("JOB_EXIT of the first job", || {
        records(&node.dir, "exit").len() == 1
    });
    let base = std::fs::read_to_string(&node.config).expect("config");
    assert!(base.ends_with('\n'));
    for (line, want) in [
        (
            "T_HOOK_FETCH_WORK_TIMEOUT = 5m",
            "T_HOOK_FETCH_WORK_TIMEOUT is not an integer: 5m",
        ),
        (
            "ROOST_EVENT_LOG_KEEP_DAYS = 7d",
            "ROOST_EVENT_LOG_KEEP_DAYS is not a real number: 7d",
        ),
        (
            "STARTER_UPDATE_INTERVAL = -60",
            "STARTER_UPDATE_INTERVAL is not a whole number of 0 or more: -60",
        ),
        (
            "BASE_CGROUP = $(CG)\nCG = $(BASE_CGROUP)",
            "BASE_CGROUP does not expand: circular reference",
        ),
        (
            "START = (Owner == \"nobody\"",
            "START: is not a ClassAd expression",
        ),
    ] {
        std::fs::write(&node.config, format!("{base}{line}\n")).expect("config");
        let o = node.roost(&["reconfig"]);
        let said = text(&o);
        assert!(!o.status.success(), "{line}: {said}");
        assert!(said.contains("reconfiguration refused"), "{line}: {said}");
        assert!(said.contains(want), "{line}: {said}");
        assert!(said.contains(&appended_at(&node, &base)), "{line}: {said}");
    }
    // A layout this machine cannot give would stop the next start: refused
    // now, while the slots the daemon has keep running.
    std::fs::write(&node.config, format!("{base}SLOT_TYPE_1 = cpus=4\n")).expect("config");
    let o = node.roost(&["reconfig"]);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(said.contains("slot layout: cannot create slot"), "{said}");

    // Nothing taken: the old configuration still runs jobs, and the
    // refusals are in the daemon's log.
    node.job("after", 2, "0");
    wait_for("JOB_EXIT of the second job", || {
        records(&node.dir, "exit").len() == 2
    });
    let log = node.start_log();
    assert_eq!(
        log.matches("Reconfiguration refused; keeping the old configuration.")
            .count(),
        6,
        "{log}"
    );
    std::fs::write(&node.config, &base).expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stop(daemon).success());
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_daemon_knob_that_does_not_read_stops_the_start_naming_knob_value_and_line() {
    let node = Node::setup("config-start", "");
    let base = std::fs::read_to_string(&node.config).expect("config");
    std::fs::write(
        &node.config,
        format!("{base}ROOST_EVENT_LOG_KEEP_MB = lots\n"),
    )
    .expect("config");
    let out = node.start_to_end();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("ROOST_EVENT_LOG_KEEP_MB is not a real number: lots"),
        "{err}"
    );
    assert!(err.contains(&appended_at(&node, &base)), "{err}");
    // Refused before anything was made: no event log, no socket.
    assert!(!node.dir.join("spool/roost-events").exists());
    let _ = std::fs::remove_dir_all(&node.dir);
}
