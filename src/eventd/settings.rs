//! The eventd's knobs (`../shared/spec/eventd.txt`), read strictly: a
//! value that does not read, or an event in `EVENT_LIST` that does not
//! (`schedule::EventError` names the field), is an error naming the knob.

use super::schedule::Shutdown;
use crate::config::Config;

/// What `roost eventd` runs on.
#[derive(Clone, Debug)]
pub struct EventdSettings {
    /// `EVENTD_INTERVAL` (900): seconds between looks at the pool.
    pub interval: i64,
    /// `EVENTD_MAX_PREPARATION` (0: always): how long before an event's
    /// start the eventd begins to look at the pool for it.
    pub max_preparation: i64,
    /// `EVENTD_SHUTDOWN_SLOW_START_INTERVAL` (0): seconds between the
    /// machines' `EndDownTime`s.
    pub slow_start: i64,
    /// `EVENTD_SHUTDOWN_CLEANUP_INTERVAL` (3600): seconds between looks
    /// for expired shutdown configurations.
    pub cleanup_interval: i64,
    /// `EVENT_LIST`'s events.
    pub events: Vec<Shutdown>,
}

/// A knob of the eventd that does not read.
#[derive(Debug, thiserror::Error)]
#[error("{knob}: {message}")]
pub struct SettingsError {
    /// The knob.
    pub knob: String,
    /// What is wrong.
    pub message: String,
}

impl EventdSettings {
    /// The eventd's knobs in `config`.
    pub fn read(config: &Config) -> Result<EventdSettings, SettingsError> {
        let err = |knob: &str, message: String| SettingsError {
            knob: knob.to_string(),
            message,
        };
        let int = |knob: &str, default: i64, least: i64| -> Result<i64, SettingsError> {
            let v = config
                .int(knob)
                .map_err(|e| err(knob, e.to_string()))?
                .unwrap_or(default);
            if v < least {
                return Err(err(knob, format!("{v}: must be at least {least}")));
            }
            Ok(v)
        };
        let list = config
            .text("EVENT_LIST")
            .map_err(|e| err("EVENT_LIST", e.to_string()))?
            .unwrap_or_default();
        let knob = |name: &str| config.text(name).ok().flatten();
        let mut events = Vec::new();
        for name in list.split([',', ' ', '\t']).filter(|n| !n.is_empty()) {
            let text = knob(name)
                .ok_or_else(|| err("EVENT_LIST", format!("names {name}, which is not set")))?;
            events.push(Shutdown::parse(name, &text, &knob).map_err(|e| err(name, e.message))?);
        }
        Ok(EventdSettings {
            interval: int("EVENTD_INTERVAL", 900, 1)?,
            max_preparation: int("EVENTD_MAX_PREPARATION", 0, 0)?,
            slow_start: int("EVENTD_SHUTDOWN_SLOW_START_INTERVAL", 0, 0)?,
            cleanup_interval: int("EVENTD_SHUTDOWN_CLEANUP_INTERVAL", 3600, 1)?,
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<EventdSettings, SettingsError> {
        let scope = crate::config::Scope {
            subsys: Some("EVENTD".into()),
            localname: None,
        };
        let c = crate::config::load_text("/etc/condor/condor_config", text, scope, vec![])
            .expect("config");
        EventdSettings::read(&c)
    }

    #[test]
    fn the_spec_example_reads_and_bad_events_are_named() {
        let s = read(
            "EVENTD_INTERVAL = 900\nEVENT_LIST = TestEvent, TestEvent2\n\
             TestEvent = SHUTDOWN W 16:00 3600 2 TestEventConstraint TestEventRank\n\
             TestEvent2 = SHUTDOWN F 14:00 1200 2 TestEventConstraint2 TestEventRank\n\
             TestEventConstraint = (Machine == \"froth.cs.wisc.edu\")\n\
             TestEventConstraint2 = (Machine == \"perdita.cs.wisc.edu\")\n\
             TestEventRank = (0 - ImageSize)\nEVENTD_SHUTDOWN_SLOW_START_INTERVAL = 0\n",
        )
        .expect("reads");
        assert_eq!(s.events.len(), 2);
        assert_eq!(
            (s.interval, s.max_preparation, s.cleanup_interval),
            (900, 0, 3600)
        );
        let e = read("EVENT_LIST = A\n").expect_err("A unset");
        assert!(e.to_string().contains("names A"), "{e}");
        let e = read("EVENT_LIST = A\nA = SHUTDOWN X 16:00 60 1 C R\nC = true\nR = 1\n")
            .expect_err("bad day");
        assert!(e.to_string().starts_with("A: DAYS"), "{e}");
        let e = read("EVENTD_INTERVAL = 0\n").expect_err("zero interval");
        assert!(e.to_string().contains("EVENTD_INTERVAL"), "{e}");
    }
}
