//! Startd cron jobs against the real daemon: a health-check script whose
//! attribute START reads (the node stops taking jobs while it says the
//! node is sick, and takes them again), several ads from one run with
//! per-slot targeting, ads that survive a restart without a OneShot job
//! running again, a failing (prefixed), a hung and a garbled script, a
//! reconfig with and without `_RECONFIG_RERUN`, an `OnDemand` job run
//! through the admin socket, a running `WaitForExit` monitor a killed
//! daemon left behind, and a resource monitor (`_METRICS`) adding up per
//! device and measuring a running job; each run's events in the log.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::daemon::{events, stop, wait_for};
use super::daemon_admin::{Node, records, text};

/// A cron script `name` under the node's hooks (shell), readable and
/// runnable by the hooks' user.
fn script(node: &Node, name: &str, body: &str) -> PathBuf {
    let path = node.dir.join("hooks").join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// `roost status -af ATTR…`, one line per slot.
fn af(node: &Node, attrs: &[&str]) -> String {
    let mut args = vec!["status", "-af"];
    args.extend_from_slice(attrs);
    let o = node.roost(&args);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// How many runs a script that appends to `rec/<name>.runs` has made.
fn runs(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join("rec").join(format!("{name}.runs")))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The shell lines that count a run in `rec/<name>.runs`.
fn count_run(node: &Node, name: &str) -> String {
    format!("echo run >> {}/rec/{name}.runs", node.dir.display())
}

/// What `roost-log state` says of the node's log.
fn log_state(node: &Node) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_roost-log"))
        .args(["state", "--log"])
        .arg(node.dir.join("spool/roost-events"))
        .output()
        .expect("roost-log runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The log's `Cron` events of `actor`, as `Variant` names.
fn cron_events(node: &Node, actor: &str) -> Vec<(String, serde_json::Value)> {
    events(&node.dir.join("spool/roost-events"))
        .into_iter()
        .filter(|e| e["actor"] == actor)
        .filter_map(|e| {
            let c = e.pointer("/event/Cron")?.as_object()?.clone();
            let (k, v) = c.into_iter().next()?;
            Some((k, v))
        })
        .collect()
}

#[test]
fn a_health_check_script_stops_the_node_taking_jobs_and_lets_it_again() {
    let node = Node::setup("cron-health", "");
    let sick = node.dir.join("rec/sick");
    let check = script(
        &node,
        "health",
        &format!(
            "if [ -e {sick} ]; then echo 'NodeHealthy = false'; echo 'NodeProblem = \"disk full\"'; \
             else echo 'NodeHealthy = true'; fi",
            sick = sick.display()
        ),
    );
    let mut config = std::fs::read_to_string(&node.config).expect("config");
    config.push_str(&format!(
        "STARTD_CRON_JOBLIST = health\nSTARTD_CRON_HEALTH_EXECUTABLE = {}\n\
         STARTD_CRON_HEALTH_PERIOD = 1s\nSTART = NodeHealthy =?= True\n",
        check.display()
    ));
    std::fs::write(&node.config, config).expect("config");
    let daemon = node.start();
    wait_for("healthy in both slot ads", || {
        af(&node, &["NodeHealthy"]) == "true\ntrue\n"
    });
    node.job("before", 1, "0");
    wait_for("the job taken while healthy", || {
        records(&node.dir, "reply")
            .iter()
            .any(|r| r.starts_with("argv: accept\n"))
    });
    std::fs::write(&sick, "").expect("sick");
    wait_for("sick in both slot ads", || {
        af(&node, &["NodeHealthy", "NodeProblem"]) == "false disk full\nfalse disk full\n"
    });
    // A sick node does not even fetch: the job waits where it is. (A
    // fetch that started before the verdict may still be running: it is
    // given time to end, so it cannot take the job and reject it.)
    std::thread::sleep(std::time::Duration::from_millis(1500));
    node.job("during", 2, "0");
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        node.dir.join("jobs/during.job").exists(),
        "no job is taken while the node is sick"
    );
    std::fs::remove_file(&sick).expect("well again");
    // The later run's ad replaces the earlier whole: NodeProblem goes.
    wait_for("healthy again, the problem gone", || {
        af(&node, &["NodeHealthy", "NodeProblem"]) == "true undefined\ntrue undefined\n"
    });
    wait_for("the waiting job taken once the node is well", || {
        records(&node.dir, "reply")
            .iter()
            .any(|r| r.starts_with("argv: accept\n") && r.contains("ClusterId = 2"))
    });
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let ev = cron_events(&node, "cron.health");
    let kinds: Vec<&str> = ev.iter().map(|(k, _)| k.as_str()).collect();
    assert!(
        kinds.starts_with(&["Started", "Published", "Ended"]),
        "{kinds:?}"
    );
    let published: Vec<&serde_json::Value> = ev
        .iter()
        .filter(|(k, _)| k == "Published")
        .map(|(_, v)| v)
        .collect();
    assert!(
        published.iter().any(|p| p["ads"][0]["ad"]
            .as_str()
            .is_some_and(|a| a.contains("NodeProblem = \"disk full\""))),
        "{published:?}"
    );
    // The log viewer's replay shows the job and its last ad.
    let state = log_state(&node);
    assert!(
        state.contains("cron.health: ")
            && state
                .lines()
                .any(|l| l.starts_with("  health [ ") && l.contains("NodeHealthy = true")),
        "{state}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn several_ads_from_one_run_target_slots_and_survive_a_restart_without_a_rerun() {
    let node = Node::setup("cron-oneshot", "");
    let info = script(
        &node,
        "info",
        &format!(
            "{count}\necho 'Runs = 1'\necho \"Site = \\\"$($STARTD_CRON_CONFIG_VAL MY_SITE)\\\"\"\n\
             echo '-'\necho 'Gpu = \"ok\"'\necho 'SlotId = 2'\n\
             echo '- gpu'\necho 'Everywhere = \"yes\"'\necho 'SlotMergeConstraint = TARGET.SlotId >= 1'\n\
             echo '- all update:true'",
            count = count_run(&node, "info")
        ),
    );
    let mut config = std::fs::read_to_string(&node.config).expect("config");
    config.push_str(&format!(
        "STARTD_CRON_JOBLIST = info\nSTARTD_CRON_INFO_EXECUTABLE = {}\n\
         STARTD_CRON_INFO_MODE = OneShot\nMY_SITE = lab7\n",
        info.display()
    ));
    std::fs::write(&node.config, config).expect("config");
    let daemon = node.start();
    let want = "slot1@ 1 undefined yes\nslot2@ 1 ok yes\n";
    let seen = || {
        af(&node, &["Name", "Runs", "Gpu", "Everywhere"])
            .lines()
            .map(|l| {
                let (name, rest) = l.split_once(' ').unwrap_or((l, ""));
                format!("{}@ {rest}\n", name.split('@').next().unwrap_or(""))
            })
            .collect::<String>()
    };
    wait_for("the three ads in their slots", || seen() == want);
    // The script read the daemon's configuration with Roost's own
    // `condor_config_val` (STARTD_CRON_CONFIG_VAL).
    assert_eq!(af(&node, &["Site"]), "lab7\nlab7\n");
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    assert_eq!(runs(&node.dir, "info"), 1);

    // Restarted: the ads are back from the log at once; the OneShot job
    // does not run again.
    let daemon = node.start();
    wait_for("the admin socket", || {
        node.roost(&["status"]).status.success()
    });
    assert_eq!(seen(), want, "the ads of the last run, from the log");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(runs(&node.dir, "info"), 1, "a OneShot job is not run again");
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let published: Vec<String> = cron_events(&node, "cron.info")
        .into_iter()
        .filter(|(k, _)| k == "Published")
        .flat_map(|(_, v)| {
            v["ads"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|x| x["name"].as_str().unwrap_or("").to_string())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(published, ["info", "info.gpu", "info.all"]);
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn failing_hung_and_garbled_scripts_publish_what_they_can_and_are_killed_at_the_timeout() {
    let node = Node::setup("cron-bad", "");
    let fail = script(&node, "fail", "echo 'Failed = true'\nexit 3");
    let hang = script(
        &node,
        "hang",
        "echo 'Partial = 1'\necho '-'\nexec sleep 1000",
    );
    let garbled = script(
        &node,
        "garbled",
        "echo 'Good = 1'\necho 'this is not an attribute'\necho 'AlsoGood = \"x\"'",
    );
    let mut config = std::fs::read_to_string(&node.config).expect("config");
    config.push_str(&format!(
        "STARTD_CRON_JOBLIST = fail hang garbled\n\
         STARTD_CRON_FAIL_EXECUTABLE = {}\nSTARTD_CRON_FAIL_MODE = OneShot\nSTARTD_CRON_FAIL_PREFIX = Bad_\n\
         STARTD_CRON_HANG_EXECUTABLE = {}\nSTARTD_CRON_HANG_MODE = OneShot\nSTARTD_CRON_HANG_TIMEOUT = 2\n\
         STARTD_CRON_GARBLED_EXECUTABLE = {}\nSTARTD_CRON_GARBLED_MODE = OneShot\n",
        fail.display(),
        hang.display(),
        garbled.display()
    ));
    std::fs::write(&node.config, config).expect("config");
    let daemon = node.start();
    wait_for("every script's attributes", || {
        af(&node, &["Bad_Failed", "Partial", "Good", "AlsoGood"]) == "true 1 1 x\ntrue 1 1 x\n"
    });
    wait_for("the hung script killed at its timeout", || {
        cron_events(&node, "cron.hang")
            .iter()
            .any(|(k, v)| k == "Ended" && v["killed"] == "timeout")
    });
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let fail_end: Vec<serde_json::Value> = cron_events(&node, "cron.fail")
        .into_iter()
        .filter(|(k, _)| k == "Ended")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(fail_end[0]["exit"]["Code"], 3, "{fail_end:?}");
    let garbled: Vec<serde_json::Value> = cron_events(&node, "cron.garbled")
        .into_iter()
        .filter(|(k, _)| k == "Published")
        .map(|(_, v)| v)
        .collect();
    let problems = garbled[0]["problems"].to_string();
    assert!(
        problems.contains("line 2"),
        "the bad line named: {problems}"
    );
    let log = node.start_log();
    assert!(log.contains("Cron job output problem."), "{log}");
    assert!(log.contains("Cron job killed."), "{log}");
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_reconfig_reruns_only_oneshot_jobs_that_ask_and_on_demand_jobs_run_when_asked() {
    let node = Node::setup("cron-reconfig", "");
    let again = script(
        &node,
        "again",
        &format!("{}\necho 'Again = 1'", count_run(&node, "again")),
    );
    let once = script(
        &node,
        "once",
        &format!("{}\necho 'Once = 1'", count_run(&node, "once")),
    );
    let asked = script(
        &node,
        "asked",
        &format!("{}\necho 'Asked = 1'", count_run(&node, "asked")),
    );
    let mut config = std::fs::read_to_string(&node.config).expect("config");
    config.push_str(&format!(
        "STARTD_CRON_JOBLIST = again once asked\n\
         STARTD_CRON_AGAIN_EXECUTABLE = {}\nSTARTD_CRON_AGAIN_MODE = OneShot\nSTARTD_CRON_AGAIN_RECONFIG_RERUN = true\n\
         STARTD_CRON_ONCE_EXECUTABLE = {}\nSTARTD_CRON_ONCE_MODE = OneShot\n\
         STARTD_CRON_ASKED_EXECUTABLE = {}\nSTARTD_CRON_ASKED_MODE = OnDemand\n",
        again.display(),
        once.display(),
        asked.display()
    ));
    std::fs::write(&node.config, config).expect("config");
    let daemon = node.start();
    wait_for("both OneShot jobs ran", || {
        af(&node, &["Again", "Once"]) == "1 1\n1 1\n"
    });
    assert_eq!(runs(&node.dir, "asked"), 0, "OnDemand waits to be asked");
    let o = node.roost(&["reconfig"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("the rerun", || runs(&node.dir, "again") == 2);
    let o = node.roost(&["cron", "run", "asked"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("the job asked for", || af(&node, &["Asked"]) == "1\n1\n");
    let o = node.roost(&["cron", "run", "nosuch"]);
    assert!(!o.status.success(), "an unknown job is refused");
    assert!(text(&o).contains("nosuch"), "{}", text(&o));
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    assert_eq!(
        runs(&node.dir, "once"),
        1,
        "no rerun without _RECONFIG_RERUN"
    );
    assert_eq!(runs(&node.dir, "asked"), 1);
    let _ = std::fs::remove_dir_all(&node.dir);
}

/// Whether process `pid` is alive (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let (_, rest) = s.rsplit_once(')')?;
            rest.split_whitespace().next().map(|st| st != "Z")
        })
        .unwrap_or(false)
}

#[test]
fn a_script_a_killed_daemon_left_running_is_killed_at_the_restart_its_ads_kept_and_it_runs_again() {
    let node = Node::setup("cron-left", "");
    let pidfile = node.dir.join("rec/forever.pid");
    let forever = script(
        &node,
        "forever",
        &format!(
            "echo $$ > {}\necho 'Forever = 1'\necho '-'\nexec sleep 1000",
            pidfile.display()
        ),
    );
    let mut config = std::fs::read_to_string(&node.config).expect("config");
    config.push_str(&format!(
        "STARTD_CRON_JOBLIST = forever\nSTARTD_CRON_FOREVER_EXECUTABLE = {}\n\
         STARTD_CRON_FOREVER_MODE = WaitForExit\nSTARTD_CRON_FOREVER_PERIOD = 1h\n",
        forever.display()
    ));
    std::fs::write(&node.config, config).expect("config");
    let daemon = node.start();
    // A WaitForExit job publishes each ad as it prints it, while it runs.
    wait_for("the running job's ad", || {
        af(&node, &["Forever"]) == "1\n1\n"
    });
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("pid")
        .trim()
        .parse()
        .expect("a pid");
    // The ad is recorded, not flushed on its own: flushed within 50 ms.
    std::thread::sleep(std::time::Duration::from_millis(300));
    daemon.kill();
    assert!(alive(pid), "the script outlives the daemon's SIGKILL");
    let daemon = node.start();
    wait_for("the script killed by the next run", || !alive(pid));
    wait_for("the admin socket", || {
        node.roost(&["status"]).status.success()
    });
    assert_eq!(af(&node, &["Forever"]), "1\n1\n", "its ad, from the log");
    // A WaitForExit monitor is started again at once.
    wait_for("the monitor running again", || {
        std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
            .is_some_and(|p| p != pid && alive(p))
    });
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");
    let ended: Vec<serde_json::Value> = cron_events(&node, "cron.forever")
        .into_iter()
        .filter(|(k, _)| k == "Ended")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(
        ended[0]["killed"], "left running by the last run",
        "{ended:?}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}

#[test]
fn a_resource_monitor_adds_up_per_device_and_measures_the_running_job() {
    let node = Node::setup("cron-metrics", "MACHINE_RESOURCE_SQUIDs = SQUID0, SQUID1\n");
    let mut body = String::new();
    for (dev, secs, peak) in [("SQUID0", 1, 51), ("SQUID1", 4, 42)] {
        body.push_str(&format!(
            "echo 'SlotMergeConstraint = StringListMember(\"{dev}\", AssignedSQUIDs)'\n\
             echo 'UptimeSQUIDsSeconds = {secs}'\necho 'UptimeSQUIDsMemoryPeakUsage = {peak}'\n\
             echo '- {dev}'\n"
        ));
    }
    let monitor = script(&node, "monitor", &body);
    let mut config = std::fs::read_to_string(&node.config).expect("config");
    config.push_str(&format!(
        "STARTD_CRON_JOBLIST = SQUIDs_MONITOR\nSTARTD_CRON_SQUIDs_MONITOR_EXECUTABLE = {}\n\
         STARTD_CRON_SQUIDs_MONITOR_PERIOD = 1\n\
         STARTD_CRON_SQUIDs_MONITOR_METRICS = SUM:SQUIDs, PEAK:SQUIDsMemory\n",
        monitor.display()
    ));
    std::fs::write(&node.config, config).expect("config");
    let uptimes = |node: &Node| -> Vec<f64> {
        (af(node, &["UptimeSQUIDsSeconds"]).lines())
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    let daemon = node.start();
    wait_for("two reports in each slot", || {
        uptimes(&node).first().is_some_and(|u| *u >= 2.0)
    });
    // Each slot holds one device; a run adds its device's seconds, so slot2
    // is always four times slot1. The raw reports are not merged.
    let u = uptimes(&node);
    assert_eq!(u.len(), 2, "{u:?}");
    assert!((u[1] - 4.0 * u[0]).abs() < 1e-9, "{u:?}");
    let peaks = af(
        &node,
        &[
            "AssignedSQUIDs",
            "DeviceSQUIDsMemoryPeakUsage == 51",
            "DeviceSQUIDsMemoryPeakUsage == 42",
            "UptimeSQUIDsMemoryPeakUsage",
        ],
    );
    assert_eq!(
        peaks,
        "SQUID0 true false undefined\nSQUID1 false true undefined\n"
    );
    node.job("busy", 1, "5");
    wait_for("the job's average use on its slot", || {
        af(&node, &["SQUIDsAverageUsage", "SQUIDsMemoryUsage"])
            .lines()
            .any(|l| !l.starts_with("undefined"))
    });
    let line = af(&node, &["Name", "SQUIDsAverageUsage", "SQUIDsMemoryUsage"]);
    let busy: Vec<&str> = (line.lines())
        .find(|l| !l.contains("undefined"))
        .expect("a busy slot")
        .split_whitespace()
        .collect();
    let (avg, peak): (f64, f64) = (
        busy[1].parse().expect("avg"),
        busy[2].parse().expect("peak"),
    );
    let (per_run, want_peak) = if busy[0].starts_with("slot1") {
        (1.0, 51.0)
    } else {
        (4.0, 42.0)
    };
    assert!(avg > 0.0 && avg <= per_run * 2.0, "{line}");
    assert_eq!(peak, want_peak, "{line}");
    // What the monitor added up survives a restart (from the log).
    let before = uptimes(&node);
    assert!(stop(daemon).success());
    let daemon = node.start();
    wait_for("the admin socket", || {
        node.roost(&["status"]).status.success()
    });
    let after = uptimes(&node);
    assert!(
        after.len() == 2 && after[0] >= before[0],
        "{before:?} then {after:?}"
    );
    assert!(stop(daemon).success());
    let usage: Vec<serde_json::Value> = cron_events(&node, "cron.SQUIDs_MONITOR")
        .into_iter()
        .filter(|(k, _)| k == "Published")
        .map(|(_, v)| v["usage"].clone())
        .collect();
    assert!(
        usage.iter().any(|u| u[0]["sums"][0][0] == "SQUIDs"),
        "{usage:?}"
    );
    let state = log_state(&node);
    assert!(
        (state.lines()).any(|l| l.starts_with("  slot2: UptimeSQUIDsSeconds = ")),
        "{state}"
    );
    let _ = std::fs::remove_dir_all(&node.dir);
}
