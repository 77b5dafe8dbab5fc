//! The daemon's own knobs beyond the policy and the slot layout (hook
//! timeouts, starter update intervals, the event log's checkpoints and
//! retention, spare starters, ...): the type and range of each, read in one
//! place. Pure.
//!
//! [`check`] reads every one of them strictly; `roost startd` calls it when
//! it starts and at each reconfig, so a configuration in which one does
//! not read is refused with the knob, its value and where it is defined,
//! the way HTCondor's daemons refuse a knob that is not a number, instead
//! of running on a default the admin did not ask for (a retention of
//! `7d` kept forever, a hook timeout of `5m` at its default). The readers
//! the actors call when they need a value ([`count`], [`amount`]) fall back
//! to the default only for what [`check`] lets through: an unset knob.

use super::{Config, TypeError};

/// The most spare starters `ROOST_SPARE_STARTERS` may ask for.
pub const MAX_SPARE_STARTERS: u64 = 16;

/// Knobs that are a whole number of 0 or more (seconds, bytes, events).
const COUNTS: &[&str] = &[
    "STARTER_INITIAL_UPDATE_INTERVAL",
    "STARTER_UPDATE_INTERVAL",
    "PASSWD_CACHE_REFRESH",
    "PIPE_BUFFER_MAX",
    "ROOST_EVENT_LOG_CHECKPOINT_EVENTS",
    "ROOST_EVENT_LOG_CHECKPOINT_INTERVAL",
];

/// Knobs that are a number of 0 or more, fractions allowed (0: no limit).
const AMOUNTS: &[&str] = &[
    "ROOST_EVENT_LOG_KEEP_DAYS",
    "ROOST_EVENT_LOG_KEEP_MB",
    "ROOST_EVENT_LOG_KEEP_CLAIMS_DAYS",
];

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

/// Reads every knob this module knows, and every `<KEYWORD>_HOOK_<TYPE>_TIMEOUT`
/// the configuration defines; the first that does not read is the error.
pub fn check(config: &Config) -> Result<(), TypeError> {
    for name in COUNTS {
        count(config, name)?;
    }
    for name in AMOUNTS {
        amount(config, name)?;
    }
    spare_starters(config)?;
    for m in config.table().iter() {
        if is_hook_timeout(&m.name) {
            count(config, &m.name)?;
        }
    }
    Ok(())
}

/// `<KEYWORD>_HOOK_<TYPE>_TIMEOUT`, in any case.
fn is_hook_timeout(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper
        .strip_suffix("_TIMEOUT")
        .and_then(|rest| rest.find("_HOOK_").map(|i| i > 0 && i + 6 < rest.len()))
        .unwrap_or(false)
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
        assert_eq!(check(&c), Ok(()));
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
                "ROOST_SPARE_STARTERS = 17",
                "ROOST_SPARE_STARTERS is not a number of spare starters from 0 to 16: 17 (at /etc/condor/condor_config, line 2)",
            ),
        ] {
            let c = config(&format!("# a site's file\n{line}\n"));
            let got = check(&c).expect_err(line).to_string();
            assert_eq!(got, want, "{line}");
        }
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
