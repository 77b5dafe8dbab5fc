//! A daemon killed with SIGKILL while a job runs, its starters waiting for
//! a daemon (`ROOST_STARTER_ORPHAN_TIMEOUT` above 0, the default): the job
//! goes on, the restarted daemon takes its starter again, the slot stays
//! Claimed/Busy under the same claim, and the fetcher hears the job's end
//! once (JOB_EXIT `exit`), never EVICT_CLAIM; commands reach the job after
//! the restart; a starter that dies while no daemon runs is reported lost
//! once; after the machine restarts, a job that ran is reported ended
//! once (JOB_EXIT `evict`).

use super::daemon::{count, events, stop, wait_for};
use super::daemon_admin::{Node, records, text};
use super::daemon_restart::claim_id;
use super::events_cli::roost_log;

/// Leftover starters of a failed test go within a minute.
const ORPHANS: &str = "ROOST_STARTER_ORPHAN_TIMEOUT = 60\n";

/// The records of `hook` for job `cluster`.0.
fn of_job(node: &Node, hook: &str, cluster: u32) -> Vec<String> {
    records(&node.dir, hook)
        .into_iter()
        .filter(|r| r.contains(&format!("\nClusterId = {cluster}\n")))
        .collect()
}

/// Starts a daemon on `node`, lets job `cluster`.0 (`sleep secs`) start,
/// and kills the daemon with SIGKILL; the event log's directory.
fn start_job_then_kill(node: &Node, cluster: u32, secs: &str) -> std::path::PathBuf {
    node.job(&format!("j{cluster}"), cluster, secs);
    run_then_kill(node, &[])
}

/// Starts a daemon on `node` (with `env`), lets the job waiting there
/// start, and kills the daemon with SIGKILL; the event log's directory.
fn run_then_kill(node: &Node, env: &[(&str, &str)]) -> std::path::PathBuf {
    let first = node.start_with(env);
    wait_for("the job to run", || !node.job_pid().is_empty());
    let log = node.dir.join("spool/roost-events");
    wait_for("the job's start in the log", || {
        count(&events(&log), "/event/Starter/JobStarted/pid", |_| true) >= 1
    });
    first.kill();
    log
}

#[test]
fn a_restarted_daemon_takes_its_running_job_again_and_the_fetcher_hears_its_end_once() {
    let node = Node::setup("reattach", ORPHANS);
    let log = start_job_then_kill(&node, 1, "5");
    let pid_before = {
        let ev = events(&log);
        ev.iter()
            .find_map(|e| e.pointer("/event/Starter/JobStarted/pid")?.as_u64())
            .expect("job pid")
    };
    // The job goes on without a daemon.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        std::path::Path::new(&format!("/proc/{pid_before}")).exists(),
        "the job still runs"
    );
    let second = node.start();
    wait_for("the slot busy with the same job", || {
        node.job_pid() == pid_before.to_string()
    });
    assert!(node.states().contains("Claimed Busy"), "{}", node.states());
    wait_for("JOB_EXIT of job 1", || !of_job(&node, "exit", 1).is_empty());
    wait_for("the slot to be free again", || {
        !node.states().contains("Claimed Busy")
    });
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");

    let exits = of_job(&node, "exit", 1);
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert!(exits[0].starts_with("argv: exit\n"), "{}", exits[0]);
    assert!(exits[0].contains("\nExitCode = 0\n"), "{}", exits[0]);
    // One hand-out, accepted once; the claim's end, if the fetcher hears
    // of it, under the ClaimId it was accepted with.
    let replies = of_job(&node, "reply", 1);
    assert_eq!(replies.len(), 1, "{replies:?}");
    for evicted in of_job(&node, "evict", 1) {
        assert_eq!(claim_id(&evicted), claim_id(&replies[0]), "{evicted}");
    }

    let ev = events(&log);
    assert_eq!(
        count(&ev, "/event/Slot/ClaimEnded/cause", |c| c == "Restart"),
        0
    );
    assert_eq!(count(&ev, "/event/Starter/Reattached/pid", |_| true), 1);
    assert_eq!(count(&ev, "/event/Starter/JobStarted/pid", |_| true), 1);
    assert_eq!(
        count(&ev, "/event/Starter/JobExited/how", |h| h == "exit"),
        1,
        "the job's exit, reported after the restart, is in the log once"
    );
    assert_eq!(
        count(&ev, "/event/Starter/Hook/hook", |h| h == "JOB_EXIT"),
        1
    );
    // The audit trail: one claim, its job run once, no anomaly.
    let audit = roost_log(&log, &["claims", "--json"]);
    let claims: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(claims.len(), 1, "{audit}");
    assert_eq!(claims[0]["job"], "1.0");
    assert_eq!(claims[0]["anomalies"], serde_json::json!([]), "{audit}");
    assert!(
        claims[0]["job_outcome"]
            .as_str()
            .is_some_and(|o| o.starts_with("exit: ")),
        "{audit}"
    );
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn after_a_restart_the_daemon_commands_the_job_it_took_again() {
    let node = Node::setup("reattach-vacate", ORPHANS);
    let _log = start_job_then_kill(&node, 1, "300");
    let second = node.start();
    wait_for("the slot busy with the job", || {
        node.states().contains("Claimed Busy") && !node.job_pid().is_empty()
    });
    // A vacate after the restart reaches the job through the starter.
    let o = node.roost(&["vacate", "-fast"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("JOB_EXIT evict", || {
        of_job(&node, "exit", 1)
            .iter()
            .any(|r| r.starts_with("argv: evict\n"))
    });
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    assert_eq!(of_job(&node, "exit", 1).len(), 1);
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_starter_that_dies_while_no_daemon_runs_is_reported_lost_once() {
    let node = Node::setup("reattach-lost", ORPHANS);
    let log = start_job_then_kill(&node, 1, "300");
    let starter = events(&log)
        .iter()
        .find_map(|e| e.pointer("/event/Starter/Spawned/pid")?.as_u64())
        .expect("starter pid");
    let job = node_job_pid(&log);
    // The starter dies (the OOM killer, an admin) while no daemon runs;
    // its job is left alone in its process group.
    let kill = |pid: u64, sig| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(0)),
            sig,
        );
    };
    kill(starter, nix::sys::signal::Signal::SIGKILL);
    let second = node.start();
    wait_for("EVICT_CLAIM for the lost job", || {
        !of_job(&node, "evict", 1).is_empty()
    });
    // Its remains were killed.
    wait_gone(job);
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    assert_eq!(of_job(&node, "evict", 1).len(), 1);
    assert_eq!(of_job(&node, "exit", 1), Vec::<String>::new());
    let ev = events(&log);
    assert_eq!(count(&ev, "/event/Starter/Reattached/pid", |_| true), 0);
    assert_eq!(
        count(&ev, "/event/Slot/ClaimEnded/cause", |c| c == "Restart"),
        1
    );
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_starter_that_evicts_its_job_with_no_daemon_leaves_its_reports_to_the_next() {
    let node = Node::setup("reattach-leftover", "ROOST_STARTER_ORPHAN_TIMEOUT = 2\n");
    let log = start_job_then_kill(&node, 1, "300");
    let starter = events(&log)
        .iter()
        .find_map(|e| e.pointer("/event/Starter/Spawned/pid")?.as_u64())
        .expect("starter pid");
    // No daemon for its orphan timeout: it evicts its job, tells the
    // fetcher (JOB_EXIT evict) and leaves what it reported in a file.
    wait_for("JOB_EXIT evict from the starter", || {
        !of_job(&node, "exit", 1).is_empty()
    });
    wait_gone(starter);
    let left = node.dir.join("spool/roost-starters");
    assert_eq!(
        std::fs::read_dir(&left).map(Iterator::count).unwrap_or(0),
        1
    );
    let second = node.start();
    wait_for("the reconciliation", || {
        count(&events(&log), "/event/Slot/ClaimEnded/cause", |c| {
            c == "Restart"
        }) >= 1
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    // The fetcher heard the job's end once, and no EVICT_CLAIM after it.
    let exits = of_job(&node, "exit", 1);
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert!(exits[0].starts_with("argv: evict\n"), "{}", exits[0]);
    assert_eq!(of_job(&node, "evict", 1), Vec::<String>::new());
    // The log holds what the starter reported, read from its file.
    let ev = events(&log);
    assert_eq!(
        count(&ev, "/event/Starter/JobExited/how", |h| h == "evict"),
        1
    );
    assert_eq!(
        count(&ev, "/event/Starter/Hook/hook", |h| h == "JOB_EXIT"),
        1
    );
    assert_eq!(
        std::fs::read_dir(&left).map(Iterator::count).unwrap_or(0),
        0
    );
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn after_the_machine_restarts_the_fetcher_hears_once_that_the_job_ended_with_it() {
    let node = Node::setup("reattach-reboot", ORPHANS);
    node.job("j1", 1, "300");
    let log = run_then_kill(&node, &[("ROOST_BOOT_ID", "boot-a")]);
    let job = node_job_pid(&log);
    // The next start is in another boot of the machine. The starter left
    // running stands for a process that has the pid and start time of
    // one of the last boot: it is not trusted, and the daemon refuses it
    // when it calls (it then kills its job and tells no one).
    let second = node.start_with(&[("ROOST_BOOT_ID", "boot-b")]);
    wait_for("JOB_EXIT evict of the job", || {
        !of_job(&node, "exit", 1).is_empty()
    });
    wait_gone(job);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    let exits = of_job(&node, "exit", 1);
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert!(exits[0].starts_with("argv: evict\n"), "{}", exits[0]);
    assert!(
        exits[0].contains("ExitReason = \"the machine restarted while the job ran\""),
        "{}",
        exits[0]
    );
    assert_eq!(of_job(&node, "evict", 1), Vec::<String>::new());
    let ev = events(&log);
    assert_eq!(count(&ev, "/event/Starter/Reattached/pid", |_| true), 0);
    assert_eq!(
        count(&ev, "/event/Daemon/Reconciled/what", |w| w
            .as_str()
            .is_some_and(|w| w.contains("the machine restarted"))),
        1
    );
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn after_the_machine_restarts_a_job_with_its_own_keyword_has_both_job_exits_run_in_turn() {
    // The job's own JOB_EXIT (keyword OWN) takes a second and notes when
    // it ended; the fetcher's (recording) must start after that.
    let done = "date +%s%N > $rec/ownexit.done; sleep 0";
    let dir = std::env::temp_dir().join(format!(
        "roost-daemon-reattach-reboot-own-{}",
        std::process::id()
    ));
    let node = Node::setup(
        "reattach-reboot-own",
        &format!(
            "{ORPHANS}OWN_HOOK_JOB_EXIT = {}\n",
            dir.join("hooks/ownexit").display()
        ),
    );
    assert_eq!(node.dir, dir);
    super::daemon_admin::recording_hook(&node.dir, "ownexit", &format!("sleep 1; {done}"));
    let text = "ClusterId = 1\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sleep\"\n\
                Arguments = \"300\"\nJobUniverse = 5\nHookKeyword = \"OWN\"\n";
    std::fs::write(node.dir.join("jobs/j1.job"), text).expect("job");
    run_then_kill(&node, &[("ROOST_BOOT_ID", "boot-a")]);
    let second = node.start_with(&[("ROOST_BOOT_ID", "boot-b")]);
    wait_for("the fetcher's JOB_EXIT", || {
        !of_job(&node, "exit", 1).is_empty()
    });
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    let own = records(&node.dir, "ownexit");
    assert_eq!(own.len(), 1, "{own:?}");
    assert!(own[0].starts_with("argv: evict\n"), "{}", own[0]);
    let own_done: u128 = std::fs::read_to_string(node.dir.join("rec/ownexit.done"))
        .expect("the own hook ended")
        .trim()
        .parse()
        .expect("a time");
    let fetcher_started: u128 = std::fs::read_dir(node.dir.join("rec"))
        .expect("records")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("exit.")?.split('.').next()?.parse().ok()
        })
        .min()
        .expect("the fetcher's record");
    assert!(
        fetcher_started > own_done,
        "the fetcher's JOB_EXIT started {fetcher_started}, before the job's own ended {own_done}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

/// Waits for process `pid` to be gone (or a zombie).
fn wait_gone(pid: u64) {
    wait_for("the job's process to be gone", || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
}

/// The job's pid, from the log.
fn node_job_pid(log: &std::path::Path) -> u64 {
    events(log)
        .iter()
        .find_map(|e| e.pointer("/event/Starter/JobStarted/pid")?.as_u64())
        .expect("job pid")
}

/// Job `cluster`.0 that appends a line to `taken/ran` when it runs.
fn marking_job(node: &Node, cluster: u32) {
    let text = format!(
        "ClusterId = {cluster}\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sh\"\n\
         Arguments = \"-c 'echo {cluster} >> {ran}; sleep 1'\"\nJobUniverse = 5\n",
        ran = node.dir.join("taken/ran").display()
    );
    let tmp = node.dir.join("marking.tmp");
    std::fs::write(&tmp, text).expect("job");
    std::fs::rename(&tmp, node.dir.join("jobs/marking.job")).expect("job");
}

/// How many times the marking job ran.
fn runs(node: &Node) -> usize {
    std::fs::read_to_string(node.dir.join("taken/ran"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// Starts a daemon that crashes at failpoint `point` while taking the
/// marking job 1.0, waits for the crash, and starts the daemon again.
fn crash_at(point: &str) -> (Node, super::daemon::Daemon) {
    let node = Node::setup(&format!("crash-{point}"), ORPHANS);
    marking_job(&node, 1);
    run_to_failpoint(&node, point);
    let second = node.start();
    (node, second)
}

/// Runs the daemon on `node` until it crashes at failpoint `point`.
fn run_to_failpoint(node: &Node, point: &str) {
    let daemon = node.start_with(&[("ROOST_FAILPOINT", point)]);
    let pid = daemon.id();
    wait_for("the daemon to crash at the failpoint", || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "))
    });
    drop(daemon);
}

/// Waits for REPLY_FETCH of job 1.0, stops the daemon, and checks that
/// the job was rejected once.
fn rejected_once(node: &Node, daemon: super::daemon::Daemon) {
    wait_for("REPLY_FETCH for the job", || {
        !of_job(node, "reply", 1).is_empty()
    });
    std::thread::sleep(std::time::Duration::from_secs(1));
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let replies = of_job(node, "reply", 1);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert!(replies[0].starts_with("argv: reject\n"), "{}", replies[0]);
}

#[test]
fn a_crash_after_a_handout_is_recorded_rejects_it_after_the_restart() {
    let (node, second) = crash_at("handout-recorded");
    rejected_once(&node, second);
    assert_eq!(runs(&node), 0);
    assert_eq!(of_job(&node, "exit", 1).len(), 0);
    assert_eq!(of_job(&node, "evict", 1).len(), 0);
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_crash_after_a_job_is_accepted_and_before_its_starter_tells_the_fetcher_once() {
    for point in ["job-accepted", "starter-spawned"] {
        let (node, second) = crash_at(point);
        wait_for("EVICT_CLAIM for the job", || {
            !of_job(&node, "evict", 1).is_empty()
        });
        // A starter left waiting for its go, if any, calls the new daemon,
        // is refused and leaves without running the job.
        std::thread::sleep(std::time::Duration::from_secs(3));
        let status = stop(second);
        assert!(status.success(), "{point}: daemon exit: {status}");
        assert_eq!(runs(&node), 0, "{point}: the job ran");
        assert_eq!(of_job(&node, "evict", 1).len(), 1, "{point}");
        assert_eq!(of_job(&node, "exit", 1).len(), 0, "{point}");
        assert!(
            of_job(&node, "reply", 1)
                .iter()
                .all(|r| !r.starts_with("argv: reject\n")),
            "{point}"
        );
        let _ = std::fs::remove_dir_all(&node.dir);
    }
}

#[test]
fn a_loss_owed_to_the_fetcher_survives_a_run_that_dies_before_telling_it() {
    let node = Node::setup("crash-owed", ORPHANS);
    marking_job(&node, 1);
    run_to_failpoint(&node, "job-accepted");
    // The next run records the claim lost and dies before its EVICT_CLAIM.
    run_to_failpoint(&node, "reconciled");
    assert_eq!(of_job(&node, "evict", 1).len(), 0);
    let third = node.start();
    wait_for("EVICT_CLAIM for the job", || {
        !of_job(&node, "evict", 1).is_empty()
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let status = stop(third);
    assert!(status.success(), "daemon exit: {status}");
    assert_eq!(of_job(&node, "evict", 1).len(), 1);
    assert_eq!(runs(&node), 0, "the job ran");
    // Told once: a fourth run owes nothing.
    let fourth = node.start();
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(stop(fourth).success());
    assert_eq!(of_job(&node, "evict", 1).len(), 1);
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_crash_just_before_the_starters_go_runs_the_job_once() {
    let (node, second) = crash_at("before-go");
    wait_for("JOB_EXIT of the job", || {
        !of_job(&node, "exit", 1).is_empty()
    });
    wait_for("REPLY_FETCH accept", || {
        of_job(&node, "reply", 1)
            .iter()
            .any(|r| r.starts_with("argv: accept\n"))
    });
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    assert_eq!(runs(&node), 1);
    let exits = of_job(&node, "exit", 1);
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert!(exits[0].starts_with("argv: exit\n"), "{}", exits[0]);
    // The fetcher hears of the claim's end only after the job's.
    let stamp = |hook: &str| -> Vec<u128> {
        std::fs::read_dir(node.dir.join("rec"))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let f = e.file_name().to_string_lossy().into_owned();
                        f.strip_prefix(&format!("{hook}."))?
                            .split_once('.')?
                            .0
                            .parse()
                            .ok()
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let exit_at = stamp("exit").into_iter().min().unwrap_or(0);
    assert!(stamp("evict").iter().all(|&t| t > exit_at));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_job_fetched_while_the_daemon_dies_is_read_at_the_restart_and_answered() {
    let node = Node::setup("crash-in-fetch", ORPHANS);
    // A fetch hook that takes the job, then is slow to print it: the
    // daemon dies while it runs, and it writes to stderr and prints the
    // job after that.
    let taken = node.dir.join("taken");
    let script = format!(
        "#!/bin/sh\nfor f in {jobs}/*.job; do [ -e \"$f\" ] || exit 0; n=${{f##*/}}; \
         if mv \"$f\" {taken}/$n 2>/dev/null; then touch {taken}/fetching; sleep 2; \
         echo \"handing out $n\" >&2; cat {taken}/$n; exit 0; fi; done\n",
        jobs = node.dir.join("jobs").display(),
        taken = taken.display()
    );
    std::fs::write(node.dir.join("hooks/fetch"), script).expect("hook");
    node.job("j1", 1, "1");
    let first = node.start();
    wait_for("the fetch hook to take the job", || {
        taken.join("fetching").exists()
    });
    first.kill();
    // Started at once, the daemon waits for the hook still running.
    let second = node.start();
    rejected_once(&node, second);
    assert_eq!(of_job(&node, "exit", 1), Vec::<String>::new());
    assert_eq!(of_job(&node, "evict", 1), Vec::<String>::new());
    let log = node.dir.join("spool/roost-events");
    let ev = events(&log);
    assert_eq!(
        count(&ev, "/event/Hook/Finished/outcome", |o| o
            .as_str()
            .is_some_and(|o| o
                .starts_with("read after the daemon's restart")
                && o.ends_with("job ad with 6 attributes"))),
        1
    );
    let left: Vec<_> = std::fs::read_dir(node.dir.join("spool/roost-hooks"))
        .expect("hook output dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, Vec::<std::ffi::OsString>::new());
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_fetched_claim_between_jobs_goes_on_after_a_restart() {
    // The claim is idle between jobs until its next fetch finds nothing
    // (then it ends): a long delay while claimed keeps that window open
    // long enough to see it on a loaded machine.
    let node = Node::setup(
        "reattach-idle-claim",
        &format!("{ORPHANS}FetchWorkDelay = ifThenElse(State == \"Claimed\", 10, 1)\n"),
    );
    node.job("j1", 1, "0");
    let first = node.start();
    wait_for("JOB_EXIT of job 1", || !of_job(&node, "exit", 1).is_empty());
    wait_for("the claim idle between jobs", || {
        node.states().contains("Claimed Idle")
    });
    first.kill();
    let second = node.start();
    // The next job comes once the new daemon answers: a FETCH_WORK the
    // killed daemon left running must not take it (the new daemon would
    // reject it, and these hooks do not put a rejected job back).
    wait_for("the new daemon", || node.states().contains("slot2@"));
    // The claim goes on: the next job runs under a new claim of the slot
    // that fetches it, and the fetcher never hears the first claim lost.
    node.job("j2", 2, "0");
    wait_for("JOB_EXIT of job 2", || !of_job(&node, "exit", 2).is_empty());
    let status = stop(second);
    assert!(status.success(), "daemon exit: {status}");
    let log = node.dir.join("spool/roost-events");
    let ev = events(&log);
    assert_eq!(
        count(&ev, "/event/Slot/ClaimEnded/cause", |c| c == "Restart"),
        0
    );
    let replies = of_job(&node, "reply", 1);
    for evicted in of_job(&node, "evict", 1) {
        // Only at the stop, under the ClaimId it was accepted with.
        assert_eq!(claim_id(&evicted), claim_id(&replies[0]), "{evicted}");
    }
    assert!(
        node.start_log()
            .contains("A fetched claim of the last run between jobs goes on."),
        "{}",
        node.start_log()
    );
    let audit = roost_log(&log, &["claims", "--anomalies"]);
    assert_eq!(audit.trim(), "", "{audit}");
    assert!(roost_log(&log, &["verify"]).starts_with("ok: "));
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_daemon_that_dies_just_after_its_start_leaves_the_next_one_the_running_job() {
    let node = Node::setup("crash-after-start", ORPHANS);
    start_job_then_kill(&node, 1, "3");
    // The second run dies as soon as it has recorded its start.
    run_to_failpoint(&node, "started");
    let third = node.start();
    wait_for("JOB_EXIT of job 1", || !of_job(&node, "exit", 1).is_empty());
    std::thread::sleep(std::time::Duration::from_millis(500));
    let status = stop(third);
    assert!(status.success(), "daemon exit: {status}");
    let exits = of_job(&node, "exit", 1);
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert!(exits[0].starts_with("argv: exit\n"), "{}", exits[0]);
    let log = node.dir.join("spool/roost-events");
    let ev = events(&log);
    assert_eq!(
        count(&ev, "/event/Slot/ClaimEnded/cause", |c| c == "Restart"),
        0
    );
    let audit = roost_log(&log, &["claims", "--anomalies"]);
    assert_eq!(audit.trim(), "", "{audit}");
    let _ = std::fs::remove_dir_all(&node.dir);
}
