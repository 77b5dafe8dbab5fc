//! `roost policy simulate` driven as an administrator would: the shipped
//! example scenarios, determinism, and clear errors for bad scenarios.

use std::path::PathBuf;
use std::process::{Command, Output};

fn simulate(path: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roost"))
        .args(["policy", "simulate"])
        .arg(path)
        .output()
        .expect("roost runs")
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/policies")
        .join(name)
}

/// Runs an example scenario, which must succeed.
fn run(name: &str) -> Output {
    let out = simulate(&example(name));
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn transitions(lines: &[serde_json::Value]) -> Vec<(i64, String, String)> {
    lines
        .iter()
        .filter(|l| l.get("to").is_some())
        .map(|l| {
            (
                l["t"].as_i64().unwrap_or(-1),
                l["transition"].as_str().unwrap_or("-").to_string(),
                format!(
                    "{}/{}",
                    l["to"][0].as_str().unwrap_or(""),
                    l["to"][1].as_str().unwrap_or("")
                ),
            )
        })
        .collect()
}

/// Checks that each (time, transition number, destination) occurred.
fn expect(t: &[(i64, String, String)], want: &[(i64, &str, &str)]) {
    for (time, n, to) in want {
        assert!(
            t.contains(&(*time, n.to_string(), to.to_string())),
            "missing {time} {n} {to} in {t:?}"
        );
    }
}

#[test]
fn desktop_suspends_then_vacates_then_kills() {
    let out = run("desktop.toml");
    let l = lines(&out);
    let t = transitions(&l);
    let want = [
        (600, "14", "Claimed/Suspended"),
        (1205, "16", "Claimed/Retiring"),
        (1205, "18", "Preempting/Vacating"),
        (1805, "21", "Preempting/Killing"),
        (1805, "25", "Owner/Idle"),
    ];
    expect(&t, &want);
    let effects: Vec<(i64, &str)> = l
        .iter()
        .filter_map(|x| Some((x["t"].as_i64()?, x.get("effect")?.as_str()?)))
        .filter(|(_, e)| *e != "fetch_work")
        .collect();
    assert_eq!(
        effects,
        [
            (10, "reply_fetch"),
            (10, "spawn_starter"),
            (600, "suspend"),
            (1205, "continue"),
            (1205, "soft_kill"),
            (1805, "hard_kill"),
            (1805, "evict_claim"),
        ]
    );
    assert_eq!(
        out.stdout,
        simulate(&example("desktop.toml")).stdout,
        "same scenario, same output"
    );
}

#[test]
fn rank_preemption_keeps_the_better_job() {
    let out = run("rank-preemption.toml");
    let t = transitions(&lines(&out));
    expect(
        &t,
        &[
            (150, "13", "Claimed/Retiring"),
            (400, "23", "Claimed/Idle"),
            (400, "11", "Claimed/Busy"),
            // FetchWorkDelay's 30 s count from the fetch after dave's job
            // took over at 400: carol's job is fetched at 820.
            (820, "11", "Claimed/Busy"),
        ],
    );
    // While bob's job retires with dave's claim waiting, any job fetched
    // would be rejected: the slot does not fetch (HTCondor does).
    let fetch_times: Vec<i64> = lines(&out)
        .iter()
        .filter(|l| l["effect"] == "fetch_work")
        .filter_map(|l| l["t"].as_i64())
        .collect();
    assert!(fetch_times.iter().any(|t| *t < 150), "{fetch_times:?}");
    assert!(
        !fetch_times.iter().any(|t| (151..400).contains(t)),
        "{fetch_times:?}"
    );
}

#[test]
fn bad_scenarios_say_what_is_wrong() {
    let dir = std::env::temp_dir().join(format!("roost-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    for (body, want) in [
        (
            "duration = 10\n",
            "give exactly one of `config` and `config_file`",
        ),
        (
            "duration = 10\nconfig = \"\"\n[[event]]\nt = 5\ncommand = \"explode\"\n",
            "event 1 (t = 5): unknown command",
        ),
        (
            "duration = 10\nconfig = \"\"\n[[event]]\nt = 5\noffer = \"A = (\"\n",
            "the offered job ad does not parse",
        ),
        ("duration = 10\nconfig = \"START = (\"\n", "START"),
        (
            "duration = 10\nconfig = \"NUM_SLOTS_TYPE_1 = 3\\nSLOT_TYPE_1 = cpus=2\"\n",
            "cannot create slot",
        ),
        (
            "duration = 10\nconfig = \"\"\n[[event]]\nt = 1\nset = { A = 1 }\nexit = { slot = \"slot1\" }\n",
            "exactly one of",
        ),
        (
            "duration = 10\nconfig_file = \"missing.config\"\n",
            "cannot read config_file",
        ),
        (
            "duration = 10\nconfig = \"\"\n[[event]]\nt = 1\ncommand = \"vacate\"\nconfig = \"START = True\"\n",
            "goes only with command = \"reconfig\"",
        ),
    ] {
        let path = dir.join("s.toml");
        std::fs::write(&path, body).expect("write");
        let out = simulate(&path);
        assert!(!out.status.success(), "{body}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{body}: {err}");
    }
    std::fs::write(
        dir.join("site.config"),
        "STARTD_JOB_HOOK_KEYWORD = SIM\nRunBenchmarks = False\n",
    )
    .expect("write");
    let path = dir.join("ok.toml");
    std::fs::write(&path, "duration = 0\nconfig_file = \"site.config\"\n").expect("write");
    let out = simulate(&path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("fetch_work"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn partitionable_slots_carve_reuse_and_return_resources() {
    let out = run("partitionable.toml");
    let l = lines(&out);
    let effect = |name: &str| -> Vec<(i64, String)> {
        l.iter()
            .filter(|x| x["effect"] == name)
            .map(|x| {
                (
                    x["t"].as_i64().unwrap_or(-1),
                    x["slot"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        effect("dynamic_slot_created"),
        [
            (20, "slot1_1@sim".to_string()),
            (40, "slot1_2@sim".to_string())
        ]
    );
    assert_eq!(
        effect("dynamic_slot_deleted"),
        [(400, "slot1_2@sim".to_string())]
    );
    // The third job (2 CPUs) did not fit beside the first two; it runs when
    // slot1_1 (2 CPUs) frees, reusing that dynamic slot.
    assert!(effect("spawn_starter").contains(&(200, "slot1_1@sim".to_string())));
}

#[test]
fn graceful_draining_as_a_real_node_does() {
    let out = run("draining.toml");
    let t = transitions(&lines(&out));
    expect(
        &t,
        &[
            (100, "13", "Claimed/Retiring"),
            (100, "37", "Drained/Retiring"),
            (360, "22", "Owner/Idle"),
            (360, "37", "Drained/Retiring"),
            (360, "33", "Drained/Idle"),
            (700, "35", "Owner/Idle"),
            (700, "1", "Unclaimed/Idle"),
        ],
    );
}

#[test]
fn shutdown_modes_wait_for_or_kill_the_job_then_exit() {
    let dir = std::env::temp_dir().join(format!("roost-sim-off-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    for (how, exit_at, kill) in [
        ("peaceful", 300, None),
        ("graceful", 160, Some("soft_kill")),
        ("fast", 100, Some("hard_kill")),
    ] {
        let body = format!(
            "duration = 1000\nconfig = \"\"\"\nSTARTD_JOB_HOOK_KEYWORD = SIM\nFetchWorkDelay = 10\n\
             NUM_SLOTS = 1\nSLOT_TYPE_0_PARTITIONABLE = False\nMaxJobRetirementTime = 160\nMachineMaxVacateTime = 0\nRunBenchmarks = False\n\"\"\"\n\
             [[event]]\nt = 0\noffer = \"SimRunTime = 300\\nJobUniverse = 5\"\n\
             [[event]]\nt = 100\ncommand = \"off {how}\"\n"
        );
        let path = dir.join(format!("{how}.toml"));
        std::fs::write(&path, body).expect("write");
        let out = simulate(&path);
        assert!(
            out.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let l = lines(&out);
        let last = l.last().expect("output");
        assert_eq!(last["effect"], "exit_daemon", "{how}");
        assert_eq!(last["t"], exit_at, "{how}: {l:?}");
        let killed = l
            .iter()
            .find_map(|x| x["effect"].as_str().filter(|e| e.ends_with("_kill")));
        assert_eq!(killed, kill, "{how}");
        let fetches_after_off = l
            .iter()
            .filter(|x| x["effect"] == "fetch_work" && x["t"].as_i64().unwrap_or(0) > 100)
            .count();
        assert_eq!(
            fetches_after_off, 0,
            "{how}: nothing is fetched during shutdown"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_machine_hibernates_only_when_every_slot_agrees() {
    let dir = std::env::temp_dir().join(format!("roost-sim-hib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let scenario = |extra: &str| {
        format!(
            "duration = 4000\nconfig = \"\"\"\nNUM_SLOTS = 2\nSLOT_TYPE_0_PARTITIONABLE = False\n\
             HIBERNATE = ifThenElse(KeyboardIdle > 3600 && SlotID =!= {extra}, \"RAM\", \"NONE\")\n\
             HIBERNATE_CHECK_INTERVAL = 300\n\"\"\"\n[machine]\nCpus = 2\nKeyboardIdle = 0\n"
        )
    };
    for (veto, want) in [("99", Some(3900)), ("2", None)] {
        let path = dir.join("h.toml");
        std::fs::write(&path, scenario(veto)).expect("write");
        let out = simulate(&path);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let hib: Vec<i64> = lines(&out)
            .iter()
            .filter(|x| x["effect"] == "hibernate")
            .filter_map(|x| x["t"].as_i64())
            .collect();
        assert_eq!(hib.first().copied(), want, "slot {veto} says NONE: {hib:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn external_claims_are_granted_preempted_and_expire() {
    let out = run("claims.toml");
    let l = lines(&out);
    let replies: Vec<(i64, bool)> = l
        .iter()
        .filter(|x| x["effect"] == "reply_claim")
        .map(|x| {
            (
                x["t"].as_i64().unwrap_or(-1),
                x["accept"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(replies, [(10, true), (20, false), (50, true)]);
    let t = transitions(&l);
    expect(
        &t,
        &[
            (10, "5", "Claimed/Idle"),
            (50, "23", "Claimed/Idle"),
            (80, "12", "Claimed/Idle"),
            (355, "10", "Preempting/Vacating"),
        ],
    );
}

#[test]
fn benchmarks_run_at_start_and_again_when_the_policy_says() {
    let out = lines(&run("benchmarks.toml"));
    let t = transitions(&out);
    expect(
        &t,
        &[
            (0, "3", "Unclaimed/Benchmarking"),
            (20, "4", "Unclaimed/Idle"),
            // An hour after the last ones, at the next evaluation
            // (UPDATE_INTERVAL from the return to Idle).
            (3620, "3", "Unclaimed/Benchmarking"),
            (3640, "4", "Unclaimed/Idle"),
        ],
    );
    let benchmark_at: Vec<i64> = out
        .iter()
        .filter(|l| l["effect"] == "benchmark")
        .filter_map(|l| l["t"].as_i64())
        .collect();
    assert_eq!(benchmark_at, [0, 3620, 7280]);
    // No fetch while benchmarking, and none running when they start.
    let mut benchmarking = false;
    for l in &out {
        if l.get("to").is_some() {
            benchmarking = l["to"][1] == "Benchmarking";
        }
        assert!(
            !(benchmarking && l["effect"] == "fetch_work"),
            "fetched while benchmarking: {l}"
        );
    }
}

#[test]
fn reconfig_gives_every_slot_its_new_policy_or_refuses_it_whole() {
    let out = lines(&run("reconfig.toml"));
    let reconfigs: Vec<(i64, bool)> = out
        .iter()
        .filter(|l| l["effect"] == "reconfig")
        .map(|l| (l["t"].as_i64().unwrap_or(-1), l["ok"] == true))
        .collect();
    assert_eq!(reconfigs, [(100, false), (200, true)]);
    let refused = out
        .iter()
        .find(|l| l["effect"] == "reconfig" && l["ok"] == false)
        .expect("the refused one");
    assert!(
        refused["error"].as_str().unwrap_or("").contains("START"),
        "{refused}"
    );
    // Closed until the good edit, then the waiting job is taken at once.
    let t = transitions(&out);
    expect(
        &t,
        &[
            (0, "1", "Unclaimed/Idle"),
            (200, "5", "Claimed/Idle"),
            (200, "11", "Claimed/Busy"),
        ],
    );
    assert!(
        t.iter()
            .all(|(at, _, to)| *at >= 200 || !to.starts_with("Claimed")),
        "{t:?}"
    );
}

#[test]
fn a_match_is_claimed_and_its_lease_expires_when_the_schedd_goes() {
    let l = lines(&run("matched.toml"));
    let t = transitions(&l);
    expect(
        &t,
        &[
            (10, "6", "Matched/Idle"),
            (20, "9", "Claimed/Idle"),
            (20, "11", "Claimed/Busy"),
            // The last keep-alive came at 260; the lease is 120 s.
            (380, "-", "Preempting/Killing"),
            (380, "25", "Owner/Idle"),
            (450, "6", "Matched/Idle"),
            (570, "8", "Owner/Idle"),
        ],
    );
    let killed: Vec<i64> = l
        .iter()
        .filter(|x| x["effect"] == "hard_kill")
        .filter_map(|x| x["t"].as_i64())
        .collect();
    assert_eq!(killed, [380]);
    let why: Vec<&str> = l.iter().filter_map(|x| x["why"].as_str()).collect();
    assert!(why.contains(&"claim lease expired"), "{why:?}");
    assert!(why.contains(&"MATCH_TIMEOUT"), "{why:?}");
}

#[test]
fn backfill_runs_while_idle_and_gives_way_to_owner_claim_and_match() {
    let l = lines(&run("backfill.toml"));
    let t = transitions(&l);
    expect(
        &t,
        &[
            (360, "7", "Backfill/Idle"),
            (360, "26", "Backfill/Busy"),
            (1000, "27", "Backfill/Idle"),
            (1000, "26", "Backfill/Busy"),
            (1500, "28", "Backfill/Killing"),
            (1500, "29", "Backfill/Idle"),
            (1500, "30", "Owner/Idle"),
            (3000, "28", "Backfill/Killing"),
            (3000, "31", "Claimed/Idle"),
            (3000, "11", "Claimed/Busy"),
            (4500, "32", "Matched/Idle"),
            (4620, "8", "Owner/Idle"),
        ],
    );
    // No backfill while the owner is at the keyboard (KeyboardIdle < 15 min).
    assert!(
        !t.iter()
            .any(|(at, n, _)| n == "7" && (1500..2400).contains(at))
    );
    let effects = |name: &str| -> Vec<i64> {
        l.iter()
            .filter(|x| x["effect"] == name)
            .filter_map(|x| x["t"].as_i64())
            .collect()
    };
    // 2405: after the client left at 1500 the slot keeps the evaluation
    // it had set for 5 s later (POLLING_INTERVAL in Backfill), as the
    // daemon's slot actor does, so it evaluates at 1505 + 60 k; the first
    // after KeyboardIdle passes 15 minutes (2401) starts backfill.
    assert_eq!(effects("start_backfill"), [360, 1000, 2405, 3965, 4980]);
    assert_eq!(effects("kill_backfill"), [1500, 3000, 4500]);
}

#[test]
fn a_match_needs_a_job_ad_that_parses() {
    let dir = std::env::temp_dir().join(format!("roost-sim-match-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "duration = 10\nconfig = \"\"\n[[event]]\nt = 1\nmatch = \"Owner = \"\n",
    )
    .expect("scenario");
    let out = simulate(&path);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("event 1 (t = 1): the matched job ad does not parse"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Before any benchmark has run the machine ad says `LastBenchmark = 0`,
/// as the daemon's does, so HTCondor's default `RunBenchmarks`
/// (`LastBenchmark == 0`) measures the machine at start-up in simulation
/// too, with no `LastBenchmark` in the scenario.
#[test]
fn the_default_run_benchmarks_fires_at_start_without_a_last_benchmark_given() {
    let dir = std::env::temp_dir().join(format!("roost-sim-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("scenario.toml");
    std::fs::write(
        &path,
        "duration = 100\nconfig = \"\"\"\nSTARTD_JOB_HOOK_KEYWORD = SIM\nNUM_SLOTS = 1\n\
         SLOT_TYPE_0_PARTITIONABLE = False\n\"\"\"\n\n[machine]\nCpus = 1\nMemory = 4096\n\
         KeyboardIdle = 3600\nLoadAvg = 0.0\nCondorLoadAvg = 0.0\nSimBenchmarkTime = 20\n",
    )
    .expect("scenario");
    let out = simulate(&path);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = lines(&out);
    let benchmarks: Vec<i64> = out
        .iter()
        .filter(|l| l["effect"] == "benchmark")
        .filter_map(|l| l["t"].as_i64())
        .collect();
    assert_eq!(benchmarks, [0], "{out:?}");
    assert!(
        out.iter()
            .any(|l| l["to"][1] == "Benchmarking" && l["transition"] == "3"),
        "{out:?}"
    );
}
