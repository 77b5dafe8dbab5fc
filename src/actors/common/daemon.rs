//! What every daemon's composition root does the same way: its
//! directories from the configuration, the user its hooks run as, its
//! log (stderr and the rotated daemon log) and panics written to it,
//! detaching, the file beside its event log that names its socket, and
//! the signals it answers ([`Signals`]: one stream of the four a daemon
//! handles, held back until the daemon is ready for them).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use nix::sys::signal::{SigSet, Signal};
use tracing::{error, warn};

use super::daemon_log::{LogFile, LogSettings};
use crate::config::Config;

/// The directory a path knob names, created if it is missing.
pub fn dir(config: &Config, knob: &str) -> Result<PathBuf> {
    let v = config
        .get(knob)
        .map_err(|e| anyhow!("{knob}: {e}"))?
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| anyhow!("{knob} is not set; set it (or LOCAL_DIR) in the configuration"))?;
    let p = PathBuf::from(v.trim());
    std::fs::create_dir_all(&p)
        .with_context(|| format!("{knob}: cannot create {}", p.display()))?;
    Ok(p)
}

/// The user and group a root daemon runs its hooks as: `CONDOR_IDS`
/// (`uid.gid`), else the `condor` account; none when not root.
pub fn hook_user(config: &Config) -> Option<(u32, u32)> {
    if !nix::unistd::Uid::effective().is_root() {
        return None;
    }
    if let Ok(Some(ids)) = config.get("CONDOR_IDS")
        && let Some((u, g)) = ids.trim().split_once('.')
        && let (Ok(u), Ok(g)) = (u.parse(), g.parse())
    {
        return Some((u, g));
    }
    match nix::unistd::User::from_name("condor") {
        Ok(Some(u)) => Some((u.uid.as_raw(), u.gid.as_raw())),
        _ => None,
    }
}

/// Logs to stderr and the log `settings` name at the level
/// `<subsys>_DEBUG` asks for; returns the log file (a reconfig gives it
/// new limits).
pub fn init_logging_as(config: &Config, subsys: &str, settings: &LogSettings) -> Result<LogFile> {
    use tracing_subscriber::fmt::writer::MakeWriterExt;
    let debug = config
        .expanded(&format!("{subsys}_DEBUG"))?
        .unwrap_or_default()
        .to_ascii_uppercase();
    let level = if debug.contains("D_FULLDEBUG") || debug.contains("D_ALL") {
        tracing::Level::DEBUG
    } else {
        tracing::Level::INFO
    };
    let file = LogFile::open(settings)
        .with_context(|| format!("cannot open {}", settings.path.display()))?;
    let writer = std::io::stderr.and(file.clone());
    tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(writer.with_max_level(level))
        .with_ansi(false)
        .try_init()
        .map_err(|e| anyhow!("cannot set up logging: {e}"))?;
    Ok(file)
}

/// Detaches from the terminal unless the daemon stays in the foreground.
pub fn detach(foreground: bool) -> Result<()> {
    if !foreground {
        nix::unistd::daemon(true, false).map_err(|e| anyhow!("cannot detach: {e}"))?;
    }
    Ok(())
}

/// Writes the socket's path beside the event log (`events_dir`), so that
/// `roost-log` reads the log through the daemon while it holds it; the
/// returned path is removed when the daemon stops.
pub fn point_to_socket(events_dir: &Path, socket: &Path) -> PathBuf {
    let pointer = events_dir.join(crate::events::DAEMON_SOCKET_FILE);
    if let Err(e) = std::fs::write(&pointer, socket.as_os_str().as_encoded_bytes()) {
        warn!(message = "Cannot write the socket's path beside the event log.",
            file = %pointer.display(), error = %e);
    }
    pointer
}

/// Writes a panic to the log before the process ends. Release builds abort
/// on a panic (`panic = "abort"` in `Cargo.toml`): a daemon with one actor
/// gone (the runtime would drop a panicking actor and run on without it) is
/// worse than a daemon that stops, is restarted and replays its event log.
/// Without this the reason would reach only stderr, which a detached daemon
/// does not have.
pub fn log_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(not text)");
        error!(
            message = "Panicked; the daemon stops.",
            panic = what,
            location = %location,
            thread = std::thread::current().name().unwrap_or("unnamed"),
        );
        default(info);
    }));
}

/// A signal a daemon answers. What each means is the daemon's to say
/// (the startd: SIGTERM graceful, SIGQUIT fast, SIGINT graceful then
/// fast, SIGHUP reconfigure; the schedd and the eventd stop on the first
/// three and re-read their configuration on SIGHUP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaemonSignal {
    /// SIGTERM.
    Term,
    /// SIGQUIT.
    Quit,
    /// SIGINT.
    Int,
    /// SIGHUP.
    Hup,
}

impl DaemonSignal {
    /// The signal's name, as logs and stop reasons give it.
    pub fn name(self) -> &'static str {
        match self {
            DaemonSignal::Term => "SIGTERM",
            DaemonSignal::Quit => "SIGQUIT",
            DaemonSignal::Int => "SIGINT",
            DaemonSignal::Hup => "SIGHUP",
        }
    }
}

/// The signals a daemon handles, as one stream.
pub struct Signals {
    term: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// The set [`Signals`] handles.
    fn set() -> SigSet {
        let mut set = SigSet::empty();
        for s in [
            Signal::SIGTERM,
            Signal::SIGQUIT,
            Signal::SIGINT,
            Signal::SIGHUP,
        ] {
            set.add(s);
        }
        set
    }

    /// Holds the handled signals back in this thread and every thread it
    /// starts, until [`Signals::release`]: before the handlers are
    /// installed (after the log's replay, which may take a while) a
    /// SIGTERM would otherwise kill the daemon outright. (Spawned
    /// processes start with nothing blocked.)
    pub fn hold() {
        if let Err(e) = Self::set().thread_block() {
            eprintln!("roost: cannot hold signals during start-up: {e}");
        }
    }

    /// Delivers the signals held back since [`Signals::hold`].
    pub fn release() {
        if let Err(e) = Self::set().thread_unblock() {
            error!(message = "Cannot unblock signals.", error = %e);
        }
    }

    /// Installs the handlers (inside the runtime).
    fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            quit: signal(SignalKind::quit())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Installs the handlers and runs `handler` over them on the current
    /// arbiter; when they cannot be installed, says so in the log (the
    /// daemon goes on, stopped only by SIGKILL or its admin command).
    pub fn serve<F, Fut>(handler: F)
    where
        F: FnOnce(Signals) -> Fut,
        Fut: std::future::Future<Output = ()> + 'static,
    {
        match Signals::install() {
            Ok(s) => {
                actix::spawn(handler(s));
            }
            Err(e) => error!(message = "Cannot install signal handlers.", error = %e),
        }
    }

    /// The next signal.
    pub async fn next(&mut self) -> DaemonSignal {
        tokio::select! {
            _ = self.term.recv() => DaemonSignal::Term,
            _ = self.quit.recv() => DaemonSignal::Quit,
            _ = self.int.recv() => DaemonSignal::Int,
            _ = self.hup.recv() => DaemonSignal::Hup,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test re-runs itself as a child that logs to a file, installs the
    /// hook and panics; the parent reads what the child logged.
    #[test]
    fn a_panic_is_written_to_the_log() {
        const CHILD: &str = "ROOST_PANIC_LOG_CHILD";
        if let Some(path) = std::env::var_os(CHILD) {
            let file = std::fs::File::create(path).expect("log file");
            tracing_subscriber::fmt()
                .with_writer(std::sync::Mutex::new(file))
                .with_ansi(false)
                .init();
            log_panics();
            std::thread::Builder::new()
                .name("slot1".into())
                .spawn(|| panic!("the slot's state is {}", "inconsistent"))
                .expect("thread")
                .join()
                .ok();
            return;
        }
        let dir = std::env::temp_dir().join(format!("roost-panic-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let log = dir.join("StartLog");
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "actors::common::daemon::tests::a_panic_is_written_to_the_log",
            ])
            .env(CHILD, &log)
            .output()
            .expect("child runs");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.status.success(), "{out:?}");
        assert!(text.contains("ERROR"), "{text}");
        assert!(text.contains("Panicked; the daemon stops."), "{text}");
        assert!(
            text.contains("panic=\"the slot's state is inconsistent\""),
            "{text}"
        );
        assert!(
            text.contains("location=src/actors/common/daemon.rs:"),
            "{text}"
        );
        assert!(text.contains("thread=\"slot1\""), "{text}");
    }
}
