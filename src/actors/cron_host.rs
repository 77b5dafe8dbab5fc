//! What the cron actors (`cron.rs`) need of the daemon that runs them,
//! as a trait: the startd's `Shared` implements it; another daemon (the
//! schedd, for `SCHEDD_CRON_*`) can give its own.

use std::cell::RefCell;
use std::path::PathBuf;

use super::shared::Shared;
use crate::classad::ClassAd;
use crate::cron::metrics::Target;
use crate::events::Event;

/// What the cron actors need of the daemon that runs them: the startd's
/// [`Shared`], or another daemon's own.
pub trait CronHost {
    /// Now.
    fn now(&self) -> i64;
    /// Records `events` of `actor` (durable with the next flush).
    fn record(&self, actor: &str, events: Vec<Event>) -> Result<(), crate::events::StoreError>;
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
    /// The ads the jobs published.
    fn published(&self) -> &RefCell<crate::cron::merge::Published>;
    /// What resource monitors target, by slot id.
    fn targets(&self) -> std::cell::Ref<'_, std::collections::BTreeMap<String, Target>>;
}

impl CronHost for Shared {
    fn now(&self) -> i64 {
        self.clock.now()
    }

    fn record(&self, actor: &str, events: Vec<Event>) -> Result<(), crate::events::StoreError> {
        Shared::record(self, actor, events)
    }

    fn roost_exe(&self) -> PathBuf {
        self.roost_exe.clone()
    }

    fn config_root(&self) -> Option<String> {
        self.config().files().first().cloned()
    }

    fn hook_env(&self) -> crate::spawn::Environment {
        self.hooks.env.clone()
    }

    fn hook_user(&self) -> Option<(u32, u32)> {
        self.hooks.user
    }

    fn log_dir(&self) -> PathBuf {
        self.dirs.log.clone()
    }

    fn condition_ad(&self) -> ClassAd {
        self.node.borrow().machine.clone()
    }

    fn published(&self) -> &RefCell<crate::cron::merge::Published> {
        &self.cron
    }

    fn targets(&self) -> std::cell::Ref<'_, std::collections::BTreeMap<String, Target>> {
        self.cron_targets.borrow()
    }
}
