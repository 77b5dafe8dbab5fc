//! Submit commands the node and the queue act on, through a real
//! `roost schedd` and `roost startd`: `coresize` sets the job's core-file
//! limit (none without it, as HTCondor's starter), `noop_job` completes a
//! job without running it (with its exit code or signal, also after a
//! release from hold), `accounting_group` is in the job ad the node
//! sees, `concurrency_limits` keep jobs from running together, and a
//! deferred job waits for its time (or, past its window, is held unrun).

use super::daemon::{stop, wait_for};
use super::schedd::{Ap, lines, wait_history};

#[test]
fn coresize_noop_jobs_and_accounting_groups_as_htcondor_carries_them_out() {
    let ap = Ap::setup("schedd-submit", "");
    let schedd = ap.schedd();
    ap.up();
    // Three jobs print their core-file limit (`ulimit -c`) and
    // their accounting group as the node saw it.
    for (name, extra) in [
        ("unset", ""),
        ("sized", "coresize = 1048576\n"),
        ("unlimited", "coresize = -1\n"),
    ] {
        ap.submit_as_nobody(
            &format!("{name}.sub"),
            &format!(
                "executable = /bin/sh\n\
                 arguments = \"-c 'ulimit -c > core.{name}; grep ^AccountingGroup $_CONDOR_JOB_AD >> core.{name}'\"\n\
                 accounting_group = physics\naccounting_group_user = bob\n{extra}queue\n"
            ),
        );
    }
    // No-op jobs: never run (the marker file stays absent).
    ap.submit_as_nobody(
        "noop.sub",
        "executable = /bin/touch\narguments = ran.$(Process)\nnoop_job = ProcId != 1\n\
         noop_job_exit_code = 3\nqueue 2\n",
    );
    ap.submit_as_nobody(
        "noop_signal.sub",
        "executable = /bin/touch\narguments = ran.signal\nnoop_job = true\n\
         noop_job_exit_signal = 9\nqueue\n",
    );
    ap.submit_as_nobody(
        "noop_held.sub",
        "executable = /bin/touch\narguments = ran.held\nnoop_job = true\nhold = true\nqueue\n",
    );
    // Completed at once, before any node asks: the history has them.
    let noops = ap.ok(&[
        "history",
        "-af",
        "ClusterId",
        "ProcId",
        "JobStatus",
        "ExitCode",
        "ExitSignal",
        "NumJobStarts",
        "-constraint",
        "ClusterId >= 4",
    ]);
    let mut noops = lines(&noops);
    noops.sort();
    assert_eq!(noops, ["4 0 4 3 undefined 0", "5 0 4 undefined 9 0"]);
    // Job 4.1 is not a no-op; the held one waits for its release.
    let startd = ap.startd();
    let done = wait_history(&ap, 6);
    assert!(done.contains(&"4 1 4 0".to_string()), "{done:?}");
    let o = ap.roost_as(&["release", "6"], Some(super::schedd::NOBODY));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    wait_for("the released no-op job to complete", || {
        ap.ok(&[
            "history",
            "-af",
            "JobStatus",
            "-constraint",
            "ClusterId == 6",
        ]) == "4\n"
    });
    let work = ap.dir.join("work");
    for marker in ["ran.0", "ran.signal", "ran.held"] {
        assert!(!work.join(marker).exists(), "{marker} ran");
    }
    assert!(work.join("ran.1").exists());
    let limit = |name: &str| {
        let text = std::fs::read_to_string(work.join(format!("core.{name}"))).expect("output");
        let mut lines = text.lines();
        let limit = lines.next().unwrap_or_default().to_string();
        let ad_file = lines.next().unwrap_or_default().to_string();
        (limit, ad_file)
    };
    assert_eq!(limit("unset").0, "0");
    assert_eq!(limit("unset").1, "AccountingGroup = \"physics.bob\"");
    // dash's `ulimit -c` counts 512-byte blocks.
    assert_eq!(limit("sized").0, "2048");
    assert_eq!(limit("unlimited").0, "unlimited");
    // The group, as condor_submit writes it, in the queue and on the node.
    assert_eq!(
        ap.ok(&[
            "history",
            "-af",
            "AcctGroup",
            "AcctGroupUser",
            "AccountingGroup",
            "-constraint",
            "ClusterId == 1"
        ]),
        "physics bob physics.bob\n"
    );
    assert!(stop(startd).success());
    assert!(stop(schedd).success());
    let _ = std::fs::remove_dir_all(&ap.dir);
}

#[test]
fn concurrency_limits_keep_jobs_from_running_together_as_the_negotiator_would() {
    let ap = Ap::setup("schedd-limits", "DB_LIMIT = 1\n");
    let schedd = ap.schedd();
    ap.up();
    // Three jobs that fail if another holds the lock directory when they
    // start, on a node with two slots: the limit must run them in turn.
    ap.submit_as_nobody(
        "db.sub",
        "executable = /bin/sh\n\
         arguments = \"-c 'mkdir lock.d || exit 7; sleep 1; rmdir lock.d'\"\n\
         concurrency_limits = DB\nqueue 3\n",
    );
    // One that asks for more of the limit than there is: never handed out.
    ap.submit_as_nobody(
        "big.sub",
        "executable = /bin/true\nconcurrency_limits = db:2\nqueue\n",
    );
    let startd = ap.startd();
    let done = wait_history(&ap, 3);
    assert_eq!(done, ["1 0 4 0", "1 1 4 0", "1 2 4 0"]);
    assert_eq!(
        ap.ok(&[
            "q",
            "-af",
            "ClusterId",
            "JobStatus",
            "NumJobStarts",
            "ConcurrencyLimits"
        ]),
        "2 1 0 db:2\n"
    );
    assert!(stop(startd).success());
    assert!(stop(schedd).success());
    let _ = std::fs::remove_dir_all(&ap.dir);
}

#[test]
fn a_deferred_job_starts_at_its_time_and_one_past_its_window_is_not_handed_out() {
    let ap = Ap::setup("schedd-deferral", "");
    let schedd = ap.schedd();
    ap.up();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let at = now + 4;
    ap.submit_as_nobody(
        "later.sub",
        &format!(
            "executable = /bin/sh\narguments = \"-c 'date +%s > started'\"\n\
             deferral_time = {at}\nqueue\n"
        ),
    );
    ap.submit_as_nobody(
        "missed.sub",
        &format!(
            "executable = /bin/true\ndeferral_time = {}\nqueue\n",
            now - 100
        ),
    );
    let startd = ap.startd();
    let done = wait_history(&ap, 1);
    assert_eq!(done, ["1 0 4 0"]);
    let started: u64 = std::fs::read_to_string(ap.dir.join("work/started"))
        .expect("the job ran")
        .trim()
        .parse()
        .expect("a time");
    assert!(started >= at, "started at {started}, deferred to {at}");
    // Handed out early (within ScheddInterval + DeferralPrepTime), it
    // waited on the node.
    assert_eq!(
        ap.ok(&[
            "history",
            "-af",
            "ScheddInterval",
            "DeferralPrepTime",
            "DeferralWindow"
        ]),
        "300 300 0\n"
    );
    assert_eq!(
        ap.ok(&["q", "-af", "ClusterId", "JobStatus", "NumJobStarts"]),
        "2 1 0\n"
    );
    assert!(stop(startd).success());
    assert!(stop(schedd).success());
    let _ = std::fs::remove_dir_all(&ap.dir);
}

#[test]
fn a_job_whose_deferral_time_passed_beyond_its_window_is_held_not_run() {
    use super::daemon_admin::{Node, records};
    let node = Node::setup("deferral-missed", "");
    // Handed out by a fetch hook that does not look at Requirements.
    let ran = node.dir.join("rec/ran");
    let text = format!(
        "ClusterId = 1\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/touch\"\n\
         Arguments = \"{}\"\nJobUniverse = 5\nDeferralTime = 1000\nDeferralWindow = 60\n",
        ran.display()
    );
    std::fs::write(node.dir.join("jobs/j1.job"), text).expect("job");
    let daemon = node.start();
    wait_for("JOB_EXIT", || !records(&node.dir, "exit").is_empty());
    assert!(stop(daemon).success());
    let exit = &records(&node.dir, "exit")[0];
    assert!(exit.starts_with("argv: hold\n"), "{exit}");
    assert!(
        exit.contains("HoldReason = \"Job missed deferred execution time\"")
            && exit.contains("HoldReasonCode = 20"),
        "{exit}"
    );
    assert!(!ran.exists());
    let _ = std::fs::remove_dir_all(&node.dir);
}
