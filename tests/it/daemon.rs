//! `roost startd` end to end: the real daemon on a temp directory, with
//! real hook scripts and jobs, stopped with SIGTERM; checked through the
//! files the hooks wrote and the event log (`roost-log list --json`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roost-daemon-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Waits (up to a minute: machines are shared and slow) for `ok`.
pub(crate) fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A daemon a test started. A test that fails part-way drops it without
/// [`stop`]: the drop shuts the daemon down fast (SIGQUIT, its jobs
/// killed), then kills it, so no daemon outlives its test.
pub(crate) struct Daemon(Option<Child>);

impl Daemon {
    /// Spawns `cmd` (a `roost startd` command line).
    pub(crate) fn spawn(cmd: &mut Command) -> Daemon {
        Daemon(Some(cmd.spawn().expect("daemon starts")))
    }

    /// The daemon's pid.
    pub(crate) fn id(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    /// SIGKILL, as a crash or the OOM killer would, and reaps it.
    pub(crate) fn kill(mut self) {
        if let Some(mut child) = self.0.take() {
            child.kill().expect("SIGKILL");
            let _ = child.wait();
        }
    }

    pub(crate) fn signal(&self, sig: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.id()).unwrap_or(0));
        if pid.as_raw() > 0 {
            let _ = nix::sys::signal::kill(pid, sig);
        }
    }

    /// Waits up to `limit` for the daemon to exit.
    pub(crate) fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let child = self.0.as_mut()?;
        let start = Instant::now();
        loop {
            if let Ok(Some(s)) = child.try_wait() {
                self.0 = None;
                return Some(s);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.0.is_none() {
            return;
        }
        self.signal(nix::sys::signal::Signal::SIGQUIT);
        if self.wait(Duration::from_secs(10)).is_none()
            && let Some(mut child) = self.0.take()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// SIGTERM (graceful shutdown) and the exit status.
pub(crate) fn stop(mut daemon: Daemon) -> std::process::ExitStatus {
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    match daemon.wait(Duration::from_secs(60)) {
        Some(s) => s,
        // The drop kills it.
        None => panic!("the daemon did not stop after SIGTERM"),
    }
}

pub(crate) fn events(log: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .args(["--log"])
        .arg(log)
        .args(["list", "--json"])
        .output()
        .expect("roost-log runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

pub(crate) fn count(
    events: &[serde_json::Value],
    pointer: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> usize {
    events
        .iter()
        .filter(|e| e.pointer(pointer).is_some_and(&pred))
        .count()
}

/// Starts `roost startd -f --quickstart DIR` with the program `roost`.
fn quickstart(roost: &Path, dir: &Path) -> Daemon {
    Daemon::spawn(
        Command::new(roost)
            .args(["startd", "-f", "--quickstart"])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

/// How many entries a directory has (0 when it does not exist).
fn n_done(d: &Path) -> usize {
    std::fs::read_dir(d).map_or(0, Iterator::count)
}

/// The program a running process executes.
fn program_of(pid: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default()
}

#[test]
fn without_roost_starter_beside_it_the_daemon_runs_its_own_program_as_starter() {
    // An install that copied only `roost` (and an old `roost-startd`): the
    // daemon runs in `roost` itself, and each job's starter is `roost
    // starter`, the same code in the bigger program.
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("lone-binary");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let lone = bin.join("roost");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_roost"), &lone).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_roost"), &lone).expect("copy roost");
    }
    let stale = bin.join("roost-startd");
    std::fs::write(&stale, "#!/bin/sh\necho 0.0.1+1\n").expect("write");
    std::fs::set_permissions(&stale, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let node = dir.join("node");
    let child = quickstart(&lone, &node);
    let done = node.join("spool/done");
    wait_for("the three example jobs", || n_done(&done) == 3);
    assert_eq!(program_of(child.id()), lone, "the daemon is roost itself");
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let log = std::fs::read_to_string(node.join("log/StartLog")).unwrap_or_default();
    assert!(log.contains("Starter spawned."), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quickstart_runs_the_example_jobs_and_keeps_fetching() {
    let dir = temp("quickstart");
    let child = quickstart(Path::new(env!("CARGO_BIN_EXE_roost")), &dir);
    let done = dir.join("spool/done");
    wait_for("the three example jobs", || n_done(&done) == 3);
    // `roost startd` became the daemon's own program, built beside it.
    assert_eq!(
        program_of(child.id()),
        Path::new(env!("CARGO_BIN_EXE_roost")).with_file_name("roost-startd")
    );
    // A job dropped into the spool later is fetched too; it leaves files
    // in its sandbox, which go with it.
    std::fs::write(
        dir.join("spool/jobs/late.job"),
        format!(
            "Cmd = \"/bin/sh\"\nArguments = \"-c 'mkdir -p $_CONDOR_SCRATCH_DIR/a/b && echo x > $_CONDOR_SCRATCH_DIR/a/b/c && exit 3'\"\nOwner = \"nobody\"\nIwd = \"{}\"\n",
            dir.join("output").display()
        ),
    )
    .expect("drop a job");
    // A job that cannot start still reaches JOB_EXIT, so the fetcher learns.
    std::fs::write(dir.join("spool/jobs/nocmd.job"), "Owner = \"nobody\"\n").expect("drop");
    wait_for("the late jobs", || n_done(&done) == 5);
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");

    let hello = std::fs::read_to_string(dir.join("output/hello.out")).expect("hello.out");
    assert_eq!(hello, "hello from roost\n");
    let env = std::fs::read_to_string(dir.join("output/environment.out")).expect("env out");
    assert!(env.contains("GREETING=hello world\n"), "{env}");
    assert!(env.contains("BATCH_SYSTEM=HTCondor\n"), "{env}");
    assert!(!env.contains("\nPATH="), "a job gets no PATH: {env}");
    let late = std::fs::read_to_string(done.join("late.job")).expect("late.job exit ad");
    assert!(late.starts_with("JobExitHow = \"exit\"\n"), "{late}");
    assert!(late.contains("ExitCode = 3\n"), "{late}");
    assert!(late.contains("ExitBySignal = false\n"), "{late}");
    assert!(late.contains("JobState = \"Exited\"\n"), "{late}");
    assert!(
        std::fs::read_dir(dir.join("spool/claimed"))
            .expect("claimed")
            .next()
            .is_none()
    );
    // Sandboxes are removed.
    assert!(
        std::fs::read_dir(dir.join("execute"))
            .expect("execute")
            .next()
            .is_none()
    );

    let ev = events(&dir.join("spool/roost-events"));
    assert_eq!(
        count(&ev, "/event/Starter/JobExited/how", |v| v == "exit"),
        4
    );
    assert_eq!(
        count(&ev, "/event/Starter/Hook/hook", |v| v == "JOB_EXIT"),
        5
    );
    assert_eq!(
        count(&ev, "/event/Hook/Started/args/0", |v| v == "accept"),
        5
    );
    assert_eq!(
        count(&ev, "/event/Starter/JobNotStarted/reason", |_| true),
        1
    );
    assert_eq!(count(&ev, "/event/Daemon/Stopped/why", |_| true), 1);
    // After an accept the starter is spawned before REPLY_FETCH, which no
    // one waits for.
    for reply in ev
        .iter()
        .filter(|e| e.pointer("/event/Hook/Started/args/0") == Some(&"accept".into()))
    {
        let started = &reply["event"]["Hook"]["Started"];
        let starter = ev
            .iter()
            .find(|e| {
                let s = &e["event"]["Starter"]["Spawned"];
                s["slot"] == started["slot"] && s["claim"] == started["claim"]
            })
            .expect("a starter for each accepted job");
        assert!(
            starter["seq"].as_u64() < reply["seq"].as_u64(),
            "{starter} {reply}"
        );
    }
    // Sequence numbers are contiguous from 1.
    for (i, e) in ev.iter().enumerate() {
        assert_eq!(e["seq"], serde_json::json!(i + 1));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A daemon on `dir` with `slots` static one-CPU slots whose FETCH_WORK is
/// `script` (keyword `T`), plus the `extra` configuration lines.
fn fetch_hook_daemon(dir: &Path, script: &str, slots: u32, extra: &str) -> Daemon {
    let config = fetch_hook_config(dir, script, slots, extra);
    Daemon::spawn(
        Command::new(env!("CARGO_BIN_EXE_roost"))
            .args(["startd", "-f", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

/// Writes the configuration of [`fetch_hook_daemon`] and its hook under
/// `dir`; returns the configuration's path.
pub(crate) fn fetch_hook_config(dir: &Path, script: &str, slots: u32, extra: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir.join("hooks")).expect("mkdir");
    let hook = dir.join("hooks/fetch");
    std::fs::write(&hook, script).expect("hook");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = dir.join("condor_config");
    std::fs::write(
        &config,
        format!(
            "LOCAL_DIR = {}\nLOG = $(LOCAL_DIR)/log\nEXECUTE = $(LOCAL_DIR)/execute\n\
             SPOOL = $(LOCAL_DIR)/spool\nNUM_CPUS = {slots}\nSLOT_TYPE_1 = cpus=1\n\
             NUM_SLOTS_TYPE_1 = {slots}\nIS_OWNER = False\nSTARTD_JOB_HOOK_KEYWORD = T\n\
             T_HOOK_FETCH_WORK = {}\n{extra}",
            dir.display(),
            hook.display()
        ),
    )
    .expect("config");
    config
}

#[test]
fn garbage_and_hung_fetch_hooks_change_nothing_and_fetching_goes_on() {
    let dir = temp("badfetch");
    // Call 1 prints garbage; call 2 hangs past its timeout; later calls
    // print nothing.
    let child = fetch_hook_daemon(
        &dir,
        &format!(
            "#!/bin/sh\nn=$(cat {d}/count 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > {d}/count\n\
             case $n in\n1) echo 'this is not a classad';;\n2) sleep 600;;\nesac\n",
            d = dir.display()
        ),
        1,
        "T_HOOK_FETCH_WORK_TIMEOUT = 1\nFetchWorkDelay = 0\n",
    );
    let calls = || {
        std::fs::read_to_string(dir.join("count"))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(0)
    };
    wait_for("a fetch after the hung one", || calls() >= 3);
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let ev = events(&dir.join("spool/roost-events"));
    let outcome = |e: &serde_json::Value| e.as_str().unwrap_or("").to_string();
    let outcomes: Vec<String> = ev
        .iter()
        .filter_map(|e| e.pointer("/event/Hook/Finished/outcome").map(outcome))
        .collect();
    assert!(
        outcomes[0].starts_with("malformed output: line 1 "),
        "{outcomes:?}"
    );
    assert!(outcomes[1].contains("timeout"), "{outcomes:?}");
    assert_eq!(
        count(&ev, "/event/Hook/Finished/timed_out", |v| v == true),
        1
    );
    // Nothing was claimed.
    assert_eq!(count(&ev, "/event/Slot/ClaimCreated", |_| true), 0);
    let log = std::fs::read_to_string(dir.join("log/StartLog")).expect("StartLog");
    assert!(log.contains("FETCH_WORK output refused"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lines `NANOSECONDS TEXT` a test hook wrote to `file`, as
/// (milliseconds, text).
fn stamped(file: &Path) -> Vec<(i64, String)> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (t, text) = l.split_once(' ')?;
            Some((t.parse::<i64>().ok()? / 1_000_000, text.to_string()))
        })
        .collect()
}

#[test]
fn idle_slots_poll_fetch_work_out_of_step() {
    let dir = temp("phase");
    // Records when it started and for which slot; never has work.
    let child = fetch_hook_daemon(
        &dir,
        &format!(
            "#!/bin/sh\nt=$(date +%s%N)\nn=$(grep '^Name = ')\necho \"$t $n\" >> {}/fetches\n",
            dir.display()
        ),
        2,
        "FetchWorkDelay = 1\n",
    );
    // (start time in ms, slot) of each fetch so far.
    let fetches = || stamped(&dir.join("fetches"));
    let of = |f: &[(i64, String)], slot: &str| -> Vec<i64> {
        f.iter()
            .filter(|(_, n)| n.contains(&format!("\"{slot}@")))
            .map(|(t, _)| *t)
            .collect()
    };
    wait_for("five polls of each slot", || {
        let f = fetches();
        of(&f, "slot1").len() >= 5 && of(&f, "slot2").len() >= 5
    });
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let f = fetches();
    let (one, two) = (of(&f, "slot1"), of(&f, "slot2"));
    // Both slots fetch at once when the daemon starts; after that, each
    // of slot2's polls is far from every poll of slot1 (about 0.38 s:
    // their timers fire 0.618 s apart within each second), where polls in
    // step would be milliseconds apart.
    let mut apart: Vec<i64> = two[1..]
        .iter()
        .map(|t| one.iter().map(|u| (t - u).abs()).min().unwrap_or(0))
        .collect();
    apart.sort_unstable();
    let median = apart[apart.len() / 2];
    assert!(
        median > 150,
        "slot2's polls are {apart:?} ms from slot1's nearest (slot1 {one:?}, slot2 {two:?})"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A daemon (see [`fetch_hook_daemon`]) whose FETCH_WORK hands out
/// nothing until the test says go, then two 3-second jobs (`ad_extra` added
/// to each ad), then nothing; waits for both to be handed out, stops the
/// daemon and returns (milliseconds, slot ad `Name` line) of each.
fn two_jobs_after_go(dir: &Path, slots: u32, ad_extra: &str, extra: &str) -> Vec<(i64, String)> {
    let child = fetch_hook_daemon(
        dir,
        &format!(
            "#!/bin/sh\nt=$(date +%s%N)\nname=$(grep '^Name = ')\nd={d}\n\
             [ -e $d/go ] || {{ echo $t >> $d/polls; exit 0; }}\n\
             n=$(cat $d/count 2>/dev/null || echo 0)\n[ \"$n\" -ge 2 ] && exit 0\n\
             echo $((n+1)) > $d/count\necho \"$t $name\" >> $d/handed\n\
             printf 'Cmd = \"/bin/sleep\"\\nArguments = \"3\"\\nOwner = \"nobody\"\\n{ad_extra}'\n",
            d = dir.display()
        ),
        slots,
        &format!(
            "FetchWorkDelay = ifThenElse(State == \"Claimed\" && Activity == \"Idle\", 0, 1)\n{extra}"
        ),
    );
    let handed = || stamped(&dir.join("handed"));
    // The daemon's first fetch comes at its start; the jobs come to the
    // polls after it.
    wait_for("the first poll", || dir.join("polls").exists());
    std::fs::write(dir.join("go"), "").expect("go");
    wait_for("both jobs handed out", || handed().len() == 2);
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    handed()
}

#[test]
fn a_slot_that_finds_work_prompts_the_idle_slots_fetching_from_the_same_place() {
    let dir = temp("prompt");
    let h = two_jobs_after_go(&dir, 2, "", "");
    // One job to each slot (the first still runs when the second comes).
    assert!(
        h.iter().any(|(_, n)| n.contains("\"slot1@"))
            && h.iter().any(|(_, n)| n.contains("\"slot2@")),
        "{h:?}"
    );
    // The idle slots poll out of step; the one that did not find the
    // first job asked again because the other found it — at once, or at
    // the start of the next second when its own poll was in this one —
    // and the event log says so.
    let ev = events(&dir.join("spool/roost-events"));
    let prompted: Vec<(String, String)> = ev
        .iter()
        .filter_map(|e| {
            let by = e
                .pointer("/event/Slot/FetchStarted/prompted_by")?
                .as_str()?;
            Some((e["actor"].as_str()?.to_string(), by.to_string()))
        })
        .collect();
    assert!(
        prompted.iter().any(|(slot, by)| slot != by),
        "no fetch prompted by the other slot's work: {prompted:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_partitionable_slot_that_finds_work_fetches_again_at_the_next_second() {
    let dir = temp("pslot-burst");
    let h = two_jobs_after_go(
        &dir,
        1,
        "RequestCpus = 1\\nRequestMemory = 64\\nRequestDisk = 1024\\n",
        "NUM_CPUS = 2\nSLOT_TYPE_1 = cpus=100%, memory=100%\nSLOT_TYPE_1_PARTITIONABLE = True\n",
    );
    // Both went to the partitionable slot (the first job, 3 s long, still
    // runs in its dynamic slot when the second is fetched).
    assert!(h.iter().all(|(_, n)| n.contains("\"slot1@")), "{h:?}");
    // The first came at the slot's idle point of the second (0.618 s in);
    // the second as soon as the one-second delay had passed in whole
    // seconds, at the next second's start, about 0.38 s later. Polling at
    // the slot's own point of the second again, as idle polls do, would
    // take a full second.
    let gap = h[1].0 - h[0].0;
    assert!(
        gap < 900,
        "the second job came {gap} ms after the first: {h:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An idle node's polls that find nothing are written as runs
/// (`Slot.FetchesEmpty`), not one by one: every poll is counted in them
/// once the daemon has stopped, and the replayed state knows when each
/// slot last polled.
#[test]
fn an_idle_node_writes_its_empty_polls_as_runs() {
    let dir = temp("quiet-idle");
    let runs = dir.join("runs");
    let daemon = fetch_hook_daemon(
        &dir,
        &format!("#!/bin/sh\necho run >> {}\n", runs.display()),
        2,
        "FetchWorkDelay = 1\nRunBenchmarks = False\n",
    );
    let polls = || {
        std::fs::read_to_string(&runs)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    wait_for("eight polls", || polls() >= 8);
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    std::thread::sleep(Duration::from_millis(200));
    let log = events(&dir.join("spool/roost-events"));
    let folded: u64 = log
        .iter()
        .filter_map(|e| e.pointer("/event/Slot/FetchesEmpty/count")?.as_u64())
        .sum();
    let folded = usize::try_from(folded).expect("count");
    // Written whole: each slot's first poll, which came with its move to
    // Unclaimed; a poll under way as the daemon stopped has its start.
    let whole = count(&log, "/event/Slot/FetchCompleted/at", |_| true);
    let started = count(&log, "/event/Slot/FetchStarted/at", |_| true);
    assert!(
        whole <= 2 && started <= whole + 2,
        "{whole} ended and {started} started one by one"
    );
    assert!(
        folded + whole <= polls() && polls() <= folded + started,
        "{folded} polls in runs, {whole} whole, {started} started, {} run",
        polls()
    );
    assert_eq!(
        count(&log, "/event/Hook/Started/hook", |_| true),
        whole,
        "{log:?}"
    );
    // The replayed state: each slot's last poll is its last run's end.
    let out = Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .arg("--log")
        .arg(dir.join("spool/roost-events"))
        .args(["state", "--json"])
        .output()
        .expect("roost-log runs");
    let state: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for slot in ["slot1", "slot2"] {
        let last = log
            .iter()
            .filter(|e| e["actor"] == slot)
            .filter_map(|e| e.pointer("/event/Slot/FetchesEmpty/at")?.as_i64())
            .max();
        assert!(last.is_some(), "{slot} has a run: {log:?}");
        assert_eq!(
            state["slots"][slot]["last_fetch_completed"].as_i64(),
            last,
            "{slot}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A directory under `dir` that a job running as `nobody` (the daemon as
/// root) can write to.
fn open_to_the_job(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    out
}

/// A fetched job is judged in the ad the slot publishes: START that reads
/// an attribute of `STARTD_ATTRS`, a cron job's attribute and one of the
/// machine's totals accepts it and runs it, as HTCondor's does (before,
/// such a START saw none of them and refused every job while `roost
/// status` showed `Start = true`).
#[test]
fn start_sees_startd_attrs_and_cron_attributes_when_it_judges_a_fetched_job() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("start-attrs");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let health = dir.join("health");
    std::fs::write(&health, "#!/bin/sh\necho 'HealthOk = true'\n").expect("cron");
    std::fs::set_permissions(&health, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = open_to_the_job(&dir);
    let child = fetch_hook_daemon(
        &dir,
        &format!(
            "#!/bin/sh\nd={d}\n[ -e $d/ran ] && exit 0\n\
             printf 'Cmd = \"/bin/touch\"\\nArguments = \"%s/ran\"\\nOwner = \"nobody\"\\n' $d\n",
            d = out.display()
        ),
        1,
        &format!(
            "STARTD_ATTRS = MyAttr\nMyAttr = 1\nFetchWorkDelay = 1\n\
             START = MyAttr == 1 && HealthOk =?= true && TotalCpus >= 1 && TotalSlots == 1\n\
             STARTD_CRON_JOBLIST = health\nSTARTD_CRON_HEALTH_EXECUTABLE = {}\n\
             STARTD_CRON_HEALTH_PERIOD = 1s\n",
            health.display()
        ),
    );
    wait_for("the fetched job to run", || out.join("ran").exists());
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let ev = events(&dir.join("spool/roost-events"));
    assert!(count(&ev, "/event/Slot/ClaimCreated", |_| true) >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A machine put down by a SHUTDOWN event (the statements the eventd
/// writes, as the spec gives them: `EndDownTime` in `STARTD_EXPRS`, read by
/// START) takes no work until its own `EndDownTime`, then takes it — with
/// no eventd cleanup — which is what makes the event's slow start work.
#[test]
fn a_machine_down_for_a_shutdown_event_comes_back_at_its_own_end_down_time() {
    let dir = temp("end-down-time");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let until = now + 4;
    let out = open_to_the_job(&dir);
    let child = fetch_hook_daemon(
        &dir,
        &format!(
            "#!/bin/sh\nd={d}\n[ -e $d/ran ] && exit 0\ndate +%s >> $d/polls\n\
             printf 'Cmd = \"/bin/touch\"\\nArguments = \"%s/ran\"\\nOwner = \"nobody\"\\n' $d\n",
            d = out.display()
        ),
        1,
        &format!(
            "FetchWorkDelay = 1\nEndDownTime = {until}\nShutdown = (CurrentTime < EndDownTime)\n\
             START : ($(START)) && ($(Shutdown) == False)\n\
             STARTD_EXPRS = $(STARTD_EXPRS), EndDownTime\n"
        ),
    );
    wait_for("the fetched job to run", || out.join("ran").exists());
    let status = stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let polls: Vec<u64> = std::fs::read_to_string(out.join("polls"))
        .expect("polls")
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    // While START is false the slot does not even ask for work (as
    // HTCondor's); it asks again every FetchWorkDelay, and takes what it
    // gets once its EndDownTime has passed.
    assert!(
        polls.first().is_some_and(|t| *t >= until),
        "asked for work while down: {polls:?} (EndDownTime {until})"
    );
    let ran = std::fs::metadata(out.join("ran"))
        .and_then(|m| m.modified())
        .expect("ran")
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    assert!(ran >= until, "ran at {ran}, before EndDownTime {until}");
    let _ = std::fs::remove_dir_all(&dir);
}
