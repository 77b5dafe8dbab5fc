//! Backfill on the real daemon: with `ENABLE_BACKFILL`, idle slots start
//! the one backfill client (a BOINC stand-in script run by a starter as
//! `BOINC_Owner`), a fetched job takes its slot from backfill while the
//! client keeps working for the other slot, and when the policy evicts
//! backfill the client is asked to leave with its `KillSig`; a shutdown
//! waits for it to go.

use std::os::unix::fs::PermissionsExt;

use super::daemon::{count, events, stop, wait_for};
use super::daemon_admin::{Node, records};

/// A node whose config enables backfill with a BOINC stand-in that logs
/// its start (uid, directory, arguments) and its SIGTERM to
/// `boinc/client.log`; returns the node, its config text and that log.
fn backfill_node(name: &str) -> (Node, String, std::path::PathBuf) {
    // The node's config is written first; the client's paths go in after.
    let node = Node::setup(name, "");
    let boinc = node.dir.join("boinc");
    std::fs::create_dir_all(&boinc).expect("mkdir");
    std::fs::set_permissions(&boinc, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let client = node.dir.join("hooks/boinc_client");
    let log = boinc.join("client.log");
    std::fs::write(
        &client,
        format!(
            "#!/bin/sh\necho \"started $(id -u) $(pwd) $*\" >> {log}\n\
             trap 'echo term >> {log}; exit 0' TERM\nwhile :; do sleep 0.1; done\n",
            log = log.display()
        ),
    )
    .expect("client");
    std::fs::set_permissions(&client, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let backfill = format!(
        "ENABLE_BACKFILL = True\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = True\n\
         EVICT_BACKFILL = False\nBOINC_Executable = {client}\nBOINC_InitialDir = {boinc}\n\
         BOINC_Universe = vanilla\nBOINC_Owner = nobody\n\
         BOINC_Arguments = --attach_project http://boinc.example key\n\
         STARTER_DEFAULT_JOB_HOOK_KEYWORD = T\n",
        client = client.display(),
        boinc = boinc.display()
    );
    let mut config = std::fs::read_to_string(&node.config).expect("config");
    config.push_str(&backfill);
    std::fs::write(&node.config, &config).expect("config");
    (node, config, log)
}

#[test]
fn idle_slots_share_one_backfill_client_that_gives_way_to_work() {
    let (node, mut config, log) = backfill_node("backfill");
    let boinc = node.dir.join("boinc");
    let daemon = node.start();
    let lines = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_for("both slots in Backfill/Busy", || {
        node.states().matches("Backfill Busy").count() == 2
    });
    let started = lines();
    assert_eq!(
        started.matches("started").count(),
        1,
        "one client: {started}"
    );
    assert!(
        started.contains(&format!(
            "started 65534 {} --attach_project http://boinc.example key",
            boinc.display()
        )),
        "runs as BOINC_Owner in BOINC_InitialDir with BOINC_Arguments: {started}"
    );

    // A fetched job takes one slot; the client keeps working for the other.
    node.job("a", 1, "30");
    wait_for("the job's slot Claimed/Busy", || {
        let s = node.states();
        s.contains("Claimed Busy") && s.contains("Backfill Busy")
    });
    assert!(!lines().contains("term"), "{}", lines());

    // The policy evicts backfill: the client is asked to leave.
    config.push_str("START_BACKFILL = False\nEVICT_BACKFILL = True\n");
    std::fs::write(&node.config, &config).expect("config");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    wait_for("the client got its KillSig", || lines().contains("term"));
    wait_for("no slot left in Backfill", || {
        !node.states().contains("Backfill")
    });
    assert_eq!(lines().matches("started").count(), 1, "{}", lines());
    node.vacate_fast_and_stop(daemon);

    let ev = events(&node.dir.join("spool/roost-events"));
    let transitions = |n: u64| {
        count(&ev, "/event/Slot/ActivityChanged/transition", |v| {
            v.as_u64() == Some(n)
        })
    };
    for n in [7, 26, 28, 29, 30] {
        assert!(transitions(n) >= 1, "transition {n} recorded");
    }
    assert_eq!(
        count(&ev, "/event/Daemon/Backfill/what", |v| v
            .as_str()
            .is_some_and(|s| s.starts_with("client started"))),
        1
    );
    assert_eq!(
        count(&ev, "/event/Daemon/Backfill/what", |v| v == "client exited"),
        1
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn shutdown_waits_for_the_backfill_client_to_leave() {
    let (node, _, log) = backfill_node("backfill-off");
    let daemon = node.start();
    wait_for("both slots in Backfill/Busy", || {
        node.states().matches("Backfill Busy").count() == 2
    });
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        lines.contains("term"),
        "the client got its KillSig: {lines}"
    );
    // Not a fetched job: the starter hooks (here the default keyword's
    // JOB_EXIT) never hear of the client.
    assert!(records(&node.dir, "exit").is_empty());
    // The daemon saw the client go before it stopped.
    let ev = events(&node.dir.join("spool/roost-events"));
    let at = |what: &str| {
        ev.iter().position(|e| {
            e.pointer("/event/Daemon/Backfill/what")
                .is_some_and(|v| v == what)
                || e.pointer("/event/Daemon/Stopped/why")
                    .is_some_and(|v| v.as_str().is_some_and(|s| s.starts_with(what)))
        })
    };
    let exited = at("client exited").expect("client exit recorded");
    let stopped = at("shutdown").expect("daemon stop recorded");
    assert!(
        exited < stopped,
        "client exit at {exited}, stop at {stopped}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

/// The backfill client's starter killed: the client is killed with it and
/// the manager hears that the client is gone — the slots go back to
/// Backfill/Idle to want it again — instead of waiting for it forever.
#[test]
fn a_lost_backfill_starter_frees_the_slots() {
    let (node, _config, _log) = backfill_node("backfill-lost");
    let daemon = node.start();
    wait_for("both slots in Backfill/Busy", || {
        node.states().matches("Backfill Busy").count() == 2
    });
    let client = node.dir.join("hooks/boinc_client");
    let client = client.to_string_lossy().into_owned();
    let client_pid = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&client))
        })
        .expect("the client runs")
        .to_string();
    super::daemon_admin::kill_parent(&client_pid);
    wait_for("the client to be gone", || {
        super::daemon_admin::gone(&client_pid)
    });
    wait_for("both slots in Backfill/Idle", || {
        node.states().matches("Backfill Idle").count() == 2
    });
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let ev = events(&node.dir.join("spool/roost-events"));
    assert_eq!(
        count(&ev, "/event/Daemon/Backfill/what", |v| v == "client exited"),
        1
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}
