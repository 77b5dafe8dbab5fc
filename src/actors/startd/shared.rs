//! What every actor of one daemon shares, none of it writable through
//! this context: fixed for the daemon's life, the event log's appender,
//! the clock, the directories, the machine, the hooks' identity and
//! environment and where starters come from ([`StarterSupply`]); and
//! readers ([`Latest`], [`Board`]) of what one actor owns and publishes —
//! the configuration in force (the node actor, at a reconfig), what slots
//! read of the node ([`NodeFacts`]: the node actor), the ads cron jobs
//! published (the cron actors) and what each slot is to resource monitors
//! (each slot its own entry). The writers' halves ([`Pens`]) go to their
//! owners when the daemon starts. Actors of one daemon run on one thread,
//! so this is reference-counted without locks.

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::supply::StarterSupply;
use crate::actors::common::clock::Clock;
use crate::actors::common::latest::{Board, Latest, Publisher, latest};
use crate::classad::ClassAd;
use crate::config::Config;
use crate::config::daemon_knobs::DaemonSettings;
use crate::events::{Appender, Event, StoreError};
use crate::policy::engine::Drain;
use crate::policy::layout::Machine;
use crate::spawn;

/// The directories HTCondor's knobs name.
#[derive(Clone, Debug)]
pub struct Dirs {
    /// `LOG`: daemon logs; startd hooks run here.
    pub log: PathBuf,
    /// `EXECUTE`: job sandboxes.
    pub execute: PathBuf,
    /// `SPOOL`: the event log lives in `$(SPOOL)/roost-events`.
    pub spool: PathBuf,
    /// The admin socket, which a starter whose daemon went away calls to
    /// be taken again (`None`: starters evict their jobs when the daemon
    /// goes).
    pub socket: Option<PathBuf>,
}

impl Dirs {
    /// Where hooks whose output must outlive the daemon (FETCH_WORK)
    /// write it: `$(SPOOL)/roost-hooks`.
    pub fn hook_output(&self) -> PathBuf {
        self.spool.join("roost-hooks")
    }

    /// Where starters that leave with no daemon write what they
    /// reported: `$(SPOOL)/roost-starters`.
    pub fn starter_leftovers(&self) -> PathBuf {
        self.spool.join("roost-starters")
    }
}

/// Hook settings read from configuration.
#[derive(Clone, Debug)]
pub struct HookSettings {
    /// Run startd hooks as this uid/gid (the condor user, when root).
    pub user: Option<(u32, u32)>,
    /// The environment hooks inherit.
    pub env: spawn::Environment,
}

/// What a slot reads of the node (`policy::node::NodeState`), published
/// by the node actor.
#[derive(Clone, Debug, Default)]
pub struct NodeFacts {
    /// The drain or shutdown in force.
    pub drain: Option<Drain>,
    /// When the last drain started and stopped (0: never).
    pub drain_times: (i64, i64),
    /// How many slots are alive (`TotalSlots`).
    pub total_slots: usize,
    /// The dynamic machine attributes (load, idle times, benchmarks).
    pub machine: ClassAd,
}

/// The configuration in force and the daemon's knobs read from it,
/// swapped together, whole, at a reconfig.
#[derive(Clone)]
pub struct InForce {
    /// The configuration.
    pub config: Rc<Config>,
    /// The daemon's knobs.
    pub settings: Rc<DaemonSettings>,
}

/// The writers' halves of what [`Shared`] lets every actor read, for
/// their owners: the node actor publishes the configuration in force and
/// the node's facts, the cron actors the ads their jobs published.
pub struct Pens {
    /// The configuration in force.
    pub config: Publisher<InForce>,
    /// What slots read of the node.
    pub node: Publisher<NodeFacts>,
    /// The cron jobs' ads.
    pub cron: Publisher<crate::cron::merge::Published>,
}

/// Shared by the actors of one daemon.
pub struct Shared {
    /// The configuration in force, published by the node actor.
    in_force: Latest<InForce>,
    /// The event log.
    pub log: Appender,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// Directories.
    pub dirs: Dirs,
    /// The host's name (`Machine`).
    pub host: String,
    /// The daemon's name slots are named after (`slot1@<name>`): the host's
    /// name, or `STARTD_NAME` (with `@<host>` when it has no `@`).
    pub name: String,
    /// Hooks.
    pub hooks: HookSettings,
    /// The machine's resources.
    pub machine: Machine,
    /// Detected CPUs and memory.
    pub detected: (u32, i64),
    /// What slots read of the node: published by the node actor after
    /// each of its decisions is applied.
    pub node: Latest<NodeFacts>,
    /// The ads cron jobs and benchmarks published, which slots merge into
    /// their ads: published by the cron actors.
    pub cron: Latest<crate::cron::merge::Published>,
    /// Each slot as resource monitors target it, by slot id: each slot
    /// writes its own entry while a monitor is configured.
    pub cron_targets: Board<crate::cron::metrics::Target>,
    /// The `roost` program (Roost's own benchmarks run as
    /// `roost benchmark mips|kflops`).
    pub roost_exe: PathBuf,
    /// Starters: the program, the spares, owners' accounts.
    pub starters: StarterSupply,
    /// The directory of the daemon's own cgroup v2, under which starters
    /// make their jobs' cgroups (`None`: no cgroup2 here).
    pub cgroup_home: Option<PathBuf>,
    /// When the daemon started (for claim ids).
    pub started: i64,
    /// The starters of the last run expected to call again, handed from
    /// the admin socket to their actors.
    pub waiting: super::messages::Waiting,
    /// Numbers for actor ids.
    counter: AtomicU64,
}

impl Shared {
    /// Assembles the shared state, and the writers' halves for the actors
    /// that own them; ids of hook and starter actors start at `first_id`
    /// (the log's next sequence number, so they never repeat across
    /// restarts).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: Rc<Config>,
        settings: DaemonSettings,
        log: Appender,
        clock: Arc<dyn Clock>,
        dirs: Dirs,
        host: String,
        hooks: HookSettings,
        machine: Machine,
        detected: (u32, i64),
        starter_exe: PathBuf,
        first_id: u64,
    ) -> (Shared, Pens) {
        let started = clock.now();
        let starters = StarterSupply::new(&starter_exe, hooks.env.clone());
        let (config_pen, in_force) = latest(InForce {
            config,
            settings: Rc::new(settings),
        });
        let (node_pen, node) = latest(NodeFacts::default());
        let (cron_pen, cron) = latest(crate::cron::merge::Published::default());
        let pens = Pens {
            config: config_pen,
            node: node_pen,
            cron: cron_pen,
        };
        let shared = Shared {
            in_force,
            log,
            clock,
            dirs,
            name: host.clone(),
            host,
            hooks,
            machine,
            detected,
            node,
            cron,
            cron_targets: Board::default(),
            roost_exe: if starter_exe.file_name().is_some_and(|n| n == "roost-startd") {
                starter_exe.with_file_name("roost")
            } else {
                starter_exe.clone()
            },
            starters,
            cgroup_home: crate::starter::cgroup::JobCgroup::own_home().ok(),
            started,
            waiting: super::messages::Waiting::default(),
            counter: AtomicU64::new(first_id),
        };
        (shared, pens)
    }

    /// A fresh number for an actor id.
    pub fn next_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    /// Appends `events` of `actor`, durably, at the current time.
    pub fn append(&self, actor: &str, events: Vec<Event>) -> Result<u64, StoreError> {
        self.log.append(self.stamped(actor, events))
    }

    /// Appends events of several actors at the current time as one batch,
    /// durably: all of them are in the log, or none.
    pub fn append_all(&self, events: Vec<(String, Event)>) -> Result<u64, StoreError> {
        let now = self.clock.now();
        self.log
            .append(events.into_iter().map(|(a, e)| (now, a, e)).collect())
    }

    /// `events` of `actor` with the current time, as the log takes them.
    fn stamped(&self, actor: &str, events: Vec<Event>) -> Vec<(i64, String, Event)> {
        let now = self.clock.now();
        events
            .into_iter()
            .map(|e| (now, actor.to_string(), e))
            .collect()
    }

    /// Appends `events` of `actor`, durably, at the current time, without
    /// blocking the actors' thread: the future resolves once they are
    /// durable (see [`Appender::append_later`]). On virtual time
    /// ([`Clock::waits_in_place`]) the append is done here and the future
    /// is ready at once.
    pub fn append_later(
        &self,
        actor: &str,
        events: Vec<Event>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<u64, StoreError>>>> {
        self.append_all_later(events.into_iter().map(|e| (actor.to_string(), e)).collect())
    }

    /// Appends events of several actors at the current time as one batch,
    /// durably, as [`Shared::append_later`] does.
    pub fn append_all_later(
        &self,
        events: Vec<(String, Event)>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<u64, StoreError>>>> {
        if self.clock.waits_in_place() {
            return Box::pin(std::future::ready(self.append_all(events)));
        }
        let now = self.clock.now();
        let batch = events.into_iter().map(|(a, e)| (now, a, e)).collect();
        Box::pin(self.log.append_later(batch))
    }

    /// Records `events` of `actor` at the current time, in order, without
    /// waiting for them to be durable: for facts nothing acts on at once
    /// (see `events::group`).
    pub fn record(&self, actor: &str, events: Vec<Event>) -> Result<(), StoreError> {
        self.log.record(self.stamped(actor, events))
    }

    /// The configuration in force.
    pub fn config(&self) -> Rc<Config> {
        Rc::clone(&self.in_force.read().config)
    }

    /// The daemon's knobs in force.
    pub fn settings(&self) -> Rc<DaemonSettings> {
        Rc::clone(&self.in_force.read().settings)
    }
}
