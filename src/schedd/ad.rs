//! The schedd's own ad (`MyType = "Scheduler"`), as `roost status
//! -schedd` shows it and schedd cron jobs merge into: its name and times
//! and the queue's totals, counted as HTCondor's schedd counts them (idle
//! and running jobs of the scheduler and local universes apart from the
//! others; grid jobs in the totals). Pure.

use std::collections::BTreeSet;

use super::event::Status;
use super::queue::{Queue, int_of, str_of};
use crate::classad::{ClassAd, Value};

/// Who the schedd is: the ad's fixed part.
#[derive(Clone, Debug)]
pub struct Identity {
    /// `SCHEDD_NAME` (`Name`).
    pub name: String,
    /// The host's full name (`Machine`).
    pub machine: String,
    /// When the daemon started (`DaemonStartTime`).
    pub started: i64,
    /// When it last read its configuration (`DaemonLastReconfigTime`).
    pub reconfigured: i64,
    /// Where its socket is (`RoostScheddSocket`).
    pub socket: String,
}

/// The queue's totals, by the ad's attribute names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// `TotalJobAds`: every job in the queue.
    pub ads: i64,
    /// `TotalIdleJobs`, `TotalRunningJobs`: jobs for nodes and grid jobs.
    pub idle: i64,
    /// See `idle`.
    pub running: i64,
    /// `TotalHeldJobs`.
    pub held: i64,
    /// `TotalRemovedJobs`.
    pub removed: i64,
    /// `TotalSchedulerJobsIdle`, `TotalSchedulerJobsRunning` (universe 7).
    pub scheduler: (i64, i64),
    /// `TotalLocalJobsIdle`, `TotalLocalJobsRunning` (universe 12).
    pub local: (i64, i64),
    /// `NumUsers`: owners with a job in the queue.
    pub users: i64,
}

impl Totals {
    /// Counts `queue`.
    pub fn of(queue: &Queue) -> Totals {
        let mut t = Totals::default();
        let mut owners = BTreeSet::new();
        for job in queue.jobs.values() {
            t.ads += 1;
            if let Some(o) = str_of(&job.ad, "Owner") {
                owners.insert(o);
            }
            let own = match int_of(&job.ad, "JobUniverse") {
                Some(7) => Some(&mut t.scheduler),
                Some(12) => Some(&mut t.local),
                _ => None,
            };
            match (job.status(), own) {
                (Some(Status::Idle), Some(pair)) => pair.0 += 1,
                (Some(Status::Running), Some(pair)) => pair.1 += 1,
                (Some(Status::Idle), None) => t.idle += 1,
                (Some(Status::Running), None) => t.running += 1,
                (Some(Status::Held), _) => t.held += 1,
                (Some(Status::Removed), _) => t.removed += 1,
                _ => {}
            }
        }
        t.users = i64::try_from(owners.len()).unwrap_or(i64::MAX);
        t
    }
}

/// The schedd's ad: `who` with the queue's `totals`.
pub fn schedd_ad(who: &Identity, totals: &Totals) -> ClassAd {
    let mut ad = ClassAd::new();
    let mut put = |name: &str, v: Value| ad.insert_value(name, v);
    put("MyType", Value::from("Scheduler"));
    put("Name", Value::from(who.name.as_str()));
    put("Machine", Value::from(who.machine.as_str()));
    put("ScheddName", Value::from(who.name.as_str()));
    put("RoostScheddSocket", Value::from(who.socket.as_str()));
    put("RoostVersion", Value::from(env!("CARGO_PKG_VERSION")));
    put("DaemonStartTime", Value::Int(who.started));
    put("DaemonLastReconfigTime", Value::Int(who.reconfigured));
    put("TotalJobAds", Value::Int(totals.ads));
    put("TotalIdleJobs", Value::Int(totals.idle));
    put("TotalRunningJobs", Value::Int(totals.running));
    put("TotalHeldJobs", Value::Int(totals.held));
    put("TotalRemovedJobs", Value::Int(totals.removed));
    put("TotalSchedulerJobsIdle", Value::Int(totals.scheduler.0));
    put("TotalSchedulerJobsRunning", Value::Int(totals.scheduler.1));
    put("TotalLocalJobsIdle", Value::Int(totals.local.0));
    put("TotalLocalJobsRunning", Value::Int(totals.local.1));
    put("NumUsers", Value::Int(totals.users));
    ad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;
    use crate::schedd::queue::SubmitCtx;

    #[test]
    fn totals_count_as_htcondors_schedd_does() {
        let mut q = Queue::replay_keeping(10, &[]);
        let mut submit = |owner: &str, ad: &str| {
            let ctx = SubmitCtx {
                at: 100,
                owner,
                domain: "d",
                schedd: "s",
            };
            let ad = parse_ad(ad).expect("ad");
            for e in q.submit(ctx, vec![ad], None).expect("submits") {
                q.apply(&e);
            }
        };
        submit("a", "[ Cmd = \"/bin/true\" ]");
        submit("a", "[ Cmd = \"/bin/true\"; JobStatus = 5 ]");
        submit("b", "[ Cmd = \"/bin/true\"; JobUniverse = 7 ]");
        submit("b", "[ Cmd = \"/bin/true\"; JobUniverse = 12 ]");
        submit("b", "[ Cmd = \"/bin/true\"; JobUniverse = 9 ]");
        let t = Totals::of(&q);
        assert_eq!(
            t,
            Totals {
                ads: 5,
                idle: 2,
                running: 0,
                held: 1,
                removed: 0,
                scheduler: (1, 0),
                local: (1, 0),
                users: 2,
            }
        );
        let who = Identity {
            name: "s".into(),
            machine: "m".into(),
            started: 1,
            reconfigured: 2,
            socket: "/x".into(),
        };
        let ad = schedd_ad(&who, &t);
        let env = crate::classad::FixedEnv::new(0);
        for (attr, v) in [
            ("MyType", Value::from("Scheduler")),
            ("TotalIdleJobs", Value::Int(2)),
            ("TotalHeldJobs", Value::Int(1)),
            ("TotalSchedulerJobsIdle", Value::Int(1)),
            ("NumUsers", Value::Int(2)),
        ] {
            assert!(ad.eval_attr(attr, &env).identical(&v), "{attr}");
        }
    }
}
