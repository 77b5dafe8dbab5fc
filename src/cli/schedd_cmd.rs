//! `roost schedd`: the access point's job queue as a daemon. Reads the
//! configuration as subsystem SCHEDD, replays its event log
//! (`$(SPOOL)/roost-schedd-events`) into the queue, and serves
//! `roost submit`, `q`, `rm`, `hold`, `release`, `history` and the queue
//! hooks on its socket (`ROOST_SCHEDD_SOCKET`, default
//! `$(LOCK)/roost_schedd.sock`, open to every local user: requests act as
//! the caller's Unix user).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use actix::prelude::*;
use anyhow::{Context, Result, anyhow};
use clap::Args;
use tracing::{error, info, warn};

use super::daemon_log::LogSettings;
use super::startd_cmd::{dir, init_logging_as};
use super::sysconfig::load_daemon_config;
use crate::actors::clock::{Clock, SystemClock};
use crate::actors::schedd::{ScheddActor, ScheddSettings, events_dir, serve};
use crate::config::Config;
use crate::events::{Event, EventRead, GroupCommitter, SledStore};
use crate::schedd::protocol::SOCKET_KNOB;
use crate::schedd::queue::Queue;
use crate::schedd::router::Router;

/// `roost schedd`.
#[derive(Args, Debug)]
pub struct ScheddCmd {
    /// The root configuration file (default: $CONDOR_CONFIG, then the
    /// standard places).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// Stay in the foreground (as condor_schedd -f).
    #[arg(short = 'f', long)]
    foreground: bool,
}

/// The schedd socket's path under `config`: [`SOCKET_KNOB`], else
/// `$(LOCK)/roost_schedd.sock`, else `$(LOG)/roost_schedd.sock`.
pub fn socket_path(config: &Config) -> Option<PathBuf> {
    crate::admin::socket_path_of(config, SOCKET_KNOB, "roost_schedd.sock")
}

/// The queue's knobs.
fn settings(config: &Config) -> Result<ScheddSettings> {
    let text = |k: &str| config.text(k).map_err(|e| anyhow!(e));
    let host = text("FULL_HOSTNAME")?.unwrap_or_else(|| "localhost".into());
    let lease = config
        .int("ROOST_QUEUE_FETCH_LEASE")
        .map_err(|e| anyhow!(e))?
        .unwrap_or(300);
    if lease < 1 {
        return Err(anyhow!(
            "ROOST_QUEUE_FETCH_LEASE is {lease}: a lease must last at least a second"
        ));
    }
    Ok(ScheddSettings {
        name: text("SCHEDD_NAME")?.unwrap_or_else(|| host.clone()),
        domain: text("UID_DOMAIN")?.unwrap_or(host),
        lease,
        super_users: text("QUEUE_SUPER_USERS")?
            .unwrap_or_default()
            .split([',', ' ', '\t'])
            .filter(|u| !u.is_empty())
            .map(str::to_string)
            .collect(),
        history_jobs: config
            .int("ROOST_SCHEDD_HISTORY_JOBS")
            .map_err(|e| anyhow!(e))?
            .map_or(crate::schedd::queue::DEFAULT_HISTORY_JOBS, |n| {
                usize::try_from(n.max(0)).unwrap_or(usize::MAX)
            }),
        max_start_failures: config
            .int("ROOST_QUEUE_MAX_START_FAILURES")
            .map_err(|e| anyhow!(e))?
            .unwrap_or(crate::schedd::queue::DEFAULT_MAX_START_FAILURES),
    })
}

/// The queue and the router the log holds; a record that does not
/// decode is skipped, said in the daemon log, and the rest is read.
fn replay(store: &SledStore, history_limit: usize) -> (Queue, Router) {
    let mut queue = Queue::replay_keeping(history_limit, &[]);
    let mut router = Router::default();
    let mut events = 0u64;
    for item in store.read_from(1) {
        match item {
            Ok(env) => match &env.event {
                Event::Job(e) => {
                    queue.apply(e);
                    events += 1;
                }
                Event::Route(e) => {
                    router.apply(e);
                    events += 1;
                }
                _ => {}
            },
            Err(e) => {
                warn!(message = "An event of the log cannot be read; it is skipped.", error = %e)
            }
        }
    }
    if queue.unreadable > 0 {
        warn!(
            message = "Submitted job ads in the log do not parse; those jobs are left out.",
            jobs = queue.unreadable
        );
    }
    info!(
        message = "Queue replayed.",
        events,
        jobs = queue.jobs.len(),
        history = queue.history.len(),
        routed = router.jobs.len()
    );
    (queue, router)
}

/// The actor system's exit code when the event log failed a write.
const LOG_FAILED: i32 = 75;

/// Runs `roost schedd`.
pub fn run(cmd: ScheddCmd) -> Result<ExitCode> {
    let config = load_daemon_config(cmd.config.as_deref(), "SCHEDD")?;
    for w in config.warnings() {
        eprintln!("roost: warning: {w}");
    }
    let settings = settings(&config)?;
    let socket = socket_path(&config)
        .ok_or_else(|| anyhow!("no place for the socket: set LOCK, LOG or {SOCKET_KNOB}"))?;
    let log_dir = dir(&config, "LOG")?;
    let spool = dir(&config, "SPOOL")?;
    let log_settings =
        LogSettings::of(&config, &log_dir, "SCHEDD", "SchedLog").map_err(|e| anyhow!(e))?;
    if !cmd.foreground {
        nix::unistd::daemon(true, false).map_err(|e| anyhow!("cannot detach: {e}"))?;
    }
    init_logging_as(&config, "SCHEDD", &log_settings)?;
    let routing = super::router_conf::router_settings(&config, &settings, &log_dir)?;
    let listener = crate::actors::admin::bind_mode(&socket, 0o666)
        .map_err(|e| anyhow!("schedd socket: {e}"))?;
    let events = events_dir(&spool);
    let store = SledStore::open(&events).map_err(|e| anyhow!("event log: {e}"))?;
    let queue = replay(&store, settings.history_jobs);
    let reader = store.reader();
    let pointer = events.join(crate::events::DAEMON_SOCKET_FILE);
    if let Err(e) = std::fs::write(&pointer, socket.as_os_str().as_encoded_bytes()) {
        warn!(message = "Cannot write the socket's path beside the event log.",
            file = %pointer.display(), error = %e);
    }
    info!(message = "Starting.", name = %settings.name, log = %events.display(),
        socket = %socket.display());

    let sys = System::new();
    let committer = sys.block_on(async move {
        let system = System::current();
        let on_failure: crate::events::OnFailure =
            Box::new(move |e: &crate::events::StoreError| {
                error!(message = "The event log cannot be written; the schedd stops.", error = %e);
                system.stop_with_code(LOG_FAILED);
            });
        let (committer, appender) = GroupCommitter::start_watched(store, None, Some(on_failure));
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let actor = ScheddActor::new(queue, appender, clock, settings, routing).start();
        actix::spawn(serve(listener, actor, reader));
        actix::spawn(async {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut int), Ok(mut quit)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::quit()),
            ) else {
                error!(message = "Cannot install signal handlers.");
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = quit.recv() => {}
            }
            info!(message = "Stopping on a signal.");
            System::current().stop();
        });
        committer
    });
    let code = sys.run_with_code().context("actor system")?;
    drop(committer.finish());
    let _ = std::fs::remove_file(&socket);
    let _ = std::fs::remove_file(&pointer);
    if code == LOG_FAILED {
        return Err(anyhow!(
            "stopped: the event log could not be written (SchedLog says why); \
             restarted, the schedd replays it and goes on"
        ));
    }
    info!(message = "Stopped.");
    Ok(ExitCode::SUCCESS)
}
