//! `roost-log` (list and its filters, state, claims, verify) on the log
//! `roost policy simulate --log` writes.

use std::process::Command;

/// The log `roost policy simulate examples/policies/<example>.toml --log`
/// writes, in a new temporary directory named after `name`.
fn simulated_log(name: &str, example: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("roost-log-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let scenario = format!(
        "{}/examples/policies/{example}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let sim = Command::new(env!("CARGO_BIN_EXE_roost"))
        .args(["policy", "simulate", &scenario, "--log"])
        .arg(&dir)
        .output()
        .expect("roost runs");
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    dir
}

#[test]
fn list_shows_a_simulated_runs_events() {
    let dir = simulated_log("cli", "rank-preemption");

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
    // A slot's events begin with its snapshot.
    assert_eq!(
        lines[0]["event"]["Slot"]["Snapshot"]["slot"]["state"],
        "Owner"
    );
    assert_eq!(
        lines[1]["event"]["Slot"]["ActivityChanged"]["transition"],
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

    // Filters: kind, time, claim.
    let kinds = roost_log(&dir, &["list", "--kind", "slot.activitychanged"]);
    assert!(kinds.lines().count() > 3);
    assert!(kinds.lines().all(|l| l.contains(" -> ")), "{kinds}");
    let early = roost_log(&dir, &["list", "--until", "@100"]);
    assert!(
        early.contains("-> Claimed/Busy") && !early.contains("Retiring"),
        "{early}"
    );
    let late = roost_log(
        &dir,
        &["list", "--since", "@100", "--kind", "Slot.ActivityChanged"],
    );
    assert!(
        late.lines().next().is_some_and(|l| l.contains("Retiring")),
        "{late}"
    );
    let dave = roost_log(&dir, &["list", "--slot", "slot1", "--claim", "2"]);
    assert!(
        dave.contains("PreemptingClaimQueued") && dave.contains("dave"),
        "{dave}"
    );
    assert!(
        dave.contains("waiting claim takes over") && !dave.contains("bob"),
        "{dave}"
    );

    // Time travel: at t = 200 bob's job retires for dave's.
    let state = roost_log(&dir, &["state", "--at", "1970-01-01T00:03:20Z"]);
    assert!(
        state.starts_with("slot1      Claimed    Retiring"),
        "{state}"
    );
    assert!(
        state.contains("claim 1 (job - bob, ending: BetterClaim)"),
        "{state}"
    );
    let seq = roost_log(&dir, &["state", "--at", "2", "--json"]);
    let seq: serde_json::Value = serde_json::from_str(&seq).expect("json");
    assert_eq!(seq["slots"]["slot1"]["state"], "Unclaimed");
    assert_eq!(seq["last_seq"], 2);

    // What changed while bob's job retired for dave's (records 20 to 45).
    let diff = roost_log(&dir, &["diff", "20", "45", "--actor", "slot1"]);
    assert!(diff.starts_with("from record 20 "), "{diff}");
    assert!(diff.contains("\nslots.slot1.claim.id: 1 -> 2\n"), "{diff}");
    assert!(
        diff.contains("\nslots.slot1.preempting: {…} -> null\n"),
        "{diff}"
    );
    assert!(
        !diff.contains("slots.slot1.state:"),
        "Claimed at both points: {diff}"
    );
    let diff = roost_log(&dir, &["diff", "20", "45", "--actor", "slot1", "--json"]);
    let diff: serde_json::Value = serde_json::from_str(&diff).expect("json");
    assert_eq!(diff["from"]["seq"], 20);
    assert_eq!(diff["to"]["seq"], 45);
    let change = |path: &str| {
        diff["changes"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["path"] == path))
            .cloned()
    };
    let id = change("slots.slot1.claim.id").expect("the claim id changed");
    assert_eq!(
        (id["before"].clone(), id["after"].clone()),
        (1.into(), 2.into())
    );
    assert!(change("slots.slot1.state").is_none());

    // The audit trail: three claims, in the order they were made.
    let claims = roost_log(&dir, &["claims", "--json"]);
    let owners: Vec<String> = claims
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json")["owner"].to_string())
        .collect();
    assert_eq!(owners, ["\"bob\"", "\"dave\"", "\"carol\""]);
    assert!(roost_log(&dir, &["verify"]).starts_with("ok: "));
    let verified: serde_json::Value =
        serde_json::from_str(&roost_log(&dir, &["verify", "--json"])).expect("json");
    assert_eq!(verified["ok"], true, "{verified}");
    assert_eq!(verified["first"], 1, "{verified}");
    assert_eq!(verified["events"], verified["last"], "{verified}");
    assert_eq!(verified["problems"], serde_json::json!([]), "{verified}");

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

/// `roost-log --log DIR ARGS…`, which must succeed; its stdout.
#[test]
fn state_and_diff_show_the_nodes_drain() {
    let dir = simulated_log("drain", "draining");
    let list = roost_log(&dir, &["list", "--kind", "Node", "--json"]);
    let kinds: Vec<String> = list
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|e| {
            e["event"]["Node"]
                .as_object()
                .and_then(|m| m.keys().next().cloned())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "DrainStarted",
            "DrainProgress",
            "DrainCompleted",
            "DrainEnded"
        ],
        "{list}"
    );
    let started = list.lines().next().unwrap_or_default();
    let at: serde_json::Value = serde_json::from_str(started).expect("JSON");
    let seq = at["seq"].as_u64().expect("seq");
    // Right after the drain began, the node is draining, with the
    // request's id and HTCondor's default reason.
    let during = roost_log(&dir, &["state", "--at", &seq.to_string()]);
    let node = during.lines().next().unwrap_or_default();
    assert!(
        node.starts_with("node") && node.contains("draining (Graceful)"),
        "{during}"
    );
    assert!(
        node.contains("request 1, reason \"by command\""),
        "{during}"
    );
    // At the end, the drain was cancelled: the node says when it ran.
    let after = roost_log(&dir, &["state"]);
    assert!(after.contains("not draining (last drain"), "{after}");
    // `diff` names the drain's coming and going.
    let diff = roost_log(&dir, &["diff", &(seq - 1).to_string(), &seq.to_string()]);
    assert!(diff.contains("node.drain"), "{diff}");
    let _ = std::fs::remove_dir_all(&dir);
}

pub(crate) fn roost_log(dir: &std::path::Path, args: &[&str]) -> String {
    let (ok, out, err) = roost_log_status(dir, args);
    assert!(ok, "roost-log {args:?}: {err}");
    out
}

/// Opens the sled database under `dir` directly, waiting for a store just
/// dropped to let go of its lock.
pub(crate) fn raw_sled(dir: &std::path::Path) -> sled::Db {
    for _ in 0..100 {
        if let Ok(db) = sled::open(dir) {
            return db;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("cannot open {}", dir.display());
}

fn roost_log_status(dir: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .arg("--log")
        .arg(dir)
        .args(args)
        .output()
        .expect("roost-log runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn verify_finds_damage_list_reads_past_it_and_repair_sets_it_aside() {
    use roost::events::{DaemonEvent, Event, EventStore, SledStore};
    let dir = std::env::temp_dir().join(format!("roost-log-damage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let mut store = SledStore::open(&dir).expect("open");
        for i in 0..10 {
            let actor = if i % 2 == 0 { "daemon" } else { "slot1" };
            let e = Event::Daemon(DaemonEvent::Command {
                command: format!("command {i}"),
            });
            let next = store.next_seq();
            store
                .append(next, &[(i, actor.to_string(), e)])
                .expect("append");
        }
    }
    assert!(roost_log(&dir, &["verify"]).starts_with("ok: 10 events"));
    {
        // Damage: record 4's bytes, record 7's index entry, and an index
        // entry for a record that does not exist.
        let db = raw_sled(&dir);
        let log = db.open_tree("log").expect("tree");
        log.insert(4u64.to_be_bytes(), &b"\xc1torn"[..])
            .expect("insert");
        let index = db.open_tree("by_actor").expect("tree");
        let mut k7 = b"daemon\0".to_vec();
        k7.extend_from_slice(&7u64.to_be_bytes());
        let mut k7s = b"slot1\0".to_vec();
        k7s.extend_from_slice(&7u64.to_be_bytes());
        index.remove(&k7).expect("remove");
        index.remove(&k7s).expect("remove");
        let mut k99 = b"slot9\0".to_vec();
        k99.extend_from_slice(&99u64.to_be_bytes());
        index.insert(k99, &[][..]).expect("insert");
        db.flush().expect("flush");
    }
    let (ok, out, _) = roost_log_status(&dir, &["verify", "--json"]);
    assert!(!ok, "verify fails on damage");
    let verified: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(verified["ok"], false, "{verified}");
    assert_eq!(
        verified["problems"].as_array().map(Vec::len),
        Some(3),
        "{verified}"
    );
    let (ok, out, _) = roost_log_status(&dir, &["verify"]);
    assert!(!ok, "verify fails on damage");
    assert!(out.contains("record 4 cannot be decoded"), "{out}");
    assert!(
        out.contains("record 7 (daemon) is missing from the per-actor index"),
        "{out}"
    );
    assert!(out.contains("the index names record 99"), "{out}");

    // Reading goes on past the damaged record, naming it.
    let (ok, out, err) = roost_log_status(&dir, &["list"]);
    assert!(!ok);
    assert_eq!(out.lines().count(), 9, "{out}");
    assert!(err.contains("record 4 cannot be decoded"), "{err}");

    let fixed = roost_log(&dir, &["repair"]);
    assert!(
        fixed.contains("record 4 set aside in tree quarantine"),
        "{fixed}"
    );
    // The dangling entry, and the one of the record set aside.
    assert!(
        fixed.contains("2 index entries without a record removed"),
        "{fixed}"
    );
    assert!(fixed.contains("1 missing index entries added"), "{fixed}");
    assert!(roost_log(&dir, &["verify"]).starts_with("ok: "));
    let again: serde_json::Value =
        serde_json::from_str(&roost_log(&dir, &["repair", "--json"])).expect("json");
    assert_eq!(
        again,
        serde_json::json!({"repaired": false, "actions": []}),
        "nothing left to repair"
    );
    let (ok, out, _) = roost_log_status(&dir, &["list", "--actor", "slot1"]);
    assert!(
        ok && out.lines().count() == 4,
        "record 4 was slot1's: {out}"
    );
    {
        // Nothing was deleted: the damaged bytes are kept.
        let db = raw_sled(&dir);
        let q = db.open_tree("quarantine").expect("tree");
        assert_eq!(
            q.get(4u64.to_be_bytes()).expect("get").as_deref(),
            Some(&b"\xc1torn"[..])
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
