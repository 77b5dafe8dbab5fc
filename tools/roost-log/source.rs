//! Where `roost-log` reads events: the log directory itself when no one
//! holds it, else the daemon that does, through its admin socket (sled
//! lets one process open a database; the daemon names its socket in
//! `daemon.socket` beside the log).

use std::path::{Path, PathBuf};
use std::time::Duration;

use roost::admin::{MAX_LOG_BATCH, Request, call};
use roost::events::{DAEMON_SOCKET_FILE, Envelope, EventRead, SledStore, StoreError};

/// An open event log.
pub enum Source {
    /// Opened directly.
    Local(SledStore),
    /// Read through the daemon holding it.
    Remote(PathBuf),
}

type Item = Result<Envelope, StoreError>;

impl Source {
    /// Opens the log in `dir`: through the daemon if one is running on it,
    /// else directly. Never creates a log.
    pub fn open(dir: &Path) -> Result<Source, String> {
        if !dir.join("db").is_file() {
            return Err(format!("{}: no event log here", dir.display()));
        }
        if let Ok(text) = std::fs::read_to_string(dir.join(DAEMON_SOCKET_FILE)) {
            let socket = PathBuf::from(text.trim());
            let probe = Request::Log {
                from: u64::MAX,
                actor: None,
                limit: Some(1),
            };
            match call(&socket, &probe, Duration::from_secs(10)) {
                Ok(r) if r.ok => return Ok(Source::Remote(socket)),
                Ok(r) => return Err(format!("the daemon on {}: {}", socket.display(), r.message)),
                // A pointer left by a daemon that died: read directly.
                Err(roost::admin::AdminError::NotRunning { .. }) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        SledStore::open(dir)
            .map(Source::Local)
            .map_err(|e| e.to_string())
    }

    /// Every event from `from` on (one actor's if given), in order.
    pub fn read<'a>(
        &'a self,
        from: u64,
        actor: Option<&str>,
    ) -> Box<dyn Iterator<Item = Item> + 'a> {
        match self {
            Source::Local(s) => match actor {
                Some(a) => s.read_actor(a, from),
                None => s.read_from(from),
            },
            Source::Remote(socket) => Box::new(Pages {
                socket: socket.clone(),
                actor: actor.map(str::to_string),
                next: from,
                page: Vec::new().into_iter(),
                done: false,
            }),
        }
    }

    /// The sequence number of the last event (0: empty).
    pub fn last_seq(&self) -> u64 {
        match self {
            Source::Local(s) => roost::events::EventStore::next_seq(s).saturating_sub(1),
            Source::Remote(socket) => {
                let req = Request::Log {
                    from: u64::MAX,
                    actor: None,
                    limit: Some(1),
                };
                call(socket, &req, Duration::from_secs(10))
                    .ok()
                    .and_then(|r| r.last_seq)
                    .unwrap_or(0)
            }
        }
    }
}

/// Pages of events asked of the daemon.
struct Pages {
    socket: PathBuf,
    actor: Option<String>,
    next: u64,
    page: std::vec::IntoIter<Envelope>,
    done: bool,
}

impl Iterator for Pages {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        if let Some(e) = self.page.next() {
            self.next = e.seq + 1;
            return Some(Ok(e));
        }
        if self.done {
            return None;
        }
        let req = Request::Log {
            from: self.next,
            actor: self.actor.clone(),
            limit: Some(MAX_LOG_BATCH),
        };
        match call(&self.socket, &req, Duration::from_secs(30)) {
            Ok(r) if r.ok => {
                if r.events.len() < MAX_LOG_BATCH {
                    self.done = true;
                }
                self.page = r.events.into_iter();
                let e = self.page.next()?;
                self.next = e.seq + 1;
                Some(Ok(e))
            }
            Ok(r) => {
                self.done = true;
                Some(Err(StoreError::Remote(r.message)))
            }
            Err(e) => {
                self.done = true;
                Some(Err(StoreError::Reader(Box::new(e))))
            }
        }
    }
}
