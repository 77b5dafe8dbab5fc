//! Daemon ClassAd hooks as actors: a `CronManager` per manager (startd
//! cron, benchmarks) keeps the schedule (`cron::schedule`) on a timer and
//! tells its jobs when to start and when a hung run is killed; a
//! `CronJobActor` per job runs it (in its own process group, as the hooks'
//! user, its output followed as it comes and capped per ad) and records its
//! life as the log's actor `cron.<name>` or `benchmark.<name>`: each run's
//! `Started`, the ads each `-` line (or the exit) ended as `Published`,
//! and `Ended` (with why Roost killed it, if it did). A published ad is in
//! the log before any slot sees it (ahead of every decision made on it,
//! flushed with the first of them): it goes into its host's published ads
//! (the startd's `Shared::cron`), and the startd's node has every slot
//! evaluate its policy again at once. Shared by the daemons that run cron
//! jobs (the startd, the schedd), each through its [`CronHost`].

use std::rc::Rc;
use std::time::Duration;

use actix::prelude::*;
use tracing::{debug, info, warn};

pub use super::cron_host::{CronBoard, CronHost};
use crate::classad::{ClassAd, FixedEnv, Value};
use crate::cron::config::{CronJob, CronSettings, Manager, Mode};
use crate::cron::event::{CronEvent, CronState, PublishedAd};
use crate::cron::merge::Published;
use crate::cron::metrics::{self, Metrics};
use crate::cron::schedule::{Action, Schedule};
use crate::hooks::follow::{self, CronRun, Piece};
use crate::hooks::{Exit, hup, kill_group, term_group};

/// The most bytes of output one ad may take; lines past it are dropped up
/// to the ad's separator (and the drop reported).
pub const AD_CAP: usize = 256 * 1024;

/// How long a run told to stop (SIGTERM to its group) has before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// A cron job published: slots should evaluate their policy again.
#[derive(Message, Clone, Copy, Debug)]
#[rtype(result = "()")]
pub struct CronChanged;

/// Run these `OnDemand` jobs (by name, any case; empty: all of them) at
/// the next chance; answered with the names asked for that exist.
#[derive(Message, Clone, Debug)]
#[rtype(result = "Vec<String>")]
pub struct RunNow(pub Vec<String>);

/// A reconfiguration: the manager's jobs as the new configuration gives
/// them.
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub struct NewCron(pub CronSettings);

/// Tells the asker when every run that [`RunNow`] started has ended.
#[derive(Message)]
#[rtype(result = "()")]
pub struct WhenIdle(pub Recipient<CronIdle>);

/// Every run of the manager has ended.
#[derive(Message, Clone, Copy, Debug)]
#[rtype(result = "()")]
pub struct CronIdle;

#[derive(Message)]
#[rtype(result = "()")]
struct Start;

#[derive(Message)]
#[rtype(result = "()")]
struct Kill(&'static str);

/// The job is dropped: its run killed for this reason, then its actor
/// stops, telling the manager nothing more.
#[derive(Message)]
#[rtype(result = "()")]
struct Retire(&'static str);

/// A reconfig kept the job: its new place in the list and its knobs.
#[derive(Message)]
#[rtype(result = "()")]
struct Renumber(usize, CronJob, Option<String>);

#[derive(Message)]
#[rtype(result = "()")]
struct RunEnded(usize);

#[derive(Message)]
#[rtype(result = "()")]
struct Output(u64, Piece);

/// The log's name of `manager`'s jobs (`cron`, `benchmark`).
pub fn kind(manager: Manager) -> &'static str {
    match manager {
        Manager::StartdCron | Manager::ScheddCron => "cron",
        Manager::Benchmarks => "benchmark",
    }
}

/// One manager's jobs and their schedule.
pub struct CronManager {
    shared: Rc<dyn CronHost>,
    board: CronBoard,
    settings: CronSettings,
    schedule: Schedule,
    jobs: Vec<Addr<CronJobActor>>,
    /// Told of each publication.
    changed: Recipient<CronChanged>,
    /// What the log said of the jobs when the daemon started (`None`
    /// once used, or when the log's runs are of another boot).
    last: Option<CronState>,
    wake: Option<SpawnHandle>,
    idle_waiters: Vec<Recipient<CronIdle>>,
}

impl CronManager {
    /// The manager of `settings`' jobs; `last` is what the log said of
    /// them at start, when its runs were in this boot of the machine.
    pub fn new(
        shared: &Rc<dyn CronHost>,
        board: &CronBoard,
        settings: CronSettings,
        changed: Recipient<CronChanged>,
        last: Option<CronState>,
    ) -> CronManager {
        let schedule = Schedule::new(&settings.jobs, settings.max_job_load);
        board.update(|p| register(p, &settings));
        CronManager {
            shared: Rc::clone(shared),
            board: Rc::clone(board),
            settings,
            schedule,
            jobs: Vec::new(),
            changed,
            last,
            wake: None,
            idle_waiters: Vec::new(),
        }
    }

    fn job_actor(
        &self,
        i: usize,
        job: &CronJob,
        metrics: Metrics,
        config_val: Option<String>,
        ctx: &Context<Self>,
    ) -> Addr<CronJobActor> {
        CronJobActor {
            shared: Rc::clone(&self.shared),
            board: Rc::clone(&self.board),
            manager: self.settings.manager,
            actor: crate::cron::event::actor(kind(self.settings.manager), &job.name),
            index: Some(i),
            job: job.clone(),
            owner: ctx.address(),
            changed: self.changed.clone(),
            run: None,
            serial: 0,
            metrics,
            config_val,
        }
        .start()
    }

    /// Says how many of its jobs are resource monitors (slots then say
    /// who they are).
    fn tell_monitors(&self) {
        let n = (self.settings.jobs.iter())
            .filter(|j| !j.metrics.is_empty())
            .count();
        (self.board).update(|p| p.set_monitors(kind(self.settings.manager), n));
    }

    /// Starts what is due, kills what must go, and sleeps until the next.
    fn tick(&mut self, ctx: &mut Context<Self>) {
        let now = self.shared.now();
        for action in self.schedule.due(now) {
            match action {
                Action::Start(i) => self.jobs[i].do_send(Start),
                Action::Kill(i) => self.jobs[i].do_send(Kill("still running at its next period")),
            }
        }
        if let Some(h) = self.wake.take() {
            ctx.cancel_future(h);
        }
        if let Some(at) = self.schedule.next_wake(now) {
            let secs = u64::try_from(at.saturating_sub(now)).unwrap_or(0).max(1);
            self.wake = Some(ctx.run_later(Duration::from_secs(secs), |act, ctx| {
                act.wake = None;
                act.tick(ctx);
            }));
        }
    }
}

impl Actor for CronManager {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        for p in &self.settings.problems {
            warn!(message = "Cron configuration problem.", manager = self.settings.manager.prefix(), problem = %p);
        }
        let last = self.last.take().unwrap_or_default();
        let kind = kind(self.settings.manager);
        self.tell_monitors();
        for (i, job) in self.settings.jobs.clone().iter().enumerate() {
            let actor = crate::cron::event::actor(kind, &job.name);
            if let Some(st) = last.jobs.get(&actor)
                && let Some(t) = st.last_start
            {
                self.schedule.resume(i, t, st.last_end);
            }
            let metrics =
                (last.jobs.get(&actor)).map_or_else(Metrics::default, |st| st.metrics.clone());
            let addr = self.job_actor(i, job, metrics, self.settings.config_val.clone(), ctx);
            self.jobs.push(addr);
        }
        self.tick(ctx);
    }

    fn stopping(&mut self, _: &mut Context<Self>) -> Running {
        for j in &self.jobs {
            j.do_send(Retire("the daemon stops"));
        }
        Running::Stop
    }
}

impl Handler<RunEnded> for CronManager {
    type Result = ();

    fn handle(&mut self, RunEnded(i): RunEnded, ctx: &mut Context<Self>) {
        self.schedule.ended(i, self.shared.now());
        // What waited for the load starts first: idle means none is left.
        self.tick(ctx);
        if !self.schedule.running() {
            for w in self.idle_waiters.drain(..) {
                w.do_send(CronIdle);
            }
        }
    }
}

impl Handler<RunNow> for CronManager {
    type Result = MessageResult<RunNow>;

    fn handle(&mut self, RunNow(names): RunNow, ctx: &mut Context<Self>) -> Self::Result {
        let mut asked = Vec::new();
        for (i, job) in self.settings.jobs.iter().enumerate() {
            let wanted = if names.is_empty() {
                job.mode == Mode::OnDemand
            } else {
                names.iter().any(|n| n.eq_ignore_ascii_case(&job.name))
            };
            if wanted {
                self.schedule.ask(i);
                asked.push(job.name.clone());
            }
        }
        self.tick(ctx);
        MessageResult(asked)
    }
}

impl Handler<WhenIdle> for CronManager {
    type Result = ();

    fn handle(&mut self, WhenIdle(who): WhenIdle, _: &mut Context<Self>) {
        if self.schedule.running() {
            self.idle_waiters.push(who);
        } else {
            who.do_send(CronIdle);
        }
    }
}

impl Handler<NewCron> for CronManager {
    type Result = ();

    fn handle(&mut self, NewCron(settings): NewCron, ctx: &mut Context<Self>) {
        // The schedule decides which jobs go on (renumbered; SIGHUP with
        // `_RECONFIG`) and which are retired (run killed, ads withdrawn).
        let r = self
            .schedule
            .reconfig(&self.settings.jobs, &settings.jobs, settings.max_job_load);
        let mut jobs = Vec::with_capacity(settings.jobs.len());
        for (i, (job, kept)) in settings.jobs.iter().zip(&r.kept).enumerate() {
            match kept {
                Some(k) => {
                    self.jobs[*k].do_send(Renumber(i, job.clone(), settings.config_val.clone()));
                    jobs.push(self.jobs[*k].clone());
                }
                None => jobs.push(self.job_actor(
                    i,
                    job,
                    Metrics::default(),
                    settings.config_val.clone(),
                    ctx,
                )),
            }
        }
        self.board.update(|p| register(p, &settings));
        let kind = kind(settings.manager);
        let mut gone = Vec::new();
        for &k in &r.retired {
            self.jobs[k].do_send(Retire("reconfig"));
            gone.push(crate::cron::event::actor(kind, &self.settings.jobs[k].name));
        }
        if !gone.is_empty() {
            (self.board).update(|p| p.retain_jobs(|j| !gone.iter().any(|g| g == j)));
            self.changed.do_send(CronChanged);
        }
        info!(
            message = "Cron jobs reconfigured.",
            manager = settings.manager.prefix(),
            jobs = settings.jobs.len(),
            retired = gone.len()
        );
        self.schedule = r.schedule;
        self.jobs = jobs;
        self.settings = settings;
        self.tell_monitors();
        self.tick(ctx);
    }
}

/// One cron job: runs it when told, records and publishes what it prints.
pub struct CronJobActor {
    shared: Rc<dyn CronHost>,
    board: CronBoard,
    manager: Manager,
    actor: String,
    /// Its place in the manager's list (`None`: retired).
    index: Option<usize>,
    job: CronJob,
    owner: Addr<CronManager>,
    changed: Recipient<CronChanged>,
    /// The run going: its pid, when it started, and why Roost is killing
    /// it, if it is.
    run: Option<(u32, std::time::Instant, Option<&'static str>)>,
    /// Counts runs, so a late piece of an old run is not taken for the
    /// new one's.
    serial: u64,
    /// What its reports added up to, when it is a resource monitor.
    metrics: Metrics,
    /// The manager's `<MGR>_CONFIG_VAL` (`None`: Roost's own reader).
    config_val: Option<String>,
}

impl Actor for CronJobActor {
    type Context = Context<Self>;
}

impl CronJobActor {
    /// Tells the manager its run ended (a retired job tells no one).
    fn tell_ended(&self) {
        if let Some(i) = self.index {
            self.owner.do_send(RunEnded(i));
        }
    }

    fn record(&self, e: CronEvent) {
        if let Err(err) = self.shared.record(&self.actor, vec![e]) {
            warn!(message = "Cannot record a cron event.", job = %self.actor, error = %err);
        }
    }

    /// The command line and environment of a run.
    fn command(&self) -> CronRun {
        let (path, args) = match self.job.builtin {
            Some(b) => (
                self.shared.roost_exe(),
                vec!["benchmark".to_string(), b.word().to_string()],
            ),
            None => (self.job.executable.clone(), self.job.args.clone()),
        };
        // HTCondor 23.9.6 gives its cron scripts no variables of its own
        // but the job's `_ENV` (and its process-tracking ones).
        let mgr = self.manager.prefix();
        let mut extra: Vec<(String, String)> = Vec::new();
        match &self.config_val {
            Some(v) => extra.push((format!("{mgr}_CONFIG_VAL"), v.clone())),
            // Unset: Roost's own reader, beside the daemon, reading the
            // daemon's configuration.
            None => {
                let own = self.shared.roost_exe().with_file_name("roost-config-val");
                if own.exists() {
                    extra.push((format!("{mgr}_CONFIG_VAL"), own.display().to_string()));
                    if let Some(root) = self.shared.config_root()
                        && !(self.shared.hook_env().vars()).any(|(k, _)| k == "CONDOR_CONFIG")
                    {
                        extra.push(("CONDOR_CONFIG".into(), root));
                    }
                }
            }
        }
        extra.extend(self.job.env.entries().iter().cloned());
        CronRun {
            path,
            args,
            cwd: self
                .job
                .cwd
                .clone()
                .unwrap_or_else(|| self.shared.log_dir()),
            env: self.shared.hook_env(),
            extra,
            user: self.shared.hook_user(),
        }
    }

    /// Whether `_CONDITION` (if any) holds in the machine's ad.
    fn condition_holds(&self) -> bool {
        let Some(c) = &self.job.condition else {
            return true;
        };
        let machine = self.shared.condition_ad();
        let env = FixedEnv::new(self.shared.now());
        matches!(machine.eval(c, &env), Value::Bool(true))
    }

    fn ended(&mut self, exit: Exit, stdout_bytes: u64) {
        let Some((pid, started, killed)) = self.run.take() else {
            return;
        };
        let elapsed = started.elapsed().as_secs_f64();
        match (&exit, killed) {
            (Exit::Code(0), None) => {
                debug!(message = "Cron job done.", job = %self.actor, pid, seconds = elapsed);
            }
            (_, Some(why)) => {
                warn!(message = "Cron job killed.", job = %self.actor, pid, why, exit = %exit);
            }
            _ => warn!(message = "Cron job failed; its output is still used.",
                job = %self.actor, pid, exit = %exit),
        }
        self.record(CronEvent::Ended {
            exit,
            killed: killed.map(str::to_string),
            elapsed,
            stdout_bytes,
        });
        self.tell_ended();
    }

    /// A block of output: its ads recorded, then published.
    fn block(&mut self, bytes: &[u8], dropped: usize) {
        let now = self.shared.now();
        let prefix = &self.job.prefix;
        let out = crate::cron::output::read(&self.job.name, prefix, bytes, now);
        let mut problems = out.problems;
        if dropped > 0 {
            problems.push(format!(
                "{dropped} bytes of output past {AD_CAP} bytes in one ad were dropped"
            ));
        }
        for p in &problems {
            warn!(message = "Cron job output problem.", job = %self.actor, problem = %p);
        }
        if out.ads.is_empty() && problems.is_empty() {
            return;
        }
        // The schedd's jobs and benchmarks publish one ad each, whatever
        // the separator's tag (HTCondor's ignore it): every block replaces it.
        let one = self.shared.one_ad_per_job() || self.manager == Manager::Benchmarks;
        let name_of = |a: &crate::cron::output::CronAd| {
            if one {
                self.job.name.clone()
            } else {
                a.name.clone()
            }
        };
        let ads: Vec<PublishedAd> = out
            .ads
            .iter()
            .map(|a| PublishedAd {
                name: name_of(a),
                ad: crate::classad::unparse::ad_to_string(&a.ad),
            })
            .collect();
        let now = self.shared.now();
        let usage = if self.job.metrics.is_empty() {
            Vec::new()
        } else {
            let reports: Vec<&ClassAd> = out.ads.iter().map(|a| &a.ad).collect();
            let targets = self.shared.targets();
            let env = FixedEnv::new(now);
            metrics::usage(&self.job.metrics, &reports, &self.job.slots, &targets, &env)
        };
        let e = CronEvent::Published {
            ads,
            problems,
            usage: usage.clone(),
        };
        // In the log ahead of any decision a slot makes on it: the log is
        // one order, and the decision's own durable append flushes this
        // record with it. No flush of its own: a cron job every few
        // seconds on an idle node costs no fsync.
        if let Err(err) = self.shared.record(&self.actor, vec![e]) {
            warn!(message = "Cannot record a cron job's ads; not publishing them.",
                job = %self.actor, error = %err);
            return;
        }
        if !out.ads.is_empty() {
            if !usage.is_empty() {
                self.metrics.apply(now, &usage);
            }
            self.board.update(|published| {
                for a in &out.ads {
                    let ad = metrics::strip(&self.job.metrics, &a.ad);
                    published.replace(&self.actor, &self.job.slots, &name_of(a), ad);
                }
                if !usage.is_empty() {
                    published.set_metrics(&self.actor, &self.metrics);
                }
            });
            self.changed.do_send(CronChanged);
        }
    }
}

impl Handler<Start> for CronJobActor {
    type Result = ();

    fn handle(&mut self, _: Start, ctx: &mut Context<Self>) {
        if self.run.is_some() {
            return;
        }
        if !self.condition_holds() {
            debug!(message = "Cron job's condition is false; not run.", job = %self.actor);
            self.tell_ended();
            return;
        }
        let run = self.command();
        let following = match follow::spawn(&run) {
            Ok(f) => f,
            Err(e) => {
                let reason = e.to_string();
                warn!(message = "Cron job not run.", job = %self.actor, reason = %reason);
                self.record(CronEvent::Refused {
                    path: run.path.display().to_string(),
                    reason,
                });
                self.tell_ended();
                return;
            }
        };
        let pid = following.pid();
        self.serial += 1;
        let serial = self.serial;
        self.run = Some((pid, following.started, None));
        self.record(CronEvent::Started {
            path: run.path.display().to_string(),
            args: run.args.clone(),
            pid,
            started: crate::starter::process_started(pid).unwrap_or(0),
        });
        // Each run is in the event log; StartLog hears of it at debug
        // level only, so a job every few seconds does not fill it.
        debug!(message = "Cron job started.", job = %self.actor, pid);
        let me = ctx.address();
        actix::spawn(following.follow(AD_CAP, move |p| me.do_send(Output(serial, p))));
        if let Some(t) = self.job.timeout {
            ctx.run_later(Duration::from_secs(t), move |act, ctx| {
                if act.serial == serial && act.run.is_some() {
                    act.handle(Kill("timeout"), ctx);
                }
            });
        }
    }
}

impl Handler<Kill> for CronJobActor {
    type Result = ();

    fn handle(&mut self, Kill(why): Kill, ctx: &mut Context<Self>) {
        let Some((pid, _, killed)) = &mut self.run else {
            return;
        };
        if killed.is_none() {
            *killed = Some(why);
        }
        let pid = *pid;
        term_group(pid);
        let serial = self.serial;
        ctx.run_later(KILL_GRACE, move |act, _| {
            if act.serial == serial && act.run.is_some() {
                kill_group(pid);
            }
        });
    }
}

impl Handler<Retire> for CronJobActor {
    type Result = ();

    fn handle(&mut self, Retire(why): Retire, ctx: &mut Context<Self>) {
        self.index = None;
        if self.run.is_some() {
            // It stops once the run's exit is recorded.
            self.handle(Kill(why), ctx);
        } else {
            ctx.stop();
        }
    }
}

impl Handler<Renumber> for CronJobActor {
    type Result = ();

    fn handle(&mut self, Renumber(i, job, config_val): Renumber, _: &mut Context<Self>) {
        self.index = Some(i);
        self.config_val = config_val;
        if job.reconfig
            && let Some((pid, ..)) = self.run
        {
            hup(pid);
        }
        self.job = job;
    }
}

impl Handler<Output> for CronJobActor {
    type Result = ();

    fn handle(&mut self, Output(serial, piece): Output, ctx: &mut Context<Self>) {
        if serial != self.serial {
            return;
        }
        match piece {
            Piece::Block(bytes, dropped) => self.block(&bytes, dropped),
            Piece::Stderr(line) => {
                warn!(message = "Cron job stderr.", job = %self.actor, line = %line);
            }
            Piece::Exited(exit, bytes) => {
                self.ended(exit, bytes);
                if self.index.is_none() {
                    ctx.stop();
                }
            }
        }
    }
}

/// Holds each of `settings`' jobs' own ad's place in the merge order, as
/// HTCondor's daemons register a cron job's ad when they configure the
/// job: jobs in job-list order, after those configured before (a job
/// already registered keeps its place).
fn register(published: &mut Published, settings: &CronSettings) {
    let kind = kind(settings.manager);
    for job in &settings.jobs {
        published.register(
            &crate::cron::event::actor(kind, &job.name),
            &job.slots,
            &job.name,
        );
    }
}

/// What a new run takes of the log's cron state: only the jobs `managers`
/// still configure; their ads go onto `board` (before any slot
/// evaluates), and the state is returned for the run's start batch and
/// the managers.
pub fn restore(board: &CronBoard, managers: &[CronSettings], last: &CronState) -> CronState {
    let actors: Vec<String> = (managers.iter())
        .flat_map(|m| {
            let kind = kind(m.manager);
            (m.jobs.iter()).map(move |j| crate::cron::event::actor(kind, &j.name))
        })
        .collect();
    let kept = last.only(&actors);
    board.update(|published| restore_ads(published, managers, &kept));
    kept
}

/// Puts the ads of `kept` (the jobs of `managers`) into `published`.
fn restore_ads(published: &mut Published, managers: &[CronSettings], kept: &CronState) {
    for m in managers {
        register(published, m);
    }
    for m in managers {
        for job in &m.jobs {
            let actor = crate::cron::event::actor(kind(m.manager), &job.name);
            let Some(st) = kept.jobs.get(&actor) else {
                continue;
            };
            if !st.metrics.is_empty() {
                published.set_metrics(&actor, &st.metrics);
            }
            for ad in &st.ads {
                match crate::classad::parse_ad(&ad.ad) {
                    Ok(a) => {
                        let a = metrics::strip(&job.metrics, &a);
                        published.replace(&actor, &job.slots, &ad.name, a);
                    }
                    Err(e) => warn!(message = "A cron ad in the log does not parse; dropped.",
                        job = %actor, ad = %ad.name, error = %e),
                }
            }
        }
    }
}

/// The cron runs the last run left going: each still running (the same
/// process, in this boot) is killed with its process group, and each is
/// ended in the log, so a daemon that dies does not leave its scripts
/// behind, hung ones piling up at every crash.
pub fn cron_left(last: &crate::cron::event::CronState, rebooted: bool) -> Vec<(String, CronEvent)> {
    let mut fix = Vec::new();
    for (actor, pid, started) in last.left_running() {
        let same = !rebooted && crate::starter::is_same_process(pid, started);
        if same {
            crate::hooks::kill_group(pid);
            warn!(message = "Killed a cron job the last run left running.", job = %actor, pid);
        }
        fix.push((actor.to_string(), CronEvent::left_by_last_run(same)));
    }
    fix
}
