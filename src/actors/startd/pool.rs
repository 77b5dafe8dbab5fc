//! The node in the pool (`ROOST_POOL_ETCD`): every second the node actor
//! gathers its slots' public ads and offers them to the publisher thread
//! (`pool::publish`), which decides what etcd needs and when; the inbox
//! thread (`pool::inbox`) brings requests from the pool's admins, judged,
//! as [`PoolAsk`] messages: each is recorded in the event log, then carried
//! out — a change of the persistent runtime configuration (then a
//! reconfig), or an admin command as the socket would run it. Nothing here
//! waits on etcd.

use std::sync::mpsc::SyncSender;
use std::time::Duration;

use actix::prelude::*;
use tracing::{info, warn};

use super::admin::control_of;
use super::node::NodeActor;
use crate::admin::Response;
use crate::config::{Scope, edit_persistent, persistent_file};
use crate::events::DaemonEvent;
use crate::pool::PoolSettings;
use crate::pool::inbox::{Action, Ask, Inbox, Reply, Verdict};
use crate::pool::publish::Publisher;

/// A judged request from the pool, and where its reply goes.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PoolAsk {
    ask: Ask,
    reply: SyncSender<Reply>,
}

/// How long the inbox thread waits for the node to carry a request out.
const CARRY_OUT: Duration = Duration::from_secs(120);

impl NodeActor {
    /// Publishes the node's ads in `pool` (`None`: in no pool).
    #[must_use]
    pub fn with_pool(mut self, pool: Option<PoolSettings>) -> NodeActor {
        self.pool = pool;
        self
    }

    /// Starts the publisher, the second's timer that feeds it, and the
    /// inbox.
    pub(super) fn start_pool(&mut self, ctx: &mut Context<NodeActor>) {
        let Some(pool) = self.pool.clone() else {
            return;
        };
        let prefix = pool.prefix.clone();
        match Publisher::start(pool.clone(), self.shared.name.clone()) {
            Ok(p) => self.publisher = Some(p),
            Err(e) => {
                warn!(message = "Cannot start the pool publisher; the node runs outside the pool.", error = %e);
                return;
            }
        }
        let node = ctx.address();
        let handle = Box::new(move |ask: Ask| {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            node.do_send(PoolAsk { ask, reply: tx });
            rx.recv_timeout(CARRY_OUT).unwrap_or_else(|_| Reply {
                ok: false,
                message: "the node did not carry the request out in time".into(),
            })
        });
        match Inbox::start(pool, self.shared.name.clone(), handle) {
            Ok(i) => self.inbox = Some(i),
            Err(e) => {
                warn!(message = "Cannot start the pool inbox; requests through the pool are not read.", error = %e)
            }
        }
        info!(message = "Publishing in the pool.", prefix = %prefix);
        ctx.run_interval(Duration::from_secs(1), |act, ctx| {
            let ads = act.public_ads();
            ctx.spawn(ads.into_actor(act).map(|ads, act, _| {
                if let Some(p) = &act.publisher {
                    p.offer(ads);
                }
            }));
        });
    }

    /// Changes the persistent runtime configuration and reconfigures; the
    /// old file is put back when the new configuration does not read.
    fn runtime_config(&self, set: &[String], unset: &[String]) -> Response {
        let config = self.shared.config();
        let enabled = config
            .bool("ENABLE_PERSISTENT_CONFIG")
            .ok()
            .flatten()
            .unwrap_or(false);
        let dir = config.text("PERSISTENT_CONFIG_DIR").ok().flatten();
        let dir = match dir {
            Some(d) if enabled && !d.trim().is_empty() => d,
            _ => {
                return Response::refused(
                    "this node keeps no persistent runtime configuration \
                     (ENABLE_PERSISTENT_CONFIG is not true, or PERSISTENT_CONFIG_DIR is unset)",
                );
            }
        };
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        let path = std::path::PathBuf::from(persistent_file(&dir, &scope));
        let old = match std::fs::read_to_string(&path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Response::refused(format!("cannot read {}: {e}", path.display())),
        };
        let new = match edit_persistent(old.as_deref().unwrap_or(""), set, unset) {
            Ok(t) => t,
            Err(e) => return Response::refused(e.to_string()),
        };
        if let Err(e) = write_durably(&path, &new) {
            return Response::refused(format!("cannot write {}: {e}", path.display()));
        }
        let answer = self.reconfig();
        if !answer.ok {
            let back = match &old {
                Some(t) => write_durably(&path, t),
                None => std::fs::remove_file(&path),
            };
            if let Err(e) = back {
                warn!(message = "Cannot put the persistent configuration back.", file = %path.display(), error = %e);
            }
        }
        answer
    }
}

/// Writes `text` to `path` through a temporary file renamed over it, synced.
fn write_durably(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("roost-new");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

impl Handler<PoolAsk> for NodeActor {
    type Result = ();

    fn handle(&mut self, m: PoolAsk, ctx: &mut Context<Self>) {
        let PoolAsk { ask, reply } = m;
        let (request, refused) = match &ask.verdict {
            Verdict::Accept(a) => (a.describe(), String::new()),
            Verdict::Refuse { why, request } => (request.clone(), why.clone()),
        };
        self.record(DaemonEvent::PoolRequest {
            by: ask.by.clone(),
            id: ask.id.clone(),
            request: request.clone(),
            refused: refused.clone(),
        });
        let send = move |r: Response| {
            let _ = reply.send(Reply {
                ok: r.ok,
                message: r.message,
            });
        };
        match ask.verdict {
            Verdict::Refuse { why, .. } => {
                warn!(message = "Pool request refused.", by = %ask.by, id = %ask.id, request = %request, why = %why);
                send(Response::refused(format!("refused: {why}")));
            }
            Verdict::Accept(Action::Config { set, unset }) => {
                info!(message = "Pool request: runtime configuration.", by = %ask.by, id = %ask.id, request = %request);
                send(self.runtime_config(&set, &unset));
            }
            Verdict::Accept(Action::Command { request: r }) => {
                info!(message = "Pool request: command.", by = %ask.by, id = %ask.id, request = %request);
                match control_of(r) {
                    Some(c) => {
                        let answer = ctx.address().send(c);
                        actix::spawn(async move {
                            send(
                                answer.await.unwrap_or_else(|_| {
                                    Response::refused("the daemon is stopping")
                                }),
                            );
                        });
                    }
                    None => send(Response::refused("not a supervisor command")),
                }
            }
        }
    }
}
