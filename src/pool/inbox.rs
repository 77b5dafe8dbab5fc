//! Requests to a node through the pool: persistent runtime configuration
//! (`roost config set -name`) and admin commands (`roost vacate -name`,
//! `drain`, `off`, `reconfig`), from the eventd or an admin anywhere.
//!
//! Who asked must be known, and etcd does not say who wrote a key. So a
//! request has two keys, written together: its body under the asker's own
//! prefix, `<prefix>/requests/<principal>/<id>` — etcd's roles let only
//! that principal write there —, and a pointer in the node's inbox,
//! `<prefix>/inbox/<node>/<principal>/<id>`, which the node watches. The
//! node reads the body the pointer names: a pointer without its body is a
//! forgery (or expired) and is refused; a body naming another node is
//! refused; a principal not in the node's `ROOST_POOL_ADMINS` is refused,
//! with its name in the node's log. The node answers under
//! `<prefix>/replies/<node>/<principal>/<id>` and deletes the pointer.
//! Requests and replies live under a lease of `ROOST_POOL_REQUEST_LIFETIME`.
//!
//! [`judge`] is the pure decision; [`Inbox`] is the node's thread (blocking
//! calls, never in an actor); [`ask`] is the asking side.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tracing::{info, warn};

use super::etcd::{Etcd, EtcdError};
use super::{PoolError, PoolSettings};
use crate::admin::Request;

/// What a request asks of a node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Change the node's persistent runtime configuration, then reconfig.
    Config {
        /// Statements to set (`NAME = value`, `NAME : value`).
        #[serde(default)]
        set: Vec<String>,
        /// Knobs to drop.
        #[serde(default)]
        unset: Vec<String>,
    },
    /// An admin command, as the admin socket takes it.
    Command {
        /// The command.
        request: Request,
    },
}

impl Action {
    /// One line for logs.
    pub fn describe(&self) -> String {
        match self {
            Action::Config { set, unset } => {
                let mut parts = Vec::new();
                if !set.is_empty() {
                    parts.push(format!("set {}", set.join("; ")));
                }
                if !unset.is_empty() {
                    parts.push(format!("unset {}", unset.join(", ")));
                }
                format!("config {}", parts.join(" "))
            }
            Action::Command { request } => match serde_json::to_string(request) {
                Ok(json) => format!("command {json}"),
                Err(_) => format!("command {request:?}"),
            },
        }
    }
}

/// A request's body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Body {
    /// The node it is for (the daemon's name, `STARTD_NAME`'s).
    pub node: String,
    /// What it asks.
    #[serde(flatten)]
    pub action: Action,
}

/// A node's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Carried out.
    pub ok: bool,
    /// What happened, or why not.
    pub message: String,
}

/// The node's decision on one request, before carrying it out.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// To be carried out.
    Accept(Action),
    /// Refused.
    Refuse {
        /// Why.
        why: String,
        /// What was asked ([`Action::describe`], or as much of the body
        /// as reads when it is not a request; empty without a body), so
        /// that the node's log keeps what it turned down.
        request: String,
    },
}

/// One request for the node, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    /// The principal the request's key proves.
    pub by: String,
    /// The request's id.
    pub id: String,
    /// The decision.
    pub verdict: Verdict,
}

/// Longest request body read.
pub const MAX_BODY: usize = 64 * 1024;

/// Whether `request` may come through the pool (not the ones that only
/// make sense on the node's own socket).
fn remote(request: &Request) -> bool {
    matches!(
        request,
        Request::Vacate { .. }
            | Request::Drain { .. }
            | Request::CancelDrain { .. }
            | Request::Off { .. }
            | Request::Reconfig
    )
}

/// Judges principal `by`'s request `id` for `node`, whose body in etcd is
/// `body` (`None`: there is none).
pub fn judge(
    node: &str,
    settings: &PoolSettings,
    by: &str,
    id: &str,
    body: Option<&[u8]>,
) -> Verdict {
    let refuse = |why: String, request: String| Verdict::Refuse { why, request };
    let Some(body) = body else {
        return refuse(
            format!(
                "no request {id} from {by} in etcd: a pointer without its request (forged, or expired)"
            ),
            String::new(),
        );
    };
    if body.len() > MAX_BODY {
        let request = format!("{} bytes", body.len());
        if !settings.admits(by) {
            return refuse(not_admin(by), request);
        }
        return refuse(
            format!("the request is larger than {MAX_BODY} bytes"),
            request,
        );
    }
    let parsed = serde_json::from_slice::<Body>(body);
    let request = match &parsed {
        Ok(b) => b.action.describe(),
        Err(_) => String::from_utf8_lossy(&body[..body.len().min(SHOWN)]).into_owned(),
    };
    if !settings.admits(by) {
        return refuse(not_admin(by), request);
    }
    let body = match parsed {
        Ok(b) => b,
        Err(e) => return refuse(format!("the request does not read: {e}"), request),
    };
    if body.node != node {
        return refuse(
            format!("the request is for {}, not this node", body.node),
            request,
        );
    }
    match body.action {
        Action::Command { request: r } if !remote(&r) => refuse(
            format!("{request} cannot be asked through the pool"),
            request,
        ),
        action => Verdict::Accept(action),
    }
}

/// How much of a body that is not a request the node's log keeps.
const SHOWN: usize = 256;

fn not_admin(by: &str) -> String {
    format!("{by} is not among the node's ROOST_POOL_ADMINS")
}

/// Splits an inbox key's tail `<principal>/<id>`.
fn pointer(tail: &str) -> Option<(&str, &str)> {
    let (by, id) = tail.split_once('/')?;
    (!by.is_empty() && !id.is_empty() && !id.contains('/')).then_some((by, id))
}

/// Carries out a judged request and answers it (the node actor, through
/// a message).
pub type Handler = Box<dyn Fn(Ask) -> Reply + Send>;

/// The node's inbox thread: watches `<prefix>/inbox/<node>/`, judges each
/// request, hands it to the node, replies. Stops when dropped (within a
/// minute: the length of one watch).
#[derive(Debug)]
pub struct Inbox {
    stop: Arc<AtomicBool>,
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How long one watch of the inbox waits before it is made again.
const WATCH: Duration = Duration::from_secs(60);

impl Inbox {
    /// Starts the thread for `node`.
    pub fn start(settings: PoolSettings, node: String, handle: Handler) -> std::io::Result<Inbox> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("pool-inbox".into())
            .spawn(move || run(&settings, &node, &handle, &flag))?;
        Ok(Inbox { stop })
    }
}

fn run(settings: &PoolSettings, node: &str, handle: &Handler, stop: &AtomicBool) {
    let etcd = settings.client();
    let prefix = settings.inbox_prefix(node);
    let mut seen = HashSet::new();
    let mut backoff = Duration::from_secs(1);
    let mut failing = false;
    while !stop.load(Ordering::Relaxed) {
        let outcome = sweep(&etcd, settings, node, handle, &mut seen)
            .and_then(|rev| etcd.wait_change(&prefix, rev, WATCH));
        match outcome {
            Ok(_) => {
                if failing {
                    info!(message = "The pool's inbox is reachable again.", inbox = %prefix);
                }
                failing = false;
                backoff = Duration::from_secs(1);
            }
            Err(e) => {
                if !failing {
                    warn!(message = "Cannot read the node's inbox in the pool; trying again.", inbox = %prefix, error = %e);
                }
                failing = true;
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
        }
    }
}

/// Handles every request in the inbox; the revision read at.
fn sweep(
    etcd: &Etcd,
    settings: &PoolSettings,
    node: &str,
    handle: &Handler,
    seen: &mut HashSet<String>,
) -> Result<i64, EtcdError> {
    let prefix = settings.inbox_prefix(node);
    let (kvs, revision) = etcd.range_prefix_at(&prefix)?;
    for kv in kvs {
        let tail = kv.key.strip_prefix(&prefix).unwrap_or_default();
        let Some((by, id)) = pointer(tail) else {
            warn!(message = "A key in the node's inbox is not a request's pointer; deleted.", key = %kv.key);
            etcd.write(&[], std::slice::from_ref(&kv.key), None)?;
            continue;
        };
        // A request handled whose pointer could not be deleted: not again.
        if seen.len() > 10_000 {
            seen.clear();
        }
        if seen.insert(tail.to_string()) {
            let body = etcd.get(&settings.request_key(by, id))?;
            let verdict = judge(node, settings, by, id, body.as_deref());
            let reply = handle(Ask {
                by: by.to_string(),
                id: id.to_string(),
                verdict,
            });
            let text = serde_json::to_vec(&reply).unwrap_or_default();
            let lease = etcd.grant(settings.request_lifetime)?;
            etcd.write(
                &[(settings.reply_key(node, by, id), text)],
                std::slice::from_ref(&kv.key),
                Some(lease),
            )?;
        } else {
            etcd.write(&[], std::slice::from_ref(&kv.key), None)?;
        }
    }
    Ok(revision)
}

/// A request id: unique enough (time and process).
fn new_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}-{}", std::process::id())
}

/// Asks `node` for `action` as this process's principal and waits up to
/// `wait` for its reply.
pub fn ask(
    settings: &PoolSettings,
    node: &str,
    action: Action,
    wait: Duration,
) -> Result<Reply, PoolError> {
    let id = new_id();
    send(settings, node, &id, action)?;
    wait_reply(settings, node, &id, wait)
}

/// Sends request `id` (unique for this process's principal) to `node`:
/// its body and the inbox's pointer, together, under a lease of
/// `ROOST_POOL_REQUEST_LIFETIME`.
pub fn send(
    settings: &PoolSettings,
    node: &str,
    id: &str,
    action: Action,
) -> Result<(), PoolError> {
    let by = settings.principal();
    let etcd = settings.client();
    let body = serde_json::to_vec(&Body {
        node: node.to_string(),
        action,
    })
    .map_err(|e| super::knob("request", e))?;
    let lease = etcd.grant(settings.request_lifetime)?;
    etcd.write(
        &[
            (settings.request_key(by, id), body),
            (settings.inbox_key(node, by, id), Vec::new()),
        ],
        &[],
        Some(lease),
    )?;
    Ok(())
}

/// Waits up to `wait` for `node`'s reply to request `id`.
pub fn wait_reply(
    settings: &PoolSettings,
    node: &str,
    id: &str,
    wait: Duration,
) -> Result<Reply, PoolError> {
    let etcd = settings.client();
    let start = Instant::now();
    loop {
        if let Sent::Replied(r) = sent_in(&etcd, settings, node, id)? {
            return Ok(r);
        }
        if start.elapsed() >= wait {
            return Err(PoolError::NoReply {
                node: node.to_string(),
                waited: wait.as_secs(),
                lifetime: settings.request_lifetime,
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Where request `id` of this process's principal to `node` is.
#[derive(Clone, Debug, PartialEq)]
pub enum Sent {
    /// Not in etcd: never sent (or gone with its lease).
    No,
    /// Sent, not answered yet.
    Waiting,
    /// Answered.
    Replied(Reply),
}

/// Where request `id` to `node` is: what an asker that may have died
/// between recording a request and sending it, or between sending it and
/// hearing back, looks up before it sends it (again).
pub fn sent(settings: &PoolSettings, node: &str, id: &str) -> Result<Sent, PoolError> {
    sent_in(&settings.client(), settings, node, id)
}

fn sent_in(etcd: &Etcd, settings: &PoolSettings, node: &str, id: &str) -> Result<Sent, PoolError> {
    let reply_key = settings.reply_key(node, settings.principal(), id);
    if let Some(text) = etcd.get(&reply_key)? {
        return serde_json::from_slice(&text)
            .map(Sent::Replied)
            .map_err(|e| {
                PoolError::Etcd(EtcdError::Garbled {
                    call: reply_key.clone(),
                    message: e.to_string(),
                })
            });
    }
    let request = settings.request_key(settings.principal(), id);
    Ok(match etcd.get(&request)? {
        Some(_) => Sent::Waiting,
        None => Sent::No,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(admins: &[&str]) -> PoolSettings {
        PoolSettings {
            endpoints: vec![],
            prefix: "/p".into(),
            credentials: None,
            update_interval: Duration::from_secs(300),
            lifetime: 900,
            timeout: Duration::from_secs(5),
            admins: admins.iter().map(|a| a.to_string()).collect(),
            request_lifetime: 3600,
        }
    }

    fn body(node: &str, action: &Action) -> Vec<u8> {
        serde_json::to_vec(&Body {
            node: node.into(),
            action: action.clone(),
        })
        .expect("encodes")
    }

    #[test]
    fn only_a_proven_admin_asking_this_node_for_a_remote_command_is_accepted() {
        let s = settings(&["eventd", "alice"]);
        let vacate = Action::Command {
            request: Request::Vacate {
                slot: None,
                fast: true,
            },
        };
        assert_eq!(
            judge("n1", &s, "alice", "1", Some(&body("n1", &vacate))),
            Verdict::Accept(vacate.clone())
        );
        let refused = |v: Verdict| match v {
            Verdict::Refuse { why, .. } => why,
            Verdict::Accept(a) => panic!("accepted {a:?}"),
        };
        // What was asked is kept with the refusal, whenever there is a
        // body to read it from.
        let asked = |v: Verdict| match v {
            Verdict::Refuse { request, .. } => request,
            Verdict::Accept(a) => panic!("accepted {a:?}"),
        };
        assert_eq!(
            asked(judge("n1", &s, "mallory", "1", Some(&body("n1", &vacate)))),
            r#"command {"command":"vacate","slot":null,"fast":true}"#
        );
        assert_eq!(asked(judge("n1", &s, "alice", "1", Some(b"{"))), "{");
        assert_eq!(asked(judge("n1", &s, "alice", "1", None)), "");
        assert!(refused(judge("n1", &s, "alice", "1", None)).contains("forged"));
        assert!(
            refused(judge("n1", &s, "mallory", "1", Some(&body("n1", &vacate))))
                .contains("mallory is not among the node's ROOST_POOL_ADMINS")
        );
        assert!(
            refused(judge("n1", &s, "alice", "1", Some(&body("n2", &vacate)))).contains("for n2")
        );
        assert!(refused(judge("n1", &s, "alice", "1", Some(b"{"))).contains("does not read"));
        let status = Action::Command {
            request: Request::Status,
        };
        assert!(
            refused(judge("n1", &s, "alice", "1", Some(&body("n1", &status))))
                .contains("cannot be asked through the pool")
        );
        assert!(matches!(
            judge(
                "n1",
                &settings(&["*"]),
                "bob",
                "1",
                Some(&body("n1", &vacate))
            ),
            Verdict::Accept(_)
        ));
    }

    #[test]
    fn bodies_and_pointers_read_as_written() {
        let config = Action::Config {
            set: vec!["EndDownTime = 5".into()],
            unset: vec!["X".into()],
        };
        let text = String::from_utf8(body("n1", &config)).expect("utf-8");
        assert_eq!(
            text,
            r#"{"node":"n1","action":"config","set":["EndDownTime = 5"],"unset":["X"]}"#
        );
        assert_eq!(config.describe(), "config set EndDownTime = 5 unset X");
        assert_eq!(pointer("alice/17-3"), Some(("alice", "17-3")));
        assert_eq!(pointer("alice"), None);
        assert_eq!(pointer("alice/a/b"), None);
        assert_eq!(pointer("/x"), None);
    }
}
