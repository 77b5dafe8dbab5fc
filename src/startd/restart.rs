//! What a new run does with what the last run left: the starters it takes
//! again and the idle claims it keeps ([`Kept`]), the events that close
//! the rest ([`Replay::reconcile`]), the claims whose loss the fetcher must
//! hear of ([`LostClaim`]) and the hand-outs it must answer
//! ([`Unanswered`]). Pure: the daemon's start-up acts on what these say.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::replay::{OpenStarter, Replay};
use crate::events::{DaemonEvent, Event};
use crate::policy::slot::{
    Activity, EndCause, Slot, SlotEvent, SlotKind, State, Transition, apply,
};

/// What a new run goes on with from the last: the starters it takes
/// again (by actor), and the fetched claims that were between jobs
/// (Claimed/Idle, no starter; by slot, the claim's number). Their slots
/// stay as they were, under the same claims.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kept {
    /// Starters taken again, by actor.
    pub starters: BTreeMap<String, OpenStarter>,
    /// Idle fetched claims kept, by slot.
    pub idle: BTreeMap<String, u64>,
}

impl Kept {
    /// Whether slot `id` goes on as it was.
    pub fn slot(&self, id: &str) -> bool {
        self.idle.contains_key(id) || self.starters.values().any(|st| st.slot == id)
    }

    /// Whether claim `claim` of slot `id` goes on.
    pub fn claim(&self, id: &str, claim: u64) -> bool {
        self.idle.get(id) == Some(&claim)
            || self
                .starters
                .values()
                .any(|st| st.slot == id && st.claim == claim)
    }
}

/// A job handed out that a new run answers (see [`Replay::unanswered`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswered {
    /// The slot whose hooks answer (the one that fetched it).
    pub teller: String,
    /// The job ad.
    pub job: String,
    /// `Some(ClaimId)`: accepted, its claim goes on; `None`: rejected.
    pub accept: Option<String>,
}

/// A claim a stopped run left open: the fetcher must hear it is gone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LostClaim {
    /// The slot that held it.
    pub slot: String,
    /// The slot whose hooks tell of it: the slot itself, or a dynamic
    /// slot's partitionable parent (the dynamic slot is gone).
    pub teller: String,
    /// Its number.
    pub claim: u64,
    /// The job ad (canonical new syntax).
    pub job: String,
    /// Whether FETCH_WORK gave it.
    pub fetched: bool,
    /// The `ClaimId` the stopped run gave its hooks.
    pub claim_id: String,
    /// Its starter had run JOB_EXIT: the fetcher knows the job's end, and
    /// is not told again.
    pub told: bool,
    /// The machine restarted while its starter ran (and before it told
    /// the job's end): the job ended with the machine, and JOB_EXIT
    /// `evict` tells of it.
    pub node_restarted: bool,
}

impl LostClaim {
    /// Whether the fetcher is owed word of it: the starter had not told it
    /// the job's end, and the claim was fetched (EVICT_CLAIM) or its job
    /// ended with the machine (JOB_EXIT `evict`).
    pub fn owed(&self) -> bool {
        !self.told && (self.fetched || self.node_restarted)
    }

    /// Its key in [`Replay::owed`].
    pub fn key(&self) -> String {
        format!("{}#{}", self.slot, self.claim)
    }
}

impl Replay {
    /// The open starters a new run takes again, by actor: those `alive`
    /// says are still running whose slot still holds their claim with a
    /// starter. The caller has checked each is the same process (pid and
    /// start time).
    pub fn reattachable(
        &self,
        alive: impl Fn(&OpenStarter) -> bool,
    ) -> BTreeMap<String, OpenStarter> {
        self.starters
            .iter()
            .filter(|(_, st)| {
                self.slots.get(&st.slot).is_some_and(|s| {
                    !s.deleted && s.starter && s.claim.as_ref().is_some_and(|c| c.id == st.claim)
                })
            })
            .filter(|(_, st)| st.started != 0 && alive(st))
            .map(|(a, st)| (a.clone(), st.clone()))
            .collect()
    }

    /// The fetched claims between jobs a new run keeps, by slot: Claimed
    /// and Idle, their job run and ended (a claim whose job has not
    /// started yet is not kept: no starter would run it), not ending, no
    /// claim preempting it, no hand-out waiting on them.
    pub fn idle_claims(&self) -> BTreeMap<String, u64> {
        self.slots
            .iter()
            .filter(|(_, s)| {
                !s.deleted
                    && !s.starter
                    && s.preempting.is_none()
                    && (s.state, s.activity) == (State::Claimed, Activity::Idle)
            })
            .filter_map(|(id, s)| {
                let c = s.claim.as_ref().filter(|c| {
                    c.fetched && c.activations > 0 && c.job_start.is_none() && c.ending.is_none()
                })?;
                let waiting = self.handouts.values().any(|h| {
                    h.claim
                        .as_ref()
                        .is_some_and(|(slot, n)| slot == id && *n == c.id)
                });
                (!waiting).then(|| (id.clone(), c.id))
            })
            .collect()
    }

    /// The events a new run appends to close what the last run left open:
    /// each open claim ends with [`EndCause::Restart`] (and a
    /// `Daemon.LossOwed` for each the fetcher must hear of), each slot that was
    /// not idle goes to Owner/Idle, dynamic slots are deleted, and each
    /// starter or hook still open is reported — except the slots of the
    /// starters taken again and the idle claims kept (`kept`),
    /// which go on as they were. `alive` says which starters' processes
    /// are still running (evicting their jobs on their own). Pure: the
    /// caller appends them and deals with the processes.
    pub fn reconcile(
        &self,
        now: i64,
        kept: &Kept,
        alive: impl Fn(&OpenStarter) -> bool,
        rebooted: bool,
    ) -> Vec<(String, Event)> {
        let mut out = Vec::new();
        for (id, slot) in &self.slots {
            if slot.deleted {
                continue;
            }
            if kept.slot(id) {
                // It goes on as it was, but for a fetch the last run did
                // not see end: it fetches again.
                if slot.fetching {
                    out.push((
                        id.clone(),
                        Event::Slot(SlotEvent::FetchCompleted { at: now }),
                    ));
                }
                continue;
            }
            let mut s = slot.clone();
            let mut push = |s: &mut Slot, e: SlotEvent| {
                apply(s, &e);
                out.push((id.clone(), Event::Slot(e)));
            };
            if s.starter {
                push(&mut s, SlotEvent::StarterExited { at: now });
            }
            while s.claim.is_some() {
                push(
                    &mut s,
                    SlotEvent::ClaimEnded {
                        at: now,
                        cause: EndCause::Restart,
                    },
                );
            }
            if s.fetching {
                push(&mut s, SlotEvent::FetchCompleted { at: now });
            }
            if s.backfill {
                push(&mut s, SlotEvent::BackfillExited { at: now });
            }
            if (s.state, s.activity) != (State::Owner, Activity::Idle) && s.state != State::Drained
            {
                push(
                    &mut s,
                    SlotEvent::ActivityChanged {
                        at: now,
                        state: State::Owner,
                        activity: Activity::Idle,
                        transition: Transition::Unnumbered,
                        why: "the daemon restarted".into(),
                    },
                );
            }
            if let SlotKind::Dynamic { parent } = &s.kind {
                let resources = s.resources.clone();
                let parent = parent.clone();
                push(&mut s, SlotEvent::SlotDeleted { at: now });
                if let Some(sub) = id.rsplit_once('_').and_then(|(_, n)| n.parse().ok()) {
                    out.push((
                        parent,
                        Event::Slot(SlotEvent::DynamicSlotReturned {
                            at: now,
                            sub,
                            resources,
                        }),
                    ));
                }
            }
        }
        out.extend(self.left_open(kept, alive, rebooted));
        out
    }

    /// The reconciliation's reports of the starters and hooks the last run
    /// left open (but the starters taken again), and the word each lost
    /// claim is owed.
    fn left_open(
        &self,
        kept: &Kept,
        alive: impl Fn(&OpenStarter) -> bool,
        rebooted: bool,
    ) -> Vec<(String, Event)> {
        let mut out = Vec::new();
        for (actor, st) in self
            .starters
            .iter()
            .filter(|(a, _)| !kept.starters.contains_key(*a))
        {
            let fate = if st.told {
                "it had told the fetcher the job's end"
            } else if rebooted {
                "the machine restarted since, and its job ended with it"
            } else if alive(st) {
                "it evicts its job on its own"
            } else {
                "it is gone, and no daemon heard how its job ended"
            };
            out.push((
                "daemon".into(),
                Event::Daemon(DaemonEvent::Reconciled {
                    slot: st.slot.clone(),
                    what: format!(
                        "starter {actor} (pid {}, job {}) was running when the daemon stopped; \
                         {fate}",
                        st.pid, st.job
                    ),
                }),
            ));
        }
        for (actor, h) in &self.hooks {
            out.push((
                "daemon".into(),
                Event::Daemon(DaemonEvent::Reconciled {
                    slot: h.slot.clone(),
                    what: format!(
                        "hook {actor} ({}, pid {}) was running when the daemon stopped; \
                         its output is lost",
                        h.hook, h.pid
                    ),
                }),
            ));
        }
        // The word each lost claim is owed, durable with the rest: a run
        // that dies before its hook starts leaves it to the next.
        for lost in self.lost_claims(kept, rebooted) {
            if lost.owed() {
                out.push((
                    "daemon".into(),
                    Event::Daemon(DaemonEvent::LossOwed { lost }),
                ));
            }
        }
        out
    }

    /// The claims the replayed run left open (current and waiting), with
    /// the `ClaimId` it gave them: those of the slots of starters taken
    /// again or kept idle (`kept`) left out, and those whose starter had told the
    /// fetcher the job's end marked as told; when the machine restarted
    /// since (`rebooted`), those whose starter had not told it marked
    /// `node_restarted`.
    pub fn lost_claims(&self, kept: &Kept, rebooted: bool) -> Vec<LostClaim> {
        let (started, host) = self.run.clone().unwrap_or((0, String::new()));
        let mut out = Vec::new();
        for (id, slot) in &self.slots {
            if slot.deleted || kept.slot(id) {
                continue;
            }
            let teller = match &slot.kind {
                SlotKind::Dynamic { parent } => parent.clone(),
                _ => id.clone(),
            };
            for c in slot.claim.iter().chain(slot.preempting.iter()) {
                let starter = self
                    .starters
                    .values()
                    .find(|st| &st.slot == id && st.claim == c.id);
                let told = starter.is_some_and(|st| st.told);
                out.push(LostClaim {
                    slot: id.clone(),
                    teller: teller.clone(),
                    claim: c.id,
                    job: c.job.clone(),
                    fetched: c.fetched,
                    claim_id: claim_id(&host, started, c.id, id),
                    told,
                    node_restarted: rebooted && starter.is_some() && !told,
                });
            }
        }
        out
    }

    /// The jobs FETCH_WORK handed out that the replayed run left
    /// unanswered, and how a new run answers each: REPLY_FETCH accept
    /// (under the claim's `ClaimId`) when its claim goes on with a starter
    /// taken again or kept idle (`kept`), nothing when its claim is lost (EVICT_CLAIM
    /// tells of it), else REPLY_FETCH reject.
    pub fn unanswered(&self, kept: &Kept) -> Vec<Unanswered> {
        let (started, host) = self.run.clone().unwrap_or((0, String::new()));
        let mut out = Vec::new();
        for (teller, h) in &self.handouts {
            let accept = match &h.claim {
                None => None,
                Some((id, claim)) => {
                    if !kept.claim(id, *claim) {
                        // Its claim is lost: EVICT_CLAIM tells of it.
                        continue;
                    }
                    Some(claim_id(&host, started, *claim, id))
                }
            };
            out.push(Unanswered {
                teller: teller.clone(),
                job: h.job.clone(),
                accept,
            });
        }
        out
    }
}

/// The `ClaimId` a run that started at `started` on `host` gives claim
/// `claim` of `slot` (what REPLY_FETCH and EVICT_CLAIM read).
pub fn claim_id(host: &str, started: i64, claim: u64, slot: &str) -> String {
    format!("<{host}>#{started}#{claim}#{slot}")
}
