//! The pool on etcd, end to end: two real `roost startd` nodes publish
//! their slots in a private etcd (`etcd.rs`), `roost status -pool` reads
//! them (`-af`, `-constraint`, `-total`, `-l`); a job's start is in the
//! pool at once; a node that loses etcd runs its job on, says so, and
//! publishes again when etcd is back; a node killed -9 leaves the pool
//! when `CLASSAD_LIFETIME` runs out, and one that stops withdraws its ads
//! at once. A `roost schedd` publishes its own ad the same way (`roost
//! status -pool -schedd`).

use super::daemon::wait_for;
use super::daemon_admin::{Node, text};
use super::etcd::Etcd;

fn pool_af(node: &Node, args: &[&str]) -> Vec<String> {
    let mut all = vec!["status", "-pool"];
    all.extend_from_slice(args);
    let o = node.roost(&all);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn nodes_publish_their_slots_in_etcd_and_leave_with_their_lease() {
    let mut etcd = Etcd::start("pool-etcd");
    let pool = format!(
        "ROOST_POOL_ETCD = {}\nROOST_POOL_PREFIX = /roost-test\nCLASSAD_LIFETIME = 6\n",
        etcd.endpoint
    );
    let a = Node::setup("pool-a", &format!("{pool}STARTD_NAME = node-a@pool.test\n"));
    let b = Node::setup("pool-b", &format!("{pool}STARTD_NAME = node-b@pool.test\n"));
    let (da, db) = (a.start(), b.start());
    wait_for("both nodes in the pool", || {
        pool_af(&a, &["-af", "Name", "State"])
            == [
                "slot1@node-a@pool.test Unclaimed",
                "slot1@node-b@pool.test Unclaimed",
                "slot2@node-a@pool.test Unclaimed",
                "slot2@node-b@pool.test Unclaimed",
            ]
    });
    assert_eq!(
        pool_af(
            &b,
            &["-constraint", "regexp(\"@node-b@\", Name)", "-af", "Name"]
        ),
        ["slot1@node-b@pool.test", "slot2@node-b@pool.test"]
    );
    let total = pool_af(&a, &["-total"]).join("\n");
    assert!(
        total.contains("Unclaimed") && total.contains("Total"),
        "{total}"
    );
    let long = pool_af(&a, &["-l", "slot1@node-a@pool.test"]).join("\n");
    assert!(long.contains("Name = \"slot1@node-a@pool.test\""), "{long}");

    // A job's start is published at once (UPDATE_INTERVAL is 300 s).
    a.job("j", 1, "300");
    wait_for("the claim in the pool", || {
        pool_af(
            &b,
            &[
                "-constraint",
                "State == \"Claimed\"",
                "-af",
                "Name",
                "Activity",
            ],
        )
        .iter()
        .any(|l| l.ends_with("@node-a@pool.test Busy"))
    });

    // etcd away: the node runs its job on and says so; etcd back: the
    // pool shows it again.
    etcd.pause();
    wait_for("the node to say it cannot publish", || {
        a.start_log().contains("Cannot publish in the pool")
    });
    assert!(a.states().contains("Claimed Busy"), "{}", a.states());
    etcd.resume();
    wait_for("the node to publish again", || {
        a.start_log().matches("Ads published in the pool").count() >= 2
            && pool_af(&b, &["-af", "Name"]).len() == 4
    });

    // kill -9: its ads go when CLASSAD_LIFETIME (6 s) runs out.
    db.kill();
    wait_for("the killed node's ads to expire", || {
        pool_af(&a, &["-af", "Name"])
            .iter()
            .all(|n| n.ends_with("@node-a@pool.test"))
    });
    // A node that stops withdraws its ads at once.
    a.vacate_fast_and_stop(da);
    assert_eq!(pool_af(&a, &["-af", "Name"]), Vec::<String>::new());
    // Not in a pool: said plainly.
    let o = Node::setup("pool-none", "").roost(&["status", "-pool"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("ROOST_POOL_ETCD"), "{}", text(&o));
}

#[test]
fn a_schedd_publishes_its_ad_in_the_pool_and_withdraws_it_at_stop() {
    use super::daemon::stop;
    use super::schedd::Ap;
    let etcd = Etcd::start("pool-schedd-etcd");
    let ap = Ap::setup(
        "pool-schedd",
        &format!(
            "ROOST_POOL_ETCD = {}\nROOST_POOL_PREFIX = /roost-schedd\nSCHEDD_NAME = ap1@pool.test\n",
            etcd.endpoint
        ),
    );
    let schedd = ap.schedd();
    ap.up();
    ap.write("one.sub", "executable = /bin/true\nqueue 2\n");
    ap.ok(&["submit", "one.sub"]);
    let schedds = || {
        let o = ap.roost(&["status", "-pool", "-schedd", "-af", "Name", "TotalIdleJobs"]);
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // Written at start, then every UPDATE_INTERVAL (2 s here).
    wait_for("the schedd's ad with its two jobs in the pool", || {
        schedds() == "ap1@pool.test 2\n"
    });
    let table =
        String::from_utf8_lossy(&ap.roost(&["status", "-pool", "-schedd"]).stdout).into_owned();
    assert!(
        table.contains("ap1@pool.test") && table.contains("IdleJobs"),
        "{table}"
    );
    let status = stop(schedd);
    assert!(status.success(), "schedd exit: {status}");
    assert_eq!(schedds(), "");
}
