//! A process that is not the daemon's child — a starter that outlived an
//! earlier daemon — held by a pidfd (`pidfd_open`), so that its exit can be
//! awaited and signals reach it and never a later process given its pid.
//! Part of the spawn module, the one allowed `unsafe` code.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::libc;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// A process that is not this one's child (a starter that outlived an
/// earlier daemon), held by a pidfd: its exit can be awaited and it can be
/// signalled without racing the reuse of its pid.
pub struct Process {
    pid: u32,
    pid_fd: AsyncFd<OwnedFd>,
}

impl Process {
    /// Opens process `pid` (within a tokio runtime), if it is the one that
    /// started at `started` clock ticks after boot (see
    /// [`process_started`]); `Ok(None)` when it is gone or another
    /// process has its pid now.
    pub fn open(pid: u32, started: u64) -> io::Result<Option<Process>> {
        let Ok(raw) = libc::pid_t::try_from(pid) else {
            return Ok(None);
        };
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw, 0) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ESRCH) => Ok(None),
                _ => Err(e),
            };
        }
        // SAFETY: the syscall returned a new descriptor that we own.
        let fd = unsafe { OwnedFd::from_raw_fd(RawFd::try_from(fd).unwrap_or(-1)) };
        // The pidfd names whatever had the pid when it was opened: that is
        // the process sought only if it started when that one did.
        if process_started(pid) != Some(started) {
            return Ok(None);
        }
        // SAFETY: an OwnedFd stays open and the same while registered.
        let pid_fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok(Some(Process { pid, pid_fd }))
    }

    /// Its pid.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Waits until the process has exited.
    pub async fn exited(&self) {
        match self.pid_fd.readable().await {
            Ok(mut ready) => ready.retain_ready(),
            Err(_) => std::future::pending().await,
        }
    }

    /// Sends `sig` to the process (not its group).
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        pidfd_signal(self.pid_fd.as_fd(), sig)
    }
}

/// Sends `sig` to the process a pidfd names.
pub(super) fn pidfd_signal(fd: std::os::fd::BorrowedFd<'_>, sig: i32) -> io::Result<()> {
    // SAFETY: pidfd_send_signal on a pidfd the caller holds open.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// When process `pid` started, in clock ticks since boot (the 22nd field of
/// `/proc/<pid>/stat`); `None` when there is no such process, or it has
/// ended and waits to be reaped (a zombie). With the pid it names one
/// process: a pid used again has a later start.
pub fn process_started(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_ascii_whitespace();
    if matches!(fields.next(), Some("Z" | "X" | "x")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// Whether process `pid` is still the one that started at `started`
/// ([`process_started`]; 0, not known, is never the same): what a
/// restart asks of a pid its log recorded before killing or taking it.
pub fn is_same_process(pid: u32, started: u64) -> bool {
    started != 0 && process_started(pid) == Some(started)
}
