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

    /// The persistent runtime configuration file of this node, or why it
    /// keeps none.
    fn persistent_path(&self) -> Result<std::path::PathBuf, Response> {
        let config = self.shared.config();
        let enabled = config
            .bool("ENABLE_PERSISTENT_CONFIG")
            .ok()
            .flatten()
            .unwrap_or(false);
        let dir = config.text("PERSISTENT_CONFIG_DIR").ok().flatten();
        match dir {
            Some(d) if enabled && !d.trim().is_empty() => {
                let scope = Scope {
                    subsys: Some("STARTD".into()),
                    localname: None,
                };
                Ok(std::path::PathBuf::from(persistent_file(&d, &scope)))
            }
            _ => Err(Response::refused(
                "this node keeps no persistent runtime configuration \
                 (ENABLE_PERSISTENT_CONFIG is not true, or PERSISTENT_CONFIG_DIR is unset)",
            )),
        }
    }

    /// Changes the persistent runtime configuration and reconfigures; the
    /// old file is put back when the new configuration does not read. The
    /// file is read, written and synced on a blocking thread, not the
    /// node's; `send` gets the answer.
    fn runtime_config(
        &self,
        set: Vec<String>,
        unset: Vec<String>,
        send: impl FnOnce(Response) + 'static,
        ctx: &mut Context<NodeActor>,
    ) {
        let path = match self.persistent_path() {
            Ok(p) => p,
            Err(refused) => return send(refused),
        };
        let file = path.clone();
        let edit = tokio::task::spawn_blocking(move || edit_file(&file, &set, &unset));
        ctx.spawn(edit.into_actor(self).map(move |edited, act, _| {
            let old = match edited {
                Ok(Ok(old)) => old,
                Ok(Err(e)) => return send(Response::refused(e.to_string())),
                Err(e) => {
                    return send(Response::refused(format!(
                        "cannot edit {}: {e}",
                        path.display()
                    )));
                }
            };
            let answer = act.reconfig();
            if !answer.ok {
                // Put back on a blocking thread; the answer does not wait.
                tokio::task::spawn_blocking(move || {
                    let back = match &old {
                        Some(t) => write_durably(&path, t),
                        None => std::fs::remove_file(&path),
                    };
                    if let Err(e) = back {
                        warn!(message = "Cannot put the persistent configuration back.",
                            file = %path.display(), error = %e);
                    }
                });
            }
            send(answer);
        }));
    }
}

/// Why the persistent file cannot be changed.
#[derive(Debug, thiserror::Error)]
enum EditError {
    /// It cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A statement cannot go into it.
    #[error(transparent)]
    Statement(#[from] crate::config::StatementError),
    /// It cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Edits the persistent file at `path` (`set` and `unset` knobs) and
/// writes it durably; returns what it held before (`None`: no file), or
/// why it cannot.
fn edit_file(
    path: &std::path::Path,
    set: &[String],
    unset: &[String],
) -> Result<Option<String>, EditError> {
    let old = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(EditError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let new = edit_persistent(old.as_deref().unwrap_or(""), set, unset)?;
    write_durably(path, &new).map_err(|source| EditError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(old)
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
                self.runtime_config(set, unset, send, ctx);
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
