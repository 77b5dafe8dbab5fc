//! The job router against HTCondor 23.9.6: the route, hooks and submit
//! file of `tests/fixtures/router/` run through Roost here, and what
//! HTCondor's `condor_job_router` gave the same hooks and left in its
//! history (captured by `tools/router_htcondor.sh` on the real daemons)
//! is the expected result: the hooks' stdin layout, the routing
//! attributes each hook sees, and both jobs' final states.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::daemon::{stop, temp, wait_for};
use super::router::{hook, records};
use super::schedd::Ap;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/router");

/// The attributes the router sets, changes or must not add.
const ROUTING: [&str; 18] = [
    "Managed",
    "ManagedManager",
    "RoutedToJobId",
    "RoutedFromJobId",
    "RouteName",
    "RoutedBy",
    "WantRoute",
    "TranslatedBy",
    "RoutedMarker",
    "RoutedSum",
    "OriginalCmd",
    "Remote_JobUniverse",
    "HookSawRun",
    "FinalizedByHook",
    "JobStatus",
    "JobUniverse",
    "ExitCode",
    "HoldCopiedFromTargetJob",
];

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(name)).expect("fixture")
}

/// `Name = value` lines of `text` for the routing attributes, job ids
/// and the owner's name made neutral.
fn routing(text: &str, ids: &[(String, &str)], owner: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(" = "))
        .filter(|(n, _)| ROUTING.contains(n))
        .map(|(n, v)| {
            let mut v = v.replace(owner, "<owner>");
            for (id, name) in ids {
                v = v.replace(&format!("\"{id}\""), name);
            }
            (n.to_string(), v)
        })
        .collect()
}

/// The source's and the copy's job ids in `text` (`RoutedFromJobId` and
/// `RoutedToJobId`).
fn ids(text: &str) -> Vec<(String, &'static str)> {
    let find = |attr: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{attr} = \"")))
            .map(|v| v.trim_end_matches('"').to_string())
    };
    let mut out = Vec::new();
    if let Some(s) = find("RoutedFromJobId") {
        out.push((s, "<source>"));
    }
    if let Some(d) = find("RoutedToJobId") {
        out.push((d, "<copy>"));
    }
    out
}

fn first_record(dir: &Path, name: &str) -> String {
    records(dir, name).into_iter().next().expect("a record")
}

#[test]
fn the_router_treats_a_job_as_htcondor_23_does() {
    let w = temp("router-htc-hooks");
    std::fs::create_dir_all(w.join("rec")).expect("mkdir");
    std::fs::set_permissions(w.join("rec"), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    hook(
        &w,
        "translate",
        "sed '1,/^------$/d' $f\necho 'TranslatedBy = \"hook\"'",
    );
    hook(&w, "update", "echo 'HookSawRun = true'");
    hook(&w, "finalize", "echo 'FinalizedByHook = true'");
    hook(&w, "cleanup", "exit 0");
    let route = fixture("route.config").replace("@W@", &w.display().to_string());
    let ap = Ap::setup("router-htc", &route);
    let schedd = ap.schedd();
    ap.up();
    ap.submit_as_nobody("routed.sub", &fixture("routed.sub"));
    let startd = ap.startd();
    wait_for("both jobs in the history", || {
        ap.ok(&["history", "-af", "ClusterId"]).lines().count() >= 2
    });
    wait_for("the cleanup hook", || {
        std::fs::read_dir(w.join("rec")).is_ok_and(|d| {
            d.filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().starts_with("cleanup."))
        })
    });
    stop(startd);
    let history = ap.ok(&["history", "-l"]);
    stop(schedd);
    // The layout of what the hooks read.
    let ours = |h: &str| first_record(&w, h);
    let theirs = |h: &str| fixture(&format!("htcondor-{h}.stdin"));
    let head = |t: &str| t.lines().take(2).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(head(&ours("translate")), head(&theirs("translate")));
    let before_dashes = |t: &str| {
        let lines: Vec<&str> = t.lines().collect();
        let i = lines.iter().position(|l| *l == "------").expect("dashes");
        lines[i - 1].to_string()
    };
    assert_eq!(
        before_dashes(&ours("finalize")),
        before_dashes(&theirs("finalize"))
    );
    assert_eq!(before_dashes(&theirs("finalize")), "");
    // The routing attributes each hook saw, and the final ads.
    // (UPDATE_JOB_INFO runs at each poll: how far the copy got by the
    // first one is a matter of timing, so its progress is left out.)
    for h in ["translate", "update", "finalize", "cleanup"] {
        let (o, t) = (ours(h), theirs(h));
        let (oid, tid) = (ids(&o), ids(&t));
        let (mut ro, mut rt) = (routing(&o, &oid, "nobody"), routing(&t, &tid, "roost"));
        if h == "update" {
            for a in ["JobStatus", "ExitCode"] {
                ro.remove(a);
                rt.remove(a);
            }
        }
        assert_eq!(ro, rt, "what {h} read");
    }
    let mut ours_ads: Vec<&str> = history
        .split("\n\n")
        .filter(|a| !a.trim().is_empty())
        .collect();
    let theirs_text = fixture("htcondor-history.ads");
    let mut theirs_ads: Vec<&str> = theirs_text
        .split("\n\n")
        .filter(|a| !a.trim().is_empty())
        .collect();
    let is_copy = |a: &&str| a.contains("RoutedFromJobId");
    ours_ads.sort_by_key(is_copy);
    theirs_ads.sort_by_key(is_copy);
    assert_eq!(ours_ads.len(), 2, "{history}");
    assert_eq!(theirs_ads.len(), 2);
    let all_ids = |ads: &[&str]| ads.iter().flat_map(|a| ids(a)).collect::<Vec<_>>();
    let (oid, tid) = (all_ids(&ours_ads), all_ids(&theirs_ads));
    for (o, t) in ours_ads.iter().zip(&theirs_ads) {
        assert_eq!(routing(o, &oid, "nobody"), routing(t, &tid, "roost"));
    }
}
