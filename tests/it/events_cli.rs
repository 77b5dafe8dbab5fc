//! `roost-log list` on the log `roost policy simulate --log` writes.

use std::process::Command;

#[test]
fn list_shows_a_simulated_runs_events() {
    let dir = std::env::temp_dir().join(format!("roost-log-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/policies/rank-preemption.toml"
    );
    let sim = Command::new(env!("CARGO_BIN_EXE_roost"))
        .args(["policy", "simulate", scenario, "--log"])
        .arg(&dir)
        .output()
        .expect("roost runs");
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );

    let list = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .arg("--log")
        .arg(&dir)
        .args(["list", "--actor", "slot1", "--json"])
        .output()
        .expect("roost-log runs");
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert!(lines.len() > 10, "{lines:?}");
    assert_eq!(lines[0]["seq"], 1);
    assert_eq!(lines[0]["actor"], "slot1");
    assert_eq!(
        lines[0]["event"]["Slot"]["ActivityChanged"]["transition"],
        1
    );
    let seqs: Vec<u64> = lines.iter().filter_map(|l| l["seq"].as_u64()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order");

    let text = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .arg("--log")
        .arg(&dir)
        .args(["list", "--from", "1"])
        .output()
        .expect("roost-log runs");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("-> Claimed/Retiring (transition 13, better claim waiting)"),
        "{text}"
    );

    let nowhere = dir.join("no-log-here");
    let missing = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .arg("--log")
        .arg(&nowhere)
        .arg("list")
        .output()
        .expect("roost-log runs");
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no event log here"));
    assert!(!nowhere.exists(), "reading never creates a log");
    let _ = std::fs::remove_dir_all(&dir);
}
