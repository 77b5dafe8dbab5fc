//! Running a daemon ClassAd hook (a cron job) and following its output as
//! it comes: stdout is cut into blocks, each ending at a line that starts
//! with `-` (the separator that ends an ad), so that a job that runs on
//! (`WaitForExit`) publishes each ad when it prints it; what is left at the
//! end is the last block. A block is capped: its bytes past the cap are
//! dropped (and counted) up to its separator. Stderr comes line by line
//! (the first few hundred of a run). When the job exits, whatever it left
//! in its process group is killed, which also closes pipes a straggler
//! held open.

use std::time::Instant;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::{Exit, HookError, exit_of, kill_group};
use crate::spawn::{self, Stdio};

/// How many stderr lines of one run are passed on.
const STDERR_LINES: usize = 200;

/// One cron run to start.
#[derive(Clone, Debug)]
pub struct CronRun {
    /// The executable.
    pub path: std::path::PathBuf,
    /// Arguments after argv\[0\].
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: std::path::PathBuf,
    /// The daemon's hook environment.
    pub env: spawn::Environment,
    /// Set on top of it (the job's `_ENV`, the manager's variables).
    pub extra: Vec<(String, String)>,
    /// Run as this uid/gid (only possible as root).
    pub user: Option<(u32, u32)>,
}

/// What a running job gives, in order.
#[derive(Debug)]
pub enum Piece {
    /// A block of stdout: lines up to and including a separator line, or
    /// the rest at the end; and how many of its bytes past the cap were
    /// dropped.
    Block(Vec<u8>, usize),
    /// A stderr line.
    Stderr(String),
    /// It exited (the last piece), having printed this many bytes.
    Exited(Exit, u64),
}

/// A started cron job.
pub struct Following {
    child: spawn::Child,
    /// When it started.
    pub started: Instant,
}

/// Starts `run` in a process group of its own, stdin from `/dev/null`.
pub fn spawn(run: &CronRun) -> Result<Following, HookError> {
    let mut cmd = spawn::Command::new(&run.path);
    cmd.args(&run.args)
        .current_dir(&run.cwd)
        .environment(&run.env)
        .envs(run.extra.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::Null)
        .stdout(Stdio::Piped)
        .stderr(Stdio::Piped)
        .process_group();
    let child = super::start(&mut cmd, &run.path, run.user)?;
    Ok(Following {
        child,
        started: Instant::now(),
    })
}

impl Following {
    /// Its process id (and process group's).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads the job's output and waits for its exit, handing each piece
    /// to `send` as it comes (blocks of at most `cap` bytes each).
    pub async fn follow(mut self, cap: usize, send: impl Fn(Piece)) {
        let pid = self.pid();
        let stdout = self.child.stdout.take();
        let stderr = self.child.stderr.take();
        let send = &send;
        let out = async move {
            let mut total = 0u64;
            let Some(s) = stdout else {
                return total;
            };
            let mut r = BufReader::new(s);
            let (mut block, mut dropped) = (Vec::new(), 0usize);
            let mut line = Vec::new();
            loop {
                line.clear();
                // A line is read whole but kept only up to the cap.
                let n = match read_line_capped(&mut r, &mut line, cap).await {
                    Ok((0, _)) | Err(_) => break,
                    Ok((n, _)) => n,
                };
                total += n as u64;
                let is_separator = line.first() == Some(&b'-');
                if block.len() + line.len() <= cap || is_separator {
                    block.extend_from_slice(&line);
                } else {
                    dropped += n;
                }
                if is_separator {
                    send(Piece::Block(std::mem::take(&mut block), dropped));
                    dropped = 0;
                }
            }
            if !block.is_empty() || dropped > 0 {
                send(Piece::Block(block, dropped));
            }
            total
        };
        let err = async move {
            let mut n = 0;
            if let Some(s) = stderr {
                let mut r = BufReader::new(s).lines();
                while let Ok(Some(line)) = r.next_line().await {
                    if n < STDERR_LINES {
                        send(Piece::Stderr(line));
                    }
                    n += 1;
                }
            }
        };
        let child = &mut self.child;
        let waiter = async move {
            let s = child.wait().await;
            kill_group(pid);
            s
        };
        let (total, (), status) = tokio::join!(out, err, waiter);
        let exit = status.map_or(Exit::Code(-1), exit_of);
        send(Piece::Exited(exit, total));
    }
}

/// Reads one line (through its `\n`) into `line`, keeping at most `cap`
/// bytes of it: the number of bytes read, and whether it was cut.
async fn read_line_capped<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<(usize, bool)> {
    let mut n = 0;
    let mut cut = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok((n, cut));
        }
        let (take, done) = match buf.iter().position(|&c| c == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = cap.saturating_sub(line.len());
        if take > room {
            cut = true;
        }
        line.extend_from_slice(&buf[..take.min(room)]);
        r.consume(take);
        n += take;
        if done {
            return Ok((n, cut));
        }
    }
}
