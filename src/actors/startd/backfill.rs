//! The backfill client as an actor. HTCondor runs one BOINC client per
//! startd for every slot in the Backfill state; so does Roost. Slots ask
//! for it ([`Want`]) when they enter Backfill/Idle and let it go
//! ([`Release`]) when they leave. The client runs under a `roost starter`
//! (as HTCondor's does under a `condor_starter`), so it runs as
//! `BOINC_Owner` in its own process group, and goes away with the daemon.
//! It is started when the first slot wants it, told to leave (its
//! `KillSig`) when the last slot lets it go, and started again, at most
//! once a minute, when it exits on its own.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use actix::prelude::*;
use tracing::{error, info, warn};

use super::messages::{Release, SlotInput, StarterPids, Want, deliver};
use super::request::starter_request;
use super::shared::Shared;
use super::starter::{StarterActor, StarterCmd, StarterOwner};
use crate::classad::{ClassAd, FixedEnv};
use crate::events::{DaemonEvent, Event};
use crate::policy::engine::{Input, backfill_job};
use crate::starter::protocol::{Command, StarterHooks};

/// The event log's actor name for the backfill client.
const ACTOR: &str = "backfill";

/// The client is started at most this often (seconds).
const RESTART_EVERY: i64 = 60;

/// One slot the client works, or will work, for.
struct Wanting {
    addr: Recipient<SlotInput>,
    /// Told [`Input::BackfillStarted`].
    told: bool,
}

/// The daemon's backfill client.
pub struct BackfillActor {
    shared: Rc<Shared>,
    wanting: BTreeMap<String, Wanting>,
    /// Slots that let the client go last, told it is gone once it is.
    leaving: Vec<Recipient<SlotInput>>,
    starter: Option<Addr<StarterActor>>,
    /// The client process runs.
    running: bool,
    /// When the client was last started.
    last_start: Option<i64>,
    retry: Option<SpawnHandle>,
}

impl BackfillActor {
    /// A backfill manager with no client yet.
    pub fn new(shared: &Rc<Shared>) -> BackfillActor {
        BackfillActor {
            shared: Rc::clone(shared),
            wanting: BTreeMap::new(),
            leaving: Vec::new(),
            starter: None,
            running: false,
            last_start: None,
            retry: None,
        }
    }

    fn note(&self, what: String) {
        if let Err(e) = self
            .shared
            .record(ACTOR, vec![Event::Daemon(DaemonEvent::Backfill { what })])
        {
            warn!(message = "Cannot record a backfill event.", error = %e);
        }
    }

    /// Starts the client now, or when the restart delay has passed.
    fn start_soon(&mut self, ctx: &mut Context<Self>) {
        if self.starter.is_some() || self.retry.is_some() || self.wanting.is_empty() {
            return;
        }
        let now = self.shared.clock.now();
        let at = self.last_start.map_or(now, |t| t + RESTART_EVERY);
        if at > now {
            let wait = u64::try_from(at - now).unwrap_or(1);
            self.retry = Some(ctx.run_later(Duration::from_secs(wait), |act, ctx| {
                act.retry = None;
                act.start_soon(ctx);
            }));
            return;
        }
        self.last_start = Some(now);
        let config = self.shared.config();
        let job = match backfill_job(&config) {
            Ok(j) => j,
            Err(e) => {
                error!(message = "Cannot start the backfill client.", error = %e);
                self.note(format!("client not started: {e}"));
                self.start_soon(ctx);
                return;
            }
        };
        // The client is no fetched job: no fetcher's starter hooks hear of
        // it (STARTER_JOB_HOOK_KEYWORD and the default keyword included).
        let hooks = StarterHooks::default();
        let req = starter_request(
            &self.shared,
            &self.shared.settings(),
            ACTOR,
            &job,
            hooks,
            &ClassAd::new(),
            30,
        );
        let program = job.eval_attr("Cmd", &FixedEnv::new(now)).to_string();
        info!(message = "Starting the backfill client.", program = %program);
        let me = ctx.address();
        self.starter = Some(StarterActor::launch(
            &self.shared,
            StarterOwner {
                exited: me.clone().recipient(),
                pids: me.recipient(),
            },
            ACTOR,
            0,
            "backfill client".into(),
            req,
        ));
    }
}

impl Actor for BackfillActor {
    type Context = Context<Self>;
}

impl Handler<Want> for BackfillActor {
    type Result = ();

    fn handle(&mut self, w: Want, ctx: &mut Context<Self>) {
        if self.running {
            deliver(
                &w.addr,
                SlotInput(Input::BackfillStarted),
                "the backfill client's news",
            );
        }
        self.wanting.insert(
            w.slot,
            Wanting {
                addr: w.addr,
                told: self.running,
            },
        );
        self.start_soon(ctx);
    }
}

impl Handler<Release> for BackfillActor {
    type Result = ();

    fn handle(&mut self, r: Release, ctx: &mut Context<Self>) {
        let Some(gone) = self.wanting.remove(&r.slot) else {
            return;
        };
        if !self.wanting.is_empty() || self.starter.is_none() {
            // The client goes on for the others (or never ran).
            deliver(
                &gone.addr,
                SlotInput(Input::BackfillExited),
                "the backfill client's news",
            );
            if self.wanting.is_empty()
                && let Some(h) = self.retry.take()
            {
                ctx.cancel_future(h);
            }
            return;
        }
        // The last slot: the client is asked to leave, then killed after
        // KILLING_TIMEOUT if it has not.
        self.leaving.push(gone.addr);
        if let Some(s) = &self.starter {
            info!(message = "Stopping the backfill client: no slot is in Backfill.");
            s.do_send(StarterCmd::Send(Command::SoftKill));
            let timeout = self.shared.settings().killing_timeout;
            let wait = u64::try_from(timeout.max(1)).unwrap_or(30);
            let starter = s.clone();
            ctx.run_later(Duration::from_secs(wait), move |act, _| {
                if act.starter.as_ref() == Some(&starter) && act.wanting.is_empty() {
                    warn!(message = "The backfill client did not leave in time; killing it.");
                    starter.do_send(StarterCmd::KillAll);
                }
            });
        }
    }
}

impl Handler<StarterPids> for BackfillActor {
    type Result = ();

    fn handle(&mut self, p: StarterPids, _: &mut Context<Self>) {
        let Some(pid) = p.job else { return };
        if self.running {
            return;
        }
        self.running = true;
        info!(message = "The backfill client runs.", pid);
        self.note(format!("client started (pid {pid})"));
        for w in self.wanting.values_mut() {
            deliver(
                &w.addr,
                SlotInput(Input::BackfillStarted),
                "the backfill client's news",
            );
            w.told = true;
        }
    }
}

impl Handler<SlotInput> for BackfillActor {
    type Result = ();

    fn handle(&mut self, SlotInput(input): SlotInput, ctx: &mut Context<Self>) {
        if !matches!(input, Input::StarterExited | Input::StarterLost) {
            return;
        }
        let ran = std::mem::take(&mut self.running);
        self.starter = None;
        if ran {
            info!(message = "The backfill client exited.");
            self.note("client exited".into());
        } else {
            warn!(message = "The backfill client did not start; see the starter's log lines.");
            self.note("client did not start".into());
        }
        for a in self.leaving.drain(..) {
            deliver(
                &a,
                SlotInput(Input::BackfillExited),
                "the backfill client's news",
            );
        }
        // Slots it worked for go to Backfill/Idle and want it again; slots
        // still waiting for it keep waiting for the next start.
        self.wanting.retain(|_, w| {
            if w.told {
                deliver(
                    &w.addr,
                    SlotInput(Input::BackfillExited),
                    "the backfill client's news",
                );
            }
            !w.told
        });
        self.start_soon(ctx);
    }
}
