//! Spare starters: started ahead of need, handed the next job, told to go
//! when fewer are wanted, passed over when they died, and gone with the
//! daemon.

use std::path::Path;
use std::process::{Command, Stdio};

use super::daemon::{events, stop, wait_for};
use super::daemon_admin::{Node, records};

/// The daemon's children that are spare starters (`--spare` on their
/// command line).
fn spares_of(daemon: u32) -> Vec<u32> {
    let mut found: Vec<u32> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The parent is the field after the state, after the name's ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            ppid == Some(daemon) && is_spare(*pid)
        })
        .collect();
    found.sort_unstable();
    found
}

fn is_spare(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"--spare"))
}

/// The pid of the starter that ran the job of cluster `cluster`.
fn starter_of(dir: &Path, cluster: u32) -> u64 {
    let ev = events(&dir.join("spool/roost-events"));
    ev.iter()
        .filter_map(|e| e.pointer("/event/Starter/Spawned"))
        .find(|s| {
            s["job"]
                .as_str()
                .is_some_and(|j| j.starts_with(&format!("{cluster}.")))
        })
        .and_then(|s| s["pid"].as_u64())
        .unwrap_or_else(|| panic!("no starter for cluster {cluster}: {ev:?}"))
}

#[test]
fn spare_starters_take_the_next_jobs_and_go_with_the_daemon() {
    let node = Node::setup("spares", "ROOST_SPARE_STARTERS = 2\n");
    let daemon = node.start();
    // No job yet, no starter yet: a node that never runs a job keeps none.
    wait_for("the admin socket", || {
        node.roost(&["status"]).status.success()
    });
    assert_eq!(spares_of(daemon.id()), Vec::<u32>::new());

    node.job("first", 1, "0");
    wait_for("the first JOB_EXIT", || {
        records(&node.dir, "exit").len() == 1
    });
    wait_for("two spares", || spares_of(daemon.id()).len() == 2);
    let spares = spares_of(daemon.id());

    // The next job goes to one of them.
    node.job("second", 2, "0");
    wait_for("the second JOB_EXIT", || {
        records(&node.dir, "exit").len() == 2
    });
    let second = starter_of(&node.dir, 2);
    assert!(
        spares.iter().any(|&p| u64::from(p) == second),
        "starter {second} is not one of the spares {spares:?}"
    );
    assert!(
        node.start_log()
            .contains(&format!("pid={second} spare=true")),
        "{}",
        node.start_log()
    );

    // A spare that died while waiting is passed over.
    wait_for("two spares again", || spares_of(daemon.id()).len() == 2);
    let [dead, alive] = spares_of(daemon.id())[..] else {
        unreachable!("two spares")
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(dead).expect("pid")),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill a spare");
    node.job("third", 3, "0");
    wait_for("the third JOB_EXIT", || {
        records(&node.dir, "exit").len() == 3
    });
    let third = starter_of(&node.dir, 3);
    assert_ne!(third, u64::from(dead));
    let exits = records(&node.dir, "exit");
    assert!(
        exits.iter().all(|r| r.starts_with("argv: exit\n")),
        "{exits:?}"
    );
    wait_for("the dead spare passed over", || {
        node.start_log()
            .contains(&format!("A spare starter had exited. pid={dead}"))
    });
    assert_eq!(third, u64::from(alive));
    wait_for("two live spares", || spares_of(daemon.id()).len() == 2);

    // Fewer wanted after a reconfig: the extra one goes at the next job.
    let config = std::fs::read_to_string(&node.config).expect("config");
    std::fs::write(
        &node.config,
        config.replace("ROOST_SPARE_STARTERS = 2", "ROOST_SPARE_STARTERS = 1"),
    )
    .expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{o:?}");
    node.job("fourth", 4, "0");
    wait_for("the fourth JOB_EXIT", || {
        records(&node.dir, "exit").len() == 4
    });
    wait_for("one spare", || spares_of(daemon.id()).len() == 1);
    let last = spares_of(daemon.id());

    // They go with the daemon.
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    for pid in last {
        assert!(!is_spare(pid), "spare {pid} outlived the daemon");
    }
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn no_spare_starters_when_none_are_wanted() {
    let node = Node::setup("nospares", "ROOST_SPARE_STARTERS = 0\n");
    let daemon = node.start();
    node.job("only", 1, "0");
    wait_for("JOB_EXIT", || records(&node.dir, "exit").len() == 1);
    assert_eq!(spares_of(daemon.id()), Vec::<u32>::new());
    assert!(
        node.start_log().contains("spare=false"),
        "{}",
        node.start_log()
    );
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_spare_starter_told_to_go_goes_quietly_and_a_starter_without_a_request_says_so() {
    for (args, code, says) in [
        (&["--spare"][..], 0, ""),
        (&[][..], 1, "roost starter: no request on stdin\n"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_roost-starter"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("roost-starter runs");
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), says, "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn every_report_of_a_quick_starter_is_recorded_before_its_exit() {
    // A starter that runs a job of no length reports JobStarted,
    // JobExited and JOB_EXIT and exits at once; the daemon must record
    // each report before the exit, however its tasks are scheduled.
    let node = Node::setup("quick", "");
    let daemon = node.start();
    let jobs = 12;
    for cluster in 1..=jobs {
        node.job(&format!("q{cluster:02}"), cluster, "0");
    }
    wait_for("every JOB_EXIT", || {
        records(&node.dir, "exit").len() == jobs as usize
    });
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let ev = events(&node.dir.join("spool/roost-events"));
    let starters: Vec<&str> = ev
        .iter()
        .filter(|e| e.pointer("/event/Starter/Spawned").is_some())
        .filter_map(|e| e["actor"].as_str())
        .collect();
    assert_eq!(starters.len(), jobs as usize);
    for actor in starters {
        let kinds: Vec<String> = ev
            .iter()
            .filter(|e| e["actor"] == actor)
            .filter_map(|e| {
                let s = e["event"]["Starter"].as_object()?;
                let (kind, body) = s.iter().next()?;
                Some(match body["hook"].as_str() {
                    Some(h) => format!("{kind} {h}"),
                    None => kind.clone(),
                })
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "Spawned",
                "JobStarted",
                "JobExited",
                "Hook JOB_EXIT",
                "Exited"
            ],
            "{actor}"
        );
    }
    let _ = std::fs::remove_dir_all(&node.dir);
}
