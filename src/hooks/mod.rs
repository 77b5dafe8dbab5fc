//! Running hook processes: HTCondor's path checks, stdin written then
//! closed, stdout captured up to a cap (the truncation reported, never
//! silently parsed), stderr kept line by line for the log, and — beyond
//! HTCondor — a timeout that kills the hook with its whole process group.
//!
//! This is the shell's side of a hook invocation; what the output means
//! is decided by the caller (the slot's policy, the starter).

pub mod capture;
pub mod follow;
pub mod output;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::spawn::{self, Stdio};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// How many stderr lines of one hook run are kept for the log.
const STDERR_LINES: usize = 200;

/// A hook that cannot be run, naming the file and the reason.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// `stat` failed.
    #[error("hook {path}: {source}")]
    Missing {
        /// The configured path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file or its directory may be changed by anyone.
    #[error("hook {path}: refused because {what} is world-writable")]
    WorldWritable {
        /// The configured path.
        path: PathBuf,
        /// `the file` or `its directory`.
        what: &'static str,
    },
    /// No execute bit.
    #[error("hook {path}: refused because it is not executable")]
    NotExecutable {
        /// The configured path.
        path: PathBuf,
    },
    /// The process could not be started.
    #[error("hook {path}: cannot start: {source}")]
    Spawn {
        /// The configured path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// HTCondor's `validateHookPath`: the file must exist, be executable, and
/// neither it nor its directory may be world-writable.
pub fn validate(path: &Path) -> Result<(), HookError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|source| HookError::Missing {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = meta.permissions().mode();
    if mode & 0o002 != 0 {
        return Err(HookError::WorldWritable {
            path: path.to_path_buf(),
            what: "the file",
        });
    }
    if mode & 0o111 == 0 || !meta.is_file() {
        return Err(HookError::NotExecutable {
            path: path.to_path_buf(),
        });
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir
        && let Ok(d) = std::fs::metadata(dir)
        && d.permissions().mode() & 0o002 != 0
        && d.permissions().mode() & 0o1000 == 0
    {
        return Err(HookError::WorldWritable {
            path: path.to_path_buf(),
            what: "its directory",
        });
    }
    Ok(())
}

/// One hook invocation.
#[derive(Clone, Debug)]
pub struct HookRun {
    /// The executable.
    pub path: PathBuf,
    /// Arguments after argv\[0\].
    pub args: Vec<String>,
    /// Written to stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// Working directory.
    pub cwd: PathBuf,
    /// The environment (the whole of it).
    pub env: spawn::Environment,
    /// Run as this uid/gid (only possible as root).
    pub user: Option<(u32, u32)>,
    /// Kill the hook (and its process group) after this long.
    pub timeout: Option<Duration>,
    /// Keep at most this many bytes of stdout.
    pub stdout_limit: usize,
    /// Write stdout and stderr to the files of this capture
    /// ([`capture`]) instead of pipes, so that they outlive the daemon.
    pub capture: Option<PathBuf>,
}

pub use crate::exit::Exit;

/// What a hook run produced.
#[derive(Clone, Debug)]
pub struct HookOutput {
    /// Its process id.
    pub pid: u32,
    /// How it ended.
    pub exit: Exit,
    /// Its stdout, at most the limit.
    pub stdout: Vec<u8>,
    /// Whether stdout went past the limit (the rest was discarded).
    pub truncated: bool,
    /// Its stderr lines (the first few hundred).
    pub stderr: Vec<String>,
    /// Whether it was killed for running past its timeout.
    pub timed_out: bool,
    /// How long it ran.
    pub elapsed: Duration,
}

/// Starts a hook; the caller awaits [`Running::finish`].
pub fn spawn(run: &HookRun) -> Result<Running, HookError> {
    let mut cmd = spawn::Command::new(&run.path);
    cmd.args(&run.args)
        .current_dir(&run.cwd)
        .environment(&run.env)
        .stdin(if run.stdin.is_empty() {
            Stdio::Null
        } else {
            Stdio::Piped
        })
        .process_group();
    if let Some(base) = &run.capture {
        let (out, err) = capture::create(base).map_err(|source| HookError::Spawn {
            path: run.path.clone(),
            source: std::io::Error::new(
                source.kind(),
                format!(
                    "cannot create {}: {source}",
                    capture::out_path(base).display()
                ),
            ),
        })?;
        cmd.stdout(Stdio::Fd(out)).stderr(Stdio::Fd(err));
    } else {
        cmd.stdout(Stdio::Piped).stderr(Stdio::Piped);
    }
    let child = start(&mut cmd, &run.path, run.user)?;
    Ok(Running {
        child,
        stdin: run.stdin.clone(),
        timeout: run.timeout,
        limit: run.stdout_limit,
        started: Instant::now(),
        capture: run.capture.clone(),
    })
}

/// Starts `cmd` (the program at `path`) as `user` when given.
fn start(
    cmd: &mut spawn::Command,
    path: &Path,
    user: Option<(u32, u32)>,
) -> Result<spawn::Child, HookError> {
    if let Some((uid, gid)) = user {
        cmd.user(uid, gid);
    }
    cmd.spawn().map_err(|source| HookError::Spawn {
        path: path.to_path_buf(),
        source,
    })
}

/// A hook process that was started.
pub struct Running {
    child: spawn::Child,
    stdin: Vec<u8>,
    timeout: Option<Duration>,
    limit: usize,
    started: Instant,
    capture: Option<PathBuf>,
}

impl Running {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Feeds stdin, collects the output, and waits for the exit (killing
    /// the process group at the timeout).
    pub async fn finish(mut self) -> HookOutput {
        let pid = self.pid();
        if let Some(mut input) = self.child.stdin.take() {
            let data = std::mem::take(&mut self.stdin);
            // A hook that does not read its stdin is not an error.
            tokio::spawn(async move {
                let _ = input.write_all(&data).await;
            });
        }
        let stdout = self.child.stdout.take();
        let stderr = self.child.stderr.take();
        let limit = self.limit;
        let out = async move {
            let mut buf = Vec::new();
            let mut truncated = false;
            if let Some(mut s) = stdout {
                let mut chunk = [0u8; 8192];
                loop {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let room = limit.saturating_sub(buf.len());
                            if n > room {
                                truncated = true;
                            }
                            buf.extend_from_slice(&chunk[..n.min(room)]);
                        }
                    }
                }
            }
            (buf, truncated)
        };
        let err = async move {
            let mut lines = Vec::new();
            if let Some(s) = stderr {
                let mut r = BufReader::new(s).lines();
                while let Ok(Some(line)) = r.next_line().await {
                    if lines.len() < STDERR_LINES {
                        lines.push(line);
                    }
                }
            }
            lines
        };
        let child = &mut self.child;
        let watched = self.capture.clone();
        let cap = u64::try_from(limit.max(64 * 1024))
            .unwrap_or(u64::MAX)
            .saturating_mul(capture::HARD_CAP);
        let mut overflowed = false;
        let over = &mut overflowed;
        // When the hook exits, anything it left behind in its group goes
        // too (as HTCondor's procd kills a startd hook's family), which
        // also closes pipes a straggler held open. A captured hook whose
        // files grow past the cap is killed.
        let waiter = async move {
            let s = tokio::select! {
                s = child.wait() => s,
                () = watch(watched, cap) => {
                    *over = true;
                    kill_group(pid);
                    child.wait().await
                }
            };
            kill_group(pid);
            s
        };
        let all = async { tokio::join!(out, err, waiter) };
        let mut timed_out = false;
        let ((stdout, truncated), stderr, status) = match self.timeout {
            Some(t) => {
                tokio::pin!(all);
                tokio::select! {
                    r = &mut all => r,
                    () = tokio::time::sleep(t) => {
                        timed_out = true;
                        kill_group(pid);
                        all.await
                    }
                }
            }
            None => all.await,
        };
        let exit = match status {
            Ok(s) => exit_of(s),
            Err(_) => Exit::Code(-1),
        };
        let (stdout, truncated, stderr) = match &self.capture {
            Some(base) => {
                let got = capture::read(base, limit, STDERR_LINES);
                (got.stdout, got.truncated || overflowed, got.stderr)
            }
            None => (stdout, truncated, stderr),
        };
        HookOutput {
            pid,
            exit,
            stdout,
            truncated,
            stderr,
            timed_out,
            elapsed: self.started.elapsed(),
        }
    }
}

/// Resolves once a file of capture `base` holds more than `cap` bytes;
/// never without a capture.
async fn watch(base: Option<PathBuf>, cap: u64) {
    let Some(base) = base else {
        return std::future::pending().await;
    };
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (out, err) = capture::sizes(&base);
        if out > cap || err > cap {
            return;
        }
    }
}

/// SIGHUP to a process (a cron job told of a reconfig).
pub fn hup(pid: u32) {
    if let Ok(p) = i32::try_from(pid)
        && p > 0
    {
        let _ = nix::sys::signal::kill(Pid::from_raw(p), Signal::SIGHUP);
    }
}

/// SIGTERM to a process group (nothing if it is already gone).
pub fn term_group(pid: u32) {
    if let Ok(p) = i32::try_from(pid)
        && p > 0
    {
        let _ = killpg(Pid::from_raw(p), Signal::SIGTERM);
    }
}

/// SIGKILL to a process group (nothing if it is already gone).
pub fn kill_group(pid: u32) {
    if let Ok(p) = i32::try_from(pid)
        && p > 0
    {
        let _ = killpg(Pid::from_raw(p), Signal::SIGKILL);
    }
}

/// The exit of a process as [`Exit`].
pub fn exit_of(s: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(-1),
    }
}

/// Spawns and finishes a hook in one call.
pub async fn run(run: &HookRun) -> Result<HookOutput, HookError> {
    Ok(spawn(run)?.finish().await)
}
