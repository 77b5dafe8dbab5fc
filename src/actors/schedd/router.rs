//! The job router inside `roost schedd`'s actor: every
//! `JOB_ROUTER_POLLING_PERIOD` it claims the idle jobs routes take and
//! moves each routed job a step (`schedd::router` decides), committing
//! the events as the queue's own. A hook due is handed to the routed
//! job's actor ([`super::route_job`]), which runs it as the source job's
//! owner; its start ([`HookStarted`]) is recorded, then its result
//! ([`HookDone`]) judged by the core and recorded with what it caused.

use std::time::Duration;

use actix::prelude::*;
use tracing::info;

use super::queue::{RouterSettings, ScheddActor};
use super::route_job::{
    HOOK_STDOUT_LIMIT, HookDone, HookStarted, Reports, RoutedJobActor, RunHook, StopJob,
};
use crate::admin::Response;
use crate::classad::FixedEnv;
use crate::hooks::HookRun;
use crate::schedd::event::JobId;
use crate::schedd::router::{Ctx, HookResult, Logged, RouteEvent, RouterHook, Step};

/// How many steps one routed job may take in one poll (claimed,
/// submitted, checked, finished, finalized, cleaned up).
const STEPS_PER_POLL: usize = 6;

impl ScheddActor {
    /// Starts the router's timer (the first poll at once, as HTCondor's).
    pub(super) fn start_router(&mut self, ctx: &mut Context<ScheddActor>) {
        let Some(period) = self.routing.as_ref().map(|r| r.period) else {
            return;
        };
        ctx.run_later(Duration::ZERO, |me, ctx| me.poll_router(ctx));
        ctx.run_interval(period, |me, ctx| me.poll_router(ctx));
    }

    fn commit_quietly(&mut self, events: Vec<Logged>, ctx: &mut Context<ScheddActor>) {
        if events.is_empty() {
            return;
        }
        for e in &events {
            if let Logged::Route(r) = e {
                log_route_event(r);
                // A retired job's actor goes (killing a hook it still runs).
                if let RouteEvent::Retired { src, .. } = r
                    && let Some(actor) = self.routed_jobs.remove(src)
                {
                    actor.do_send(StopJob);
                }
            }
        }
        let done = self.commit_logged(events, Response::done(""));
        ctx.spawn(actix::fut::wrap_future(async move {
            let _ = done.await;
        }));
    }

    /// One poll: new candidates, then a step for every routed job whose
    /// hook is not running.
    fn poll_router(&mut self, ctx: &mut Context<ScheddActor>) {
        let Some(rs) = self.routing.clone() else {
            return;
        };
        self.router.polled();
        let now = self.clock.now();
        let env = FixedEnv::new(now);
        let claims = self.router.candidates(&Ctx {
            queue: &self.queue,
            cfg: &rs.cfg,
            env: &env,
            now,
        });
        self.commit_quietly(claims, ctx);
        let ids: Vec<JobId> = self.router.jobs.keys().copied().collect();
        for src in ids {
            if self.hooks_asked.contains(&src) {
                continue;
            }
            for _ in 0..STEPS_PER_POLL {
                let step = self.router.advance(
                    src,
                    &Ctx {
                        queue: &self.queue,
                        cfg: &rs.cfg,
                        env: &env,
                        now,
                    },
                );
                match step {
                    Step::Commit(events) if events.is_empty() => break,
                    Step::Commit(events) => self.commit_quietly(events, ctx),
                    Step::Hook {
                        hook,
                        keyword,
                        stdin,
                        owner,
                    } => {
                        self.run_hook(&rs, src, hook, &keyword, stdin, &owner, ctx);
                        break;
                    }
                }
            }
        }
    }

    /// Hands hook `hook` of routed job `src` to the job's actor (started
    /// the first time the job needs one), as the job's owner.
    #[allow(clippy::too_many_arguments)]
    fn run_hook(
        &mut self,
        rs: &RouterSettings,
        src: JobId,
        hook: RouterHook,
        keyword: &str,
        stdin: String,
        owner: &str,
        ctx: &mut Context<ScheddActor>,
    ) {
        let Some(path) = rs.paths.get(&(keyword.to_string(), hook)).cloned() else {
            return;
        };
        self.hooks_asked.insert(src);
        let user = if nix::unistd::geteuid().is_root() {
            match nix::unistd::User::from_name(owner) {
                Ok(Some(u)) if !u.uid.is_root() => Some((u.uid.as_raw(), u.gid.as_raw())),
                _ => {
                    let result = HookResult {
                        exit: None,
                        stdout: Vec::new(),
                        error: Some(format!(
                            "the job's owner '{owner}' is not a user it may run as"
                        )),
                    };
                    ctx.notify(HookDone { src, hook, result });
                    return;
                }
            }
        } else {
            None
        };
        let run = HookRun {
            path,
            args: Vec::new(),
            stdin: stdin.into_bytes(),
            cwd: rs.cwd.clone(),
            env: rs.env.clone(),
            user,
            timeout: Some(rs.hook_timeout),
            stdout_limit: HOOK_STDOUT_LIMIT,
            capture: None,
        };
        let me = ctx.address();
        let reports = Reports {
            started: me.clone().recipient(),
            done: me.recipient(),
        };
        let actor = self
            .routed_jobs
            .entry(src)
            .or_insert_with(|| RoutedJobActor::new(src, reports).start());
        actor.do_send(RunHook { hook, run });
    }
}

fn log_route_event(e: &RouteEvent) {
    match e {
        RouteEvent::Claimed { src, route, .. } => {
            info!(message = "Job claimed for a route.", job = %src, route = %route);
        }
        RouteEvent::HookRan {
            src,
            hook,
            exit,
            outcome,
            ..
        } => {
            info!(message = "Router hook ended.", job = %src, hook = ?hook, exit = %exit, outcome = %outcome);
        }
        RouteEvent::Submitted { src, dest, .. } => {
            info!(message = "Routed copy submitted.", job = %src, routed = %dest);
        }
        RouteEvent::Finished { src, .. } => {
            info!(message = "Routed copy finished.", job = %src);
        }
        RouteEvent::Ending { src, done, why, .. } => {
            info!(message = "Routed job ending.", job = %src, done, why = %why);
        }
        RouteEvent::Retired { src, .. } => {
            info!(message = "Routed job cleaned up.", job = %src);
        }
        RouteEvent::HookStarted { .. } => {}
    }
}

impl Handler<HookStarted> for ScheddActor {
    type Result = ();

    /// Records the hook's start (its result comes after it in the log).
    fn handle(&mut self, m: HookStarted, ctx: &mut Context<ScheddActor>) {
        let event = RouteEvent::HookStarted {
            at: self.clock.now(),
            src: m.src,
            hook: m.hook,
            pid: m.pid,
            started: m.started,
        };
        self.hooks_asked.remove(&m.src);
        self.commit_quietly(vec![Logged::Route(event)], ctx);
    }
}

impl Handler<HookDone> for ScheddActor {
    type Result = ();

    fn handle(&mut self, done: HookDone, ctx: &mut Context<ScheddActor>) {
        self.hooks_asked.remove(&done.src);
        let Some(rs) = self.routing.clone() else {
            return;
        };
        let now = self.clock.now();
        let env = FixedEnv::new(now);
        let events = self.router.after_hook(
            done.src,
            done.hook,
            &done.result,
            &Ctx {
                queue: &self.queue,
                cfg: &rs.cfg,
                env: &env,
                now,
            },
        );
        self.commit_quietly(events, ctx);
    }
}
