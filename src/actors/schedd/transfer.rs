//! The schedd's file server (`transfer::wire`): a starter that holds a
//! job's lease fetches the job's inputs and sends back its outputs over
//! TCP (`ROOST_SCHEDD_TRANSFER_ADDRESS`). The first line is read on the
//! actors' runtime and checked against the queue (the job and its lease's
//! token, [`TransferGrant`]); the rest runs on a thread of its own, its
//! file accesses as the job's owner when the schedd is root. An output is
//! written beside its destination (`.<name>.roost-part`) and renamed once
//! whole, so a resent one goes on from what arrived.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use actix::prelude::*;
use tokio::io::AsyncBufReadExt;
use tracing::{info, warn};

use super::queue::ScheddActor;
use crate::classad::{ClassAd, parse_ad};
use crate::schedd::event::JobId;
use crate::schedd::queue::QueueError;
use crate::transfer::plan::{InputPlan, OutputPlan};
use crate::transfer::wire::{self, Ask, Hello, MAX_LINE, Said};
use crate::transfer::{Entry, Kind};
use crate::userlog::Stage;

/// How long a connection may stay silent.
const SILENCE: Duration = Duration::from_secs(60);

/// Why the server will not serve a caller.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The hello names no job.
    #[error("{0:?} is not a job id")]
    NotAJob(String),
    /// The queue does not lease the job with that token.
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// The schedd is going away.
    #[error("the schedd is stopping")]
    Stopping,
    /// The first line is not a hello.
    #[error("the first line must be the hello")]
    NoHello,
    /// The first line is not the protocol's.
    #[error(transparent)]
    Line(#[from] crate::transfer::wire::BadLine),
    /// The job's ad, as the queue gave it, does not read.
    #[error("the job's ad does not read: {0}")]
    Ad(#[from] crate::classad::ParseError),
    /// The job's owner is not a user of this machine.
    #[error("no user {0} on the submit machine")]
    NoOwner(String),
    /// A file the job names cannot be read.
    #[error("reading from {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The job's ad does not say where its files are or go.
    #[error(transparent)]
    Plan(#[from] crate::transfer::PlanError),
}

/// Asks the queue for job `job`'s ad, if `token` is its lease's.
#[derive(Message)]
#[rtype(result = "Result<String, Refusal>")]
pub struct TransferGrant(pub Hello);

impl Handler<TransferGrant> for ScheddActor {
    type Result = Result<String, Refusal>;

    fn handle(
        &mut self,
        TransferGrant(hello): TransferGrant,
        _: &mut Context<Self>,
    ) -> Self::Result {
        let id: JobId = (hello.job.parse()).map_err(|_| Refusal::NotAJob(hello.job.clone()))?;
        let ad = self.queue.leased_ad(id, &hello.token)?;
        Ok(crate::classad::unparse::ad_to_string(ad))
    }
}

/// The file server saw a step of job `0`'s transfer.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TransferStep(pub JobId, pub Stage);

impl Handler<TransferStep> for ScheddActor {
    type Result = ();

    fn handle(&mut self, TransferStep(id, stage): TransferStep, ctx: &mut Context<Self>) {
        let Some(e) = self.queue.transfer_step(id, stage, self.clock.now()) else {
            return;
        };
        info!(message = "File transfer step.", job = %id, step = stage.text());
        let done = self.commit(vec![e], crate::admin::Response::done(""));
        ctx.spawn(actix::fut::wrap_future(async move {
            let _ = done.await;
        }));
    }
}

/// Binds the file server at `address` (`host:port`); returns it and the
/// address nodes are told (the host's name when it listens on every
/// address). A port of 0 is chosen once and kept in `remember` (under
/// `SPOOL`), so a restarted schedd listens where the nodes of its running
/// jobs will call again (a new port only when that one is taken).
pub fn bind(
    address: &str,
    host: &str,
    remember: &Path,
) -> std::io::Result<(std::net::TcpListener, String)> {
    let any_port = address.rsplit_once(':').is_some_and(|(_, p)| p == "0");
    let kept = any_port
        .then(|| std::fs::read_to_string(remember).ok())
        .flatten()
        .and_then(|p| p.trim().parse::<u16>().ok())
        .and_then(|port| {
            let (h, _) = address.rsplit_once(':')?;
            std::net::TcpListener::bind(format!("{h}:{port}")).ok()
        });
    let listener = match kept {
        Some(l) => l,
        None => std::net::TcpListener::bind(address)?,
    };
    let at = listener.local_addr()?;
    if any_port {
        let _ = std::fs::write(remember, format!("{}\n", at.port()));
    }
    let told = if at.ip().is_unspecified() {
        format!("{host}:{}", at.port())
    } else {
        at.to_string()
    };
    Ok((listener, told))
}

/// Serves the file server until the actor system stops.
pub async fn serve(listener: std::net::TcpListener, queue: Addr<ScheddActor>) {
    let listener = match listener
        .set_nonblocking(true)
        .and_then(|()| tokio::net::TcpListener::from_std(listener))
    {
        Ok(l) => l,
        Err(e) => {
            warn!(message = "Cannot serve files.", error = %e);
            return;
        }
    };
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                actix::spawn(connection(stream, peer, queue.clone()));
            }
            Err(e) => {
                warn!(message = "File server accept failed.", error = %e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn connection(
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
    queue: Addr<ScheddActor>,
) {
    let mut reader = tokio::io::BufReader::new(stream);
    let mut line = Vec::new();
    let read = tokio::time::timeout(SILENCE, async {
        let mut limited = tokio::io::AsyncReadExt::take(&mut reader, 64 << 10);
        limited.read_until(b'\n', &mut line).await
    })
    .await;
    let hello = match (read, line.last()) {
        (Ok(Ok(_)), Some(b'\n')) => {
            wire::parse::<Ask>(&line[..line.len() - 1]).map_err(Refusal::from)
        }
        _ => Err(Refusal::NoHello),
    };
    let granted = match hello {
        Ok(Ask::Hello(h)) => {
            let job = h.job.clone();
            match queue.send(TransferGrant(h)).await {
                Ok(Ok(ad)) => parse_ad(&ad).map(|a| (job, a)).map_err(Refusal::from),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(Refusal::Stopping),
            }
        }
        Ok(_) => Err(Refusal::NoHello),
        Err(e) => Err(e),
    };
    let mut stream = reader.into_inner();
    let (job, ad) = match granted {
        Ok(g) => g,
        Err(why) => {
            warn!(message = "File transfer refused.", peer = %peer, reason = %why);
            let _ = tokio::io::AsyncWriteExt::write_all(
                &mut stream,
                &wire::line(&Said::Refused(why.to_string())),
            )
            .await;
            return;
        }
    };
    let std_stream = match stream
        .into_std()
        .and_then(|s| s.set_nonblocking(false).map(|()| s))
    {
        Ok(s) => s,
        Err(e) => return warn!(message = "File transfer connection lost.", error = %e),
    };
    let spawned = std::thread::Builder::new()
        .name(format!("transfer-{job}"))
        .spawn(move || {
            let step = |stage| {
                if let Ok(id) = job.parse::<JobId>() {
                    queue.do_send(TransferStep(id, stage));
                }
            };
            if let Err(e) = serve_job(std_stream, (&job, &step), &ad) {
                warn!(message = "File transfer ended early.", job = %job, peer = %peer, error = %e);
            }
        });
    if let Err(e) = spawned {
        warn!(message = "Cannot start a file transfer thread.", error = %e);
    }
}

/// The job's `Owner`'s uid and gid, for file accesses as them when the
/// schedd is root (`None`: it is not, and can only be itself).
pub(super) fn owner_of(ad: &ClassAd) -> Result<Option<(u32, u32)>, Refusal> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    let owner = crate::transfer::plan::string(ad, "Owner")
        .ok_or_else(|| Refusal::NoOwner("(none)".into()))?;
    let user = nix::unistd::User::from_name(&owner)
        .ok()
        .flatten()
        .ok_or(Refusal::NoOwner(owner))?;
    Ok(Some((user.uid.as_raw(), user.gid.as_raw())))
}

/// One job's conversation, after its hello was granted.
fn serve_job(
    stream: std::net::TcpStream,
    (job, step): (&str, &dyn Fn(Stage)),
    ad: &ClassAd,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(SILENCE))?;
    stream.set_write_timeout(Some(SILENCE))?;
    // Each answer goes at once: with Nagle's rule, a small file's bytes
    // after its `data` line waited for the node's delayed ACK (40 ms a
    // file: 1,000 small inputs took 40 s).
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    let _owner = match owner_of(ad) {
        Ok(ids) => crate::spawn::FsUser::take(ids),
        Err(why) => return writer.write_all(&wire::line(&Said::Refused(why.to_string()))),
    };
    writer.write_all(&wire::line(&Said::Ok))?;
    let mut served: HashMap<String, PathBuf> = HashMap::new();
    let (mut got, mut sent) = (0u64, 0u64);
    // A session lists the inputs first, or sends outputs (maybe none).
    let mut inputs: Option<bool> = None;
    loop {
        let mut line = Vec::new();
        let n = (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        line.pop();
        let ask = wire::parse::<Ask>(&line);
        if inputs.is_none() {
            let listing = matches!(ask, Ok(Ask::List));
            inputs = Some(listing);
            step(if listing {
                Stage::InputStarted
            } else {
                Stage::OutputStarted
            });
        }
        let said = match ask {
            Ok(Ask::Done) => {
                step(if inputs == Some(true) {
                    Stage::InputFinished
                } else {
                    Stage::OutputFinished
                });
                break;
            }
            Ok(Ask::List) => match manifest(ad) {
                Ok(entries) => {
                    served = entries
                        .iter()
                        .map(|(e, p)| (e.name.clone(), p.clone()))
                        .collect();
                    Said::Manifest(entries.into_iter().map(|(e, _)| e).collect())
                }
                Err(why) => Said::Refused(why.to_string()),
            },
            Ok(Ask::Get { name, offset }) => match served.get(&name) {
                Some(path) => {
                    sent += send_file(&mut writer, path, offset)?;
                    continue;
                }
                None => Said::Refused(format!("{name} is not one of the job's inputs")),
            },
            Ok(Ask::Put { name, size, mode }) => {
                match receive(&mut reader, &mut writer, ad, (&name, size, mode)) {
                    Ok((path, n)) => {
                        got += n;
                        Said::Stored { path }
                    }
                    Err(PutFailure::Why(why)) => Said::Refused(why),
                    Err(PutFailure::Io(e)) => return Err(e),
                }
            }
            Ok(Ask::Hello(_)) => Said::Refused("already introduced".into()),
            Err(e) => Said::Refused(e.to_string()),
        };
        let refused = matches!(said, Said::Refused(_));
        writer.write_all(&wire::line(&said))?;
        if refused {
            break;
        }
    }
    info!(message = "File transfer done.", job = %job, bytes_sent = sent, bytes_received = got);
    Ok(())
}

/// The job's inputs, each with where it is on this machine: files and
/// directories the ad names, a directory's contents after it.
fn manifest(ad: &ClassAd) -> Result<Vec<(Entry, PathBuf)>, Refusal> {
    let plan = InputPlan::of(ad)?;
    let mut out = Vec::new();
    for s in plan.sources.iter().filter(|s| !s.url) {
        let path = PathBuf::from(&s.from);
        let read = |source| Refusal::Read {
            path: s.from.clone(),
            source,
        };
        let meta = std::fs::metadata(&path).map_err(read)?;
        if meta.is_dir() {
            if !s.name.is_empty() {
                out.push((entry(&s.name, &meta), path.clone()));
            }
            walk(&path, &s.name, &mut out).map_err(read)?;
        } else {
            out.push((entry(&s.name, &meta), path));
        }
    }
    Ok(out)
}

fn entry(name: &str, meta: &std::fs::Metadata) -> Entry {
    Entry {
        name: name.to_string(),
        kind: if meta.is_dir() { Kind::Dir } else { Kind::File },
        size: if meta.is_dir() { 0 } else { meta.len() },
        mode: meta.permissions().mode() & 0o7777,
    }
}

/// What directory `dir` holds, named under `name` (empty: at the top),
/// links followed only at the top (no loops).
fn walk(dir: &Path, name: &str, out: &mut Vec<(Entry, PathBuf)>) -> std::io::Result<()> {
    let mut children: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).collect();
    children.sort_by_key(std::fs::DirEntry::file_name);
    for c in children {
        let Ok(n) = c.file_name().into_string() else {
            continue;
        };
        let full = if name.is_empty() {
            n
        } else {
            format!("{name}/{n}")
        };
        let meta = std::fs::symlink_metadata(c.path())?;
        if meta.is_dir() {
            out.push((entry(&full, &meta), c.path()));
            walk(&c.path(), &full, out)?;
        } else if meta.is_file() {
            out.push((entry(&full, &meta), c.path()));
        }
    }
    Ok(())
}

/// Sends `path` from `offset` on: its length line, then its bytes.
fn send_file(writer: &mut std::net::TcpStream, path: &Path, offset: u64) -> std::io::Result<u64> {
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let offset = offset.min(size);
    file.seek(std::io::SeekFrom::Start(offset))?;
    writer.write_all(&wire::line(&Said::Data { len: size - offset }))?;
    // A test's crash half way through a whole file (the starter goes on
    // from what it has).
    let half = if offset == 0 { size / 2 } else { 0 };
    let first = std::io::copy(&mut (&mut file).take(half), writer)?;
    if half > 0 {
        writer.flush()?;
        crate::failpoint::hit("transfer-sent-half");
    }
    Ok(first + std::io::copy(&mut file.take(size - offset - half), writer)?)
}

/// Why an output was not taken: said to the node, or the connection broke.
enum PutFailure {
    Why(String),
    Io(std::io::Error),
}

/// Takes output `name` (`size` bytes, mode `mode`): says how much of it
/// is here, reads the rest, and puts it in place.
fn receive(
    reader: &mut BufReader<std::net::TcpStream>,
    writer: &mut std::net::TcpStream,
    ad: &ClassAd,
    (name, size, mode): (&str, u64, u32),
) -> Result<(String, u64), PutFailure> {
    let why = |e: &dyn std::fmt::Display| PutFailure::Why(e.to_string());
    let plan = OutputPlan::of(ad).map_err(|e| why(&e))?;
    let dest = PathBuf::from(plan.destination(name).map_err(|e| why(&e))?);
    let (Some(dir), Some(base)) = (dest.parent(), dest.file_name()) else {
        return Err(why(&format!("{} is not a file's path", dest.display())));
    };
    std::fs::create_dir_all(dir).map_err(|e| why(&format!("{}: {e}", dir.display())))?;
    let part = dir.join(format!(".{}.roost-part", base.to_string_lossy()));
    let have = std::fs::metadata(&part).map_or(0, |m| m.len());
    let have = if have > size { 0 } else { have };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(have > 0)
        .write(true)
        .truncate(have == 0)
        .open(&part)
        .map_err(|e| why(&format!("writing to file {}: {e}", part.display())))?;
    writer
        .write_all(&wire::line(&Said::Have { have }))
        .map_err(PutFailure::Io)?;
    // A test's crash half way through a whole output (the starter sends
    // the rest to the next run).
    let crash = crate::failpoint::is_armed("transfer-received-half");
    let half = if have == 0 && crash { size / 2 } else { 0 };
    let mut n = std::io::copy(&mut (&mut *reader).take(half), &mut file).map_err(PutFailure::Io)?;
    if half > 0 && n == half {
        file.sync_data().map_err(PutFailure::Io)?;
        crate::failpoint::hit("transfer-received-half");
    }
    n += std::io::copy(&mut reader.take(size - have - half), &mut file).map_err(PutFailure::Io)?;
    if n < size - have {
        return Err(PutFailure::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed",
        )));
    }
    file.sync_all()
        .and_then(|()| file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777)))
        .and_then(|()| std::fs::rename(&part, &dest))
        .map_err(|e| why(&format!("writing to file {}: {e}", dest.display())))?;
    Ok((dest.display().to_string(), n))
}
