//! What the cron actors (`cron.rs`) need of the daemon that runs them,
//! as a trait: the startd's `Shared` implements it (in the startd's wing),
//! and [`ScheddHost`] is `roost schedd`'s. For schedd cron (`SCHEDD_CRON_*`) the clock and log
//! are the queue's (each run's events are the log's actor `cron.<name>`,
//! recorded without a flush of their own, as the startd records them);
//! a job's `_CONDITION` is evaluated in the schedd's own ad; what the
//! jobs publish is kept apart and merged into the schedd's ad whenever it
//! is asked for. A schedd cron job publishes one ad (HTCondor's rule: a
//! `- tag` names no second ad), and no ad targets slots.

use std::cell::Ref;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use super::clock::Clock;
use super::latest::{Board, Latest, Publisher, latest};
use crate::classad::ClassAd;
use crate::cron::config::CronSettings;
use crate::cron::event::{CronEvent, CronState};
use crate::cron::merge::Published;
use crate::cron::metrics::Target;
use crate::events::{Appender, StoreError};
use crate::schedd::event::ScheddEvent;

/// Where the cron actors of one daemon publish their jobs' ads: theirs
/// alone (the daemon's other actors read them).
pub type CronBoard = Rc<Publisher<Published>>;

/// What the cron actors need of the daemon that runs them: the startd's
/// `Shared`, or another daemon's own.
pub trait CronHost {
    /// Now.
    fn now(&self) -> i64;
    /// Records `events` of `actor` in the daemon's log (durable with the
    /// next flush).
    fn record(&self, actor: &str, events: Vec<CronEvent>) -> Result<(), StoreError>;
    /// The `roost` program (the built-in benchmarks run it).
    fn roost_exe(&self) -> PathBuf;
    /// The root configuration file, for the jobs' `CONDOR_CONFIG`.
    fn config_root(&self) -> Option<String>;
    /// The hooks' environment.
    fn hook_env(&self) -> crate::spawn::Environment;
    /// The user hooks run as, when the daemon may choose.
    fn hook_user(&self) -> Option<(u32, u32)>;
    /// The daemon's log directory (a job's default working directory).
    fn log_dir(&self) -> PathBuf;
    /// The ad a job's `_CONDITION` is evaluated in.
    fn condition_ad(&self) -> ClassAd;
    /// What resource monitors target, by slot id.
    fn targets(&self) -> std::cell::Ref<'_, std::collections::BTreeMap<String, Target>>;
    /// Whether each job publishes one ad, each block of its output
    /// replacing the last (the schedd's rule), instead of one per `- tag`.
    fn one_ad_per_job(&self) -> bool {
        false
    }
}

/// What the cron jobs are run with: the daemon's program, configuration,
/// environment, user and log directory.
#[derive(Clone, Debug)]
pub struct CronRunSettings {
    /// The `roost` program.
    pub roost_exe: PathBuf,
    /// The root configuration file.
    pub config_root: Option<String>,
    /// The jobs' environment (the daemon's).
    pub env: crate::spawn::Environment,
    /// The user they run as, when the daemon may choose (`CONDOR_IDS`,
    /// else the `condor` user; `None`: the daemon's own).
    pub user: Option<(u32, u32)>,
    /// The daemon's log directory: a job's default working directory.
    pub log_dir: PathBuf,
}

/// The schedd as its cron jobs see it.
pub struct ScheddHost {
    clock: Arc<dyn Clock>,
    appender: Appender<ScheddEvent>,
    run: CronRunSettings,
    /// The schedd's ad without what the jobs published, as the schedd's
    /// actor last made it.
    ad: Latest<ClassAd>,
    /// What the jobs published.
    published: Latest<Published>,
    /// Always empty: no schedd cron job is a resource monitor of slots.
    no_targets: Board<Target>,
}

/// The writers' halves of what a [`ScheddHost`] reads: the schedd's own
/// ad (its actor's) and the cron actors' board.
pub struct ScheddHostPens {
    /// The schedd's ad without what the jobs published.
    pub ad: Publisher<ClassAd>,
    /// Where the cron actors publish.
    pub board: CronBoard,
}

impl ScheddHost {
    /// The host of the jobs of a schedd logging through `appender`, and
    /// the writers' halves of what it reads.
    pub fn new(
        clock: Arc<dyn Clock>,
        appender: Appender<ScheddEvent>,
        run: CronRunSettings,
    ) -> (ScheddHost, ScheddHostPens) {
        let (ad_pen, ad) = latest(ClassAd::new());
        let (board, published) = latest(Published::default());
        let host = ScheddHost {
            clock,
            appender,
            run,
            ad,
            published,
            no_targets: Board::default(),
        };
        let pens = ScheddHostPens {
            ad: ad_pen,
            board: Rc::new(board),
        };
        (host, pens)
    }

    /// `own` (the schedd's ad) with what the jobs published merged in.
    pub fn merged(&self, own: &ClassAd) -> ClassAd {
        self.published.read().merged_daemon(own)
    }
}

impl CronHost for ScheddHost {
    fn now(&self) -> i64 {
        self.clock.now()
    }

    fn record(&self, actor: &str, events: Vec<CronEvent>) -> Result<(), StoreError> {
        let now = self.clock.now();
        self.appender.record(
            events
                .into_iter()
                .map(|e| (now, actor.to_string(), ScheddEvent::Cron(e)))
                .collect(),
        )
    }

    fn roost_exe(&self) -> PathBuf {
        self.run.roost_exe.clone()
    }

    fn config_root(&self) -> Option<String> {
        self.run.config_root.clone()
    }

    fn hook_env(&self) -> crate::spawn::Environment {
        self.run.env.clone()
    }

    fn hook_user(&self) -> Option<(u32, u32)> {
        self.run.user
    }

    fn log_dir(&self) -> PathBuf {
        self.run.log_dir.clone()
    }

    fn condition_ad(&self) -> ClassAd {
        self.merged(&self.ad.read())
    }

    fn targets(&self) -> Ref<'_, BTreeMap<String, Target>> {
        self.no_targets.read()
    }

    fn one_ad_per_job(&self) -> bool {
        true
    }
}

/// What schedd cron starts with: its host and the writers' halves of
/// what it reads, its jobs, and what the log said of them (`None`:
/// nothing, or a run in another boot).
pub struct ScheddCronSetup {
    /// The daemon the jobs see.
    pub host: std::rc::Rc<ScheddHost>,
    /// Its writers' halves.
    pub pens: ScheddHostPens,
    /// `SCHEDD_CRON_*`.
    pub settings: CronSettings,
    /// The log's cron state.
    pub last: Option<CronState>,
}
