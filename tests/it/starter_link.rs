//! The starter program's side of a daemon that goes away, driven directly
//! with the test as the daemon: a starter never told to go runs nothing; a
//! starter whose daemon left keeps its job and calls the daemon's socket
//! with every report it made, goes on with the daemon that welcomes it and
//! leaves only when told goodbye; a starter a daemon refuses kills its job
//! and tells no one.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use roost::starter::protocol::{
    Attached, Command as StarterCommand, Hello, PROTOCOL, Report, Request, StarterHooks,
};

use super::daemon::temp;

/// A starter for a job (`sh -c script` in `dir`) with a JOB_EXIT hook that
/// appends its argument to `dir/exit.log`, calling `dir/sock` when its
/// daemon goes away.
fn starter(dir: &Path, script: &str, orphan_timeout: u64) -> (Child, ChildStdin, ChildStdout) {
    std::fs::create_dir_all(dir.join("execute")).expect("mkdir");
    std::fs::create_dir_all(dir.join("left")).expect("mkdir");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let hook = dir.join("job_exit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\necho \"$1\" >> {}\n",
            dir.join("exit.log").display()
        ),
    )
    .expect("hook");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let request = Request {
        slot: "slot1".into(),
        job: format!(
            "Cmd = \"/bin/sh\"\nArguments = \"-c '{script}'\"\nIwd = \"{}\"\nOwner = \"nobody\"\n",
            dir.display()
        ),
        machine: String::new(),
        execute: dir.join("execute"),
        hooks: StarterHooks {
            job_exit: Some(hook),
            timeouts: [30, 30, 30],
            ..StarterHooks::default()
        },
        device_env: Vec::new(),
        update_intervals: (300, 300),
        hook_env: roost::spawn::Environment::default(),
        stdout_limit: 10240,
        vacate_grace: 0,
        cgroup_base: None,
        cgroup_home: None,
        lost: None,
        owner: None,
        debug_log: false,
        protocol: PROTOCOL,
        actor: "slot1/starter/9".into(),
        reattach: Some(dir.join("sock")),
        orphan_timeout,
        leftover: Some(dir.join("left")),
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_roost-starter"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the starter starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    writeln!(stdin, "{}", serde_json::to_string(&request).expect("json")).expect("write");
    (child, stdin, stdout)
}

fn send(w: &mut impl Write, c: &impl serde::Serialize) {
    writeln!(w, "{}", serde_json::to_string(c).expect("json")).expect("write");
}

/// Reads reports from `r` until `last` matches one; all of them.
fn reports_until(r: &mut impl BufRead, last: impl Fn(&Report) -> bool) -> Vec<Report> {
    let mut out = Vec::new();
    for line in r.lines() {
        let report: Report = serde_json::from_str(&line.expect("a line")).expect("a report");
        let end = last(&report);
        out.push(report);
        if end {
            return out;
        }
    }
    panic!("the reports ended before the one awaited: {out:?}");
}

/// Waits (up to 20 s) for the starter to exit; its exit code.
fn exit_code(child: &mut Child) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return s.code();
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the starter did not exit");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs a job, lets its daemon go away, and answers the starter's call
/// with `answer`; the hello, the connection and the child.
fn orphan_then_answer(
    dir: &Path,
    script: &str,
    answer: &Attached,
) -> (Hello, BufReader<std::os::unix::net::UnixStream>, Child) {
    let listener = UnixListener::bind(dir.join("sock")).expect("bind");
    let (child, mut stdin, stdout) = starter(dir, script, 60);
    send(&mut stdin, &StarterCommand::Go);
    let mut out = BufReader::new(stdout);
    reports_until(&mut out, |r| matches!(r, Report::JobStarted { .. }));
    // The daemon goes away.
    drop(stdin);
    drop(out);
    let (stream, _) = listener.accept().expect("the starter calls");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut conn = BufReader::new(stream);
    let mut line = String::new();
    conn.read_line(&mut line).expect("hello");
    let request: roost::admin::Request = serde_json::from_str(&line).expect("an attach request");
    let roost::admin::Request::Attach { hello } = request else {
        panic!("not an attach: {line}");
    };
    assert_eq!(hello.pid, child.id());
    send(conn.get_mut(), answer);
    (hello, conn, child)
}

fn dir(name: &str) -> PathBuf {
    let d = temp(&format!("link-{name}"));
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

#[test]
fn a_starter_never_told_to_go_runs_nothing() {
    let d = dir("no-go");
    let (mut child, stdin, _stdout) = starter(&d, "touch ran", 1);
    // The daemon goes before its go; no daemon takes the starter again.
    drop(stdin);
    assert_eq!(exit_code(&mut child), Some(0));
    assert!(!d.join("ran").exists(), "the job ran");
    assert!(!d.join("exit.log").exists(), "JOB_EXIT ran");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_orphaned_starter_keeps_its_job_and_reports_everything_to_the_daemon_that_takes_it() {
    let d = dir("welcome");
    let (hello, mut conn, mut child) =
        orphan_then_answer(&d, "touch ran; sleep 2", &Attached::Welcome);
    assert!(hello.go);
    assert_eq!(hello.actor, "slot1/starter/9");
    assert_eq!(hello.protocol, PROTOCOL);
    assert!(hello.started > 0);
    assert!(
        matches!(hello.reports.first(), Some(Report::JobStarted { .. })),
        "{:?}",
        hello.reports
    );
    // The job ends under the new daemon: its end, JOB_EXIT, then done.
    let reports = reports_until(&mut conn, |r| *r == Report::Done);
    assert!(
        reports
            .iter()
            .any(|r| matches!(r, Report::JobExited { how, .. } if how == "exit")),
        "{reports:?}"
    );
    assert!(
        reports
            .iter()
            .any(|r| matches!(r, Report::Hook { hook, .. } if hook == "JOB_EXIT")),
        "{reports:?}"
    );
    // It waits for the goodbye.
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().expect("wait").is_none(), "left before bye");
    send(conn.get_mut(), &StarterCommand::Bye);
    assert_eq!(exit_code(&mut child), Some(0));
    assert!(d.join("ran").exists());
    assert_eq!(
        std::fs::read_to_string(d.join("exit.log")).unwrap_or_default(),
        "exit\n"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_starter_a_daemon_refuses_kills_its_job_and_tells_no_one() {
    let d = dir("abandon");
    let (_hello, _conn, mut child) = orphan_then_answer(
        &d,
        "sleep 60",
        &Attached::Abandon {
            reason: "its claim has ended".into(),
        },
    );
    assert_eq!(exit_code(&mut child), Some(0));
    assert!(!d.join("exit.log").exists(), "JOB_EXIT ran");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_starter_left_alone_past_its_orphan_timeout_evicts_its_job() {
    let d = dir("timeout");
    let (mut child, mut stdin, stdout) = starter(&d, "sleep 60", 1);
    send(&mut stdin, &StarterCommand::Go);
    let mut out = BufReader::new(stdout);
    reports_until(&mut out, |r| matches!(r, Report::JobStarted { .. }));
    drop(stdin);
    drop(out);
    assert_eq!(exit_code(&mut child), Some(0));
    assert_eq!(
        std::fs::read_to_string(d.join("exit.log")).unwrap_or_default(),
        "evict\n"
    );
    // What it reported with no daemon to hear it is left for the next.
    let file = roost::starter::protocol::leftover_file(&d.join("left"), "slot1/starter/9");
    let text = std::fs::read_to_string(&file).expect("the leftover file");
    let hello: Hello = serde_json::from_str(&text).expect("a Hello");
    assert_eq!(hello.actor, "slot1/starter/9");
    assert_eq!(hello.pid, child.id());
    assert!(hello.go);
    let kinds: Vec<String> = hello
        .reports
        .iter()
        .map(|r| match r {
            Report::JobStarted { .. } => "started".into(),
            Report::JobExited { how, .. } => format!("exited {how}"),
            Report::Hook { hook, .. } => hook.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["started", "exited evict", "JOB_EXIT"]);
    let _ = std::fs::remove_dir_all(&d);
}
