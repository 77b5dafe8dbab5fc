//! The job router's pure core: which idle jobs a route takes, and each
//! routed job's way through HTCondor's stages — claimed, submitted (the
//! routed copy in this queue), finished, finalized, cleaned up — with the
//! four hooks between them and every failure rule of HTCondor's router.
//!
//! Each routed job is an actor in the schedd's log (`route<c>.<p>`, the
//! source job's id); its [`RouteEvent`]s and the queue's [`JobEvent`]s
//! they cause are committed together. [`Router::advance`] decides the
//! next step of a job (events, or a hook to run); [`Router::after_hook`]
//! decides what a hook's result means. No I/O and no clock: the actor
//! runs the hooks and gives the time.

use std::collections::{BTreeMap, HashSet};

mod ads;
mod after;
mod event;

pub use ads::HookOutputError;
use ads::{copy_changed, idle, mirror, old, set, updated, vanilla_to_grid};
pub use event::{Logged, RouteEvent, RouterHook};

use super::event::{JobEvent, JobId, Status};
use super::queue::{Job, MANAGED_EXTERNAL, Queue, SubmitCtx, int_of, str_of};
use super::route::Route;
use crate::classad::{ClassAd, Env, Expr, Value};
use crate::exit::Exit;

/// Where a routed job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Claimed; the routed copy is not submitted yet.
    Claimed,
    /// The routed copy is in the queue.
    Submitted,
    /// The routed copy completed; finalizing.
    Finished,
    /// Over; cleaning up.
    Ending {
        /// Finalized.
        done: bool,
    },
}

/// One routed job.
#[derive(Clone, Debug, PartialEq)]
pub struct Routed {
    /// The route's name.
    pub route: String,
    /// Where it is.
    pub stage: Stage,
    /// The routed copy, once submitted.
    pub dest: Option<JobId>,
    /// The hook running for it, from its `HookStarted` to its `HookRan`.
    pub hook: Option<RunningHook>,
    /// How many times in a row its JOB_CLEANUP failed.
    pub cleanup_failures: u32,
}

/// A router hook whose start the log holds and whose end it does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunningHook {
    /// Which hook.
    pub hook: RouterHook,
    /// Its process.
    pub pid: u32,
    /// When that process started (kernel ticks since boot; 0: not known).
    pub started: u64,
}

/// What the router is configured with.
#[derive(Clone, Debug)]
pub struct RouterConfig {
    /// `JOB_ROUTER_NAME`: `ManagedManager` and `RoutedBy`.
    pub name: String,
    /// The routes, in the order they are tried.
    pub routes: Vec<Route>,
    /// `JOB_ROUTER_SOURCE_JOB_CONSTRAINT`.
    pub constraint: Option<Expr>,
    /// `JOB_ROUTER_MAX_JOBS` (negative: no limit).
    pub max_jobs: i64,
    /// `JOB_ROUTER_HOOK_KEYWORD`.
    pub keyword: Option<String>,
    /// `JOB_ROUTER_RELEASE_ON_HOLD`.
    pub release_on_hold: bool,
    /// The hooks configured: (keyword in upper case, hook).
    pub hooks: HashSet<(String, RouterHook)>,
    /// `<Keyword>_ATTRS_TO_COPY`, by keyword in upper case.
    pub attrs_to_copy: BTreeMap<String, Vec<String>>,
    /// Route only jobs of this owner (a router that cannot switch users).
    pub only_owner: Option<String>,
    /// The queue's name and domain, for the routed copies' ids.
    pub schedd: String,
    /// `UID_DOMAIN`.
    pub domain: String,
    /// `ROOST_ROUTER_CLEANUP_TRIES`: how many times a failing JOB_CLEANUP
    /// runs before the router gives the cleanup up (0: for ever, as
    /// HTCondor's router).
    pub cleanup_tries: u32,
}

impl RouterConfig {
    fn route(&self, name: &str) -> Option<&Route> {
        self.routes.iter().find(|r| r.name == name)
    }

    /// The hook keyword of a source job: its `HookKeyword`, else the
    /// router's.
    pub fn keyword_of(&self, src: &ClassAd) -> Option<String> {
        str_of(src, "HookKeyword")
            .or_else(|| self.keyword.clone())
            .filter(|k| !k.is_empty())
            .map(|k| k.to_ascii_uppercase())
    }

    fn has_hook(&self, src: &ClassAd, hook: RouterHook) -> Option<String> {
        let kw = self.keyword_of(src)?;
        self.hooks.contains(&(kw.clone(), hook)).then_some(kw)
    }
}

/// What to do next for a routed job.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Commit these events (nothing when empty).
    Commit(Vec<Logged>),
    /// Run this hook; give its result to [`Router::after_hook`].
    Hook {
        /// Which.
        hook: RouterHook,
        /// The keyword it is configured under.
        keyword: String,
        /// Its standard input.
        stdin: String,
        /// The user it runs as (the job's `Owner`).
        owner: String,
    },
}

/// A hook's result, as the router judges it.
#[derive(Clone, Debug)]
pub struct HookResult {
    /// How it ended; `None` when it could not be started.
    pub exit: Option<Exit>,
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Why it could not run, if it could not.
    pub error: Option<String>,
}

/// The router: the jobs it manages.
#[derive(Clone, Debug, Default)]
pub struct Router {
    /// By source job.
    pub jobs: BTreeMap<JobId, Routed>,
    /// Jobs retired lately, by how many more polls must start before one
    /// may be claimed again. HTCondor's router keeps a retired job until
    /// its mirror of the queue has caught up, which takes the next poll,
    /// and looks for candidates before it forgets it: a job given back is
    /// claimed again at the second poll that starts after it retired.
    /// Not kept across restarts (nor is HTCondor's).
    pub resting: BTreeMap<JobId, u8>,
}

/// Polls that start after a job retires before it may be claimed again.
const REST_POLLS: u8 = 2;

/// What a failing JOB_CLEANUP's `HookRan` says while it is tried again.
const CLEANUP_RETRIED: &str = "failed: tried again at the next poll";

/// The source job as HTCondor's router shows it to hooks: its copy of
/// the job from before the claim, so without `Managed` and
/// `ManagedManager`.
fn as_claimed(ad: &ClassAd) -> ClassAd {
    let mut ad = ad.clone();
    ad.remove("Managed");
    ad.remove("ManagedManager");
    ad
}

/// HTCondor's router looks only at `WEXITSTATUS`: a hook killed by a
/// signal counts as exit 0.
fn exit_status(e: &Exit) -> i32 {
    match e {
        Exit::Code(c) => *c,
        Exit::Signal(_) => 0,
    }
}

/// Context of one decision.
pub struct Ctx<'a> {
    /// The queue.
    pub queue: &'a Queue,
    /// The router's configuration.
    pub cfg: &'a RouterConfig,
    /// For evaluating expressions.
    pub env: &'a dyn Env,
    /// Now.
    pub now: i64,
}

impl Ctx<'_> {
    fn ending(&self, src: JobId, done: bool, why: impl Into<String>) -> Logged {
        Logged::Route(RouteEvent::Ending {
            at: self.now,
            src,
            done,
            why: why.into(),
        })
    }

    fn job(&self, id: JobId) -> Option<&Job> {
        self.queue.jobs.get(&id)
    }

    /// The routed copy's ad: in the queue, else in the history.
    fn dest_ad(&self, dest: Option<JobId>) -> Option<&ClassAd> {
        let d = dest?;
        self.job(d).map(|j| &j.ad).or_else(|| {
            self.queue.history.iter().rev().find(|ad| {
                int_of(ad, "ClusterId") == Some(d.cluster) && int_of(ad, "ProcId") == Some(d.proc)
            })
        })
    }

    fn hook_ran(&self, src: JobId, hook: RouterHook, r: &HookResult, outcome: &str) -> Logged {
        let exit = match (&r.exit, &r.error) {
            (_, Some(e)) => format!("not run: {e}"),
            (Some(e), None) => e.to_string(),
            (None, None) => "not run".into(),
        };
        Logged::Route(RouteEvent::HookRan {
            at: self.now,
            src,
            hook,
            exit,
            outcome: outcome.to_string(),
        })
    }
}

impl Router {
    /// The router a log's events make.
    pub fn apply(&mut self, e: &RouteEvent) {
        match e {
            RouteEvent::Claimed { src, route, .. } => {
                self.jobs.insert(
                    *src,
                    Routed {
                        route: route.clone(),
                        stage: Stage::Claimed,
                        dest: None,
                        hook: None,
                        cleanup_failures: 0,
                    },
                );
            }
            RouteEvent::HookStarted {
                src,
                hook,
                pid,
                started,
                ..
            } => {
                if let Some(j) = self.jobs.get_mut(src) {
                    j.hook = Some(RunningHook {
                        hook: *hook,
                        pid: *pid,
                        started: *started,
                    });
                }
            }
            RouteEvent::HookRan {
                src, hook, outcome, ..
            } => {
                if let Some(j) = self.jobs.get_mut(src) {
                    j.hook = None;
                    if *hook == RouterHook::Cleanup && outcome == CLEANUP_RETRIED {
                        j.cleanup_failures += 1;
                    }
                }
            }
            RouteEvent::Submitted { src, dest, .. } => {
                if let Some(j) = self.jobs.get_mut(src) {
                    j.dest = Some(*dest);
                    j.stage = Stage::Submitted;
                }
            }
            RouteEvent::Finished { src, .. } => {
                if let Some(j) = self.jobs.get_mut(src) {
                    j.stage = Stage::Finished;
                }
            }
            RouteEvent::Ending { src, done, .. } => {
                if let Some(j) = self.jobs.get_mut(src) {
                    j.stage = Stage::Ending { done: *done };
                }
            }
            RouteEvent::Retired { src, .. } => {
                self.jobs.remove(src);
            }
        }
    }

    /// [`Router::apply`] of an event that happens now (not replayed): a
    /// job retiring now rests before it may be claimed again. A restart
    /// replays with `apply` alone, so it starts with no job resting, as
    /// HTCondor's router forgets its retired jobs.
    pub fn apply_now(&mut self, e: &RouteEvent) {
        self.apply(e);
        if let RouteEvent::Retired { src, .. } = e {
            self.resting.insert(*src, REST_POLLS);
        }
    }

    /// A poll starts: retired jobs rest one poll less.
    pub fn polled(&mut self) {
        self.resting.retain(|_, left| {
            *left = left.saturating_sub(1);
            *left > 0
        });
    }

    /// How many jobs each route has, and how many of their routed copies
    /// are idle.
    fn counts(&self, queue: &Queue) -> BTreeMap<&str, (i64, i64)> {
        let mut out: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for r in self.jobs.values() {
            let c = out.entry(r.route.as_str()).or_default();
            c.0 += 1;
            let running = r
                .dest
                .and_then(|d| queue.jobs.get(&d))
                .is_some_and(|j| matches!(j.status(), Some(Status::Running)));
            if !running {
                c.1 += 1;
            }
        }
        out
    }

    /// The idle jobs the routes take now (HTCondor's candidate search and
    /// claim): a `Claimed` and the source's `Managed` for each.
    pub fn candidates(&self, ctx: &Ctx<'_>) -> Vec<Logged> {
        let cfg = ctx.cfg;
        if cfg.routes.is_empty() {
            return Vec::new();
        }
        let mut counts: BTreeMap<String, (i64, i64)> = self
            .counts(ctx.queue)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let mut managed = i64::try_from(self.jobs.len()).unwrap_or(i64::MAX);
        let mut out = Vec::new();
        for (id, job) in &ctx.queue.jobs {
            if cfg.max_jobs >= 0 && managed >= cfg.max_jobs {
                break;
            }
            let ad = &job.ad;
            let eligible = id.proc >= 0
                && job.status() == Some(Status::Idle)
                && job.lease.is_none()
                && !self.jobs.contains_key(id)
                && !self.resting.contains_key(id)
                && !matches!(
                    str_of(ad, "Managed").as_deref(),
                    Some("ScheddDone" | MANAGED_EXTERNAL)
                )
                && str_of(ad, "RoutedBy").as_deref() != Some(cfg.name.as_str())
                && str_of(ad, "Owner")
                    .is_some_and(|o| cfg.only_owner.as_deref().is_none_or(|only| only == o))
                && cfg
                    .constraint
                    .as_ref()
                    .is_none_or(|c| matches!(ad.eval(c, ctx.env), Value::Bool(true)));
            if !eligible {
                continue;
            }
            let open = |r: &Route, counts: &BTreeMap<String, (i64, i64)>| {
                let (n, idle) = counts.get(&r.name).copied().unwrap_or((0, 0));
                !(r.max_idle_jobs >= 0 && r.max_idle_jobs <= idle) && n < r.max_jobs
            };
            if !cfg.routes.iter().any(|r| open(r, &counts)) {
                break;
            }
            let Some(route) = cfg
                .routes
                .iter()
                .filter(|r| open(r, &counts))
                .find(|r| r.matches(ad, ctx.env))
            else {
                continue;
            };
            let c = counts.entry(route.name.clone()).or_default();
            c.0 += 1;
            c.1 += 1;
            managed += 1;
            out.push(Logged::Route(RouteEvent::Claimed {
                at: ctx.now,
                src: *id,
                route: route.name.clone(),
            }));
            out.extend(updated(
                ctx.now,
                *id,
                vec![
                    set("Managed", MANAGED_EXTERNAL),
                    set("ManagedManager", cfg.name.as_str()),
                ],
            ));
        }
        out
    }

    /// The hooks the log saw start and not end: (job, hook).
    pub fn left_running(&self) -> impl Iterator<Item = (JobId, RunningHook)> + '_ {
        (self.jobs.iter()).filter_map(|(src, r)| r.hook.map(|h| (*src, h)))
    }

    /// The end of a hook the last run left running (`killed`: its
    /// process was still there and the restart killed it). The hook's
    /// result was never taken, so the job is where it was and the next
    /// poll runs the hook again — as HTCondor's router, which after a
    /// restart finds its jobs again in the queue and takes each up at its
    /// stage (a claimed job without a routed copy is given back and routed
    /// again; a finished one is finalized again). Hooks must therefore be
    /// safe to run twice, as HTCondor's.
    pub fn interrupted(now: i64, src: JobId, hook: RouterHook, killed: bool) -> Logged {
        Logged::Route(RouteEvent::HookRan {
            at: now,
            src,
            hook,
            exit: if killed {
                "signal 9 (left running by the last run; killed)".into()
            } else {
                "not known (it ended with the last run)".into()
            },
            outcome: "interrupted by the schedd's stop: run again".into(),
        })
    }

    /// The next step of routed job `src` (nothing while its hook runs).
    pub fn advance(&self, src: JobId, ctx: &Ctx<'_>) -> Step {
        let Some(r) = self.jobs.get(&src) else {
            return Step::Commit(Vec::new());
        };
        if r.hook.is_some() {
            return Step::Commit(Vec::new());
        }
        let Some(job) = ctx.job(src) else {
            return Step::Commit(match r.stage {
                Stage::Ending { .. } => self.finish_cleanup(src, ctx),
                _ => vec![ctx.ending(src, false, "the source job left the queue")],
            });
        };
        let owner = str_of(&job.ad, "Owner").unwrap_or_default();
        let hook = |hook: RouterHook, stdin: String| {
            ctx.cfg.has_hook(&job.ad, hook).map(|keyword| Step::Hook {
                hook,
                keyword,
                stdin,
                owner: owner.clone(),
            })
        };
        match r.stage {
            Stage::Claimed => {
                let Some(route) = ctx.cfg.route(&r.route) else {
                    return Step::Commit(vec![ctx.ending(src, false, "its route is gone")]);
                };
                let stdin = format!(
                    "{}\n------\n{}",
                    route.description(),
                    old(&as_claimed(&job.ad))
                );
                hook(RouterHook::Translate, stdin)
                    .unwrap_or_else(|| Step::Commit(self.finish_submit(src, job.ad.clone(), ctx)))
            }
            Stage::Submitted => {
                let dest = r.dest.and_then(|d| ctx.job(d));
                match dest.and_then(|d| hook(RouterHook::UpdateJobInfo, old(&d.ad))) {
                    Some(step) => step,
                    None => Step::Commit(self.finish_check(src, ctx)),
                }
            }
            Stage::Finished => {
                let dest = ctx.dest_ad(r.dest).map(old).unwrap_or_default();
                let stdin = format!("{}\n------\n{}", old(&as_claimed(&job.ad)), dest);
                hook(RouterHook::Finalize, stdin)
                    .unwrap_or_else(|| Step::Commit(self.finish_finalize(src, ctx)))
            }
            Stage::Ending { .. } => match ctx.dest_ad(r.dest) {
                Some(d) => hook(RouterHook::Cleanup, old(d))
                    .unwrap_or_else(|| Step::Commit(self.finish_cleanup(src, ctx))),
                None => Step::Commit(self.finish_cleanup(src, ctx)),
            },
        }
    }

    /// The routed copy from `ad`: HTCondor's vanilla-to-grid edits, the
    /// route, the routing attributes; submitted as the source's owner.
    fn finish_submit(&self, src: JobId, mut ad: ClassAd, ctx: &Ctx<'_>) -> Vec<Logged> {
        let Some(r) = self.jobs.get(&src) else {
            return Vec::new();
        };
        let Some(route) = ctx.cfg.route(&r.route) else {
            return vec![ctx.ending(src, false, "its route is gone")];
        };
        vanilla_to_grid(&mut ad, route.universe, route.grid_resource.as_deref());
        if let Err(e) = route.apply(&mut ad, ctx.env, ctx.now) {
            return vec![ctx.ending(src, false, e.to_string())];
        }
        ad.insert_value("RoutedFromJobId", src.to_string().as_str());
        ad.insert_value("RoutedBy", ctx.cfg.name.as_str());
        ad.insert_value("RouteName", route.name.as_str());
        ad.remove("RoutedToJobId");
        if let Ok(e) = crate::classad::parse_expr("JobStatus == 4") {
            ad.insert("LeaveJobInQueue", e);
        }
        let Some(owner) = ctx.job(src).and_then(|j| str_of(&j.ad, "Owner")) else {
            return vec![ctx.ending(src, false, "the source job has no Owner")];
        };
        let sctx = SubmitCtx {
            at: ctx.now,
            owner: &owner,
            domain: &ctx.cfg.domain,
            schedd: &ctx.cfg.schedd,
        };
        match ctx.queue.submit(sctx, vec![ad], None) {
            Ok(events) => {
                let Some(dest) = events.first().map(JobEvent::id) else {
                    return Vec::new();
                };
                let mut out: Vec<Logged> = events.into_iter().map(Logged::Job).collect();
                out.push(Logged::Route(RouteEvent::Submitted {
                    at: ctx.now,
                    src,
                    dest,
                }));
                out.extend(updated(
                    ctx.now,
                    src,
                    vec![set("RoutedToJobId", dest.to_string().as_str())],
                ));
                out
            }
            Err(e) => vec![ctx.ending(src, false, format!("the routed copy: {e}"))],
        }
    }

    /// A submitted job's status check: the source mirrors its copy.
    fn finish_check(&self, src: JobId, ctx: &Ctx<'_>) -> Vec<Logged> {
        let Some(r) = self.jobs.get(&src) else {
            return Vec::new();
        };
        let Some(job) = ctx.job(src) else {
            return vec![ctx.ending(src, false, "the source job left the queue")];
        };
        let src_status = job.status();
        let copied_hold = || {
            matches!(
                job.ad.eval_attr("HoldCopiedFromTargetJob", ctx.env),
                Value::Bool(true)
            )
        };
        if src_status == Some(Status::Removed) {
            return vec![ctx.ending(src, false, "the source job was removed")];
        }
        if src_status == Some(Status::Held) && !copied_hold() {
            return vec![ctx.ending(src, false, "the source job was held")];
        }
        let Some(dest) = r.dest.and_then(|d| ctx.job(d)) else {
            return vec![ctx.ending(src, false, "the routed copy left the queue")];
        };
        // A removed copy may stay in the queue until its node has
        // stopped it; for the router it is gone (HTCondor's router sees
        // it leave its mirror of the queue), and the job is routed again.
        if dest.status() == Some(Status::Removed) {
            return vec![ctx.ending(src, false, "the routed copy was removed")];
        }
        let mut attrs = mirror(&job.ad, &dest.ad, ctx.env, ctx.now);
        let kw = ctx.cfg.keyword_of(&job.ad);
        for a in kw
            .and_then(|k| ctx.cfg.attrs_to_copy.get(&k))
            .into_iter()
            .flatten()
        {
            copy_changed(&job.ad, &dest.ad, a, &mut attrs);
        }
        let mut out: Vec<Logged> = updated(ctx.now, src, attrs).into_iter().collect();
        let finished = dest.status() == Some(Status::Completed)
            && int_of(&dest.ad, "JobFinishedHookDone").is_some_and(|t| t != 0);
        if finished {
            out.push(Logged::Route(RouteEvent::Finished { at: ctx.now, src }));
        }
        out
    }

    /// The routed copy finished and was finalized: it leaves the queue,
    /// and the routed job ends as done.
    fn finish_finalize(&self, src: JobId, ctx: &Ctx<'_>) -> Vec<Logged> {
        let Some(r) = self.jobs.get(&src) else {
            return Vec::new();
        };
        if ctx.job(src).and_then(|j| str_of(&j.ad, "Owner")).is_none() {
            return self.rerouted(src, "the source job has no Owner", ctx);
        }
        let mut out = Vec::new();
        if let Some(d) = r.dest.filter(|d| ctx.job(*d).is_some()) {
            out.extend(updated(ctx.now, d, vec![set("LeaveJobInQueue", false)]));
        }
        out.push(ctx.ending(src, true, "finalized"));
        out
    }

    /// The source job back to idle, and the routed job given up.
    fn rerouted(&self, src: JobId, why: &str, ctx: &Ctx<'_>) -> Vec<Logged> {
        let mut out = Vec::new();
        if let Some(job) = ctx.job(src)
            && job.status() != Some(Status::Idle)
        {
            out.extend(updated(ctx.now, src, idle(job, ctx.now)));
        }
        out.push(ctx.ending(src, false, why));
        out
    }

    /// Cleanup: an unfinished routed copy is removed, the source job given
    /// back (`Managed` "ScheddDone" when done, else "Schedd", and idle
    /// again unless it completed, was removed, or was held by its owner).
    fn finish_cleanup(&self, src: JobId, ctx: &Ctx<'_>) -> Vec<Logged> {
        let Some(r) = self.jobs.get(&src) else {
            return Vec::new();
        };
        let done = matches!(r.stage, Stage::Ending { done: true });
        let mut out = Vec::new();
        if !done
            && let Some(d) = r.dest
            && ctx
                .job(d)
                .is_some_and(|j| j.status() != Some(Status::Removed))
        {
            out.push(Logged::Job(JobEvent::Removed {
                at: ctx.now,
                id: d,
                reason: "JobRouter aborted job".into(),
            }));
        }
        if let Some(job) = ctx.job(src) {
            let managed = if done { "ScheddDone" } else { "Schedd" };
            let mut attrs = vec![set("Managed", managed), set("ManagedManager", "")];
            let copied = matches!(
                job.ad.eval_attr("HoldCopiedFromTargetJob", ctx.env),
                Value::Bool(true)
            );
            match job.status() {
                None | Some(Status::Idle | Status::Completed | Status::Removed) => {}
                Some(Status::Held) => {
                    if copied && ctx.cfg.release_on_hold {
                        attrs.push(("HoldCopiedFromTargetJob".into(), "undefined".into()));
                        attrs.extend(idle(job, ctx.now));
                    }
                }
                Some(_) => attrs.extend(idle(job, ctx.now)),
            }
            out.extend(updated(ctx.now, src, attrs));
        }
        out.push(Logged::Route(RouteEvent::Retired { at: ctx.now, src }));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::{FixedEnv, parse_ad};
    use crate::config::{Scope, load_text};
    use crate::schedd::queue::{Command, Targets};

    const SRC: JobId = JobId {
        cluster: 1,
        proc: 0,
    };

    fn setup(route_body: &str, jobs: usize) -> (Queue, RouterConfig) {
        let c = load_text(
            "/etc/condor/condor_config",
            &format!("JOB_ROUTER_ROUTE_R @=end\n{route_body}\n@end\n"),
            Scope::default(),
            vec![],
        )
        .expect("reads");
        let route =
            Route::parse("R", c.raw("JOB_ROUTER_ROUTE_R").expect("set"), &c).expect("route");
        let mut q = Queue::replay(&[]);
        let ads = (0..jobs)
            .map(|_| parse_ad("[Cmd = \"/bin/true\"; WantRoute = true]").expect("ad"))
            .collect();
        let ctx = SubmitCtx {
            at: 100,
            owner: "alice",
            domain: "example",
            schedd: "ap",
        };
        for e in q.submit(ctx, ads, None).expect("submit") {
            q.apply(&e);
        }
        let cfg = RouterConfig {
            name: "jobrouter".into(),
            routes: vec![route],
            constraint: None,
            max_jobs: -1,
            keyword: None,
            release_on_hold: true,
            hooks: HashSet::new(),
            attrs_to_copy: BTreeMap::new(),
            only_owner: None,
            schedd: "ap".into(),
            domain: "example".into(),
            cleanup_tries: 3,
        };
        (q, cfg)
    }

    /// One poll without hooks: candidates, then every job as far as it goes.
    fn poll(r: &mut Router, q: &mut Queue, cfg: &RouterConfig, now: i64) {
        poll_hooks(r, q, cfg, now, &|_| panic!("no hooks are configured"));
    }

    /// One poll as the actor makes it, each hook answered at once by
    /// `answer` (its result taken before the poll goes on).
    fn poll_hooks(
        r: &mut Router,
        q: &mut Queue,
        cfg: &RouterConfig,
        now: i64,
        answer: &dyn Fn(RouterHook) -> HookResult,
    ) {
        r.polled();
        let env = FixedEnv::new(now);
        let apply = |r: &mut Router, q: &mut Queue, events: Vec<Logged>| {
            for e in events {
                match e {
                    Logged::Job(e) => q.apply(&e),
                    Logged::Route(e) => r.apply_now(&e),
                }
            }
        };
        let claims = r.candidates(&Ctx {
            queue: q,
            cfg,
            env: &env,
            now,
        });
        apply(r, q, claims);
        let ids: Vec<JobId> = r.jobs.keys().copied().collect();
        for id in ids {
            for _ in 0..6 {
                let step = r.advance(
                    id,
                    &Ctx {
                        queue: q,
                        cfg,
                        env: &env,
                        now,
                    },
                );
                match step {
                    Step::Commit(e) if e.is_empty() => break,
                    Step::Commit(e) => apply(r, q, e),
                    Step::Hook { hook, .. } => {
                        let ctx = Ctx {
                            queue: q,
                            cfg,
                            env: &env,
                            now,
                        };
                        let after = r.after_hook(id, hook, &answer(hook), &ctx);
                        apply(r, q, after);
                        break;
                    }
                }
            }
        }
    }

    /// A hook's start holds the job until its end; a hook the last run
    /// left running ends as interrupted and the job runs it again.
    #[test]
    fn a_running_hook_holds_its_job_and_an_interrupted_one_runs_again() {
        let (q, mut cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
        cfg.keyword = Some("K".into());
        cfg.hooks.insert(("K".into(), RouterHook::Translate));
        let env = FixedEnv::new(200);
        let ctx = Ctx {
            queue: &q,
            cfg: &cfg,
            env: &env,
            now: 200,
        };
        let mut r = Router::default();
        for e in r.candidates(&ctx) {
            if let Logged::Route(e) = e {
                r.apply(&e);
            }
        }
        assert!(matches!(
            r.advance(SRC, &ctx),
            Step::Hook {
                hook: RouterHook::Translate,
                ..
            }
        ));
        r.apply(&RouteEvent::HookStarted {
            at: 201,
            src: SRC,
            hook: RouterHook::Translate,
            pid: 77,
            started: 5,
        });
        assert_eq!(r.advance(SRC, &ctx), Step::Commit(Vec::new()));
        let left: Vec<_> = r.left_running().collect();
        assert_eq!(left.len(), 1);
        assert_eq!((left[0].0, left[0].1.pid, left[0].1.started), (SRC, 77, 5));
        // The restart ends it: nothing is left running, the job is still
        // claimed, and its next step is the same hook again.
        let Logged::Route(end) = Router::interrupted(300, SRC, RouterHook::Translate, true) else {
            panic!("a route event");
        };
        assert!(
            matches!(&end, RouteEvent::HookRan { outcome, .. } if outcome.contains("interrupted"))
        );
        r.apply(&end);
        assert_eq!(r.left_running().count(), 0);
        assert_eq!(r.jobs[&SRC].stage, Stage::Claimed);
        assert!(matches!(
            r.advance(SRC, &ctx),
            Step::Hook {
                hook: RouterHook::Translate,
                ..
            }
        ));
    }

    #[test]
    fn max_jobs_and_max_idle_jobs_limit_the_claims() {
        let (mut q, cfg) = setup(
            "UNIVERSE vanilla\nREQUIREMENTS WantRoute\nMaxJobs = 3\nMaxIdleJobs = 2",
            5,
        );
        let mut r = Router::default();
        poll(&mut r, &mut q, &cfg, 200);
        // Two copies idle: the route takes no more.
        assert_eq!(r.jobs.len(), 2);
        let copies: Vec<&Job> = q
            .jobs
            .values()
            .filter(|j| str_of(&j.ad, "RoutedBy").is_some())
            .collect();
        assert_eq!(copies.len(), 2);
        assert!(copies.iter().all(|j| j.runs_on_nodes()));
        assert!(q.jobs[&SRC].externally_managed());
        assert!(!q.jobs[&SRC].runs_on_nodes());
    }

    #[test]
    fn removing_a_routed_source_removes_its_copy_and_lets_it_go() {
        let (mut q, cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
        let mut r = Router::default();
        poll(&mut r, &mut q, &cfg, 200);
        let dest = r.jobs[&SRC].dest.expect("submitted");
        let env = FixedEnv::new(300);
        let targets = Targets {
            ids: vec![SRC.to_string()],
            ..Targets::default()
        };
        let out = q
            .command(300, Command::Remove, &targets, "by hand", None, &env)
            .expect("rm");
        for e in &out.events {
            q.apply(e);
        }
        // Still in the queue while the router manages it.
        assert_eq!(q.jobs[&SRC].status(), Some(Status::Removed));
        poll(&mut r, &mut q, &cfg, 310);
        assert!(r.jobs.is_empty());
        assert!(!q.jobs.contains_key(&SRC) && !q.jobs.contains_key(&dest));
        let reasons: Vec<String> = q
            .history
            .iter()
            .filter_map(|a| str_of(a, "RemoveReason"))
            .collect();
        assert!(
            reasons.contains(&"JobRouter aborted job".to_string()),
            "{reasons:?}"
        );
    }

    #[test]
    fn a_hold_of_the_copy_is_mirrored_and_undone_when_the_job_is_given_back() {
        let (mut q, cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
        let mut r = Router::default();
        poll(&mut r, &mut q, &cfg, 200);
        let dest = r.jobs[&SRC].dest.expect("submitted");
        q.apply(&JobEvent::Held {
            at: 250,
            id: dest,
            reason: "node said no".into(),
            code: 21,
            subcode: 0,
        });
        poll(&mut r, &mut q, &cfg, 260);
        let src = &q.jobs[&SRC].ad;
        assert_eq!(str_of(src, "HoldReason").as_deref(), Some("node said no"));
        assert_eq!(int_of(src, "JobStatus"), Some(5));
        // The copy removed by hand: the router gives the source back, idle.
        q.apply(&JobEvent::Removed {
            at: 270,
            id: dest,
            reason: "by hand".into(),
        });
        poll(&mut r, &mut q, &cfg, 280);
        let src = &q.jobs[&SRC];
        assert_eq!(src.status(), Some(Status::Idle), "{:?}", src.ad);
        assert_eq!(str_of(&src.ad, "Managed").as_deref(), Some("Schedd"));
    }

    #[test]
    fn a_job_whose_route_is_gone_is_given_back() {
        let (mut q, mut cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
        let mut r = Router::default();
        let env = FixedEnv::new(200);
        let claims = r.candidates(&Ctx {
            queue: &q,
            cfg: &cfg,
            env: &env,
            now: 200,
        });
        for e in claims {
            match e {
                Logged::Job(e) => q.apply(&e),
                Logged::Route(e) => r.apply(&e),
            }
        }
        assert!(q.jobs[&SRC].externally_managed());
        // Restarted with no routes configured: the claimed job goes back.
        cfg.routes.clear();
        poll(&mut r, &mut q, &cfg, 300);
        assert!(r.jobs.is_empty());
        let src = &q.jobs[&SRC];
        assert_eq!(src.status(), Some(Status::Idle));
        assert!(src.runs_on_nodes());
        assert_eq!(q.jobs.len(), 1, "no copy was made");
    }

    fn answered(code: i32, stdout: &str) -> HookResult {
        HookResult {
            exit: Some(Exit::Code(code)),
            stdout: stdout.as_bytes().to_vec(),
            error: None,
        }
    }

    /// Every hook configured under keyword `K`.
    fn with_hooks(cfg: &mut RouterConfig) {
        cfg.keyword = Some("K".into());
        for h in RouterHook::ALL {
            cfg.hooks.insert(("K".into(), h));
        }
    }

    /// The routed copy of `SRC` completed on a node.
    fn copy_completes(r: &Router, q: &mut Queue, at: i64) {
        let dest = r.jobs[&SRC].dest.expect("submitted");
        q.apply(&JobEvent::Exited {
            at,
            id: dest,
            code: Some(0),
            signal: None,
            reason: None,
            duration: Some(1),
            on_exit: None,
        });
    }

    /// HTCondor's timing: a job given back (here: TRANSLATE_JOB failed)
    /// is claimed again at the second poll that starts after it retired,
    /// not at the next one.
    #[test]
    fn a_job_given_back_is_claimed_again_at_the_second_poll_after() {
        let (mut q, mut cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
        with_hooks(&mut cfg);
        let mut r = Router::default();
        let fails = |_| answered(1, "");
        let mut claimed_at = Vec::new();
        for poll_no in 0..10 {
            let before = r.jobs.contains_key(&SRC);
            poll_hooks(&mut r, &mut q, &cfg, 200 + poll_no, &fails);
            if !before && r.jobs.contains_key(&SRC) {
                claimed_at.push(poll_no);
            }
        }
        // Claimed and failed at 0, retired at 1 (no copy: no cleanup
        // hook), resting through 2: claimed again every third poll, as
        // HTCondor's router retries a failing TRANSLATE_JOB.
        assert_eq!(claimed_at, vec![0, 3, 6, 9]);
        assert_eq!(q.jobs[&SRC].status(), Some(Status::Idle));
    }

    /// A failing JOB_FINALIZE never makes a completed job run again: the
    /// copy is aborted and the source completes without the hook's
    /// update, as HTCondor 23's router leaves it.
    #[test]
    fn a_failing_finalize_completes_the_source_and_aborts_the_copy() {
        for finalize in [answered(1, "Ignored = 1"), answered(0, "not an ad @@")] {
            let (mut q, mut cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
            with_hooks(&mut cfg);
            let mut r = Router::default();
            let ok = |_| answered(0, "");
            // Without TRANSLATE_JOB the job itself is the copy.
            cfg.hooks.remove(&("K".into(), RouterHook::Translate));
            poll_hooks(&mut r, &mut q, &cfg, 200, &ok);
            let dest = r.jobs[&SRC].dest.expect("submitted");
            copy_completes(&r, &mut q, 250);
            let answer = |h: RouterHook| match h {
                RouterHook::Finalize => finalize.clone(),
                _ => answered(0, ""),
            };
            for t in 0..8 {
                poll_hooks(&mut r, &mut q, &cfg, 260 + t, &answer);
            }
            assert!(r.jobs.is_empty());
            assert!(!q.jobs.contains_key(&SRC), "the source left the queue");
            let gone = |id: JobId| {
                q.history
                    .iter()
                    .find(|a| {
                        int_of(a, "ClusterId") == Some(id.cluster)
                            && int_of(a, "ProcId") == Some(id.proc)
                    })
                    .expect("in the history")
            };
            let src = gone(SRC);
            assert_eq!(int_of(src, "JobStatus"), Some(4));
            assert_eq!(str_of(src, "Managed").as_deref(), Some("Schedd"));
            assert!(src.lookup("Ignored").is_none());
            let copy = gone(dest);
            assert_eq!(int_of(copy, "JobStatus"), Some(3));
            assert_eq!(
                str_of(copy, "RemoveReason").as_deref(),
                Some("JobRouter aborted job")
            );
            assert_eq!(q.jobs.len(), 0, "nothing was routed again");
        }
    }

    /// A failing UPDATE_JOB_INFO loses its update only: the source still
    /// follows its copy to the end (HTCondor's router stops following it).
    #[test]
    fn a_failing_update_hook_does_not_stop_the_status_check() {
        let (mut q, mut cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
        with_hooks(&mut cfg);
        cfg.hooks.remove(&("K".into(), RouterHook::Translate));
        let mut r = Router::default();
        let answer = |h: RouterHook| match h {
            RouterHook::UpdateJobInfo => answered(1, "Ignored = 1"),
            _ => answered(0, "Finalized = true"),
        };
        poll_hooks(&mut r, &mut q, &cfg, 200, &answer);
        copy_completes(&r, &mut q, 250);
        for t in 0..6 {
            poll_hooks(&mut r, &mut q, &cfg, 260 + t, &answer);
        }
        assert!(r.jobs.is_empty());
        let src = q.history.iter().find(|a| int_of(a, "ClusterId") == Some(1));
        let src = src.expect("the source finished");
        assert_eq!(str_of(src, "Managed").as_deref(), Some("ScheddDone"));
        assert!(src.lookup("Finalized").is_some() && src.lookup("Ignored").is_none());
    }

    /// A JOB_CLEANUP that keeps failing is tried `cleanup_tries` times,
    /// then given up: the source does not stay in the queue for ever.
    #[test]
    fn a_failing_cleanup_is_given_up_after_its_tries() {
        let (mut q, mut cfg) = setup("UNIVERSE vanilla\nREQUIREMENTS WantRoute", 1);
        with_hooks(&mut cfg);
        cfg.hooks.remove(&("K".into(), RouterHook::Translate));
        let mut r = Router::default();
        let answer = |h: RouterHook| match h {
            RouterHook::Cleanup => answered(2, ""),
            _ => answered(0, ""),
        };
        poll_hooks(&mut r, &mut q, &cfg, 200, &answer);
        copy_completes(&r, &mut q, 250);
        let mut polls = 0;
        while !r.jobs.is_empty() {
            polls += 1;
            assert!(polls < 20, "still routed after {polls} polls");
            poll_hooks(&mut r, &mut q, &cfg, 260 + polls, &answer);
        }
        assert!(!q.jobs.contains_key(&SRC));
        // UPDATE_JOB_INFO (the copy found finished), JOB_FINALIZE, then
        // three JOB_CLEANUPs: one hook a poll, as HTCondor's router.
        assert_eq!(polls, 5);
    }
}
