//! When a manager's cron jobs run, decided from the clock it is given:
//! `Periodic` jobs every period counted from one start to the next (a run
//! still going at the next start is killed when the job says `_KILL`, and
//! that start is skipped otherwise), `WaitForExit` jobs a period after the
//! last run ended, `OneShot` jobs once (again after a reconfig when
//! `_RECONFIG_RERUN`), `OnDemand` jobs when asked. A job starts only while
//! the running jobs' loads and its own stay within the maximum (or nothing
//! runs). Pure: the cron actor (`actors::cron`) starts and kills what
//! [`Schedule::due`] says.

use super::config::{CronJob, Mode};

/// What to do with a job now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Start job `i`.
    Start(usize),
    /// Kill job `i`'s run (it is still going at its next start).
    Kill(usize),
}

#[derive(Clone, Debug, Default)]
struct State {
    running: bool,
    last_start: Option<i64>,
    last_end: Option<i64>,
    /// A OneShot that has run, an OnDemand not asked for.
    done: bool,
    asked: bool,
    /// A kill was asked and the run has not ended yet.
    killing: bool,
}

/// What a reconfig does with a manager's jobs ([`Schedule::reconfig`]).
#[derive(Clone, Debug)]
pub struct Reconfigured {
    /// The new jobs' schedule.
    pub schedule: Schedule,
    /// For each new job, the old job that goes on as it (its run and
    /// schedule kept), or `None` for a job to start as new.
    pub kept: Vec<Option<usize>>,
    /// The old jobs retired: dropped, or changed and started again as new.
    pub retired: Vec<usize>,
}

/// Whether a reconfig leaves job `old` going on as `new` (its name,
/// command and schedule the same).
fn same_job(new: &CronJob, old: &CronJob) -> bool {
    new.name.eq_ignore_ascii_case(&old.name)
        && new.executable == old.executable
        && new.args == old.args
        && new.builtin == old.builtin
        && new.mode == old.mode
        && new.period == old.period
}

/// The schedule of one manager's jobs.
#[derive(Clone, Debug)]
pub struct Schedule {
    jobs: Vec<(Mode, u64, f64, bool)>,
    state: Vec<State>,
    max_load: f64,
}

impl Schedule {
    /// The schedule of `jobs` under `max_load`, none run yet.
    pub fn new(jobs: &[CronJob], max_load: f64) -> Schedule {
        Schedule {
            jobs: jobs
                .iter()
                .map(|j| (j.mode, j.period, j.job_load, j.kill))
                .collect(),
            state: vec![State::default(); jobs.len()],
            max_load,
        }
    }

    /// Asks for an `OnDemand` (or any) job `i` to run at the next chance.
    pub fn ask(&mut self, i: usize) {
        if let Some(s) = self.state.get_mut(i) {
            s.asked = true;
        }
    }

    /// Job `i` started at `now` ([`Schedule::due`] counts its own starts;
    /// also for a run found going at a restart).
    pub fn started(&mut self, i: usize, now: i64) {
        if let Some(s) = self.state.get_mut(i) {
            s.running = true;
            s.last_start = Some(now);
            s.asked = false;
            if self.jobs[i].0 == Mode::OneShot {
                s.done = true;
            }
        }
    }

    /// Job `i`'s last run, as the log of the daemon's last run says
    /// (started at `start`, ended at `end` if it did): a OneShot that ran is
    /// not run again, a period goes on from its last start. A WaitForExit
    /// job (a monitor meant to run on) starts again at once: its run ended
    /// with the last daemon.
    pub fn resume(&mut self, i: usize, start: i64, end: Option<i64>) {
        if self.jobs.get(i).is_none_or(|j| j.0 == Mode::WaitForExit) {
            return;
        }
        self.started(i, start);
        self.ended(i, end.unwrap_or(start).max(start));
    }

    /// A reconfig from `old` jobs (this schedule's) to `new` ones under
    /// `max_load`: a job the new configuration keeps as it was (same name,
    /// command and schedule) goes on with its run and schedule; one dropped
    /// or changed is retired, and a changed one starts again as new. A
    /// `OneShot` job kept runs again when it says `_RECONFIG_RERUN`.
    pub fn reconfig(&self, old: &[CronJob], new: &[CronJob], max_load: f64) -> Reconfigured {
        let mut schedule = Schedule::new(new, max_load);
        let mut taken = vec![false; old.len()];
        let mut kept = Vec::with_capacity(new.len());
        for (i, job) in new.iter().enumerate() {
            let k = (old.iter().enumerate()).position(|(k, o)| !taken[k] && same_job(job, o));
            if let Some(k) = k {
                taken[k] = true;
                if let (Some(s), Some(o)) = (schedule.state.get_mut(i), self.state.get(k)) {
                    *s = o.clone();
                }
                if job.reconfig_rerun {
                    schedule.state[i].done = false;
                }
            }
            kept.push(k);
        }
        let retired = (0..old.len()).filter(|&k| !taken[k]).collect();
        Reconfigured {
            schedule,
            kept,
            retired,
        }
    }

    /// Whether any run is going.
    pub fn running(&self) -> bool {
        self.state.iter().any(|s| s.running)
    }

    /// Job `i`'s run ended at `now`.
    pub fn ended(&mut self, i: usize, now: i64) {
        if let Some(s) = self.state.get_mut(i) {
            s.running = false;
            s.killing = false;
            s.last_end = Some(now);
        }
    }

    /// When job `i` is next due to start (`None`: not on its own).
    fn next_start(&self, i: usize) -> Option<i64> {
        let (mode, period, _, _) = self.jobs[i];
        let s = &self.state[i];
        let period = i64::try_from(period).unwrap_or(i64::MAX);
        if s.asked {
            return Some(i64::MIN);
        }
        match mode {
            Mode::Periodic => Some(s.last_start.map_or(i64::MIN, |t| t.saturating_add(period))),
            Mode::WaitForExit => match (s.last_start, s.last_end) {
                (None, _) => Some(i64::MIN),
                (Some(_), Some(end)) if !s.running => Some(end.saturating_add(period)),
                _ => None,
            },
            Mode::OneShot => (!s.done).then_some(i64::MIN),
            Mode::OnDemand => None,
        }
    }

    /// What to do at `now`, in job order: kills of hung `Periodic` runs
    /// with `_KILL`, and the starts the load allows, which count as started
    /// at `now`. The caller reports each run's end ([`Schedule::ended`]).
    pub fn due(&mut self, now: i64) -> Vec<Action> {
        let mut out = Vec::new();
        let mut load: f64 = (0..self.jobs.len())
            .filter(|&i| self.state[i].running)
            .map(|i| self.jobs[i].2)
            .sum();
        for i in 0..self.jobs.len() {
            let Some(at) = self.next_start(i) else {
                continue;
            };
            if at > now {
                continue;
            }
            let (mode, _, job_load, kill) = self.jobs[i];
            let s = &mut self.state[i];
            if s.running {
                if mode == Mode::Periodic && kill && !s.killing {
                    s.killing = true;
                    out.push(Action::Kill(i));
                } else if mode == Mode::Periodic && !kill {
                    // Skipped: the next start is a period after this one.
                    s.last_start = Some(at.max(now));
                }
                continue;
            }
            let nothing_runs = load == 0.0;
            if nothing_runs || load + job_load <= self.max_load + 1e-9 {
                load += job_load;
                out.push(Action::Start(i));
                self.started(i, now);
            }
        }
        out
    }

    /// The earliest time something is due after `now`, if any (for the
    /// actor's timer).
    pub fn next_wake(&self, now: i64) -> Option<i64> {
        (0..self.jobs.len())
            .filter_map(|i| self.next_start(i))
            .map(|t| t.max(now))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::argenv::EnvList;

    fn job(mode: Mode, period: u64, load: f64, kill: bool) -> CronJob {
        CronJob {
            name: "j".into(),
            executable: "/bin/true".into(),
            args: Vec::new(),
            env: EnvList::new(),
            cwd: None,
            mode,
            period,
            prefix: String::new(),
            slots: Vec::new(),
            kill,
            reconfig: false,
            reconfig_rerun: false,
            job_load: load,
            condition: None,
            metrics: Vec::new(),
            timeout: None,
            builtin: None,
        }
    }

    #[test]
    fn periodic_counts_from_starts_and_wait_for_exit_from_ends() {
        let mut s = Schedule::new(
            &[
                job(Mode::Periodic, 10, 0.01, false),
                job(Mode::WaitForExit, 10, 0.01, false),
            ],
            0.1,
        );
        assert_eq!(s.due(0), [Action::Start(0), Action::Start(1)]);
        s.ended(0, 4);
        s.ended(1, 4);
        assert_eq!(s.due(9), []);
        assert_eq!(s.next_wake(9), Some(10));
        assert_eq!(s.due(10), [Action::Start(0)]);
        s.ended(0, 11);
        assert_eq!(s.due(14), [Action::Start(1)]);
    }

    #[test]
    fn a_hung_periodic_run_is_killed_with_kill_and_skipped_without() {
        let mut s = Schedule::new(
            &[
                job(Mode::Periodic, 10, 0.01, true),
                job(Mode::Periodic, 10, 0.01, false),
            ],
            1.0,
        );
        assert_eq!(s.due(0), [Action::Start(0), Action::Start(1)]);
        assert_eq!(s.due(10), [Action::Kill(0)]);
        assert_eq!(s.due(11), []);
        s.ended(0, 12);
        assert_eq!(s.due(12), [Action::Start(0)]);
        s.ended(1, 15);
        assert_eq!(s.due(15), []);
        assert_eq!(s.due(20), [Action::Start(1)]);
    }

    #[test]
    fn one_shot_runs_once_until_a_reconfig_reruns_it_and_on_demand_when_asked() {
        let jobs = [
            job(Mode::OneShot, 0, 0.01, false),
            job(Mode::OnDemand, 0, 0.01, false),
        ];
        let mut s = Schedule::new(&jobs, 0.1);
        assert_eq!(s.due(0), [Action::Start(0)]);
        s.ended(0, 1);
        assert_eq!(s.due(100), []);
        // A reconfig without `_RECONFIG_RERUN` leaves it done; with, reruns.
        s = s.reconfig(&jobs, &jobs, 0.1).schedule;
        assert_eq!(s.due(100), []);
        let mut again = jobs.clone();
        again[0].reconfig_rerun = true;
        s = s.reconfig(&jobs, &again, 0.1).schedule;
        s.ask(1);
        assert_eq!(s.due(101), [Action::Start(0), Action::Start(1)]);
        s.ended(0, 102);
        s.ended(1, 102);
        assert_eq!(s.due(500), []);
        assert_eq!(s.next_wake(500), None);
    }

    #[test]
    fn a_restart_resumes_from_the_last_runs_but_monitors_start_at_once() {
        let mut s = Schedule::new(
            &[
                job(Mode::OneShot, 0, 0.01, false),
                job(Mode::Periodic, 10, 0.01, false),
                job(Mode::WaitForExit, 3600, 0.01, false),
            ],
            0.1,
        );
        for i in 0..3 {
            s.resume(i, 100, Some(101));
        }
        assert_eq!(s.due(105), [Action::Start(2)]);
        assert_eq!(s.due(110), [Action::Start(1)]);
        s.ended(1, 111);
        s.ended(2, 200);
        // The OneShot that ran before the restart never runs again.
        assert!(!s.due(10_000).contains(&Action::Start(0)));
    }

    #[test]
    fn the_job_load_holds_starts_back_but_never_all_of_them() {
        let mut s = Schedule::new(
            &[
                job(Mode::OneShot, 0, 0.6, false),
                job(Mode::OneShot, 0, 0.6, false),
                job(Mode::OneShot, 0, 5.0, false),
            ],
            1.0,
        );
        assert_eq!(s.due(0), [Action::Start(0)]);
        s.ended(0, 1);
        assert_eq!(s.due(1), [Action::Start(1)]);
        s.ended(1, 2);
        // Heavier than the maximum: it runs when nothing else does.
        assert_eq!(s.due(2), [Action::Start(2)]);
    }

    #[test]
    fn a_reconfig_keeps_unchanged_jobs_going_and_retires_the_rest() {
        let named = |name: &str, mode, period| CronJob {
            name: name.into(),
            ..job(mode, period, 0.01, false)
        };
        let old = [
            named("keep", Mode::Periodic, 10),
            named("drop", Mode::Periodic, 10),
            named("change", Mode::Periodic, 10),
        ];
        let mut s = Schedule::new(&old, 1.0);
        assert_eq!(
            s.due(0),
            [Action::Start(0), Action::Start(1), Action::Start(2)]
        );
        s.ended(0, 1);
        let new = [
            named("Change", Mode::Periodic, 20),
            named("KEEP", Mode::Periodic, 10),
            named("fresh", Mode::OneShot, 0),
        ];
        let r = s.reconfig(&old, &new, 1.0);
        // Names match without case; a new period is a changed job.
        assert_eq!(r.kept, [None, Some(0), None]);
        assert_eq!(r.retired, [1, 2]);
        let mut s = r.schedule;
        // The kept job's period goes on from its start at 0; the changed
        // and the new job start at once.
        assert_eq!(s.due(5), [Action::Start(0), Action::Start(2)]);
        assert_eq!(s.due(10), [Action::Start(1)]);
    }
}
