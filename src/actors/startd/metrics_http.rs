//! The metrics endpoint (`ROOST_METRICS`): `GET /metrics` answers the
//! registry (`crate::metrics`) in the OpenMetrics text format Prometheus
//! scrapes; anything else is a 404. One request per connection, read with
//! a deadline and a size limit, so a client that stalls or sends garbage
//! costs a task for a few seconds and nothing else.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracing::{debug, info, warn};

/// The most of a request the server reads before answering.
const MAX_REQUEST: usize = 8 * 1024;
/// How long a client has to send its request.
const READ_DEADLINE: Duration = Duration::from_secs(5);

/// Binds the endpoint; the daemon goes on without it when it cannot.
pub fn bind(addr: std::net::SocketAddr) -> Option<std::net::TcpListener> {
    match std::net::TcpListener::bind(addr) {
        Ok(l) => {
            let _ = l.set_nonblocking(true);
            info!(message = "Serving metrics.", address = %l.local_addr().map_or(addr, |a| a), path = "/metrics");
            Some(l)
        }
        Err(e) => {
            warn!(message = "Cannot serve metrics; going on without them.", address = %addr, error = %e);
            None
        }
    }
}

/// Answers scrapes until the runtime ends (inside the runtime).
pub async fn serve(listener: std::net::TcpListener) {
    let listener = match TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            warn!(message = "Cannot serve metrics.", error = %e);
            return;
        }
    };
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tokio::spawn(async move {
                    if let Err(e) = answer(stream).await {
                        debug!(message = "A metrics request failed.", peer = %peer, error = %e);
                    }
                });
            }
            Err(e) => {
                warn!(message = "Cannot accept a metrics connection.", error = %e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(READ_DEADLINE, async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
    if !matches!(read, Ok(Ok(()))) {
        return Ok(());
    }
    let (status, kind, body) = route(&head);
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// The status line, content type and body for a request head (pure but
/// for reading the registry).
fn route(head: &[u8]) -> (&'static str, &'static str, String) {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut words = line.split(|&b| b == b' ');
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    match (method, path) {
        (b"GET", b"/metrics") => (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            crate::metrics::global().encode(),
        ),
        (b"GET", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "roost startd: the metrics are at /metrics\n".into(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET\n".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_metrics_answers_the_registry() {
        let (status, kind, body) = route(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(status, "200 OK");
        assert!(kind.starts_with("application/openmetrics-text"));
        assert!(body.contains("# TYPE roost_jobs_started counter"), "{body}");
        assert!(body.ends_with("# EOF\n"), "{body}");
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.1\r\n\r\n").0, "200 OK");
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n").0, "404 Not Found");
        assert_eq!(
            route(b"POST /metrics HTTP/1.1\r\n\r\n").0,
            "405 Method Not Allowed"
        );
        assert_eq!(route(b"\xff\xfe garbage").0, "405 Method Not Allowed");
    }
}
