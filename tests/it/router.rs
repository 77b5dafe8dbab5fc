//! The job router inside `roost schedd`, end to end: a job submitted,
//! claimed by a route, translated by its hook, the routed copy run by a
//! real `roost startd` through the queue hooks, the source finalized and
//! cleaned up — with the schedd killed -9 mid-route — and each hook's
//! failure rule: a translate hook that fails or prints garbage gives the
//! job back to the queue, a hook that hangs is killed, and a finalize
//! hook that fails completes the job without running it again.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::daemon::{events, stop, wait_for};
use super::schedd::Ap;

/// A hook script that records its stdin under `rec/` and then runs `body`.
pub(super) fn hook(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{name}.sh"));
    let rec = dir.join("rec");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nf={rec}/{name}.$$\ncat > $f.tmp\nmv $f.tmp $f\n{body}\n",
            rec = rec.display()
        ),
    )
    .expect("hook");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// The router's part of the configuration: one route, the `R` hooks.
fn router_config(dir: &Path, translate_body: &str, finalize_body: &str) -> String {
    let rec = dir.join("rec");
    std::fs::create_dir_all(&rec).expect("mkdir");
    std::fs::set_permissions(&rec, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let translate = hook(dir, "translate", translate_body);
    let update = hook(dir, "update", "echo 'HookSawRun = true'");
    let finalize = hook(dir, "finalize", finalize_body);
    let cleanup = hook(dir, "cleanup", "exit 0");
    let bad = hook(dir, "bad", "exit 3");
    let garbage = hook(dir, "garbage", "echo 'this is not an ad'");
    let hang = hook(dir, "hang", "sleep 30");
    format!(
        "JOB_ROUTER_ROUTE_NAMES = Local\n\
         JOB_ROUTER_ROUTE_Local @=end\n\
         # the route the tests use\n\
         UNIVERSE vanilla\n\
         REQUIREMENTS WantRoute is true\n\
         MaxIdleJobs = 5\n\
         Marker = routed-by-$(MY.Owner)\n\
         SET RoutedMarker \"$(Marker)\"\n\
         SET Requirements true\n\
         EVALSET RoutedSum 1 + 1\n\
         COPY Cmd OriginalCmd\n\
         DELETE WantRoute\n\
         @end\n\
         JOB_ROUTER_POLLING_PERIOD = 1\n\
         JOB_ROUTER_HOOK_KEYWORD = R\n\
         ROOST_ROUTER_HOOK_TIMEOUT = 2\n\
         R_HOOK_TRANSLATE_JOB = {translate}\n\
         R_HOOK_UPDATE_JOB_INFO = {update}\n\
         R_HOOK_JOB_FINALIZE = {finalize}\n\
         R_HOOK_JOB_CLEANUP = {cleanup}\n\
         BAD_HOOK_TRANSLATE_JOB = {bad}\n\
         GARBAGE_HOOK_TRANSLATE_JOB = {garbage}\n\
         HANG_HOOK_TRANSLATE_JOB = {hang}\n",
        translate = translate.display(),
        update = update.display(),
        finalize = finalize.display(),
        cleanup = cleanup.display(),
        bad = bad.display(),
        garbage = garbage.display(),
        hang = hang.display(),
    )
}

/// Translate: the job ad after the dashes, with one attribute added.
const TRANSLATE: &str = "sed '1,/^------$/d' $f\necho 'TranslatedBy = \"hook\"'";

/// The records of hook `name`, oldest first.
pub(super) fn records(dir: &Path, name: &str) -> Vec<String> {
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir.join("rec"))
        .expect("rec")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{name}.")) && !n.ends_with(".tmp"))
        })
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(_, p)| std::fs::read_to_string(p).expect("record"))
        .collect()
}

fn submit(ap: &Ap, name: &str, text: &str) {
    ap.submit_as_nobody(name, text);
}

fn history_of(ap: &Ap, constraint: &str, attrs: &[&str]) -> String {
    let mut args = vec!["history", "-constraint", constraint, "-af"];
    args.extend_from_slice(attrs);
    ap.ok(&args)
}

#[test]
fn a_routed_job_runs_on_the_node_and_its_source_is_finalized() {
    let dir = super::daemon::temp("router-e2e-hooks");
    let extra = router_config(&dir, TRANSLATE, "echo 'FinalizedByHook = true'");
    let ap = Ap::setup("router-e2e", &extra);
    let mut schedd = ap.schedd();
    ap.up();
    // The source cannot run anywhere (Requirements false); its routed copy
    // can (the route sets Requirements true).
    submit(
        &ap,
        "routed.sub",
        "executable = /bin/sh\narguments = \"-c 'echo routed > out.routed'\"\n\
         requirements = false\n+WantRoute = true\nqueue\n",
    );
    // The routed copy enters the queue: then the schedd is killed.
    wait_for("the routed copy", || {
        ap.ok(&["q", "-af", "RoutedFromJobId"]).contains("1.0")
    });
    schedd.kill();
    schedd = ap.schedd();
    ap.up();
    let startd = ap.startd();
    wait_for("the source in the history", || {
        !history_of(&ap, "ClusterId == 1", &["JobStatus"]).is_empty()
    });
    let source = history_of(
        &ap,
        "ClusterId == 1",
        &[
            "JobStatus",
            "ExitCode",
            "Managed",
            "FinalizedByHook",
            "RoutedToJobId",
        ],
    );
    assert_eq!(source.trim(), "4 0 ScheddDone true 2.0", "{source}");
    let copy = history_of(
        &ap,
        "RoutedFromJobId == \"1.0\"",
        &[
            "ClusterId",
            "JobStatus",
            "RouteName",
            "RoutedBy",
            "RoutedMarker",
            "RoutedSum",
            "TranslatedBy",
            "WantRoute",
            "JobUniverse",
            "Remote_JobUniverse",
        ],
    );
    assert_eq!(
        copy.trim(),
        "2 4 Local jobrouter routed-by-nobody 2 hook undefined 5 5",
        "{copy}"
    );
    assert_eq!(
        std::fs::read_to_string(ap.dir.join("work/out.routed")).expect("output"),
        "routed\n"
    );
    // Exactly one routed copy, though the schedd died mid-route.
    let all = ap.ok(&["history", "-af", "ClusterId"]);
    assert_eq!(all.lines().count(), 2, "{all}");
    // What the hooks read: the route, six dashes, the job (TRANSLATE);
    // the source, a blank line, the dashes, the copy (JOB_FINALIZE); the
    // copy (JOB_CLEANUP, UPDATE_JOB_INFO).
    let t = records(&dir, "translate");
    assert_eq!(t.len(), 1, "{t:?}");
    assert!(
        t[0].starts_with("[ Name = \"Local\"; TargetUniverse = 5 ]\n------\n"),
        "{}",
        t[0]
    );
    assert!(t[0].contains("\nWantRoute = true\n"), "{}", t[0]);
    let f = records(&dir, "finalize");
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].contains("\n\n------\n"), "{}", f[0]);
    assert!(f[0].contains("RoutedFromJobId = \"1.0\""), "{}", f[0]);
    let c = records(&dir, "cleanup");
    assert!(
        c.last()
            .is_some_and(|c| c.contains("RouteName = \"Local\"")),
        "{c:?}"
    );
    assert!(!records(&dir, "update").is_empty());
    // The routed job's story in the schedd's log.
    let log = ap.dir.join("spool/roost-schedd-events");
    stop(startd);
    stop(schedd);
    let story: Vec<String> = events(&log)
        .iter()
        .filter(|e| e["actor"] == "route1.0")
        .filter_map(|e| {
            e["event"]["Route"]
                .as_object()
                .and_then(|o| o.keys().next().cloned())
        })
        .collect();
    for step in [
        "Claimed",
        "HookRan",
        "Submitted",
        "Finished",
        "Ending",
        "Retired",
    ] {
        assert!(story.iter().any(|s| s == step), "{step} in {story:?}");
    }
}

#[test]
fn hook_failures_give_the_job_back_and_nothing_is_lost() {
    let dir = super::daemon::temp("router-fail-hooks");
    let extra = router_config(&dir, TRANSLATE, "exit 1");
    let ap = Ap::setup("router-fail", &extra);
    let schedd = ap.schedd();
    ap.up();
    submit(
        &ap,
        "fail.sub",
        "executable = /bin/true\nrequirements = false\n+WantRoute = true\n\
         +HookKeyword = \"BAD\"\nqueue\n+HookKeyword = \"GARBAGE\"\nqueue\n\
         +HookKeyword = \"HANG\"\nqueue\n",
    );
    // Each is claimed, its hook fails, it is given back: more than once.
    wait_for("each failing hook twice", || {
        ["bad", "garbage"]
            .iter()
            .all(|h| records(&dir, h).len() >= 2)
    });
    let log = ap.dir.join("spool/roost-schedd-events");
    wait_for("the hanging hook killed", || {
        let ev = events(&log);
        ev.iter().any(|e| {
            e["actor"] == "route1.2"
                && e["event"]["Route"]["HookRan"]["exit"]
                    .as_str()
                    .is_some_and(|x| x.contains("ROOST_ROUTER_HOOK_TIMEOUT"))
        })
    });
    stop(schedd);
    let ev = events(&log);
    let outcome = |actor: &str| -> Vec<String> {
        ev.iter()
            .filter(|e| e["actor"] == actor)
            .filter_map(|e| e["event"]["Route"]["HookRan"]["outcome"].as_str())
            .map(str::to_string)
            .collect()
    };
    assert!(
        outcome("route1.0").iter().all(|o| o.contains("given up")),
        "{:?}",
        outcome("route1.0")
    );
    assert!(
        outcome("route1.1")
            .iter()
            .all(|o| o.contains("output refused (line 1")),
        "{:?}",
        outcome("route1.1")
    );
    // No routed copy exists; the sources are the queue's again.
    let schedd = ap.schedd();
    ap.up();
    let q = ap.ok(&["q", "-af", "ClusterId", "ProcId", "JobStatus", "Managed"]);
    let ids: Vec<&str> = q
        .lines()
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    assert!(ids.iter().all(|c| *c == "1"), "only the sources: {q}");
    assert_eq!(q.lines().count(), 3, "{q}");
    stop(schedd);
}

#[test]
fn a_finalize_hook_that_fails_never_runs_the_job_again() {
    let dir = super::daemon::temp("router-finalize-fails-hooks");
    let extra = router_config(&dir, TRANSLATE, "exit 1");
    let ap = Ap::setup("router-finalize-fails", &extra);
    let schedd = ap.schedd();
    ap.up();
    let startd = ap.startd();
    submit(
        &ap,
        "once.sub",
        "executable = /bin/true\nrequirements = false\n+WantRoute = true\nqueue\n",
    );
    // As HTCondor's router: the copy is aborted, the source leaves the
    // queue completed, without the hook's update.
    wait_for("the source completed in the history", || {
        history_of(&ap, "ClusterId == 1", &["JobStatus", "Managed"]) == "4 Schedd\n"
    });
    assert_eq!(
        history_of(
            &ap,
            "RoutedFromJobId == \"1.0\"",
            &["JobStatus", "RemoveReason"]
        ),
        "3 JobRouter aborted job\n"
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(records(&dir, "translate").len(), 1, "routed once only");
    stop(startd);
    stop(schedd);
    let ev = events(&ap.dir.join("spool/roost-schedd-events"));
    assert!(ev.iter().any(|e| {
        e["actor"] == "route1.0"
            && e["event"]["Route"]["HookRan"]["outcome"]
                .as_str()
                .is_some_and(|o| o.contains("completes without the hook's update"))
    }));
}

/// A hook body that, the first time it runs, waits (so that the schedd
/// can be killed while it runs), then does `body`.
fn first_run_waits(dir: &Path, name: &str, body: &str) -> String {
    let gate = dir.join("rec").join(format!("gate-{name}"));
    format!(
        "if [ ! -e {g} ]; then touch {g}; sleep 100; fi\n{body}",
        g = gate.display()
    )
}

/// The `HookStarted` events of `hook` in the schedd's log: their pids.
fn started_pids(log: &Path, hook: &str) -> Vec<u32> {
    events(log)
        .iter()
        .filter(|e| e["event"]["Route"]["HookStarted"]["hook"] == hook)
        .filter_map(|e| e["event"]["Route"]["HookStarted"]["pid"].as_u64())
        .filter_map(|p| u32::try_from(p).ok())
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

/// The schedd killed -9 while each of the four hooks runs: each restart
/// ends the hook the last run left (killing its process), records why,
/// and runs the hook again; the job goes on to the end with one routed
/// copy, finalized once, and the log tells the story.
#[test]
fn the_schedd_killed_during_each_router_hook_goes_on() {
    let dir = super::daemon::temp("router-crash-hooks");
    std::fs::create_dir_all(dir.join("rec")).expect("mkdir");
    let translate = first_run_waits(&dir, "translate", TRANSLATE);
    let finalize = first_run_waits(&dir, "finalize", "echo 'FinalizedByHook = true'");
    let mut extra = router_config(&dir, &translate, &finalize);
    hook(
        &dir,
        "update",
        &first_run_waits(&dir, "update", "echo 'HookSawRun = true'"),
    );
    hook(&dir, "cleanup", &first_run_waits(&dir, "cleanup", "exit 0"));
    extra.push_str("ROOST_ROUTER_HOOK_TIMEOUT = 300\n");
    let ap = Ap::setup("router-crash", &extra);
    let log = ap.dir.join("spool/roost-schedd-events");
    let mut schedd = ap.schedd();
    ap.up();
    submit(
        &ap,
        "crash.sub",
        "executable = /bin/true\nrequirements = false\n+WantRoute = true\nqueue\n",
    );
    let mut startd = None;
    for (record, hook) in [
        ("translate", "Translate"),
        ("update", "UpdateJobInfo"),
        ("finalize", "Finalize"),
        ("cleanup", "Cleanup"),
    ] {
        if hook == "Finalize" {
            // The routed copy runs (and finishes) once a node takes it.
            startd = Some(ap.startd());
        }
        wait_for(&format!("{record} running"), || {
            !records(&dir, record).is_empty() && !started_pids(&log, hook).is_empty()
        });
        schedd.kill();
        let pid = started_pids(&log, hook)[0];
        assert!(alive(pid), "the {hook} hook outlived the schedd");
        schedd = ap.schedd();
        ap.up();
        wait_for(&format!("{record} run again"), || {
            records(&dir, record).len() >= 2
        });
        wait_for("the left hook killed", || !alive(pid));
        let ended: Vec<serde_json::Value> = events(&log)
            .into_iter()
            .filter(|e| e["event"]["Route"]["HookRan"]["hook"] == hook)
            .collect();
        let first = &ended[0]["event"]["Route"]["HookRan"];
        assert!(
            first["outcome"]
                .as_str()
                .is_some_and(|o| o.contains("interrupted by the schedd's stop")),
            "{first}"
        );
        assert!(
            first["exit"].as_str().is_some_and(|x| x.contains("killed")),
            "{first}"
        );
    }
    wait_for("the source in the history", || {
        !history_of(&ap, "ClusterId == 1", &["JobStatus"]).is_empty()
    });
    let source = history_of(
        &ap,
        "ClusterId == 1",
        &["JobStatus", "Managed", "FinalizedByHook"],
    );
    // One routed copy; translate and finalize each ran twice (the first
    // run interrupted), the source finalized once.
    let all = ap.ok(&["history", "-af", "ClusterId"]);
    if let Some(s) = startd {
        stop(s);
    }
    stop(schedd);
    assert_eq!(source.trim(), "4 ScheddDone true", "{source}");
    assert_eq!(all.lines().count(), 2, "{all}");
    assert_eq!(records(&dir, "translate").len(), 2);
    assert_eq!(records(&dir, "finalize").len(), 2);
    // Every hook's start is in the log before its end.
    let story: Vec<String> = events(&log)
        .iter()
        .filter(|e| e["actor"] == "route1.0")
        .filter_map(|e| {
            let r = e["event"]["Route"].as_object()?;
            let (kind, body) = r.iter().next()?;
            Some(match body["hook"].as_str() {
                Some(h) => format!("{kind}:{h}"),
                None => kind.clone(),
            })
        })
        .collect();
    for hook in ["Translate", "UpdateJobInfo", "Finalize", "Cleanup"] {
        let starts = story
            .iter()
            .filter(|s| **s == format!("HookStarted:{hook}"));
        let ends = story.iter().filter(|s| **s == format!("HookRan:{hook}"));
        assert_eq!(starts.count(), ends.count(), "{hook} in {story:?}");
    }
    assert_eq!(
        story.last().map(String::as_str),
        Some("Retired"),
        "{story:?}"
    );
}
