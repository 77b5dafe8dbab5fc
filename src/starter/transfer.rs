//! The node's side of file transfer (`transfer::wire`): the starter
//! fetches the job's inputs from the schedd's file server into the
//! sandbox before the job runs, and sends its outputs back after. Blocking
//! I/O, run on a thread of its own. A connection that breaks is made again
//! and the transfer goes on where it stopped: an input from the bytes the
//! sandbox already has, an output from what the server says it has.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::transfer::wire::{self, Ask, Hello, MAX_LINE, Said};
use crate::transfer::{Entry, Kind};

/// How long a connection may stay silent before it is given up (and made
/// again).
const SILENCE: Duration = Duration::from_secs(60);

/// How many times a broken connection is made again, a few seconds apart.
const RETRIES: u32 = 10;

/// Why a transfer failed.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// The server refused (the lease ended, a file is missing, …).
    #[error("the submit machine refused: {0}")]
    Refused(String),
    /// The connection or a file failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The other side said something that is not the protocol.
    #[error("the submit machine's file server: {0}")]
    Protocol(String),
    /// An input whose URL this node does not fetch.
    #[error("{0}: this node fetches file:// and http:// URLs only")]
    Url(String),
    /// An http:// input could not be fetched.
    #[error("fetching {url}: {why}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong (the server's status, or the connection's error).
        why: String,
    },
    /// The starter cut the transfer short (the job is vacated).
    #[error("cut short")]
    Cancelled,
}

/// Copies `len` bytes from `from` to `to` a block at a time, stopping when
/// `cancel` is set; how many were copied.
fn copy_some(
    from: &mut impl Read,
    to: &mut impl Write,
    len: u64,
    cancel: &AtomicBool,
) -> Result<u64, TransferError> {
    let mut buf = vec![0u8; 1 << 18];
    let mut done = 0u64;
    while done < len {
        if cancel.load(Ordering::Relaxed) {
            return Err(TransferError::Cancelled);
        }
        let want = usize::try_from((len - done).min(buf.len() as u64)).unwrap_or(buf.len());
        let n = match from.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io("the transfer")(e)),
        };
        to.write_all(&buf[..n]).map_err(io("the transfer"))?;
        done += n as u64;
    }
    Ok(done)
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> TransferError {
    let what = what.into();
    move |source| TransferError::Io { what, source }
}

/// One conversation with the server.
struct Session<'a> {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    cancel: &'a AtomicBool,
}

impl<'a> Session<'a> {
    fn open(
        address: &str,
        hello: &Hello,
        cancel: &'a AtomicBool,
    ) -> Result<Session<'a>, TransferError> {
        let addr = (address.to_socket_addrs())
            .map_err(io(format!("the file server's address {address}")))?
            .next()
            .ok_or_else(|| TransferError::Protocol(format!("{address} names no address")))?;
        let stream = TcpStream::connect_timeout(&addr, SILENCE)
            .map_err(io(format!("connecting to {address}")))?;
        let _ = stream.set_read_timeout(Some(SILENCE));
        let _ = stream.set_write_timeout(Some(SILENCE));
        let _ = stream.set_nodelay(true);
        let writer = stream.try_clone().map_err(io("the connection"))?;
        let mut s = Session {
            reader: BufReader::with_capacity(1 << 16, stream),
            writer,
            cancel,
        };
        match s.ask(&Ask::Hello(hello.clone()))? {
            Said::Ok => Ok(s),
            other => Err(unexpected(other)),
        }
    }

    fn ask(&mut self, a: &Ask) -> Result<Said, TransferError> {
        self.writer
            .write_all(&wire::line(a))
            .map_err(io("sending to the file server"))?;
        self.said()
    }

    fn said(&mut self) -> Result<Said, TransferError> {
        let mut line = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .map_err(io("reading from the file server"))?;
        if n == 0 || line.last() != Some(&b'\n') {
            return Err(TransferError::Io {
                what: "reading from the file server".into(),
                source: std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed"),
            });
        }
        line.pop();
        match wire::parse::<Said>(&line).map_err(|e| TransferError::Protocol(e.to_string()))? {
            Said::Refused(why) => Err(TransferError::Refused(why)),
            s => Ok(s),
        }
    }

    /// Fetches every entry of the manifest into `sandbox`, going on from
    /// what it already has of each.
    fn fetch(&mut self, sandbox: &Path) -> Result<Vec<Entry>, TransferError> {
        let entries = match self.ask(&Ask::List)? {
            Said::Manifest(m) => m,
            other => return Err(unexpected(other)),
        };
        for e in &entries {
            if !crate::transfer::plan::safe(&e.name) {
                return Err(TransferError::Protocol(format!("unsafe name {:?}", e.name)));
            }
            let path = sandbox.join(&e.name);
            if e.kind == Kind::Dir {
                std::fs::create_dir_all(&path).map_err(io(format!("making {}", path.display())))?;
                continue;
            }
            let have = std::fs::metadata(&path).map_or(0, |m| m.len());
            if have == e.size && have > 0 {
                continue;
            }
            let offset = if have > e.size { 0 } else { have };
            let len = match self.ask(&Ask::Get {
                name: e.name.clone(),
                offset,
            })? {
                Said::Data { len } => len,
                other => return Err(unexpected(other)),
            };
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(offset == 0)
                .mode(0o600)
                .open(&path)
                .map_err(io(format!("writing {}", path.display())))?;
            if offset > 0 {
                use std::io::Seek;
                file.seek(std::io::SeekFrom::Start(offset))
                    .map_err(io(format!("writing {}", path.display())))?;
            }
            let copied = copy_some(&mut self.reader, &mut file, len, self.cancel)?;
            if copied < len {
                return Err(io(format!("receiving {}", e.name))(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed",
                )));
            }
            let _ = file.set_permissions(std::fs::Permissions::from_mode(e.mode & 0o7777));
        }
        Ok(entries)
    }

    /// Sends the sandbox file at `path` as output `name`, going on from
    /// what the server has of it; returns where it went.
    fn send(&mut self, name: &str, path: &Path) -> Result<String, TransferError> {
        let meta = std::fs::metadata(path).map_err(io(format!("reading {}", path.display())))?;
        let have = match self.ask(&Ask::Put {
            name: name.to_string(),
            size: meta.len(),
            mode: meta.permissions().mode() & 0o7777,
        })? {
            Said::Have { have } => have.min(meta.len()),
            other => return Err(unexpected(other)),
        };
        let mut file =
            std::fs::File::open(path).map_err(io(format!("reading {}", path.display())))?;
        {
            use std::io::Seek;
            file.seek(std::io::SeekFrom::Start(have))
                .map_err(io(format!("reading {}", path.display())))?;
        }
        let rest = meta.len() - have;
        let sent = copy_some(&mut file, &mut self.writer, rest, self.cancel)?;
        if sent < rest {
            return Err(TransferError::Protocol(format!(
                "{name} shrank while it was sent"
            )));
        }
        match self.said()? {
            Said::Stored { path } => Ok(path),
            other => Err(unexpected(other)),
        }
    }

    fn done(mut self) {
        let _ = self.writer.write_all(&wire::line(&Ask::Done));
    }
}

fn unexpected(said: Said) -> TransferError {
    TransferError::Protocol(format!("unexpected answer {said:?}"))
}

/// Whether a failure may pass if the connection is made again.
fn retriable(e: &TransferError) -> bool {
    matches!(e, TransferError::Io { .. })
}

/// Runs `step` over a session with the server at `address`, making the
/// connection again (a few seconds later) when it breaks.
fn with_session<T>(
    address: &str,
    hello: &Hello,
    cancel: &AtomicBool,
    mut step: impl FnMut(&mut Session) -> Result<T, TransferError>,
) -> Result<T, TransferError> {
    let mut tries = 0;
    loop {
        let r = Session::open(address, hello, cancel).and_then(|mut s| {
            let out = step(&mut s)?;
            s.done();
            Ok(out)
        });
        match r {
            Err(e) if retriable(&e) && tries < RETRIES => {
                tries += 1;
                super::run::log_line(&format!(
                    "file transfer broke ({e}); again in {} s",
                    2 * tries
                ));
                // Asleep a tenth of a second at a time: a cut is heard.
                for _ in 0..20 * tries {
                    if cancel.load(Ordering::Relaxed) {
                        return Err(TransferError::Cancelled);
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            r => return r,
        }
    }
}

/// Fetches the job's inputs from the server at `address` into `sandbox`,
/// and each URL input (`(url, name)`) itself; returns the manifest.
pub fn fetch_inputs(
    (address, hello): (&str, &Hello),
    sandbox: &Path,
    urls: &[(String, String)],
    cancel: &AtomicBool,
) -> Result<Vec<Entry>, TransferError> {
    for (url, name) in urls {
        fetch_url(url, &sandbox.join(name), cancel)?;
    }
    with_session(address, hello, cancel, |s| s.fetch(sandbox))
}

/// Sends `outputs` (each a name and the sandbox file) to the server at
/// `address`; returns where each went.
pub fn send_outputs(
    (address, hello): (&str, &Hello),
    outputs: &[(String, std::path::PathBuf)],
    cancel: &AtomicBool,
) -> Result<Vec<String>, TransferError> {
    let mut done: Vec<String> = Vec::new();
    with_session(address, hello, cancel, |s| {
        for (name, path) in &outputs[done.len()..] {
            let at = s.send(name, path)?;
            done.push(at);
        }
        Ok(())
    })?;
    Ok(done)
}

/// The URL schemes this node fetches itself (a slot's
/// `HasFileTransferPluginMethods`).
pub const METHODS: &str = "file,http";

/// Fetches a URL input the node reaches itself: `file://` (a path on the
/// node) or `http://` (a GET, its body written as it comes, cut short when
/// `cancel` is set; an answer other than 2xx fails with its status).
fn fetch_url(url: &str, to: &Path, cancel: &AtomicBool) -> Result<(), TransferError> {
    let scheme = crate::transfer::plan::scheme(url).map(str::to_ascii_lowercase);
    match scheme.as_deref() {
        Some("file") => {
            let path = url.split_once("://").map_or(url, |(_, p)| p);
            std::fs::copy(path, to).map_err(io(format!("copying {url}")))?;
            Ok(())
        }
        Some("http") => {
            let agent = ureq::AgentBuilder::new()
                .timeout_connect(SILENCE)
                .timeout_read(SILENCE)
                .build();
            let answer = agent.get(url).call().map_err(|e| TransferError::Http {
                url: url.to_string(),
                why: e.to_string(),
            })?;
            let mut body = answer.into_reader();
            let mut file =
                std::fs::File::create(to).map_err(io(format!("writing {}", to.display())))?;
            copy_some(&mut body, &mut file, u64::MAX, cancel)?;
            Ok(())
        }
        _ => Err(TransferError::Url(url.to_string())),
    }
}
