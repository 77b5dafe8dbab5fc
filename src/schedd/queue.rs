//! The job queue, pure: its state ([`Queue`]), the events that change it
//! ([`JobEvent`], applied by [`Queue::apply`] with no logic of their own)
//! and the decisions that produce them (submit, hold, release, remove,
//! hand out under a lease, and what the node's hooks report). No I/O and
//! no clock: every decision is given the time, and a lease's token.
//!
//! A job's life follows HTCondor's `JobStatus`: Idle (1) → Running (2) →
//! Completed (4), with Removed (3) and Held (5) on command or by the node;
//! a job that leaves the queue (completed, or removed and no longer
//! running) goes to the history, as condor_schedd moves it to its history
//! file.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

pub use super::event::{ExitHow, JobEvent, JobId, LeaseEnd, Status, hold_code};

use super::event::OnExit;
use crate::classad::unparse::ad_to_string;
use crate::classad::{ClassAd, Env, Expr, FixedEnv, Value, parse_ad, parse_expr};
use crate::transfer::plan::may_travel;

/// `ROOST_SCHEDD_HISTORY_JOBS`'s default.
pub const DEFAULT_HISTORY_JOBS: usize = 10_000;

/// `ROOST_QUEUE_MAX_START_FAILURES`'s default.
pub const DEFAULT_MAX_START_FAILURES: i64 = 3;

/// How many times in a row nodes could not start the job (reset by a
/// run that started).
pub const START_FAILURES: &str = "RoostStartFailures";

/// The attribute the handed-out copy of a job carries its lease's token
/// in: the hooks send it back with every report.
pub const LEASE_ATTR: &str = "RoostQueueLease";

/// `Managed` of a job another program (the job router) manages.
pub const MANAGED_EXTERNAL: &str = "External";

/// A job handed to a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Lease {
    /// The slot's `Name`.
    pub slot: String,
    /// The token its reports carry.
    pub token: String,
    /// When it runs out unless the job started.
    pub until: i64,
    /// Whether the node took it.
    pub started: bool,
    /// Whether the job is known to be executing there (it started and
    /// its inputs, if they travel, arrived): the user log's 001 is written.
    pub executing: bool,
    /// The file transfer steps seen in this run ([`Stage::bit`]).
    pub stages: u8,
}

/// A job in the queue.
#[derive(Clone, Debug)]
pub struct Job {
    /// Its ad, as the queue keeps it.
    pub ad: ClassAd,
    /// The node holding it, if one does.
    pub lease: Option<Lease>,
}

impl Job {
    /// Its `JobStatus`.
    pub fn status(&self) -> Option<Status> {
        status_of(&self.ad)
    }
}

/// The `JobStatus` of an ad.
pub fn status_of(ad: &ClassAd) -> Option<Status> {
    match ad.lookup("JobStatus") {
        Some(Expr::Lit(Value::Int(n))) => Status::from_code(*n),
        _ => None,
    }
}

pub(super) fn int_of(ad: &ClassAd, name: &str) -> Option<i64> {
    match ad.lookup(name) {
        Some(Expr::Lit(Value::Int(n))) => Some(*n),
        // Whole seconds or counts: the fraction is dropped, as HTCondor's
        // integer lookups drop it.
        #[allow(clippy::cast_possible_truncation)]
        Some(Expr::Lit(Value::Real(r))) => Some(*r as i64),
        Some(Expr::Lit(Value::Bool(b))) => Some(i64::from(*b)),
        _ => None,
    }
}

pub(super) fn str_of(ad: &ClassAd, name: &str) -> Option<String> {
    match ad.lookup(name) {
        Some(Expr::Lit(Value::Str(s))) => Some(s.to_string_lossy()),
        _ => None,
    }
}

/// Why the queue refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// Not `cluster.proc`.
    #[error("{0:?} is not a job id (cluster.proc)")]
    BadJobId(String),
    /// No such job in the queue.
    #[error("job {0} is not in the queue")]
    NoSuchJob(JobId),
    /// A report whose token is not the job's lease.
    #[error(
        "job {0} is not leased with that token (the lease ended, or the job went to another node)"
    )]
    NotLeased(JobId),
    /// A submitted ad the queue cannot take.
    #[error("job ad {index}: {message}")]
    BadAd {
        /// Its place among the submitted ads (from 0).
        index: usize,
        /// Why.
        message: String,
    },
    /// A submission with no job.
    #[error("nothing to submit: no job ad")]
    Empty,
    /// A cluster number that is already used.
    #[error("cluster {0} is already in use")]
    ClusterUsed(i64),
    /// A cluster number the submitter did not reserve.
    #[error("cluster {0} was not reserved by this user (ask new_cluster first)")]
    NotReserved(i64),
    /// A constraint that is not a ClassAd expression.
    #[error("the constraint is not a ClassAd expression: {0}")]
    BadConstraint(#[source] crate::classad::ParseError),
    /// Not how a job exits.
    #[error("{0:?} is not how a job exits (exit, remove, hold or evict)")]
    BadExitHow(String),
}

/// Who and when, for a submission.
#[derive(Clone, Copy, Debug)]
pub struct SubmitCtx<'a> {
    /// The time.
    pub at: i64,
    /// The submitting user (`Owner`, `User` is `owner@domain`).
    pub owner: &'a str,
    /// `UID_DOMAIN` of the queue.
    pub domain: &'a str,
    /// The queue's name, for `GlobalJobId`.
    pub schedd: &'a str,
}

/// The queue: the jobs in it, and those that left.
#[derive(Clone, Debug, Default)]
pub struct Queue {
    /// The jobs, by id.
    pub jobs: BTreeMap<JobId, Job>,
    /// Jobs that left the queue, oldest first: the newest
    /// `history_limit` of them (older ones stay in the log).
    pub history: VecDeque<ClassAd>,
    /// How many jobs the history keeps (`ROOST_SCHEDD_HISTORY_JOBS`).
    pub history_limit: usize,
    /// The next cluster number to give.
    pub next_cluster: i64,
    /// Submitted ads the log holds that could not be read back.
    pub unreadable: usize,
    /// A job nodes could not start this many times in a row is held
    /// (`ROOST_QUEUE_MAX_START_FAILURES`; 0 or less: never).
    pub max_start_failures: i64,
}

impl Job {
    /// Applies one event (not `Submitted`) to the job; returns whether the
    /// job leaves the queue.
    pub(super) fn apply(&mut self, e: &JobEvent) -> bool {
        match e {
            JobEvent::Submitted { .. } => false,
            JobEvent::Leased {
                slot, token, until, ..
            } => {
                self.lease = Some(Lease {
                    slot: slot.clone(),
                    token: token.clone(),
                    until: *until,
                    started: false,
                    executing: false,
                    stages: 0,
                });
                false
            }
            JobEvent::LeaseEnded { .. } => {
                self.lease = None;
                false
            }
            JobEvent::Started { at, slot, .. } => {
                self.started(*at, slot);
                false
            }
            JobEvent::Transferred { at, stage, .. } => {
                self.transferred(*at, *stage);
                false
            }
            JobEvent::Updated { at, attrs, .. } => {
                if self.running() {
                    self.executing(*at);
                }
                for (name, text) in attrs {
                    if let Ok(expr) = parse_expr(text) {
                        self.ad.insert(name.as_str(), expr);
                    }
                }
                self.leaves()
            }
            JobEvent::Exited {
                at,
                code,
                signal,
                reason,
                duration,
                on_exit,
                ..
            } => {
                let left = self.exited(*at, (*code, *signal), reason.as_deref(), *duration);
                match on_exit {
                    None => left,
                    Some(OnExit::Requeued) => {
                        self.ad.remove("JobFinishedHookDone");
                        set_status(&mut self.ad, Status::Idle, *at);
                        false
                    }
                    Some(OnExit::Held { reason }) => {
                        self.ad.remove("JobFinishedHookDone");
                        self.held(*at, reason, hold_code::JOB_POLICY, 0);
                        false
                    }
                }
            }
            JobEvent::Evicted {
                at,
                duration,
                not_started,
                ..
            } => {
                let failures = int_of(&self.ad, START_FAILURES).unwrap_or(0);
                match not_started {
                    Some(why) => {
                        self.ad.insert_value(START_FAILURES, failures + 1);
                        self.ad.insert_value("VacateReason", why.as_str());
                    }
                    None => {
                        self.ad.remove(START_FAILURES);
                    }
                }
                self.evicted(*at, *duration)
            }
            JobEvent::Held {
                at,
                reason,
                code,
                subcode,
                ..
            } => {
                self.held(*at, reason, *code, *subcode);
                false
            }
            JobEvent::Released { at, reason, .. } => {
                self.released(*at, reason);
                false
            }
            JobEvent::Removed { at, reason, .. } => {
                set_status(&mut self.ad, Status::Removed, *at);
                self.ad.insert_value("RemoveReason", reason.as_str());
                if !self.running() {
                    self.lease = None;
                    self.ad.insert_value("CompletionDate", *at);
                }
                self.leaves()
            }
        }
    }

    /// Whether the job leaves the queue now: completed (unless its
    /// `LeaveJobInQueue` holds), or removed and not running; never while
    /// another program manages it (`Managed = "External"`: the job
    /// router), which gives it back first.
    fn leaves(&self) -> bool {
        if self.externally_managed() {
            return false;
        }
        match self.status() {
            Some(Status::Completed) => !self
                .ad
                .lookup("LeaveJobInQueue")
                .is_some_and(|e| matches!(self.ad.eval(e, &FixedEnv::new(0)), Value::Bool(true))),
            Some(Status::Removed) => !self.running(),
            _ => false,
        }
    }

    /// Whether another program (the job router) manages the job.
    pub fn externally_managed(&self) -> bool {
        str_of(&self.ad, "Managed").as_deref() == Some(MANAGED_EXTERNAL)
    }

    /// Whether an execute node may run the job: not managed elsewhere,
    /// and not of a universe the access point itself runs (scheduler,
    /// local) or hands to another system (grid).
    pub fn runs_on_nodes(&self) -> bool {
        !self.externally_managed() && !matches!(int_of(&self.ad, "JobUniverse"), Some(7 | 9 | 12))
    }

    /// Whether a node took the job and has not reported its end.
    fn running(&self) -> bool {
        self.lease.as_ref().is_some_and(|l| l.started)
    }

    fn started(&mut self, at: i64, slot: &str) {
        if let Some(l) = self.lease.as_mut() {
            l.started = true;
        }
        if !may_travel(&self.ad) {
            self.executing(at);
        }
        if self.status() == Some(Status::Idle) {
            set_status(&mut self.ad, Status::Running, at);
        }
        let ad = &mut self.ad;
        if !ad.contains("JobStartDate") {
            ad.insert_value("JobStartDate", at);
        }
        ad.insert_value("JobCurrentStartDate", at);
        let starts = int_of(ad, "NumJobStarts").unwrap_or(0);
        ad.insert_value("NumJobStarts", starts + 1);
        ad.insert_value("RemoteHost", slot);
    }

    fn exited(
        &mut self,
        at: i64,
        (code, signal): (Option<i64>, Option<i64>),
        reason: Option<&str>,
        duration: Option<i64>,
    ) -> bool {
        add_wall_clock(&mut self.ad, at, duration);
        stop_running(self, at);
        let ad = &mut self.ad;
        ad.insert_value("ExitBySignal", signal.is_some());
        match (code, signal) {
            (_, Some(s)) => {
                ad.insert_value("ExitSignal", s);
                ad.remove("ExitCode");
            }
            (Some(c), None) => ad.insert_value("ExitCode", c),
            (None, None) => {}
        }
        if let Some(r) = reason {
            ad.insert_value("ExitReason", r);
        }
        ad.insert_value("CompletionDate", at);
        let completions = int_of(ad, "NumJobCompletions").unwrap_or(0);
        ad.insert_value("NumJobCompletions", completions + 1);
        if matches!(self.status(), Some(Status::Running | Status::Idle)) {
            set_status(&mut self.ad, Status::Completed, at);
            self.ad.insert_value("JobFinishedHookDone", at);
        }
        self.leaves()
    }

    fn evicted(&mut self, at: i64, duration: Option<i64>) -> bool {
        if self.running() {
            add_wall_clock(&mut self.ad, at, duration);
        }
        stop_running(self, at);
        match self.status() {
            Some(Status::Running) => {
                set_status(&mut self.ad, Status::Idle, at);
                false
            }
            _ => self.leaves(),
        }
    }

    fn held(&mut self, at: i64, reason: &str, code: i64, subcode: i64) {
        set_status(&mut self.ad, Status::Held, at);
        let ad = &mut self.ad;
        ad.insert_value("HoldReason", reason);
        ad.insert_value("HoldReasonCode", code);
        ad.insert_value("HoldReasonSubCode", subcode);
        let holds = int_of(ad, "NumHolds").unwrap_or(0);
        ad.insert_value("NumHolds", holds + 1);
        if self.lease.as_ref().is_some_and(|l| !l.started) {
            self.lease = None;
        }
    }

    fn released(&mut self, at: i64, reason: &str) {
        let to = if self.running() {
            Status::Running
        } else {
            Status::Idle
        };
        set_status(&mut self.ad, to, at);
        let ad = &mut self.ad;
        for (from, to) in [
            ("HoldReason", "LastHoldReason"),
            ("HoldReasonCode", "LastHoldReasonCode"),
            ("HoldReasonSubCode", "LastHoldReasonSubCode"),
        ] {
            if let Some(v) = ad.remove(from) {
                ad.insert(to, v);
            }
        }
        ad.insert_value("ReleaseReason", reason);
    }
}

fn set_status(ad: &mut ClassAd, to: Status, at: i64) {
    if let Some(old) = int_of(ad, "JobStatus") {
        ad.insert_value("LastJobStatus", old);
    }
    ad.insert_value("JobStatus", to as i64);
    ad.insert_value("EnteredCurrentStatus", at);
}

fn add_wall_clock(ad: &mut ClassAd, at: i64, duration: Option<i64>) {
    let ran = duration
        .unwrap_or_else(|| int_of(ad, "JobCurrentStartDate").map_or(0, |s| (at - s).max(0)));
    let total = match ad.lookup("RemoteWallClockTime") {
        Some(Expr::Lit(Value::Real(r))) => *r,
        Some(Expr::Lit(Value::Int(n))) => *n as f64,
        _ => 0.0,
    };
    ad.insert_value("RemoteWallClockTime", total + ran as f64);
}

fn stop_running(job: &mut Job, at: i64) {
    job.lease = None;
    if let Some(host) = str_of(&job.ad, "RemoteHost") {
        job.ad.insert_value("LastRemoteHost", host.as_str());
    }
    job.ad.remove("RemoteHost");
    job.ad.insert_value("LastVacateTime", at);
}

impl Queue {
    /// The queue a log's events make, in order.
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a JobEvent>) -> Queue {
        Queue::replay_keeping(DEFAULT_HISTORY_JOBS, events)
    }

    /// [`Queue::replay`], the history keeping the newest `history_limit`
    /// jobs.
    pub fn replay_keeping<'a>(
        history_limit: usize,
        events: impl IntoIterator<Item = &'a JobEvent>,
    ) -> Queue {
        let mut q = Queue {
            next_cluster: 1,
            max_start_failures: DEFAULT_MAX_START_FAILURES,
            history_limit,
            ..Queue::default()
        };
        for e in events {
            q.apply(e);
        }
        q
    }

    /// Applies one event.
    pub fn apply(&mut self, e: &JobEvent) {
        if let JobEvent::Submitted { at, id, ad } = e {
            self.next_cluster = self.next_cluster.max(id.cluster + 1);
            match parse_ad(ad) {
                Ok(mut ad) => {
                    if !ad.contains("EnteredCurrentStatus") {
                        ad.insert_value("EnteredCurrentStatus", *at);
                    }
                    self.jobs.insert(*id, Job { ad, lease: None });
                }
                Err(_) => self.unreadable += 1,
            }
            return;
        }
        let id = e.id();
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let leaves = job.apply(e);
        if leaves && let Some(job) = self.jobs.remove(&id) {
            self.history.push_back(job.ad);
            while self.history.len() > self.history_limit {
                self.history.pop_front();
            }
        }
    }
}

/// Cluster numbers handed to submitters ahead of their jobs (so a submit
/// description's `$(Cluster)` expands), by the uid they went to. Not in
/// the log: a reservation not used before a restart is simply not used.
#[derive(Clone, Debug, Default)]
pub struct Reservations {
    given: BTreeMap<i64, u32>,
    next: i64,
}

impl Reservations {
    /// Reserves the next free cluster number for `uid`. The queue's next
    /// free number moves past it too, so a submission that takes the next
    /// free number (the router's copies) never takes a reserved one.
    pub fn reserve(&mut self, queue: &mut Queue, uid: u32) -> i64 {
        let c = self.next.max(queue.next_cluster);
        self.next = c + 1;
        queue.next_cluster = queue.next_cluster.max(c + 1);
        self.given.insert(c, uid);
        c
    }

    /// The cluster a submission by `uid` goes to: the one it reserved
    /// (refused when it did not reserve it), else the next free one.
    pub fn cluster_for(
        &self,
        queue: &Queue,
        uid: u32,
        asked: Option<i64>,
    ) -> Result<i64, QueueError> {
        match asked {
            Some(c) if self.given.get(&c) != Some(&uid) => Err(QueueError::NotReserved(c)),
            Some(c) => Ok(c),
            None => Ok(self.next.max(queue.next_cluster)),
        }
    }

    /// `cluster` was submitted to.
    pub fn used(&mut self, cluster: i64) {
        self.given.remove(&cluster);
        self.next = self.next.max(cluster + 1);
    }
}

/// Which jobs a command names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// `cluster` or `cluster.proc` each (condor_q's job ids).
    #[serde(default)]
    pub ids: Vec<String>,
    /// Owners named (condor_q's user names).
    #[serde(default)]
    pub owners: Vec<String>,
    /// A ClassAd constraint.
    #[serde(default)]
    pub constraint: Option<String>,
    /// Every job (`-all`).
    #[serde(default)]
    pub all: bool,
}

impl Targets {
    /// Whether nothing is named (a command that needs targets refuses).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.owners.is_empty() && self.constraint.is_none() && !self.all
    }

    /// Whether `ad` is one of them (with `constraint` compiled already).
    pub fn matches(&self, ad: &ClassAd, constraint: Option<&Expr>, env: &dyn Env) -> bool {
        if let Some(c) = constraint
            && !matches!(ad.eval(c, env), Value::Bool(true))
        {
            return false;
        }
        let named = self.ids.is_empty() && self.owners.is_empty();
        named || self.ids.iter().any(|t| id_matches(t, ad)) || {
            let owner = str_of(ad, "Owner").unwrap_or_default();
            self.owners.contains(&owner)
        }
    }

    /// The constraint, compiled.
    pub fn compiled(&self) -> Result<Option<Expr>, QueueError> {
        self.constraint
            .as_deref()
            .map(parse_expr)
            .transpose()
            .map_err(QueueError::BadConstraint)
    }
}

fn id_matches(target: &str, ad: &ClassAd) -> bool {
    let cluster = int_of(ad, "ClusterId");
    let proc_ = int_of(ad, "ProcId");
    match target.split_once('.') {
        Some((c, p)) => c.parse().ok() == cluster && p.parse().ok() == proc_,
        None => target.parse().ok() == cluster,
    }
}

/// What one command did to each job it named.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The events to append.
    pub events: Vec<JobEvent>,
    /// Jobs named but left as they were, with why.
    pub skipped: Vec<(JobId, String)>,
}

/// `ScheddInterval` in a deferred job's ad: HTCondor's default
/// `SCHEDD_INTERVAL` (seconds).
pub const SCHEDD_INTERVAL: i64 = 300;

/// What a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Put on hold.
    Hold,
    /// Release from hold.
    Release,
    /// Remove.
    Remove,
}

impl Queue {
    /// Whether cluster `c` has jobs in the queue.
    pub fn has_cluster(&self, c: i64) -> bool {
        let first = JobId {
            cluster: c,
            proc: i64::MIN,
        };
        let last = JobId {
            cluster: c,
            proc: i64::MAX,
        };
        self.jobs.range(first..=last).next().is_some()
    }

    /// The jobs `targets` name, in id order.
    pub fn select(&self, targets: &Targets, env: &dyn Env) -> Result<Vec<JobId>, QueueError> {
        let c = targets.compiled()?;
        Ok(self
            .jobs
            .iter()
            .filter(|(_, j)| targets.matches(&j.ad, c.as_ref(), env))
            .map(|(id, _)| *id)
            .collect())
    }

    /// Gives `ads` ids in cluster `cluster` (else the next free one) and
    /// the attributes the queue sets: one `Submitted` each.
    pub fn submit(
        &self,
        ctx: SubmitCtx<'_>,
        ads: Vec<ClassAd>,
        cluster: Option<i64>,
    ) -> Result<Vec<JobEvent>, QueueError> {
        if ads.is_empty() {
            return Err(QueueError::Empty);
        }
        // A cluster given was reserved for this submission (the shell
        // never gives one twice), so it may be below a cluster submitted
        // since; only one that holds jobs is refused.
        let cluster = match cluster {
            Some(c) if c < 1 || self.has_cluster(c) => return Err(QueueError::ClusterUsed(c)),
            Some(c) => c,
            None => self.next_cluster,
        };
        let mut out = Vec::with_capacity(ads.len());
        for (i, mut ad) in ads.into_iter().enumerate() {
            let id = JobId {
                cluster,
                proc: i as i64,
            };
            ad.insert_value("ClusterId", id.cluster);
            ad.insert_value("ProcId", id.proc);
            ad.insert_value("Owner", ctx.owner);
            ad.insert_value("User", format!("{}@{}", ctx.owner, ctx.domain).as_str());
            ad.insert_value("QDate", ctx.at);
            ad.insert_value("EnteredCurrentStatus", ctx.at);
            ad.insert_value(
                "GlobalJobId",
                format!("{}#{id}#{}", ctx.schedd, ctx.at).as_str(),
            );
            match status_of(&ad) {
                None => ad.insert_value("JobStatus", Status::Idle as i64),
                Some(Status::Idle | Status::Held) => {}
                Some(s) => {
                    return Err(QueueError::BadAd {
                        index: i,
                        message: format!(
                            "JobStatus {} cannot be submitted (only 1, idle, or 5, held)",
                            s as i64
                        ),
                    });
                }
            }
            if !ad.contains("Requirements") {
                ad.insert_value("Requirements", true);
            }
            // A deferred job's Requirements count on it (condor_submit's
            // clause, and its value; here for ads submitted whole): how
            // far ahead of its time it may be handed out, with its
            // DeferralPrepTime.
            if ad.contains("DeferralTime") && !ad.contains("ScheddInterval") {
                ad.insert_value("ScheddInterval", SCHEDD_INTERVAL);
            }
            out.push(JobEvent::Submitted {
                at: ctx.at,
                id,
                ad: ad_to_string(&ad),
            });
            let env = FixedEnv::new(ctx.at);
            if status_of(&ad) == Some(Status::Idle) && super::policy::is_noop(&ad, &env) {
                out.push(super::policy::noop_exit(id, &ad, ctx.at, &env));
            }
        }
        Ok(out)
    }

    /// `cmd` on the jobs `targets` name, with `reason`; when `owner` is
    /// given, jobs of other owners are left as they are.
    pub fn command(
        &self,
        at: i64,
        cmd: Command,
        targets: &Targets,
        reason: &str,
        owner: Option<&str>,
        env: &dyn Env,
    ) -> Result<Outcome, QueueError> {
        let mut out = Outcome::default();
        for id in self.select(targets, env)? {
            if let Some(me) = owner {
                let theirs = str_of(&self.jobs[&id].ad, "Owner").unwrap_or_default();
                if theirs != me {
                    out.skipped
                        .push((id, format!("owned by {theirs}, not by {me}")));
                    continue;
                }
            }
            let status = self.jobs[&id].status();
            let skip = match (cmd, status) {
                (Command::Hold, Some(Status::Held)) => Some("already held"),
                (Command::Hold, Some(Status::Removed)) => Some("removed"),
                (Command::Release, Some(Status::Held)) => None,
                (Command::Release, _) => Some("not held"),
                (Command::Remove, Some(Status::Removed)) => Some("already removed"),
                _ => None,
            };
            if let Some(why) = skip {
                out.skipped.push((id, why.to_string()));
                continue;
            }
            let reason = reason.to_string();
            out.events.push(match cmd {
                Command::Hold => JobEvent::Held {
                    at,
                    id,
                    reason,
                    code: hold_code::USER_REQUEST,
                    subcode: 0,
                },
                Command::Release => JobEvent::Released { at, id, reason },
                Command::Remove => JobEvent::Removed { at, id, reason },
            });
            // A no-op job released completes at once, as when submitted.
            let ad = &self.jobs[&id].ad;
            if cmd == Command::Release && super::policy::is_noop(ad, env) {
                out.events.push(super::policy::noop_exit(id, ad, at, env));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::FixedEnv;
    use crate::schedd::limits::Limits;

    const CTX: SubmitCtx<'static> = SubmitCtx {
        at: 100,
        owner: "alice",
        domain: "example.org",
        schedd: "ap.example.org",
    };

    fn ad(text: &str) -> ClassAd {
        parse_ad(text).expect("ad")
    }

    fn run(q: &mut Queue, events: &[JobEvent]) {
        for e in events {
            q.apply(e);
        }
    }

    fn queue_of(jobs: &[&str]) -> Queue {
        let mut q = Queue::replay(&[]);
        let ads = jobs.iter().map(|t| ad(t)).collect();
        let events = q.submit(CTX, ads, None).expect("submit");
        run(&mut q, &events);
        q
    }

    fn int(q: &Queue, id: JobId, name: &str) -> Option<i64> {
        int_of(&q.jobs[&id].ad, name)
    }

    const J0: JobId = JobId {
        cluster: 1,
        proc: 0,
    };
    const J1: JobId = JobId {
        cluster: 1,
        proc: 1,
    };

    #[test]
    fn submit_numbers_jobs_and_sets_the_queue_attributes() {
        let q = queue_of(&[
            "[Cmd = \"/bin/true\"]",
            "[Cmd = \"/bin/false\"; JobStatus = 5]",
        ]);
        assert_eq!(q.jobs.len(), 2);
        assert_eq!(q.next_cluster, 2);
        assert_eq!(int(&q, J0, "JobStatus"), Some(1));
        assert_eq!(int(&q, J1, "JobStatus"), Some(5));
        assert_eq!(int(&q, J1, "ProcId"), Some(1));
        assert_eq!(int(&q, J0, "QDate"), Some(100));
        assert_eq!(str_of(&q.jobs[&J0].ad, "Owner").as_deref(), Some("alice"));
        assert_eq!(
            str_of(&q.jobs[&J0].ad, "GlobalJobId").as_deref(),
            Some("ap.example.org#1.0#100")
        );
        assert_eq!(
            q.submit(CTX, vec![ad("[JobStatus = 2]")], None),
            Err(QueueError::BadAd {
                index: 0,
                message: "JobStatus 2 cannot be submitted (only 1, idle, or 5, held)".into()
            })
        );
        assert_eq!(
            q.submit(CTX, vec![ad("[]")], Some(1)),
            Err(QueueError::ClusterUsed(1))
        );
        assert_eq!(q.submit(CTX, vec![], None), Err(QueueError::Empty));
        // A cluster reserved before another submission took a higher one.
        assert!(q.submit(CTX, vec![ad("[]")], Some(7)).is_ok());
        let mut later = q.clone();
        let e = later.submit(CTX, vec![ad("[]")], Some(9)).expect("9");
        run(&mut later, &e);
        assert!(later.submit(CTX, vec![ad("[]")], Some(7)).is_ok());
        assert_eq!(later.next_cluster, 10);
    }

    #[test]
    fn a_job_is_leased_only_to_a_slot_it_matches_both_ways() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&[
            "[Requirements = TARGET.Memory >= 4096; JobPrio = 5]",
            "[Requirements = TARGET.Memory >= 1024]",
        ]);
        let small = ad("[Name = \"slot1@n\"; Memory = 2048; Requirements = true]");
        let (leased, handed) = q
            .fetch(200, (&small, "t1"), 60, &Limits::default(), &env)
            .expect("a match");
        assert_eq!(leased.id(), J1);
        assert_eq!(str_of(&handed, LEASE_ATTR).as_deref(), Some("t1"));
        run(&mut q, &[leased]);
        // Leased: not handed out twice.
        assert!(
            q.fetch(201, (&small, "t2"), 60, &Limits::default(), &env)
                .is_none()
        );
        let refusing = ad("[Name = \"slot2@n\"; Memory = 8192; Requirements = false]");
        assert!(
            q.fetch(201, (&refusing, "t2"), 60, &Limits::default(), &env)
                .is_none()
        );
        let big = ad("[Name = \"slot2@n\"; Memory = 8192; Requirements = true]");
        let (leased, _) = q
            .fetch(201, (&big, "t2"), 60, &Limits::default(), &env)
            .expect("prio 5 first");
        assert_eq!(leased.id(), J0);
        assert_eq!(q.next_expiry(), Some(260));
        assert!(q.expired(259).is_empty());
        let ended = q.expired(260);
        assert_eq!(
            ended,
            vec![JobEvent::LeaseEnded {
                at: 260,
                id: J1,
                why: LeaseEnd::Expired
            }]
        );
        run(&mut q, &ended);
        assert!(q.jobs[&J1].lease.is_none());
        assert_eq!(q.reply(261, J1, "t1", true), Err(QueueError::NotLeased(J1)));
    }

    #[test]
    fn a_job_runs_and_completes_into_the_history() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&["[]"]);
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        let (leased, _) = q
            .fetch(200, (&slot, "t"), 60, &Limits::default(), &env)
            .expect("match");
        run(&mut q, &[leased]);
        let started = q.reply(201, J0, "t", true).expect("reply");
        run(&mut q, &started);
        assert_eq!(int(&q, J0, "JobStatus"), Some(2));
        assert_eq!(int(&q, J0, "LastJobStatus"), Some(1));
        assert_eq!(int(&q, J0, "NumJobStarts"), Some(1));
        assert_eq!(int(&q, J0, "JobStartDate"), Some(201));
        assert_eq!(q.next_expiry(), None);
        // Already started: a second accept changes nothing.
        assert_eq!(q.reply(202, J0, "t", true), Ok(vec![]));
        let last = ad("[ExitCode = 3; ExitBySignal = false; JobDuration = 9]");
        assert_eq!(
            q.exited(210, J0, "wrong", ExitHow::Exit, &last),
            Err(QueueError::NotLeased(J0))
        );
        let done = q.exited(210, J0, "t", ExitHow::Exit, &last).expect("exit");
        run(&mut q, &done);
        assert!(q.jobs.is_empty());
        let h = &q.history[0];
        assert_eq!(int_of(h, "JobStatus"), Some(4));
        assert_eq!(int_of(h, "ExitCode"), Some(3));
        assert_eq!(int_of(h, "CompletionDate"), Some(210));
        assert_eq!(int_of(h, "RemoteWallClockTime"), Some(9));
        assert_eq!(str_of(h, "LastRemoteHost").as_deref(), Some("slot1@n"));
        assert!(!h.contains("RemoteHost"));
    }

    #[test]
    fn an_exit_before_the_reply_starts_the_job_first() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&["[]"]);
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        let (leased, _) = q
            .fetch(200, (&slot, "t"), 60, &Limits::default(), &env)
            .expect("match");
        run(&mut q, &[leased]);
        let last = ad("[ExitBySignal = true; ExitSignal = 9]");
        let done = q.exited(201, J0, "t", ExitHow::Exit, &last).expect("exit");
        assert!(matches!(done[0], JobEvent::Started { .. }));
        run(&mut q, &done);
        let h = &q.history[0];
        assert_eq!(int_of(h, "ExitSignal"), Some(9));
        assert_eq!(int_of(h, "NumJobStarts"), Some(1));
        assert!(!h.contains("ExitCode"));
    }

    #[test]
    fn eviction_puts_a_job_back_and_hold_release_remove_follow_condor() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&["[]", "[]"]);
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        let (leased, _) = q
            .fetch(200, (&slot, "t"), 60, &Limits::default(), &env)
            .expect("match");
        run(&mut q, &[leased]);
        let e = q.reply(201, J0, "t", true).expect("reply");
        run(&mut q, &e);
        let e = q.evict_claim(230, J0, "t").expect("evict");
        run(&mut q, &e);
        assert_eq!(int(&q, J0, "JobStatus"), Some(1));
        assert_eq!(int(&q, J0, "RemoteWallClockTime"), Some(29));
        // Evicted twice (JOB_EXIT evict, then EVICT_CLAIM): the second finds no lease.
        assert_eq!(q.evict_claim(231, J0, "t"), Err(QueueError::NotLeased(J0)));

        let all = Targets {
            all: true,
            ..Targets::default()
        };
        let held = q
            .command(240, Command::Hold, &all, "via roost hold", None, &env)
            .expect("hold");
        assert_eq!(held.events.len(), 2);
        run(&mut q, &held.events);
        assert_eq!(int(&q, J0, "HoldReasonCode"), Some(1));
        let again = q
            .command(241, Command::Hold, &all, "x", None, &env)
            .expect("hold");
        assert_eq!(again.skipped.len(), 2);
        let one = Targets {
            ids: vec!["1.1".into()],
            ..Targets::default()
        };
        let e = q
            .command(242, Command::Release, &one, "via roost release", None, &env)
            .expect("release")
            .events;
        run(&mut q, &e);
        assert_eq!(int(&q, J1, "JobStatus"), Some(1));
        assert_eq!(int(&q, J1, "LastHoldReasonCode"), Some(1));
        assert!(!q.jobs[&J1].ad.contains("HoldReason"));
        let cluster = Targets {
            ids: vec!["1".into()],
            constraint: Some("JobStatus == 5".into()),
            ..Targets::default()
        };
        let removed = q
            .command(243, Command::Remove, &cluster, "via roost rm", None, &env)
            .expect("rm");
        assert_eq!(removed.events.len(), 1);
        run(&mut q, &removed.events);
        assert_eq!(q.history.len(), 1);
        assert_eq!(int_of(&q.history[0], "JobStatus"), Some(3));
    }

    #[test]
    fn a_running_job_removed_leaves_when_the_node_reports() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&["[]"]);
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        let (leased, _) = q
            .fetch(200, (&slot, "t"), 60, &Limits::default(), &env)
            .expect("match");
        run(&mut q, &[leased]);
        let e = q.reply(201, J0, "t", true).expect("reply");
        run(&mut q, &e);
        let all = Targets {
            all: true,
            ..Targets::default()
        };
        let e = q
            .command(202, Command::Remove, &all, "rm", None, &env)
            .expect("rm")
            .events;
        run(&mut q, &e);
        assert_eq!(int(&q, J0, "JobStatus"), Some(3));
        let e = q
            .exited(203, J0, "t", ExitHow::Evict, &ad("[]"))
            .expect("report");
        run(&mut q, &e);
        assert!(q.jobs.is_empty());
        assert_eq!(int_of(&q.history[0], "JobStatus"), Some(3));
    }

    #[test]
    fn a_job_no_node_can_start_is_held_after_three_tries() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&["[]"]);
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        let last = ad("[VacateReason = \"Owner \\\"root\\\" is root\"]");
        for round in 1..=3 {
            let (leased, _) = q
                .fetch(200, (&slot, "t"), 60, &Limits::default(), &env)
                .expect("handed out again");
            run(&mut q, &[leased]);
            let e = q
                .exited(201, J0, "t", ExitHow::Evict, &last)
                .expect("report");
            run(&mut q, &e);
            if round < 3 {
                assert_eq!(int(&q, J0, "JobStatus"), Some(1));
                assert_eq!(int(&q, J0, START_FAILURES), Some(round));
            }
        }
        assert_eq!(int(&q, J0, "JobStatus"), Some(5));
        assert_eq!(int(&q, J0, "HoldReasonCode"), Some(6));
        let why = str_of(&q.jobs[&J0].ad, "HoldReason").unwrap_or_default();
        assert!(
            why.contains("3 times in a row; last on slot1@n: Owner \"root\" is root"),
            "{why}"
        );
        // A run that started resets the count.
        let all = Targets {
            all: true,
            ..Targets::default()
        };
        let e = q
            .command(202, Command::Release, &all, "r", None, &env)
            .expect("release");
        run(&mut q, &e.events);
        let (leased, _) = q
            .fetch(203, (&slot, "u"), 60, &Limits::default(), &env)
            .expect("handed out");
        run(&mut q, &[leased]);
        let e = q
            .exited(204, J0, "u", ExitHow::Evict, &ad("[JobDuration = 5]"))
            .expect("report");
        run(&mut q, &e);
        assert_eq!(int(&q, J0, START_FAILURES), None);
    }

    #[test]
    fn updates_and_exits_set_the_reported_usage_only() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&["[ImageSize = 10]"]);
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        let (leased, _) = q
            .fetch(200, (&slot, "t"), 60, &Limits::default(), &env)
            .expect("match");
        run(&mut q, &[leased]);
        let now = ad(
            "[ImageSize = 10; JobState = \"Running\"; JobPid = 77; JobStatus = 4; Owner = \"eve\"]",
        );
        let e = q.update(205, J0, "t", &now).expect("update");
        assert!(matches!(e[0], JobEvent::Started { .. }));
        assert_eq!(
            e[1],
            JobEvent::Updated {
                at: 205,
                id: J0,
                attrs: vec![
                    ("JobState".into(), "\"Running\"".into()),
                    ("JobPid".into(), "77".into())
                ]
            }
        );
        run(&mut q, &e);
        assert_eq!(int(&q, J0, "JobStatus"), Some(2));
        assert_eq!(str_of(&q.jobs[&J0].ad, "Owner").as_deref(), Some("alice"));
        assert_eq!(q.update(206, J0, "t", &now), Ok(vec![]));
        let last = ad("[RemoteUserCpu = 1.5; ExitCode = 0]");
        let e = q.exited(210, J0, "t", ExitHow::Exit, &last).expect("exit");
        run(&mut q, &e);
        assert_eq!(
            q.history[0]
                .lookup("RemoteUserCpu")
                .map(crate::classad::unparse::expr_to_string)
                .as_deref(),
            Some("1.500000000000000E+00")
        );
    }

    #[test]
    fn a_hold_on_the_node_keeps_its_reason() {
        let env = FixedEnv::new(200);
        let mut q = queue_of(&["[]"]);
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        let (leased, _) = q
            .fetch(200, (&slot, "t"), 60, &Limits::default(), &env)
            .expect("match");
        run(&mut q, &[leased]);
        let last = ad("[HoldReason = \"too big\"; HoldReasonCode = 3]");
        let e = q
            .exited(210, J0, "t", ExitHow::Hold, &last)
            .expect("report");
        run(&mut q, &e);
        assert_eq!(int(&q, J0, "JobStatus"), Some(5));
        assert_eq!(int(&q, J0, "HoldReasonCode"), Some(3));
        assert_eq!(
            str_of(&q.jobs[&J0].ad, "HoldReason").as_deref(),
            Some("too big")
        );
        assert!(q.jobs[&J0].lease.is_none());
    }

    #[test]
    fn reserved_clusters_go_to_their_submitter_only() {
        let mut q = queue_of(&["[Cmd = \"/bin/true\"]"]);
        let first = q.next_cluster;
        let mut r = Reservations::default();
        let a = r.reserve(&mut q, 1000);
        let b = r.reserve(&mut q, 1001);
        assert_eq!((a, b), (first, first + 1));
        // A submission taking the next free number (the router's) skips them.
        let ctx = SubmitCtx {
            at: 100,
            owner: "alice",
            domain: "d",
            schedd: "s",
        };
        let routed = q.submit(ctx, vec![ad("[]")], None).expect("submit");
        assert_eq!(routed[0].id().cluster, b + 1);
        assert_eq!(r.cluster_for(&q, 1000, Some(a)), Ok(a));
        assert_eq!(
            r.cluster_for(&q, 1001, Some(a)),
            Err(QueueError::NotReserved(a))
        );
        assert_eq!(r.cluster_for(&q, 1000, None), Ok(b + 1));
        r.used(a);
        assert!(r.cluster_for(&q, 1000, Some(a)).is_err());
    }

    #[test]
    fn the_history_keeps_the_newest_jobs() {
        let env = FixedEnv::new(200);
        let mut q = Queue::replay_keeping(2, &[]);
        let e = q
            .submit(CTX, vec![ad("[]"), ad("[]"), ad("[]")], None)
            .expect("submit");
        run(&mut q, &e);
        let all = Targets {
            all: true,
            ..Targets::default()
        };
        let e = q
            .command(201, Command::Remove, &all, "rm", None, &env)
            .expect("rm");
        run(&mut q, &e.events);
        let procs: Vec<_> = q.history.iter().map(|a| int_of(a, "ProcId")).collect();
        assert_eq!(procs, vec![Some(1), Some(2)]);
    }

    #[test]
    fn job_ids_and_statuses_read_and_print() {
        assert_eq!(
            "12.3".parse::<JobId>(),
            Ok(JobId {
                cluster: 12,
                proc: 3
            })
        );
        assert!("12".parse::<JobId>().is_err());
        assert_eq!(
            JobId {
                cluster: 2,
                proc: 0
            }
            .actor(),
            "job2.0"
        );
        assert_eq!(Status::from_code(5).map(Status::letter), Some('H'));
        assert_eq!("evict".parse::<ExitHow>(), Ok(ExitHow::Evict));
        assert!("vanish".parse::<ExitHow>().is_err());
    }
}
