//! What a new run of `roost startd` makes of the last one, before its
//! actors start: the log replayed from the last start, what it left open
//! (claims, slots, starters, hooks, cron runs) closed in the log, the
//! starters still running and the claims between jobs kept to go on with,
//! and what is left of jobs whose starters died killed.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};
use tracing::{info, warn};

use super::shared::Dirs;
use crate::config::daemon_knobs::DaemonSettings;
use crate::events::{DaemonEvent, Event, EventStore, SledStore};
use crate::policy::slot::SlotEvent;
use crate::startd::replay::OpenStarter;
use crate::startd::{Kept, Replay};

/// What the last run left, as a new run starts.
pub(super) struct LastRun {
    /// Its replay (before the reconciliation).
    pub replay: Replay,
    /// Its starters taken again and its idle fetched claims kept.
    pub kept: Kept,
    /// The slots of those (and a dynamic slot's parent), as the
    /// reconciliation leaves them, to go on from.
    pub restored: BTreeMap<String, crate::policy::slot::Slot>,
    /// The lost claims whose loss the fetcher is owed word of: this
    /// reconciliation's and those an earlier run died before telling.
    pub owed: Vec<crate::startd::LostClaim>,
}

/// Replays the last run from the log and appends what closes what it left
/// open (claims, slots, starters, hooks), except what goes on with the
/// starters still running, which are taken again when they wait for a
/// daemon (`ROOST_STARTER_ORPHAN_TIMEOUT` above 0); kills what is left of
/// the jobs of starters that died meanwhile.
pub(super) fn reconcile_last_run(
    store: &mut SledStore,
    now: i64,
    settings: &DaemonSettings,
    dirs: &Dirs,
) -> Result<LastRun> {
    let reattach = settings.starter_orphan_timeout > 0;
    let mut last = Replay::from_last_start(store);
    for p in &last.problems {
        warn!(message = "Event log problem while replaying the last run.", problem = %p);
    }
    // In another boot of the machine, no process of the last run is left,
    // whatever a pid and its start time (counted from boot) say now.
    let (rebooted, _) = crate::starter::rebooted_since(&last.boot);
    if rebooted && !last.starters.is_empty() {
        warn!(
            message = "The machine restarted since the last run: its jobs ended with it.",
            jobs = last.starters.len()
        );
    }
    let alive = |st: &OpenStarter| !rebooted && crate::starter::is_same_process(st.pid, st.started);
    let files =
        super::recover::read_back(store, &mut last, now, settings.pipe_buffer_max, dirs, alive);
    // Starters still running are taken again, and claims between jobs
    // kept, when starters outlive the daemon; not after a reboot.
    let kept = if reattach {
        Kept {
            starters: last.reattachable(alive),
            idle: if rebooted {
                BTreeMap::new()
            } else {
                last.idle_claims()
            },
        }
    } else {
        Kept::default()
    };
    let taken = &kept.starters;
    // A starter that died while no daemon ran left its job unwatched.
    let home = crate::starter::cgroup::JobCgroup::own_home().ok();
    for (actor, st) in &last.starters {
        if rebooted || taken.contains_key(actor) || alive(st) || st.told {
            continue;
        }
        let cgroup = settings.base_cgroup.as_deref().zip(home.as_deref());
        if crate::starter::kill_remains(&st.slot, st.pid, st.started, st.job_pid, cgroup) {
            warn!(message = "Killed what was left of a job whose starter died.",
                slot = %st.slot, claim = st.claim, starter = st.pid, job = ?st.job_pid);
        }
    }
    let mut fix = last.reconcile(now, &kept, alive, rebooted);
    fix.extend(
        crate::actors::common::cron::cron_left(&last.cron, rebooted)
            .into_iter()
            .map(|(a, e)| (a, Event::Cron(e))),
    );
    let mut after = last.clone();
    for (actor, e) in &fix {
        after.apply_event(after.last_seq, now, actor, e);
    }
    let mut restored = BTreeMap::new();
    for id in taken.values().map(|st| &st.slot).chain(kept.idle.keys()) {
        if let Some(slot) = after.slots.get(id) {
            if let crate::policy::slot::SlotKind::Dynamic { parent } = &slot.kind
                && let Some(p) = after.slots.get(parent)
            {
                restored.insert(parent.clone(), p.clone());
            }
            restored.insert(id.clone(), slot.clone());
        }
    }
    for (actor, st) in taken {
        info!(message = "A starter of the last run is still running; it will be taken again.",
            slot = %st.slot, claim = st.claim, pid = st.pid, starter = %actor);
    }
    for (slot, claim) in &kept.idle {
        info!(message = "A fetched claim of the last run between jobs goes on.",
            slot = %slot, claim = claim);
    }
    let done = LastRun {
        replay: last,
        kept,
        restored,
        owed: after.owed.into_values().collect(),
    };
    if fix.is_empty() && files.events.is_empty() {
        files.remove();
        return Ok(done);
    }
    for (actor, e) in &fix {
        match e {
            Event::Daemon(DaemonEvent::Reconciled { slot, what }) => {
                warn!(message = "Reconciled the last run.", slot = %slot, what = %what);
            }
            Event::Slot(SlotEvent::ClaimEnded { .. }) => {
                warn!(message = "Claim lost when the daemon stopped.", slot = %actor);
            }
            _ => {}
        }
    }
    let batch: Vec<(i64, String, Event)> = (files.events.iter().cloned().chain(fix))
        .map(|(a, e)| (now, a, e))
        .collect();
    let next = store.next_seq();
    store
        .append(next, &batch)
        .map_err(|e| anyhow!("event log: cannot record the reconciliation: {e}"))?;
    crate::failpoint::hit("reconciled");
    files.remove();
    Ok(done)
}
