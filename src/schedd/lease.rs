//! The queue's side of the fetch-work hooks, pure: handing an idle job
//! that matches a slot to its node under a lease (FETCH_WORK), and what
//! the node's reports do to it (REPLY_FETCH, JOB_EXIT, EVICT_CLAIM, and
//! leases that run out). Each report must carry the lease's token.

use super::event::{ExitHow, JobEvent, JobId, LeaseEnd, hold_code};
use super::limits::{Limits, add_use};
use super::queue::{
    Job, LEASE_ATTR, Lease, Queue, QueueError, START_FAILURES, Status, int_of, str_of,
};
use crate::classad::matchmaking::symmetric_match;
use crate::classad::unparse::expr_to_string;
use crate::classad::{ClassAd, Env, Expr, FixedEnv, Value};
use crate::userlog::Stage;

/// The attributes a node's reports (UPDATE_JOB_INFO, JOB_EXIT) set in
/// the queue's job: the execution's state and usage, as HTCondor's
/// starter adds them to the job ad it gives those hooks.
pub const REPORTED: &[&str] = &[
    "JobState",
    "JobPid",
    "NumPids",
    "RemoteSysCpu",
    "RemoteUserCpu",
    "ImageSize",
    "MemoryUsage",
    "ResidentSetSize",
];

/// The [`REPORTED`] attributes `ad` has, as name and expression text.
fn reported(ad: &ClassAd) -> Vec<(String, String)> {
    REPORTED
        .iter()
        .filter_map(|n| Some((n.to_string(), expr_to_string(ad.lookup(n)?))))
        .collect()
}

impl Job {
    /// What UPDATE_JOB_INFO answers the node for a job removed or held in
    /// the queue since it was handed out: its status and the reason, read
    /// by the node's starter as the job's withdrawal (`None`: the node may
    /// run it on).
    pub fn withdrawal(&self) -> Option<ClassAd> {
        let (status, attr) = match self.status()? {
            Status::Removed => (Status::Removed, "RemoveReason"),
            Status::Held => (Status::Held, "HoldReason"),
            _ => return None,
        };
        let mut ad = ClassAd::new();
        ad.insert_value("JobStatus", status as i64);
        if let Some(reason) = str_of(&self.ad, attr) {
            ad.insert_value(attr, reason.as_str());
        }
        Some(ad)
    }
}

/// A job's `ConcurrencyLimits` (a string; anything else names none).
fn concurrency_limits(ad: &ClassAd, env: &dyn Env) -> String {
    match ad.eval_attr("ConcurrencyLimits", env) {
        Value::Str(s) => s.to_string_lossy(),
        _ => String::new(),
    }
}

impl Queue {
    /// What the running and leased jobs use of each concurrency limit.
    fn limits_in_use(&self, env: &dyn Env) -> std::collections::BTreeMap<String, f64> {
        let mut in_use = std::collections::BTreeMap::new();
        for j in self.jobs.values() {
            if j.lease.is_some() || j.status() == Some(Status::Running) {
                add_use(&concurrency_limits(&j.ad, env), &mut in_use);
            }
        }
        in_use
    }

    /// The first idle job (highest `JobPrio`, then oldest) that matches
    /// `slot` both ways, is not leased and fits its concurrency `limits`
    /// beside the running and leased jobs, leased to it until
    /// `at + lease`; with the copy to hand out (carrying the token).
    pub fn fetch(
        &self,
        at: i64,
        (slot, token): (&ClassAd, &str),
        lease: i64,
        limits: &Limits,
        env: &dyn Env,
    ) -> Option<(JobEvent, ClassAd)> {
        let mut idle: Vec<(i64, JobId, &Job)> = self
            .jobs
            .iter()
            .filter(|(_, j)| {
                j.status() == Some(Status::Idle)
                    && j.lease.is_none()
                    && j.runs_on_nodes()
                    && !super::policy::is_noop(&j.ad, env)
            })
            .map(|(id, j)| (int_of(&j.ad, "JobPrio").unwrap_or(0), *id, j))
            .collect();
        idle.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        // What the running and leased jobs use is counted only when a
        // matching job names limits (most name none).
        let mut in_use = None;
        let (_, id, job) = idle.into_iter().find(|(_, _, j)| {
            if !symmetric_match(&j.ad, slot, env) {
                return false;
            }
            let mine = concurrency_limits(&j.ad, env);
            mine.is_empty()
                || limits.fits(&mine, in_use.get_or_insert_with(|| self.limits_in_use(env)))
        })?;
        let mut ad = job.ad.clone();
        ad.insert_value(LEASE_ATTR, token);
        let name = slot.eval_attr("Name", env);
        let slot_name = match name {
            Value::Str(s) => s.to_string_lossy(),
            _ => String::new(),
        };
        Some((
            JobEvent::Leased {
                at,
                id,
                slot: slot_name,
                token: token.to_string(),
                until: at + lease,
            },
            ad,
        ))
    }

    /// The lease a report on a running job comes under, and the job's
    /// start when the report is the first the queue hears of it (a short
    /// job's exit, or an update, can come before REPLY_FETCH's accept).
    fn reporting(
        &self,
        at: i64,
        id: JobId,
        token: &str,
    ) -> Result<(&Lease, Vec<JobEvent>), QueueError> {
        let lease = self.leased(id, token)?;
        let start = (!lease.started).then(|| JobEvent::Started {
            at,
            id,
            slot: lease.slot.clone(),
        });
        Ok((lease, start.into_iter().collect()))
    }

    /// The ad of job `id` while it is leased with `token` (its files are
    /// served to that node only).
    pub fn leased_ad(&self, id: JobId, token: &str) -> Result<&ClassAd, QueueError> {
        self.leased(id, token)?;
        self.jobs
            .get(&id)
            .map(|j| &j.ad)
            .ok_or(QueueError::NoSuchJob(id))
    }

    fn leased(&self, id: JobId, token: &str) -> Result<&Lease, QueueError> {
        let job = self.jobs.get(&id).ok_or(QueueError::NoSuchJob(id))?;
        job.lease
            .as_ref()
            .filter(|l| l.token == token)
            .ok_or(QueueError::NotLeased(id))
    }

    /// REPLY_FETCH: the node took the job, or not.
    pub fn reply(
        &self,
        at: i64,
        id: JobId,
        token: &str,
        accept: bool,
    ) -> Result<Vec<JobEvent>, QueueError> {
        let lease = self.leased(id, token)?;
        Ok(match (accept, lease.started) {
            (_, true) => Vec::new(),
            (true, false) => vec![JobEvent::Started {
                at,
                id,
                slot: lease.slot.clone(),
            }],
            (false, false) => vec![JobEvent::LeaseEnded {
                at,
                id,
                why: LeaseEnd::Rejected,
            }],
        })
    }

    /// JOB_EXIT: how the job ended on the node, and its final ad.
    pub fn exited(
        &self,
        at: i64,
        id: JobId,
        token: &str,
        how: ExitHow,
        last: &ClassAd,
    ) -> Result<Vec<JobEvent>, QueueError> {
        let (lease, mut out) = self.reporting(at, id, token)?;
        let attrs = reported(last);
        if !attrs.is_empty() {
            out.push(JobEvent::Updated { at, id, attrs });
        }
        let duration = int_of(last, "JobDuration");
        let reason = str_of(last, "ExitReason");
        match how {
            ExitHow::Exit => {
                let by_signal = matches!(
                    last.lookup("ExitBySignal"),
                    Some(Expr::Lit(Value::Bool(true)))
                );
                let (code, signal) = if by_signal {
                    (None, Some(int_of(last, "ExitSignal").unwrap_or(0)))
                } else {
                    (Some(int_of(last, "ExitCode").unwrap_or(0)), None)
                };
                let mut exit = JobEvent::Exited {
                    at,
                    id,
                    code,
                    signal,
                    reason,
                    duration,
                    on_exit: None,
                };
                // The job's exit policy sees the job as the exit leaves it.
                let mut after = self.jobs[&id].clone();
                after.apply(&exit);
                if let JobEvent::Exited { on_exit, .. } = &mut exit {
                    *on_exit = super::policy::on_exit(&after.ad, &FixedEnv::new(at));
                }
                out.push(exit);
            }
            ExitHow::Evict => {
                // A node that could not start the job says why; after
                // `max_start_failures` of those in a row the job is held
                // rather than handed out again and again.
                let not_started = str_of(last, "VacateReason").filter(|_| duration.is_none());
                let failures = int_of(&self.jobs[&id].ad, START_FAILURES).unwrap_or(0) + 1;
                if let Some(why) = &not_started
                    && self.max_start_failures > 0
                    && failures >= self.max_start_failures
                {
                    out.push(JobEvent::Held {
                        at,
                        id,
                        reason: format!(
                            "the job could not be started {failures} times in a row; last on {}: {why}",
                            lease.slot
                        ),
                        code: hold_code::FAILED_TO_CREATE_PROCESS,
                        subcode: 0,
                    });
                }
                out.push(JobEvent::Evicted {
                    at,
                    id,
                    duration,
                    not_started,
                });
            }
            ExitHow::Hold => {
                out.push(JobEvent::Held {
                    at,
                    id,
                    reason: str_of(last, "HoldReason")
                        .or(reason)
                        .unwrap_or_else(|| "held on the execute node".into()),
                    code: int_of(last, "HoldReasonCode").unwrap_or(hold_code::STARTD_HELD_JOB),
                    subcode: int_of(last, "HoldReasonSubCode").unwrap_or(0),
                });
                out.push(JobEvent::Evicted {
                    at,
                    id,
                    duration,
                    not_started: None,
                });
            }
            ExitHow::Remove => {
                out.push(JobEvent::Removed {
                    at,
                    id,
                    reason: str_of(last, "RemoveReason")
                        .or(reason)
                        .unwrap_or_else(|| "removed on the execute node".into()),
                });
                out.push(JobEvent::Evicted {
                    at,
                    id,
                    duration,
                    not_started: None,
                });
            }
        }
        Ok(out)
    }

    /// UPDATE_JOB_INFO: what the node says of the running job (its
    /// [`REPORTED`] attributes).
    pub fn update(
        &self,
        at: i64,
        id: JobId,
        token: &str,
        now: &ClassAd,
    ) -> Result<Vec<JobEvent>, QueueError> {
        let (_, mut out) = self.reporting(at, id, token)?;
        let job = &self.jobs[&id].ad;
        let attrs: Vec<(String, String)> = reported(now)
            .into_iter()
            .filter(|(n, text)| job.lookup(n).map(expr_to_string).as_ref() != Some(text))
            .collect();
        if !attrs.is_empty() {
            out.push(JobEvent::Updated { at, id, attrs });
        }
        Ok(out)
    }

    /// EVICT_CLAIM: the node gave the job's claim back.
    pub fn evict_claim(
        &self,
        at: i64,
        id: JobId,
        token: &str,
    ) -> Result<Vec<JobEvent>, QueueError> {
        let lease = self.leased(id, token)?;
        Ok(vec![if lease.started {
            JobEvent::Evicted {
                at,
                id,
                duration: None,
                not_started: None,
            }
        } else {
            JobEvent::LeaseEnded {
                at,
                id,
                why: LeaseEnd::Evicted,
            }
        }])
    }

    /// Leases handed out and neither taken nor given back by `at`.
    pub fn expired(&self, at: i64) -> Vec<JobEvent> {
        self.jobs
            .iter()
            .filter_map(|(id, j)| {
                let l = j.lease.as_ref()?;
                (!l.started && l.until <= at).then_some(JobEvent::LeaseEnded {
                    at,
                    id: *id,
                    why: LeaseEnd::Expired,
                })
            })
            .collect()
    }

    /// When the next unstarted lease runs out.
    pub fn next_expiry(&self) -> Option<i64> {
        self.jobs
            .values()
            .filter_map(|j| j.lease.as_ref().filter(|l| !l.started).map(|l| l.until))
            .min()
    }
}

/// The steps of a run on a node: executing, and the file transfer's.
impl Job {
    /// Whether the job is executing on a node: the user log has its 001.
    pub fn is_executing(&self) -> bool {
        self.lease.as_ref().is_some_and(|l| l.executing)
    }

    /// The job is known to execute from `at` (once a run).
    pub(super) fn executing(&mut self, at: i64) {
        if let Some(l) = self.lease.as_mut()
            && !l.executing
        {
            l.executing = true;
            self.ad.insert_value("JobCurrentStartExecutingDate", at);
        }
    }

    /// A file transfer step: HTCondor's dates of the current run's steps.
    pub(super) fn transferred(&mut self, at: i64, stage: Stage) {
        if let Some(l) = self.lease.as_mut() {
            l.stages |= stage.bit();
        }
        let date = match stage {
            Stage::InputStarted => "JobCurrentStartTransferInputDate",
            Stage::InputFinished => "JobCurrentFinishTransferInputDate",
            Stage::OutputStarted => "JobCurrentStartTransferOutputDate",
            Stage::OutputFinished => "JobCurrentFinishTransferOutputDate",
        };
        self.ad.insert_value(date, at);
        if stage == Stage::InputFinished {
            self.executing(at);
        }
    }

    /// Whether the step is new in this run of a job a node holds.
    pub fn new_step(&self, stage: Stage) -> bool {
        self.lease
            .as_ref()
            .is_some_and(|l| l.stages & stage.bit() == 0)
    }
}

impl Queue {
    /// The file server saw `stage` of job `id`'s transfer: the event to
    /// record, when the job is held by a node and the step is new in its
    /// run (a connection made again repeats the steps it had taken).
    pub fn transfer_step(&self, id: JobId, stage: Stage, at: i64) -> Option<JobEvent> {
        self.jobs
            .get(&id)
            .filter(|j| j.new_step(stage))
            .map(|_| JobEvent::Transferred { at, id, stage })
    }
}
