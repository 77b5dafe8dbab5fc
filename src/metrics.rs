//! The daemon's Prometheus metrics (`ROOST_METRICS`; docs/daemon.md,
//! "Metrics"), through the Prometheus project's Rust client.
//!
//! Most of them are a projection of the event log: the log's writer hands
//! every group it has made durable to [`Metrics::observe_group`], which
//! counts the group (events, flush time) and folds each event in — job
//! starts and ends, hook runs with their outcome and duration, starters
//! alive. So the numbers agree with the log by construction, and an event
//! that was not recorded is not counted. The rest are set by their owner:
//! the slots' states by the node actor, the spare starters by the supply,
//! the replay time at start-up; the process's CPU, memory and the log's
//! size are read when scraped ([`Metrics::encode`]).
//!
//! One registry per process ([`global`]): metrics are cross-cutting, and
//! the writer thread, the actors and the HTTP server all reach it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::cron::event::CronEvent;
use crate::events::Event;
use crate::hooks::Exit;
use crate::startd::{HookEvent, StarterEvent};

/// A hook run's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HookRun {
    /// `FETCH_WORK`, `REPLY_FETCH`, `EVICT_CLAIM`, `PREPARE_JOB`,
    /// `UPDATE_JOB_INFO`, `JOB_EXIT`, `CRON`, `BENCHMARK`.
    pub hook: String,
    /// `ok`, `error`, `timeout`, `refused`, `not_run`, `killed`; for
    /// FETCH_WORK `job`, `no_work` or `malformed`.
    pub outcome: String,
}

/// A hook type's label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HookType {
    /// As in [`HookRun::hook`].
    pub hook: String,
}

/// How a job ended: JOB_EXIT's argument.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobEnd {
    /// `exit`, `evict`, `hold`, `remove`.
    pub how: String,
}

/// A slot state's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SlotState {
    /// `Owner`, `Unclaimed`, `Claimed`, …
    pub state: String,
    /// `Idle`, `Busy`, `Retiring`, …
    pub activity: String,
}

/// Every metric the daemon exports.
pub struct Metrics {
    registry: Registry,
    /// The process collector's usual metrics, under their usual names
    /// (`process_…`, no prefix).
    process: Registry,
    slots: Family<SlotState, Gauge>,
    jobs_started: Counter,
    jobs_not_started: Counter,
    jobs_ended: Family<JobEnd, Counter>,
    hook_runs: Family<HookRun, Counter>,
    hook_seconds: Family<HookType, Histogram>,
    log_events: Counter,
    log_groups: Counter,
    log_group_events: Histogram,
    log_flush_seconds: Histogram,
    log_size: Gauge,
    replay_seconds: Gauge<f64, AtomicU64>,
    starters: Gauge,
    spares: Gauge,
    cpu_seconds: Counter<f64, AtomicU64>,
    resident: Gauge,
    virtual_memory: Gauge,
    start_time: Gauge,
    open_fds: Gauge,
    /// What the projection remembers between events: each running hook
    /// invocation's type, and the starters alive.
    seen: Mutex<Seen>,
    /// The event log's directory, whose size is read when scraped.
    log_dir: Mutex<Option<std::path::PathBuf>>,
}

#[derive(Default)]
struct Seen {
    hooks: BTreeMap<String, String>,
    starters: BTreeSet<String>,
}

fn hook_histogram() -> Histogram {
    // 1 ms to about 65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

impl Metrics {
    fn new() -> Metrics {
        let m = Metrics {
            registry: Registry::with_prefix("roost"),
            process: Registry::default(),
            slots: Family::default(),
            jobs_started: Counter::default(),
            jobs_not_started: Counter::default(),
            jobs_ended: Family::default(),
            hook_runs: Family::default(),
            hook_seconds: Family::new_with_constructor(hook_histogram),
            log_events: Counter::default(),
            log_groups: Counter::default(),
            log_group_events: Histogram::new(exponential_buckets(1.0, 2.0, 12)),
            // 10 µs to about 0.3 s.
            log_flush_seconds: Histogram::new(exponential_buckets(0.000_01, 2.0, 16)),
            log_size: Gauge::default(),
            replay_seconds: Gauge::default(),
            starters: Gauge::default(),
            spares: Gauge::default(),
            cpu_seconds: Counter::default(),
            resident: Gauge::default(),
            virtual_memory: Gauge::default(),
            start_time: Gauge::default(),
            open_fds: Gauge::default(),
            seen: Mutex::default(),
            log_dir: Mutex::default(),
        };
        m.register()
    }

    fn register(mut self) -> Metrics {
        let r = &mut self.registry;
        r.register("slots", "Slots by state and activity", self.slots.clone());
        r.register(
            "jobs_started",
            "Jobs whose process started",
            self.jobs_started.clone(),
        );
        r.register(
            "jobs_not_started",
            "Jobs handed to a starter that never started (PREPARE_JOB failed, no such user, ...)",
            self.jobs_not_started.clone(),
        );
        r.register(
            "jobs_ended",
            "Jobs ended, by how (JOB_EXIT's argument)",
            self.jobs_ended.clone(),
        );
        r.register(
            "hook_runs",
            "Hook runs by hook type and outcome",
            self.hook_runs.clone(),
        );
        r.register_with_unit(
            "hook_duration",
            "How long hooks ran",
            Unit::Seconds,
            self.hook_seconds.clone(),
        );
        r.register(
            "event_log_events",
            "Events appended to the event log",
            self.log_events.clone(),
        );
        r.register(
            "event_log_flushes",
            "Groups of events written and flushed together",
            self.log_groups.clone(),
        );
        r.register(
            "event_log_flush_events",
            "Events per flushed group",
            self.log_group_events.clone(),
        );
        r.register_with_unit(
            "event_log_flush_duration",
            "How long the store took to write and flush a group",
            Unit::Seconds,
            self.log_flush_seconds.clone(),
        );
        r.register_with_unit(
            "event_log_size",
            "The event log's size on disk",
            Unit::Bytes,
            self.log_size.clone(),
        );
        r.register_with_unit(
            "event_log_replay_duration",
            "How long the replay of the event log took at the daemon's last start",
            Unit::Seconds,
            self.replay_seconds.clone(),
        );
        r.register("starters", "Starters alive", self.starters.clone());
        r.register(
            "spare_starters",
            "Spare starters waiting for a job",
            self.spares.clone(),
        );
        let p = &mut self.process;
        p.register_with_unit(
            "process_cpu",
            "User and system CPU time the daemon spent",
            Unit::Seconds,
            self.cpu_seconds.clone(),
        );
        p.register_with_unit(
            "process_resident_memory",
            "The daemon's resident memory",
            Unit::Bytes,
            self.resident.clone(),
        );
        p.register_with_unit(
            "process_virtual_memory",
            "The daemon's virtual memory",
            Unit::Bytes,
            self.virtual_memory.clone(),
        );
        p.register_with_unit(
            "process_start_time",
            "When the daemon started, since the epoch",
            Unit::Seconds,
            self.start_time.clone(),
        );
        p.register(
            "process_open_fds",
            "The daemon's open file descriptors",
            self.open_fds.clone(),
        );
        self
    }

    /// Counts a group the log's writer made durable and folds in its
    /// events.
    pub fn observe_group(&self, events: &[(i64, String, Event)], flush: Duration) {
        self.log_groups.inc();
        self.log_events.inc_by(events.len() as u64);
        self.log_group_events.observe(events.len() as f64);
        self.log_flush_seconds.observe(flush.as_secs_f64());
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        for (_, actor, event) in events {
            self.observe(&mut seen, actor, event);
        }
        self.starters
            .set(i64::try_from(seen.starters.len()).unwrap_or(i64::MAX));
    }

    fn observe(&self, seen: &mut Seen, actor: &str, event: &Event) {
        match event {
            Event::Hook(h) => self.observe_hook(seen, actor, h),
            Event::Starter(s) => self.observe_starter(seen, actor, s),
            Event::Cron(c) => {
                let hook = if actor.starts_with("benchmark.") {
                    "BENCHMARK"
                } else {
                    "CRON"
                };
                match c {
                    CronEvent::Ended {
                        exit,
                        killed,
                        elapsed,
                        ..
                    } => {
                        let outcome = if killed.is_some() {
                            "killed"
                        } else {
                            exit_outcome(exit)
                        };
                        self.run(hook, outcome, Some(*elapsed));
                    }
                    CronEvent::Refused { .. } => self.run(hook, "refused", None),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn observe_hook(&self, seen: &mut Seen, actor: &str, h: &HookEvent) {
        match h {
            HookEvent::Started { hook, .. } => {
                seen.hooks.insert(actor.to_string(), hook.clone());
            }
            HookEvent::Finished {
                exit,
                timed_out,
                outcome,
                elapsed,
                ..
            } => {
                let hook = seen.hooks.remove(actor).unwrap_or_else(|| "unknown".into());
                let class = if *timed_out {
                    "timeout"
                } else if hook == "FETCH_WORK" {
                    fetch_outcome(outcome)
                } else {
                    exit_outcome(exit)
                };
                self.run(&hook, class, Some(*elapsed));
            }
            HookEvent::Refused { hook, .. } => self.run(hook, "refused", None),
        }
    }

    fn observe_starter(&self, seen: &mut Seen, actor: &str, s: &StarterEvent) {
        match s {
            StarterEvent::Spawned { .. } | StarterEvent::Reattached { .. } => {
                seen.starters.insert(actor.to_string());
            }
            StarterEvent::Exited { .. } => {
                seen.starters.remove(actor);
            }
            StarterEvent::JobStarted { .. } => {
                self.jobs_started.inc();
            }
            StarterEvent::JobNotStarted { .. } => {
                self.jobs_not_started.inc();
            }
            StarterEvent::JobExited { how, .. } => {
                self.jobs_ended
                    .get_or_create(&JobEnd { how: how.clone() })
                    .inc();
            }
            StarterEvent::Hook {
                hook,
                exit,
                timed_out,
                elapsed,
                ..
            } => {
                let class = match exit {
                    None => "not_run",
                    Some(_) if *timed_out => "timeout",
                    Some(e) => exit_outcome(e),
                };
                let ran = exit.is_some().then_some(*elapsed);
                self.run(hook, class, ran);
            }
            _ => {}
        }
    }

    /// A FETCH_WORK poll that found nothing, which the log holds only as
    /// part of a run of such polls (`policy::quiet`): counted as it ends.
    pub fn quiet_fetch(&self, seconds: f64) {
        self.run("FETCH_WORK", "no_work", Some(seconds));
    }

    /// One hook run: counted, and its duration observed when it ran.
    fn run(&self, hook: &str, outcome: &str, elapsed: Option<f64>) {
        self.hook_runs
            .get_or_create(&HookRun {
                hook: hook.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
        if let Some(e) = elapsed {
            self.hook_seconds
                .get_or_create(&HookType {
                    hook: hook.to_string(),
                })
                .observe(e);
        }
    }

    /// The slots' states now: `(state, activity)` with how many slots.
    pub fn set_slots(&self, counts: &BTreeMap<(String, String), usize>) {
        self.slots.clear();
        for ((state, activity), n) in counts {
            self.slots
                .get_or_create(&SlotState {
                    state: state.clone(),
                    activity: activity.clone(),
                })
                .set(i64::try_from(*n).unwrap_or(i64::MAX));
        }
    }

    /// How many spare starters wait.
    pub fn set_spares(&self, n: usize) {
        self.spares.set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// How long the replay at start-up took, and where the log lives.
    pub fn set_replay(&self, took: Duration, log_dir: &std::path::Path) {
        self.replay_seconds.set(took.as_secs_f64());
        *self.log_dir.lock().unwrap_or_else(PoisonError::into_inner) = Some(log_dir.to_path_buf());
    }

    /// The text exposition format, with the process's CPU, memory, open
    /// files and the log's size read now.
    pub fn encode(&self) -> String {
        self.read_process();
        let dir = self
            .log_dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(dir) = dir {
            self.log_size
                .set(i64::try_from(dir_size(&dir)).unwrap_or(i64::MAX));
        }
        use prometheus_client::encoding::text::{encode_eof, encode_registry};
        let mut out = String::new();
        let encoded = encode_registry(&mut out, &self.registry)
            .and_then(|()| encode_registry(&mut out, &self.process))
            .and_then(|()| encode_eof(&mut out));
        if let Err(e) = encoded {
            tracing::warn!(message = "Cannot encode the metrics.", error = %e);
        }
        out
    }

    fn read_process(&self) {
        let Some(p) = crate::metrics::process::read() else {
            return;
        };
        let before = self.cpu_seconds.get();
        if p.cpu_seconds > before {
            self.cpu_seconds.inc_by(p.cpu_seconds - before);
        }
        self.resident.set(p.resident_bytes);
        self.virtual_memory.set(p.virtual_bytes);
        self.start_time.set(p.start_time);
        self.open_fds.set(p.open_fds);
    }
}

/// A hook's outcome from how its process ended.
fn exit_outcome(exit: &Exit) -> &'static str {
    match exit {
        Exit::Code(0) => "ok",
        _ => "error",
    }
}

/// FETCH_WORK's outcome from what its output meant (`hooks::output`).
fn fetch_outcome(outcome: &str) -> &'static str {
    if outcome.starts_with("job ad") {
        "job"
    } else if outcome == crate::hooks::output::NO_WORK {
        "no_work"
    } else {
        "malformed"
    }
}

/// The bytes of the files under `dir`.
fn dir_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

/// What the event log's writer calls with each group it made durable.
pub fn on_commit() -> crate::events::OnCommit {
    Box::new(|events, took| global().observe_group(events, took))
}

/// The process's registry.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

pub mod process;
