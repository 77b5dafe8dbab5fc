//! What every actor of one daemon shares: the configuration, the event
//! log's appender, the clock, the directories, the machine's attributes and
//! the drain in force. Actors of one daemon run on one thread, so this is
//! reference-counted without locks.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use super::clock::Clock;
use crate::classad::ClassAd;
use crate::config::Config;
use crate::events::{Appender, Event, StoreError};
use crate::policy::engine::Drain;
use crate::policy::layout::Machine;

/// The directories HTCondor's knobs name.
#[derive(Clone, Debug)]
pub struct Dirs {
    /// `LOG`: daemon logs; startd hooks run here.
    pub log: PathBuf,
    /// `EXECUTE`: job sandboxes.
    pub execute: PathBuf,
    /// `SPOOL`: the event log lives in `$(SPOOL)/roost-events`.
    pub spool: PathBuf,
}

/// Hook settings read from configuration.
#[derive(Clone, Debug)]
pub struct HookSettings {
    /// Run startd hooks as this uid/gid (the condor user, when root).
    pub user: Option<(u32, u32)>,
    /// The environment hooks inherit.
    pub env: Vec<(String, String)>,
    /// Stdout cap in bytes.
    pub stdout_limit: usize,
}

/// Shared by the actors of one daemon.
pub struct Shared {
    /// The configuration in force (replaced on reconfig).
    pub config: RefCell<Rc<Config>>,
    /// The event log.
    pub log: Appender,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// Directories.
    pub dirs: Dirs,
    /// The host name slots are named after.
    pub host: String,
    /// Hooks.
    pub hooks: HookSettings,
    /// The machine's resources.
    pub machine: Machine,
    /// Detected CPUs and memory.
    pub detected: (u32, i64),
    /// The dynamic machine attributes (load, idle times).
    pub machine_ad: RefCell<ClassAd>,
    /// The drain or shutdown in force.
    pub drain: RefCell<Option<Drain>>,
    /// When the last drain started and stopped (0: never).
    pub drain_times: Cell<(i64, i64)>,
    /// The last drain request's id.
    pub drain_requests: Cell<u64>,
    /// Set when the daemon should start again once it has stopped.
    pub restart: Cell<bool>,
    /// How many slots exist.
    pub total_slots: Cell<usize>,
    /// The program to run as `roost starter`.
    pub starter_exe: PathBuf,
    /// When the daemon started (for claim ids).
    pub started: i64,
    counter: Cell<u64>,
}

impl Shared {
    /// Assembles the shared state; ids of hook and starter actors start
    /// at `first_id` (the log's next sequence number, so they never repeat
    /// across restarts).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: Rc<Config>,
        log: Appender,
        clock: Arc<dyn Clock>,
        dirs: Dirs,
        host: String,
        hooks: HookSettings,
        machine: Machine,
        detected: (u32, i64),
        starter_exe: PathBuf,
        first_id: u64,
    ) -> Shared {
        let started = clock.now();
        Shared {
            config: RefCell::new(config),
            log,
            clock,
            dirs,
            host,
            hooks,
            machine,
            detected,
            machine_ad: RefCell::new(ClassAd::new()),
            drain: RefCell::new(None),
            drain_times: Cell::new((0, 0)),
            drain_requests: Cell::new(0),
            restart: Cell::new(false),
            total_slots: Cell::new(0),
            starter_exe,
            started,
            counter: Cell::new(first_id),
        }
    }

    /// A fresh number for an actor id.
    pub fn next_id(&self) -> u64 {
        let n = self.counter.get();
        self.counter.set(n + 1);
        n
    }

    /// Appends `events` of `actor`, durably, at the current time.
    pub fn append(&self, actor: &str, events: Vec<Event>) -> Result<u64, StoreError> {
        let now = self.clock.now();
        self.log.append(
            events
                .into_iter()
                .map(|e| (now, actor.to_string(), e))
                .collect(),
        )
    }

    /// Records `events` of `actor` at the current time, in order, without
    /// waiting for them to be durable: for facts nothing acts on at once
    /// (see `events::group`).
    pub fn record(&self, actor: &str, events: Vec<Event>) -> Result<(), StoreError> {
        let now = self.clock.now();
        self.log.record(
            events
                .into_iter()
                .map(|e| (now, actor.to_string(), e))
                .collect(),
        )
    }

    /// The configuration in force.
    pub fn config(&self) -> Rc<Config> {
        Rc::clone(&self.config.borrow())
    }
}
