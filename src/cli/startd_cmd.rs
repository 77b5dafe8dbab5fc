//! `roost startd`: the execute-point daemon. Reads HTCondor configuration,
//! detects the machine, opens the event log, reconciles what an earlier
//! run left unfinished, creates the slots and runs the actors until a
//! shutdown (SIGTERM graceful, SIGQUIT fast, SIGINT graceful then fast;
//! SIGHUP re-reads the configuration).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use actix::prelude::*;

use crate::actors::common::socket;
use anyhow::{Context as _, Result, anyhow};
use clap::Args;
use nix::sys::signal::{SigSet, Signal};
use tracing::{error, info, warn};

use super::daemon_log::{LogFile, LogSettings};
use super::quickstart;
use super::sysconfig::load_startd_config;
use crate::actors::common::clock::{Clock, SystemClock};
use crate::actors::startd::machine::detect;
use crate::actors::startd::node::{Control, NodeActor};
use crate::actors::startd::shared::{Dirs, HookSettings, Shared};
use crate::admin::socket_path;
use crate::config::Config;
use crate::config::daemon_knobs::DaemonSettings;
use crate::events::Kept;
use crate::events::replay::OpenStarter;
use crate::events::{
    CheckpointEvery, Checkpointer, DaemonEvent, Event, EventStore, GroupCommitter, Replay,
    Retention, SledStore,
};
use crate::policy::engine::{DrainHow, Policy};
use crate::policy::layout::{MachineInputs, layout, machine};
use crate::policy::slot::SlotEvent;

/// `roost startd` options.
#[derive(Args, Debug)]
pub struct StartdCmd {
    /// The root configuration file (default: $CONDOR_CONFIG, then the
    /// standard places).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// Stay in the foreground (as HTCondor's -f); without it the daemon
    /// detaches.
    #[arg(short = 'f', long)]
    foreground: bool,
    /// Write the quickstart setup (configuration, spool hooks, example
    /// jobs) into DIR if it is not there yet, and run on it.
    #[arg(long, value_name = "DIR", conflicts_with = "config")]
    quickstart: Option<PathBuf>,
}

pub(crate) fn dir(config: &Config, knob: &str) -> Result<PathBuf> {
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

pub(super) fn hook_user(config: &Config) -> Option<(u32, u32)> {
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

/// Logs to stderr and the daemon log, which it returns (for reconfig).
fn init_logging(config: &Config, log_dir: &Path) -> Result<LogFile> {
    let settings = LogSettings::from_config(config, log_dir).map_err(|e| anyhow!(e))?;
    init_logging_as(config, "STARTD", &settings)
}

/// Logs to stderr and the log `settings` name at the level
/// `<subsys>_DEBUG` asks for.
pub(crate) fn init_logging_as(
    config: &Config,
    subsys: &str,
    settings: &LogSettings,
) -> Result<LogFile> {
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

/// Writes a panic to the log before the process ends. Release builds abort
/// on a panic (`panic = "abort"` in `Cargo.toml`): a daemon with one actor
/// gone (the runtime would drop a panicking actor and run on without it) is
/// worse than a daemon that stops, is restarted and replays its event log.
/// Without this the reason would reach only stderr, which a detached daemon
/// does not have.
fn log_panics() {
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

/// What the last run left, as a new run starts.
struct LastRun {
    /// Its replay (before the reconciliation).
    replay: Replay,
    /// Its starters taken again and its idle fetched claims kept.
    kept: Kept,
    /// The slots of those (and a dynamic slot's parent), as the
    /// reconciliation leaves them, to go on from.
    restored: BTreeMap<String, crate::policy::slot::Slot>,
    /// The lost claims whose loss the fetcher is owed word of: this
    /// reconciliation's and those an earlier run died before telling.
    owed: Vec<crate::events::LostClaim>,
}

/// Replays the last run from the log and appends what closes what it left
/// open (claims, slots, starters, hooks), except what goes on with the
/// starters still running, which are taken again when they wait for a
/// daemon (`ROOST_STARTER_ORPHAN_TIMEOUT` above 0); kills what is left of
/// the jobs of starters that died meanwhile.
fn reconcile_last_run(
    store: &mut SledStore,
    now: i64,
    settings: &DaemonSettings,
    dirs: &Dirs,
) -> Result<LastRun> {
    let reattach = settings.starter_orphan_timeout > 0;
    let mut last = Replay::from_last_start(store);
    for p in &last.problems {
        warn!(message = "Event log problem while replaying the last run.", problem = %p);
    }
    // In another boot of the machine, no process of the last run is left,
    // whatever a pid and its start time (counted from boot) say now.
    let (rebooted, _) = crate::starter::rebooted_since(&last.boot);
    if rebooted && !last.starters.is_empty() {
        warn!(
            message = "The machine restarted since the last run: its jobs ended with it.",
            jobs = last.starters.len()
        );
    }
    let alive = |st: &OpenStarter| {
        !rebooted && st.started != 0 && crate::starter::process_started(st.pid) == Some(st.started)
    };
    let files =
        super::recover::read_back(store, &mut last, now, settings.pipe_buffer_max, dirs, alive);
    // Starters still running are taken again, and claims between jobs
    // kept, when starters outlive the daemon; not after a reboot.
    let kept = if reattach {
        Kept {
            starters: last.reattachable(alive),
            idle: if rebooted {
                BTreeMap::new()
            } else {
                last.idle_claims()
            },
        }
    } else {
        Kept::default()
    };
    let taken = &kept.starters;
    // A starter that died while no daemon ran left its job unwatched.
    let home = crate::starter::cgroup::JobCgroup::own_home().ok();
    for (actor, st) in &last.starters {
        if rebooted || taken.contains_key(actor) || alive(st) || st.told {
            continue;
        }
        let cgroup = settings.base_cgroup.as_deref().zip(home.as_deref());
        if crate::starter::kill_remains(&st.slot, st.pid, st.started, st.job_pid, cgroup) {
            warn!(message = "Killed what was left of a job whose starter died.",
                slot = %st.slot, claim = st.claim, starter = st.pid, job = ?st.job_pid);
        }
    }
    let mut fix = last.reconcile(now, &kept, alive, rebooted);
    fix.extend(cron_left(&last.cron, rebooted));
    let mut after = last.clone();
    for (actor, e) in &fix {
        after.apply_event(after.last_seq, now, actor, e);
    }
    let mut restored = BTreeMap::new();
    for id in taken.values().map(|st| &st.slot).chain(kept.idle.keys()) {
        if let Some(slot) = after.slots.get(id) {
            if let crate::policy::slot::SlotKind::Dynamic { parent } = &slot.kind
                && let Some(p) = after.slots.get(parent)
            {
                restored.insert(parent.clone(), p.clone());
            }
            restored.insert(id.clone(), slot.clone());
        }
    }
    for (actor, st) in taken {
        info!(message = "A starter of the last run is still running; it will be taken again.",
            slot = %st.slot, claim = st.claim, pid = st.pid, starter = %actor);
    }
    for (slot, claim) in &kept.idle {
        info!(message = "A fetched claim of the last run between jobs goes on.",
            slot = %slot, claim = claim);
    }
    let done = LastRun {
        replay: last,
        kept,
        restored,
        owed: after.owed.into_values().collect(),
    };
    if fix.is_empty() && files.events.is_empty() {
        files.remove();
        return Ok(done);
    }
    for (actor, e) in &fix {
        match e {
            Event::Daemon(DaemonEvent::Reconciled { slot, what }) => {
                warn!(message = "Reconciled the last run.", slot = %slot, what = %what);
            }
            Event::Slot(SlotEvent::ClaimEnded { .. }) => {
                warn!(message = "Claim lost when the daemon stopped.", slot = %actor);
            }
            _ => {}
        }
    }
    let batch: Vec<(i64, String, Event)> = (files.events.iter().cloned().chain(fix))
        .map(|(a, e)| (now, a, e))
        .collect();
    let next = store.next_seq();
    store
        .append(next, &batch)
        .map_err(|e| anyhow!("event log: cannot record the reconciliation: {e}"))?;
    crate::failpoint::hit("reconciled");
    files.remove();
    Ok(done)
}

/// The cron runs the last run left going: each still running (the same
/// process, in this boot) is killed with its process group, and each is
/// ended in the log, so a daemon that dies does not leave its scripts
/// behind, hung ones piling up at every crash.
pub(super) fn cron_left(last: &crate::events::CronState, rebooted: bool) -> Vec<(String, Event)> {
    let mut fix = Vec::new();
    for (actor, pid, started) in last.left_running() {
        let same =
            !rebooted && started != 0 && crate::starter::process_started(pid) == Some(started);
        if same {
            crate::hooks::kill_group(pid);
            warn!(message = "Killed a cron job the last run left running.", job = %actor, pid);
        }
        fix.push((
            actor.to_string(),
            Event::Cron(crate::events::CronEvent::Ended {
                exit: if same {
                    crate::hooks::Exit::Signal(9)
                } else {
                    crate::hooks::Exit::Code(-1)
                },
                killed: Some(if same {
                    "left running by the last run".into()
                } else {
                    "ended with the last run, how is not known".into()
                }),
                elapsed: 0.0,
                stdout_bytes: 0,
            }),
        ));
    }
    fix
}

/// What `roost startd` opens and works out before its actors start: the
/// event log (the last run reconciled), the machine and its slots.
pub struct Prepared {
    /// The log, reconciled; its writer starts with the actors.
    store: SledStore,
    checkpoints: Checkpointer,
    /// Reads the log while the daemon writes it (for the admin socket).
    pub reader: crate::events::SledReader,
    lost: Vec<crate::events::LostClaim>,
    /// Jobs the last run was handed and did not answer.
    unanswered: Vec<crate::events::Unanswered>,
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
    cron: Option<crate::events::CronState>,
    /// The pool the node publishes in (`ROOST_POOL_ETCD`).
    pool: Option<crate::pool::PoolSettings>,
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
        let name = super::sysconfig::daemon_name(config.expanded("STARTD_NAME")?, &host);
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
        })
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
        let (committer, appender) =
            GroupCommitter::start_observed(wrap(self.store), Some(self.checkpoints), watchers);
        let mut shared = Shared::new(
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
            shared.waiting.borrow_mut().insert(st.pid, None);
        }
        let node = NodeActor::new(std::rc::Rc::clone(&shared), self.slots, reload)
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

/// The signals the daemon handles (see [`signals`]).
fn handled_signals() -> SigSet {
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
pub fn run(cmd: StartdCmd) -> Result<ExitCode> {
    // Until the handlers are installed (after the log's replay, which may
    // take a while), a SIGTERM would kill the daemon outright: the handled
    // signals wait, blocked, in this thread and every thread it starts,
    // and arrive once this thread unblocks them. (Spawned processes start
    // with nothing blocked.)
    if let Err(e) = handled_signals().thread_block() {
        eprintln!("roost: cannot hold signals during start-up: {e}");
    }
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
    if !cmd.foreground {
        nix::unistd::daemon(true, false).map_err(|e| anyhow!("cannot detach: {e}"))?;
    }
    let log_file = init_logging(&config, &dirs.log)?;
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
    let pointer = events_dir.join(crate::events::DAEMON_SOCKET_FILE);
    if let Err(e) = std::fs::write(&pointer, socket.as_os_str().as_encoded_bytes()) {
        warn!(message = "Cannot write the admin socket's path beside the event log.",
            file = %pointer.display(), error = %e);
    }
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
        let (shared, node, committer) = prepared.start(config, clock, reload);
        // A configuration taken at a reconfig gives the log its limits.
        shared.on_new_config(Box::new(move |config| {
            if let Ok(s) = LogSettings::from_config(config, &log_dir) {
                log_file.set_limits(&s);
            }
        }));
        actix::spawn(crate::actors::startd::admin::serve(
            listener,
            node.clone(),
            reader,
            shared.waiting.clone(),
        ));
        if let Some(m) = metrics {
            actix::spawn(crate::actors::startd::metrics_http::serve(m));
        }
        match Handlers::install() {
            Ok(h) => {
                actix::spawn(signals(h, node));
            }
            Err(e) => error!(message = "Cannot install signal handlers.", error = %e),
        }
        // Signals that came during start-up are delivered now.
        if let Err(e) = handled_signals().thread_unblock() {
            error!(message = "Cannot unblock signals.", error = %e);
        }
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

/// The daemon's signal streams.
struct Handlers {
    term: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Handlers {
    /// Installs the handlers (inside the runtime).
    fn install() -> std::io::Result<Handlers> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Handlers {
            term: signal(SignalKind::terminate())?,
            quit: signal(SignalKind::quit())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }
}

/// SIGTERM: graceful shutdown; SIGQUIT: fast; SIGINT: graceful, then
/// fast; SIGHUP: reconfigure.
async fn signals(h: Handlers, node: Addr<NodeActor>) {
    let Handlers {
        mut term,
        mut quit,
        mut int,
        mut hup,
    } = h;
    let mut interrupted = false;
    loop {
        let control = tokio::select! {
            _ = term.recv() => Control::Off(DrainHow::Graceful),
            _ = quit.recv() => Control::Off(DrainHow::Fast),
            _ = int.recv() => {
                let how = if interrupted { DrainHow::Fast } else { DrainHow::Graceful };
                interrupted = true;
                Control::Off(how)
            }
            _ = hup.recv() => Control::Reconfig,
        };
        match node.send(control).await {
            Ok(r) if r.ok => info!(message = "Command done.", result = %r.message),
            Ok(r) => warn!(message = "Command failed.", error = %r.message),
            Err(_) => return,
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
                "cli::startd_cmd::tests::a_panic_is_written_to_the_log",
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
        assert!(text.contains("location=src/cli/startd_cmd.rs:"), "{text}");
        assert!(text.contains("thread=\"slot1\""), "{text}");
    }
}
