//! The daemon's own log against the real daemon: rotated at
//! `MAX_STARTD_LOG` into `StartLog.old`, whole lines on both sides, and a
//! limit it cannot read refused at start with the knob named. (Stamped
//! rotations, `MAX_NUM_STARTD_LOG` > 1 and ages: `cli::daemon_log`'s unit
//! tests.)

use std::path::Path;
use std::process::Command;

use super::daemon::{stop, wait_for};
use super::daemon_admin::{Node, records};

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

#[test]
fn the_daemon_log_is_rotated_at_its_size_into_startlog_old() {
    let node = Node::setup(
        "logrotate",
        "STARTD_DEBUG = D_FULLDEBUG\nMAX_STARTD_LOG = 4 Kb\n",
    );
    let daemon = node.start();
    for i in 0..6 {
        node.job(&format!("j{i}"), 100 + i, "0");
    }
    wait_for("the six jobs' JOB_EXIT", || {
        records(&node.dir, "exit").len() == 6
    });
    assert!(stop(daemon).success());
    let logs = logs(&node.dir.join("log"));
    let names: Vec<&str> = logs.iter().map(|(n, _)| n.as_str()).collect();
    // MAX_NUM_STARTD_LOG is 1 by default: one rotated file, ".old".
    assert_eq!(names, ["StartLog.old", "StartLog"]);
    for (n, text) in &logs {
        // Rotated before the line that would have been written past the
        // limit: a file is under 4 KiB without its last line.
        let body = text.trim_end_matches('\n');
        let last = body.rsplit('\n').next().unwrap_or_default();
        assert!(
            body.len() - last.len() < 4096,
            "{n}: {} bytes, last line {} bytes",
            text.len(),
            last.len()
        );
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
fn a_log_limit_the_daemon_cannot_read_stops_it_at_start_with_the_knob_named() {
    let node = Node::setup("logbadlimit", "MAX_STARTD_LOG = ten megabytes\n");
    let out = Command::new(env!("CARGO_BIN_EXE_roost"))
        .args(["startd", "-f", "--config"])
        .arg(&node.config)
        .output()
        .expect("roost runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("MAX_STARTD_LOG"), "{err}");
    assert!(err.contains("ten megabytes"), "{err}");
    let _ = std::fs::remove_dir_all(&node.dir);
}
