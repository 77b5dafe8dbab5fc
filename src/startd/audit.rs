//! The audit trail of claims, folded from the log: for each claim, its
//! slot and job, when it was fetched, accepted, started, suspended and
//! ended, why, every hook run for it, and what looks wrong. Pure: it reads
//! envelopes in order and never touches the store.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{HookEvent, StarterEvent};
use crate::classad::{FixedEnv, Value, parse_ad};
use crate::events::{DaemonEvent, Envelope, Event};
use crate::policy::slot::{Claim, SlotEvent, SlotKind};

/// A hook run for a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    /// `REPLY_FETCH`, `PREPARE_JOB`, `JOB_EXIT`, …
    pub hook: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// When it finished (or was refused).
    pub at: i64,
    /// How it ended (`exit 0`, `signal 9`, `not run`, `running`).
    pub exit: String,
    /// What came of it.
    pub outcome: String,
}

/// One claim's life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimRecord {
    /// The slot it ran on (`slot1`, `slot1_2`).
    pub slot: String,
    /// Its number (unique per slot, or per partitionable slot's children).
    pub claim: u64,
    /// `ClusterId.ProcId` (`-` when the job ad has neither).
    pub job: String,
    /// The job's `Owner`.
    pub owner: String,
    /// The job's `HookKeyword`.
    pub keyword: Option<String>,
    /// Whether FETCH_WORK gave it.
    pub fetched: bool,
    /// When the FETCH_WORK that gave it finished.
    pub fetched_at: Option<i64>,
    /// When the slot accepted it (the claim was made).
    pub accepted_at: i64,
    /// When a job was started on it, each time.
    pub started_at: Vec<i64>,
    /// Times the job was suspended.
    pub suspensions: u32,
    /// Seconds it spent suspended.
    pub suspended_secs: i64,
    /// When the claim began to end, and why.
    pub ending: Option<(i64, String)>,
    /// When it ended.
    pub ended_at: Option<i64>,
    /// Why it ended: a cause of the slot's state machine (`NoMoreWork`,
    /// `Preempt`, `Restart`, …), or `NextJob (claim N)` when an idle fetch
    /// claim went on with the next fetched job under number N.
    pub end_cause: Option<String>,
    /// How the job ended: `exit`/`evict`/`hold` and the exit, or why it was
    /// not started.
    pub job_outcome: Option<String>,
    /// Every hook run for it, in order.
    pub hooks: Vec<HookRun>,
    /// What looks wrong.
    pub anomalies: Vec<String>,
    /// Sequence number of the claim's creation (for a claim that began
    /// before the log: of the snapshot it was first seen in).
    pub seq: u64,
    /// The claim began before the first event of the log read (the log was
    /// cut by retention, and its beginning is in an archive): what is known
    /// of its start comes from a snapshot.
    #[serde(default)]
    pub begins_before_log: bool,
    /// For a record that begins before the log: its ending was cancelled
    /// in the log (a drain called off), so an earlier piece's `ending` no
    /// longer holds when the pieces are joined.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ending_cancelled: bool,
}

impl ClaimRecord {
    /// The record of `claim`, accepted at `accepted_at`, first seen in
    /// `env`: nothing known yet of its life.
    fn of(env: &Envelope, claim: &Claim, accepted_at: i64) -> ClaimRecord {
        let (job, owner, keyword) = job_of(&claim.job);
        ClaimRecord {
            slot: env.actor.clone(),
            claim: claim.id,
            job,
            owner,
            keyword,
            fetched: claim.fetched,
            fetched_at: None,
            accepted_at,
            started_at: Vec::new(),
            suspensions: 0,
            suspended_secs: 0,
            ending: None,
            ended_at: None,
            end_cause: None,
            job_outcome: None,
            hooks: Vec::new(),
            anomalies: Vec::new(),
            seq: env.seq,
            begins_before_log: false,
            ending_cancelled: false,
        }
    }
}

#[derive(Default)]
struct SlotTrack {
    current: Option<usize>,
    waiting: Option<usize>,
    parent: Option<String>,
    last_fetch: Option<i64>,
    suspended_since: Option<i64>,
}

/// Folds envelopes into claim records.
#[derive(Default)]
pub struct Audit {
    claims: Vec<ClaimRecord>,
    slots: BTreeMap<String, SlotTrack>,
    /// Hook actor → (claim index, position in its hook list).
    hooks: BTreeMap<String, (usize, usize)>,
    /// Starter actor → claim index.
    starters: BTreeMap<String, usize>,
    /// Starter actor → slot and claim, from a checkpoint: the claim's
    /// record may come with the snapshots that follow it.
    checkpointed: BTreeMap<String, (String, u64)>,
}

fn job_of(text: &str) -> (String, String, Option<String>) {
    let Ok(ad) = parse_ad(text) else {
        return ("-".into(), String::new(), None);
    };
    let env = FixedEnv::new(0);
    let int = |k: &str| match ad.eval_attr(k, &env) {
        Value::Int(i) => i.to_string(),
        _ => "?".into(),
    };
    let string = |k: &str| match ad.eval_attr(k, &env) {
        Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    };
    let id = match (int("ClusterId").as_str(), int("ProcId").as_str()) {
        ("?", "?") => "-".to_string(),
        (c, p) => format!("{c}.{p}"),
    };
    (
        id,
        string("Owner").unwrap_or_default(),
        string("HookKeyword"),
    )
}

/// `ClusterId.ProcId Owner` of a job ad's text.
pub fn job_label(text: &str) -> String {
    let (id, owner, _) = job_of(text);
    if owner.is_empty() {
        id
    } else {
        format!("{id} {owner}")
    }
}

impl Audit {
    /// Takes one envelope.
    pub fn apply(&mut self, env: &Envelope) {
        match &env.event {
            Event::Slot(e) => self.slot(env, e),
            Event::Hook(e) => self.hook(env, e),
            Event::Starter(e) => self.starter(env, e),
            Event::Daemon(DaemonEvent::Checkpoint { starters, .. }) => {
                // Starters of claims that may have begun before the log.
                self.checkpointed = starters
                    .iter()
                    .map(|(actor, open)| (actor.clone(), (open.slot.clone(), open.claim)))
                    .collect();
            }
            Event::Daemon(_)
            | Event::Node(_)
            | Event::Cron(_)
            | Event::Job(_)
            | Event::Route(_)
            | Event::Eventd(_) => {}
        }
    }

    /// A claim a snapshot shows that this audit has not seen created: it
    /// began before the log.
    fn seen_in_snapshot(&mut self, env: &Envelope, claim: &Claim) -> usize {
        if let Some(i) = self.find(&env.actor, claim.id) {
            return i;
        }
        let mut c = ClaimRecord::of(env, claim, claim.created);
        c.started_at = claim.job_start.into_iter().collect();
        // A suspension open at the snapshot was counted before it; its
        // time is counted here, from when it began, once it ends.
        c.ending = claim.ending.map(|cause| (env.time, format!("{cause:?}")));
        c.begins_before_log = true;
        self.claims.push(c);
        self.claims.len() - 1
    }

    fn find(&self, slot: &str, claim: u64) -> Option<usize> {
        self.claims
            .iter()
            .rposition(|c| c.slot == slot && c.claim == claim)
    }

    fn slot(&mut self, env: &Envelope, e: &SlotEvent) {
        let t = self.slots.entry(env.actor.clone()).or_default();
        match e {
            SlotEvent::Snapshot { slot, .. } => {
                let slot = slot.slot();
                t.parent = match &slot.kind {
                    SlotKind::Dynamic { parent } => Some(parent.clone()),
                    _ => None,
                };
                // A log that begins here knows its last fetch only from
                // the snapshot.
                if t.last_fetch.is_none() {
                    t.last_fetch = slot.last_fetch_completed;
                }
                if let Some(c) = &slot.claim {
                    let i = self.seen_in_snapshot(env, c);
                    let t = self.slots.entry(env.actor.clone()).or_default();
                    t.current = Some(i);
                    if let Some(since) = c.suspended_since {
                        t.suspended_since.get_or_insert(since);
                    }
                }
                if let Some(c) = &slot.preempting {
                    let i = self.seen_in_snapshot(env, c);
                    self.slots.entry(env.actor.clone()).or_default().waiting = Some(i);
                }
            }
            SlotEvent::FetchCompleted { at } | SlotEvent::FetchesEmpty { at, .. } => {
                t.last_fetch = Some(*at);
            }
            SlotEvent::ClaimCreated { at, claim }
            | SlotEvent::PreemptingClaimQueued { at, claim } => {
                let (own, parent) = (t.last_fetch, t.parent.clone());
                let fetched_at = if claim.fetched {
                    own.or_else(|| self.slots.get(&parent?)?.last_fetch)
                } else {
                    None
                };
                let mut c = ClaimRecord::of(env, claim, *at);
                c.fetched_at = fetched_at;
                self.claims.push(c);
                let i = self.claims.len() - 1;
                let t = self.slots.entry(env.actor.clone()).or_default();
                if matches!(e, SlotEvent::ClaimCreated { .. }) {
                    // An idle fetch claim takes the next fetched job under
                    // a new number: the old number's story ends here.
                    if let Some(old) = t.current.replace(i) {
                        let c = &mut self.claims[old];
                        c.ended_at = Some(*at);
                        c.end_cause = Some(format!("NextJob (claim {})", claim.id));
                    }
                } else {
                    t.waiting = Some(i);
                }
            }
            SlotEvent::ClaimEnding { at, cause } => {
                // The first time it began to end is the one that counts.
                if let Some(i) = t.current
                    && self.claims[i].ending.is_none()
                {
                    self.claims[i].ending = Some((*at, format!("{cause:?}")));
                }
            }
            SlotEvent::ClaimEndingCancelled { .. } => {
                if let Some(i) = t.current {
                    let c = &mut self.claims[i];
                    c.ending = None;
                    c.ending_cancelled = c.begins_before_log;
                }
            }
            SlotEvent::ClaimEnded { at, cause } => {
                if let Some(i) = t.current.take() {
                    if let Some(s) = t.suspended_since.take() {
                        self.claims[i].suspended_secs += at - s;
                    }
                    let c = &mut self.claims[i];
                    c.ended_at = Some(*at);
                    c.end_cause = Some(format!("{cause:?}"));
                }
                t.current = t.waiting.take();
            }
            SlotEvent::JobStarted { at, .. } => {
                if let Some(i) = t.current {
                    self.claims[i].started_at.push(*at);
                }
            }
            SlotEvent::JobSuspended { at } => {
                t.suspended_since = Some(*at);
                if let Some(i) = t.current {
                    self.claims[i].suspensions += 1;
                }
            }
            SlotEvent::JobContinued { at } => {
                if let (Some(s), Some(i)) = (t.suspended_since.take(), t.current) {
                    self.claims[i].suspended_secs += at - s;
                }
            }
            SlotEvent::SlotDeleted { .. } => {
                // A dynamic slot's name is used again: the next slot of
                // that name starts afresh (its fetches are its parent's).
                self.slots.remove(&env.actor);
            }
            _ => {}
        }
    }

    fn hook(&mut self, env: &Envelope, e: &HookEvent) {
        match e {
            HookEvent::Started {
                hook,
                slot,
                args,
                claim: Some(claim),
                ..
            } => {
                if let Some(i) = self.find(slot, *claim) {
                    let c = &mut self.claims[i];
                    c.hooks.push(HookRun {
                        hook: hook.clone(),
                        args: args.clone(),
                        at: env.time,
                        exit: "running".into(),
                        outcome: String::new(),
                    });
                    self.hooks.insert(env.actor.clone(), (i, c.hooks.len() - 1));
                }
            }
            HookEvent::Finished {
                exit,
                timed_out,
                outcome,
                ..
            } => {
                if let Some((i, h)) = self.hooks.remove(&env.actor)
                    && let Some(run) = self.claims.get_mut(i).and_then(|c| c.hooks.get_mut(h))
                {
                    run.at = env.time;
                    run.exit = if *timed_out {
                        format!("{exit} (timed out)")
                    } else {
                        exit.to_string()
                    };
                    run.outcome.clone_from(outcome);
                }
            }
            _ => {}
        }
    }

    fn starter(&mut self, env: &Envelope, e: &StarterEvent) {
        if let StarterEvent::Spawned { slot, claim, .. }
        | StarterEvent::Reattached { slot, claim, .. } = e
        {
            if let Some(i) = self.find(slot, *claim) {
                self.starters.insert(env.actor.clone(), i);
            }
            return;
        }
        if !self.starters.contains_key(&env.actor)
            && let Some((slot, claim)) = self.checkpointed.remove(&env.actor)
            && let Some(i) = self.find(&slot, claim)
        {
            self.starters.insert(env.actor.clone(), i);
        }
        let Some(&i) = self.starters.get(&env.actor) else {
            return;
        };
        let c = &mut self.claims[i];
        match e {
            StarterEvent::Hook {
                hook,
                args,
                exit,
                timed_out,
                outcome,
                ..
            } => c.hooks.push(HookRun {
                hook: hook.clone(),
                args: args.clone(),
                at: env.time,
                exit: match exit {
                    Some(x) if *timed_out => format!("{x} (timed out)"),
                    Some(x) => x.to_string(),
                    None => "not run".into(),
                },
                outcome: outcome.clone(),
            }),
            StarterEvent::JobNotStarted { reason } => {
                c.job_outcome = Some(format!("not started: {reason}"));
            }
            StarterEvent::JobExited { exit, how, .. } => {
                c.job_outcome = Some(format!("{how}: {exit}"));
            }
            StarterEvent::Exited { .. } => {
                self.starters.remove(&env.actor);
            }
            _ => {}
        }
    }

    /// The claims, oldest first, with their anomalies flagged.
    pub fn finish(mut self) -> Vec<ClaimRecord> {
        for c in &mut self.claims {
            flag(c);
        }
        self.claims
    }
}

/// Flags what looks wrong in a claim's record (anew).
fn flag(c: &mut ClaimRecord) {
    c.anomalies.clear();
    if c.started_at.len() > 1 && c.fetched {
        c.anomalies.push(format!(
            "a fetched claim had a job started {} times",
            c.started_at.len()
        ));
    }
    if c.ended_at.is_some() && c.started_at.is_empty() && c.job_outcome.is_none() {
        c.anomalies
            .push("accepted but never started, and no reason recorded".into());
    }
    let lost = c.end_cause.as_deref() == Some("Restart");
    if c.ended_at.is_some() && !c.started_at.is_empty() && c.job_outcome.is_none() && !lost {
        c.anomalies
            .push("ended without a record of how its job ended (no exit or eviction)".into());
    }
    if lost {
        c.anomalies
            .push("lost when the daemon stopped (ended at the next start)".into());
    }
}

/// Joins the records of one claim told in pieces: a record that
/// `begins_before_log` continues the latest earlier record of the same
/// slot and claim number (from the audit of the log's part that was cut and
/// kept; claim numbers are never used twice on a slot). Records are in log
/// order; so is the result.
pub fn join(records: Vec<ClaimRecord>) -> Vec<ClaimRecord> {
    let mut out: Vec<ClaimRecord> = Vec::with_capacity(records.len());
    for c in records {
        let earlier = c.begins_before_log.then(|| {
            out.iter()
                .rposition(|e| (e.slot.as_str(), e.claim) == (c.slot.as_str(), c.claim))
        });
        let Some(Some(i)) = earlier else {
            out.push(c);
            continue;
        };
        let e = &mut out[i];
        for t in c.started_at {
            if !e.started_at.contains(&t) {
                e.started_at.push(t);
            }
        }
        // A suspension open at the cut is counted before it, and its time
        // after it.
        e.suspensions += c.suspensions;
        e.suspended_secs += c.suspended_secs;
        // The first time it began to end is the one that counts (after the
        // cut, only a snapshot's word for it), unless that ending was called
        // off after the cut: then the later piece's word stands.
        e.ending = if c.ending_cancelled {
            c.ending
        } else {
            e.ending.take().or(c.ending)
        };
        e.ended_at = c.ended_at.or(e.ended_at);
        e.end_cause = c.end_cause.or(e.end_cause.take());
        e.job_outcome = c.job_outcome.or(e.job_outcome.take());
        for h in c.hooks {
            // A hook running at the cut is told again, finished.
            match e
                .hooks
                .iter_mut()
                .find(|x| x.hook == h.hook && x.exit == "running")
            {
                Some(x) => *x = h,
                None => e.hooks.push(h),
            }
        }
        flag(e);
    }
    out
}

/// The audit trail of `envelopes`.
pub fn claims<'a>(envelopes: impl IntoIterator<Item = &'a Envelope>) -> Vec<ClaimRecord> {
    let mut a = Audit::default();
    for e in envelopes {
        a.apply(e);
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{DaemonEvent, SCHEMA};
    use crate::exit::Exit;
    use crate::policy::slot::{Activity, EndCause, Slot, State};
    use crate::startd::replay::OpenStarter;

    fn env(seq: u64, actor: &str, event: Event) -> Envelope {
        Envelope {
            seq,
            time: 1000 + i64::try_from(seq).unwrap_or(0),
            actor: actor.into(),
            schema: SCHEMA,
            event,
        }
    }

    #[test]
    fn an_ending_called_off_after_the_cut_does_not_survive_the_join() {
        let piece = |ending: Option<(i64, &str)>, later: bool, cancelled: bool| ClaimRecord {
            slot: "slot1".into(),
            claim: 3,
            job: "-".into(),
            owner: String::new(),
            keyword: None,
            fetched: true,
            fetched_at: None,
            accepted_at: 100,
            started_at: vec![100],
            suspensions: 0,
            suspended_secs: 0,
            ending: ending.map(|(t, c)| (t, c.to_string())),
            ended_at: None,
            end_cause: None,
            job_outcome: None,
            hooks: Vec::new(),
            anomalies: Vec::new(),
            seq: 1,
            begins_before_log: later,
            ending_cancelled: cancelled,
        };
        // A drain began at 123 before the cut, was called off after it, and
        // a second drain began at 163.
        let joined = join(vec![
            piece(Some((123, "Shutdown")), false, false),
            piece(Some((163, "Shutdown")), true, true),
        ]);
        assert_eq!(joined[0].ending, Some((163, "Shutdown".to_string())));
        // Not called off: the first time it began to end counts.
        let joined = join(vec![
            piece(Some((123, "Shutdown")), false, false),
            piece(Some((130, "Shutdown")), true, false),
        ]);
        assert_eq!(joined[0].ending, Some((123, "Shutdown".to_string())));
    }

    /// The tail of a log whose beginning was cut: a checkpoint shows
    /// claim 7 running on slot1 under starter-1, then the job exits.
    fn cut_log(with_creation: bool) -> Vec<Envelope> {
        let mut claim = Claim::new(
            7,
            "[ ClusterId = 3; ProcId = 0; Owner = \"u\" ]".into(),
            0.0,
            true,
            900,
        );
        claim.job_start = Some(950);
        let mut slot = Slot::new("slot1", "h", 0);
        slot.state = State::Claimed;
        slot.activity = Activity::Busy;
        slot.claim = Some(claim.clone());
        let mut out = Vec::new();
        if with_creation {
            out.push(env(
                1,
                "slot1",
                Event::Slot(SlotEvent::ClaimCreated { at: 900, claim }),
            ));
            out.push(env(
                2,
                "slot1",
                Event::Slot(SlotEvent::JobStarted {
                    at: 950,
                    pledged_vacate: 0,
                }),
            ));
            out.push(env(
                3,
                "starter-1",
                Event::Starter(StarterEvent::Spawned {
                    slot: "slot1".into(),
                    claim: 7,
                    pid: 10,
                    job: "3.0 u".into(),
                    started: 0,
                }),
            ));
        }
        out.push(env(
            10,
            "daemon",
            Event::Daemon(DaemonEvent::Checkpoint {
                run: Some((1, "h".into())),
                starters: BTreeMap::from([(
                    "starter-1".to_string(),
                    OpenStarter {
                        slot: "slot1".into(),
                        claim: 7,
                        pid: 10,
                        job_pid: Some(11),
                        job: "3.0 u".into(),
                        since: 3,
                        started: 0,
                        reports: 0,
                        told: false,
                    },
                )]),
                hooks: BTreeMap::new(),
                handouts: BTreeMap::new(),
                boot: String::new(),
                owed: BTreeMap::new(),
            }),
        ));
        out.push(env(
            11,
            "slot1",
            Event::Slot(SlotEvent::snapshot(1011, &slot)),
        ));
        out.push(env(
            12,
            "starter-1",
            Event::Starter(StarterEvent::JobExited {
                exit: Exit::Code(0),
                how: "exit".into(),
                duration: 60.0,
            }),
        ));
        out.push(env(
            13,
            "slot1",
            Event::Slot(SlotEvent::ClaimEnded {
                at: 1013,
                cause: EndCause::NoMoreWork,
            }),
        ));
        out
    }

    #[test]
    fn a_claim_begun_before_a_cut_log_is_followed_from_the_checkpoint() {
        let records = claims(&cut_log(false));
        assert_eq!(records.len(), 1, "{records:?}");
        let c = &records[0];
        assert!(c.begins_before_log);
        assert_eq!(
            (c.slot.as_str(), c.claim, c.job.as_str()),
            ("slot1", 7, "3.0")
        );
        assert_eq!((c.accepted_at, c.started_at.clone()), (900, vec![950]));
        assert_eq!(c.job_outcome.as_deref(), Some("exit: exit code 0"));
        assert_eq!(c.end_cause.as_deref(), Some("NoMoreWork"));
        assert!(c.anomalies.is_empty(), "{:?}", c.anomalies);
    }

    #[test]
    fn a_checkpoint_inside_a_whole_log_adds_no_claim() {
        let records = claims(&cut_log(true));
        assert_eq!(records.len(), 1, "{records:?}");
        let c = &records[0];
        assert!(!c.begins_before_log);
        assert_eq!(c.started_at, vec![950]);
        assert_eq!(c.job_outcome.as_deref(), Some("exit: exit code 0"));
        assert!(c.anomalies.is_empty(), "{:?}", c.anomalies);
    }

    #[test]
    fn a_claim_cut_in_two_and_joined_is_the_claim_the_whole_log_tells() {
        let whole_log = cut_log(true);
        let whole = claims(&whole_log);
        let before_cut = claims(&whole_log[..3]);
        assert!(before_cut[0].ended_at.is_none());
        let after_cut = claims(&cut_log(false));
        let mut pieces = before_cut;
        pieces.extend(after_cut);
        assert_eq!(join(pieces), whole);
    }
}
