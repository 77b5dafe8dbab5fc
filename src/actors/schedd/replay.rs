//! The schedd's replay: the queue, the router's jobs and schedd cron as
//! the schedd's log (`$(SPOOL)/roost-schedd-events`) holds them, and the
//! batch a new run starts its log with (what the last run left running
//! ended).

use anyhow::{Result, anyhow};
use tracing::{info, warn};

use crate::cron::event::CronState;
use crate::events::{DaemonEvent, EventRead, EventStore, SledStore};
use crate::schedd::event::ScheddEvent;
use crate::schedd::queue::Queue;
use crate::schedd::router::{Logged, Router};

/// What the schedd's log holds.
pub struct Replayed {
    /// The job queue and its history.
    pub queue: Queue,
    /// The router's jobs.
    pub router: Router,
    /// Its cron jobs' runs and ads.
    pub cron: CronState,
    /// The machine's boot the last run was in (empty: not known).
    pub boot: String,
}

/// The queue, the router and schedd cron the log holds; a record that
/// does not decode is skipped, said in the daemon log, and the rest is
/// read.
pub fn replay(store: &SledStore<ScheddEvent>, history_limit: usize) -> Replayed {
    let mut queue = Queue::replay_keeping(history_limit, &[]);
    let mut router = Router::default();
    let mut cron = CronState::default();
    let mut boot = String::new();
    let mut events = 0u64;
    for item in store.read_from(1) {
        match item {
            Ok(env) => match &env.event {
                ScheddEvent::Job(e) => {
                    queue.apply(e);
                    events += 1;
                }
                ScheddEvent::Route(e) => {
                    router.apply(e);
                    events += 1;
                }
                ScheddEvent::Cron(e) => cron.apply(env.time, &env.actor, e),
                ScheddEvent::Daemon(DaemonEvent::Started { boot: b, .. }) => {
                    cron.new_run();
                    boot.clone_from(b);
                }
                _ => {}
            },
            Err(e) => {
                warn!(message = "An event of the log cannot be read; it is skipped.", error = %e)
            }
        }
    }
    if queue.unreadable > 0 {
        warn!(
            message = "Submitted job ads in the log do not parse; those jobs are left out.",
            jobs = queue.unreadable
        );
    }
    info!(
        message = "Queue replayed.",
        events,
        jobs = queue.jobs.len(),
        history = queue.history.len(),
        routed = router.jobs.len()
    );
    Replayed {
        queue,
        router,
        cron,
        boot,
    }
}

/// The start batch: the cron runs the last run left going ended (and
/// killed, when still alive), the router hooks it left running ended the
/// same way (their jobs then run them again: `Router::interrupted`),
/// then the run's `Started`, which tells a later replay which boot this
/// run is in. The router's hooks' ends are applied to `last.router`.
/// Returns the cron state a new run continues from (`None` after a
/// reboot).
pub fn start_batch(
    store: &mut SledStore<ScheddEvent>,
    last: &mut Replayed,
    name: &str,
    now: i64,
) -> Result<Option<CronState>> {
    let (rebooted, boot) = crate::starter::rebooted_since(&last.boot);
    let mut batch: Vec<(i64, String, ScheddEvent)> =
        crate::actors::common::cron::cron_left(&last.cron, rebooted)
            .into_iter()
            .map(|(a, e)| (now, a, ScheddEvent::Cron(e)))
            .collect();
    let left: Vec<_> = last.router.left_running().collect();
    for (src, h) in left {
        let same = !rebooted && crate::starter::is_same_process(h.pid, h.started);
        if same {
            crate::hooks::kill_group(h.pid);
        }
        warn!(message = "A router hook the last run left running is ended; its job runs it again.",
            job = %src, hook = ?h.hook, pid = h.pid, killed = same);
        if let Logged::Route(e) = Router::interrupted(now, src, h.hook, same) {
            last.router.apply(&e);
            batch.push((now, e.actor(), ScheddEvent::Route(e)));
        }
    }
    batch.push((
        now,
        "daemon".into(),
        ScheddEvent::Daemon(DaemonEvent::Started {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            host: name.into(),
            slots: Vec::new(),
            boot,
        }),
    ));
    store
        .append(store.next_seq(), &batch)
        .map_err(|e| anyhow!("event log: cannot record the start: {e}"))?;
    let mut cron = last.cron.clone();
    cron.new_run();
    Ok((!rebooted).then_some(cron))
}
