//! The node core's decisions: what the node does about a command, a
//! slot's change, a dynamic slot born or gone, or news of fetched work.

use crate::classad::ClassAd;

use super::super::drain::{CheckError, Drain, DrainHow, OnCompletion, drain_check};
use super::super::engine::{Input, PolicyError};
use super::super::slot::{Activity, Claim, Resources, State};
use super::{DrainEnd, NodeEvent, NodeState, ShutdownCause, SlotView, apply};

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
