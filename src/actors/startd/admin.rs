//! The admin socket's server: accepts connections on the daemon's Unix
//! socket, lets only the daemon's own user and root in (the socket is mode
//! 0600, and the caller's credentials are checked again), reads one JSON
//! request, hands it to the supervisor (or, for `log`, reads the event
//! log on a blocking thread) and writes its answer.

use std::time::Duration;

use actix::prelude::*;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tracing::{debug, info, warn};

use super::messages::{Attach, Called, Waiting};
use super::node::{Control, DrainRequest, NodeActor};
use crate::actors::common::socket::{answer, read_request, serve_log};
use crate::admin::{MAX_REQUEST, Request, Response};
use crate::events::SledReader;
use crate::starter::protocol::{Attached, Hello};

/// Serves the socket until the actor system stops.
pub async fn serve(
    listener: std::os::unix::net::UnixListener,
    node: Addr<NodeActor>,
    log: SledReader,
    waiting: Waiting,
) {
    let listener = match tokio::net::UnixListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            warn!(message = "Cannot serve the admin socket.", error = %e);
            return;
        }
    };
    let me = nix::unistd::geteuid().as_raw();
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                actix::spawn(connection(
                    stream,
                    node.clone(),
                    log.clone(),
                    waiting.clone(),
                    me,
                ));
            }
            Err(e) => {
                warn!(message = "Admin socket accept failed.", error = %e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The supervisor's command for a request (`log` has none: the server
/// answers it).
pub fn control_of(req: Request) -> Option<Control> {
    Some(match req {
        Request::Status => Control::Status,
        Request::Vacate { slot, fast } => Control::Vacate(slot, fast),
        Request::Drain {
            how,
            reason,
            start,
            check,
            on_completion,
        } => Control::Drain(DrainRequest {
            how,
            reason,
            start,
            check,
            on_completion,
        }),
        Request::CancelDrain { request_id } => Control::CancelDrain(request_id),
        Request::Off { how } => Control::Off(how),
        Request::Reconfig => Control::Reconfig,
        Request::CronRun { jobs } => Control::CronRun(jobs),
        Request::Log { .. } | Request::Attach { .. } => return None,
    })
}

/// The client's request; `Ok(None)` when it closed without sending a byte
/// (a liveness probe: another `roost startd` checking whether this one
/// answers on the socket).
/// Hands a starter of the last run that called to the actor waiting for
/// it, or tells it it is not taken. The actor may not have started yet
/// when the call comes (the socket is served from the start): the caller
/// waits a little for it.
async fn attach(mut stream: UnixStream, hello: Hello, waiting: &Waiting) {
    for _ in 0..100 {
        match waiting.called(hello.pid) {
            Called::Taken(actor) => {
                if let Err(e) = actor.try_send(Attach { hello, stream }) {
                    warn!(message = "The starter's actor is gone.", error = %e);
                }
                return;
            }
            Called::Early => tokio::time::sleep(Duration::from_millis(50)).await,
            Called::Unknown => break,
        }
    }
    info!(message = "A starter this daemon does not wait for called; it is told to leave.",
        pid = hello.pid, actor = %hello.actor);
    let answer = Attached::Abandon {
        reason: format!(
            "this daemon does not run starter {} (pid {}): its claim has ended",
            hello.actor, hello.pid
        ),
    };
    let mut text = serde_json::to_string(&answer).unwrap_or_default();
    text.push('\n');
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn connection(
    mut stream: UnixStream,
    node: Addr<NodeActor>,
    log: SledReader,
    waiting: Waiting,
    me: u32,
) {
    // The request is read whoever calls, so a refused caller reads the
    // refusal rather than a broken pipe.
    let request = match read_request(&mut stream, MAX_REQUEST).await {
        Ok(None) => {
            debug!(message = "Admin connection closed without a request.");
            return;
        }
        Ok(Some(r)) => Ok(r),
        Err(e) => Err(e),
    };
    let response = match (stream.peer_cred(), request) {
        (Ok(c), _) if c.uid() != me && c.uid() != 0 => {
            warn!(
                message = "Admin request from another user refused.",
                uid = c.uid()
            );
            Response::refused(format!(
                "permission denied: uid {} is neither the daemon's user (uid {me}) nor root",
                c.uid()
            ))
        }
        (Err(e), _) => Response::refused(format!("cannot identify the caller: {e}")),
        (Ok(c), Err(e)) => {
            warn!(message = "Admin request refused.", uid = c.uid(), error = %e);
            Response::refused(e.to_string())
        }
        (Ok(c), Ok(Request::Attach { hello })) => {
            if c.pid().and_then(|p| u32::try_from(p).ok()) == Some(hello.pid) {
                return attach(stream, hello, &waiting).await;
            }
            warn!(message = "A caller claiming to be a starter refused.",
                pid = ?c.pid(), claimed = hello.pid);
            Response::refused("the hello's pid is not the caller's")
        }
        (Ok(_), Ok(Request::Log { from, actor, limit })) => {
            serve_log(log, from, actor, limit).await
        }
        (Ok(c), Ok(req)) => {
            info!(message = "Admin command.", uid = c.uid(), request = ?req);
            match control_of(req) {
                Some(c) => match node.send(c).await {
                    Ok(r) => r,
                    Err(_) => Response::refused("the daemon is stopping"),
                },
                None => Response::refused("not a supervisor command"),
            }
        }
    };
    answer(stream, &response).await;
}
