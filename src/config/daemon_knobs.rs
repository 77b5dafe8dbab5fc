//! The daemon's own knobs beyond the policy and the slot layout (hook
//! timeouts, starter update intervals, the event log's checkpoints and
//! retention, spare starters, ...): the type and range of each, read in one
//! place. Pure.
//!
//! [`DaemonSettings::read`] reads every one of them strictly, once, into
//! typed fields; `roost startd` does it when it starts and at each
//! reconfig and swaps the whole value in, so the actors read fields, never
//! knob strings, and a configuration in which one knob does not read is
//! refused with the knob, its value and where it is defined — the way
//! HTCondor's daemons refuse a knob that is not a number — instead of
//! running on a default the admin did not ask for (a retention of `7d`
//! kept forever, a hook timeout of `5m` at its default, a `BASE_CGROUP`
//! that does not expand taken as "no cgroups").

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{Config, TypeError};
use crate::classad::argenv::split_v2;

/// The most spare starters `ROOST_SPARE_STARTERS` may ask for.
pub const MAX_SPARE_STARTERS: u64 = 16;

/// `name` as a whole number of 0 or more; `Ok(None)` when unset or empty.
pub fn count(config: &Config, name: &str) -> Result<Option<u64>, TypeError> {
    match config.int(name)? {
        None => Ok(None),
        Some(n) => u64::try_from(n)
            .map(Some)
            .map_err(|_| config.type_error(name, &n.to_string(), "a whole number of 0 or more")),
    }
}

/// `name` as a number of 0 or more (fractions allowed); `Ok(None)` when
/// unset, empty or 0 (which means "no limit" for every such knob).
pub fn amount(config: &Config, name: &str) -> Result<Option<f64>, TypeError> {
    match config.real(name)? {
        None => Ok(None),
        Some(v) if v > 0.0 && v.is_finite() => Ok(Some(v)),
        Some(0.0) => Ok(None),
        Some(v) => Err(config.type_error(name, &v.to_string(), "a number of 0 or more")),
    }
}

/// `ROOST_SPARE_STARTERS`: from 0 to [`MAX_SPARE_STARTERS`]; `Ok(None)`
/// when unset.
pub fn spare_starters(config: &Config) -> Result<Option<u64>, TypeError> {
    const NAME: &str = "ROOST_SPARE_STARTERS";
    match count(config, NAME)? {
        Some(n) if n > MAX_SPARE_STARTERS => Err(config.type_error(
            NAME,
            &n.to_string(),
            &format!("a number of spare starters from 0 to {MAX_SPARE_STARTERS}"),
        )),
        n => Ok(n),
    }
}

/// Where the metrics are served when `ROOST_METRICS` is on and
/// `ROOST_METRICS_ADDRESS` is not set: loopback only.
pub const DEFAULT_METRICS_ADDRESS: &str = "127.0.0.1:9619";

/// `ROOST_METRICS` (false) and `ROOST_METRICS_ADDRESS`: where to serve the
/// Prometheus metrics, if at all. The address is `host:port` (an IP
/// address; `[::1]:9619` for IPv6) or a port alone, on loopback.
pub fn metrics_address(config: &Config) -> Result<Option<core::net::SocketAddr>, TypeError> {
    const NAME: &str = "ROOST_METRICS_ADDRESS";
    if !config.bool("ROOST_METRICS")?.unwrap_or(false) {
        return Ok(None);
    }
    let text = config
        .text(NAME)?
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| DEFAULT_METRICS_ADDRESS.to_string());
    let parsed = match text.parse::<u16>() {
        Ok(port) => Ok(core::net::SocketAddr::from(([127, 0, 0, 1], port))),
        Err(_) => text.parse::<core::net::SocketAddr>(),
    };
    parsed.map(Some).map_err(|_| {
        config.type_error(
            NAME,
            &text,
            "an IP address and port (127.0.0.1:9619, [::1]:9619) or a port",
        )
    })
}

/// Spare starters kept when `ROOST_SPARE_STARTERS` is not set.
pub const DEFAULT_SPARE_STARTERS: usize = 1;

/// Every knob the daemon uses beyond the policy and the slot layout, read
/// once from one configuration. Defaults are HTCondor's where it has the
/// knob.
#[derive(Clone, Debug, PartialEq)]
pub struct DaemonSettings {
    /// `STARTER_INITIAL_UPDATE_INTERVAL` (8) and `STARTER_UPDATE_INTERVAL`
    /// (300), in seconds.
    pub starter_update_intervals: (u64, u64),
    /// `UPDATE_INTERVAL` (300): seconds between refreshes of the machine's
    /// attributes.
    pub update_interval: i64,
    /// `KILLING_TIMEOUT` (30): seconds a job (here, the backfill client)
    /// has to go after the soft kill.
    pub killing_timeout: i64,
    /// `PASSWD_CACHE_REFRESH`: seconds a job owner's account is kept
    /// (72000).
    pub passwd_cache_refresh: i64,
    /// `PIPE_BUFFER_MAX`: the most a hook's stdout may print, in bytes.
    pub pipe_buffer_max: usize,
    /// `ROOST_SPARE_STARTERS` (1).
    pub spare_starters: usize,
    /// Where to serve the metrics (`ROOST_METRICS`,
    /// `ROOST_METRICS_ADDRESS`): taken at start-up.
    pub metrics: Option<core::net::SocketAddr>,
    /// `ROOST_STARTER_ORPHAN_TIMEOUT` (3600): seconds a starter keeps its
    /// job running after its daemon went away, waiting for a daemon to
    /// take it again; 0: the job is evicted at once.
    pub starter_orphan_timeout: u64,
    /// `BASE_CGROUP`: the cgroup jobs' cgroups go under (`htcondor` when
    /// unset; `None` when set empty: no cgroups).
    pub base_cgroup: Option<String>,
    /// `ROOST_EVENT_LOG_CHECKPOINT_EVENTS` and
    /// `ROOST_EVENT_LOG_CHECKPOINT_INTERVAL`, when set.
    pub checkpoint: (Option<u64>, Option<u64>),
    /// `ROOST_EVENT_LOG_KEEP_DAYS`, `ROOST_EVENT_LOG_KEEP_MB` and
    /// `ROOST_EVENT_LOG_KEEP_CLAIMS_DAYS`, when set above 0.
    pub keep: LogKeep,
    /// `ROOST_EVENT_LOG_ARCHIVE`, when set.
    pub archive: Option<PathBuf>,
    /// `STARTER_JOB_HOOK_KEYWORD`, when set.
    pub starter_job_hook_keyword: Option<String>,
    /// `STARTER_DEFAULT_JOB_HOOK_KEYWORD`, when set.
    pub starter_default_job_hook_keyword: Option<String>,
    /// `ENVIRONMENT_FOR_Assigned<name>` and
    /// `ENVIRONMENT_VALUE_FOR_UnAssigned<name>`: a job's device variables.
    pub device_env: super::device_env::DeviceEnv,
    /// `UID_DOMAIN` and `FILESYSTEM_DOMAIN` (both default to the host's
    /// full name): every slot ad's `UidDomain` and `FileSystemDomain`,
    /// which condor_submit's default `Requirements` compare.
    pub domains: (String, String),
    /// Each `<KEYWORD>_HOOK_<TYPE>` set, by its name in upper case,
    /// trimmed.
    hooks: HashMap<String, String>,
    /// Each `<KEYWORD>_HOOK_<TYPE>_ARGS` set, split (V2 syntax), by the
    /// hook's name in upper case (without `_ARGS`).
    hook_args: HashMap<String, Vec<String>>,
    /// Each `<KEYWORD>_HOOK_<TYPE>_TIMEOUT` set, by the hook's name in
    /// upper case (without `_TIMEOUT`).
    hook_timeouts: HashMap<String, u64>,
}

/// How much of the event log to keep (each `None`: no limit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LogKeep {
    /// `ROOST_EVENT_LOG_KEEP_DAYS`.
    pub days: Option<f64>,
    /// `ROOST_EVENT_LOG_KEEP_MB`.
    pub mb: Option<f64>,
    /// `ROOST_EVENT_LOG_KEEP_CLAIMS_DAYS`.
    pub claims_days: Option<f64>,
}

impl DaemonSettings {
    /// Reads every knob of the daemon; the first that does not read is
    /// the error, naming it, its value and where it is defined.
    pub fn read(config: &Config) -> Result<DaemonSettings, TypeError> {
        let count_or = |name: &str, d: u64| Ok::<_, TypeError>(count(config, name)?.unwrap_or(d));
        let (mut hooks, mut hook_args, mut hook_timeouts) =
            (HashMap::new(), HashMap::new(), HashMap::new());
        for m in config.table().iter() {
            // A name qualified for a subsystem or local name is looked up
            // as the daemon sees it (another daemon's is not set here).
            let name = m.name.rsplit('.').next().unwrap_or(&m.name);
            let key = name.to_ascii_uppercase();
            if is_hook_timeout(name) {
                if let Some(n) = count(config, name)? {
                    hook_timeouts.insert(key.trim_end_matches("_TIMEOUT").to_string(), n);
                }
            } else if is_hook(&key)
                && let Some(p) = config.text(name)?
            {
                match key.strip_suffix("_ARGS").filter(|h| is_hook(h)) {
                    Some(hook) => {
                        let args = split_v2(&p).map_err(|e| {
                            config.type_error(name, &p, &format!("arguments in V2 syntax ({e})"))
                        })?;
                        hook_args.insert(hook.to_string(), args);
                    }
                    None => {
                        hooks.insert(key, p);
                    }
                }
            }
        }
        Ok(DaemonSettings {
            starter_update_intervals: (
                count_or("STARTER_INITIAL_UPDATE_INTERVAL", 8)?,
                count_or("STARTER_UPDATE_INTERVAL", 300)?,
            ),
            update_interval: config.int("UPDATE_INTERVAL")?.unwrap_or(300),
            killing_timeout: config.int("KILLING_TIMEOUT")?.unwrap_or(30),
            passwd_cache_refresh: i64::try_from(count_or("PASSWD_CACHE_REFRESH", 72_000)?)
                .unwrap_or(i64::MAX),
            pipe_buffer_max: usize::try_from(count_or("PIPE_BUFFER_MAX", 10_240)?)
                .unwrap_or(usize::MAX),
            spare_starters: spare_starters(config)?
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(DEFAULT_SPARE_STARTERS),
            metrics: metrics_address(config)?,
            starter_orphan_timeout: count_or("ROOST_STARTER_ORPHAN_TIMEOUT", 3600)?,
            base_cgroup: match config.expanded("BASE_CGROUP")? {
                Some(b) => Some(b.trim().to_string()).filter(|b| !b.is_empty()),
                None => Some("htcondor".to_string()),
            },
            checkpoint: (
                count(config, "ROOST_EVENT_LOG_CHECKPOINT_EVENTS")?,
                count(config, "ROOST_EVENT_LOG_CHECKPOINT_INTERVAL")?,
            ),
            keep: LogKeep {
                days: amount(config, "ROOST_EVENT_LOG_KEEP_DAYS")?,
                mb: amount(config, "ROOST_EVENT_LOG_KEEP_MB")?,
                claims_days: amount(config, "ROOST_EVENT_LOG_KEEP_CLAIMS_DAYS")?,
            },
            archive: config.text("ROOST_EVENT_LOG_ARCHIVE")?.map(PathBuf::from),
            starter_job_hook_keyword: config.text("STARTER_JOB_HOOK_KEYWORD")?,
            starter_default_job_hook_keyword: config.text("STARTER_DEFAULT_JOB_HOOK_KEYWORD")?,
            device_env: super::device_env::DeviceEnv::read(config)?,
            domains: (
                config.text("UID_DOMAIN")?.unwrap_or_default(),
                config.text("FILESYSTEM_DOMAIN")?.unwrap_or_default(),
            ),
            hooks,
            hook_args,
            hook_timeouts,
        })
    }

    /// `<keyword>_HOOK_<hook>`: the hook's configured path, if set.
    pub fn hook_path(&self, keyword: &str, hook: &str) -> Option<&Path> {
        self.hook_text(&format!("{keyword}_HOOK_{hook}"))
            .map(Path::new)
    }

    /// `<keyword>_HOOK_<hook>_ARGS`: the hook's arguments, split as V2
    /// syntax when the configuration was read (none when unset).
    pub fn hook_args(&self, keyword: &str, hook: &str) -> &[String] {
        let name = format!("{keyword}_HOOK_{hook}").to_ascii_uppercase();
        self.hook_args.get(&name).map_or(&[], Vec::as_slice)
    }

    fn hook_text(&self, name: &str) -> Option<&str> {
        self.hooks
            .get(&name.to_ascii_uppercase())
            .map(String::as_str)
    }

    /// `<keyword>_HOOK_<hook>_TIMEOUT` in seconds, if set.
    pub fn hook_timeout(&self, keyword: &str, hook: &str) -> Option<u64> {
        let name = format!("{keyword}_HOOK_{hook}").to_ascii_uppercase();
        self.hook_timeouts.get(&name).copied()
    }
}

/// `<KEYWORD>_HOOK_<TYPE>` (upper case): a hook's path.
fn is_hook(name: &str) -> bool {
    name.find("_HOOK_")
        .is_some_and(|i| i > 0 && i + 6 < name.len())
}

/// `<KEYWORD>_HOOK_<TYPE>_TIMEOUT`, in any case.
fn is_hook_timeout(name: &str) -> bool {
    name.to_ascii_uppercase()
        .strip_suffix("_TIMEOUT")
        .is_some_and(is_hook)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Scope, load_text};

    fn config(text: &str) -> Config {
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        load_text("/etc/condor/condor_config", text, scope, vec![]).expect("configuration reads")
    }

    #[test]
    fn a_readable_configuration_passes_and_unset_knobs_are_none() {
        let c = config(
            "STARTER_UPDATE_INTERVAL = 60\nROOST_EVENT_LOG_KEEP_DAYS = 7.5\n\
             ROOST_EVENT_LOG_KEEP_MB = 0\nQUICK_HOOK_FETCH_WORK_TIMEOUT = 2 * 10\n\
             ROOST_SPARE_STARTERS = 16\n",
        );
        assert!(DaemonSettings::read(&c).is_ok());
        assert_eq!(count(&c, "STARTER_UPDATE_INTERVAL"), Ok(Some(60)));
        assert_eq!(count(&c, "QUICK_HOOK_FETCH_WORK_TIMEOUT"), Ok(Some(20)));
        assert_eq!(
            count(&c, "PIPE_BUFFER_MAX"),
            Ok(Some(10_240)),
            "HTCondor's default"
        );
        assert_eq!(count(&c, "ROOST_EVENT_LOG_CHECKPOINT_EVENTS"), Ok(None));
        assert_eq!(amount(&c, "ROOST_EVENT_LOG_KEEP_DAYS"), Ok(Some(7.5)));
        assert_eq!(amount(&c, "ROOST_EVENT_LOG_KEEP_MB"), Ok(None));
        assert_eq!(spare_starters(&c), Ok(Some(16)));
    }

    #[test]
    fn metrics_are_off_by_default_and_on_loopback_when_on() {
        let addr = |text: &str| metrics_address(&config(text)).map(|a| a.map(|a| a.to_string()));
        assert_eq!(addr(""), Ok(None));
        assert_eq!(addr("ROOST_METRICS_ADDRESS = 0.0.0.0:1"), Ok(None));
        assert_eq!(
            addr("ROOST_METRICS = true"),
            Ok(Some("127.0.0.1:9619".into()))
        );
        assert_eq!(
            addr("ROOST_METRICS = True\nROOST_METRICS_ADDRESS = 9100"),
            Ok(Some("127.0.0.1:9100".into()))
        );
        assert_eq!(
            addr("ROOST_METRICS = 1 == 1\nROOST_METRICS_ADDRESS = [::1]:9100"),
            Ok(Some("[::1]:9100".into()))
        );
        let bad = addr("ROOST_METRICS = true\nROOST_METRICS_ADDRESS = localhost:x")
            .map_err(|e| e.to_string());
        assert!(
            bad.as_ref()
                .is_err_and(|e| e.contains("ROOST_METRICS_ADDRESS")
                    && e.contains("localhost:x")
                    && e.contains("line 2")),
            "{bad:?}"
        );
    }

    #[test]
    fn each_bad_knob_is_named_with_its_value_and_place() {
        for (line, want) in [
            (
                "ROOST_EVENT_LOG_KEEP_DAYS = 7d",
                "ROOST_EVENT_LOG_KEEP_DAYS is not a real number: 7d (at /etc/condor/condor_config, line 2)",
            ),
            (
                "ROOST_EVENT_LOG_KEEP_MB = -5",
                "ROOST_EVENT_LOG_KEEP_MB is not a number of 0 or more: -5 (at /etc/condor/condor_config, line 2)",
            ),
            (
                "QUICK_HOOK_FETCH_WORK_TIMEOUT = 5m",
                "QUICK_HOOK_FETCH_WORK_TIMEOUT is not an integer: 5m (at /etc/condor/condor_config, line 2)",
            ),
            (
                "quick_hook_job_exit_timeout = -1",
                "quick_hook_job_exit_timeout is not a whole number of 0 or more: -1 (at /etc/condor/condor_config, line 2)",
            ),
            (
                "STARTER_UPDATE_INTERVAL = often",
                "STARTER_UPDATE_INTERVAL is not an integer: often (at /etc/condor/condor_config, line 2)",
            ),
            (
                "ROOST_HTCONDOR_VERSION = 23\nBASE_CGROUP = $INT(nope)",
                "BASE_CGROUP does not expand: $INT() error: nope does not evaluate to an integer (at /etc/condor/condor_config, line 3)",
            ),
            (
                "Q_HOOK_PREPARE_JOB_ARGS = \"'open",
                "Q_HOOK_PREPARE_JOB_ARGS is not arguments in V2 syntax (unbalanced single quote in \"'open): \"'open (at /etc/condor/condor_config, line 2)",
            ),
            (
                "ROOST_SPARE_STARTERS = 17",
                "ROOST_SPARE_STARTERS is not a number of spare starters from 0 to 16: 17 (at /etc/condor/condor_config, line 2)",
            ),
        ] {
            let c = config(&format!("# a site's file\n{line}\n"));
            let got = DaemonSettings::read(&c).expect_err(line).to_string();
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn the_settings_are_read_once_with_htcondors_defaults() {
        let d = DaemonSettings::read(&config("")).expect("reads");
        assert_eq!(d.starter_update_intervals, (8, 300));
        assert_eq!(d.passwd_cache_refresh, 72_000);
        assert_eq!(d.pipe_buffer_max, 10_240);
        assert_eq!(d.spare_starters, DEFAULT_SPARE_STARTERS);
        assert_eq!(d.base_cgroup.as_deref(), Some("htcondor"));
        assert_eq!(d.checkpoint, (None, None));
        assert_eq!(d.keep, LogKeep::default());
        assert_eq!(d.hook_path("ROOST", "FETCH_WORK"), None);

        let d = DaemonSettings::read(&config(
            "BASE_CGROUP =\nSTARTER_UPDATE_INTERVAL = 60\nBIN = /opt/hooks\n\
             quick_hook_fetch_work = $(BIN)/fetch \nQUICK_HOOK_PREPARE_JOB_ARGS = -v 'a b'\n\
             STARTD.QUICK_HOOK_REPLY_FETCH = /opt/hooks/reply\n\
             SCHEDD.QUICK_HOOK_EVICT_CLAIM = /opt/hooks/evict\n\
             QUICK_HOOK_FETCH_WORK_TIMEOUT = 7\nSTARTER_JOB_HOOK_KEYWORD = QUICK \n\
             ROOST_EVENT_LOG_ARCHIVE = /var/archive\n",
        ))
        .expect("reads");
        assert_eq!(d.base_cgroup, None, "set empty: no cgroups");
        assert_eq!(d.starter_update_intervals, (8, 60));
        assert_eq!(
            d.hook_path("Quick", "FETCH_WORK"),
            Some(Path::new("/opt/hooks/fetch")),
            "expanded, trimmed, any case"
        );
        assert_eq!(
            d.hook_path("QUICK", "REPLY_FETCH"),
            Some(Path::new("/opt/hooks/reply"))
        );
        assert_eq!(
            d.hook_path("QUICK", "EVICT_CLAIM"),
            None,
            "the schedd's own"
        );
        assert_eq!(d.hook_args("QUICK", "PREPARE_JOB"), ["-v", "a b"]);
        assert!(d.hook_args("QUICK", "JOB_EXIT").is_empty());
        assert_eq!(d.hook_timeout("quick", "fetch_work"), Some(7));
        assert_eq!(d.hook_timeout("QUICK", "REPLY_FETCH"), None);
        assert_eq!(d.starter_job_hook_keyword.as_deref(), Some("QUICK"));
        assert_eq!(d.archive.as_deref(), Some(Path::new("/var/archive")));
    }

    #[test]
    fn only_hook_timeouts_are_taken_for_hook_timeouts() {
        for yes in ["K_HOOK_FETCH_WORK_TIMEOUT", "k_hook_x_timeout"] {
            assert!(is_hook_timeout(yes), "{yes}");
        }
        for no in [
            "_HOOK_FETCH_WORK_TIMEOUT",
            "K_HOOK__TIMEOUT",
            "K_HOOK_FETCH_WORK",
            "KILLING_TIMEOUT",
            "HOOK_TIMEOUT",
        ] {
            assert!(!is_hook_timeout(no), "{no}");
        }
    }
}
