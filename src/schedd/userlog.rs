//! What a queued job's user log (`log` in the submit file, the ad's
//! `UserLog`) gets for each change of the queue: the records HTCondor's
//! schedd and shadow write for the same changes, in their order.
//!
//! - submitted: 000;
//! - the job executing (the node took it and its inputs, when they
//!   travel, arrived; or the node's first report of it): 001, on the slot;
//! - the file server's steps: 040 (inputs started, finished — then 001 —,
//!   outputs started, finished);
//! - an exit: 005; one its `OnExitRemove` sends back to the queue: 004
//!   "terminated and was requeued"; one its `OnExitHold` holds: 012;
//! - an eviction: 004; a hold: 012; a release: 013; a removal: 009.
//!
//! A node that could not start the job (`Evicted` with a reason) writes
//! nothing: the job never executed; nor does what a node reports of a job
//! already removed (as HTCondor: 009 is its last record). Pure: the caller gives the job as it
//! was before the change.

use super::event::{JobEvent, OnExit, hold_code};
use super::queue::{Job, Status};
use crate::classad::{ClassAd, Expr, Value};
use crate::userlog::{End, Event, Stage, usage_of};

/// Where a job's user log is (its `UserLog`, absolute as submit wrote
/// it) and whether it is in the XML form (`UserLogUseXML`).
pub fn destination(ad: &ClassAd) -> Option<(String, bool)> {
    let path = crate::transfer::plan::string(ad, "UserLog").filter(|p| !p.is_empty())?;
    let xml = matches!(
        ad.lookup("UserLogUseXML"),
        Some(Expr::Lit(Value::Bool(true)))
    );
    Some((path, xml))
}

/// The records `event` writes, `job` being the job before it (`None`: not
/// in the queue, as before `Submitted`); `submit_host` is the schedd as
/// the submit record names it.
pub fn records(event: &JobEvent, job: Option<&Job>, submit_host: &str) -> Vec<Event> {
    if let JobEvent::Submitted { .. } = event {
        return vec![Event::Submitted {
            host: submit_host.to_string(),
        }];
    }
    let Some(job) = job else {
        return Vec::new();
    };
    if job.status() == Some(Status::Removed) {
        // Its 009 is written; what the node says after is not the user's.
        return Vec::new();
    }
    let slot = job.lease.as_ref().map(|l| l.slot.clone());
    let running = job.lease.as_ref().is_some_and(|l| l.started);
    // The 001 a run owes, when this change shows the job executing.
    let execute = |out: &mut Vec<Event>| {
        if running && !job.is_executing() {
            out.push(Event::Execute {
                host: slot.clone().unwrap_or_default(),
            });
        }
    };
    let mut out = Vec::new();
    match event {
        JobEvent::Submitted { .. } | JobEvent::Leased { .. } | JobEvent::LeaseEnded { .. } => {}
        JobEvent::Started { slot, .. } => {
            if !crate::transfer::plan::may_travel(&job.ad) {
                out.push(Event::Execute { host: slot.clone() });
            }
        }
        JobEvent::Transferred { stage, .. } => {
            let host = match stage {
                Stage::InputStarted | Stage::OutputStarted => slot.clone(),
                Stage::InputFinished | Stage::OutputFinished => None,
            };
            out.push(Event::Transfer {
                stage: *stage,
                host,
            });
            // Its inputs are there: it executes now (the node may start
            // the transfer before its REPLY_FETCH reaches the queue).
            if *stage == Stage::InputFinished && !job.is_executing() {
                out.push(Event::Execute {
                    host: slot.clone().unwrap_or_default(),
                });
            }
        }
        JobEvent::Updated { .. } => execute(&mut out),
        JobEvent::Exited {
            code,
            signal,
            on_exit,
            ..
        } => {
            execute(&mut out);
            let end = match (signal, code) {
                (Some(s), _) => End::Signal(i32::try_from(*s).unwrap_or(0)),
                (None, c) => End::Exit(i32::try_from(c.unwrap_or(0)).unwrap_or(0)),
            };
            let usage = usage_of(&job.ad);
            out.push(match on_exit {
                None => Event::Terminated { end, usage },
                Some(OnExit::Requeued) => Event::Requeued { end, usage },
                Some(OnExit::Held { reason: why }) => Event::Held {
                    reason: why.clone(),
                    code: hold_code::JOB_POLICY,
                    subcode: 0,
                },
            });
        }
        JobEvent::Evicted { not_started, .. } => {
            if not_started.is_none() && running {
                execute(&mut out);
                out.push(Event::Evicted {
                    usage: usage_of(&job.ad),
                });
            }
        }
        JobEvent::Held {
            reason,
            code,
            subcode,
            ..
        } => out.push(Event::Held {
            reason: reason.clone(),
            code: *code,
            subcode: *subcode,
        }),
        JobEvent::Released { reason, .. } => out.push(Event::Released {
            reason: reason.clone(),
        }),
        JobEvent::Removed { reason, .. } => out.push(Event::Aborted {
            reason: reason.clone(),
        }),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedd::event::JobId;
    use crate::schedd::queue::Queue;

    const ID: JobId = JobId {
        cluster: 3,
        proc: 0,
    };

    /// The numbers each event writes, applied in turn to a job with `ad`.
    fn numbers(ad: &str, events: &[JobEvent]) -> Vec<Vec<u32>> {
        let mut q = Queue::replay(&[JobEvent::Submitted {
            at: 1,
            id: ID,
            ad: ad.into(),
        }]);
        events
            .iter()
            .map(|e| {
                let out = records(e, q.jobs.get(&ID), "<ap>");
                q.apply(e);
                out.iter().map(Event::number).collect()
            })
            .collect()
    }

    fn leased(at: i64) -> JobEvent {
        JobEvent::Leased {
            at,
            id: ID,
            slot: "slot1@n".into(),
            token: "t".into(),
            until: at + 60,
        }
    }

    fn started(at: i64) -> JobEvent {
        JobEvent::Started {
            at,
            id: ID,
            slot: "slot1@n".into(),
        }
    }

    fn exited(at: i64, on_exit: Option<OnExit>) -> JobEvent {
        JobEvent::Exited {
            at,
            id: ID,
            code: Some(0),
            signal: None,
            reason: None,
            duration: Some(1),
            on_exit,
        }
    }

    const PLAIN: &str = "[ Cmd = \"/bin/true\"; JobStatus = 1; UserLog = \"/l\" ]";
    const TRAVELS: &str =
        "[ Cmd = \"/bin/true\"; JobStatus = 1; UserLog = \"/l\"; ShouldTransferFiles = \"YES\" ]";

    #[test]
    fn a_job_executes_when_taken_or_when_its_inputs_arrived() {
        assert_eq!(
            numbers(PLAIN, &[leased(2), started(3), exited(4, None)]),
            [vec![], vec![1], vec![5]]
        );
        let step = |stage| JobEvent::Transferred {
            at: 4,
            id: ID,
            stage,
        };
        assert_eq!(
            numbers(
                TRAVELS,
                &[
                    leased(2),
                    started(3),
                    step(Stage::InputStarted),
                    step(Stage::InputFinished),
                    step(Stage::OutputStarted),
                    step(Stage::OutputFinished),
                    exited(5, None),
                ]
            ),
            [
                vec![],
                vec![],
                vec![40],
                vec![40, 1],
                vec![40],
                vec![40],
                vec![5]
            ]
        );
        // The node fetched the inputs before its REPLY_FETCH reached the
        // queue: the job executes once they are there, and once only.
        assert_eq!(
            numbers(
                TRAVELS,
                &[
                    leased(2),
                    step(Stage::InputStarted),
                    step(Stage::InputFinished),
                    started(4),
                    exited(5, None),
                ]
            ),
            [vec![], vec![40], vec![40, 1], vec![], vec![5]]
        );
        // Inputs that never travelled (IF_NEEDED on a shared file system):
        // the job's end shows it executed.
        assert_eq!(
            numbers(TRAVELS, &[leased(2), started(3), exited(4, None)]),
            [vec![], vec![], vec![1, 5]]
        );
    }

    #[test]
    fn exits_that_requeue_or_hold_and_a_removed_job_s_end() {
        assert_eq!(
            numbers(
                PLAIN,
                &[leased(2), started(3), exited(4, Some(OnExit::Requeued))]
            ),
            [vec![], vec![1], vec![4]]
        );
        let hold = OnExit::Held {
            reason: "The job attribute OnExitHold expression 'true' evaluated to TRUE".into(),
        };
        assert_eq!(
            numbers(PLAIN, &[leased(2), started(3), exited(4, Some(hold))]),
            [vec![], vec![1], vec![12]]
        );
        let removed = JobEvent::Removed {
            at: 4,
            id: ID,
            reason: "via roost rm (by user a)".into(),
        };
        assert_eq!(
            numbers(PLAIN, &[leased(2), started(3), removed, exited(5, None)]),
            [vec![], vec![1], vec![9], vec![]]
        );
        // A node that could not start it: nothing.
        let not_started = JobEvent::Evicted {
            at: 4,
            id: ID,
            duration: None,
            not_started: Some("no".into()),
        };
        let none: Vec<Vec<u32>> = vec![vec![], vec![]];
        assert_eq!(numbers(TRAVELS, &[leased(2), not_started]), none);
        assert_eq!(destination(&crate::classad::ClassAd::new()), None);
    }
}
