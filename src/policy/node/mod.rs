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
//!
//! This module holds the state and its events (`apply`); [`decide`] the
//! decisions; [`timers`] a slot's wake-ups and the hibernation agreement.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::drain::{Drain, DrainHow, OnCompletion};
use super::slot::{Activity, Slot, State};

mod decide;
mod timers;

pub use decide::{DrainRequest, NodeDecision, NodeEffect, NodeInput, Refusal, decide};
pub use timers::{Wakeup, hibernation, wakeup};

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
    /// Whether it repeats what slots' own events record durably (a dynamic
    /// slot born, in its parent's `DynamicSlotCreated`, or deleted, in its
    /// own `SlotDeleted`): a driver may then write it with the next durable
    /// append rather than wait for it before acting.
    pub fn mirrors_slots(&self) -> bool {
        matches!(
            self,
            NodeEvent::SlotCreated { .. } | NodeEvent::SlotDeleted { .. }
        )
    }

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

    /// How many slots are in each state and activity.
    pub fn counts(&self) -> BTreeMap<(String, String), usize> {
        let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
        for v in self.slots.values() {
            *counts
                .entry((v.state.to_string(), v.activity.to_string()))
                .or_default() += 1;
        }
        counts
    }

    /// One line for an administrator (systemd's `STATUS=`): how many
    /// slots are in each state and activity, and the drain or shutdown in
    /// force. `"2 slots: 1 Claimed/Busy, 1 Unclaimed/Idle; draining
    /// (graceful)"`.
    pub fn summary(&self) -> String {
        let counts = self.counts();
        let n = self.slots.len();
        let mut line = format!("{n} slot{}", if n == 1 { "" } else { "s" });
        let parts: Vec<String> = counts
            .iter()
            .map(|((state, activity), k)| format!("{k} {state}/{activity}"))
            .collect();
        if !parts.is_empty() {
            line.push_str(": ");
            line.push_str(&parts.join(", "));
        }
        if let Some(d) = &self.drain {
            let what = match (d.shutdown, d.all_drained) {
                (true, _) => "shutting down",
                (false, true) => "drained",
                (false, false) => "draining",
            };
            let how = format!("{:?}", d.how).to_lowercase();
            line.push_str(&format!("; {what} ({how})"));
        }
        line
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::ClassAd;
    use crate::policy::engine::Input;
    use crate::policy::slot::{Claim, Resources};

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
    fn the_summary_counts_slots_by_state_and_names_the_drain() {
        let mut s = node(2);
        s.slots.insert(
            "slot3".into(),
            view(State::Unclaimed, Activity::Idle, false),
        );
        assert_eq!(s.summary(), "3 slots: 2 Claimed/Busy, 1 Unclaimed/Idle");
        step(&mut s, drain(DrainHow::Graceful, OnCompletion::Resume), 10);
        assert_eq!(
            s.summary(),
            "3 slots: 2 Claimed/Busy, 1 Unclaimed/Idle; draining (graceful)"
        );
        step(&mut s, NodeInput::Off(DrainHow::Fast), 11);
        assert!(
            s.summary().ends_with("; shutting down (fast)"),
            "{}",
            s.summary()
        );
        assert_eq!(NodeState::new([]).summary(), "0 slots");
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
