//! `roost schedd`: the access point's job queue as a daemon. Reads the
//! configuration as subsystem SCHEDD, replays its event log
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
use clap::Args;
use tracing::{error, info, warn};

use super::daemon_log::LogSettings;
use super::startd_cmd::{dir, init_logging_as};
use super::sysconfig::load_daemon_config;
use crate::actors::common::clock::{Clock, SystemClock};
use crate::actors::common::cron_host::{CronRunSettings, ScheddCronSetup, ScheddHost};
use crate::actors::schedd::cron::Reconfigure;
use crate::actors::schedd::queue::{ScheddActor, ScheddSettings, events_dir, serve};
use crate::config::Config;
use crate::cron::config::{self as cron_config, Manager};
use crate::events::{
    CronState, DaemonEvent, Event, EventRead, EventStore, GroupCommitter, SledStore,
};
use crate::schedd::ad::Identity;
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

fn text(config: &Config, knob: &str) -> Result<Option<String>> {
    config.text(knob).map_err(|e| anyhow!(e))
}

/// The queue's knobs.
fn settings(config: &Config) -> Result<ScheddSettings> {
    let text = |k: &str| text(config, k);
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

/// What the schedd's log holds.
struct Replayed {
    queue: Queue,
    router: Router,
    /// Its cron jobs' runs and ads.
    cron: CronState,
    /// The machine's boot the last run was in (empty: not known).
    boot: String,
}

/// The queue, the router and schedd cron the log holds; a record that
/// does not decode is skipped, said in the daemon log, and the rest is
/// read.
fn replay(store: &SledStore, history_limit: usize) -> Replayed {
    let mut queue = Queue::replay_keeping(history_limit, &[]);
    let mut router = Router::default();
    let mut cron = CronState::default();
    let mut boot = String::new();
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
                Event::Cron(e) => cron.apply(env.time, &env.actor, e),
                Event::Daemon(DaemonEvent::Started { boot: b, .. }) => {
                    cron.new_run();
                    boot.clone_from(b);
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
    Replayed {
        queue,
        router,
        cron,
        boot,
    }
}

/// The start batch: the cron runs the last run left going ended (and
/// killed, when still alive), then the run's `Started`, which tells a
/// later replay which boot this run is in. Returns the cron state a new
/// run continues from (`None` after a reboot).
fn start_batch(
    store: &mut SledStore,
    last: &Replayed,
    name: &str,
    now: i64,
) -> Result<Option<CronState>> {
    let (rebooted, boot) = crate::starter::rebooted_since(&last.boot);
    let mut batch: Vec<(i64, String, Event)> = super::startd_cmd::cron_left(&last.cron, rebooted)
        .into_iter()
        .map(|(a, e)| (now, a, e))
        .collect();
    batch.push((
        now,
        "daemon".into(),
        Event::Daemon(DaemonEvent::Started {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            host: name.into(),
            slots: Vec::new(),
            boot,
        }),
    ));
    store
        .append(store.next_seq(), &batch)
        .map_err(|e| anyhow!("event log: cannot record the start: {e}"))?;
    let mut cron = last.cron.clone();
    cron.new_run();
    Ok((!rebooted).then_some(cron))
}

/// Schedd cron's jobs and how they run, from `config`.
fn cron_run(config: &Config, log_dir: &std::path::Path) -> Result<CronRunSettings> {
    Ok(CronRunSettings {
        roost_exe: std::env::current_exe().context("cannot find the roost executable")?,
        config_root: config.files().first().cloned(),
        env: crate::spawn::Environment::of_process(),
        user: super::startd_cmd::hook_user(config),
        log_dir: log_dir.to_path_buf(),
    })
}

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
        routing: super::router_conf::router_settings(&config, &settings, log_dir)?,
    })
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
    let pool = crate::pool::PoolSettings::from_config(&config)?;
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
    let listener = crate::actors::common::socket::bind_mode(&socket, 0o666)
        .map_err(|e| anyhow!("schedd socket: {e}"))?;
    let events = events_dir(&spool);
    let mut store = SledStore::open(&events).map_err(|e| anyhow!("event log: {e}"))?;
    let last = replay(&store, settings.history_jobs);
    let now = SystemClock.now();
    let cron_last = start_batch(&mut store, &last, &settings.name, now)?;
    let cron = cron_config::read(&config, Manager::ScheddCron);
    let run = cron_run(&config, &log_dir)?;
    let identity = Identity {
        name: settings.name.clone(),
        machine: text(&config, "FULL_HOSTNAME")?.unwrap_or_else(|| "localhost".into()),
        started: now,
        reconfigured: now,
        socket: socket.display().to_string(),
    };
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
        let host = Rc::new(ScheddHost::new(Arc::clone(&clock), appender.clone(), run));
        let actor = ScheddActor::new(
            (last.queue, last.router),
            appender,
            clock,
            (settings, identity),
            routing,
        )
        .with_cron(ScheddCronSetup {
            host,
            settings: cron,
            last: cron_last,
        })
        .with_pool(pool)
        .start();
        actix::spawn(serve(listener, actor.clone(), reader));
        actix::spawn(signals(actor, cmd.config, log_dir));
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
async fn signals(actor: Addr<ScheddActor>, config: Option<String>, log_dir: PathBuf) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut quit), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::quit()),
        signal(SignalKind::hangup()),
    ) else {
        error!(message = "Cannot install signal handlers.");
        return;
    };
    loop {
        tokio::select! {
            _ = term.recv() => break,
            _ = int.recv() => break,
            _ = quit.recv() => break,
            _ = hup.recv() => match reread(config.as_deref(), &log_dir) {
                Ok(r) => actor.do_send(r),
                Err(e) => error!(
                    message = "The configuration cannot be read again; going on with the one in force.",
                    error = %e
                ),
            },
        }
    }
    info!(message = "Stopping on a signal.");
    System::current().stop();
}
