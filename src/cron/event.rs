//! Daemon ClassAd hooks in the log: a cron job's runs (`Cron.Started`, the
//! ads each published, `Cron.Ended`, `Cron.Refused`) and the state a
//! replay rebuilds from them (`CronState`: each job's last ads, its last
//! start and end, whether a run is going), which a run's start batch and
//! every checkpoint carry as one `Cron.Snapshot` per job so that replay
//! from either finds every job's ads. A cron job's actor is
//! `cron.<name>` (startd cron) or `benchmark.<name>` (benchmarks). Pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cron::metrics::{Metrics, SlotUsage};
use crate::exit::Exit;

/// One ad a run published, as the log keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedAd {
    /// `<job>` or `<job>.<tag>`: a later ad of the same name replaces it.
    pub name: String,
    /// The ad, in new syntax (`[ A = 1; B = "x" ]`).
    pub ad: String,
}

/// A cron job's life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CronEvent {
    /// A run started.
    Started {
        /// The executable.
        path: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its pid.
        pid: u32,
        /// When it started, in clock ticks after boot (with the pid, which
        /// process it is; 0: not known).
        #[serde(default, skip_serializing_if = "crate::events::skip::is_zero")]
        started: u64,
    },
    /// The run ended an ad (a `-` line, or its exit after output): these
    /// ads replace the job's ads of the same names.
    Published {
        /// The ads, in order.
        ads: Vec<PublishedAd>,
        /// Lines that could not be read (each naming its line), skipped.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        problems: Vec<String>,
        /// A resource monitor's (`_METRICS`) reports, as they add to each
        /// slot.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        usage: Vec<SlotUsage>,
    },
    /// The run ended.
    Ended {
        /// How its process ended.
        exit: Exit,
        /// Why Roost killed it (`timeout`, `still running at its next
        /// period`, `shutdown`), if it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        killed: Option<String>,
        /// Seconds it ran.
        elapsed: f64,
        /// Bytes of output it printed.
        stdout_bytes: u64,
    },
    /// A run could not be started (refused path, spawn failure).
    Refused {
        /// The configured executable.
        path: String,
        /// Why.
        reason: String,
    },
    /// The job's whole state, written where a replay may begin (a run's
    /// start, a checkpoint).
    Snapshot {
        /// The state.
        state: CronJobState,
    },
}

impl CronEvent {
    /// The end of a run the last run of the daemon left going: killed at
    /// the restart (`killed`: the same process was still there), or ended
    /// with the last run in a way no one saw.
    pub fn left_by_last_run(killed: bool) -> CronEvent {
        CronEvent::Ended {
            exit: if killed {
                Exit::Signal(9)
            } else {
                Exit::Code(-1)
            },
            killed: Some(if killed {
                "left running by the last run".into()
            } else {
                "ended with the last run, how is not known".into()
            }),
            elapsed: 0.0,
            stdout_bytes: 0,
        }
    }
}

/// What the log says of one cron job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CronJobState {
    /// Its ads, in the order their names were first published.
    pub ads: Vec<PublishedAd>,
    /// When its last run started, if one did.
    pub last_start: Option<i64>,
    /// When its last run ended, if one did.
    pub last_end: Option<i64>,
    /// The pid of a run that started and has not ended, and its start in
    /// clock ticks after boot (0: not known).
    pub running: Option<(u32, u64)>,
    /// How many runs started.
    pub runs: u64,
    /// What a resource monitor's reports have added up to, by slot.
    #[serde(default, skip_serializing_if = "Metrics::is_empty")]
    pub metrics: Metrics,
}

impl CronJobState {
    /// Applies one of the job's events at `time`.
    pub fn apply(&mut self, time: i64, e: &CronEvent) {
        match e {
            CronEvent::Started { pid, started, .. } => {
                self.last_start = Some(time);
                self.running = Some((*pid, *started));
                self.runs += 1;
            }
            CronEvent::Published { ads, usage, .. } => {
                for ad in ads {
                    self.publish(ad.clone());
                }
                self.metrics.apply(time, usage);
            }
            CronEvent::Ended { .. } => {
                self.last_end = Some(time);
                self.running = None;
            }
            CronEvent::Refused { .. } => {
                self.last_start = Some(time);
                self.last_end = Some(time);
            }
            CronEvent::Snapshot { state } => *self = state.clone(),
        }
    }

    /// Puts `ad` in place of the job's ad of the same name (case aside),
    /// or after the others.
    pub fn publish(&mut self, ad: PublishedAd) {
        match self
            .ads
            .iter_mut()
            .find(|a| a.name.eq_ignore_ascii_case(&ad.name))
        {
            Some(old) => *old = ad,
            None => self.ads.push(ad),
        }
    }
}

/// Every cron job the log knows, by actor.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CronState {
    /// By actor (`cron.<name>`, `benchmark.<name>`).
    pub jobs: BTreeMap<String, CronJobState>,
}

impl CronState {
    /// Applies `actor`'s event at `time`.
    pub fn apply(&mut self, time: i64, actor: &str, e: &CronEvent) {
        self.jobs
            .entry(actor.to_string())
            .or_default()
            .apply(time, e);
    }

    /// A new run of the daemon: no run of the last one is still going
    /// (the new run ended each with a `Cron.Ended` before it started).
    pub fn new_run(&mut self) {
        for j in self.jobs.values_mut() {
            j.running = None;
        }
    }

    /// The runs the log saw start and not end, by actor: pid and start.
    pub fn left_running(&self) -> impl Iterator<Item = (&str, u32, u64)> + '_ {
        (self.jobs.iter()).filter_map(|(a, j)| j.running.map(|(pid, t)| (a.as_str(), pid, t)))
    }

    /// The state of only the jobs of `actors` (those a new configuration
    /// still has; the rest are forgotten).
    pub fn only(&self, actors: &[String]) -> CronState {
        CronState {
            jobs: (self.jobs.iter())
                .filter(|(a, _)| actors.contains(a))
                .map(|(a, j)| (a.clone(), j.clone()))
                .collect(),
        }
    }

    /// One `Cron.Snapshot` per job, for a start batch or a checkpoint.
    pub fn snapshots(&self) -> impl Iterator<Item = (String, CronEvent)> + '_ {
        self.jobs.iter().map(|(actor, state)| {
            (
                actor.clone(),
                CronEvent::Snapshot {
                    state: state.clone(),
                },
            )
        })
    }
}

/// The log's actor for `manager`'s (`cron`, `benchmark`) job `name`.
pub fn actor(manager: &str, name: &str) -> String {
    format!("{manager}.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ad(name: &str, text: &str) -> PublishedAd {
        PublishedAd {
            name: name.into(),
            ad: text.into(),
        }
    }

    #[test]
    fn a_later_ad_replaces_the_earlier_of_its_name_and_keeps_the_others() {
        let mut s = CronState::default();
        let published = |ads| CronEvent::Published {
            ads,
            problems: Vec::new(),
            usage: Vec::new(),
        };
        s.apply(
            10,
            "cron.h",
            &CronEvent::Started {
                path: "/x".into(),
                args: Vec::new(),
                pid: 7,
                started: 0,
            },
        );
        s.apply(
            11,
            "cron.h",
            &published(vec![ad("h", "[ A = 1 ]"), ad("h.gpu", "[ G = 1 ]")]),
        );
        s.apply(12, "cron.h", &published(vec![ad("H", "[ A = 2 ]")]));
        let j = &s.jobs["cron.h"];
        assert_eq!(j.ads, [ad("H", "[ A = 2 ]"), ad("h.gpu", "[ G = 1 ]")]);
        assert_eq!(
            (j.last_start, j.running, j.runs),
            (Some(10), Some((7, 0)), 1)
        );
        s.new_run();
        assert_eq!(s.jobs["cron.h"].running, None);
        let mut again = CronState::default();
        for (actor, e) in s.snapshots() {
            again.apply(20, &actor, &e);
        }
        assert_eq!(again, s);
        // A new configuration without the job forgets it.
        assert_eq!(again.only(&["cron.h".into()]), s);
        assert!(again.only(&["cron.other".into()]).jobs.is_empty());
    }
}
