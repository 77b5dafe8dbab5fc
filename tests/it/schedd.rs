//! `roost schedd` end to end: `roost submit`, `q`, `hold`, `release`, `rm`,
//! `history` against the real daemon; the queue surviving SIGKILL; who
//! may change whose jobs; and the whole path on one machine: jobs
//! submitted to the queue, fetched by a real `roost startd` through
//! `roost queue-hook`, run, and their exits back in the queue.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use super::daemon::{Daemon, stop, temp, wait_for};

pub(super) const NOBODY: u32 = 65534;

pub(super) struct Ap {
    pub(super) dir: PathBuf,
    pub(super) config: PathBuf,
}

impl Ap {
    /// A temp directory with one configuration for a schedd and a startd
    /// whose fetch hooks take jobs from it.
    pub(super) fn setup(name: &str, extra: &str) -> Ap {
        let dir = temp(name);
        std::fs::create_dir_all(dir.join("work")).expect("mkdir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::set_permissions(dir.join("work"), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        let roost = env!("CARGO_BIN_EXE_roost");
        let sock = dir.join("lock/roost_schedd.sock");
        // Fetch hooks take no configured arguments (HTCondor gives them
        // none): each is a two-line script, as examples/queue ships them.
        let hook = |h: &str, what: &str| {
            let path = dir.join(format!("{what}.sh"));
            std::fs::write(
                &path,
                format!(
                    "#!/bin/sh\nexec {roost} queue-hook {what} --socket {} \"$@\"\n",
                    sock.display()
                ),
            )
            .expect("hook");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            format!("Q_HOOK_{h} = {}\n", path.display())
        };
        let config = dir.join("condor_config");
        std::fs::write(
            &config,
            format!(
                "LOCAL_DIR = {d}\nLOG = $(LOCAL_DIR)/log\nEXECUTE = $(LOCAL_DIR)/execute\n\
                 SPOOL = $(LOCAL_DIR)/spool\nLOCK = $(LOCAL_DIR)/lock\n\
                 CONDOR_IDS = {NOBODY}.{NOBODY}\nQUEUE_SUPER_USERS = root, nobody\n\
                 NUM_CPUS = 2\nSLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\n\
                 START = True\nIS_OWNER = False\nSUSPEND = False\nPREEMPT = False\nKILL = False\n\
                 WANT_SUSPEND = False\nWANT_VACATE = True\nRunBenchmarks = False\n\
                 UPDATE_INTERVAL = 2\nPOLLING_INTERVAL = 1\nFetchWorkDelay = 1\n\
                 STARTER_INITIAL_UPDATE_INTERVAL = 1\n\
                 STARTD_JOB_HOOK_KEYWORD = Q\n{fetch}{reply}{exit}{evict}{update}{extra}",
                d = dir.display(),
                fetch = hook("FETCH_WORK", "fetch"),
                reply = hook("REPLY_FETCH", "reply"),
                exit = hook("JOB_EXIT", "exit"),
                evict = hook("EVICT_CLAIM", "evict"),
                update = hook("UPDATE_JOB_INFO", "update"),
            ),
        )
        .expect("config");
        Ap { dir, config }
    }

    pub(super) fn schedd(&self) -> Daemon {
        Daemon::spawn(
            Command::new(env!("CARGO_BIN_EXE_roost"))
                .args(["schedd", "-f", "--config"])
                .arg(&self.config)
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        )
    }

    pub(super) fn startd(&self) -> Daemon {
        Daemon::spawn(
            Command::new(env!("CARGO_BIN_EXE_roost"))
                .args(["startd", "-f", "--config"])
                .arg(&self.config)
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        )
    }

    pub(super) fn socket(&self) -> PathBuf {
        self.dir.join("lock/roost_schedd.sock")
    }

    /// `roost ARGS` (as `uid` when given), in `work/`.
    pub(super) fn roost_as(&self, args: &[&str], uid: Option<u32>) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_roost"));
        c.args(args)
            .env("CONDOR_CONFIG", &self.config)
            .current_dir(self.dir.join("work"));
        if let Some(u) = uid {
            c.uid(u).gid(u);
        }
        c.output().expect("roost runs")
    }

    pub(super) fn roost(&self, args: &[&str]) -> Output {
        self.roost_as(args, None)
    }

    pub(super) fn ok(&self, args: &[&str]) -> String {
        let out = self.roost(args);
        assert!(
            out.status.success(),
            "roost {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(super) fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.join("work").join(name);
        std::fs::write(&p, text).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        p
    }

    /// Submits `text` (written to `work/<name>`) as nobody; its output.
    pub(super) fn submit_as_nobody(&self, name: &str, text: &str) -> String {
        let sub = self.write(name, text);
        let out = self.roost_as(&["submit", sub.to_str().expect("utf-8")], Some(NOBODY));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(super) fn up(&self) {
        wait_for("the schedd's socket", || {
            self.socket().exists() && self.roost(&["q"]).status.success()
        });
    }
}

pub(super) fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn the_queue_takes_commands_and_survives_a_kill() {
    let ap = Ap::setup("schedd-queue", "QUEUE_SUPER_USERS = root\n");
    let schedd = ap.schedd();
    ap.up();
    let sub = ap.write(
        "three.sub",
        "executable = /bin/echo\narguments = \"x $(Process)\"\noutput = out.$(Cluster).$(Process)\n\
         +Project = \"roost\"\nlog = three.log\nqueue 3\n",
    );
    let out = ap.ok(&["submit", sub.to_str().expect("utf-8")]);
    assert!(out.contains("3 job(s) submitted to cluster 1."), "{out}");
    assert_eq!(
        lines(&ap.ok(&[
            "q",
            "-af",
            "ClusterId",
            "ProcId",
            "JobStatus",
            "Project",
            "Out"
        ])),
        vec![
            "1 0 1 roost out.1.0",
            "1 1 1 roost out.1.1",
            "1 2 1 roost out.1.2"
        ]
    );
    // A description that does not read names its line; nothing is queued.
    let bad = ap.write(
        "bad.sub",
        "executable = /bin/true\nuniverse = grid\nqueue\n",
    );
    let out = ap.roost(&["submit", bad.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.sub: line 2"), "{err}");

    // Job ads that do not parse name the file; a hook's garbage is refused.
    let ads = ap.write("bad.ads", "Cmd = \"/bin/true\"\nArgs = (\n");
    let out = ap.roost(&["submit", "-ad", ads.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad.ads"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut hook = Command::new(env!("CARGO_BIN_EXE_roost"))
        .args(["queue-hook", "exit", "exit", "--socket"])
        .arg(ap.socket())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hook");
    {
        use std::io::Write;
        let mut stdin = hook.stdin.take().expect("stdin");
        stdin
            .write_all(b"ClusterId = 1\nProcId = 0\nRoostQueueLease = \"forged\"\n")
            .expect("write");
    }
    let out = hook.wait_with_output().expect("hook ends");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("job 1.0 is not leased with that token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Another user may not touch root's jobs.
    let out = ap.roost_as(&["rm", "1"], Some(NOBODY));
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("owned by root, not by nobody"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ap.ok(&["hold", "1.1"]).contains("Job 1.1 held"));
    let held = ap.ok(&["q", "-hold"]);
    assert!(held.contains("via roost hold (by user root)"), "{held}");
    assert_eq!(
        ap.ok(&[
            "q",
            "-af",
            "HoldReasonCode",
            "-constraint",
            "JobStatus == 5"
        ]),
        "1\n"
    );
    ap.ok(&["release", "1.1"]);
    ap.ok(&["rm", "1.2", "-reason", "not wanted"]);
    assert_eq!(
        ap.ok(&["history", "-af", "ProcId", "JobStatus", "RemoveReason"]),
        "2 3 not wanted\n"
    );
    // The jobs' user log tells the same story, as HTCondor's schedd writes it.
    let log = ap.dir.join("work/three.log");
    let mut records = Vec::new();
    wait_for("the user log's six records", || {
        records = user_log(&log);
        records.len() >= 6
    });
    assert_eq!(
        records,
        [
            "000 (001.000.000) Job submitted from host",
            "000 (001.001.000) Job submitted from host",
            "000 (001.002.000) Job submitted from host",
            "012 (001.001.000) Job was held.|via roost hold (by user root)|Code 1 Subcode 0",
            "013 (001.001.000) Job was released.|via roost release (by user root)",
            "009 (001.002.000) Job was aborted.|not wanted",
        ]
    );

    // SIGKILL: everything answered is in the log and comes back.
    schedd.kill();
    let schedd = ap.schedd();
    ap.up();
    assert_eq!(
        lines(&ap.ok(&["q", "-af", "ProcId", "JobStatus", "LastHoldReasonCode"])),
        vec!["0 1 undefined", "1 1 1"]
    );
    assert_eq!(ap.ok(&["history", "-af", "ProcId"]), "2\n");
    let out = ap.ok(&["submit", sub.to_str().expect("utf-8")]);
    assert!(out.contains("submitted to cluster 2."), "{out}");

    // roost-log reads the schedd's log through its socket: a job's story.
    let log = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .arg("--log")
        .arg(ap.dir.join("spool/roost-schedd-events"))
        .args(["list", "--actor", "job1.1"])
        .output()
        .expect("roost-log");
    let text = String::from_utf8_lossy(&log.stdout);
    let kinds: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(4))
        .collect();
    assert_eq!(
        kinds,
        vec!["Job.Submitted", "Job.Held", "Job.Released"],
        "{text}"
    );
    assert!(stop(schedd).success());
}

/// A job's sandbox is the starter's; what it writes goes to `work/`.
pub(super) fn wait_history(ap: &Ap, n: usize) -> Vec<String> {
    let mut last = String::new();
    wait_for("jobs in the history", || {
        last = ap.ok(&[
            "history",
            "-af",
            "ClusterId",
            "ProcId",
            "JobStatus",
            "ExitCode",
        ]);
        last.lines().count() >= n
    });
    let mut v = lines(&last);
    v.sort();
    v
}

/// `log_xml = true`: the user log's records are in HTCondor's XML form,
/// written as the job's owner.
#[test]
fn a_job_s_user_log_in_the_xml_form() {
    let ap = Ap::setup("schedd-userlog-xml", "");
    let schedd = ap.schedd();
    ap.up();
    ap.submit_as_nobody(
        "x.sub",
        "executable = /bin/true\nlog = x.xml\nlog_xml = true\nqueue\n",
    );
    let o = ap.roost_as(&["rm", "1.0"], Some(NOBODY));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = ap.dir.join("work/x.xml");
    let mut text = String::new();
    wait_for("two XML records", || {
        text = std::fs::read_to_string(&log).unwrap_or_default();
        text.matches("</c>").count() >= 2
    });
    assert!(text.starts_with("<c>\n"), "{text}");
    for want in [
        "<a n=\"MyType\"><s>SubmitEvent</s></a>",
        "<a n=\"MyType\"><s>JobAbortedEvent</s></a>",
        "<a n=\"Reason\"><s>via roost rm (by user nobody)</s></a>",
        "<a n=\"EventTypeNumber\"><i>9</i></a>",
    ] {
        assert!(text.contains(want), "{want} in {text}");
    }
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(&log).expect("the log").uid();
    assert_eq!(owner, NOBODY, "written as the job's owner");
    stop(schedd);
    let _ = std::fs::remove_dir_all(&ap.dir);
}

#[test]
fn a_startd_runs_the_queue_through_the_hooks() {
    let ap = Ap::setup("schedd-startd", "");
    let schedd = ap.schedd();
    ap.up();
    let sub = ap.write(
        "exits.sub",
        "executable = /bin/sh\narguments = \"-c 'echo ran $(Process) > out.$(Process); exit $(Process)'\"\n\
         queue 3\n",
    );
    // Submitted as nobody: the startd runs them as their owner.
    let out = ap.roost_as(&["submit", sub.to_str().expect("utf-8")], Some(NOBODY));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let never = ap.write(
        "never.sub",
        "executable = /bin/true\nrequirements = TARGET.Memory > 1000000000\nqueue\n",
    );
    let out = ap.roost_as(&["submit", never.to_str().expect("utf-8")], Some(NOBODY));
    assert!(out.status.success());

    let startd = ap.startd();
    assert_eq!(wait_history(&ap, 3), vec!["1 0 4 0", "1 1 4 1", "1 2 4 2"]);
    for p in 0..3 {
        let out = std::fs::read_to_string(ap.dir.join(format!("work/out.{p}"))).expect("output");
        assert_eq!(out, format!("ran {p}\n"));
    }
    assert_eq!(
        ap.ok(&[
            "history",
            "-af",
            "NumJobStarts",
            "Owner",
            "-constraint",
            "ProcId == 0"
        ]),
        "1 nobody\n"
    );
    // The one no slot matches stays idle, never leased.
    assert_eq!(
        ap.ok(&["q", "-af", "ClusterId", "JobStatus", "NumJobStarts"]),
        "2 1 0\n"
    );

    // A running job vacated goes back to idle, and runs again.
    let long = ap.write(
        "long.sub",
        "executable = /bin/sleep\narguments = 300\nqueue\n",
    );
    let out = ap.roost_as(&["submit", long.to_str().expect("utf-8")], Some(NOBODY));
    assert!(out.status.success());
    wait_for("the long job to run", || {
        ap.ok(&["q", "-af", "JobStatus", "-constraint", "ClusterId == 3"]) == "2\n"
    });
    // UPDATE_JOB_INFO reports the running job into the queue.
    wait_for("the node's update", || {
        ap.ok(&[
            "q",
            "-af",
            "JobState",
            "JobPid =!= undefined",
            "-constraint",
            "ClusterId == 3",
        ]) == "Running true\n"
    });
    let run = ap.ok(&["q", "-run"]);
    assert!(run.contains("slot1@") || run.contains("slot2@"), "{run}");
    let v = ap.roost(&["vacate", "-fast"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    wait_for("the vacated job to start again", || {
        ap.ok(&[
            "q",
            "-af",
            "NumJobStarts",
            "JobStatus",
            "-constraint",
            "ClusterId == 3",
        ]) == "2 2\n"
    });
    ap.ok(&["rm", "3"]);

    // Root's job, which no node may run: not started three times, held.
    let root = ap.write("root.sub", "executable = /bin/true\nqueue\n");
    let out = ap.ok(&["submit", root.to_str().expect("utf-8")]);
    assert!(out.contains("cluster 4"), "{out}");
    wait_for("root's job on hold", || {
        ap.ok(&[
            "q",
            "-af",
            "JobStatus",
            "HoldReasonCode",
            "-constraint",
            "ClusterId == 4",
        ]) == "5 6\n"
    });
    let held = ap.ok(&["q", "-hold"]);
    assert!(
        held.contains("could not be started 3 times in a row") && held.contains("is root"),
        "{held}"
    );
    assert!(stop(startd).success());
    wait_for("the removed job to leave once its node reported", || {
        ap.ok(&[
            "history",
            "-af",
            "JobStatus",
            "-constraint",
            "ClusterId == 3",
        ]) == "3\n"
    });
    assert!(stop(schedd).success());
}

/// A job naming a keyword of its own still ends in the queue: the node
/// runs the job's keyword's JOB_EXIT, then the queue's (its fetcher's).
#[test]
fn a_job_with_its_own_hook_keyword_completes_in_the_queue() {
    let ap = Ap::setup("schedd-own-keyword", "");
    let rec = ap.dir.join("work/other-exit");
    let hook = ap.dir.join("other_exit.sh");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat > /dev/null\necho \"$1\" >> {}\n",
            rec.display()
        ),
    )
    .expect("hook");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = std::fs::read_to_string(&ap.config).expect("config");
    std::fs::write(
        &ap.config,
        format!("{config}\nOTHER_HOOK_JOB_EXIT = {}\n", hook.display()),
    )
    .expect("config");
    let schedd = ap.schedd();
    ap.up();
    ap.submit_as_nobody(
        "own.sub",
        "executable = /bin/true\n+HookKeyword = \"OTHER\"\nqueue\n\
         +HookKeyword = \"NOHOOKS\"\nqueue\n",
    );
    let startd = ap.startd();
    assert_eq!(wait_history(&ap, 2), vec!["1 0 4 0", "1 1 4 0"]);
    // The job's own JOB_EXIT ran too, for the job that has one.
    assert_eq!(
        std::fs::read_to_string(&rec).expect("OTHER's JOB_EXIT ran"),
        "exit\n"
    );
    assert!(stop(startd).success());
    assert!(stop(schedd).success());
}

/// `roost rm` and `roost hold` of a running job reach the node the next
/// time it speaks to the queue (UPDATE_JOB_INFO): the node vacates the
/// job at once, JOB_EXIT tells the queue `remove` or `hold`, and the slot
/// is free for other work.
#[test]
fn removing_or_holding_a_running_job_stops_it_on_its_node() {
    let ap = Ap::setup(
        "schedd-withdraw",
        "STARTER_UPDATE_INTERVAL = 1\nNUM_SLOTS_TYPE_1 = 1\nNUM_CPUS = 1\n",
    );
    let schedd = ap.schedd();
    ap.up();
    ap.submit_as_nobody(
        "long.sub",
        "executable = /bin/sleep\narguments = 300\nqueue 2\n",
    );
    let startd = ap.startd();
    let status = |p: u32| {
        ap.ok(&[
            "q",
            "-af",
            "JobStatus",
            "-constraint",
            &format!("ProcId == {p}"),
        ])
    };
    wait_for("the first job to run", || status(0) == "2\n");
    ap.ok(&["rm", "1.0"]);
    // One slot: the second job runs only once the first has left it.
    wait_for("the second job to run in the freed slot", || {
        status(1) == "2\n"
    });
    assert_eq!(
        ap.ok(&["history", "-af", "JobStatus", "-constraint", "ProcId == 0"]),
        "3\n"
    );
    ap.ok(&["hold", "1.1"]);
    wait_for("the held job's slot to be free again", || {
        let who = ap.ok(&["status", "-af", "State", "Activity"]);
        who.trim() == "Unclaimed Idle" || who.trim() == "Owner Idle"
    });
    assert_eq!(status(1), "5\n", "the job stays held");
    assert!(stop(startd).success());
    let ev = super::daemon::events(&ap.dir.join("spool/roost-events"));
    let withdrawn: Vec<&str> = ev
        .iter()
        .filter_map(|e| e["event"]["Starter"]["Withdrawn"]["how"].as_str())
        .collect();
    assert_eq!(withdrawn, vec!["remove", "hold"]);
    assert!(stop(schedd).success());
}

/// A job's own policy as HTCondor's schedd applies it: `max_retries`
/// runs a failing job again, `on_exit_hold` holds it, `periodic_remove`
/// removes a running one (and its node stops it), `periodic_release`
/// lets a held one go.
#[test]
fn a_jobs_own_policy_retries_holds_removes_and_releases_it() {
    let ap = Ap::setup(
        "schedd-job-policy",
        "PERIODIC_EXPR_INTERVAL = 1\nSTARTER_UPDATE_INTERVAL = 1\n\
         NUM_CPUS = 4\nNUM_SLOTS_TYPE_1 = 4\n",
    );
    let schedd = ap.schedd();
    ap.up();
    ap.submit_as_nobody(
        "policy.sub",
        "executable = /bin/sh\narguments = \"-c 'exit 3'\"\nmax_retries = 2\nqueue\n\
         on_exit_hold = ExitCode != 0\nmax_retries =\nqueue\n\
         executable = /bin/sleep\narguments = 300\non_exit_hold =\n\
         periodic_remove = JobStatus == 2\nqueue\n\
         executable = /bin/true\nperiodic_remove =\nhold = true\n\
         periodic_release = HoldReasonCode == 15\nqueue\n",
    );
    let startd = ap.startd();
    let history = |p: u32, attrs: &[&str]| {
        let constraint = format!("ProcId == {p}");
        let mut args = vec!["history", "-constraint", &constraint, "-af"];
        args.extend_from_slice(attrs);
        ap.ok(&args)
    };
    wait_for("the retried job to complete", || {
        !history(0, &["JobStatus"]).is_empty()
    });
    assert_eq!(
        history(0, &["JobStatus", "ExitCode", "NumJobCompletions"]),
        "4 3 3\n",
        "run once and retried twice"
    );
    wait_for("the failing job to be held by its policy", || {
        ap.ok(&["q", "-af", "JobStatus", "-constraint", "ProcId == 1"]) == "5\n"
    });
    let held = ap.ok(&[
        "q",
        "-af",
        "HoldReason",
        "HoldReasonCode",
        "-constraint",
        "ProcId == 1",
    ]);
    assert!(
        held.contains("OnExitHold expression 'ExitCode != 0' evaluated to TRUE")
            && held.ends_with(" 3\n"),
        "{held}"
    );
    wait_for(
        "the running job removed by its policy, stopped on its node",
        || history(2, &["JobStatus"]) == "3\n",
    );
    assert!(history(2, &["RemoveReason"]).contains("PeriodicRemove"));
    wait_for("the held job released by its policy and run", || {
        history(3, &["JobStatus"]) == "4\n"
    });
    assert!(stop(startd).success());
    assert!(stop(schedd).success());
}

/// A user log's records, each as its number, job, first words (up to a
/// `:`) and its further lines, `|`-joined, without the time.
pub(super) fn user_log(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split("...\n")
        .filter(|r| !r.trim().is_empty())
        .map(|r| {
            let mut lines = r.lines();
            let head = lines.next().unwrap_or_default();
            let words: Vec<&str> = head.split(' ').collect();
            let what = words.get(4..).unwrap_or_default().join(" ");
            let what = what.split(':').next().unwrap_or_default().to_string();
            let mut out = format!("{} {} {what}", words[0], words.get(1).unwrap_or(&""));
            for l in lines {
                out.push('|');
                out.push_str(l.trim());
            }
            out
        })
        .collect()
}
