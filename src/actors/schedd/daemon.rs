//! `roost schedd`'s composition root: the access point's job queue as a
//! daemon. Reads the configuration as subsystem SCHEDD, replays its event log
//! (`$(SPOOL)/roost-schedd-events`) into the queue, and serves
//! `roost submit`, `q`, `rm`, `hold`, `release`, `history` and the queue
//! hooks on its socket (`ROOST_SCHEDD_SOCKET`, default
//! `$(LOCK)/roost_schedd.sock`, open to every local user: requests act as
//! the caller's Unix user).

use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;

use actix::prelude::*;
use anyhow::{Context, Result, anyhow};
use tracing::{error, info, warn};

use super::cron::Reconfigure;
use super::queue::{ScheddActor, events_dir, serve};
use super::replay::{replay, start_batch};
use super::settings::{cron_run, router_settings, settings, socket_path};
use crate::actors::common::clock::{Clock, SystemClock};
use crate::actors::common::cron_host::{ScheddCronSetup, ScheddHost};
use crate::actors::common::daemon::{
    DaemonSignal, Signals, detach, dir, init_logging_as, point_to_socket,
};
use crate::actors::common::daemon_log::LogSettings;
use crate::actors::common::sysconfig::load_daemon_config;
use crate::cron::config::{self as cron_config, Manager};
use crate::events::{GroupCommitter, SledStore};
use crate::schedd::ad::Identity;
use crate::schedd::event::ScheddEvent;
use crate::schedd::protocol::SOCKET_KNOB;

/// The configuration again, on SIGHUP: schedd cron's jobs and the
/// router's routes, or why it cannot be taken (the schedd goes on with
/// what it had).
fn reread(cmd_config: Option<&str>, log_dir: &std::path::Path) -> Result<Reconfigure> {
    let config = load_daemon_config(cmd_config, "SCHEDD")?;
    for w in config.warnings() {
        warn!(message = "Configuration warning.", warning = %w);
    }
    let settings = settings(&config)?;
    Ok(Reconfigure {
        cron: cron_config::read(&config, Manager::ScheddCron),
        routing: router_settings(&config, &settings, log_dir)?,
    })
}

/// The actor system's exit code when the event log failed a write.
const LOG_FAILED: i32 = 75;

/// Runs `roost schedd` on the configuration under `config_path` (`None`:
/// `$CONDOR_CONFIG`, then the standard places), detached unless
/// `foreground`, until SIGTERM, SIGINT or SIGQUIT.
pub fn run(config_path: Option<&str>, foreground: bool) -> Result<ExitCode> {
    let config = load_daemon_config(config_path, "SCHEDD")?;
    for w in config.warnings() {
        eprintln!("roost: warning: {w}");
    }
    let settings = settings(&config)?;
    let pool = crate::pool::PoolSettings::from_config(&config)?;
    let socket = socket_path(&config)
        .ok_or_else(|| anyhow!("no place for the socket: set LOCK, LOG or {SOCKET_KNOB}"))?;
    let log_dir = dir(&config, "LOG")?;
    let spool = dir(&config, "SPOOL")?;
    let log_settings =
        LogSettings::of(&config, &log_dir, "SCHEDD", "SchedLog").map_err(|e| anyhow!(e))?;
    detach(foreground)?;
    init_logging_as(&config, "SCHEDD", &log_settings)?;
    let routing = router_settings(&config, &settings, &log_dir)?;
    let listener = crate::actors::common::socket::bind_mode(&socket, 0o666)
        .map_err(|e| anyhow!("schedd socket: {e}"))?;
    let events = events_dir(&spool);
    let mut store: SledStore<ScheddEvent> =
        SledStore::open_as(&events).map_err(|e| anyhow!("event log: {e}"))?;
    let mut last = replay(&store, settings.history_jobs);
    let now = SystemClock.now();
    let cron_last = start_batch(&mut store, &mut last, &settings.name, now)?;
    let cron = cron_config::read(&config, Manager::ScheddCron);
    let run = cron_run(&config, &log_dir)?;
    let identity = Identity {
        name: settings.name.clone(),
        machine: config
            .text("FULL_HOSTNAME")
            .map_err(|e| anyhow!(e))?
            .unwrap_or_else(|| "localhost".into()),
        started: now,
        reconfigured: now,
        socket: socket.display().to_string(),
    };
    let transfer = match &settings.transfer {
        Some(a) => Some(
            super::transfer::bind(
                a,
                &identity.machine,
                &spool.join("roost-schedd-transfer-port"),
            )
            .map_err(|e| anyhow!("file server at {a} (ROOST_SCHEDD_TRANSFER_ADDRESS): {e}"))?,
        ),
        None => None,
    };
    let submit_host = submit_host(transfer.as_ref().map(|(_, told)| told.as_str()), &identity);
    let user_logs =
        super::userlog::UserLogs::start().map_err(|e| anyhow!("the user-log writer: {e}"))?;
    let reader = store.reader().as_events();
    let pointer = point_to_socket(&events, &socket);
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
        let (host, pens) = ScheddHost::new(Arc::clone(&clock), appender.clone(), run);
        let actor = ScheddActor::new(
            (last.queue, last.router),
            appender,
            clock,
            (settings, identity),
            routing,
        )
        .with_cron(ScheddCronSetup {
            host: Rc::new(host),
            pens,
            settings: cron,
            last: cron_last,
        })
        .with_pool(pool)
        .with_transfer(transfer.as_ref().map(|(_, told)| told.clone()))
        .with_user_logs(user_logs, submit_host)
        .start();
        actix::spawn(serve(listener, actor.clone(), reader));
        if let Some((files, told)) = transfer {
            info!(message = "Serving job files.", address = %told);
            actix::spawn(super::transfer::serve(files, actor.clone()));
        }
        let config_path = config_path.map(str::to_string);
        Signals::serve(|s| signals(s, actor, config_path, log_dir));
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

/// Stops on SIGTERM, SIGINT or SIGQUIT; reads the configuration again on
/// SIGHUP.
async fn signals(
    mut signals: Signals,
    actor: Addr<ScheddActor>,
    config: Option<String>,
    log_dir: PathBuf,
) {
    loop {
        match signals.next().await {
            DaemonSignal::Hup => match reread(config.as_deref(), &log_dir) {
                Ok(r) => actor.do_send(r),
                Err(e) => error!(
                    message = "The configuration cannot be read again; going on with the one in force.",
                    error = %e
                ),
            },
            stop => {
                info!(message = "Stopping on a signal.", signal = stop.name());
                break;
            }
        }
    }
    System::current().stop();
}

/// The schedd as a job's submit record names it: HTCondor's address form
/// (`<ip:port?addrs=ip-port&alias=host>`) of the file server when there
/// is one, else the host name alone (`<host>`).
fn submit_host(served: Option<&str>, identity: &Identity) -> String {
    match served.and_then(|a| a.rsplit_once(':')) {
        Some((ip, port)) => format!("<{ip}:{port}?addrs={ip}-{port}&alias={}>", identity.machine),
        None => format!("<{}>", identity.machine),
    }
}
