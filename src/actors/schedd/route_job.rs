//! One actor per routed job (`route<c>.<p>` in the schedd's log): it runs
//! the job's router hooks, one at a time, as the job's owner. The job's
//! stages are the pure core's (`schedd::router`), applied by the queue's
//! actor, which owns the queue the router reads and commits a routed
//! job's events together with the queue's events they cause. So the
//! routed job's actor is the part that acts: the queue's actor decides a
//! hook is due and sends [`RunHook`]; this actor starts the process and
//! reports [`HookStarted`] (with its pid, recorded before anything it
//! prints is taken), then [`HookDone`] with its result, which the core
//! judges. Stopping the actor (the job retired, or the schedd stopping)
//! kills a hook still running.

use actix::prelude::*;
use tracing::{info, warn};

use crate::hooks::{self, HookRun};
use crate::schedd::event::JobId;
use crate::schedd::router::{HookResult, RouterHook};

/// The most of a router hook's stdout read.
pub const HOOK_STDOUT_LIMIT: usize = 4 << 20;

/// Run this hook for the job.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RunHook {
    /// Which.
    pub hook: RouterHook,
    /// How (path, stdin, user, timeout).
    pub run: HookRun,
}

/// The job is retired (or the schedd stops): the actor stops, killing a
/// hook it still runs.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopJob;

impl Handler<StopJob> for RoutedJobActor {
    type Result = ();

    fn handle(&mut self, _: StopJob, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

/// A routed job's hook process exists.
#[derive(Message)]
#[rtype(result = "()")]
pub struct HookStarted {
    /// The source job.
    pub src: JobId,
    /// Which hook.
    pub hook: RouterHook,
    /// Its process.
    pub pid: u32,
    /// When that process started (kernel ticks since boot; 0: not known).
    pub started: u64,
}

/// A routed job's hook ended, or could not run.
#[derive(Message)]
#[rtype(result = "()")]
pub struct HookDone {
    /// The source job.
    pub src: JobId,
    /// Which hook.
    pub hook: RouterHook,
    /// What it did.
    pub result: HookResult,
}

/// Where a routed job's actor reports (the queue's actor).
#[derive(Clone)]
pub struct Reports {
    /// A hook's process exists.
    pub started: Recipient<HookStarted>,
    /// A hook ended, or could not run.
    pub done: Recipient<HookDone>,
}

/// The actor of one routed job.
pub struct RoutedJobActor {
    src: JobId,
    reports: Reports,
    /// The hook process running, if one is.
    running: Option<u32>,
}

impl RoutedJobActor {
    /// The actor of routed job `src`, reporting to `reports`.
    pub fn new(src: JobId, reports: Reports) -> RoutedJobActor {
        RoutedJobActor {
            src,
            reports,
            running: None,
        }
    }

    fn done(&self, hook: RouterHook, result: HookResult) {
        self.reports.done.do_send(HookDone {
            src: self.src,
            hook,
            result,
        });
    }
}

impl Actor for RoutedJobActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Some(pid) = self.running.take() {
            hooks::kill_group(pid);
            info!(message = "Router hook killed: its job's actor stopped.", job = %self.src, pid);
        }
    }
}

/// What the router makes of a hook's output: a timeout or output past the
/// limit is a failure with its reason; stderr goes to the daemon log.
fn judge(src: JobId, hook: RouterHook, out: hooks::HookOutput, timeout: u64) -> HookResult {
    if out.timed_out {
        return HookResult {
            exit: None,
            stdout: Vec::new(),
            error: Some(format!(
                "killed after running {timeout} s (ROOST_ROUTER_HOOK_TIMEOUT)"
            )),
        };
    }
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

impl Handler<RunHook> for RoutedJobActor {
    type Result = ();

    fn handle(&mut self, msg: RunHook, ctx: &mut Context<Self>) {
        let RunHook { hook, run } = msg;
        if self.running.is_some() {
            // The core runs one hook of a job at a time; a second would be
            // a fault of the caller, refused rather than run beside it.
            return self.done(
                hook,
                HookResult {
                    exit: None,
                    stdout: Vec::new(),
                    error: Some("another hook of the job is running".into()),
                },
            );
        }
        let running = match hooks::spawn(&run) {
            Ok(r) => r,
            Err(e) => {
                return self.done(
                    hook,
                    HookResult {
                        exit: None,
                        stdout: Vec::new(),
                        error: Some(e.to_string()),
                    },
                );
            }
        };
        let pid = running.pid();
        let started = crate::spawn::process::process_started(pid).unwrap_or(0);
        info!(message = "Router hook started.", job = %self.src, hook = ?hook,
            path = %run.path.display(), pid);
        self.running = Some(pid);
        self.reports.started.do_send(HookStarted {
            src: self.src,
            hook,
            pid,
            started,
        });
        let timeout = run.timeout.map_or(0, |t| t.as_secs());
        ctx.spawn(running.finish().into_actor(self).map(move |out, act, _| {
            act.running = None;
            let result = judge(act.src, hook, out, timeout);
            act.done(hook, result);
        }));
    }
}
