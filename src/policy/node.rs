//! The node as a whole, as pure code: drains (`condor_drain` with every
//! `-how`, `-start`, `-check`, reason, request id and on-completion action,
//! and its cancellation), shutdowns (`condor_off` peaceful, graceful, fast)
//! and when they are complete, vacate commands, the birth and deletion of
//! dynamic slots, news of fetched work passed between slots, and the next
//! wake-up of each slot.
//!
//! `decide(&NodeState, &NodeInput, now) -> NodeDecision { events, effects }`
//! and `apply` follow the slot's pattern (`policy::engine::decide`,
//! `policy::slot::apply`). The daemon's `NodeActor` and `roost policy
//! simulate` are two drivers of it: neither decides anything of its own.
//!
//! What the node knows of each slot (its [`SlotView`]) is the slot's own
//! state, recorded by the slot's events; the driver mirrors it here with
//! [`NodeState::observe`] after every step of a slot. Everything the node
//! itself decides is a [`NodeEvent`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::classad::ClassAd;

use super::drain::{CheckError, Drain, DrainHow, OnCompletion, drain_check};
use super::engine::{Ctx, Input, PolicyError, evaluation_interval, fetch_delay, next_fetch_at};
use super::slot::{Activity, Claim, Resources, Slot, State};

/// A slot as the node sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotView {
    /// Its state.
    pub state: State,
    /// Its activity.
    pub activity: Activity,
    /// Whether it holds a claim, a starter, or the backfill client.
    pub busy: bool,
}

impl SlotView {
    /// The view of `slot`.
    pub fn of(slot: &Slot) -> SlotView {
        SlotView {
            state: slot.state,
            activity: slot.activity,
            busy: slot.claim.is_some() || slot.starter || slot.backfill,
        }
    }

    /// Whether the slot holds nothing that must finish before the daemon
    /// exits (a job, a claim, or the backfill client working for it).
    pub fn idle(&self) -> bool {
        !self.busy && !matches!(self.state, State::Preempting | State::Backfill)
    }
}

/// A drain as `condor_drain` asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrainRequest {
    /// How running jobs go.
    pub how: DrainHow,
    /// `DrainReason`; default "by command".
    pub reason: Option<String>,
    /// START while draining; default: nothing starts.
    pub start: Option<String>,
    /// Must be true in every slot, else the drain is refused.
    pub check: Option<String>,
    /// What happens once every slot is drained.
    pub on_completion: OnCompletion,
}

impl DrainRequest {
    /// A drain of `how` with HTCondor's defaults for the rest.
    pub fn new(how: DrainHow) -> DrainRequest {
        DrainRequest {
            how,
            reason: None,
            start: None,
            check: None,
            on_completion: OnCompletion::Nothing,
        }
    }
}

/// Why a drain ended without a shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainEnd {
    /// `condor_drain -cancel`.
    Cancelled,
    /// Complete, with `-resume-on-completion`.
    Resumed,
    /// Complete, with `-reconfig-on-completion`: the configuration was
    /// re-read, then the drain ended.
    Reconfigured,
}

/// Why a shutdown began.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShutdownCause {
    /// `condor_off`, or a signal.
    Command,
    /// A drain with `-exit-on-completion` or `-restart-on-completion` is
    /// complete.
    DrainCompleted,
}

/// The node's recorded state, as a checkpoint keeps it (the slots are
/// kept by their own snapshots).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSnapshot {
    /// The drain or shutdown in force.
    pub drain: Option<DrainRecord>,
    /// The last drain request's id.
    pub last_request: u64,
    /// When the last drain started and stopped (0: never).
    pub drain_times: (i64, i64),
}

/// A drain or shutdown as the log keeps it: what it was asked to be, and
/// how far it has come.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrainRecord {
    /// How jobs go.
    pub how: DrainHow,
    /// A shutdown rather than a drain.
    pub shutdown: bool,
    /// Why.
    pub reason: String,
    /// START while draining (`None`: nothing starts).
    pub start: Option<String>,
    /// The request's id (0 for a shutdown).
    pub request_id: u64,
    /// When it began.
    pub started: i64,
    /// What happens once every slot is Drained/Idle.
    pub on_completion: OnCompletion,
    /// Every slot is Drained.
    pub all_drained: bool,
    /// Every slot is Drained/Idle: the on-completion action was taken.
    pub completed: bool,
    /// A shutdown after which the daemon starts again.
    pub restart: bool,
}

/// Everything the node decides, in the past tense. Each carries its time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum NodeEvent {
    /// A drain began (`DrainingRequestId` is `request_id`).
    DrainStarted {
        /// When.
        at: i64,
        /// Its id.
        request_id: u64,
        /// How jobs go.
        how: DrainHow,
        /// `DrainReason`.
        reason: String,
        /// START while draining (`None`: nothing starts).
        start: Option<String>,
        /// What happens once every slot is Drained/Idle.
        on_completion: OnCompletion,
    },
    /// Every slot became Drained (`true`), or one is no longer (`false`).
    DrainProgress {
        /// When.
        at: i64,
        /// The drain's id.
        request_id: u64,
        /// Whether every slot is Drained now.
        all_drained: bool,
    },
    /// Every slot is Drained/Idle; `then` is the action taken now.
    DrainCompleted {
        /// When.
        at: i64,
        /// The drain's id.
        request_id: u64,
        /// Its on-completion action.
        then: OnCompletion,
    },
    /// The drain ended: slots take work again.
    DrainEnded {
        /// When.
        at: i64,
        /// The drain's id.
        request_id: u64,
        /// Why.
        why: DrainEnd,
    },
    /// A shutdown began (it replaces any drain in force).
    ShutdownBegan {
        /// When.
        at: i64,
        /// How jobs go.
        how: DrainHow,
        /// The daemon starts again once stopped.
        restart: bool,
        /// Why.
        cause: ShutdownCause,
    },
    /// No slot holds anything any more: the daemon exits (and starts
    /// again when `restart`).
    ShutdownCompleted {
        /// When.
        at: i64,
        /// The daemon starts again.
        restart: bool,
    },
    /// Slots were asked to vacate (`condor_vacate`).
    VacateAsked {
        /// When.
        at: i64,
        /// Which.
        slots: Vec<String>,
        /// `-fast`: hard-kill at once.
        fast: bool,
    },
    /// A partitionable slot carved a dynamic slot.
    SlotCreated {
        /// When.
        at: i64,
        /// Its id (`slot1_2`).
        slot: String,
        /// The partitionable slot's id.
        parent: String,
    },
    /// A dynamic slot gave its resources back and is gone.
    SlotDeleted {
        /// When.
        at: i64,
        /// Its id.
        slot: String,
    },
    /// The node's state at a checkpoint.
    Snapshot {
        /// When.
        at: i64,
        /// The state.
        node: NodeSnapshot,
    },
}

impl NodeEvent {
    /// When it happened.
    pub fn at(&self) -> i64 {
        match self {
            NodeEvent::DrainStarted { at, .. }
            | NodeEvent::DrainProgress { at, .. }
            | NodeEvent::DrainCompleted { at, .. }
            | NodeEvent::DrainEnded { at, .. }
            | NodeEvent::ShutdownBegan { at, .. }
            | NodeEvent::ShutdownCompleted { at, .. }
            | NodeEvent::VacateAsked { at, .. }
            | NodeEvent::SlotCreated { at, .. }
            | NodeEvent::SlotDeleted { at, .. }
            | NodeEvent::Snapshot { at, .. } => *at,
        }
    }
}

/// The node: its slots as it sees them, and the drain or shutdown in
/// force.
#[derive(Clone, Debug, Default)]
pub struct NodeState {
    /// Every live slot, by id.
    pub slots: BTreeMap<String, SlotView>,
    /// The drain or shutdown in force, as slots read it.
    pub drain: Option<Drain>,
    /// What the log keeps of it.
    pub record: NodeSnapshot,
    /// Set once the shutdown is complete: `Some(restart)`.
    pub exit: Option<bool>,
}

impl NodeState {
    /// A node with these slots.
    pub fn new(slots: impl IntoIterator<Item = (String, SlotView)>) -> NodeState {
        NodeState {
            slots: slots.into_iter().collect(),
            ..NodeState::default()
        }
    }

    /// Mirrors a slot's state after it changed. A slot the node does not
    /// know (deleted meanwhile) is left out.
    pub fn observe(&mut self, id: &str, view: SlotView) {
        if let Some(v) = self.slots.get_mut(id) {
            *v = view;
        }
    }

    /// How many slots are alive (`TotalSlots`).
    pub fn total_slots(&self) -> usize {
        self.slots.len()
    }

    /// When the last drain started and stopped (0: never).
    pub fn drain_times(&self) -> (i64, i64) {
        self.record.drain_times
    }

    /// Whether a shutdown is in force.
    pub fn shutting_down(&self) -> bool {
        self.drain.as_ref().is_some_and(|d| d.shutdown)
    }
}

/// What the node is asked to react to.
#[derive(Clone, Debug)]
pub enum NodeInput {
    /// `condor_drain`; `ads` are the slots' public ads, for `-check`.
    Drain {
        /// The request.
        request: DrainRequest,
        /// Every live slot's public ad.
        ads: Vec<ClassAd>,
    },
    /// `condor_drain -cancel` (only the drain with this request id, if
    /// given).
    CancelDrain(Option<String>),
    /// `condor_off` (or SIGTERM, SIGQUIT).
    Off(DrainHow),
    /// `condor_vacate` of one slot (`slot1` or `slot1@host`) or all.
    Vacate {
        /// The slot, or every slot.
        slot: Option<String>,
        /// Hard-kill at once.
        fast: bool,
    },
    /// Some slot changed (the driver has observed it): a drain or a
    /// shutdown may have come further.
    SlotsChanged,
    /// A partitionable slot carved a dynamic slot for `claim`.
    SlotBorn {
        /// The partitionable slot.
        parent: String,
        /// The new slot's sub-id.
        sub: u32,
        /// Its resources.
        resources: Resources,
        /// The claim it was carved for.
        claim: Claim,
    },
    /// A dynamic slot was deleted, giving back `resources`.
    SlotGone {
        /// Its id.
        id: String,
        /// What it gives back.
        resources: Resources,
    },
    /// Slot `by`'s FETCH_WORK, run with hook keyword `keyword`, has just
    /// printed a job.
    WorkFound {
        /// The slot.
        by: String,
        /// Its hook keyword.
        keyword: String,
    },
}

/// What the driver must do, after the decision's events are durable.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeEffect {
    /// Answer the command: done (`Ok`, with what was done) or refused.
    Reply(Result<String, Refusal>),
    /// Give a slot an input.
    Tell {
        /// The slot.
        slot: String,
        /// The input.
        input: Input,
    },
    /// Tell a slot waiting for work that `by` has found some (the slot
    /// fetches early if its keyword is `keyword`).
    WorkFound {
        /// The slot told.
        slot: String,
        /// The slot that found work.
        by: String,
        /// Its hook keyword.
        keyword: String,
    },
    /// Start the dynamic slot `id`, which begins by taking `claim`.
    StartSlot {
        /// Its id.
        id: String,
        /// The partitionable slot it was carved from.
        parent: String,
        /// Its resources.
        resources: Resources,
        /// The claim it was carved for.
        claim: Claim,
    },
    /// Re-read the configuration.
    Reconfig,
    /// Stop the daemon; start it again when `restart`.
    Exit {
        /// Start again.
        restart: bool,
    },
}

/// Why the node refused a command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A shutdown is in force: no drain starts, and it cannot be cancelled.
    #[error("the daemon is shutting down")]
    ShuttingDown,
    /// `condor_drain -cancel` during a shutdown.
    #[error("the daemon is shutting down; that cannot be cancelled")]
    ShutdownNotCancellable,
    /// A drain is in force already.
    #[error("a drain is already in progress (request id {0}); cancel it first")]
    AlreadyDraining(u64),
    /// `-check` is not true in some slot, or does not parse.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// `-start` does not parse.
    #[error(transparent)]
    Start(#[from] PolicyError),
    /// `condor_drain -cancel` with no drain in force.
    #[error("the machine is not draining")]
    NotDraining,
    /// `condor_drain -cancel -request-id` of another drain.
    #[error("no drain with request id {asked}; the drain in progress is {current}")]
    OtherRequest {
        /// The id asked for.
        asked: String,
        /// The drain in force.
        current: u64,
    },
    /// `condor_vacate` of a slot that does not exist.
    #[error("no slot named {0}")]
    NoSuchSlot(String),
}

/// The outcome of [`decide`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeDecision {
    /// Events to append, in order.
    pub events: Vec<NodeEvent>,
    /// Effects to carry out after the events are durable, in order.
    pub effects: Vec<NodeEffect>,
}

/// A working copy: events are applied as they are produced, so later
/// steps of the same decision see them. Copied only on the first event.
struct Work<'a> {
    s: std::borrow::Cow<'a, NodeState>,
    now: i64,
    out: NodeDecision,
}

impl Work<'_> {
    fn emit(&mut self, e: NodeEvent) {
        apply(self.s.to_mut(), &e);
        self.out.events.push(e);
    }

    fn effect(&mut self, e: NodeEffect) {
        self.out.effects.push(e);
    }

    fn reply(&mut self, r: Result<String, Refusal>) {
        self.effect(NodeEffect::Reply(r));
    }

    /// Every live slot re-evaluates its policy.
    fn evaluate_all(&mut self) {
        let ids: Vec<String> = self.s.slots.keys().cloned().collect();
        for slot in ids {
            self.effect(NodeEffect::Tell {
                slot,
                input: Input::Evaluate,
            });
        }
    }

    /// Where a drain or shutdown has come: every slot Drained, every slot
    /// Drained/Idle (the on-completion action), no slot holding anything
    /// during a shutdown (the daemon exits).
    fn settle(&mut self) {
        if let Some(d) = self.s.record.drain.as_ref().filter(|d| !d.shutdown) {
            let (id, was_all, completed, then) =
                (d.request_id, d.all_drained, d.completed, d.on_completion);
            let all = self.s.slots.values().all(|v| v.state == State::Drained);
            if all != was_all {
                self.emit(NodeEvent::DrainProgress {
                    at: self.now,
                    request_id: id,
                    all_drained: all,
                });
                if all {
                    // A slot retiring in Drained finishes now.
                    let retiring: Vec<String> = self
                        .s
                        .slots
                        .iter()
                        .filter(|(_, v)| v.activity == Activity::Retiring)
                        .map(|(id, _)| id.clone())
                        .collect();
                    for slot in retiring {
                        self.effect(NodeEffect::Tell {
                            slot,
                            input: Input::Evaluate,
                        });
                    }
                }
            }
            let idle = self
                .s
                .slots
                .values()
                .all(|v| v.state == State::Drained && v.activity == Activity::Idle);
            if idle && !completed {
                self.complete(id, then);
            }
        }
        if self.s.exit.is_none()
            && let Some(d) = self.s.record.drain.as_ref().filter(|d| d.shutdown)
            && self.s.slots.values().all(SlotView::idle)
        {
            let restart = d.restart;
            self.emit(NodeEvent::ShutdownCompleted {
                at: self.now,
                restart,
            });
            self.effect(NodeEffect::Exit { restart });
        }
    }

    /// Every slot is Drained/Idle: the drain's on-completion action.
    fn complete(&mut self, request_id: u64, then: OnCompletion) {
        let at = self.now;
        self.emit(NodeEvent::DrainCompleted {
            at,
            request_id,
            then,
        });
        match then {
            OnCompletion::Nothing => {}
            OnCompletion::Resume => {
                self.emit(NodeEvent::DrainEnded {
                    at,
                    request_id,
                    why: DrainEnd::Resumed,
                });
                self.evaluate_all();
            }
            OnCompletion::Reconfig => {
                self.effect(NodeEffect::Reconfig);
                self.emit(NodeEvent::DrainEnded {
                    at,
                    request_id,
                    why: DrainEnd::Reconfigured,
                });
                self.evaluate_all();
            }
            OnCompletion::Exit | OnCompletion::Restart => {
                self.emit(NodeEvent::ShutdownBegan {
                    at,
                    how: DrainHow::Fast,
                    restart: then == OnCompletion::Restart,
                    cause: ShutdownCause::DrainCompleted,
                });
            }
        }
    }

    fn drain(&mut self, req: &DrainRequest, ads: &[ClassAd]) {
        if let Some(d) = &self.s.drain {
            let why = if d.shutdown {
                Refusal::ShuttingDown
            } else {
                Refusal::AlreadyDraining(d.request_id)
            };
            return self.reply(Err(why));
        }
        if let Some(check) = &req.check
            && let Err(e) = drain_check(check, ads, self.now)
        {
            return self.reply(Err(e.into()));
        }
        if let Err(e) = Drain::new(req.how, req.start.as_deref()) {
            return self.reply(Err(e.into()));
        }
        let request_id = self.s.record.last_request + 1;
        let reason = req
            .reason
            .clone()
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "by command".into());
        self.emit(NodeEvent::DrainStarted {
            at: self.now,
            request_id,
            how: req.how,
            reason,
            start: req.start.clone(),
            on_completion: req.on_completion,
        });
        self.evaluate_all();
        self.reply(Ok(format!(
            "draining ({:?}), request id {request_id}",
            req.how
        )));
        self.settle();
    }

    fn cancel(&mut self, want: Option<&str>) {
        let current = self.s.drain.as_ref().map(|d| (d.shutdown, d.request_id));
        match (current, want) {
            (None, _) => self.reply(Err(Refusal::NotDraining)),
            (Some((true, _)), _) => self.reply(Err(Refusal::ShutdownNotCancellable)),
            (Some((false, n)), Some(want)) if want.trim() != n.to_string() => {
                self.reply(Err(Refusal::OtherRequest {
                    asked: want.to_string(),
                    current: n,
                }));
            }
            (Some((false, request_id)), _) => {
                self.emit(NodeEvent::DrainEnded {
                    at: self.now,
                    request_id,
                    why: DrainEnd::Cancelled,
                });
                self.evaluate_all();
                self.reply(Ok("drain cancelled".into()));
                self.settle();
            }
        }
    }

    fn off(&mut self, how: DrainHow) {
        self.emit(NodeEvent::ShutdownBegan {
            at: self.now,
            how,
            restart: false,
            cause: ShutdownCause::Command,
        });
        self.evaluate_all();
        self.reply(Ok(format!("shutting down ({how:?})")));
        self.settle();
    }

    fn vacate(&mut self, which: Option<&str>, fast: bool) {
        let hit: Vec<String> = self
            .s
            .slots
            .keys()
            .filter(|id| which.is_none_or(|w| w == *id || w.split('@').next() == Some(id)))
            .cloned()
            .collect();
        if hit.is_empty()
            && let Some(w) = which
        {
            return self.reply(Err(Refusal::NoSuchSlot(w.to_string())));
        }
        let input = if fast {
            Input::VacateFast
        } else {
            Input::Vacate
        };
        self.emit(NodeEvent::VacateAsked {
            at: self.now,
            slots: hit.clone(),
            fast,
        });
        let n = hit.len();
        for slot in hit {
            self.effect(NodeEffect::Tell {
                slot,
                input: input.clone(),
            });
        }
        self.reply(Ok(format!("vacating {n} slot(s)")));
    }
}

/// What the node does about `input` at `now`. Deterministic: the same
/// state, input and time give the same decision.
pub fn decide(state: &NodeState, input: &NodeInput, now: i64) -> NodeDecision {
    let mut w = Work {
        s: std::borrow::Cow::Borrowed(state),
        now,
        out: NodeDecision::default(),
    };
    match input {
        NodeInput::Drain { request, ads } => w.drain(request, ads),
        NodeInput::CancelDrain(id) => w.cancel(id.as_deref()),
        NodeInput::Off(how) => w.off(*how),
        NodeInput::Vacate { slot, fast } => w.vacate(slot.as_deref(), *fast),
        NodeInput::SlotsChanged => w.settle(),
        NodeInput::SlotBorn {
            parent,
            sub,
            resources,
            claim,
        } => {
            let id = format!("{parent}_{sub}");
            w.emit(NodeEvent::SlotCreated {
                at: now,
                slot: id.clone(),
                parent: parent.clone(),
            });
            w.effect(NodeEffect::StartSlot {
                id,
                parent: parent.clone(),
                resources: resources.clone(),
                claim: claim.clone(),
            });
        }
        NodeInput::SlotGone { id, resources } => {
            if w.s.slots.contains_key(id) {
                w.emit(NodeEvent::SlotDeleted {
                    at: now,
                    slot: id.clone(),
                });
                if let Some((parent, sub)) = id.rsplit_once('_')
                    && let Ok(sub) = sub.parse::<u32>()
                    && w.s.slots.contains_key(parent)
                {
                    w.effect(NodeEffect::Tell {
                        slot: parent.to_string(),
                        input: Input::ChildDeleted {
                            sub,
                            resources: resources.clone(),
                        },
                    });
                }
                w.settle();
            }
        }
        NodeInput::WorkFound { by, keyword } => {
            let waiting: Vec<String> =
                w.s.slots
                    .iter()
                    .filter(|(id, v)| {
                        *id != by
                            && matches!(v.state, State::Owner | State::Unclaimed | State::Backfill)
                    })
                    .map(|(id, _)| id.clone())
                    .collect();
            for slot in waiting {
                w.effect(NodeEffect::WorkFound {
                    slot,
                    by: by.clone(),
                    keyword: keyword.clone(),
                });
            }
        }
    }
    w.out
}

/// Applies one node event. Decides nothing.
pub fn apply(state: &mut NodeState, event: &NodeEvent) {
    state.record.apply(event);
    match event {
        NodeEvent::ShutdownCompleted { restart, .. } => state.exit = Some(*restart),
        NodeEvent::SlotCreated { slot, .. } => {
            // Busy until it has taken its claim and said so.
            state.slots.insert(
                slot.clone(),
                SlotView {
                    state: State::Owner,
                    activity: Activity::Idle,
                    busy: true,
                },
            );
        }
        NodeEvent::SlotDeleted { slot, .. } => {
            state.slots.remove(slot);
        }
        _ => {}
    }
    state.drain = state.record.drain.as_ref().map(DrainRecord::drain);
}

impl NodeSnapshot {
    /// Applies what `event` changes of the recorded state (replay keeps
    /// only this; the slots are replayed from their own events).
    pub fn apply(&mut self, event: &NodeEvent) {
        match event {
            NodeEvent::DrainStarted {
                at,
                request_id,
                how,
                reason,
                start,
                on_completion,
            } => {
                self.last_request = self.last_request.max(*request_id);
                self.drain_times.0 = *at;
                self.drain = Some(DrainRecord {
                    how: *how,
                    shutdown: false,
                    reason: reason.clone(),
                    start: start.clone(),
                    request_id: *request_id,
                    started: *at,
                    on_completion: *on_completion,
                    all_drained: false,
                    completed: false,
                    restart: false,
                });
            }
            NodeEvent::DrainProgress { all_drained, .. } => {
                if let Some(d) = &mut self.drain {
                    d.all_drained = *all_drained;
                }
            }
            NodeEvent::DrainCompleted { .. } => {
                if let Some(d) = &mut self.drain {
                    d.completed = true;
                }
            }
            NodeEvent::DrainEnded { at, .. } => {
                self.drain = None;
                self.drain_times.1 = *at;
            }
            NodeEvent::ShutdownBegan {
                at, how, restart, ..
            } => {
                self.drain = Some(DrainRecord {
                    how: *how,
                    shutdown: true,
                    reason: "shutdown".into(),
                    start: None,
                    request_id: 0,
                    started: *at,
                    on_completion: OnCompletion::Nothing,
                    all_drained: false,
                    completed: false,
                    restart: *restart,
                });
            }
            NodeEvent::Snapshot { node, .. } => *self = node.clone(),
            NodeEvent::ShutdownCompleted { .. }
            | NodeEvent::VacateAsked { .. }
            | NodeEvent::SlotCreated { .. }
            | NodeEvent::SlotDeleted { .. } => {}
        }
    }
}

impl DrainRecord {
    /// The drain as slots read it.
    pub fn drain(&self) -> Drain {
        let mut d = if self.shutdown {
            Drain::shutdown(self.how)
        } else {
            // The START expression was checked when the drain began; one
            // that does not parse now (a damaged log) starts nothing.
            Drain::new(self.how, self.start.as_deref()).unwrap_or_else(|_| Drain::closed(self.how))
        };
        d.all_drained = self.all_drained;
        d.reason.clone_from(&self.reason);
        d.request_id = self.request_id;
        d.started = self.started;
        d.on_completion = self.on_completion;
        d
    }
}

/// When a slot wakes up next, after a step at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wakeup {
    /// The next policy evaluation: `None` keeps the one already set.
    pub evaluate_at: Option<i64>,
    /// The FETCH_WORK timer (`None`: none; a fetch comes with the
    /// evaluation or later).
    pub fetch_at: Option<i64>,
}

/// A slot's timers after a step at `ctx.now`, given the evaluation and
/// the fetch timer already set and not yet fired (`eval_set`,
/// `fetch_set`; a timer that fires is no longer set during the step it
/// starts).
///
/// The evaluation is the one its state asks for (`evaluation_interval`),
/// unless the one set comes first and is still to come. The fetch timer,
/// as HTCondor's `tryFetchWork` arms it: at the end of the delay since the
/// last fetch (`next_fetch_at`); once that is past, the one set if it is
/// still to fire, else a whole delay from now (the step that fired it
/// found the fetch refused, START false say, and HTCondor re-arms it for
/// a full delay). None when the evaluation comes first: it tries a fetch
/// itself.
pub fn wakeup(slot: &Slot, ctx: &Ctx<'_>, eval_set: Option<i64>, fetch_set: Option<i64>) -> Wakeup {
    let now = ctx.now;
    let want = now + evaluation_interval(slot, ctx.policy, now);
    let keep = eval_set.is_some_and(|t| t > now && t <= want);
    let fetch_at = match next_fetch_at(slot, ctx) {
        None => None,
        Some(due) if due > now => Some(due),
        Some(_) => match fetch_set {
            Some(set) if set >= now => Some(set),
            _ => Some(now + fetch_delay(slot, ctx).max(1)),
        },
    }
    .filter(|f| *f < want);
    Wakeup {
        evaluate_at: (!keep).then_some(want),
        fetch_at,
    }
}

/// Whether the machine should hibernate, and to which state, given what
/// each slot's HIBERNATE asks for (`engine::hibernate_state`): only when
/// every slot asks for a state other than NONE; the deepest one wins.
pub fn hibernation(states: &[Option<(u32, String)>]) -> Option<String> {
    let mut best: Option<&(u32, String)> = None;
    for s in states {
        let s = s.as_ref()?;
        if s.0 == 0 {
            return None;
        }
        if best.is_none_or(|b| s.0 > b.0) {
            best = Some(s);
        }
    }
    best.map(|b| b.1.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(state: State, activity: Activity, busy: bool) -> SlotView {
        SlotView {
            state,
            activity,
            busy,
        }
    }

    fn node(n: usize) -> NodeState {
        NodeState::new((1..=n).map(|i| {
            (
                format!("slot{i}"),
                view(State::Claimed, Activity::Busy, true),
            )
        }))
    }

    /// Decides, applies, and returns the decision.
    fn step(s: &mut NodeState, input: NodeInput, now: i64) -> NodeDecision {
        let d = decide(s, &input, now);
        for e in &d.events {
            apply(s, e);
        }
        d
    }

    fn drain(how: DrainHow, then: OnCompletion) -> NodeInput {
        NodeInput::Drain {
            request: DrainRequest {
                on_completion: then,
                ..DrainRequest::new(how)
            },
            ads: Vec::new(),
        }
    }

    #[test]
    fn a_drain_completes_and_resumes_when_every_slot_is_drained_and_idle() {
        let mut s = node(2);
        let d = step(&mut s, drain(DrainHow::Graceful, OnCompletion::Resume), 10);
        assert_eq!(
            d.events,
            vec![NodeEvent::DrainStarted {
                at: 10,
                request_id: 1,
                how: DrainHow::Graceful,
                reason: "by command".into(),
                start: None,
                on_completion: OnCompletion::Resume,
            }]
        );
        assert_eq!(d.effects.len(), 3, "two evaluations and the reply");
        assert_eq!(
            d.effects[2],
            NodeEffect::Reply(Ok("draining (Graceful), request id 1".into()))
        );
        assert_eq!(s.drain_times(), (10, 0));
        // One slot drained, retiring: not yet.
        s.observe("slot1", view(State::Drained, Activity::Retiring, true));
        assert!(step(&mut s, NodeInput::SlotsChanged, 11).events.is_empty());
        // Both: every slot is Drained; the retiring one is told.
        s.observe("slot2", view(State::Drained, Activity::Idle, false));
        let d = step(&mut s, NodeInput::SlotsChanged, 12);
        assert!(matches!(
            d.events[..],
            [NodeEvent::DrainProgress {
                all_drained: true,
                ..
            }]
        ));
        assert_eq!(
            d.effects,
            vec![NodeEffect::Tell {
                slot: "slot1".into(),
                input: Input::Evaluate
            }]
        );
        s.observe("slot1", view(State::Drained, Activity::Idle, false));
        let d = step(&mut s, NodeInput::SlotsChanged, 20);
        assert!(matches!(
            d.events[..],
            [
                NodeEvent::DrainCompleted {
                    then: OnCompletion::Resume,
                    ..
                },
                NodeEvent::DrainEnded {
                    why: DrainEnd::Resumed,
                    ..
                }
            ]
        ));
        assert!(s.drain.is_none());
        assert_eq!(s.drain_times(), (10, 20));
    }

    #[test]
    fn a_second_drain_and_a_cancel_of_another_request_are_refused() {
        let mut s = node(1);
        step(&mut s, drain(DrainHow::Quick, OnCompletion::Nothing), 1);
        let d = step(&mut s, drain(DrainHow::Fast, OnCompletion::Nothing), 2);
        assert!(d.events.is_empty());
        assert_eq!(
            d.effects,
            vec![NodeEffect::Reply(Err(Refusal::AlreadyDraining(1)))]
        );
        let d = step(&mut s, NodeInput::CancelDrain(Some("7".into())), 3);
        assert!(d.events.is_empty());
        let d = step(&mut s, NodeInput::CancelDrain(Some("1".into())), 4);
        assert!(matches!(
            d.events[..],
            [NodeEvent::DrainEnded {
                why: DrainEnd::Cancelled,
                ..
            }]
        ));
        // The next request gets the next id.
        let d = step(&mut s, drain(DrainHow::Quick, OnCompletion::Nothing), 5);
        assert!(matches!(
            d.events[..],
            [NodeEvent::DrainStarted { request_id: 2, .. }]
        ));
    }

    #[test]
    fn a_check_that_is_not_true_everywhere_refuses_the_drain() {
        let mut s = node(1);
        let mut ad = ClassAd::new();
        ad.insert_value("Name", "slot1@host");
        ad.insert_value("Cpus", 1i64);
        let input = NodeInput::Drain {
            request: DrainRequest {
                check: Some("Cpus > 4".into()),
                ..DrainRequest::new(DrainHow::Graceful)
            },
            ads: vec![ad],
        };
        let d = step(&mut s, input, 1);
        assert!(d.events.is_empty());
        assert!(
            matches!(&d.effects[..], [NodeEffect::Reply(Err(m))] if m.to_string().contains("slot1@host")),
            "{:?}",
            d.effects
        );
    }

    #[test]
    fn exit_on_completion_shuts_the_daemon_down_and_restart_says_so() {
        for (then, restart) in [(OnCompletion::Exit, false), (OnCompletion::Restart, true)] {
            let mut s = node(1);
            step(&mut s, drain(DrainHow::Fast, then), 1);
            s.observe("slot1", view(State::Drained, Activity::Idle, false));
            let d = step(&mut s, NodeInput::SlotsChanged, 2);
            assert!(matches!(
                d.events[..],
                [
                    NodeEvent::DrainProgress { .. },
                    NodeEvent::DrainCompleted { .. },
                    NodeEvent::ShutdownBegan {
                        cause: ShutdownCause::DrainCompleted,
                        ..
                    },
                    NodeEvent::ShutdownCompleted { .. },
                ]
            ));
            assert_eq!(d.effects, vec![NodeEffect::Exit { restart }]);
            assert_eq!(s.exit, Some(restart));
        }
    }

    #[test]
    fn a_shutdown_completes_only_when_no_slot_holds_anything() {
        let mut s = node(2);
        let d = step(&mut s, NodeInput::Off(DrainHow::Graceful), 1);
        assert!(!d.effects.contains(&NodeEffect::Exit { restart: false }));
        s.observe("slot1", view(State::Owner, Activity::Idle, false));
        // A slot in Preempting or Backfill still holds something.
        s.observe("slot2", view(State::Preempting, Activity::Vacating, false));
        assert!(step(&mut s, NodeInput::SlotsChanged, 2).effects.is_empty());
        s.observe("slot2", view(State::Backfill, Activity::Idle, false));
        assert!(step(&mut s, NodeInput::SlotsChanged, 3).effects.is_empty());
        s.observe("slot2", view(State::Owner, Activity::Idle, false));
        let d = step(&mut s, NodeInput::SlotsChanged, 4);
        assert_eq!(d.effects, vec![NodeEffect::Exit { restart: false }]);
        // Once.
        assert!(step(&mut s, NodeInput::SlotsChanged, 5).effects.is_empty());
        // A shutdown cannot be cancelled, and no drain starts during one.
        let d = step(&mut s, NodeInput::CancelDrain(None), 6);
        assert!(matches!(&d.effects[..], [NodeEffect::Reply(Err(_))]));
        let d = step(&mut s, drain(DrainHow::Quick, OnCompletion::Nothing), 6);
        assert_eq!(
            d.effects,
            vec![NodeEffect::Reply(Err(Refusal::ShuttingDown))]
        );
    }

    #[test]
    fn dynamic_slots_are_born_and_give_their_resources_back_to_the_parent() {
        let mut s = node(1);
        let res = Resources {
            cpus: 1.0,
            memory_mb: 512,
            ..Resources::default()
        };
        let claim = Claim::new(1, "[]".into(), 0.0, true, 5);
        let d = step(
            &mut s,
            NodeInput::SlotBorn {
                parent: "slot1".into(),
                sub: 3,
                resources: res.clone(),
                claim: claim.clone(),
            },
            5,
        );
        assert!(matches!(&d.effects[..], [NodeEffect::StartSlot { id, .. }] if id == "slot1_3"));
        assert_eq!(s.total_slots(), 2);
        let d = step(
            &mut s,
            NodeInput::SlotGone {
                id: "slot1_3".into(),
                resources: res.clone(),
            },
            9,
        );
        assert_eq!(
            d.effects,
            vec![NodeEffect::Tell {
                slot: "slot1".into(),
                input: Input::ChildDeleted {
                    sub: 3,
                    resources: res
                }
            }]
        );
        assert_eq!(s.total_slots(), 1);
    }

    #[test]
    fn vacate_names_a_slot_or_takes_every_one() {
        let mut s = node(2);
        let d = step(
            &mut s,
            NodeInput::Vacate {
                slot: Some("slot2@host".into()),
                fast: true,
            },
            1,
        );
        assert_eq!(
            d.effects[0],
            NodeEffect::Tell {
                slot: "slot2".into(),
                input: Input::VacateFast
            }
        );
        let d = step(
            &mut s,
            NodeInput::Vacate {
                slot: Some("slot9".into()),
                fast: false,
            },
            1,
        );
        assert_eq!(
            d.effects,
            vec![NodeEffect::Reply(Err(Refusal::NoSuchSlot("slot9".into())))]
        );
        let d = step(
            &mut s,
            NodeInput::Vacate {
                slot: None,
                fast: false,
            },
            1,
        );
        assert_eq!(d.effects.len(), 3);
    }

    #[test]
    fn replaying_the_events_gives_the_same_state_and_a_snapshot_restores_it() {
        let mut live = node(1);
        let mut log = Vec::new();
        for (input, t) in [
            (drain(DrainHow::Graceful, OnCompletion::Nothing), 1),
            (NodeInput::CancelDrain(None), 2),
            (drain(DrainHow::Quick, OnCompletion::Exit), 3),
        ] {
            log.extend(step(&mut live, input, t).events);
        }
        let mut replayed = node(1);
        for e in &log {
            apply(&mut replayed, e);
        }
        assert_eq!(replayed.record, live.record);
        let mut restored = node(1);
        apply(
            &mut restored,
            &NodeEvent::Snapshot {
                at: 4,
                node: live.record.clone(),
            },
        );
        assert_eq!(restored.record, live.record);
        assert_eq!(
            restored.drain.as_ref().map(|d| (d.how, d.request_id)),
            Some((DrainHow::Quick, 2))
        );
    }
}
