//! A hook invocation as an actor: validates the path, starts the process,
//! records `Started`, waits (with the timeout), records `Finished` with
//! what the output meant, answers whoever asked, and stops. A job that
//! FETCH_WORK handed out is in the log durably (`Finished` holds it) before
//! anyone is told of it, so a daemon restarted from the log answers it.
//! FETCH_WORK's events are otherwise handed to the slot that asked, which
//! writes them with its own or, for a poll that found nothing, folds them
//! into a run of such polls (`policy::quiet`); its output files stay on
//! disk while it runs, so a restart still reads what it printed.

use std::rc::Rc;

use actix::prelude::*;
use tracing::{debug, warn};

use super::shared::Shared;
use crate::config::daemon_knobs::DaemonSettings;
use crate::events::Event;
use crate::hooks::{self, HookOutput, HookRun, capture};
use crate::startd::HookEvent;
use crate::starter::protocol::default_hook_timeout;

/// The hooks whose output goes to files that outlive the daemon
/// ([`capture`]): what FETCH_WORK prints may be a job already handed out.
pub const CAPTURED: &[&str] = &["FETCH_WORK"];

/// A finished (or refused) hook, for the actor that asked for it.
#[derive(Message)]
#[rtype(result = "()")]
pub struct HookDone {
    /// The hook type.
    pub hook: &'static str,
    /// Its output, or why it did not run.
    pub output: Result<HookOutput, hooks::HookError>,
    /// Its events, when it handed out nothing and the log does not have
    /// them yet: the one who asked writes them, or folds them away.
    pub unrecorded: Option<Unrecorded>,
}

/// A hook run's events not yet in the log (see [`HookDone::unrecorded`]).
#[derive(Debug)]
pub struct Unrecorded {
    /// The hook's actor.
    pub actor: String,
    /// `Started`, `Finished`.
    pub events: Vec<Event>,
    /// It exited 0 and printed no work: a poll that found nothing.
    pub quiet: bool,
    /// How long it ran, in seconds.
    pub seconds: f64,
}

/// Says what a hook's output means, for the log, and the job it handed
/// out, if any (FETCH_WORK), to keep in the log.
pub type Classify = fn(&HookOutput) -> (String, Option<String>);

/// One hook invocation.
pub struct HookActor {
    shared: Rc<Shared>,
    id: String,
    hook: &'static str,
    slot: String,
    claim: Option<u64>,
    run: HookRun,
    classify: Classify,
    reply: Option<Recipient<HookDone>>,
    /// `Started`, held for the one who asked (see [`HookDone::unrecorded`]).
    held: Option<Event>,
}

impl HookActor {
    /// Starts `run` as hook `hook` of `slot`; `reply` hears the outcome.
    pub fn launch(
        shared: &Rc<Shared>,
        hook: &'static str,
        slot: &str,
        claim: Option<u64>,
        mut run: HookRun,
        classify: Classify,
        reply: Option<Recipient<HookDone>>,
    ) {
        let id = format!("{slot}/{hook}/{}", shared.next_id());
        if CAPTURED.contains(&hook) {
            run.capture = Some(capture::base_of(&shared.dirs.hook_output(), &id));
        }
        HookActor {
            shared: Rc::clone(shared),
            id,
            hook,
            slot: slot.to_string(),
            claim,
            run,
            classify,
            reply,
            held: None,
        }
        .start();
    }

    fn refuse(&mut self, error: hooks::HookError, ctx: &mut Context<Self>) {
        self.drop_capture();
        let reason = error.to_string();
        warn!(message = "Hook not run.", hook = self.hook, slot = %self.slot, reason = %reason);
        let ev = HookEvent::Refused {
            hook: self.hook.to_string(),
            slot: self.slot.clone(),
            path: self.run.path.display().to_string(),
            reason,
        };
        let _ = self.shared.record(&self.id, vec![Event::Hook(ev)]);
        if let Some(r) = self.reply.take() {
            r.do_send(HookDone {
                hook: self.hook,
                output: Err(error),
                unrecorded: None,
            });
        }
        ctx.stop();
    }
}

impl Actor for HookActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Err(e) = hooks::validate(&self.run.path) {
            return self.refuse(e, ctx);
        }
        let running = match hooks::spawn(&self.run) {
            Ok(r) => r,
            Err(e) => return self.refuse(e, ctx),
        };
        let pid = running.pid();
        debug!(message = "Hook started.", hook = self.hook, slot = %self.slot, pid);
        let ev = HookEvent::Started {
            hook: self.hook.to_string(),
            slot: self.slot.clone(),
            path: self.run.path.display().to_string(),
            args: self.run.args.clone(),
            pid,
            claim: self.claim,
        };
        if CAPTURED.contains(&self.hook) && self.reply.is_some() {
            self.held = Some(Event::Hook(ev));
        } else if let Err(e) = self.shared.record(&self.id, vec![Event::Hook(ev)]) {
            warn!(message = "Cannot record hook start.", hook = self.hook, error = %e);
        }
        ctx.spawn(running.finish().into_actor(self).map(|out, act, ctx| {
            for line in &out.stderr {
                warn!(message = "Hook stderr.", hook = act.hook, slot = %act.slot, line = %line);
            }
            let (outcome, handout) = (act.classify)(&out);
            if out.timed_out {
                warn!(message = "Hook killed at its timeout.", hook = act.hook, slot = %act.slot,
                    seconds = out.elapsed.as_secs_f64());
            }
            let durable = handout.is_some();
            let quiet = !out.timed_out
                && out.exit == hooks::Exit::Code(0)
                && handout.is_none()
                && outcome == hooks::output::NO_WORK;
            let seconds = out.elapsed.as_secs_f64();
            let mut ev: Vec<Event> = act.held.take().into_iter().collect();
            ev.push(Event::Hook(HookEvent::Finished {
                exit: out.exit.clone(),
                timed_out: out.timed_out,
                truncated: out.truncated,
                stdout_bytes: out.stdout.len() as u64,
                outcome,
                elapsed: seconds,
                handout,
            }));
            let mut done = HookDone {
                hook: act.hook,
                output: Ok(out),
                unrecorded: None,
            };
            if !durable {
                if ev.len() > 1 {
                    done.unrecorded = Some(Unrecorded {
                        actor: act.id.clone(),
                        events: ev,
                        quiet,
                        seconds,
                    });
                } else if let Err(e) = act.shared.record(&act.id, ev) {
                    warn!(message = "Cannot record hook end.", hook = act.hook, error = %e);
                }
                act.drop_capture();
                act.answer(done);
                ctx.stop();
                return;
            }
            // A hand-out is acted on only once the log holds it.
            let append = act.shared.append_later(&act.id, ev);
            ctx.wait(append.into_actor(act).map(move |r, act, ctx| {
                match r {
                    Ok(_) => {
                        crate::failpoint::hit("handout-recorded");
                        act.drop_capture();
                        act.answer(done);
                    }
                    // The daemon stops on a log it cannot write; the job
                    // is not taken.
                    Err(e) => warn!(message = "Cannot record a fetched job; not acting on it.",
                        slot = %act.slot, error = %e),
                }
                ctx.stop();
            }));
        }));
    }
}

impl HookActor {
    /// Removes the files of the hook's output once the log holds what
    /// they meant.
    fn drop_capture(&self) {
        if let Some(base) = &self.run.capture {
            capture::remove(base);
        }
    }

    /// Tells the one who asked; events it was to write are recorded here
    /// when it is gone.
    fn answer(&mut self, done: HookDone) {
        let Some(r) = self.reply.take() else {
            return;
        };
        if r.connected() {
            r.do_send(done);
        } else if let Some(u) = done.unrecorded
            && let Err(e) = self.shared.record(&u.actor, u.events)
        {
            warn!(message = "Cannot record hook events.", hook = self.hook, error = %e);
        }
    }
}

/// Runs hooks of one type one after the other, each once the last has
/// ended (as a starter runs a job's own JOB_EXIT and then its fetcher's),
/// their outputs ignored; then stops.
pub struct InTurn {
    shared: Rc<Shared>,
    hook: &'static str,
    slot: String,
    claim: Option<u64>,
    runs: std::collections::VecDeque<HookRun>,
}

impl InTurn {
    /// Starts `runs` as hooks `hook` of `slot` (under `claim`), in order.
    pub fn launch(
        shared: &Rc<Shared>,
        hook: &'static str,
        (slot, claim): (&str, Option<u64>),
        runs: Vec<HookRun>,
    ) {
        InTurn {
            shared: Rc::clone(shared),
            hook,
            slot: slot.to_string(),
            claim,
            runs: runs.into(),
        }
        .start();
    }

    fn next(&mut self, ctx: &mut Context<Self>) {
        match self.runs.pop_front() {
            Some(run) => HookActor::launch(
                &self.shared,
                self.hook,
                &self.slot,
                self.claim,
                run,
                ignored,
                Some(ctx.address().recipient()),
            ),
            None => ctx.stop(),
        }
    }
}

impl Actor for InTurn {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.next(ctx);
    }
}

impl Handler<HookDone> for InTurn {
    type Result = ();

    fn handle(&mut self, _: HookDone, ctx: &mut Context<Self>) {
        self.next(ctx);
    }
}

/// For hooks whose output is ignored.
pub fn ignored(out: &HookOutput) -> (String, Option<String>) {
    (format!("{} (output ignored)", out.exit), None)
}

/// `<KEYWORD>_HOOK_<TYPE>_TIMEOUT` in seconds, else the hook's default.
pub fn hook_timeout(settings: &DaemonSettings, keyword: &str, hook: &str) -> u64 {
    settings
        .hook_timeout(keyword, hook)
        .unwrap_or_else(|| default_hook_timeout(hook))
}
