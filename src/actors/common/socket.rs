//! What the daemons' sockets share: binding one (owner-only, or open to
//! every local user for the schedd's, whose callers are told apart by
//! their credentials), reading a connection's one JSON request line
//! within a time and size limit, answering it with one line, and serving
//! `log` requests from the event log on a blocking thread.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::admin::{MAX_LOG_BATCH, Response};
use crate::events::{EventRead, SledReader};

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

/// Writes `response` as the connection's one answer line and closes it.
pub(crate) async fn answer(mut stream: UnixStream, response: &Response) {
    let mut text = serde_json::to_string(response).unwrap_or_else(|_| {
        r#"{"ok":false,"message":"the answer could not be encoded"}"#.to_string()
    });
    text.push('\n');
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}
