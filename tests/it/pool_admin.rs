//! Requests to a node through the pool, with etcd's authentication on
//! and roles as docs/pool.md sets them up: an admin (alice) sets the
//! node's persistent runtime configuration — the eventd's shutdown
//! statements — and it holds across a kill -9 and restart, until she
//! unsets it; she vacates the node's job remotely; a user who is no admin
//! (bob) is refused and named in the node's log and event log; a forged
//! pointer claiming alice (mallory) is refused; etcd itself stops mallory
//! writing under alice's prefix.

use std::process::Output;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use roost::pool::etcd::{Credentials, Etcd as Client};
use serde_json::json;

use super::daemon::{events, stop, wait_for};
use super::daemon_admin::{Node, records, text};
use super::etcd::Etcd;

const PREFIX: &str = "/rt";

fn b64(s: &str) -> String {
    STANDARD.encode(s.as_bytes())
}

fn end(prefix: &str) -> String {
    STANDARD.encode(roost::pool::etcd::prefix_end(prefix.as_bytes()))
}

/// Users and roles, then authentication on: `node` may write the whole
/// pool; each asker its own requests, any inbox, and read replies.
fn secure(endpoint: &str) {
    let etcd = Client::new(
        vec![endpoint.to_string()],
        None,
        std::time::Duration::from_secs(5),
    );
    let call = |c: &str, body: serde_json::Value| {
        etcd.call_json(c, &body)
            .unwrap_or_else(|e| panic!("{c}: {e}"));
    };
    let grant = |role: &str, perm: &str, prefix: &str| {
        call(
            "auth/role/grant",
            json!({"name": role, "perm": {"permType": perm, "key": b64(prefix), "range_end": end(prefix)}}),
        );
    };
    for user in ["root", "node", "alice", "bob", "mallory"] {
        call("auth/role/add", json!({"name": user}));
        call(
            "auth/user/add",
            json!({"name": user, "password": format!("{user}-pw")}),
        );
        call("auth/user/grant", json!({"user": user, "role": user}));
    }
    grant("node", "READWRITE", &format!("{PREFIX}/"));
    for asker in ["alice", "bob", "mallory"] {
        grant(asker, "READWRITE", &format!("{PREFIX}/inbox/"));
        grant(asker, "READ", &format!("{PREFIX}/replies/"));
        grant(asker, "READ", &format!("{PREFIX}/ads/"));
    }
    grant("alice", "READWRITE", &format!("{PREFIX}/requests/alice/"));
    grant("bob", "READWRITE", &format!("{PREFIX}/requests/bob/"));
    call("auth/enable", json!({}));
}

/// A tool configuration for `user` (its etcd user and password).
fn tool(node: &Node, endpoint: &str, user: &str) -> std::path::PathBuf {
    let pw = node.dir.join(format!("{user}.pw"));
    std::fs::write(&pw, format!("{user}-pw\n")).expect("password");
    let cfg = node.dir.join(format!("{user}.config"));
    std::fs::write(
        &cfg,
        format!(
            "ROOST_POOL_ETCD = {endpoint}\nROOST_POOL_PREFIX = {PREFIX}\n\
             ROOST_POOL_USER = {user}\nROOST_POOL_PASSWORD_FILE = {}\n",
            pw.display()
        ),
    )
    .expect("tool config");
    cfg
}

fn roost(config: &std::path::Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_roost"))
        .args(args)
        .env("CONDOR_CONFIG", config)
        .output()
        .expect("roost runs")
}

const NODE: &str = "node-x@pool.test";

#[test]
fn admins_configure_and_command_a_node_through_etcd_and_others_are_refused() {
    let etcd = Etcd::start("pool-admin-etcd");
    secure(&etcd.endpoint);
    let node = Node::setup(
        "pool-admin",
        &format!(
            "ROOST_POOL_ETCD = {e}\nROOST_POOL_PREFIX = {PREFIX}\nROOST_POOL_USER = node\n\
             ROOST_POOL_PASSWORD_FILE = $(LOCAL_DIR)/node.pw\nROOST_POOL_ADMINS = alice\n\
             STARTD_NAME = {NODE}\nENABLE_PERSISTENT_CONFIG = True\n\
             PERSISTENT_CONFIG_DIR = $(LOCAL_DIR)/persist\n",
            e = etcd.endpoint
        ),
    );
    std::fs::write(node.dir.join("node.pw"), "node-pw\n").expect("password");
    std::fs::create_dir_all(node.dir.join("persist")).expect("mkdir");
    let (alice, bob, mallory) = (
        tool(&node, &etcd.endpoint, "alice"),
        tool(&node, &etcd.endpoint, "bob"),
        tool(&node, &etcd.endpoint, "mallory"),
    );
    let daemon = node.start();
    wait_for("the node in the pool", || {
        text(&roost(&alice, &["status", "-pool", "-af", "Name"])).contains(NODE)
    });

    // The eventd's shutdown statements, as alice.
    let o = roost(
        &alice,
        &[
            "config",
            "set",
            "--name",
            NODE,
            "EndDownTime = 4102444800",
            "Shutdown = (CurrentTime < EndDownTime)",
            "START : ($(START)) && ($(Shutdown) == False)",
            "STARTD_EXPRS = $(STARTD_EXPRS), EndDownTime",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("configuration re-read"), "{}", text(&o));
    let down = || {
        text(&node.roost(&["status", "-af", "EndDownTime", "Start"]))
            .lines()
            .all(|l| l == "4102444800 false")
    };
    assert!(down(), "{}", text(&node.roost(&["status", "-l"])));
    // A job offered now is not taken: with START false the node does not
    // ask for work (as HTCondor's startd), every FetchWorkDelay it
    // finds START still false.
    node.job("turned-down", 1, "300");
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        node.dir.join("jobs/turned-down.job").exists(),
        "a node down took a job"
    );
    assert!(!node.states().contains("Claimed"), "{}", node.states());
    std::fs::remove_file(node.dir.join("jobs/turned-down.job")).expect("rm");

    // kill -9 and restart: still down (the persistent configuration).
    daemon.kill();
    let daemon = node.start();
    wait_for("the restarted node to answer", || {
        node.roost(&["status"]).status.success()
    });
    assert!(down(), "{}", node.states());

    // A setting the node cannot read is refused, and the file it keeps
    // is put back as it was.
    let persist = [node.dir.join("persist/.config.STARTD")];
    let kept = std::fs::read_to_string(&persist[0]).expect("persistent file");
    let o = roost(&alice, &["config", "set", "--name", NODE, "START = (("]);
    assert!(!o.status.success(), "{}", text(&o));
    wait_for("the persistent file put back", || {
        std::fs::read_to_string(&persist[0]).is_ok_and(|t| t == kept)
    });
    assert!(down(), "{}", node.states());

    // bob is no admin; mallory forges a pointer claiming alice.
    let o = roost(&bob, &["vacate", "--name", NODE, "--fast"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("bob is not among the node's ROOST_POOL_ADMINS"),
        "{}",
        text(&o)
    );
    let o = roost(&mallory, &["vacate", "--name", NODE]);
    assert!(!o.status.success());
    assert!(text(&o).contains("permission denied"), "{}", text(&o));
    let forger = Client::new(
        vec![etcd.endpoint.clone()],
        Some(Credentials {
            user: "mallory".into(),
            password: "mallory-pw".into(),
        }),
        std::time::Duration::from_secs(5),
    );
    let err = forger
        .write(
            &[(format!("{PREFIX}/requests/alice/x1"), b"{}".to_vec())],
            &[],
            None,
        )
        .expect_err("etcd refuses mallory alice's prefix");
    assert!(err.to_string().contains("permission denied"), "{err}");
    forger
        .write(
            &[(format!("{PREFIX}/inbox/{NODE}/alice/x2"), Vec::new())],
            &[],
            None,
        )
        .expect("mallory may write the inbox");
    wait_for("the forged request refused", || {
        node.start_log().contains("forged")
    });
    let log = node.start_log();
    assert!(
        log.contains("Pool request refused.") && log.contains("by=bob"),
        "{log}"
    );

    // alice unsets the shutdown: jobs run again; then she vacates it.
    let o = roost(
        &alice,
        &[
            "config",
            "unset",
            "--name",
            NODE,
            "EndDownTime",
            "Shutdown",
            "START",
            "STARTD_EXPRS",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    node.job("runs", 2, "300");
    wait_for("the job to run", || node.states().contains("Claimed Busy"));
    let o = roost(&alice, &["vacate", "--name", NODE, "--fast"]);
    assert!(o.status.success(), "{}", text(&o));
    wait_for("JOB_EXIT evict", || {
        records(&node.dir, "exit")
            .iter()
            .any(|r| r.starts_with("argv: evict\n"))
    });
    let o = roost(&alice, &["reconfig", "--name", NODE]);
    assert!(o.status.success(), "{}", text(&o));
    let status = stop(daemon);
    assert!(status.success(), "daemon exit: {status}");

    // Every request in the event log, with who asked.
    let asked: Vec<String> = events(&node.dir.join("spool/roost-events"))
        .iter()
        .filter_map(|e| {
            let r = e.pointer("/event/Daemon/PoolRequest")?;
            Some(format!(
                "{} {} {}",
                r["by"].as_str()?,
                r["request"].as_str().unwrap_or(""),
                r["refused"].as_str().unwrap_or("")
            ))
        })
        .collect();
    let expect = [
        "alice config set EndDownTime",
        // Accepted and recorded; the node could not read it (put back).
        "alice config set START = ((",
        // What bob asked is kept with the refusal.
        "bob command {\"command\":\"vacate\",\"slot\":null,\"fast\":true} bob is not among",
        "alice  no request x2 from alice",
        "alice config unset EndDownTime",
        "alice command {\"command\":\"vacate\"",
        "alice command {\"command\":\"reconfig\"",
    ];
    assert_eq!(asked.len(), expect.len(), "{asked:#?}");
    for (a, e) in asked.iter().zip(expect) {
        assert!(a.starts_with(e), "{a} / {e}");
    }
}
