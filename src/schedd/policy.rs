//! A job's own policy, as HTCondor's schedd applies it (pure): what its
//! `OnExitHold` and `OnExitRemove` make of an exit (held, or back in the
//! queue to run again, instead of completed), and what its
//! `PeriodicHold`, `PeriodicRelease` and `PeriodicRemove` do at each of
//! the schedd's periodic evaluations (`PERIODIC_EXPR_INTERVAL`); and a
//! no-op job (`IsNoopJob`), completed without running.

use super::event::{JobEvent, JobId, OnExit, hold_code};
use super::queue::{Job, Queue, Status};
use crate::classad::unparse::expr_to_string;
use crate::classad::{ClassAd, Env, Value};

/// HTCondor's reason text for a policy expression that fired.
fn fired(ad: &ClassAd, attr: &str) -> String {
    let text = ad.lookup(attr).map(expr_to_string).unwrap_or_default();
    format!("The job attribute {attr} expression '{text}' evaluated to TRUE")
}

fn is_true(ad: &ClassAd, attr: &str, env: &dyn Env) -> bool {
    matches!(ad.eval_attr(attr, env), Value::Bool(true))
}

/// What the job's exit policy makes of an exit, evaluated on the job as
/// the exit leaves it (`exited`: its ad with the exit applied): held when
/// `OnExitHold` is true; back in the queue when `OnExitRemove` is false
/// (anything else, undefined included, lets it complete).
pub fn on_exit(exited: &ClassAd, env: &dyn Env) -> Option<OnExit> {
    if is_true(exited, "OnExitHold", env) {
        return Some(OnExit::Held {
            reason: fired(exited, "OnExitHold"),
        });
    }
    matches!(exited.eval_attr("OnExitRemove", env), Value::Bool(false)).then_some(OnExit::Requeued)
}

/// Whether `ad` is a no-op job (`IsNoopJob` true): the queue completes it
/// without running it, as HTCondor's schedd does.
pub fn is_noop(ad: &ClassAd, env: &dyn Env) -> bool {
    is_true(ad, "IsNoopJob", env)
}

/// The exit a no-op job is completed with at `at`: `NoopJobExitSignal`, or
/// `NoopJobExitCode` (which wins when both are given, as in HTCondor's
/// schedd), else code 0; it ran no time and its exit policy is not asked.
pub fn noop_exit(id: JobId, ad: &ClassAd, at: i64, env: &dyn Env) -> JobEvent {
    let int = |name: &str| match ad.eval_attr(name, env) {
        Value::Int(n) => Some(n),
        _ => None,
    };
    let (code, signal) = match (int("NoopJobExitCode"), int("NoopJobExitSignal")) {
        (Some(c), _) => (Some(c), None),
        (None, Some(s)) => (None, Some(s)),
        (None, None) => (Some(0), None),
    };
    JobEvent::Exited {
        at,
        id,
        code,
        signal,
        reason: Some("a no-op job (IsNoopJob): completed without running".into()),
        duration: Some(0),
        on_exit: None,
    }
}

impl Queue {
    /// One periodic evaluation of every job's policy at `at`: a held job
    /// whose `PeriodicRelease` is true is released; a job whose
    /// `PeriodicRemove` is true is removed; an idle or running one whose
    /// `PeriodicHold` is true is held (code 3, the job's policy). A job
    /// another program manages (the router's sources) is left to it.
    pub fn periodic(&self, at: i64, env: &dyn Env) -> Vec<JobEvent> {
        self.jobs
            .iter()
            .filter(|(_, j)| !j.externally_managed())
            .filter_map(|(id, j)| periodic_one(*id, j, at, env))
            .collect()
    }
}

fn periodic_one(id: JobId, job: &Job, at: i64, env: &dyn Env) -> Option<JobEvent> {
    let ad = &job.ad;
    let status = job.status()?;
    // A no-op job released from a hold (or one whose IsNoopJob became true).
    if status == Status::Idle && job.lease.is_none() && is_noop(ad, env) {
        return Some(noop_exit(id, ad, at, env));
    }
    if status == Status::Held && is_true(ad, "PeriodicRelease", env) {
        return Some(JobEvent::Released {
            at,
            id,
            reason: fired(ad, "PeriodicRelease"),
        });
    }
    if !matches!(status, Status::Removed | Status::Completed) && is_true(ad, "PeriodicRemove", env)
    {
        return Some(JobEvent::Removed {
            at,
            id,
            reason: fired(ad, "PeriodicRemove"),
        });
    }
    if matches!(status, Status::Idle | Status::Running) && is_true(ad, "PeriodicHold", env) {
        return Some(JobEvent::Held {
            at,
            id,
            reason: fired(ad, "PeriodicHold"),
            code: hold_code::JOB_POLICY,
            subcode: 0,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::{FixedEnv, parse_ad};
    use crate::schedd::limits::Limits;
    use crate::schedd::queue::SubmitCtx;

    fn queue(ad: &str) -> Queue {
        let mut q = Queue::replay(&[]);
        let ctx = SubmitCtx {
            at: 100,
            owner: "alice",
            domain: "example",
            schedd: "ap",
        };
        for e in q
            .submit(ctx, vec![parse_ad(ad).expect("ad")], None)
            .expect("submit")
        {
            q.apply(&e);
        }
        q
    }

    const ID: JobId = JobId {
        cluster: 1,
        proc: 0,
    };

    #[test]
    fn an_exit_is_held_requeued_or_completed_as_the_job_says() {
        let env = FixedEnv::new(0);
        let ad = |t: &str| parse_ad(t).expect("ad");
        assert_eq!(
            on_exit(&ad("[OnExitHold = ExitCode != 0; ExitCode = 2]"), &env),
            Some(OnExit::Held {
                reason: "The job attribute OnExitHold expression 'ExitCode != 0' evaluated to TRUE"
                    .into()
            })
        );
        let retries = "[JobMaxRetries = 3; ExitCode = 1; \
                       OnExitRemove = NumJobCompletions > JobMaxRetries || ExitCode is 0";
        assert_eq!(
            on_exit(&ad(&format!("{retries}; NumJobCompletions = 3]")), &env),
            Some(OnExit::Requeued)
        );
        assert_eq!(
            on_exit(&ad(&format!("{retries}; NumJobCompletions = 4]")), &env),
            None
        );
        assert_eq!(on_exit(&ad("[OnExitRemove = Missing]"), &env), None);
    }

    #[test]
    fn a_noop_job_completes_at_submit_with_its_code_or_signal_and_is_never_handed_out() {
        let env = FixedEnv::new(100);
        let q = queue("[Cmd = \"/bin/true\"; IsNoopJob = true; NoopJobExitCode = 3]");
        // Completed: out of the queue, in the history.
        assert!(q.jobs.is_empty());
        let done = q.history.back().expect("in the history");
        let text = |a: &str| done.lookup(a).map(crate::classad::unparse::expr_to_string);
        assert_eq!(text("JobStatus").as_deref(), Some("4"));
        assert_eq!(text("ExitCode").as_deref(), Some("3"));
        let ad = |t: &str| parse_ad(t).expect("ad");
        assert!(matches!(
            noop_exit(ID, &ad("[NoopJobExitSignal = 9]"), 5, &env),
            JobEvent::Exited {
                code: None,
                signal: Some(9),
                duration: Some(0),
                ..
            }
        ));
        assert!(matches!(
            noop_exit(
                ID,
                &ad("[NoopJobExitSignal = 9; NoopJobExitCode = 2]"),
                5,
                &env
            ),
            JobEvent::Exited {
                code: Some(2),
                signal: None,
                ..
            }
        ));
        // Held at submit: it waits; no node is given it.
        let q = queue("[Cmd = \"/bin/true\"; IsNoopJob = ProcId == 0; JobStatus = 5]");
        assert_eq!(q.jobs[&ID].status(), Some(Status::Held));
        let slot = ad("[Name = \"slot1@n\"; Requirements = true]");
        assert!(
            q.fetch(100, (&slot, "t"), 60, &Limits::default(), &env)
                .is_none()
        );
    }

    #[test]
    fn periodic_expressions_release_remove_and_hold() {
        let env = FixedEnv::new(500);
        let q = queue("[Cmd = \"/bin/true\"; PeriodicHold = time() > QDate + 300]");
        let held = q.periodic(500, &env);
        assert!(
            matches!(&held[..], [JobEvent::Held { code: 3, reason, .. }]
                if reason.contains("PeriodicHold expression 'time() > QDate + 300'")),
            "{held:?}"
        );
        let mut q = q;
        q.apply(&held[0]);
        assert!(
            q.periodic(600, &env).is_empty(),
            "a held job is not held again"
        );
        let q = queue("[Cmd = \"/bin/true\"; PeriodicRemove = true; PeriodicHold = true]");
        assert!(matches!(
            &q.periodic(500, &env)[..],
            [JobEvent::Removed { id: ID, .. }]
        ));
        let mut q = queue("[Cmd = \"/bin/true\"; PeriodicRelease = NumHolds < 2]");
        q.apply(&JobEvent::Held {
            at: 200,
            id: ID,
            reason: "by hand".into(),
            code: 1,
            subcode: 0,
        });
        assert!(matches!(
            &q.periodic(500, &env)[..],
            [JobEvent::Released { .. }]
        ));
    }
}
