//! `roost startd`'s composition root: reads HTCondor configuration,
//! detects the machine, opens the event log, reconciles what an earlier
//! run left unfinished ([`super::reconcile`]), creates the slots and runs
//! the actors until a shutdown (SIGTERM graceful, SIGQUIT fast, SIGINT
//! graceful then fast; SIGHUP re-reads the configuration).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use actix::prelude::*;
use anyhow::{Context as _, Result, anyhow};
use tracing::{error, info, warn};

use super::node::{Control, NodeActor};
use super::quickstart;
use super::reconcile::{LastRun, reconcile_last_run};
use super::shared::{Dirs, HookSettings, Shared};
use crate::actors::common::clock::{Clock, SystemClock};
use crate::actors::common::daemon::{
    DaemonSignal, Signals, detach, dir, hook_user, init_logging_as, log_panics, point_to_socket,
};
use crate::actors::common::daemon_log::LogSettings;
use crate::actors::common::machine::detect;
use crate::actors::common::socket;
use crate::actors::common::sysconfig::{daemon_name, load_startd_config};
use crate::admin::socket_path;
use crate::config::Config;
use crate::config::daemon_knobs::DaemonSettings;
use crate::events::{EventStore, GroupCommitter, Retention, SledStore};
use crate::policy::engine::{DrainHow, Policy};
use crate::policy::layout::{MachineInputs, layout, machine};
use crate::startd::{CheckpointEvery, Checkpointer, Kept, Replay};

/// How `roost startd` is asked to run (its command line).
#[derive(Debug, Default, Clone)]
pub struct StartdOptions {
    /// The root configuration file (`None`: `$CONDOR_CONFIG`, then the
    /// standard places).
    pub config: Option<String>,
    /// Stay in the foreground; otherwise detach.
    pub foreground: bool,
    /// Write the quickstart setup into this directory if it is not there
    /// yet, and run on it.
    pub quickstart: Option<PathBuf>,
}

/// Removes the sandboxes under `EXECUTE` that starters no longer running
/// left behind (as HTCondor's startd cleans its execute directory when it
/// starts), so that crashes do not fill the disk. They are set aside now,
/// before any starter of this run can be given one of their pids, and
/// deleted in the background.
fn sweep_sandboxes(execute: &Path) {
    let aside = crate::starter::orphaned_sandboxes(execute)
        .into_iter()
        .filter_map(|dir| {
            if dir.extension().is_some_and(|e| e == "lost") {
                return Some(dir);
            }
            crate::starter::set_aside(&dir)
                .map_err(|e| {
                    warn!(
                        message = "Cannot remove a sandbox its starter left.",
                        sandbox = %dir.display(),
                        error = %e
                    );
                })
                .ok()
        })
        .collect();
    crate::starter::delete_in_background(aside);
}

/// How often the event-log writer checkpoints:
/// `ROOST_EVENT_LOG_CHECKPOINT_EVENTS` events (default 100,000) or
/// `ROOST_EVENT_LOG_CHECKPOINT_INTERVAL` seconds of event time (default a
/// day); 0 turns either off.
fn checkpoint_every(settings: &DaemonSettings) -> CheckpointEvery {
    let d = CheckpointEvery::default();
    let (events, seconds) = settings.checkpoint;
    CheckpointEvery {
        events: events.unwrap_or(d.events),
        seconds: seconds
            .and_then(|s| i64::try_from(s).ok())
            .unwrap_or(d.seconds),
    }
}

/// How much of the event log to keep: `ROOST_EVENT_LOG_KEEP_DAYS` (a
/// number of days, fractions allowed) and `ROOST_EVENT_LOG_KEEP_MB`
/// (unset or 0: no limit), cut at checkpoints into
/// `ROOST_EVENT_LOG_ARCHIVE` (a directory; unset: deleted); the audit trail
/// of cut claims kept `ROOST_EVENT_LOG_KEEP_CLAIMS_DAYS` in
/// `events::KEPT_CLAIMS_FILE` beside the log (unset: not kept apart).
fn retention(settings: &DaemonSettings, events_dir: &Path) -> Retention {
    let keep = settings.keep;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Retention {
        keep_seconds: keep.days.map(|d| (d * 86_400.0).ceil() as i64),
        keep_bytes: keep.mb.map(|mb| (mb * 1_048_576.0) as u64),
        archive: settings.archive.clone(),
        keep_claims_seconds: keep.claims_days.map(|d| (d * 86_400.0).ceil() as i64),
        claims_file: keep
            .claims_days
            .map(|_| events_dir.join(crate::events::KEPT_CLAIMS_FILE)),
    }
}

/// What `roost startd` opens and works out before its actors start: the
/// event log (the last run reconciled), the machine and its slots.
pub struct Prepared {
    /// The log, reconciled; its writer starts with the actors.
    store: SledStore,
    checkpoints: Checkpointer,
    /// Reads the log while the daemon writes it (for the admin socket).
    pub reader: crate::events::SledReader,
    lost: Vec<crate::startd::LostClaim>,
    /// Jobs the last run was handed and did not answer.
    unanswered: Vec<crate::startd::Unanswered>,
    /// The last run's starters taken again, and when that run started
    /// (their claims keep the `ClaimId` it gave them).
    reattach: (Kept, i64),
    first_id: u64,
    slots: Vec<(
        crate::policy::slot::Slot,
        crate::policy::layout::SlotSpec,
        Policy,
    )>,
    dirs: Dirs,
    host: String,
    /// The daemon's name (`STARTD_NAME`), slots' `slotN@<name>`.
    name: String,
    hooks: HookSettings,
    settings: DaemonSettings,
    machine: crate::policy::layout::Machine,
    /// What detection found, for checking a new configuration's layout.
    inputs: MachineInputs,
    detected: (u32, i64),
    /// The `roost` executable, run as each job's starter.
    pub starter_exe: PathBuf,
    /// What the log says of the cron jobs, when the last run was in this
    /// boot of the machine.
    cron: Option<crate::cron::event::CronState>,
    /// The pool the node publishes in (`ROOST_POOL_ETCD`).
    pool: Option<crate::pool::PoolSettings>,
    /// Told of each configuration a reconfig takes.
    on_config: Option<crate::actors::startd::node::ConfigListener>,
}

impl Prepared {
    /// Opens the event log under `$(SPOOL)`, reconciles what the last run
    /// left open (at time `now`), detects the machine and lays out the
    /// slots, as `config` says.
    pub fn open(config: &Config, dirs: Dirs, now: i64) -> Result<Prepared> {
        let events_dir = dirs.spool.join("roost-events");
        let replay_began = std::time::Instant::now();
        let mut store = SledStore::open(&events_dir).map_err(|e| anyhow!("event log: {e}"))?;
        let settings = DaemonSettings::read(config).map_err(|e| anyhow!(e))?;
        let pool = crate::pool::PoolSettings::from_config(config).map_err(|e| anyhow!(e))?;
        let LastRun {
            replay: last,
            kept: reattach,
            mut restored,
            owed: lost,
        } = {
            for d in [dirs.hook_output(), dirs.starter_leftovers()] {
                std::fs::create_dir_all(&d)
                    .with_context(|| format!("cannot create {}", d.display()))?;
            }
            reconcile_last_run(&mut store, now, &settings, &dirs)?
        };
        let unanswered = last.unanswered(&reattach);
        let first_id = store.next_seq();
        let reader = store.reader();
        let checkpoints =
            Checkpointer::new(Replay::from_last_start(&store), checkpoint_every(&settings))
                .with_retention(retention(&settings, &events_dir));
        crate::metrics::global().set_replay(replay_began.elapsed(), &events_dir);

        let inputs = detect(&dirs.execute);
        let m = machine(config, &inputs).map_err(|e| anyhow!("machine resources: {e}"))?;
        let specs = layout(config, &m).map_err(|e| anyhow!("slot layout: {e}"))?;
        let host = config
            .expanded("FULL_HOSTNAME")?
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".into());
        let name = daemon_name(config.expanded("STARTD_NAME")?, &host);
        let mut slots = Vec::new();
        for spec in specs {
            let id = format!("slot{}", spec.id);
            let policy = Policy::from_config(config, &id, spec.type_id)
                .map_err(|e| anyhow!("policy of {id}: {e}"))?;
            // A slot whose starter is taken again goes on as it was.
            let slot = restored.remove(&id).unwrap_or_else(|| {
                let mut slot = spec.new_slot(&m, &name, now);
                slot.next_claim = last.next_claim(&id);
                slot
            });
            slots.push((slot, spec, policy));
        }
        // The dynamic slots of starters taken again, under their parents.
        for (id, slot) in restored {
            let crate::policy::slot::SlotKind::Dynamic { parent } = &slot.kind else {
                continue;
            };
            let Some(mut spec) = slots
                .iter()
                .find(|(s, ..)| &s.id == parent)
                .map(|(_, spec, ..)| spec.clone())
            else {
                continue;
            };
            spec.partitionable = false;
            let policy = Policy::from_config(config, &id, spec.type_id)
                .map_err(|e| anyhow!("policy of {id}: {e}"))?;
            slots.push((slot, spec, policy));
        }
        let hooks = HookSettings {
            user: hook_user(config),
            env: crate::spawn::Environment::of_process(),
        };
        if nix::unistd::Uid::effective().is_root() && hooks.user.is_none() {
            warn!(
                message = "Running as root without a condor user or CONDOR_IDS: startd hooks run as root."
            );
        }
        let starter_exe = std::env::current_exe().context("cannot find the roost executable")?;
        info!(
            message = "Starting.",
            host = %host,
            slots = slots.len(),
            log = %events_dir.display(),
            program = %starter_exe.display()
        );
        let last_start = last.run.as_ref().map_or(0, |(t, _)| *t);
        let same_boot = !crate::starter::rebooted_since(&last.boot).0;
        Ok(Prepared {
            cron: same_boot.then(|| last.cron.clone()),
            store,
            checkpoints,
            reader,
            lost,
            unanswered,
            reattach: (reattach, last_start),
            first_id,
            slots,
            dirs,
            host,
            name,
            hooks,
            settings,
            machine: m,
            detected: (inputs.cpus, inputs.memory_mb),
            inputs,
            starter_exe,
            pool,
            on_config: None,
        })
    }

    /// `tell` is called with each configuration a reconfig takes (what
    /// lives outside the actors, such as the daemon log's limits, follows
    /// it).
    #[must_use]
    pub fn on_new_config(mut self, tell: crate::actors::startd::node::ConfigListener) -> Prepared {
        self.on_config = Some(tell);
        self
    }

    /// Starts the actors (inside a running actix system) on `clock`:
    /// the shared state, the supervisor and, through it, the slots. The
    /// log's writer ends once the returned committer is finished and every
    /// appender is gone.
    pub fn start(
        self,
        config: Config,
        clock: Arc<dyn Clock>,
        reload: crate::actors::startd::node::Reload,
    ) -> (
        std::rc::Rc<Shared>,
        Addr<NodeActor>,
        GroupCommitter<SledStore>,
    ) {
        self.start_over(|store| store, config, clock, reload)
    }

    /// [`Prepared::start`], with the log's store seen through `wrap` (a
    /// store that fails on demand, to test what the actors do when the
    /// log cannot be written).
    pub fn start_over<S: EventStore + Send + 'static>(
        self,
        wrap: impl FnOnce(SledStore) -> S,
        config: Config,
        clock: Arc<dyn Clock>,
        reload: crate::actors::startd::node::Reload,
    ) -> (std::rc::Rc<Shared>, Addr<NodeActor>, GroupCommitter<S>) {
        // A log that fails a write stops the daemon: what failed is not
        // acted on, and a store that failed once may fail every write after
        // it (sled does until it is opened again). Its supervisor restarts
        // it; the restart replays the log and goes on from what it holds.
        let system = System::current();
        let on_failure: crate::events::OnFailure =
            Box::new(move |e: &crate::events::StoreError| {
                error!(message = "The event log cannot be written; the daemon stops.", error = %e);
                system.stop_with_code(LOG_FAILED);
            });
        // With metrics on, every group written is counted (`crate::metrics`).
        let on_commit = self.settings.metrics.map(|_| crate::metrics::on_commit());
        let watchers = crate::events::Watchers {
            on_failure: Some(on_failure),
            on_commit,
        };
        let (committer, appender) = GroupCommitter::start_observed(
            wrap(self.store),
            Some(Box::new(self.checkpoints)),
            watchers,
        );
        let (mut shared, pens) = Shared::new(
            std::rc::Rc::new(config),
            self.settings,
            appender,
            clock,
            self.dirs,
            self.host,
            self.hooks,
            self.machine,
            self.detected,
            self.starter_exe,
            self.first_id,
        );
        shared.name = self.name;
        let shared = std::rc::Rc::new(shared);
        // Starters of the last run that call before their actors start are
        // asked to wait for them.
        for st in self.reattach.0.starters.values() {
            shared.waiting.expect(st.pid);
        }
        let node = NodeActor::new(std::rc::Rc::clone(&shared), pens, self.slots, reload)
            .with_config_listener(self.on_config)
            .with_lost(self.lost, self.unanswered)
            .with_reattach(self.reattach.0, self.reattach.1)
            .with_cron(self.cron)
            .with_pool(self.pool)
            .start();
        (shared, node, committer)
    }
}

/// The actor system's exit code when the event log failed a write.
const LOG_FAILED: i32 = 75;

/// What a new configuration must pass before a reconfig takes it, beyond
/// what the node actor reads from it itself (each slot's policy and the
/// daemon's knobs, [`DaemonSettings::read`]): the daemon log's knobs read,
/// and the slot layout it describes can be made on this machine (the
/// layout changes only at a restart, which would otherwise fail).
fn check_config(config: &Config, log_dir: &Path, inputs: &MachineInputs) -> Result<()> {
    LogSettings::from_config(config, log_dir).map_err(|e| anyhow!(e))?;
    let m = machine(config, inputs).context("machine resources")?;
    layout(config, &m).context("slot layout")?;
    Ok(())
}

/// Runs `roost startd`.
pub fn run(cmd: StartdOptions) -> Result<ExitCode> {
    // Signals that come before the handlers are installed (after the
    // log's replay) wait until then.
    Signals::hold();
    let root = match &cmd.quickstart {
        Some(d) => Some(quickstart::prepare(d)?.display().to_string()),
        None => cmd.config.clone(),
    };
    let config = load_startd_config(root.as_deref())?;
    for w in config.warnings() {
        eprintln!("roost: warning: {w}");
    }
    DaemonSettings::read(&config).map_err(|e| anyhow!(e))?;
    let socket = socket_path(&config).ok_or_else(|| {
        anyhow!("no place for the admin socket: set LOCK, LOG or ROOST_ADMIN_SOCKET")
    })?;
    let dirs = Dirs {
        log: dir(&config, "LOG")?,
        execute: dir(&config, "EXECUTE")?,
        spool: dir(&config, "SPOOL")?,
        socket: Some(socket.clone()),
    };
    detach(cmd.foreground)?;
    let log_settings = LogSettings::from_config(&config, &dirs.log).map_err(|e| anyhow!(e))?;
    let log_file = init_logging_as(&config, "STARTD", &log_settings)?;
    let log_dir = dirs.log.clone();
    log_panics();
    sweep_sandboxes(&dirs.execute);
    // Hooks and jobs get files no one else may write.
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));

    let listener = socket::bind(&socket).map_err(|e| anyhow!("admin socket: {e}"))?;

    let events_dir = dirs.spool.join("roost-events");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let prepared = Prepared::open(&config, dirs, clock.now())?;
    // Tells `roost-log` where to read the log while this daemon holds it.
    let pointer = point_to_socket(&events_dir, &socket);
    let own_exe = prepared.starter_exe.clone();
    let config_root = root.clone();
    let metrics = prepared
        .settings
        .metrics
        .and_then(crate::actors::startd::metrics_http::bind);

    let sys = System::new();
    let (shared, committer) = sys.block_on(async {
        let reload_root = config_root.clone();
        let reload_log_dir = log_dir.clone();
        let reload_inputs = prepared.inputs.clone();
        let reload = Box::new(move || {
            let config = load_startd_config(reload_root.as_deref())?;
            check_config(&config, &reload_log_dir, &reload_inputs)?;
            Ok(config)
        });
        let reader = prepared.reader.clone();
        // A configuration taken at a reconfig gives the log its limits.
        let prepared = prepared.on_new_config(Box::new(move |config| {
            if let Ok(s) = LogSettings::from_config(config, &log_dir) {
                log_file.set_limits(&s);
            }
        }));
        let (shared, node, committer) = prepared.start(config, clock, reload);
        actix::spawn(crate::actors::startd::admin::serve(
            listener,
            node.clone(),
            reader,
            shared.waiting.clone(),
        ));
        if let Some(m) = metrics {
            actix::spawn(crate::actors::startd::metrics_http::serve(m));
        }
        Signals::serve(|s| signals(s, node));
        // Signals that came during start-up are delivered now.
        Signals::release();
        (shared, committer)
    });
    let code = sys.run_with_code().context("actor system")?;
    // The log's writer ends once every appender is gone.
    let restart = code == crate::actors::startd::node::RESTART;
    shared.starters.close();
    drop(shared);
    drop(committer.finish());
    let _ = std::fs::remove_file(&socket);
    let _ = std::fs::remove_file(&pointer);
    if code == LOG_FAILED {
        error!(message = "Stopped: the event log could not be written.");
        return Err(anyhow!(
            "stopped: the event log could not be written (StartLog says why); \
             restarted, the daemon replays it and goes on"
        ));
    }
    if restart {
        info!(message = "Restarting.");
        use std::os::unix::process::CommandExt;
        let err = std::process::Command::new(&own_exe)
            .args(std::env::args_os().skip(1))
            .exec();
        return Err(anyhow!("cannot restart: {err}"));
    }
    info!(message = "Stopped.");
    Ok(ExitCode::SUCCESS)
}

/// SIGTERM: graceful shutdown; SIGQUIT: fast; SIGINT: graceful, then
/// fast; SIGHUP: reconfigure.
async fn signals(mut signals: Signals, node: Addr<NodeActor>) {
    let mut interrupted = false;
    loop {
        let control = match signals.next().await {
            DaemonSignal::Term => Control::Off(DrainHow::Graceful),
            DaemonSignal::Quit => Control::Off(DrainHow::Fast),
            DaemonSignal::Int => {
                let how = if interrupted {
                    DrainHow::Fast
                } else {
                    DrainHow::Graceful
                };
                interrupted = true;
                Control::Off(how)
            }
            DaemonSignal::Hup => Control::Reconfig,
        };
        match node.send(control).await {
            Ok(r) if r.ok => info!(message = "Command done.", result = %r.message),
            Ok(r) => warn!(message = "Command failed.", error = %r.message),
            Err(_) => return,
        }
    }
}
