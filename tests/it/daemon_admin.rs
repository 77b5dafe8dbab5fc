//! The admin socket and commands against the real daemon, with recording
//! hook scripts: `roost status`/`who`/`vacate`/`drain`/`reconfig`/`off`, the
//! owner-only permission, what each startd hook received (arguments, stdin,
//! user, environment), and the slot transitions in the event log; also
//! reconfig of running slots, suspend/continue, and a partitionable slot
//! filling up.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::daemon::{Daemon, count, events, stop, temp, wait_for};

const NOBODY: u32 = 65534;

/// A hook that records its argv, uid, environment and stdin into
/// `rec/<name>.<n>`, then runs `tail` (shell).
pub(crate) fn recording_hook(dir: &Path, name: &str, tail: &str) -> PathBuf {
    let path = dir.join("hooks").join(name);
    let script = format!(
        "#!/bin/sh\nrec={rec}\nf=$rec/{name}.$(date +%s%N).$$\n\
         {{ echo \"argv: $*\"; echo \"uid: $(id -u)\"; echo \"cwd: $(pwd)\"; echo '--- env ---'; env | sort; \
         echo '--- stdin ---'; cat; }} > $f.tmp\nmv $f.tmp $f\n{tail}\n",
        rec = dir.join("rec").display()
    );
    std::fs::write(&path, script).expect("hook");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

pub(crate) fn records(dir: &Path, name: &str) -> Vec<String> {
    let mut v: Vec<((u128, u32), String)> = std::fs::read_dir(dir.join("rec"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let f = e.file_name().to_string_lossy().into_owned();
                    let (ns, pid) = f.strip_prefix(&format!("{name}."))?.split_once('.')?;
                    let key = (ns.parse().ok()?, pid.parse().ok()?);
                    Some((key, std::fs::read_to_string(e.path()).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.into_iter().map(|(_, t)| t).collect()
}

pub(crate) struct Node {
    pub(crate) dir: PathBuf,
    pub(crate) config: PathBuf,
}

impl Node {
    pub(crate) fn setup(name: &str, extra: &str) -> Node {
        let dir = temp(name);
        for d in ["hooks", "rec", "jobs", "taken"] {
            std::fs::create_dir_all(dir.join(d)).expect("mkdir");
        }
        // Hooks run as nobody (CONDOR_IDS): they must be able to write here.
        for d in ["rec", "jobs", "taken"] {
            std::fs::set_permissions(dir.join(d), std::fs::Permissions::from_mode(0o777))
                .expect("chmod");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let take = format!(
            "for f in {jobs}/*.job; do [ -e \"$f\" ] || exit 0; n=${{f##*/}}; \
             if mv \"$f\" {taken}/$n 2>/dev/null; then cat {taken}/$n; exit 0; fi; done",
            jobs = dir.join("jobs").display(),
            taken = dir.join("taken").display()
        );
        let fetch = recording_hook(&dir, "fetch", &take);
        let reply = recording_hook(&dir, "reply", "");
        let evict = recording_hook(&dir, "evict", "");
        let exit = recording_hook(&dir, "exit", "");
        let config = dir.join("condor_config");
        std::fs::write(
            &config,
            format!(
                "LOCAL_DIR = {d}\nLOG = $(LOCAL_DIR)/log\nEXECUTE = $(LOCAL_DIR)/execute\n\
                 SPOOL = $(LOCAL_DIR)/spool\nCONDOR_IDS = {NOBODY}.{NOBODY}\n\
                 NUM_CPUS = 2\nSLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\n\
                 START = True\nIS_OWNER = False\nSUSPEND = False\nPREEMPT = False\nKILL = False\n\
                 WANT_SUSPEND = False\nWANT_VACATE = True\nRunBenchmarks = False\n\
                 UPDATE_INTERVAL = 2\nPOLLING_INTERVAL = 1\n\
                 STARTD_JOB_HOOK_KEYWORD = T\nT_HOOK_FETCH_WORK = {fetch}\n\
                 T_HOOK_REPLY_FETCH = {reply}\nT_HOOK_EVICT_CLAIM = {evict}\n\
                 T_HOOK_JOB_EXIT = {exit}\nFetchWorkDelay = 1\nMAXJOBRETIREMENTTIME = 3600\n{extra}",
                d = dir.display(),
                fetch = fetch.display(),
                reply = reply.display(),
                evict = evict.display(),
                exit = exit.display(),
            ),
        )
        .expect("config");
        Node { dir, config }
    }

    pub(crate) fn job(&self, name: &str, cluster: u32, args: &str) {
        let text = format!(
            "ClusterId = {cluster}\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sleep\"\n\
             Arguments = \"{args}\"\nJobUniverse = 5\n"
        );
        let tmp = self.dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, text).expect("job");
        std::fs::rename(&tmp, self.dir.join("jobs").join(format!("{name}.job"))).expect("job");
    }

    /// The daemon's log (empty when there is none yet).
    pub(crate) fn start_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log/StartLog")).unwrap_or_default()
    }

    /// Starts the daemon on this node.
    pub(crate) fn start(&self) -> Daemon {
        self.start_with(&[])
    }

    /// Starts the daemon on this node with `env` added to its environment.
    pub(crate) fn start_with(&self, env: &[(&str, &str)]) -> Daemon {
        Daemon::spawn(
            Command::new(env!("CARGO_BIN_EXE_roost"))
                .args(["startd", "-f", "--config"])
                .arg(&self.config)
                .envs(env.iter().copied())
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        )
    }

    /// Runs the daemon on this node in the foreground to its end (for a
    /// start that must fail): its exit status and output.
    pub(crate) fn start_to_end(&self) -> Output {
        Command::new(env!("CARGO_BIN_EXE_roost"))
            .args(["startd", "-f", "--config"])
            .arg(&self.config)
            .output()
            .expect("roost runs")
    }

    pub(crate) fn roost(&self, args: &[&str]) -> Output {
        self.roost_as(args, None)
    }

    fn roost_as(&self, args: &[&str], uid: Option<u32>) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_roost"));
        c.args(args).env("CONDOR_CONFIG", &self.config);
        if let Some(u) = uid {
            c.uid(u).gid(u);
        }
        c.output().expect("roost runs")
    }

    /// `roost status -af Name State Activity`, one line per slot.
    /// `roost vacate -fast`, then waits for JOB_EXIT `evict` and stops the
    /// daemon.
    pub(crate) fn vacate_fast_and_stop(&self, daemon: Daemon) {
        let o = self.roost(&["vacate", "-fast"]);
        assert!(o.status.success(), "{}", text(&o));
        wait_for("JOB_EXIT evict", || {
            records(&self.dir, "exit")
                .iter()
                .any(|r| r.starts_with("argv: evict\n"))
        });
        let status = stop(daemon);
        assert!(status.success(), "daemon exit: {status}");
    }

    /// The pid of the running job, or "" (`roost status -af JobPid`).
    pub(crate) fn job_pid(&self) -> String {
        let o = self.roost(&[
            "status",
            "-af",
            "JobPid",
            "-constraint",
            "JobPid =!= undefined",
        ]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    pub(crate) fn states(&self) -> String {
        let o = self.roost(&["status", "-af", "Name", "State", "Activity"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

/// A command's stdout and stderr together.
pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn admin_commands_drive_a_running_daemon() {
    let node = Node::setup("admin", "");
    let child = Daemon::spawn(
        Command::new(env!("CARGO_BIN_EXE_roost"))
            .args(["startd", "-f", "--config"])
            .arg(&node.config)
            .env("ROOST_TEST_MARK", "inherited")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let socket = node.dir.join("log/roost_startd.sock");
    wait_for("the admin socket", || {
        node.roost(&["status"]).status.success()
    });
    let mode = std::fs::metadata(&socket)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "owner-only socket");

    // Another user cannot connect, and is told why.
    let o = node.roost_as(
        &["status", "--socket", socket.to_str().unwrap_or_default()],
        Some(NOBODY),
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("permission denied"), "{}", text(&o));
    // Even through a socket opened up by mistake, the daemon checks who
    // is calling.
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let o = node.roost_as(
        &["vacate", "--socket", socket.to_str().unwrap_or_default()],
        Some(NOBODY),
    );
    assert!(!o.status.success());
    assert!(
        text(&o).contains("permission denied: uid 65534 is neither the daemon's user"),
        "{}",
        text(&o)
    );
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");

    // A long job: status and who show it.
    node.job("long", 7, "300");
    wait_for("the job to run", || node.states().contains("Claimed Busy"));
    wait_for("the job's pid", || {
        text(&node.roost(&["who"])).contains("nobody")
    });
    let who = text(&node.roost(&["who"]));
    assert!(who.contains(" 7.0 Claimed/Busy "), "{who}");
    let o = node.roost(&[
        "status",
        "-constraint",
        "RemoteOwner == \"nobody\"",
        "-af",
        "JobId",
        "JobStart > 0",
        "PublicClaimId =!= undefined",
    ]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "7.0 true true\n");
    let table = text(&node.roost(&["status"]));
    assert!(table.contains("Total Owner Claimed Unclaimed"), "{table}");
    let long = text(&node.roost(&["status", "-l", "slot2"]));
    assert!(long.contains("Name = \"slot2@"), "{long}");
    assert!(!long.contains("slot1@"), "{long}");

    // A drain whose check fails is refused and changes nothing.
    let o = node.roost(&["drain", "-check", "Cpus > 100"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("drain refused"), "{}", text(&o));
    assert!(!text(&o).contains("Draining"));

    // Vacate: the job retires (MAXJOBRETIREMENTTIME = 3600, honoured as
    // condor_vacate does); -fast evicts it. The fetcher hears of it twice:
    // JOB_EXIT (evict) from the starter and EVICT_CLAIM from the startd.
    let o = node.roost(&["vacate", "slot9"]);
    assert!(text(&o).contains("no slot named slot9"), "{}", text(&o));
    let busy = node
        .states()
        .lines()
        .find(|l| l.ends_with("Claimed Busy"))
        .and_then(|l| l.split('@').next().map(String::from))
        .expect("a busy slot");
    let o = node.roost(&["vacate", &busy]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("the job to retire", || {
        node.states().contains("Claimed Retiring")
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(records(&node.dir, "exit").is_empty(), "still retiring");
    let o = node.roost(&["vacate", "-fast", &busy]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("JOB_EXIT evict", || !records(&node.dir, "exit").is_empty());
    wait_for("EVICT_CLAIM", || !records(&node.dir, "evict").is_empty());
    let exit = &records(&node.dir, "exit")[0];
    assert!(exit.starts_with("argv: evict\n"), "{exit}");
    let evict = &records(&node.dir, "evict")[0];
    assert!(evict.starts_with("argv: \nuid: 65534\n"), "{evict}");
    let (job, slot) = evict
        .split_once("--- stdin ---\n")
        .map(|(_, s)| s)
        .and_then(|s| s.split_once("-----\n"))
        .expect("job ad, -----, slot ad");
    assert_eq!(
        job,
        "Arguments = \"300\"\nClusterId = 7\nCmd = \"/bin/sleep\"\nHookKeyword = \"T\"\nJobUniverse = 5\n\
         Owner = \"nobody\"\nProcId = 0\n"
    );
    assert!(slot.contains(&format!("Name = \"{busy}@")), "{slot}");
    assert!(slot.contains("\nClaimId = \"<"), "{slot}");

    // What FETCH_WORK and REPLY_FETCH received.
    let fetch = &records(&node.dir, "fetch")[0];
    assert!(fetch.starts_with("argv: \nuid: 65534\ncwd: "), "{fetch}");
    assert!(fetch.contains("\nROOST_TEST_MARK=inherited\n"), "{fetch}");
    let stdin = fetch
        .split_once("--- stdin ---\n")
        .map(|x| x.1)
        .unwrap_or("");
    assert!(stdin.contains("\nState = \"Unclaimed\"\n"), "{stdin}");
    assert!(stdin.contains("\nMyType = \"Machine\"\n"), "{stdin}");
    let reply = &records(&node.dir, "reply")[0];
    assert!(reply.starts_with("argv: accept\nuid: 65534\n"), "{reply}");
    assert!(
        reply.contains("--- stdin ---\nArguments = \"300\"\n"),
        "{reply}"
    );
    assert!(reply.contains("\n-----\n"), "{reply}");

    // Graceful drain with a reason: a running job retires, then the slots
    // are Drained; the reason and request id are published.
    node.job("short", 8, "2");
    wait_for("the short job to run", || {
        node.states().contains("Claimed Busy")
    });
    let o = node.roost(&["drain", "-graceful", "-reason", "kernel update"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("request id 1"), "{}", text(&o));
    let o = node.roost(&[
        "status",
        "-af",
        "Draining",
        "DrainReason",
        "DrainingRequestId",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "true kernel update 1\ntrue kernel update 1\n"
    );
    let o = node.roost(&["drain"]);
    assert!(
        text(&o).contains("already in progress (request id 1)"),
        "{}",
        text(&o)
    );
    wait_for("both slots drained", || {
        node.states().matches("Drained Idle").count() == 2
    });
    // The short job ran to completion (graceful).
    wait_for("JOB_EXIT of the short job", || {
        records(&node.dir, "exit").len() == 2
    });
    assert!(records(&node.dir, "exit")[1].starts_with("argv: exit\n"));
    let o = node.roost(&["drain", "-cancel", "-request-id", "9"]);
    assert!(
        text(&o).contains("no drain with request id 9"),
        "{}",
        text(&o)
    );
    let o = node.roost(&["drain", "-cancel"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("slots back to Unclaimed", || {
        node.states().matches("Unclaimed Idle").count() == 2
    });
    let o = node.roost(&["status", "-af", "Draining", "LastDrainStopTime > 0"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "undefined true\nundefined true\n"
    );

    // Reconfig: a broken file is refused and the old configuration stays.
    let good = std::fs::read_to_string(&node.config).expect("config");
    std::fs::write(&node.config, format!("{good}\nif true\n")).expect("break config");
    let o = node.roost(&["reconfig", "--socket", socket.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("reconfiguration refused"), "{}", text(&o));
    std::fs::write(&node.config, &good).expect("restore config");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{}", text(&o));

    // A client that leaves without a word (another daemon checking whether
    // this one answers) is no refusal; a request that is not JSON is
    // refused with its error, and logged.
    drop(std::os::unix::net::UnixStream::connect(&socket).expect("connect"));
    let mut client = std::os::unix::net::UnixStream::connect(&socket).expect("connect");
    client.write_all(b"{not json\n").expect("send");
    let mut answer = String::new();
    client.read_to_string(&mut answer).expect("answer");
    assert!(answer.contains("malformed request"), "{answer}");
    wait_for("the refusal in the log", || {
        node.start_log().contains("Admin request refused.")
    });
    assert!(node.roost(&["status"]).status.success());
    let log = node.start_log();
    assert_eq!(log.matches("Admin request refused.").count(), 1, "{log}");
    assert!(!log.contains("EOF while parsing"), "{log}");

    // off -fast with a job running: it is killed and the daemon exits.
    node.job("last", 9, "300");
    wait_for("the last job to run", || {
        node.states().contains("Claimed Busy")
    });
    let o = node.roost(&["off", "-fast"]);
    assert!(o.status.success(), "{}", text(&o));
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    assert!(!socket.exists(), "the socket is removed at exit");
    let exits = records(&node.dir, "exit");
    assert_eq!(exits.len(), 3);
    assert!(exits[2].starts_with("argv: evict\n"), "{}", exits[2]);

    let ev = events(&node.dir.join("spool/roost-events"));
    // Every command is a typed node event in the log.
    let logged: Vec<&serde_json::Value> =
        ev.iter().filter_map(|e| e.pointer("/event/Node")).collect();
    let has = |path: &str, want: &str| {
        logged
            .iter()
            .any(|e| e.pointer(path).is_some_and(|v| v == want))
    };
    assert!(
        logged
            .iter()
            .any(|e| e.pointer("/VacateAsked/slots/0").is_some()),
        "{logged:?}"
    );
    assert!(has("/DrainStarted/reason", "kernel update"), "{logged:?}");
    assert!(has("/DrainEnded/why", "cancelled"), "{logged:?}");
    assert!(has("/ShutdownBegan/how", "Fast"), "{logged:?}");
    assert!(has("/ShutdownBegan/cause", "command"), "{logged:?}");
    assert!(
        logged
            .iter()
            .any(|e| e.pointer("/ShutdownCompleted/restart").is_some()),
        "{logged:?}"
    );
    assert_eq!(
        count(&ev, "/event/Daemon/Reconfigured/ok", |v| v == false),
        1
    );
    assert!(
        count(&ev, "/event/Slot/ActivityChanged/state", |v| v == "Drained") >= 2,
        "slots were recorded Drained"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn prepare_job_status_codes_warn_hold_or_evict_and_job_exit_always_hears() {
    let prep_dir = temp("prepare-hooks");
    std::fs::create_dir_all(&prep_dir).expect("mkdir");
    std::fs::set_permissions(&prep_dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // PREPARE_JOB reports the job's `Want` as its status code; a negative
    // `Want` has it exit with that status instead, reporting nothing.
    let prep = prep_dir.join("prepare");
    std::fs::write(
        &prep,
        "#!/bin/sh\nw=$(sed -n 's/^Want = //p')\ncase $w in -*) exit ${w#-} ;; esac\n\
         echo \"HookStatusCode = $w\"\necho \"HookStatusMessage = \\\"code $w\\\"\"\n",
    )
    .expect("hook");
    std::fs::set_permissions(&prep, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let node = Node::setup(
        "prepare",
        &format!("T_HOOK_PREPARE_JOB = {}\n", prep.display()),
    );
    let logs = user_log_dir(&node);
    let child = node.start();
    for (name, cluster, want) in [
        ("warn", 1, 0),
        ("hold", 2, 150),
        ("evict", 3, 350),
        ("failed", 4, -5),
    ] {
        let text = format!(
            "ClusterId = {cluster}\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/true\"\n\
             JobUniverse = 5\nWant = {want}\nIwd = \"{logs}\"\nStarterUserLog = \"{name}.log\"\n",
            logs = logs.display()
        );
        std::fs::write(node.dir.join("jobs").join(format!("{name}.job")), text).expect("job");
    }
    wait_for("four JOB_EXITs", || records(&node.dir, "exit").len() == 4);
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let exits = records(&node.dir, "exit");
    let by = |cluster: &str| {
        exits
            .iter()
            .find(|r| r.contains(&format!("\nClusterId = {cluster}\n")))
            .cloned()
            .unwrap_or_default()
    };
    // 0 with a message: a warning, and the job runs.
    assert!(by("1").starts_with("argv: exit\n"), "{}", by("1"));
    // 1-299: the job is held, with the hook's message as the reason.
    assert!(by("2").starts_with("argv: hold\n"), "{}", by("2"));
    assert!(
        by("2").contains("\nHoldReason = \"code 150\"\n"),
        "{}",
        by("2")
    );
    // 300 and up: evicted.
    assert!(by("3").starts_with("argv: evict\n"), "{}", by("3"));
    assert!(by("3").contains("reported status 350"), "{}", by("3"));
    // A non-zero exit with no status reported: evicted too (not held by
    // the exit code), as HTCondor's starter does with fetched work.
    assert!(by("4").starts_with("argv: evict\n"), "{}", by("4"));
    assert!(!by("4").contains("\nHoldReason"), "{}", by("4"));
    let ev = events(&node.dir.join("spool/roost-events"));
    assert_eq!(
        count(&ev, "/event/Starter/JobNotStarted/reason", |_| true),
        3
    );
    assert_eq!(
        count(&ev, "/event/Starter/JobNotStarted/reason", |v| v
            .as_str()
            .is_some_and(|m| m.contains("failed (exited with status 5)"))),
        1
    );
    assert!(
        count(&ev, "/event/Starter/Warning/message", |v| v
            .as_str()
            .is_some_and(|m| m.contains("says: code 0")))
            == 1
    );
    // The job event logs, as HTCondor's starter writes them: the job that
    // ran executed and terminated; the others have the starter's error.
    let user_log = |name: &str| user_log_records(&logs.join(format!("{name}.log")));
    let warn = user_log("warn");
    assert_eq!(warn.len(), 2, "{warn:?}");
    assert!(warn[0].starts_with("001 (001.000.000) "), "{warn:?}");
    assert!(warn[0].contains(" Job executing on host: <"), "{warn:?}");
    assert!(warn[1].starts_with("005 (001.000.000) "), "{warn:?}");
    assert!(
        warn[1].contains("Job terminated.\n\t(1) Normal termination (return value 0)\n"),
        "{warn:?}"
    );
    for (name, cluster, code) in [("hold", 2, 150), ("evict", 3, 350)] {
        let records = user_log(name);
        assert_eq!(records.len(), 1, "{records:?}");
        assert!(
            records[0].starts_with(&format!("021 ({cluster:03}.000.000) ")),
            "{records:?}"
        );
        assert!(
            records[0].ends_with(&format!(
                ":\n\tPREPARE_JOB (prepare) failed (reported status {code}): code {code}\n"
            )),
            "{records:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&node.dir);
    let _ = std::fs::remove_dir_all(&prep_dir);
}

/// A directory the job user (nobody) may write job event logs in.
fn user_log_dir(node: &Node) -> PathBuf {
    let logs = node.dir.join("userlogs");
    std::fs::create_dir_all(&logs).expect("mkdir");
    std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    logs
}

/// The records of a text job event log (each without its `...` line),
/// after checking the file belongs to the job's user.
fn user_log_records(path: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(meta.uid(), NOBODY, "written as the job's user");
    let text = std::fs::read_to_string(path).expect("user log");
    text.split_inclusive("...\n")
        .map(|r| r.strip_suffix("...\n").unwrap_or(r).to_string())
        .collect()
}

#[test]
fn a_job_whose_owner_does_not_exist_is_refused_and_the_fetcher_hears_of_it() {
    let node = Node::setup("noowner", "");
    let child = node.start();
    std::fs::write(
        node.dir.join("jobs/ghost.job"),
        "ClusterId = 5\nProcId = 0\nOwner = \"no_such_user_roost\"\nCmd = \"/bin/true\"\n",
    )
    .expect("job");
    wait_for("JOB_EXIT", || records(&node.dir, "exit").len() == 1);
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let exit = &records(&node.dir, "exit")[0];
    assert!(exit.starts_with("argv: evict\n"), "{exit}");
    assert!(
        exit.contains("no_such_user_roost"),
        "the reason names the user: {exit}"
    );
    let ev = events(&node.dir.join("spool/roost-events"));
    assert_eq!(
        count(&ev, "/event/Starter/JobNotStarted/reason", |v| v
            .as_str()
            .is_some_and(|r| r.contains("no_such_user_roost"))),
        1
    );
    assert_eq!(count(&ev, "/event/Starter/JobStarted/pid", |_| true), 0);
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn reconfig_gives_running_slots_their_new_policy() {
    let node = Node::setup("reconfig-policy", "");
    let child = node.start();
    let starts = || {
        let o = node.roost(&["status", "-af", "Name", "Start"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    wait_for("slots", || starts().lines().count() == 2);
    assert!(
        starts().lines().all(|l| l.ends_with(" true")),
        "{}",
        starts()
    );

    // START = False from now on: both slots say so, and take no work.
    let base = std::fs::read_to_string(&node.config).expect("config");
    std::fs::write(&node.config, format!("{base}START = False\n")).expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("2 slot(s) use the new policy now"),
        "{}",
        text(&o)
    );
    wait_for("Start = false", || {
        starts().lines().count() == 2 && starts().lines().all(|l| l.ends_with(" false"))
    });

    // A policy that does not parse is refused, naming the knob; the slots
    // keep the one they have.
    std::fs::write(&node.config, format!("{base}START = (\n")).expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("START"), "{}", text(&o));
    assert!(
        starts().lines().all(|l| l.ends_with(" false")),
        "{}",
        starts()
    );

    // Back to START = True: the job offered runs.
    std::fs::write(&node.config, &base).expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{}", text(&o));
    node.job("after", 7, "0");
    wait_for("JOB_EXIT of the job", || {
        records(&node.dir, "exit")
            .iter()
            .any(|r| r.contains("\nClusterId = 7\n"))
    });
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let _ = std::fs::remove_dir_all(&node.dir);
}

/// The state letter of process `pid` (`S` sleeping, `T` stopped, …).
pub(crate) fn proc_state(pid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Whether process `pid` has ended (gone, or a zombie not yet reaped).
pub(crate) fn gone(pid: &str) -> bool {
    matches!(proc_state(pid), None | Some('Z' | 'X'))
}

/// The parent of process `pid` (a job's or a client's starter).
pub(crate) fn parent_of(pid: &str) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        .and_then(|p| p.parse::<i32>().ok())
        .expect("ppid")
}

/// Kills the parent of process `pid` with SIGKILL.
pub(crate) fn kill_parent(pid: &str) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(parent_of(pid)),
        nix::sys::signal::SIGKILL,
    )
    .expect("kill");
}

#[test]
fn suspend_and_continue_stop_and_resume_the_job_process() {
    let node = Node::setup(
        "suspend",
        "WANT_SUSPEND = True\nCONTINUE = True\nSUSPEND = False\n",
    );
    let base = std::fs::read_to_string(&node.config).expect("config");
    let logs = user_log_dir(&node);
    let child = node.start();
    std::fs::write(
        node.dir.join("jobs/sleeper.job"),
        format!(
            "ClusterId = 3\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sleep\"\n\
             Arguments = \"300\"\nJobUniverse = 5\nStarterUserLog = \"{}\"\n\
             StarterUserLogUseXML = true\n",
            logs.join("sleeper.xml").display()
        ),
    )
    .expect("job");
    let job_pid = || node.job_pid();
    wait_for("the job's pid", || !job_pid().is_empty());
    let pid = job_pid();
    wait_for("the job to sleep", || proc_state(&pid) == Some('S'));

    // SUSPEND becomes true: the slot suspends the job; its process stops.
    std::fs::write(
        &node.config,
        format!("{base}SUSPEND = True\nCONTINUE = False\n"),
    )
    .expect("config");
    assert!(node.roost(&["reconfig"]).status.success());
    wait_for("Claimed Suspended", || {
        node.states().contains("Claimed Suspended")
    });
    wait_for("the process to stop", || proc_state(&pid) == Some('T'));

    // CONTINUE: it runs again, the same process.
    std::fs::write(&node.config, &base).expect("config");
    assert!(node.roost(&["reconfig"]).status.success());
    wait_for("Claimed Busy", || node.states().contains("Claimed Busy"));
    wait_for("the process to run", || proc_state(&pid) == Some('S'));
    assert_eq!(job_pid(), pid);

    node.vacate_fast_and_stop(child);
    let ev = events(&node.dir.join("spool/roost-events"));
    assert_eq!(count(&ev, "/event/Slot/JobSuspended/at", |_| true), 1);
    assert_eq!(count(&ev, "/event/Slot/JobContinued/at", |_| true), 1);
    assert_eq!(
        count(&ev, "/event/Starter/Suspended/stopped", |v| v == true),
        1
    );
    assert_eq!(
        count(&ev, "/event/Starter/Suspended/stopped", |v| v == false),
        1
    );
    let audit =
        super::events_cli::roost_log(&node.dir.join("spool/roost-events"), &["claims", "--json"]);
    let claim: serde_json::Value =
        serde_json::from_str(audit.lines().next().unwrap_or_default()).expect("json");
    assert_eq!(claim["suspensions"], 1, "{claim}");
    assert!(
        claim["job_outcome"]
            .as_str()
            .is_some_and(|o| o.starts_with("evict: ")),
        "{claim}"
    );
    // The job event log, in XML: executed, suspended (one process),
    // unsuspended, evicted.
    let xml = std::fs::read_to_string(logs.join("sleeper.xml")).expect("user log");
    let types: Vec<&str> = xml
        .lines()
        .filter_map(|l| l.strip_prefix("    <a n=\"MyType\"><s>"))
        .filter_map(|l| l.strip_suffix("</s></a>"))
        .collect();
    assert_eq!(
        types,
        [
            "ExecuteEvent",
            "JobSuspendedEvent",
            "JobUnsuspendedEvent",
            "JobEvictedEvent"
        ],
        "{xml}"
    );
    assert!(xml.contains("<a n=\"NumberOfPIDs\"><i>1</i></a>"), "{xml}");
    assert_eq!(xml.matches("<c>\n").count(), 4, "{xml}");
    assert_eq!(
        xml.matches("<a n=\"Cluster\"><i>3</i></a>").count(),
        4,
        "{xml}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_partitionable_slot_fills_up_then_takes_the_next_job_when_room_returns() {
    let node = Node::setup(
        "pslot-fill",
        "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=100%, memory=100%, disk=100%\n\
         SLOT_TYPE_1_PARTITIONABLE = True\nMEMORY = 2048\n",
    );
    let job = |name: &str, cluster: u32, secs: u32| {
        let text = format!(
            "ClusterId = {cluster}\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sleep\"\n\
             Arguments = \"{secs}\"\nJobUniverse = 5\nRequestCpus = 1\nRequestMemory = 100\n\
             RequestDisk = 1000\n"
        );
        let tmp = node.dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, text).expect("job");
        std::fs::rename(&tmp, node.dir.join("jobs").join(format!("{name}.job"))).expect("job");
    };
    let child = node.start();
    job("a-long", 1, 300);
    job("b-long", 2, 300);
    wait_for("two dynamic slots running", || {
        let s = node.states();
        s.lines()
            .filter(|l| l.starts_with("slot1_") && l.ends_with("Claimed Busy"))
            .count()
            == 2
    });
    // Full: the partitionable slot has no CPU left, and a third job waits
    // in the queue rather than being fetched and rejected.
    let o = node.roost(&[
        "status",
        "-af",
        "Name",
        "Cpus",
        "-constraint",
        "PartitionableSlot",
    ]);
    assert!(
        String::from_utf8_lossy(&o.stdout).trim().ends_with(" 0"),
        "{}",
        text(&o)
    );
    job("c-short", 3, 0);
    // Room returns when one job is vacated; the waiting job runs then.
    let o = node.roost(&["vacate", "-fast", "slot1_1"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("the third job's JOB_EXIT", || {
        records(&node.dir, "exit")
            .iter()
            .any(|r| r.starts_with("argv: exit\n") && r.contains("\nClusterId = 3\n"))
    });
    // The other long job goes too, so that the graceful stop is quick.
    let o = node.roost(&["vacate", "-fast"]);
    assert!(o.status.success(), "{}", text(&o));
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let replies = records(&node.dir, "reply");
    assert_eq!(
        replies
            .iter()
            .filter(|r| r.starts_with("argv: reject"))
            .count(),
        0,
        "no job was fetched only to be rejected"
    );
    assert_eq!(
        replies
            .iter()
            .filter(|r| r.starts_with("argv: accept"))
            .count(),
        3
    );
    let ev = events(&node.dir.join("spool/roost-events"));
    assert_eq!(
        count(&ev, "/event/Slot/DynamicSlotCreated/sub", |_| true),
        3
    );
    // Three claims, each with its own number.
    let claims: std::collections::BTreeSet<u64> = ev
        .iter()
        .filter_map(|e| {
            e.pointer("/event/Slot/DynamicSlotCreated/claim/id")?
                .as_u64()
        })
        .collect();
    assert_eq!(claims.len(), 3, "{claims:?}");
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn benchmarks_run_once_at_start_for_every_slot_and_publish_mips_and_kflops() {
    // HTCondor's default RunBenchmarks (the setup turns it off).
    let node = Node::setup("bench", "RunBenchmarks = LastBenchmark == 0\n");
    let child = node.start();
    let published = || {
        let o = node.roost(&[
            "status",
            "-af",
            "LastBenchmark",
            "Mips",
            "KFlops",
            "Activity",
        ]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    wait_for("benchmarks in both slot ads", || {
        let p = published();
        p.lines().count() == 2
            && p.lines()
                .all(|l| !l.starts_with("0 ") && l.ends_with(" Idle"))
    });
    for line in published().lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
        assert!(n(0) > 1_000_000_000, "LastBenchmark is a time: {line}");
        assert!(n(1) > 0 && n(2) > 0, "Mips and KFlops measured: {line}");
    }
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let ev = events(&node.dir.join("spool/roost-events"));
    for (transition, activity) in [(3, "Benchmarking"), (4, "Idle")] {
        let slots: Vec<&str> = ev
            .iter()
            .filter(|e| {
                e.pointer("/event/Slot/ActivityChanged/transition") == Some(&transition.into())
                    && e.pointer("/event/Slot/ActivityChanged/activity") == Some(&activity.into())
            })
            .filter_map(|e| e["actor"].as_str())
            .collect();
        assert_eq!(slots, ["slot1", "slot2"], "transition {transition}");
    }
    let log = node.start_log();
    assert_eq!(
        log.matches("Running benchmarks.").count(),
        1,
        "one run for both slots: {log}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

/// A starter that dies before it could run JOB_EXIT (killed, out of memory,
/// a bug) leaves a job no one follows and a fetcher that never hears of it.
/// The daemon kills what is left of the job and runs EVICT_CLAIM, so the
/// fetcher learns; the slot then takes new work.
#[test]
fn a_starter_killed_mid_job_takes_its_job_down_and_the_fetcher_hears() {
    let node = Node::setup("starter-lost", "");
    let logs = user_log_dir(&node);
    let child = node.start();
    let text = format!(
        "ClusterId = 7\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sleep\"\n\
         Arguments = \"300\"\nJobUniverse = 5\nIwd = \"{}\"\nStarterUserLog = \"lost.log\"\n",
        logs.display()
    );
    std::fs::write(node.dir.join("jobs/sleeper.job"), text).expect("job");
    let job_pid = || node.job_pid();
    wait_for("the job's pid", || !job_pid().is_empty());
    let pid = job_pid();
    wait_for("the job to sleep", || proc_state(&pid) == Some('S'));
    // The starter's sandbox holds the job's files; it goes with the job.
    let starter = parent_of(&pid);
    let sandbox = node.dir.join(format!("execute/dir_{starter}"));
    assert!(sandbox.is_dir(), "{} exists", sandbox.display());
    kill_parent(&pid);

    wait_for("EVICT_CLAIM for the job", || {
        records(&node.dir, "evict")
            .iter()
            .any(|r| r.contains("ClusterId = 7\n"))
    });
    wait_for("the job to be gone", || gone(&pid));
    wait_for("the sandbox to be removed", || {
        !sandbox.exists() && !sandbox.with_extension("lost").exists()
    });
    // The job event log says why the job ended: the lost starter could not.
    let user_log = logs.join("lost.log");
    wait_for("the job event log's eviction", || {
        std::fs::read_to_string(&user_log).is_ok_and(|t| t.contains("Job was evicted."))
    });
    let recs = user_log_records(&user_log);
    let numbers: Vec<&str> = recs.iter().map(|r| &r[..3]).collect();
    assert_eq!(numbers, ["001", "021", "004"], "{recs:?}");
    assert!(
        recs[1].ends_with(&format!(
            "\tThe starter (pid {starter}) was killed by signal 9 before the job ended; \
             the job was killed.\n"
        )),
        "{recs:?}"
    );
    let evict = records(&node.dir, "evict").join("\n");
    assert!(
        evict.contains("argv: \n") || evict.contains("argv:\n"),
        "{evict}"
    );
    assert!(evict.contains("\n-----\n"), "{evict}");
    // No JOB_EXIT: the starter that runs it is gone.
    assert!(
        !records(&node.dir, "exit")
            .iter()
            .any(|r| r.contains("ClusterId = 7\n"))
    );
    // The slot takes the next job.
    node.job("next", 8, "0");
    wait_for("the next job's JOB_EXIT", || {
        records(&node.dir, "exit")
            .iter()
            .any(|r| r.starts_with("argv: exit\n") && r.contains("ClusterId = 8\n"))
    });
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let ev = events(&node.dir.join("spool/roost-events"));
    assert_eq!(
        count(&ev, "/event/Slot/ClaimEnded/cause", |v| v == "StarterLost"),
        1
    );
    // The loss was decided and recorded (`Starter.Exited` with `lost`)
    // before the slot heard of it.
    let at = |pred: &dyn Fn(&serde_json::Value) -> bool| ev.iter().position(pred);
    let exited = at(&|e| e.pointer("/event/Starter/Exited/lost") == Some(&serde_json::json!(true)));
    let ended = at(&|e| {
        e.pointer("/event/Slot/ClaimEnded/cause")
            .is_some_and(|v| v == "StarterLost")
    });
    assert!(exited.is_some() && exited < ended, "{exited:?} {ended:?}");
    let _ = std::fs::remove_dir_all(&node.dir);
}

/// At start the daemon removes the sandboxes starters that no longer run
/// left under EXECUTE (a machine crash), and leaves one whose pid is alive.
#[test]
fn sandboxes_left_by_gone_starters_are_removed_at_start() {
    let node = Node::setup("sweep", "");
    let execute = node.dir.join("execute");
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(32768);
    let dead = (2..pid_max)
        .rev()
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .expect("a free pid");
    let gone = execute.join(format!("dir_{dead}"));
    let half_removed = execute.join(format!("dir_{dead}.lost"));
    let alive = execute.join(format!("dir_{}", std::process::id()));
    let other = execute.join("not_a_sandbox");
    for d in [&gone, &half_removed, &alive, &other] {
        std::fs::create_dir_all(d.join("sub")).expect("mkdir");
        std::fs::write(d.join("sub/file"), "x").expect("file");
    }
    let child = node.start();
    wait_for("the gone starters' sandboxes to be removed", || {
        !gone.exists() && !half_removed.exists()
    });
    assert!(
        alive.join("sub/file").exists(),
        "a live pid's sandbox stays"
    );
    assert!(other.join("sub/file").exists(), "other files stay");
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let log = node.start_log();
    assert_eq!(
        log.matches("Removed a sandbox its starter left.").count(),
        2,
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

/// A SIGTERM that comes during start-up (before the event log is replayed
/// and the signal handlers exist) is a graceful shutdown, not a kill.
#[test]
fn a_sigterm_during_start_up_is_a_graceful_shutdown() {
    let node = Node::setup("early-term", "");
    let log = node.dir.join("log/StartLog");
    let child = node.start();
    let start = std::time::Instant::now();
    // StartLog is opened early in start-up, well before the handlers.
    while !log.exists() {
        assert!(start.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let text = node.start_log();
    assert!(text.contains("Stopped."), "{text}");
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn each_job_sees_its_slots_devices_in_its_environment() {
    let node = Node::setup(
        "devices",
        "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1, CUDA2\n\
         ENVIRONMENT_FOR_AssignedGPUs = CUDA_VISIBLE_DEVICES MINE=/^/gpu:/\n",
    );
    let out = node.dir.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    for (i, name) in ["e1", "e2"].iter().enumerate() {
        let text = format!(
            "ClusterId = {}\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sh\"\n\
             Arguments = \"-c 'env > {}/$_CONDOR_SLOT.env; sleep 1'\"\nJobUniverse = 5\n",
            i + 1,
            out.display()
        );
        std::fs::write(node.dir.join("jobs").join(format!("{name}.job")), text).expect("job");
    }
    let daemon = node.start();
    let env = |slot: &str| std::fs::read_to_string(out.join(format!("{slot}.env")));
    wait_for("both jobs' environments", || {
        env("slot1").is_ok_and(|e| e.contains("MINE="))
            && env("slot2").is_ok_and(|e| e.contains("MINE="))
    });
    stop(daemon);
    let (one, two) = (env("slot1").expect("slot1"), env("slot2").expect("slot2"));
    assert!(
        one.contains("\n_CONDOR_AssignedGPUs=CUDA0,CUDA1\n"),
        "{one}"
    );
    assert!(one.contains("\nCUDA_VISIBLE_DEVICES=0,1\n"), "{one}");
    assert!(one.contains("\nMINE=gpu:CUDA0,gpu:CUDA1\n"), "{one}");
    assert!(two.contains("\n_CONDOR_AssignedGPUs=CUDA2\n"), "{two}");
    assert!(two.contains("\nCUDA_VISIBLE_DEVICES=2\n"), "{two}");
    let _ = std::fs::remove_dir_all(&node.dir);
}
