//! The admin socket's server: accepts connections on the daemon's Unix
//! socket, lets only the daemon's own user and root in (the socket is mode
//! 0600, and the caller's credentials are checked again), reads one JSON
//! request, hands it to the supervisor and writes its answer.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use actix::prelude::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tracing::{info, warn};

use super::node::{Control, DrainRequest, NodeActor};
use crate::admin::{MAX_REQUEST, Request, Response};

/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds the admin socket at `path`, owner-only. A socket left by a daemon
/// that died is replaced; one a live daemon answers on is an error.
pub fn bind(path: &Path) -> Result<std::os::unix::net::UnixListener, String> {
    let shown = path.display();
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(format!(
                "another roost startd is already serving {shown}; stop it first"
            ));
        }
        std::fs::remove_file(path).map_err(|e| format!("cannot replace {shown}: {e}"))?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    use nix::sys::stat::{Mode, umask};
    let old = umask(Mode::from_bits_truncate(0o177));
    let bound = std::os::unix::net::UnixListener::bind(path);
    umask(old);
    let listener = bound.map_err(|e| format!("cannot listen on {shown}: {e}"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restrict {shown}: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("{shown}: {e}"))?;
    Ok(listener)
}

/// Serves the socket until the actor system stops.
pub async fn serve(listener: std::os::unix::net::UnixListener, node: Addr<NodeActor>) {
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
                actix::spawn(connection(stream, node.clone(), me));
            }
            Err(e) => {
                warn!(message = "Admin socket accept failed.", error = %e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The supervisor's command for a request.
pub fn control_of(req: Request) -> Control {
    match req {
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
    }
}

async fn read_request(stream: &mut UnixStream) -> Result<Request, String> {
    let mut line = String::new();
    let limit = u64::try_from(MAX_REQUEST).unwrap_or(u64::MAX);
    let mut reader = BufReader::new(stream).take(limit);
    match tokio::time::timeout(READ_TIMEOUT, reader.read_line(&mut line)).await {
        Err(_) => return Err("no request within 10 seconds".into()),
        Ok(Err(e)) => return Err(format!("cannot read the request: {e}")),
        Ok(Ok(_)) => {}
    }
    if !line.ends_with('\n') && line.len() >= MAX_REQUEST {
        return Err(format!("request longer than {MAX_REQUEST} bytes"));
    }
    serde_json::from_str(line.trim()).map_err(|e| format!("malformed request: {e}"))
}

async fn connection(mut stream: UnixStream, node: Addr<NodeActor>, me: u32) {
    // The request is read whoever calls, so a refused caller reads the
    // refusal rather than a broken pipe.
    let request = read_request(&mut stream).await;
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
            Response::refused(e)
        }
        (Ok(c), Ok(req)) => {
            info!(message = "Admin command.", uid = c.uid(), request = ?req);
            match node.send(control_of(req)).await {
                Ok(r) => r,
                Err(_) => Response::refused("the daemon is stopping"),
            }
        }
    };
    let mut text = serde_json::to_string(&response).unwrap_or_else(|_| {
        r#"{"ok":false,"message":"the answer could not be encoded"}"#.to_string()
    });
    text.push('\n');
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}
