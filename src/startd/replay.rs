//! Replay: the state of every actor rebuilt from envelopes with the pure
//! `apply` functions, and what a restarted daemon must reconcile with the
//! world. Replay reads; it never acts.
//!
//! A daemon run begins with `Daemon.Started` and a `Slot.Snapshot` of each
//! of its slots, and the event-log writer adds a checkpoint
//! (`Daemon.Checkpoint` and a snapshot of each slot alive) every so many
//! events or seconds of event time ([`Checkpointer`]), so the state of the
//! last run is the replay of the log from its last checkpoint or start on
//! ([`Replay::from_last_start`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::node::{NodeEvent, NodeSnapshot};

use super::restart::LostClaim;
use super::{HookEvent, StarterEvent};
use crate::cron::event::CronState;
use crate::events::{DaemonEvent, Envelope, Event, EventStore, StoreError};
use crate::policy::slot::{Slot, SlotEvent, SlotKind, apply};

/// A starter the log saw spawned and never saw exit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenStarter {
    /// The slot it ran for.
    pub slot: String,
    /// The claim.
    pub claim: u64,
    /// The starter's pid.
    pub pid: u32,
    /// The job's pid, once it started.
    pub job_pid: Option<u32>,
    /// `ClusterId.ProcId Owner`.
    pub job: String,
    /// Sequence number of its `Spawned`.
    pub since: u64,
    /// When it started, in clock ticks after boot (0: not known, a log of
    /// a build before reattaching).
    #[serde(default, skip_serializing_if = "crate::events::skip::is_zero")]
    pub started: u64,
    /// How many of its reports the log holds (each report is one event).
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub reports: u32,
    /// It reported running JOB_EXIT: the fetcher has heard the job's fate.
    #[serde(default, skip_serializing_if = "is_false")]
    pub told: bool,
}

impl OpenStarter {
    /// A starter as its `Spawned` (at `seq`) tells of it.
    fn spawned(seq: u64, slot: &str, claim: u64, pid: u32, job: &str, started: u64) -> Self {
        OpenStarter {
            slot: slot.to_string(),
            claim,
            pid,
            job_pid: None,
            job: job.to_string(),
            since: seq,
            started,
            reports: 0,
            told: false,
        }
    }

    /// The event by which a new run re-declares this starter as its own.
    pub fn reattached(&self) -> super::StarterEvent {
        super::StarterEvent::Reattached {
            slot: self.slot.clone(),
            claim: self.claim,
            pid: self.pid,
            started: self.started,
            job: self.job.clone(),
            job_pid: self.job_pid,
            reports: self.reports,
            told: self.told,
        }
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero32(n: &u32) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

/// A hook invocation the log saw started and never saw finish.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenHook {
    /// `FETCH_WORK`, `REPLY_FETCH`, `EVICT_CLAIM`.
    pub hook: String,
    /// The slot.
    pub slot: String,
    /// Its pid.
    pub pid: u32,
    /// Sequence number of its `Started`.
    pub since: u64,
}

/// A job FETCH_WORK handed out that no REPLY_FETCH or EVICT_CLAIM of its
/// slot has answered yet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Handout {
    /// The job ad (new syntax).
    pub job: String,
    /// Sequence number of the FETCH_WORK's `Finished`.
    pub since: u64,
    /// The claim the slot (or a dynamic slot carved from it) made for the
    /// job, once it did: the slot's id and the claim's number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<(String, u64)>,
}

/// The state of every actor after a run of envelopes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Replay {
    /// Slots by id (deleted dynamic slots included, marked deleted).
    pub slots: BTreeMap<String, Slot>,
    /// Starters still running, by actor id.
    pub starters: BTreeMap<String, OpenStarter>,
    /// Hook invocations still running, by actor id.
    pub hooks: BTreeMap<String, OpenHook>,
    /// Jobs handed out and not answered yet, by the slot that fetched them.
    pub handouts: BTreeMap<String, Handout>,
    /// Claims lost in a restart whose loss the fetcher has yet to hear of,
    /// by `slot#claim` (`Daemon.LossOwed` until the hook that tells of it
    /// starts, or `Daemon.LossUntold`).
    pub owed: BTreeMap<String, LostClaim>,
    /// The last sequence number replayed (0: none).
    pub last_seq: u64,
    /// When the last replayed event happened.
    pub last_time: i64,
    /// Events that could not be applied (a slot event before the slot's
    /// snapshot, a record that does not decode), one line each.
    pub problems: Vec<String>,
    /// When the replayed run started (its `Daemon.Started`), and its host.
    pub run: Option<(i64, String)>,
    /// The machine's boot the replayed run was in (empty: not known).
    pub boot: String,
    /// The node's drain or shutdown, and its drain history.
    pub node: NodeSnapshot,
    /// The cron jobs' ads and runs.
    pub cron: CronState,
}

/// How often the event-log writer writes a checkpoint (0: not on that
/// count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointEvery {
    /// After this many events.
    pub events: u64,
    /// After this many seconds of event time.
    pub seconds: i64,
}

impl Default for CheckpointEvery {
    /// Every 100,000 events or every day.
    fn default() -> Self {
        CheckpointEvery {
            events: 100_000,
            seconds: 86_400,
        }
    }
}

/// Follows everything appended to the log and says when a checkpoint is
/// due, and what it is. Pure: the writer appends what it returns. Keeps
/// only what a checkpoint needs (a deleted slot is forgotten at once).
pub struct Checkpointer {
    state: Replay,
    every: CheckpointEvery,
    retention: crate::events::Retention,
    events: u64,
    since: Option<i64>,
}

impl Checkpointer {
    /// Starts from `state`: the log replayed so far (from its last start or
    /// checkpoint).
    pub fn new(state: Replay, every: CheckpointEvery) -> Checkpointer {
        Checkpointer {
            state,
            every,
            retention: crate::events::Retention::default(),
            events: 0,
            since: None,
        }
    }

    /// Also keeps the log to `retention` (checked after each checkpoint).
    #[must_use]
    pub fn with_retention(mut self, retention: crate::events::Retention) -> Checkpointer {
        self.retention = retention;
        self
    }

    /// How much of the log to keep.
    pub fn retention(&self) -> &crate::events::Retention {
        &self.retention
    }

    /// The time of the last event seen.
    pub fn now(&self) -> i64 {
        self.state.last_time
    }

    /// Takes a batch just written, whose first event got `first`.
    pub fn observe(&mut self, first: u64, batch: &[(i64, String, Event)]) {
        for ((time, actor, event), seq) in batch.iter().zip(first..) {
            self.state.apply_event(seq, *time, actor, event);
            self.since.get_or_insert(*time);
            // A deleted slot needs no checkpoint: forget it now, so that
            // the writer's memory does not grow with the jobs it logs.
            if matches!(event, Event::Slot(SlotEvent::SlotDeleted { .. })) {
                self.state.slots.remove(actor.as_str());
            }
        }
        self.state.problems.clear();
        self.events += batch.len() as u64;
    }

    /// Takes the checkpoint [`Checkpointer::due`] gave, once written:
    /// the count starts again after it.
    pub fn written(&mut self, first: u64, checkpoint: &[(i64, String, Event)]) {
        for ((time, actor, event), seq) in checkpoint.iter().zip(first..) {
            self.state.apply_event(seq, *time, actor, event);
        }
        self.events = 0;
        self.since = None;
    }

    /// The checkpoint's events if one is due, else nothing. The caller
    /// writes them and then gives them to [`Checkpointer::written`].
    pub fn due(&mut self) -> Option<Vec<(i64, String, Event)>> {
        let by_count = self.every.events > 0 && self.events >= self.every.events;
        let by_time = self.every.seconds > 0
            && self
                .since
                .is_some_and(|t| self.state.last_time - t >= self.every.seconds);
        if !(by_count || by_time) {
            return None;
        }
        self.state.forget_deleted();
        Some(self.state.checkpoint(self.state.last_time))
    }
}

impl Replay {
    /// Applies one envelope.
    pub fn apply(&mut self, env: &Envelope) {
        self.apply_event(env.seq, env.time, &env.actor, &env.event);
    }

    /// Applies one event, given as an envelope's parts.
    pub fn apply_event(&mut self, seq: u64, time: i64, actor: &str, event: &Event) {
        self.last_seq = seq;
        self.last_time = time;
        match event {
            Event::Slot(SlotEvent::Snapshot { slot, .. }) => {
                self.slots.insert(actor.to_string(), slot.slot());
            }
            Event::Slot(e) => match self.slots.get_mut(actor) {
                Some(s) => {
                    apply(s, e);
                    if let SlotEvent::ClaimCreated { claim, .. } = e
                        && claim.fetched
                    {
                        // The handout of the slot that fetched it.
                        let teller = match &s.kind {
                            SlotKind::Dynamic { parent } => parent.as_str(),
                            _ => actor,
                        };
                        if let Some(h) = self.handouts.get_mut(teller)
                            && h.claim.is_none()
                        {
                            h.claim = Some((actor.to_string(), claim.id));
                        }
                    }
                }
                None => self.problems.push(format!(
                    "record {seq}: an event of {actor} before its snapshot"
                )),
            },
            Event::Starter(e) => self.starter(seq, actor, e),
            Event::Hook(e) => match e {
                HookEvent::Started {
                    hook,
                    slot,
                    pid,
                    claim,
                    ..
                } => {
                    if hook == "REPLY_FETCH" || hook == "EVICT_CLAIM" {
                        self.handouts.remove(slot);
                    }
                    if hook == "EVICT_CLAIM" || hook == "JOB_EXIT" {
                        self.settle_owed(slot, *claim);
                    }
                    self.hooks.insert(
                        actor.to_string(),
                        OpenHook {
                            hook: hook.clone(),
                            slot: slot.clone(),
                            pid: *pid,
                            since: seq,
                        },
                    );
                }
                HookEvent::Finished { handout, .. } => {
                    let run = self.hooks.remove(actor);
                    if let (Some(job), Some(run)) = (handout, run) {
                        self.handouts.insert(
                            run.slot,
                            Handout {
                                job: job.clone(),
                                since: seq,
                                claim: None,
                            },
                        );
                    }
                }
                HookEvent::Refused { .. } => {
                    self.hooks.remove(actor);
                }
            },
            Event::Daemon(DaemonEvent::Started { host, boot, .. }) => {
                // A new run: nothing of the last one is still running
                // (it reconciled before it said so; the starters it takes
                // again follow in its start batch). Hand-outs the last run
                // did not answer stay until the new run answers them: it
                // may die before it does.
                self.starters.clear();
                self.hooks.clear();
                self.node = NodeSnapshot::default();
                self.cron.new_run();
                self.run = Some((time, host.clone()));
                self.boot.clone_from(boot);
            }
            Event::Daemon(DaemonEvent::Checkpoint {
                run,
                starters,
                hooks,
                handouts,
                boot,
                owed,
            }) => {
                self.run.clone_from(run);
                self.boot.clone_from(boot);
                self.starters.clone_from(starters);
                self.hooks.clone_from(hooks);
                self.handouts.clone_from(handouts);
                self.owed.clone_from(owed);
            }
            Event::Daemon(DaemonEvent::LossOwed { lost }) => {
                self.owed.insert(lost.key(), lost.clone());
            }
            Event::Daemon(DaemonEvent::LossUntold { teller, claim, .. }) => {
                self.settle_owed(teller, Some(*claim));
            }
            Event::Daemon(_) | Event::Job(_) | Event::Route(_) | Event::Eventd(_) => {}
            Event::Node(e) => self.node.apply(e),
            Event::Cron(e) => self.cron.apply(time, actor, e),
        }
    }

    /// The events of a checkpoint of this state at `time`: a
    /// `Daemon.Checkpoint` and a snapshot of every slot alive. Replaying
    /// from them gives this state, less the slots already deleted.
    pub fn checkpoint(&self, time: i64) -> Vec<(i64, String, Event)> {
        let mut out = vec![(
            time,
            "daemon".to_string(),
            Event::Daemon(DaemonEvent::Checkpoint {
                run: self.run.clone(),
                starters: self.starters.clone(),
                hooks: self.hooks.clone(),
                handouts: self.handouts.clone(),
                boot: self.boot.clone(),
                owed: self.owed.clone(),
            }),
        )];
        if self.node != NodeSnapshot::default() {
            out.push((
                time,
                "daemon".to_string(),
                Event::Node(NodeEvent::Snapshot {
                    at: time,
                    node: self.node.clone(),
                }),
            ));
        }
        for (id, slot) in self.slots.iter().filter(|(_, s)| !s.deleted) {
            out.push((
                time,
                id.clone(),
                Event::Slot(SlotEvent::snapshot(time, slot)),
            ));
        }
        out.extend(
            self.cron
                .snapshots()
                .map(|(actor, e)| (time, actor, Event::Cron(e))),
        );
        out
    }

    /// Forgets the slots that were deleted (a long-lived replay would
    /// otherwise keep every dynamic slot it ever saw).
    pub fn forget_deleted(&mut self) {
        self.slots.retain(|_, s| !s.deleted);
    }

    fn starter(&mut self, seq: u64, actor: &str, e: &StarterEvent) {
        match e {
            StarterEvent::Spawned {
                slot,
                claim,
                pid,
                job,
                started,
            } => {
                let open = OpenStarter::spawned(seq, slot, *claim, *pid, job, *started);
                self.starters.insert(actor.to_string(), open);
            }
            StarterEvent::Reattached {
                slot,
                claim,
                pid,
                started,
                job,
                job_pid,
                reports,
                told,
            } => {
                let open = OpenStarter {
                    job_pid: *job_pid,
                    reports: *reports,
                    told: *told,
                    ..OpenStarter::spawned(seq, slot, *claim, *pid, job, *started)
                };
                self.starters.insert(actor.to_string(), open);
            }
            StarterEvent::Exited { .. } => {
                self.starters.remove(actor);
            }
            report => {
                if let Some(s) = self.starters.get_mut(actor) {
                    s.reports += 1;
                    match report {
                        StarterEvent::JobStarted { pid } => s.job_pid = Some(*pid),
                        StarterEvent::Hook { hook, .. } if hook == "JOB_EXIT" => s.told = true,
                        _ => {}
                    }
                }
            }
        }
    }

    /// Replays `envelopes`; a record that does not decode is noted in
    /// [`Replay::problems`] and replay goes on.
    pub fn run(envelopes: impl Iterator<Item = Result<Envelope, StoreError>>) -> Replay {
        let mut r = Replay::default();
        for item in envelopes {
            match item {
                Ok(env) => r.apply(&env),
                Err(e) => r.problems.push(e.to_string()),
            }
        }
        r
    }

    /// Replays the last daemon run: from its last checkpoint, or its
    /// `Daemon.Started`, on (the whole log when there is neither).
    pub fn from_last_start(store: &dyn EventStore) -> Replay {
        let from = last_start(store).unwrap_or(1);
        Replay::run(store.read_from(from))
    }

    /// The word owed of a lost claim `claim` that slot `teller` tells of
    /// is given (its hook started) or dropped.
    fn settle_owed(&mut self, teller: &str, claim: Option<u64>) {
        let Some(claim) = claim else {
            return;
        };
        let key = self
            .owed
            .iter()
            .find(|(_, l)| l.teller == teller && l.claim == claim)
            .map(|(k, _)| k.clone());
        if let Some(k) = key {
            self.owed.remove(&k);
        }
    }

    /// The claim number a slot of a new run should count from, so claim
    /// numbers stay unique across restarts.
    pub fn next_claim(&self, slot: &str) -> u64 {
        self.slots.get(slot).map_or(1, |s| s.next_claim)
    }
}

/// The sequence number of the last `Daemon.Started` or `Daemon.Checkpoint`
/// (where replay of the last run can begin), read backwards through the
/// daemon's index.
pub fn last_start(store: &dyn EventStore) -> Option<u64> {
    store
        .read_actor_back("daemon")
        .flatten()
        .find(|e| {
            matches!(
                e.event,
                Event::Daemon(DaemonEvent::Started { .. } | DaemonEvent::Checkpoint { .. })
            )
        })
        .map(|e| e.seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::SCHEMA;
    use crate::policy::slot::{Activity, Claim, EndCause, State, Transition};
    use crate::startd::Kept;

    fn env(seq: u64, actor: &str, event: Event) -> Envelope {
        Envelope {
            seq,
            time: 100 + i64::try_from(seq).unwrap_or(0),
            actor: actor.into(),
            schema: SCHEMA,
            event,
        }
    }

    fn busy_slot() -> Vec<Envelope> {
        let slot = Slot::new("slot1", "h", 0);
        let claim = Claim::new(7, "[ Owner = \"u\" ]".into(), 0.0, true, 1);
        vec![
            env(1, "slot1", Event::Slot(SlotEvent::snapshot(1, &slot))),
            env(
                2,
                "slot1",
                Event::Slot(SlotEvent::ClaimCreated { at: 2, claim }),
            ),
            env(
                3,
                "slot1",
                Event::Slot(SlotEvent::ActivityChanged {
                    at: 2,
                    state: State::Claimed,
                    activity: Activity::Busy,
                    transition: Transition::IdleToBusy,
                    why: "job".into(),
                }),
            ),
            env(
                4,
                "slot1",
                Event::Slot(SlotEvent::JobStarted {
                    at: 3,
                    pledged_vacate: 600,
                }),
            ),
            env(
                5,
                "starter-1",
                Event::Starter(StarterEvent::Spawned {
                    slot: "slot1".into(),
                    claim: 7,
                    pid: 4242,
                    job: "1.0 u".into(),
                    started: 0,
                }),
            ),
        ]
    }

    #[test]
    fn an_open_claim_and_starter_are_reconciled() {
        let r = Replay::run(busy_slot().into_iter().map(Ok));
        assert_eq!(r.slots["slot1"].state, State::Claimed);
        assert_eq!(r.next_claim("slot1"), 8);
        assert_eq!(r.starters["starter-1"].pid, 4242);
        let fix = r.reconcile(500, &Kept::default(), |_| false, false);
        // Replaying the fix leaves the slot idle and claimless.
        let mut after = r.clone();
        for (i, (actor, e)) in fix.iter().enumerate() {
            after.apply(&env(10 + i as u64, actor, e.clone()));
        }
        let s = &after.slots["slot1"];
        assert!(s.claim.is_none() && !s.starter);
        assert_eq!((s.state, s.activity), (State::Owner, Activity::Idle));
        assert!(fix.iter().any(|(_, e)| matches!(
            e,
            Event::Slot(SlotEvent::ClaimEnded {
                cause: EndCause::Restart,
                ..
            })
        )));
        assert!(fix.iter().any(|(a, e)| a == "daemon"
            && matches!(e, Event::Daemon(DaemonEvent::Reconciled { what, .. }) if what.contains("4242"))));
        // Reconciling again finds nothing but the starter note, which a new
        // run's `Started` clears.
        assert!(
            after
                .reconcile(600, &Kept::default(), |_| false, false)
                .iter()
                .all(|(a, _)| a == "daemon")
        );
    }

    #[test]
    fn a_fetched_claim_between_jobs_is_kept_and_its_fetch_closed() {
        let mut events = busy_slot();
        let idle = [
            SlotEvent::StarterExited { at: 6 },
            SlotEvent::ActivityChanged {
                at: 6,
                state: State::Claimed,
                activity: Activity::Idle,
                transition: Transition::BusyToIdle,
                why: "starter exited".into(),
            },
            SlotEvent::FetchStarted {
                at: 7,
                prompted_by: None,
            },
        ];
        for (i, e) in idle.into_iter().enumerate() {
            events.push(env(6 + i as u64, "slot1", Event::Slot(e)));
        }
        events.push(env(
            9,
            "starter-1",
            Event::Starter(StarterEvent::Exited {
                exit: crate::exit::Exit::Code(0),
                lost: false,
            }),
        ));
        let r = Replay::run(events.into_iter().map(Ok));
        let kept = Kept {
            starters: BTreeMap::new(),
            idle: r.idle_claims(),
        };
        assert_eq!(kept.idle, BTreeMap::from([("slot1".to_string(), 7)]));
        let fix = r.reconcile(500, &kept, |_| false, false);
        assert_eq!(
            fix,
            vec![(
                "slot1".to_string(),
                Event::Slot(SlotEvent::FetchCompleted { at: 500 })
            )]
        );
        assert!(r.lost_claims(&kept, false).is_empty());
        // A claim whose job has not started is not kept.
        let fresh = Replay::run(busy_slot().into_iter().take(2).map(Ok));
        assert!(fresh.idle_claims().is_empty());
    }

    #[test]
    fn a_slot_in_backfill_is_let_go_of_its_client_and_goes_to_owner() {
        let slot = Slot::new("slot1", "h", 0);
        let events = [
            SlotEvent::snapshot(1, &slot),
            SlotEvent::ActivityChanged {
                at: 2,
                state: State::Backfill,
                activity: Activity::Busy,
                transition: Transition::BackfillIdleToBusy,
                why: "backfill client running".into(),
            },
            SlotEvent::BackfillStarted { at: 2 },
        ];
        let r = Replay::run(
            events
                .into_iter()
                .enumerate()
                .map(|(i, e)| Ok(env(i as u64 + 1, "slot1", Event::Slot(e)))),
        );
        assert!(r.slots["slot1"].backfill);
        let fix = r.reconcile(9, &Kept::default(), |_| false, false);
        let mut after = r.clone();
        for (i, (actor, e)) in fix.iter().enumerate() {
            after.apply(&env(10 + i as u64, actor, e.clone()));
        }
        let s = &after.slots["slot1"];
        assert!(!s.backfill);
        assert_eq!((s.state, s.activity), (State::Owner, Activity::Idle));
    }

    #[test]
    fn a_slot_event_before_its_snapshot_is_a_problem_not_a_panic() {
        let mut events = busy_slot();
        events.remove(0);
        let r = Replay::run(events.into_iter().map(Ok));
        assert!(r.slots.is_empty());
        assert_eq!(r.problems.len(), 3);
        assert!(r.problems[0].contains("record 2") && r.problems[0].contains("slot1"));
    }

    #[test]
    fn an_undecodable_record_is_noted_and_replay_goes_on() {
        let mut items: Vec<Result<Envelope, StoreError>> =
            busy_slot().into_iter().map(Ok).collect();
        items.insert(
            2,
            Err(StoreError::Corrupt {
                seq: 99,
                message: "bad bytes".into(),
            }),
        );
        let r = Replay::run(items.into_iter());
        assert_eq!(r.problems, vec!["record 99 cannot be decoded: bad bytes"]);
        assert_eq!(r.slots["slot1"].state, State::Claimed);
    }

    fn parts(envs: &[Envelope]) -> Vec<(i64, String, Event)> {
        envs.iter()
            .map(|e| (e.time, e.actor.clone(), e.event.clone()))
            .collect()
    }

    #[test]
    fn a_checkpoint_is_due_by_event_time_and_replays_to_the_same_state() {
        let every = CheckpointEvery {
            events: 0,
            seconds: 60,
        };
        let mut cp = Checkpointer::new(Replay::default(), every);
        let envs = busy_slot();
        // Times 101 to 105: not yet a minute.
        cp.observe(1, &parts(&envs));
        assert!(cp.due().is_none());
        let mut later = env(
            6,
            "hook-9",
            Event::Hook(HookEvent::Started {
                hook: "FETCH_WORK".into(),
                slot: "slot1".into(),
                path: "/h".into(),
                args: vec![],
                pid: 77,
                claim: None,
            }),
        );
        later.time = 170;
        cp.observe(6, &parts(std::slice::from_ref(&later)));
        let checkpoint = cp.due().expect("a minute of event time passed");
        assert_eq!(checkpoint.len(), 2, "the checkpoint and slot1's snapshot");
        cp.written(7, &checkpoint);
        assert!(cp.due().is_none(), "the count starts again");
        // Replaying the checkpoint alone gives what replaying everything
        // before it gives.
        let mut all: Vec<Envelope> = envs.clone();
        all.push(later);
        let whole = Replay::run(all.into_iter().map(Ok));
        let from = Replay::run(checkpoint.into_iter().zip(7u64..).map(
            |((time, actor, event), seq)| {
                Ok(Envelope {
                    seq,
                    time,
                    actor,
                    schema: SCHEMA,
                    event,
                })
            },
        ));
        assert_eq!(from.slots, whole.slots);
        assert_eq!(from.starters, whole.starters);
        assert_eq!(from.hooks, whole.hooks);
        assert_eq!(from.hooks["hook-9"].pid, 77);
    }

    #[test]
    fn the_checkpointer_forgets_a_deleted_slot_at_once() {
        let every = CheckpointEvery {
            events: 1,
            seconds: 0,
        };
        let mut cp = Checkpointer::new(Replay::default(), every);
        cp.observe(1, &parts(&busy_slot()));
        cp.observe(
            6,
            &[(
                200,
                "slot1".into(),
                Event::Slot(SlotEvent::SlotDeleted { at: 200 }),
            )],
        );
        let checkpoint = cp.due().expect("due after one event");
        assert!(
            checkpoint
                .iter()
                .all(|(_, _, e)| !matches!(e, Event::Slot(SlotEvent::Snapshot { .. }))),
            "no snapshot of a deleted slot"
        );
    }
}
