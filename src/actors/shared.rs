//! What every actor of one daemon shares: the configuration, the event
//! log's appender, the clock, the directories, the machine's attributes,
//! the drain in force and the spare starters. Actors of one daemon run on
//! one thread, so this is reference-counted without locks.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use super::clock::Clock;
use crate::classad::ClassAd;
use crate::config::Config;
use crate::config::daemon_knobs::DaemonSettings;
use crate::events::{Appender, Event, StoreError};
use crate::policy::engine::Drain;
use crate::policy::layout::Machine;
use crate::spawn::{self, Stdio};
use crate::starter::protocol::Account;

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
}

/// What [`Shared::on_new_config`] calls with each new configuration.
pub type ConfigListener = Box<dyn Fn(&Config)>;

/// Shared by the actors of one daemon.
pub struct Shared {
    /// The configuration in force (replaced on reconfig: [`Shared::set_config`]).
    config: RefCell<Rc<Config>>,
    /// The daemon's knobs read from it, swapped with it.
    settings: RefCell<Rc<DaemonSettings>>,
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
    /// What slots read of the node: written by the node actor alone,
    /// after each of its decisions is applied.
    pub node: RefCell<NodeFacts>,
    /// The starter's program and arguments (see [`starter_program`]).
    pub starter: (PathBuf, Vec<String>),
    /// The directory of the daemon's own cgroup v2, under which starters
    /// make their jobs' cgroups (`None`: no cgroup2 here).
    pub cgroup_home: Option<PathBuf>,
    /// When the daemon started (for claim ids).
    pub started: i64,
    /// The backfill manager, once a slot has wanted backfill.
    pub backfill: RefCell<Option<super::messages::BackfillLink>>,
    /// Starters started ahead of need, each waiting for its request (see
    /// [`Shared::take_spare`]).
    spares: RefCell<Vec<spawn::Child>>,
    /// Job owners' accounts looked up so far ([`Shared::account`]).
    accounts: RefCell<Accounts>,
    /// Told of each configuration taken after the first (see
    /// [`Shared::on_new_config`]).
    on_config: RefCell<Option<ConfigListener>>,
    counter: Cell<u64>,
}

impl Shared {
    /// Assembles the shared state; ids of hook and starter actors start
    /// at `first_id` (the log's next sequence number, so they never repeat
    /// across restarts).
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
    ) -> Shared {
        let started = clock.now();
        Shared {
            config: RefCell::new(config),
            settings: RefCell::new(Rc::new(settings)),
            log,
            clock,
            dirs,
            host,
            hooks,
            machine,
            detected,
            machine_ad: RefCell::new(ClassAd::new()),
            node: RefCell::new(NodeFacts::default()),
            starter: starter_program(&starter_exe),
            cgroup_home: crate::starter::cgroup::JobCgroup::own_home().ok(),
            started,
            backfill: RefCell::new(None),
            spares: RefCell::new(Vec::new()),
            accounts: RefCell::new(Accounts::default()),
            on_config: RefCell::new(None),
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
        self.log.append(self.stamped(actor, events))
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
        if self.clock.waits_in_place() {
            return Box::pin(std::future::ready(self.append(actor, events)));
        }
        Box::pin(self.log.append_later(self.stamped(actor, events)))
    }

    /// Records `events` of `actor` at the current time, in order, without
    /// waiting for them to be durable: for facts nothing acts on at once
    /// (see `events::group`).
    pub fn record(&self, actor: &str, events: Vec<Event>) -> Result<(), StoreError> {
        self.log.record(self.stamped(actor, events))
    }

    /// The configuration in force.
    pub fn config(&self) -> Rc<Config> {
        Rc::clone(&self.config.borrow())
    }

    /// The daemon's knobs in force.
    pub fn settings(&self) -> Rc<DaemonSettings> {
        Rc::clone(&self.settings.borrow())
    }

    /// Puts `config` in force (a reconfig), with the daemon's knobs read
    /// from it: the two are swapped together, whole.
    pub fn set_config(&self, config: Config, settings: DaemonSettings) {
        if let Some(tell) = self.on_config.borrow().as_ref() {
            tell(&config);
        }
        *self.config.borrow_mut() = Rc::new(config);
        *self.settings.borrow_mut() = Rc::new(settings);
    }

    /// `tell` is called with every configuration [`Shared::set_config`]
    /// takes from now on (what lives outside the actors, such as the
    /// daemon log's limits, follows a reconfig).
    pub fn on_new_config(&self, tell: ConfigListener) {
        *self.on_config.borrow_mut() = Some(tell);
    }

    /// The starter program's command line: stdin and stderr piped, stdout
    /// as given, a process group of its own, the hooks' environment.
    pub fn starter_command(&self, stdout: Stdio) -> spawn::Command {
        let (program, args) = &self.starter;
        let mut cmd = spawn::Command::new(program);
        cmd.args(args)
            .stdin(Stdio::Piped)
            .stdout(stdout)
            .stderr(Stdio::Piped)
            .process_group()
            .environment(&self.hooks.env);
        cmd
    }

    /// A spare starter, started ahead of need and still waiting for its
    /// request, if there is one: a job handed to it skips the starter's
    /// exec and start-up (about a millisecond). One that has gone meanwhile
    /// is reaped and passed over.
    pub fn take_spare(&self) -> Option<spawn::Child> {
        let mut spares = self.spares.borrow_mut();
        prune(&mut spares);
        spares.pop()
    }

    /// Starts spare starters until `ROOST_SPARE_STARTERS` (default 1, 0
    /// for none) are waiting; fewer wanted
    /// (after a reconfig), the extra ones are told to go. Called once a
    /// starter has started its job, off the path from fetch to exec.
    pub fn refill_spares(&self) {
        let want = self.settings.borrow().spare_starters;
        let mut spares = self.spares.borrow_mut();
        prune(&mut spares);
        // Dropping a spare closes its stdin: it exits, and is reaped.
        spares.truncate(want);
        while spares.len() < want {
            let mut cmd = self.starter_command(Stdio::Piped);
            cmd.args(["--spare"]);
            match cmd.spawn() {
                Ok(c) => spares.push(c),
                Err(e) => {
                    tracing::warn!(message = "Cannot start a spare starter.", error = %e);
                    return;
                }
            }
        }
    }

    /// The account of user `name` for a starter to run a job as, when the
    /// daemon runs as root (otherwise jobs run as the daemon's user and
    /// nothing is looked up), from the system's user database through
    /// [`Accounts`]. `None` leaves the lookup — and its error for the job —
    /// to the starter.
    pub fn account(&self, name: &str) -> Option<Account> {
        if !nix::unistd::Uid::effective().is_root() {
            return None;
        }
        let refresh = self.settings.borrow().passwd_cache_refresh;
        self.accounts
            .borrow_mut()
            .get(name, self.clock.now(), refresh, |n| {
                nix::unistd::User::from_name(n).map(|u| u.map(Account::from))
            })
    }

    /// Kills the spare starters and waits for them: at the daemon's end,
    /// before it exits or starts again.
    pub fn close_spares(&self) {
        for c in self.spares.borrow_mut().drain(..) {
            c.kill_and_reap();
        }
    }
}

/// Job owners' accounts looked up so far, each with when, as HTCondor's
/// passwd cache keeps them.
#[derive(Debug, Default)]
pub struct Accounts(HashMap<String, (Account, i64)>);

impl Accounts {
    /// `name`'s account at `now`: the one kept if it is younger than
    /// `refresh` seconds, else what `lookup` says — kept when found,
    /// forgotten when the user is gone (so a user added since is found at
    /// once, and one removed is not run as); when `lookup` fails (say, the
    /// directory service is down) the one kept, however old, and the
    /// failure is logged.
    pub fn get<E: std::fmt::Display>(
        &mut self,
        name: &str,
        now: i64,
        refresh: i64,
        lookup: impl FnOnce(&str) -> Result<Option<Account>, E>,
    ) -> Option<Account> {
        if let Some((a, at)) = self.0.get(name)
            && now.saturating_sub(*at) < refresh
        {
            return Some(a.clone());
        }
        match lookup(name) {
            Ok(Some(a)) => {
                self.0.insert(name.to_string(), (a.clone(), now));
                Some(a)
            }
            Ok(None) => {
                self.0.remove(name);
                None
            }
            Err(e) => {
                tracing::warn!(message = "Cannot look up a job's Owner.", owner = name, error = %e);
                self.0.get(name).map(|(a, _)| a.clone())
            }
        }
    }
}

/// Reaps and drops the spare starters that have gone (killed, out of
/// memory): they cannot take a job.
fn prune(spares: &mut Vec<spawn::Child>) {
    spares.retain_mut(|c| match c.try_wait() {
        Ok(None) => true,
        Ok(Some(status)) => {
            tracing::warn!(message = "A spare starter had exited.", pid = c.id(), status = %status);
            false
        }
        Err(e) => {
            tracing::warn!(message = "Cannot check a spare starter.", pid = c.id(), error = %e);
            false
        }
    });
}

/// The starter for the daemon's program `exe`: `roost-starter` beside it
/// when that is an executable file built from these very sources (it says
/// so when run with `--build-id`: the version and a hash of the sources,
/// the same for a static starter built for another target; one left from
/// other sources is not used, with a warning), else `exe starter` (`roost
/// starter` beside `roost-startd`, which holds no starter).
pub fn starter_program(exe: &std::path::Path) -> (PathBuf, Vec<String>) {
    let (program, args) = match same_build_starter(exe) {
        Some(small) => (small, Vec::new()),
        // `roost-startd` holds no starter; `roost`, beside it, does.
        None if exe.file_name().is_some_and(|n| n == "roost-startd") => {
            (exe.with_file_name("roost"), vec!["starter".to_string()])
        }
        None => (exe.to_path_buf(), vec!["starter".to_string()]),
    };
    tracing::info!(message = "Starter program.", path = %program.display(), args = ?args);
    (program, args)
}

/// `roost-starter` beside `exe`, if it is there and from the same sources.
fn same_build_starter(exe: &std::path::Path) -> Option<PathBuf> {
    use crate::{Beside, program_beside};
    match program_beside(exe, "roost-starter") {
        Beside::Same(small) => Some(small),
        Beside::Absent => None,
        Beside::Other(path, says) => {
            tracing::warn!(
                message = "Not using the roost-starter beside roost: it is from another build.",
                path = %path.display(),
                says = %says,
                build = crate::BUILD_ID
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Account, Accounts, starter_program};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_small_starter_is_used_only_when_it_is_an_executable_of_this_build() {
        let dir = std::env::temp_dir().join(format!("roost-starter-pick-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let roost = dir.join("roost");
        let small = dir.join("roost-starter");
        let fallback = (roost.clone(), vec!["starter".to_string()]);
        assert_eq!(starter_program(&roost), fallback, "none there");
        std::fs::write(&small, format!("#!/bin/sh\necho '{}'\n", crate::BUILD_ID)).unwrap();
        std::fs::set_permissions(&small, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(starter_program(&roost), fallback, "not executable");
        std::fs::set_permissions(&small, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            starter_program(&roost),
            (small.clone(), Vec::<String>::new())
        );
        std::fs::write(&small, "#!/bin/sh\necho 0.0.1+1\n").unwrap();
        assert_eq!(starter_program(&roost), fallback, "another build");
        assert_eq!(
            starter_program(&dir.join("roost-startd")),
            fallback,
            "the daemon's own program falls back to `roost starter`"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn owner_accounts_are_kept_for_the_refresh_time_and_failures_fall_back() {
        let acct = |uid| Account {
            name: "alice".into(),
            uid,
            gid: uid,
        };
        let found = |uid| move |_: &str| Ok::<_, String>(Some(acct(uid)));
        let mut cache = Accounts::default();
        assert_eq!(cache.get("alice", 100, 60, found(1000)), Some(acct(1000)));
        // Within the refresh time the kept account answers; no lookup.
        let never = |_: &str| -> Result<Option<Account>, String> { panic!("looked up") };
        assert_eq!(cache.get("alice", 159, 60, never), Some(acct(1000)));
        // Then it is looked up again, and the new answer kept.
        assert_eq!(cache.get("alice", 160, 60, found(1001)), Some(acct(1001)));
        // A failed lookup falls back to the kept account, however old.
        let down = |_: &str| Err::<Option<Account>, _>("directory down".to_string());
        assert_eq!(cache.get("alice", 1000, 60, down), Some(acct(1001)));
        // A user gone is forgotten, and not found even when the directory
        // fails next.
        assert_eq!(
            cache.get("alice", 1000, 60, |_: &str| Ok::<_, String>(None)),
            None
        );
        assert_eq!(cache.get("alice", 1001, 60, down), None);
        // Nothing kept and a failed lookup: nothing (the starter looks).
        assert_eq!(cache.get("bob", 1, 60, down), None);
    }
}
