//! The admin socket's server: accepts connections on the daemon's Unix
//! socket, lets only the daemon's own user and root in (the socket is mode
//! 0600, and the caller's credentials are checked again), reads one JSON
//! request, hands it to the supervisor (or, for `log`, reads the event
//! log on a blocking thread) and writes its answer.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use actix::prelude::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tracing::{debug, info, warn};

use super::messages::{Attach, Waiting};
use super::node::{Control, DrainRequest, NodeActor};
use crate::admin::{MAX_LOG_BATCH, MAX_REQUEST, Request, Response};
use crate::events::{EventRead, SledReader};
use crate::starter::protocol::{Attached, Hello};

/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds the admin socket at `path`, owner-only. A socket left by a daemon
/// that died is replaced; one a live daemon answers on is an error.
pub fn bind(path: &Path) -> Result<std::os::unix::net::UnixListener, BindError> {
    bind_mode(path, 0o600)
}

/// As [`bind`], with the socket's mode `mode` (`roost schedd`'s is open to
/// every local user: it tells them apart by their credentials).
pub fn bind_mode(path: &Path, mode: u32) -> Result<std::os::unix::net::UnixListener, BindError> {
    let at = |what: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| BindError::Io { what, path, source }
    };
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(BindError::Served(path.to_path_buf()));
        }
        std::fs::remove_file(path).map_err(at("cannot replace", path))?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(at("cannot create", dir))?;
    }
    use nix::sys::stat::{Mode, umask};
    let old = umask(Mode::from_bits_truncate(0o177));
    let bound = std::os::unix::net::UnixListener::bind(path);
    umask(old);
    let listener = bound.map_err(at("cannot listen on", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(at("cannot restrict", path))?;
    listener
        .set_nonblocking(true)
        .map_err(at("cannot make non-blocking", path))?;
    Ok(listener)
}

/// Why the admin socket cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// Another daemon answers on it.
    #[error("another Roost daemon is already serving {}; stop it first", .0.display())]
    Served(std::path::PathBuf),
    /// A file operation failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

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
/// Why a request was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestError {
    /// Nothing came in time.
    #[error("no request within {} seconds", READ_TIMEOUT.as_secs())]
    Timeout,
    /// The socket failed.
    #[error("cannot read the request: {0}")]
    Read(#[source] std::io::Error),
    /// The line did not end within the limit.
    #[error("request longer than {0} bytes")]
    TooLong(usize),
    /// The line is not a request.
    #[error("malformed request: {0}")]
    Malformed(#[source] serde_json::Error),
}

pub(crate) async fn read_request<R: serde::de::DeserializeOwned>(
    stream: &mut UnixStream,
    max: usize,
) -> Result<Option<R>, RequestError> {
    let mut line = String::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX);
    let mut reader = BufReader::new(stream).take(limit);
    match tokio::time::timeout(READ_TIMEOUT, reader.read_line(&mut line)).await {
        Err(_) => return Err(RequestError::Timeout),
        Ok(Err(e)) => return Err(RequestError::Read(e)),
        Ok(Ok(0)) => return Ok(None),
        Ok(Ok(_)) => {}
    }
    if !line.ends_with('\n') && line.len() >= max {
        return Err(RequestError::TooLong(max));
    }
    serde_json::from_str(line.trim())
        .map(Some)
        .map_err(RequestError::Malformed)
}

/// Hands a starter of the last run that called to the actor waiting for
/// it, or tells it it is not taken. The actor may not have started yet
/// when the call comes (the socket is served from the start): the caller
/// waits a little for it.
async fn attach(mut stream: UnixStream, hello: Hello, waiting: &Waiting) {
    for _ in 0..100 {
        let entry = waiting.borrow().get(&hello.pid).cloned();
        match entry {
            Some(Some(actor)) => {
                waiting.borrow_mut().remove(&hello.pid);
                if let Err(e) = actor.try_send(Attach { hello, stream }) {
                    warn!(message = "The starter's actor is gone.", error = %e);
                }
                return;
            }
            Some(None) => tokio::time::sleep(Duration::from_millis(50)).await,
            None => break,
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

/// A `log` request's answer, read on a blocking thread: up to `limit`
/// events (at most [`MAX_LOG_BATCH`]) from `from` on, one actor's if given.
pub(crate) async fn serve_log(
    log: SledReader,
    from: u64,
    actor: Option<String>,
    limit: Option<usize>,
) -> Response {
    let read = tokio::task::spawn_blocking(move || {
        read_log(&log, from, actor.as_deref(), limit.unwrap_or(MAX_LOG_BATCH))
    });
    read.await
        .unwrap_or_else(|e| Response::refused(format!("reading the log failed: {e}")))
}

/// Up to `limit` events from `from` on (one actor's if given).
fn read_log(log: &SledReader, from: u64, actor: Option<&str>, limit: usize) -> Response {
    let items = match actor {
        Some(a) => log.read_actor(a, from),
        None => log.read_from(from),
    };
    let mut events = Vec::new();
    for item in items.take(limit.clamp(1, MAX_LOG_BATCH)) {
        match item {
            Ok(e) => events.push(e),
            // The reader sees the damage the way a local reader would.
            Err(e) if events.is_empty() => return Response::refused(e.to_string()),
            Err(_) => break,
        }
    }
    Response {
        events,
        last_seq: Some(log.last_seq()),
        ..Response::done("")
    }
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

/// Writes `response` as the connection's one answer line and closes it.
pub(crate) async fn answer(mut stream: UnixStream, response: &Response) {
    let mut text = serde_json::to_string(response).unwrap_or_else(|_| {
        r#"{"ok":false,"message":"the answer could not be encoded"}"#.to_string()
    });
    text.push('\n');
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}
