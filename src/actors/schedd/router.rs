//! The job router inside `roost schedd`'s actor: every
//! `JOB_ROUTER_POLLING_PERIOD` it claims the idle jobs routes take and
//! moves each routed job a step (`schedd::router` decides), committing
//! the events as the queue's own; hooks run as the source job's owner,
//! one at a time per job, and their results come back as [`HookDone`].

use std::time::Duration;

use actix::prelude::*;
use tracing::{info, warn};

use super::queue::{RouterSettings, ScheddActor};
use crate::admin::Response;
use crate::classad::FixedEnv;
use crate::hooks::{self, HookRun};
use crate::schedd::event::JobId;
use crate::schedd::router::{Ctx, HookResult, Logged, RouteEvent, RouterHook, Step};

/// How many steps one routed job may take in one poll (claimed,
/// submitted, checked, finished, finalized, cleaned up).
const STEPS_PER_POLL: usize = 6;

/// The most of a router hook's stdout read.
const HOOK_STDOUT_LIMIT: usize = 4 << 20;

/// A router hook ended.
#[derive(Message)]
#[rtype(result = "()")]
pub struct HookDone {
    src: JobId,
    hook: RouterHook,
    result: HookResult,
}

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
            if self.hooks_running.contains(&src) {
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
                    self.hooks_running.insert(src);
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
        info!(message = "Router hook started.", job = %src, hook = ?hook, path = %run.path.display());
        self.hooks_running.insert(src);
        let timeout = rs.hook_timeout;
        let me = ctx.address();
        actix::spawn(async move {
            let result = match hooks::run(&run).await {
                Ok(out) if out.timed_out => HookResult {
                    exit: None,
                    stdout: Vec::new(),
                    error: Some(format!(
                        "killed after running {} s (ROOST_ROUTER_HOOK_TIMEOUT)",
                        timeout.as_secs()
                    )),
                },
                Ok(out) => {
                    for line in &out.stderr {
                        warn!(message = "Router hook printed to stderr.", job = %src, hook = ?hook, line = %line);
                    }
                    let error = out
                        .truncated
                        .then(|| format!("its output passed {HOOK_STDOUT_LIMIT} bytes"));
                    HookResult {
                        exit: if error.is_some() {
                            None
                        } else {
                            Some(out.exit)
                        },
                        stdout: out.stdout,
                        error,
                    }
                }
                Err(e) => HookResult {
                    exit: None,
                    stdout: Vec::new(),
                    error: Some(e.to_string()),
                },
            };
            me.do_send(HookDone { src, hook, result });
        });
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
    }
}

impl Handler<HookDone> for ScheddActor {
    type Result = ();

    fn handle(&mut self, done: HookDone, ctx: &mut Context<ScheddActor>) {
        self.hooks_running.remove(&done.src);
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
