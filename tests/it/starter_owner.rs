//! The starter program driven directly, as the daemon drives it: one JSON
//! request on stdin, reports on stdout. Here: whom a job runs as when the
//! daemon has already looked its Owner up.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use roost::starter::protocol::{Account, Report, Request, StarterHooks};

use super::daemon::temp;

/// Runs the starter on a job that writes its uid to `uid` in `dir`, owned
/// by `owner`, with the daemon's lookup `account`; the reports.
fn run(dir: &Path, owner: &str, account: Option<Account>) -> Vec<Report> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir.join("execute")).expect("mkdir");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let request = Request {
        slot: "slot1".into(),
        job: format!(
            "Cmd = \"/bin/sh\"\nArguments = \"-c 'id -u > uid'\"\nIwd = \"{}\"\nOwner = \"{owner}\"\n",
            dir.display()
        ),
        machine: String::new(),
        execute: dir.join("execute"),
        hooks: StarterHooks::default(),
        device_env: Vec::new(),
        update_intervals: (8, 300),
        hook_env: roost::spawn::Environment::default(),
        stdout_limit: 10240,
        vacate_grace: 0,
        cgroup_base: None,
        cgroup_home: None,
        lost: None,
        owner: account,
        debug_log: false,
        // A daemon of the first protocol: no go, no goodbye.
        protocol: 1,
        actor: String::new(),
        reattach: None,
        orphan_timeout: 0,
        leftover: None,
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_roost-starter"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the starter starts");
    // The starter's stdin stays open while the job runs (its end would
    // mean the daemon has gone): closed once the job has ended.
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(
        stdin,
        "{}",
        serde_json::to_string(&request).expect("request")
    )
    .expect("write");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut reports = Vec::new();
    for line in stdout.lines() {
        let r: Report = serde_json::from_str(&line.expect("a line")).expect("a report");
        let end = matches!(r, Report::JobExited { .. } | Report::NotStarted { .. });
        reports.push(r);
        if end {
            break;
        }
    }
    drop(stdin);
    child.wait().expect("the starter ends");
    reports
}

fn account(name: &str, uid: u32) -> Option<Account> {
    Some(Account {
        name: name.into(),
        uid,
        gid: uid,
    })
}

fn not_started(reports: &[Report]) -> Option<String> {
    reports.iter().find_map(|r| match r {
        Report::NotStarted { reason } => Some(reason.clone()),
        _ => None,
    })
}

#[test]
fn a_job_runs_as_the_account_the_daemon_looked_up() {
    if !nix::unistd::Uid::effective().is_root() {
        return; // Only root runs jobs as their Owner.
    }
    // A user only the daemon's directory knows: not in this machine's
    // passwd file, so the starter could not find it itself.
    let dir: PathBuf = temp("owner-known");
    let reports = run(&dir, "roost-ldap-only", account("roost-ldap-only", 65_533));
    assert_eq!(not_started(&reports), None, "{reports:?}");
    let uid = std::fs::read_to_string(dir.join("uid"))
        .unwrap_or_else(|e| panic!("the job wrote no uid ({e}): {reports:?}"));
    assert_eq!(uid.trim(), "65533");
    let _ = std::fs::remove_dir_all(&dir);

    // Without the daemon's lookup the starter looks the name up itself.
    let dir = temp("owner-unknown");
    let reports = run(&dir, "roost-ldap-only", None);
    let reason = not_started(&reports).expect("not started");
    assert!(reason.contains("roost-ldap-only"), "{reason}");
    assert!(!dir.join("uid").exists());
    let _ = std::fs::remove_dir_all(&dir);

    // An account for another name is not used; nor is a root account.
    let dir = temp("owner-other");
    let reports = run(&dir, "roost-ldap-only", account("someone-else", 65_533));
    assert!(not_started(&reports).is_some(), "{reports:?}");
    let _ = std::fs::remove_dir_all(&dir);
    let dir = temp("owner-root");
    let reports = run(&dir, "toor", account("toor", 0));
    let reason = not_started(&reports).expect("not started");
    assert!(reason.contains("root"), "{reason}");
    assert!(!dir.join("uid").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
