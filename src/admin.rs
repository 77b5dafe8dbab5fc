//! The admin socket's protocol: one JSON request line from the client, one
//! JSON response line from the daemon, over a Unix socket only the daemon's
//! user (and root) may use. Shared by the daemon's server
//! (`actors::admin`) and the `roost status`/`who`/`vacate`/`drain`/`off`/
//! `reconfig` commands, which use [`call`].

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::policy::engine::{DrainHow, OnCompletion};

/// The knob naming the socket; by default `$(LOCK)/roost_startd.sock`.
pub const SOCKET_KNOB: &str = "ROOST_ADMIN_SOCKET";

/// Longest request line the daemon reads.
pub const MAX_REQUEST: usize = 64 * 1024;

/// What a client asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Request {
    /// Every slot's public ad.
    Status,
    /// Vacate one slot (by id or name) or every slot.
    Vacate {
        /// `slot1`, `slot1_2` or `slot1@host`; none: all.
        #[serde(default)]
        slot: Option<String>,
        /// Hard-kill at once rather than retire (`condor_vacate -fast`).
        #[serde(default)]
        fast: bool,
    },
    /// Drain the machine.
    Drain {
        /// How running jobs go.
        how: DrainHow,
        /// `DrainReason` (default "by command").
        #[serde(default)]
        reason: Option<String>,
        /// START while draining (default: accept nothing).
        #[serde(default)]
        start: Option<String>,
        /// Must be true in every slot, else the drain is refused.
        #[serde(default)]
        check: Option<String>,
        /// What happens once everything is drained.
        #[serde(default)]
        on_completion: OnCompletion,
    },
    /// Cancel the drain (only the one with this request id, if given).
    CancelDrain {
        /// `DrainingRequestId`.
        #[serde(default)]
        request_id: Option<String>,
    },
    /// Shut the daemon down.
    Off {
        /// Peaceful, graceful or fast.
        how: DrainHow,
    },
    /// Re-read the configuration.
    Reconfig,
    /// Run these startd cron or benchmark jobs now (by name; none: every
    /// `OnDemand` one).
    CronRun {
        /// The jobs' names, in any case.
        #[serde(default)]
        jobs: Vec<String>,
    },
    /// A starter whose daemon went away asks this daemon to take it
    /// (`roost starter`, never a user): the connection then carries its
    /// reports and the daemon's commands.
    Attach {
        /// Who it is and what it reported.
        hello: crate::starter::protocol::Hello,
    },
    /// Events of the log from sequence number `from` on (at most `limit`,
    /// and at most [`MAX_LOG_BATCH`]), only `actor`'s if given: how
    /// `roost-log` reads the log while the daemon holds it.
    Log {
        /// The first sequence number wanted.
        from: u64,
        /// Only this actor's events.
        #[serde(default)]
        actor: Option<String>,
        /// At most this many.
        #[serde(default)]
        limit: Option<usize>,
    },
}

/// The most events one `log` answer carries.
pub const MAX_LOG_BATCH: usize = 5000;

/// What the daemon answers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Whether the request was carried out.
    pub ok: bool,
    /// What was done, or why not.
    #[serde(default)]
    pub message: String,
    /// Slot ads (canonical new syntax), for `status`.
    #[serde(default)]
    pub ads: Vec<String>,
    /// For `log`: the events, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::events::Envelope>,
    /// For `log`: the sequence number of the last event in the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<u64>,
}

impl Response {
    /// A success.
    pub fn done(message: impl Into<String>) -> Response {
        Response {
            ok: true,
            message: message.into(),
            ads: Vec::new(),
            events: Vec::new(),
            last_seq: None,
        }
    }

    /// A refusal.
    pub fn refused(message: impl Into<String>) -> Response {
        Response {
            ok: false,
            message: message.into(),
            ads: Vec::new(),
            events: Vec::new(),
            last_seq: None,
        }
    }
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// No daemon listens there.
    #[error(
        "no Roost daemon is listening on {path} ({source}); is the daemon running with this configuration?"
    )]
    NotRunning {
        /// The socket.
        path: PathBuf,
        /// The connect error.
        source: std::io::Error,
    },
    /// The socket is not ours to use.
    #[error(
        "permission denied on {path}: the admin socket belongs to {owner}; run this command as that user or as root"
    )]
    Permission {
        /// The socket.
        path: PathBuf,
        /// Its owner.
        owner: String,
    },
    /// The daemon closed the connection without answering.
    #[error("admin socket {path}: the daemon closed the connection without an answer")]
    NoAnswer {
        /// The socket.
        path: PathBuf,
    },
    /// A request that cannot be written, or an answer that cannot be read.
    #[error("admin socket {path}: unreadable {what}: {source}")]
    Json {
        /// The socket.
        path: PathBuf,
        /// `request` or `answer`.
        what: &'static str,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// Talking to the daemon failed.
    #[error("admin socket {path}: {source}")]
    Io {
        /// The socket.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// The socket's path under `config`: [`SOCKET_KNOB`], else
/// `$(LOCK)/roost_startd.sock`, else `$(LOG)/roost_startd.sock`.
pub fn socket_path(config: &Config) -> Option<PathBuf> {
    socket_path_of(config, SOCKET_KNOB, "roost_startd.sock")
}

/// A daemon's socket under `config`: the knob `knob`, else `file` in
/// `LOCK`, else in `LOG`.
pub fn socket_path_of(config: &Config, knob: &str, file: &str) -> Option<PathBuf> {
    let get = |k: &str| {
        config
            .get(k)
            .ok()
            .flatten()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(p) = get(knob) {
        return Some(PathBuf::from(p));
    }
    get("LOCK")
        .or_else(|| get("LOG"))
        .map(|d| Path::new(&d).join(file))
}

fn owner_of(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(m.uid())) {
            Ok(Some(u)) => format!("{} (uid {})", u.name, m.uid()),
            _ => format!("uid {}", m.uid()),
        },
        Err(_) => "another user".into(),
    }
}

/// Sends `request` to the daemon at `path` and returns its answer.
pub fn call(path: &Path, request: &Request, timeout: Duration) -> Result<Response, AdminError> {
    call_with(path, request, timeout)
}

/// Sends any request to a Roost daemon's socket at `path` and reads its
/// answer (the schedd's socket speaks its own requests).
pub fn call_with<Q: Serialize, A: serde::de::DeserializeOwned>(
    path: &Path,
    request: &Q,
    timeout: Duration,
) -> Result<A, AdminError> {
    let io = |source: std::io::Error| AdminError::Io {
        path: path.to_path_buf(),
        source,
    };
    let stream = UnixStream::connect(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => AdminError::Permission {
            path: path.to_path_buf(),
            owner: owner_of(path),
        },
        _ => AdminError::NotRunning {
            path: path.to_path_buf(),
            source: e,
        },
    })?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    let mut line = serde_json::to_string(request).map_err(|source| AdminError::Json {
        path: path.to_path_buf(),
        what: "request",
        source,
    })?;
    line.push('\n');
    // A daemon that refuses may answer before reading everything: its
    // answer is still there to read.
    let written = (&stream).write_all(line.as_bytes());
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).map_err(io)?;
    if answer.trim().is_empty() {
        written.map_err(io)?;
        return Err(AdminError::NoAnswer {
            path: path.to_path_buf(),
        });
    }
    serde_json::from_str(&answer).map_err(|source| AdminError::Json {
        path: path.to_path_buf(),
        what: "answer",
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A starter that lost its daemon speaks its own protocol's line,
    /// which this protocol reads as `Attach`.
    #[test]
    fn a_starters_attach_call_is_an_attach_request() {
        let hello = crate::starter::protocol::Hello {
            protocol: crate::starter::protocol::PROTOCOL,
            build: "b".into(),
            pid: 41,
            started: 7,
            actor: "starter-slot1-3".into(),
            go: true,
            reports: vec![crate::starter::protocol::Report::Done],
        };
        let call = crate::starter::protocol::AttachCall::Attach {
            hello: hello.clone(),
        };
        let line = serde_json::to_string(&call).expect("json");
        let read: Request = serde_json::from_str(&line).expect("an admin request");
        assert!(matches!(read, Request::Attach { hello: h } if h == hello));
    }

    #[test]
    fn requests_are_tagged_json() {
        let r = Request::Drain {
            how: DrainHow::Quick,
            reason: Some("kernel update".into()),
            start: None,
            check: Some("Cpus > 0".into()),
            on_completion: OnCompletion::Resume,
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"command":"drain","how":"Quick","reason":"kernel update","start":null,"check":"Cpus > 0","on_completion":"resume"}"#
        );
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), r);
        let v: Request = serde_json::from_str(r#"{"command":"vacate"}"#).unwrap();
        assert_eq!(
            v,
            Request::Vacate {
                slot: None,
                fast: false
            }
        );
        assert!(serde_json::from_str::<Request>(r#"{"command":"format_disk"}"#).is_err());
    }

    #[test]
    fn socket_defaults_to_lock_then_log() {
        use crate::config::{LoadInput, Root, Scope, load};
        struct OneFile(String);
        impl crate::config::Files for OneFile {
            fn read(&self, _: &str) -> Result<Vec<u8>, crate::config::SourceError> {
                Ok(self.0.as_bytes().to_vec())
            }
            fn run(&self, _: &str) -> Result<Vec<u8>, crate::config::SourceError> {
                Err(crate::config::SourceError::Unavailable("no commands here"))
            }
            fn list_dir(&self, _: &str) -> Result<Vec<String>, crate::config::SourceError> {
                Ok(Vec::new())
            }
        }
        let cfg = |text: &str| {
            let input = LoadInput {
                root: Root::File("root".into()),
                scope: Scope::default(),
                attributes: vec![],
                specials: vec![],
                env: vec![],
                now: 0,
            };
            load(&input, &OneFile(text.into())).unwrap()
        };
        assert_eq!(
            socket_path(&cfg("LOG = /l\nLOCK = /k\n")),
            Some(PathBuf::from("/k/roost_startd.sock"))
        );
        assert_eq!(
            socket_path(&cfg("LOG = /l\nLOCK =\n")),
            Some(PathBuf::from("/l/roost_startd.sock"))
        );
        assert_eq!(
            socket_path(&cfg("LOG = /l\nROOST_ADMIN_SOCKET = /run/r.sock\n")),
            Some(PathBuf::from("/run/r.sock"))
        );
    }
}
