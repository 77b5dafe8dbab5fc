//! The daemon's own log against the real daemon: rotated at
//! `MAX_STARTD_LOG` into `StartLog.old`, whole lines on both sides; a new
//! limit taken at a reconfig; a limit it cannot read refused at start and
//! at a reconfig with the knob named. (Stamped
//! rotations, `MAX_NUM_STARTD_LOG` > 1 and ages: `actors::common::daemon_log`'s unit
//! tests.)

use std::path::Path;

use super::daemon::{stop, wait_for};
use super::daemon_admin::{Node, records, text};

/// The daemon's log files in `dir`: (name, text), the live log last.
fn logs(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("log dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("StartLog"))
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).unwrap_or_default();
            (n, text)
        })
        .collect();
    // The rotated file first, the live one last.
    v.sort_by_key(|(n, _)| n == "StartLog");
    v
}

/// Rotated before the line that would have been written past `limit`: a
/// file is under it without its last line.
fn under(text: &str, limit: usize) -> bool {
    let body = text.trim_end_matches('\n');
    let last = body.rsplit('\n').next().unwrap_or_default();
    body.len() - last.len() < limit
}

/// Drops `n` `/bin/sleep 0` jobs numbered from `from` and waits for their
/// JOB_EXIT (`from` jobs ran before).
fn run_jobs(node: &Node, from: u32, n: u32) {
    for i in from..from + n {
        node.job(&format!("j{i}"), 100 + i, "0");
    }
    wait_for("the jobs' JOB_EXIT", || {
        records(&node.dir, "exit").len() == (from + n) as usize
    });
}

#[test]
fn the_daemon_log_is_rotated_at_its_size_into_startlog_old() {
    let node = Node::setup(
        "logrotate",
        "STARTD_DEBUG = D_FULLDEBUG\nMAX_STARTD_LOG = 4 Kb\n",
    );
    let daemon = node.start();
    run_jobs(&node, 0, 6);
    assert!(stop(daemon).success());
    let logs = logs(&node.dir.join("log"));
    let names: Vec<&str> = logs.iter().map(|(n, _)| n.as_str()).collect();
    // MAX_NUM_STARTD_LOG is 1 by default: one rotated file, ".old".
    assert_eq!(names, ["StartLog.old", "StartLog"]);
    for (n, text) in &logs {
        assert!(under(text, 4096), "{n}: {} bytes", text.len());
        // Whole lines only, on both sides of a rotation.
        assert!(
            text.starts_with("20") && text.ends_with('\n'),
            "{n}:\n{text}"
        );
    }
    // The live log ends with the daemon's last words.
    assert!(logs[1].1.trim_end().ends_with("Stopped."), "{}", logs[1].1);
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_reconfig_gives_the_log_its_new_limit_and_refuses_one_that_does_not_read() {
    let node = Node::setup(
        "logreconfig",
        "STARTD_DEBUG = D_FULLDEBUG\nMAX_STARTD_LOG = 0\n",
    );
    let daemon = node.start();
    run_jobs(&node, 0, 3);
    let log = node.dir.join("log");
    assert!(!log.join("StartLog.old").exists(), "0: never rotated");
    let base = std::fs::read_to_string(&node.config).expect("config");
    std::fs::write(&node.config, format!("{base}MAX_STARTD_LOG = lots\n")).expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(
        !o.status.success() && text(&o).contains("MAX_STARTD_LOG"),
        "{}",
        text(&o)
    );
    std::fs::write(&node.config, format!("{base}MAX_STARTD_LOG = 2 Kb\n")).expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{}", text(&o));
    run_jobs(&node, 3, 3);
    assert!(stop(daemon).success());
    let live = std::fs::read_to_string(log.join("StartLog")).expect("StartLog");
    assert!(log.join("StartLog.old").exists(), "rotated at 2 Kb");
    assert!(under(&live, 2048), "{} bytes", live.len());
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_log_limit_the_daemon_cannot_read_stops_it_at_start_with_the_knob_named() {
    let node = Node::setup("logbadlimit", "MAX_STARTD_LOG = ten megabytes\n");
    let out = node.start_to_end();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("MAX_STARTD_LOG"), "{err}");
    assert!(err.contains("ten megabytes"), "{err}");
    let _ = std::fs::remove_dir_all(&node.dir);
}
