//! A daemon killed with SIGKILL while a job runs, then started again, its
//! starters not waiting for a daemon (`ROOST_STARTER_ORPHAN_TIMEOUT = 0`;
//! `daemon_reattach.rs` has them waiting): the orphaned starter evicts its job (JOB_EXIT hears `evict`), the new run
//! replays the log, ends the lost claim with cause `Restart`, tells
//! EVICT_CLAIM under the claim's old ClaimId, reports the starter, keeps
//! claim numbers unique, and runs new work; the same from a checkpoint.
//! `roost-log follow` on a running daemon's log, read through the daemon's
//! socket. A log cut to its retention, with the rest archived.

use std::collections::BTreeSet;

use super::daemon::{count, events, stop, wait_for};
use super::daemon_admin::{Node, records};
use super::events_cli::roost_log;

/// Starts the daemon on `node`, lets it start a long job (1.0), and kills
/// it with SIGKILL; returns the event log's directory.
fn run_a_job_then_kill(node: &Node) -> std::path::PathBuf {
    node.job("long", 1, "300");
    let first = node.start();
    wait_for("the job to run", || node.states().contains("Claimed Busy"));
    let log = node.dir.join("spool/roost-events");
    wait_for("the job's pid in the log", || {
        count(&events(&log), "/event/Starter/JobStarted/pid", |_| true) == 1
    });
    first.kill();
    log
}

/// Waits for EVICT_CLAIM of job 1.0 and checks it names the `ClaimId`
/// REPLY_FETCH was given when the job was accepted; returns its record.
fn evicted_under_its_claim_id(node: &Node) -> String {
    let accepted = records(&node.dir, "reply")
        .into_iter()
        .find(|r| r.starts_with("argv: accept\n") && r.contains("\nClusterId = 1\n"))
        .expect("REPLY_FETCH accept for job 1");
    wait_for("EVICT_CLAIM for the lost claim", || {
        records(&node.dir, "evict")
            .iter()
            .any(|r| r.contains("\nClusterId = 1\n"))
    });
    let evicted = records(&node.dir, "evict")
        .into_iter()
        .find(|r| r.contains("\nClusterId = 1\n"))
        .unwrap_or_default();
    assert!(claim_id(&accepted).is_some(), "{accepted}");
    assert_eq!(claim_id(&evicted), claim_id(&accepted), "{evicted}");
    evicted
}

/// Runs jobs 1.0 to 4.0 one after the other on a daemon started on `node`,
/// then stops it; returns the event log's directory.
fn run_four_jobs(node: &Node) -> std::path::PathBuf {
    let daemon = node.start();
    for cluster in 1..=4 {
        node.job(&format!("j{cluster}"), cluster, "0");
        wait_for("the job's JOB_EXIT", || {
            records(&node.dir, "exit").iter().any(|r| {
                r.starts_with("argv: exit\n") && r.contains(&format!("\nClusterId = {cluster}\n"))
            })
        });
    }
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    node.dir.join("spool/roost-events")
}

/// The `ClaimId = …` line of a hook's recorded stdin.
pub(crate) fn claim_id(record: &str) -> Option<String> {
    record
        .lines()
        .find(|l| l.starts_with("ClaimId = "))
        .map(str::to_string)
}

#[test]
fn a_killed_daemon_restarts_from_its_log_and_the_orphaned_job_is_evicted() {
    // Starters that do not wait for a daemon: today's HTCondor behaviour.
    let node = Node::setup("restart", "ROOST_STARTER_ORPHAN_TIMEOUT = 0\n");
    let log = run_a_job_then_kill(&node);

    // The starter outlives the daemon, notices, and evicts the job.
    wait_for("JOB_EXIT evict", || {
        records(&node.dir, "exit")
            .iter()
            .any(|r| r.starts_with("argv: evict\n"))
    });

    let second = node.start();
    node.job("short", 2, "0");
    wait_for("the new job's JOB_EXIT", || {
        records(&node.dir, "exit")
            .iter()
            .any(|r| r.starts_with("argv: exit\n") && r.contains("\nClusterId = 2\n"))
    });
    // The fetcher hears the lost claim is gone, under the ClaimId it was
    // given when the job was accepted.
    let evicted = evicted_under_its_claim_id(&node);
    assert!(evicted.contains("\n-----\n"), "{evicted}");
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");

    let ev = events(&log);
    assert_eq!(
        count(&ev, "/event/Slot/ClaimEnded/cause", |c| c == "Restart"),
        1,
        "the lost claim ends once, with cause Restart"
    );
    assert_eq!(
        count(&ev, "/event/Daemon/Reconciled/what", |w| w
            .as_str()
            .is_some_and(|w| w.contains("job 1.0 nobody")
                && (w.contains("evicts its job")
                    || w.contains("is gone")))),
        1
    );
    assert_eq!(count(&ev, "/event/Daemon/Started/pid", |_| true), 2);
    // Every slot of each run starts with a snapshot.
    assert_eq!(count(&ev, "/event/Slot/Snapshot/slot/id", |_| true), 4);
    // The slot that lost its claim went back to Owner/Idle when the new
    // run began, before the new run's snapshot.
    let restarted = ev
        .iter()
        .position(|e| e.pointer("/event/Daemon/Started").is_some() && e["seq"] != 1)
        .expect("second start");
    let why_idle = ev[..restarted].iter().rev().find_map(|e| {
        e.pointer("/event/Slot/ActivityChanged/why")
            .and_then(|w| w.as_str())
    });
    assert_eq!(why_idle, Some("the daemon restarted"));
    // Claim numbers are never reused on a slot, across runs.
    let claims: Vec<(String, u64)> = ev
        .iter()
        .filter_map(|e| {
            Some((
                e["actor"].as_str()?.to_string(),
                e.pointer("/event/Slot/ClaimCreated/claim/id")?.as_u64()?,
            ))
        })
        .collect();
    let unique: BTreeSet<_> = claims.iter().collect();
    assert_eq!(claims.len(), 2, "{claims:?}");
    assert_eq!(unique.len(), claims.len(), "{claims:?}");

    // The audit trail tells the story.
    let audit = roost_log(&log, &["claims", "--json"]);
    let audit: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(audit.len(), 2, "{audit:?}");
    let lost = &audit[0];
    assert_eq!(lost["job"], "1.0");
    assert_eq!(lost["owner"], "nobody");
    assert_eq!(lost["end_cause"], "Restart");
    assert!(
        lost["anomalies"][0]
            .as_str()
            .is_some_and(|a| a.contains("lost when the daemon stopped"))
    );
    assert!(lost["fetched_at"].is_i64() && lost["started_at"][0].is_i64());
    let done = &audit[1];
    assert_eq!(done["job"], "2.0");
    assert!(
        done["job_outcome"]
            .as_str()
            .is_some_and(|o| o.starts_with("exit: ")),
        "{done}"
    );
    assert_eq!(done["anomalies"], serde_json::json!([]));
    let hooks = |c: &serde_json::Value| -> Vec<String> {
        c["hooks"]
            .as_array()
            .map(|h| {
                h.iter()
                    .filter_map(|h| Some(h["hook"].as_str()?.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let ran = hooks(done);
    assert!(
        ran.iter().any(|h| h == "REPLY_FETCH") && ran.iter().any(|h| h == "JOB_EXIT"),
        "{ran:?}"
    );
    assert_eq!(hooks(lost), ["REPLY_FETCH", "EVICT_CLAIM"], "{lost}");
    let text = roost_log(&log, &["claims", "--anomalies"]);
    assert!(
        text.starts_with("slot") && text.contains("job 1.0 (nobody") && !text.contains("job 2.0"),
        "{text}"
    );
    // The log is whole.
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_restart_replays_from_the_last_checkpoint_and_keeps_the_claims_identity() {
    let node = Node::setup(
        "restart-checkpoint",
        "ROOST_EVENT_LOG_CHECKPOINT_EVENTS = 3\nROOST_STARTER_ORPHAN_TIMEOUT = 0\n",
    );
    let log = run_a_job_then_kill(&node);
    let before = events(&log);
    assert!(
        count(&before, "/event/Daemon/Checkpoint/run/1", |h| h.is_string()) >= 2,
        "checkpoints name the run"
    );
    // Where replay of the killed run begins: a checkpoint, not its start.
    let boundary = before
        .iter()
        .rev()
        .find(|e| {
            e.pointer("/event/Daemon/Started").is_some()
                || e.pointer("/event/Daemon/Checkpoint").is_some()
        })
        .expect("a boundary");
    assert!(
        boundary.pointer("/event/Daemon/Checkpoint").is_some(),
        "{boundary}"
    );

    let second = node.start();
    // The ClaimId names the first run's start, which replay took from the
    // checkpoint.
    evicted_under_its_claim_id(&node);
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    let ev = events(&log);
    assert_eq!(
        count(&ev, "/event/Slot/ClaimEnded/cause", |c| c == "Restart"),
        1
    );
    assert_eq!(
        count(&ev, "/event/Daemon/Reconciled/what", |w| w
            .as_str()
            .is_some_and(|w| w.contains("job 1.0 nobody"))),
        1,
        "the running starter, known from the checkpoint or after it"
    );
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn roost_log_follows_a_running_daemon_through_its_socket() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let node = Node::setup("follow", "");
    let daemon = node.start();
    let log = node.dir.join("spool/roost-events");
    wait_for("the daemon's socket pointer", || {
        log.join("daemon.socket").exists()
    });
    let mut follow = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .arg("--log")
        .arg(&log)
        .args(["follow", "--kind", "Slot.ActivityChanged", "-n", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("roost-log follow starts");
    let out = follow.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The transitions of the job's slot arrive as they happen. `-n 0`
    // starts at the end of the log as `follow` first sees it, which may be
    // after a quick job is done: then the next job's transitions come.
    let mut cluster = 5;
    node.job("followed5", cluster, "0");
    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l.contains("-> Claimed/Busy")) {
        match rx.recv_timeout(std::time::Duration::from_secs(5)) {
            Ok(l) => seen.push(l),
            Err(_) if cluster < 15 => {
                cluster += 1;
                node.job(&format!("followed{cluster}"), cluster, "0");
            }
            Err(_) => panic!("no Claimed/Busy from follow: {seen:?}"),
        }
    }
    assert!(
        seen.iter().all(|l| l.contains(" -> ")),
        "only transitions: {seen:?}"
    );
    let _ = follow.kill();
    let _ = follow.wait();
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    assert!(
        !log.join("daemon.socket").exists(),
        "the pointer goes with the daemon"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn the_daemon_cuts_its_log_to_the_retention_and_archives_the_rest() {
    let node = Node::setup(
        "retention",
        "ROOST_EVENT_LOG_CHECKPOINT_EVENTS = 10\nROOST_EVENT_LOG_KEEP_MB = 0.001\n\
         ROOST_EVENT_LOG_ARCHIVE = $(LOCAL_DIR)/archive\n",
    );
    let log = run_four_jobs(&node);
    let verified = roost_log(&log, &["verify"]);
    assert!(
        verified.contains("earlier ones were cut by retention"),
        "{verified}"
    );
    // The archives and the log hold every event once, in order, and each
    // archive is a log `roost-log` reads: every job is in some audit trail.
    let parts = super::events_store::archive_parts(&node.dir.join("archive"));
    assert!(!parts.is_empty());
    let mut seqs = Vec::new();
    let mut audits = String::new();
    for place in parts.iter().chain(std::iter::once(&log)) {
        assert!(roost_log(place, &["verify"]).starts_with("ok: "));
        seqs.extend(events(place).iter().filter_map(|e| e["seq"].as_u64()));
        audits.push_str(&roost_log(place, &["claims", "--json"]));
    }
    let last = *seqs.last().expect("events");
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
    for cluster in 1..=4 {
        assert!(
            audits.contains(&format!("\"job\":\"{cluster}.0\"")),
            "job {cluster}.0 in no audit trail: {audits}"
        );
    }
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn without_an_archive_the_cut_claims_audit_trail_is_kept_as_configured() {
    let node = Node::setup(
        "retention-claims",
        "ROOST_EVENT_LOG_CHECKPOINT_EVENTS = 10\nROOST_EVENT_LOG_KEEP_MB = 0.001\n\
         ROOST_EVENT_LOG_KEEP_CLAIMS_DAYS = 30\n",
    );
    let log = run_four_jobs(&node);
    assert!(
        roost_log(&log, &["verify"]).contains("earlier ones were cut by retention"),
        "the log was cut"
    );
    assert!(log.join("claims-kept.jsonl").is_file());
    // Every job's claim, once, whole: accepted, started, ended with its
    // job's outcome and its hooks, nothing flagged.
    let audit: Vec<serde_json::Value> = roost_log(&log, &["claims", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    for cluster in 1..=4 {
        let job = format!("{cluster}.0");
        let mine: Vec<&serde_json::Value> = audit.iter().filter(|c| c["job"] == job).collect();
        assert_eq!(mine.len(), 1, "job {job}: {audit:?}");
        let c = mine[0];
        assert!(c["started_at"][0].is_i64(), "{c}");
        assert!(
            c["job_outcome"]
                .as_str()
                .is_some_and(|o| o.starts_with("exit: ")),
            "{c}"
        );
        assert_eq!(c["anomalies"], serde_json::json!([]), "{c}");
        assert!(
            c["hooks"]
                .as_array()
                .is_some_and(|h| h.iter().any(|h| h["hook"] == "REPLY_FETCH")),
            "{c}"
        );
    }
    let _ = std::fs::remove_dir_all(&node.dir);
}
