//! The starter's link to its daemon: reports out and commands in, first on
//! the pipes the daemon gave (stdout, stdin), and, when that daemon goes
//! away, through a call to the daemon's admin socket once a daemon serves
//! it again ([`super::protocol::Hello`]). Meanwhile reports are kept, so
//! the daemon that takes the starter hears every one.
//!
//! The link runs as a task of its own: [`report`] hands it a report from
//! anywhere in the starter without waiting; the starter's main task hears
//! commands, and that it is orphaned or abandoned, through [`Link::heard`].

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use std::os::fd::AsFd;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::protocol::{Attached, Command, Hello, PROTOCOL, Report};

/// How often an orphaned starter calls the daemon's socket.
pub const CALL_EVERY: Duration = Duration::from_secs(1);

/// How long a daemon may take to answer a starter's call.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// What the starter's main task hears from its link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// The daemon's command.
    Command(Command),
    /// The daemon has been gone for the orphan timeout (at once when the
    /// starter may not wait for another): the job is to be evicted.
    Orphaned,
    /// A daemon refused to take the starter: its claim has ended.
    Abandoned(String),
}

/// Why a starter is not to run its job.
#[derive(Debug, thiserror::Error)]
pub enum NoGo {
    /// The daemon went away before it said go, and none took the starter
    /// within the orphan timeout.
    #[error("the daemon went away before it let the job start")]
    Orphaned,
    /// A daemon refused the starter.
    #[error("{0}")]
    Abandoned(String),
}

/// Lines of commands from the daemon.
type Lines = tokio::io::Lines<BufReader<Box<dyn AsyncRead + Unpin + Send>>>;

/// The way to the daemon while one is there.
struct Conn {
    commands: Lines,
    reports: Box<dyn AsyncWrite + Unpin + Send>,
}

/// How the link behaves, from the request.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The daemon's protocol (below 2: no reattaching, no `Done`).
    pub protocol: u32,
    /// The daemon's name for this starter.
    pub actor: String,
    /// The daemon's admin socket, to call when it is gone.
    pub reattach: Option<PathBuf>,
    /// How long the job may go on without a daemon.
    pub orphan_timeout: Duration,
    /// Where to leave what it reported if it leaves with no daemon.
    pub leftover: Option<PathBuf>,
}

impl Setup {
    /// Whether this starter may wait for another daemon.
    fn may_wait(&self) -> bool {
        self.protocol >= 2 && self.reattach.is_some() && !self.orphan_timeout.is_zero()
    }
}

/// What the link's task is handed.
enum Out {
    /// A report to send or keep.
    Report(Report),
    /// Answer once everything handed over before is written, or with no
    /// daemon, left in the leftover file.
    Leave(oneshot::Sender<()>),
}

/// Where [`report`] sends.
static REPORTS: OnceLock<mpsc::UnboundedSender<Out>> = OnceLock::new();

/// Hands `r` to the link, which sends it now or keeps it for the next
/// daemon. Never waits.
pub fn report(r: Report) {
    if let Some(tx) = REPORTS.get() {
        let _ = tx.send(Out::Report(r));
    }
}

/// Waits until every report handed over so far is written to the daemon,
/// or with no daemon to take them, left in the leftover file for the next
/// daemon (not when a daemon refused the
/// starter: it has ended the claim and told the fetcher).
async fn leave() {
    let (tx, rx) = oneshot::channel();
    if let Some(out) = REPORTS.get()
        && out.send(Out::Leave(tx)).is_ok()
    {
        let _ = rx.await;
    }
}

/// The main task's end of the link.
pub struct Link {
    heard: mpsc::UnboundedReceiver<Heard>,
    protocol: u32,
    /// The starter has heard [`Heard::Orphaned`] or [`Heard::Abandoned`].
    cut: bool,
}

impl Link {
    /// Starts the link's task over the daemon's pipes (`commands` after the
    /// request line, `reports`); there is one link per process.
    pub fn start(
        commands: Lines,
        reports: Box<dyn AsyncWrite + Unpin + Send>,
        setup: Setup,
    ) -> Link {
        let (report_tx, report_rx) = mpsc::unbounded_channel();
        let (heard_tx, heard) = mpsc::unbounded_channel();
        let _ = REPORTS.set(report_tx);
        let protocol = setup.protocol;
        tokio::spawn(drive(
            Conn { commands, reports },
            setup,
            report_rx,
            heard_tx,
        ));
        Link {
            heard,
            protocol,
            cut: false,
        }
    }

    /// The next thing heard; [`Heard::Orphaned`] if the link has ended.
    pub async fn heard(&mut self) -> Heard {
        let h = self.heard.recv().await.unwrap_or(Heard::Orphaned);
        self.cut |= !matches!(h, Heard::Command(_));
        h
    }

    /// Waits for [`Command::Go`] (protocol 2; at once before). `Err`: the
    /// starter is not to run the job.
    pub async fn go(&mut self) -> Result<(), NoGo> {
        if self.protocol < 2 {
            return Ok(());
        }
        loop {
            match self.heard().await {
                Heard::Command(Command::Go) => return Ok(()),
                Heard::Command(c) => {
                    super::run::log_line(&format!("the daemon's {c:?} came before its go; ignored"))
                }
                Heard::Orphaned => return Err(NoGo::Orphaned),
                Heard::Abandoned(why) => return Err(NoGo::Abandoned(why)),
            }
        }
    }

    /// Says [`Report::Done`] and waits until the daemon has every report
    /// durably ([`Command::Bye`]), a daemon refuses the starter, or the
    /// starter is orphaned for good (protocol 2; before, or cut off from
    /// its daemon, until every report is written or kept).
    pub async fn finish(&mut self) {
        if self.protocol < 2 || self.cut {
            leave().await;
            return;
        }
        report(Report::Done);
        loop {
            match self.heard().await {
                Heard::Command(Command::Bye) | Heard::Abandoned(_) => return,
                Heard::Orphaned => {
                    leave().await;
                    return;
                }
                Heard::Command(_) => {}
            }
        }
    }
}

/// The link's task: passes reports to the daemon and commands from it,
/// keeps every report, and when the daemon goes away calls its socket
/// until one takes the starter.
async fn drive(
    first: Conn,
    setup: Setup,
    mut reports: mpsc::UnboundedReceiver<Out>,
    heard: mpsc::UnboundedSender<Heard>,
) {
    let mut conn = Some(first);
    let mut kept: Vec<Report> = Vec::new();
    let mut go = false;
    // When the daemon went away, and whether the main task was told.
    let mut gone_at = Instant::now();
    let mut told = false;
    let mut abandoned = false;
    loop {
        if let Some(c) = conn.as_mut() {
            tokio::select! {
                r = reports.recv() => {
                    let r = match r {
                        Some(Out::Report(r)) => r,
                        Some(Out::Leave(done)) => {
                            let _ = done.send(());
                            continue;
                        }
                        None => return,
                    };
                    let line = encode(&r);
                    kept.push(r);
                    if c.reports.write_all(line.as_bytes()).await.is_err()
                        || c.reports.flush().await.is_err()
                    {
                        conn = None;
                    }
                }
                line = c.commands.next_line() => match line {
                    Ok(Some(l)) => match serde_json::from_str::<Command>(&l) {
                        Ok(cmd) => {
                            go |= cmd == Command::Go;
                            let _ = heard.send(Heard::Command(cmd));
                        }
                        Err(e) => super::run::log_line(&format!(
                            "the daemon said something unreadable ({e}): {l}"
                        )),
                    },
                    _ => conn = None,
                },
            }
            if conn.is_none() {
                gone_at = Instant::now();
                told = false;
                super::run::log_line(&if setup.may_wait() {
                    format!(
                        "the daemon went away: the job goes on for up to {} s while the \
                         starter waits for a daemon",
                        setup.orphan_timeout.as_secs()
                    )
                } else {
                    "the daemon went away".to_string()
                });
            }
            continue;
        }
        let deadline = gone_at
            + if setup.may_wait() {
                setup.orphan_timeout
            } else {
                Duration::ZERO
            };
        if !told && Instant::now() >= deadline {
            told = true;
            let _ = heard.send(Heard::Orphaned);
        }
        let calling = setup.may_wait() && !abandoned;
        tokio::select! {
            r = reports.recv() => match r {
                Some(Out::Report(r)) => kept.push(r),
                Some(Out::Leave(done)) => {
                    if !abandoned
                        && let Some(dir) = setup.leftover.as_deref()
                    {
                        write_leftover(dir, &hello(&setup, go, &kept));
                    }
                    let _ = done.send(());
                }
                None => return,
            },
            () = tokio::time::sleep(CALL_EVERY), if calling => {
                let Some(path) = setup.reattach.as_deref() else { continue };
                match call(path, &hello(&setup, go, &kept)).await {
                    Ok((Attached::Welcome, c)) => {
                        super::run::log_line("a daemon took this starter again");
                        conn = Some(c);
                    }
                    Ok((Attached::Abandon { reason }, _)) => {
                        super::run::log_line(&format!("the daemon does not take this starter: {reason}"));
                        abandoned = true;
                        let _ = heard.send(Heard::Abandoned(reason));
                    }
                    // No daemon yet, or not one that answers.
                    Err(_) => {}
                }
            }
            () = tokio::time::sleep_until(deadline), if !told => {}
        }
    }
}

/// What this starter says to a daemon: who it is and every report.
fn hello(setup: &Setup, go: bool, kept: &[Report]) -> Hello {
    Hello {
        protocol: PROTOCOL,
        build: crate::BUILD_ID.to_string(),
        pid: std::process::id(),
        started: super::process_started(std::process::id()).unwrap_or(0),
        actor: setup.actor.clone(),
        go,
        reports: kept.to_vec(),
    }
}

/// Writes `hello` to its leftover file in `dir`, whole (a temporary file,
/// synced, renamed); a failure is a line in the starter's log.
fn write_leftover(dir: &Path, hello: &Hello) {
    let path = super::protocol::leftover_file(dir, &hello.actor);
    let tmp = path.with_extension("tmp");
    let written = serde_json::to_vec(hello)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            let mut f = std::fs::File::create(&tmp)?;
            std::io::Write::write_all(&mut f, &bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        });
    match written {
        Ok(()) => super::run::log_line(&format!(
            "no daemon took this starter: its {} reports are left in {}",
            hello.reports.len(),
            path.display()
        )),
        Err(e) => super::run::log_line(&format!(
            "cannot leave the reports in {}: {e}",
            path.display()
        )),
    }
}

/// What starter `actor` (process `pid`, started at `started`) left in its
/// leftover file in `dir`, if it is there, reads, and is that process's.
pub fn read_leftover(dir: &Path, actor: &str, pid: u32, started: u64) -> Option<Hello> {
    let bytes = std::fs::read(super::protocol::leftover_file(dir, actor)).ok()?;
    let hello: Hello = serde_json::from_slice(&bytes).ok()?;
    (hello.actor == actor && hello.pid == pid && hello.started == started).then_some(hello)
}

/// Standard input. The daemon gives a pipe, which is read through the
/// runtime's poller; anything else (a file, a terminal) through tokio's
/// blocking reader, which needs a thread of its own.
pub fn stdin() -> Box<dyn AsyncRead + Unpin + Send> {
    let piped = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok());
    match piped {
        Some(r) => Box::new(r),
        None => Box::new(tokio::io::stdin()),
    }
}

/// Standard output: a pipe (as the daemon gives it) written through the
/// runtime's poller, else tokio's blocking writer.
pub fn stdout() -> Box<dyn AsyncWrite + Unpin + Send> {
    let piped = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|fd| pipe::Sender::from_owned_fd(fd).ok());
    match piped {
        Some(w) => Box::new(w),
        None => Box::new(tokio::io::stdout()),
    }
}

/// A report as the line the daemon reads.
fn encode(r: &Report) -> String {
    let mut line = serde_json::to_string(r).unwrap_or_default();
    line.push('\n');
    line
}

/// Why a call to the daemon did not get an answer.
#[derive(Debug, thiserror::Error)]
enum CallError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("no answer within {} s", ANSWER_WITHIN.as_secs())]
    Timeout,
    #[error("the daemon closed the connection")]
    Closed,
    #[error("unreadable answer: {0}")]
    Answer(#[from] serde_json::Error),
}

/// Calls the daemon's socket at `path` with `hello`; its answer, and the
/// connection that goes on from there.
async fn call(path: &Path, hello: &Hello) -> Result<(Attached, Conn), CallError> {
    let stream = UnixStream::connect(path).await?;
    let (read, mut write) = stream.into_split();
    let request = super::protocol::AttachCall::Attach {
        hello: hello.clone(),
    };
    let mut line = serde_json::to_string(&request)?;
    line.push('\n');
    write.write_all(line.as_bytes()).await?;
    let read: Box<dyn AsyncRead + Unpin + Send> = Box::new(read);
    let mut commands = BufReader::new(read).lines();
    let answer = tokio::time::timeout(ANSWER_WITHIN, commands.next_line())
        .await
        .map_err(|_| CallError::Timeout)??
        .ok_or(CallError::Closed)?;
    let attached = serde_json::from_str(&answer)?;
    Ok((
        attached,
        Conn {
            commands,
            reports: Box::new(write),
        },
    ))
}
