//! A slot's state, the events that change it, and `apply`: the part of the
//! state machine that holds no logic, so replaying events from the log
//! gives exactly the state the live run had.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use super::record::SlotRecord;
pub use super::transition::Transition;

/// HTCondor's slot states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum State {
    /// In use by its owner (IS_OWNER true).
    Owner,
    /// Available.
    Unclaimed,
    /// Matched by a negotiator, not yet claimed.
    Matched,
    /// Claimed: running, or ready to run, a job.
    Claimed,
    /// Getting rid of a job.
    Preempting,
    /// Running backfill work.
    Backfill,
    /// Drained.
    Drained,
}

/// HTCondor's activities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Activity {
    /// Nothing running.
    Idle,
    /// A job runs.
    Busy,
    /// The job is suspended.
    Suspended,
    /// The job runs, but the claim is ending.
    Retiring,
    /// The job was asked to leave (soft kill).
    Vacating,
    /// The job is being hard-killed.
    Killing,
    /// Running benchmarks.
    Benchmarking,
}

impl State {
    /// The state's name, as the slot ad's `State` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Owner => "Owner",
            State::Unclaimed => "Unclaimed",
            State::Matched => "Matched",
            State::Claimed => "Claimed",
            State::Preempting => "Preempting",
            State::Backfill => "Backfill",
            State::Drained => "Drained",
        }
    }
}

impl Activity {
    /// The activity's name, as the slot ad's `Activity` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Idle => "Idle",
            Activity::Busy => "Busy",
            Activity::Suspended => "Suspended",
            Activity::Retiring => "Retiring",
            Activity::Vacating => "Vacating",
            Activity::Killing => "Killing",
            Activity::Benchmarking => "Benchmarking",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Activity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a claim is retiring or being preempted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EndCause {
    /// PREEMPT became true (irreversible; the slot goes to Owner).
    Preempt,
    /// A better claim is waiting (reversible while retiring).
    BetterClaim,
    /// `vacate` command (irreversible; the slot goes to Owner).
    Vacate,
    /// START became false, IS_OWNER became true, or CLAIM_WORKLIFE ended an
    /// idle claim.
    Policy,
    /// A fetch claim got no more work.
    NoMoreWork,
    /// Shutdown or draining.
    Shutdown,
    /// The daemon stopped (crashed or was killed) while the claim was open;
    /// recorded by the next run when it replays the log.
    Restart,
    /// The claimant stopped renewing the claim's lease (its schedd is
    /// gone): the claim is killed.
    LeaseExpired,
    /// The starter died before it could run JOB_EXIT (killed, out of
    /// memory, a crash): what was left of the job was killed, and the
    /// fetcher hears of it through EVICT_CLAIM.
    StarterLost,
    /// The fetcher withdrew the running job (removed or held in its
    /// queue): it was vacated without retirement.
    Withdrawn,
}

/// A claim: the job a slot runs or will run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Claim number, unique on this machine.
    pub id: u64,
    /// The job ad (canonical new syntax).
    pub job: String,
    /// The slot's RANK of the job when the claim was made.
    pub rank: f64,
    /// Whether the job came from FETCH_WORK.
    pub fetched: bool,
    /// When the claim was created.
    pub created: i64,
    /// How many times a job was started on it.
    pub activations: u32,
    /// When the current job started, if one runs.
    pub job_start: Option<i64>,
    /// When the current suspension began.
    pub suspended_since: Option<i64>,
    /// Seconds the current job has spent suspended.
    pub suspended_total: i64,
    /// MachineMaxVacateTime, pledged when the job started.
    pub pledged_vacate: i64,
    /// Why the claim is ending, once it is.
    pub ending: Option<EndCause>,
    /// The claim lease, seconds: an external claim ends when its claimant
    /// is not heard from for this long (`None`: no lease, as for fetched
    /// work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<i64>,
    /// When the claimant was last heard from after the claim was made (a
    /// keep-alive, an activation); `None`: not since `created`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alive_at: Option<i64>,
}

/// Resources a slot holds (for a partitionable slot: what is left).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// CPUs.
    pub cpus: f64,
    /// Memory, MiB.
    pub memory_mb: i64,
    /// Disk, KiB.
    pub disk_kb: i64,
    /// Custom resources (`GPUs`, …).
    pub custom: BTreeMap<String, f64>,
    /// The devices of custom resources configured as id lists that the
    /// slot holds (`Assigned<name>`), by resource.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ids: BTreeMap<String, Vec<String>>,
}

impl Resources {
    fn add(&mut self, other: &Resources, sign: f64) {
        self.cpus += sign * other.cpus;
        #[allow(clippy::cast_possible_truncation)]
        {
            self.memory_mb += (sign as i64) * other.memory_mb;
            self.disk_kb += (sign as i64) * other.disk_kb;
        }
        for (k, v) in &other.custom {
            *self.custom.entry(k.clone()).or_insert(0.0) += sign * v;
        }
        for (k, ids) in &other.ids {
            let mine = self.ids.entry(k.clone()).or_default();
            if sign < 0.0 {
                mine.retain(|i| !ids.contains(i));
            } else {
                mine.extend(
                    ids.iter()
                        .filter(|i| !mine.contains(i))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
            }
        }
    }

    /// `Assigned<resource>` and its value (the ids, comma-separated) when
    /// the slot holds devices of `resource`: as its ad publishes them and
    /// cron ads target them.
    pub fn assigned(&self, resource: &str) -> Option<(String, String)> {
        (self.ids.get(resource))
            .filter(|ids| !ids.is_empty())
            .map(|ids| (format!("Assigned{resource}"), ids.join(",")))
    }

    /// The first `n` of the devices of `resource` this slot holds (fewer
    /// when it holds fewer; none when the resource has no ids).
    pub fn first_ids(&self, resource: &str, n: f64) -> Vec<String> {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = n.max(0.0).ceil() as usize;
        (self.ids.get(resource))
            .map(|ids| ids.iter().take(n).cloned().collect())
            .unwrap_or_default()
    }
}

/// What kind of slot it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SlotKind {
    /// A static slot.
    Static,
    /// A partitionable slot: jobs run in dynamic slots carved from it.
    Partitionable,
    /// A dynamic slot carved from the named partitionable slot.
    Dynamic {
        /// The parent's id (`slot1`).
        parent: String,
    },
}

/// For `skip_serializing_if`: fields added since schema 1 are left out
/// at their default, so events without them encode as they always did.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

impl Claim {
    /// When the lease runs out if the claimant is not heard from again
    /// (`None`: no lease).
    pub fn lease_end(&self) -> Option<i64> {
        self.lease
            .map(|l| self.alive_at.unwrap_or(self.created) + l)
    }

    /// A new claim `id` for a job (fetched or requested), made at `created`.
    pub fn new(id: u64, job: String, rank: f64, fetched: bool, created: i64) -> Claim {
        Claim {
            id,
            job,
            rank,
            fetched,
            created,
            activations: 0,
            job_start: None,
            suspended_since: None,
            suspended_total: 0,
            pledged_vacate: 0,
            ending: None,
            lease: None,
            alive_at: None,
        }
    }
}

/// One slot's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    /// `slot1`, `slot1_2`.
    pub id: String,
    /// `slot1@host`.
    pub name: String,
    /// The state.
    pub state: State,
    /// The activity.
    pub activity: Activity,
    /// When the state was entered.
    pub entered_state: i64,
    /// When the activity was entered.
    pub entered_activity: i64,
    /// The current claim.
    pub claim: Option<Claim>,
    /// A better claim waiting for the current one to end.
    pub preempting: Option<Claim>,
    /// Whether a starter (job) is running.
    pub starter: bool,
    /// Whether FETCH_WORK is running for this slot.
    pub fetching: bool,
    /// When FETCH_WORK was last started.
    pub last_fetch_spawned: Option<i64>,
    /// When FETCH_WORK last finished.
    pub last_fetch_completed: Option<i64>,
    /// Seconds spent in each state and activity (`ClaimedBusy` → s).
    pub total_time: BTreeMap<String, i64>,
    /// The next claim number.
    pub next_claim: u64,
    /// Static, partitionable or dynamic.
    pub kind: SlotKind,
    /// The resources it holds (a partitionable slot: what is not carved).
    pub resources: Resources,
    /// Sub-ids of the dynamic slots carved from it (partitionable).
    pub children: std::collections::BTreeSet<u32>,
    /// A dynamic slot that has given its resources back.
    pub deleted: bool,
    /// When a negotiator's match arrived, while the slot is Matched (or in
    /// Backfill, on its way to Matched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_at: Option<i64>,
    /// Whether the backfill client works for this slot.
    #[serde(default, skip_serializing_if = "is_false")]
    pub backfill: bool,
    /// Whether the slot is leaving Backfill (EVICT_BACKFILL, vacate,
    /// draining, shutdown) rather than restarting an exited client.
    #[serde(default, skip_serializing_if = "is_false")]
    pub backfill_ending: bool,
}

impl Slot {
    /// A new slot, in Owner/Idle since `now`.
    pub fn new(id: &str, host: &str, now: i64) -> Slot {
        Slot {
            id: id.to_string(),
            name: format!("{id}@{host}"),
            state: State::Owner,
            activity: Activity::Idle,
            entered_state: now,
            entered_activity: now,
            claim: None,
            preempting: None,
            starter: false,
            fetching: false,
            last_fetch_spawned: None,
            last_fetch_completed: None,
            total_time: BTreeMap::new(),
            next_claim: 1,
            kind: SlotKind::Static,
            resources: Resources::default(),
            children: std::collections::BTreeSet::new(),
            deleted: false,
            matched_at: None,
            backfill: false,
            backfill_ending: false,
        }
    }

    /// A slot of the given kind holding `resources`.
    pub fn with(id: &str, host: &str, now: i64, kind: SlotKind, resources: Resources) -> Slot {
        Slot {
            kind,
            resources,
            ..Slot::new(id, host, now)
        }
    }

    /// The lowest sub-id no dynamic slot of this one uses (ids are reused).
    pub fn free_child_id(&self) -> u32 {
        (1..).find(|i| !self.children.contains(i)).unwrap_or(1)
    }
}

/// Everything that happens to a slot, in the past tense. Each carries its
/// time; `apply` is the only way state changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SlotEvent {
    /// State and/or activity changed. `transition` is the manual's number
    /// (0 when it has none); `why` names the expression or cause.
    ActivityChanged {
        /// When.
        at: i64,
        /// New state.
        state: State,
        /// New activity.
        activity: Activity,
        /// The manual's numbered transition.
        transition: Transition,
        /// What caused it.
        why: String,
    },
    /// FETCH_WORK was started.
    FetchStarted {
        /// When.
        at: i64,
        /// The slot whose FETCH_WORK had just brought work, when this
        /// fetch came for that rather than at the slot's own time (see
        /// `Input::WorkFound`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompted_by: Option<String>,
    },
    /// FETCH_WORK finished (whatever it printed).
    FetchCompleted {
        /// When.
        at: i64,
    },
    /// A claim was made for a job; it becomes the current claim.
    ClaimCreated {
        /// When.
        at: i64,
        /// The claim.
        claim: Claim,
    },
    /// A better claim was accepted and waits for the current one to end.
    PreemptingClaimQueued {
        /// When.
        at: i64,
        /// The claim.
        claim: Claim,
    },
    /// The current claim began to end.
    ClaimEnding {
        /// When.
        at: i64,
        /// Why.
        cause: EndCause,
    },
    /// A reversible ending was taken back (the better claim went away).
    ClaimEndingCancelled {
        /// When.
        at: i64,
    },
    /// The current claim ended; the waiting claim, if any, takes its place.
    ClaimEnded {
        /// When.
        at: i64,
        /// Why.
        cause: EndCause,
    },
    /// A job was started on the current claim (a starter spawned).
    JobStarted {
        /// When.
        at: i64,
        /// MachineMaxVacateTime pledged to it.
        pledged_vacate: i64,
    },
    /// The job was suspended.
    JobSuspended {
        /// When.
        at: i64,
    },
    /// The job was continued.
    JobContinued {
        /// When.
        at: i64,
    },
    /// The starter exited.
    StarterExited {
        /// When.
        at: i64,
    },
    /// A dynamic slot was carved from this partitionable slot for a job.
    DynamicSlotCreated {
        /// When.
        at: i64,
        /// Its sub-id: the slot is `<parent>_<sub>`.
        sub: u32,
        /// What it takes.
        resources: Resources,
        /// The claim it starts with.
        claim: Claim,
    },
    /// A dynamic slot of this one was deleted; its resources came back.
    DynamicSlotReturned {
        /// When.
        at: i64,
        /// Its sub-id.
        sub: u32,
        /// What came back.
        resources: Resources,
    },
    /// This dynamic slot is gone.
    SlotDeleted {
        /// When.
        at: i64,
    },
    /// A negotiator matched the slot with a job (its claimant will send a
    /// claim request).
    MatchReceived {
        /// When.
        at: i64,
    },
    /// The claimant renewed its claims' lease (a keep-alive).
    ClaimAlive {
        /// When.
        at: i64,
    },
    /// The waiting better claim was given up: its claimant stopped
    /// renewing its lease.
    PreemptingClaimDropped {
        /// When.
        at: i64,
    },
    /// The backfill client works for this slot.
    BackfillStarted {
        /// When.
        at: i64,
    },
    /// The slot leaves Backfill once the client is gone.
    BackfillEnding {
        /// When.
        at: i64,
    },
    /// The backfill client no longer works for this slot (killed, or it
    /// exited).
    BackfillExited {
        /// When.
        at: i64,
    },
    /// The slot's whole state: written when a slot actor starts (a new
    /// slot, or every slot after a restart). Replay starts from the latest
    /// one instead of the beginning of the log.
    Snapshot {
        /// When.
        at: i64,
        /// The state, in its on-disk form.
        slot: Box<SlotRecord>,
    },
    /// A run of FETCH_WORK polls that each found nothing, written as one
    /// event (see `policy::quiet`): as if each had started and completed.
    FetchesEmpty {
        /// When the last of them completed.
        at: i64,
        /// When the first started.
        first: i64,
        /// When the last started.
        last_started: i64,
        /// How many.
        count: u64,
        /// Their hooks' running time, summed, in seconds.
        hook_seconds: f64,
    },
}

impl SlotEvent {
    /// A snapshot of `slot` at `at`.
    #[must_use]
    pub fn snapshot(at: i64, slot: &Slot) -> SlotEvent {
        SlotEvent::Snapshot {
            at,
            slot: Box::new(SlotRecord::from(slot)),
        }
    }

    /// When it happened.
    pub fn at(&self) -> i64 {
        match self {
            SlotEvent::ActivityChanged { at, .. }
            | SlotEvent::FetchStarted { at, .. }
            | SlotEvent::FetchCompleted { at }
            | SlotEvent::ClaimCreated { at, .. }
            | SlotEvent::PreemptingClaimQueued { at, .. }
            | SlotEvent::ClaimEnding { at, .. }
            | SlotEvent::ClaimEndingCancelled { at }
            | SlotEvent::ClaimEnded { at, .. }
            | SlotEvent::JobStarted { at, .. }
            | SlotEvent::JobSuspended { at }
            | SlotEvent::JobContinued { at }
            | SlotEvent::StarterExited { at }
            | SlotEvent::DynamicSlotCreated { at, .. }
            | SlotEvent::DynamicSlotReturned { at, .. }
            | SlotEvent::SlotDeleted { at }
            | SlotEvent::MatchReceived { at }
            | SlotEvent::ClaimAlive { at }
            | SlotEvent::PreemptingClaimDropped { at }
            | SlotEvent::BackfillStarted { at }
            | SlotEvent::BackfillEnding { at }
            | SlotEvent::BackfillExited { at }
            | SlotEvent::Snapshot { at, .. }
            | SlotEvent::FetchesEmpty { at, .. } => *at,
        }
    }
}

/// [`apply`] for a fetch's events.
fn apply_fetch(slot: &mut Slot, event: &SlotEvent) {
    match event {
        SlotEvent::FetchStarted { at, .. } => {
            slot.fetching = true;
            slot.last_fetch_spawned = Some(*at);
        }
        SlotEvent::FetchCompleted { at } => {
            slot.fetching = false;
            slot.last_fetch_completed = Some(*at);
        }
        SlotEvent::FetchesEmpty {
            at, last_started, ..
        } => {
            slot.fetching = false;
            slot.last_fetch_spawned = Some(*last_started);
            slot.last_fetch_completed = Some(*at);
        }
        _ => {}
    }
}

/// Applies one event. Holds no policy: every decision was made by
/// `decide` when the event was produced.
pub fn apply(slot: &mut Slot, event: &SlotEvent) {
    match event {
        SlotEvent::ActivityChanged {
            at,
            state,
            activity,
            ..
        } => {
            let key = format!("{}{}", slot.state, slot.activity);
            *slot.total_time.entry(key).or_insert(0) += (at - slot.entered_activity).max(0);
            if *state != slot.state {
                slot.entered_state = *at;
            }
            slot.state = *state;
            slot.activity = *activity;
            slot.entered_activity = *at;
            if !matches!(state, State::Matched | State::Backfill) {
                slot.matched_at = None;
            }
            if *state != State::Backfill {
                slot.backfill_ending = false;
            }
        }
        SlotEvent::FetchStarted { .. }
        | SlotEvent::FetchCompleted { .. }
        | SlotEvent::FetchesEmpty { .. } => apply_fetch(slot, event),
        SlotEvent::ClaimCreated { claim, .. } => {
            slot.next_claim = slot.next_claim.max(claim.id + 1);
            slot.claim = Some(claim.clone());
        }
        SlotEvent::PreemptingClaimQueued { claim, .. } => {
            slot.next_claim = slot.next_claim.max(claim.id + 1);
            slot.preempting = Some(claim.clone());
        }
        SlotEvent::ClaimEnding { cause, .. } => {
            if let Some(c) = &mut slot.claim {
                c.ending = Some(*cause);
            }
        }
        SlotEvent::ClaimEndingCancelled { .. } => {
            if let Some(c) = &mut slot.claim {
                c.ending = None;
            }
        }
        SlotEvent::ClaimEnded { .. } => {
            slot.claim = slot.preempting.take();
        }
        SlotEvent::JobStarted { at, pledged_vacate } => {
            slot.starter = true;
            if let Some(c) = &mut slot.claim {
                c.activations += 1;
                c.job_start = Some(*at);
                c.suspended_since = None;
                c.suspended_total = 0;
                c.pledged_vacate = *pledged_vacate;
                if c.lease.is_some() {
                    c.alive_at = Some(*at);
                }
            }
        }
        SlotEvent::JobSuspended { at } => {
            if let Some(c) = &mut slot.claim {
                c.suspended_since = Some(*at);
            }
        }
        SlotEvent::JobContinued { at } => {
            if let Some(c) = &mut slot.claim
                && let Some(since) = c.suspended_since.take()
            {
                c.suspended_total += (at - since).max(0);
            }
        }
        SlotEvent::StarterExited { .. } => {
            slot.starter = false;
            if let Some(c) = &mut slot.claim {
                c.job_start = None;
                c.suspended_since = None;
            }
        }
        SlotEvent::DynamicSlotCreated {
            sub,
            resources,
            claim,
            ..
        } => {
            // Claims on dynamic slots are numbered by their parent, so a
            // claim number is unique among the parent's children.
            slot.next_claim = slot.next_claim.max(claim.id + 1);
            slot.children.insert(*sub);
            slot.resources.add(resources, -1.0);
        }
        SlotEvent::DynamicSlotReturned { sub, resources, .. } => {
            slot.children.remove(sub);
            slot.resources.add(resources, 1.0);
        }
        SlotEvent::SlotDeleted { .. } => {
            slot.deleted = true;
        }
        SlotEvent::MatchReceived { at } => slot.matched_at = Some(*at),
        SlotEvent::ClaimAlive { at } => {
            for c in [&mut slot.claim, &mut slot.preempting]
                .into_iter()
                .flatten()
            {
                if c.lease.is_some() {
                    c.alive_at = Some(*at);
                }
            }
        }
        SlotEvent::PreemptingClaimDropped { .. } => slot.preempting = None,
        SlotEvent::BackfillStarted { .. } => slot.backfill = true,
        SlotEvent::BackfillEnding { .. } => slot.backfill_ending = true,
        SlotEvent::BackfillExited { .. } => slot.backfill = false,
        SlotEvent::Snapshot { slot: s, .. } => *slot = s.slot(),
    }
}
