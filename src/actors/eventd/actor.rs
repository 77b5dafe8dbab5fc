//! The eventd's actor: decide, append, apply, then act. A wake-up (its
//! timer) reads the pool's ads when the core wants them (on a blocking
//! thread, the answer back as a message), asks the core, appends the
//! decision durably to the eventd's log, applies it, then sends the
//! requests it asks for, [`ASK_AT_ONCE`] at a time, each on a blocking
//! thread whose answer comes back as [`Answer`] and is decided and
//! recorded in turn. A request the log holds unanswered when the actor
//! starts (the last run died between recording and hearing back) is
//! looked up in etcd first: its reply taken if there is one, waited for if
//! it was sent, sent if it never was. A log write that fails stops the
//! eventd.

use std::collections::VecDeque;
use std::time::Duration;

use actix::prelude::*;
use tracing::{error, info, warn};

use super::LOG_FAILED;
use crate::actors::common::clock::{Clock, SystemClock};
use crate::admin::Request;
use crate::classad::{ClassAd, parse_ad};
use crate::eventd::core::{
    self, Ask, Ctx as CoreCtx, Decision, EventdState, Input, Timers, next_wake, wants_pool,
};
use crate::eventd::event::EventdEvent;
use crate::eventd::event::EventdLogged;
use crate::eventd::schedule::END_DOWN_TIME;
use crate::eventd::settings::EventdSettings;
use crate::events::{DaemonEvent, EventStore, SledStore, StoreError};
use crate::pool::PoolSettings;
use crate::pool::inbox::{self, Action, Sent};

/// How many requests are out at once (a round may put thousands of
/// machines down).
pub const ASK_AT_ONCE: usize = 32;

/// The statements that put a machine down until `until`, as the spec
/// writes them.
pub fn shutdown_statements(until: i64) -> Vec<String> {
    vec![
        format!("{END_DOWN_TIME} = {until}"),
        "Shutdown = (CurrentTime < EndDownTime)".into(),
        "START : ($(START)) && ($(Shutdown) == False)".into(),
        "STARTD_EXPRS = $(STARTD_EXPRS), EndDownTime".into(),
    ]
}

/// The knobs [`shutdown_statements`] set, which a cleanup drops.
const SHUTDOWN_KNOBS: [&str; 4] = [END_DOWN_TIME, "Shutdown", "START", "STARTD_EXPRS"];

/// What the pool is asked for a request.
fn action_of(ask: &Ask) -> Action {
    match ask {
        Ask::Configure { until, .. } => Action::Config {
            set: shutdown_statements(*until),
            unset: vec![],
        },
        Ask::Clean { .. } => Action::Config {
            set: vec![],
            unset: SHUTDOWN_KNOBS.iter().map(|k| k.to_string()).collect(),
        },
        Ask::Vacate { slot, .. } => Action::Command {
            request: Request::Vacate {
                slot: Some(slot.clone()),
                fast: false,
            },
        },
    }
}

/// The log's actor of a request: its event's name, or `cleanup`.
fn actor_of(ask: &Ask) -> &str {
    match ask {
        Ask::Configure { event, .. } | Ask::Vacate { event, .. } => event,
        Ask::Clean { .. } => "cleanup",
    }
}

/// A request to send: its id, its machine, what it asks, and whether the
/// last run may have sent it already.
struct Outgoing {
    id: String,
    machine: String,
    ask: Ask,
    resumed: bool,
}

/// The eventd.
pub struct EventdActor {
    settings: EventdSettings,
    pool: PoolSettings,
    store: SledStore<EventdLogged>,
    tz: jiff::tz::TimeZone,
    state: EventdState,
    timers: Timers,
    /// This run's name: its requests' ids start with it.
    run: String,
    queue: VecDeque<Outgoing>,
    in_flight: usize,
    /// A read of the pool is under way.
    reading: bool,
    timer: Option<SpawnHandle>,
}

/// The timer: time for a wake-up.
#[derive(Message)]
#[rtype(result = "()")]
struct Wake;

/// The pool's ads, read for a wake-up (`None`: they could not be read).
#[derive(Message)]
#[rtype(result = "()")]
struct PoolRead(Option<Vec<ClassAd>>);

/// A machine's answer to a request (or why it could not be asked).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Answer {
    /// The request.
    pub id: String,
    /// Whether it was carried out.
    pub ok: bool,
    /// What the machine said.
    pub answer: String,
}

/// A new configuration (SIGHUP).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Reconfig(pub EventdSettings);

/// Stop (a signal), with why.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Stop(pub String);

impl EventdActor {
    /// The eventd on its log `store`, knowing what the log says (`state`).
    pub fn new(
        settings: EventdSettings,
        pool: PoolSettings,
        store: SledStore<EventdLogged>,
        state: EventdState,
    ) -> EventdActor {
        let now_ms = SystemClock.now_ms();
        EventdActor {
            settings,
            pool,
            store,
            tz: jiff::tz::TimeZone::system(),
            state,
            timers: Timers {
                next_look: now_ms,
                next_cleanup: now_ms,
                rounds: std::collections::BTreeMap::new(),
            },
            run: format!("{now_ms:x}"),
            queue: VecDeque::new(),
            in_flight: 0,
            reading: false,
            timer: None,
        }
    }

    /// Appends `events` (each under `actor`) durably; a failure stops the
    /// eventd.
    fn record(&mut self, events: Vec<(String, EventdLogged)>, ctx: &mut Context<Self>) -> bool {
        if events.is_empty() {
            return true;
        }
        let now = SystemClock.now();
        let batch: Vec<(i64, String, EventdLogged)> =
            events.into_iter().map(|(a, e)| (now, a, e)).collect();
        let next = self.store.next_seq();
        match self.store.append(next, &batch) {
            Ok(_) => true,
            Err(e) => {
                self.failed(&e, ctx);
                false
            }
        }
    }

    fn failed(&self, e: &StoreError, ctx: &mut Context<Self>) {
        error!(message = "The event log cannot be written; the eventd stops.", error = %e);
        ctx.stop();
        System::current().stop_with_code(LOG_FAILED);
    }

    /// Decide, append, apply, then act.
    fn step(&mut self, input: &Input<'_>, ctx: &mut Context<Self>) {
        let now_ms = SystemClock.now_ms();
        let core_ctx = CoreCtx {
            settings: &self.settings,
            tz: &self.tz,
            now_ms,
            run: &self.run,
        };
        let Decision {
            events,
            requests,
            timers,
        } = core::decide(&self.state, &core_ctx, &self.timers, input);
        let named: Vec<(String, EventdLogged)> = events
            .iter()
            .map(|e| (self.actor_for(e), EventdLogged::Eventd(e.clone())))
            .collect();
        if !self.record(named, ctx) {
            return;
        }
        for e in &events {
            self.tell(e);
            core::apply(&mut self.state, e);
        }
        self.timers = timers;
        if !requests.is_empty() {
            crate::failpoint::hit("eventd-recorded");
        }
        for (id, machine, ask) in requests {
            self.queue.push_back(Outgoing {
                id,
                machine,
                ask,
                resumed: false,
            });
        }
        self.pump(ctx);
        self.arm(ctx);
    }

    /// The log's actor of event `e`.
    fn actor_for(&self, e: &EventdEvent) -> String {
        match e {
            EventdEvent::Asked { ask, .. } => actor_of(ask).to_string(),
            EventdEvent::Answered { id, .. } => self
                .state
                .pending
                .get(id)
                .map_or("cleanup", |p| actor_of(&p.ask))
                .to_string(),
            EventdEvent::Activated { event, .. }
            | EventdEvent::Round { event, .. }
            | EventdEvent::Paced { event, .. }
            | EventdEvent::Ended { event }
            | EventdEvent::Withdrawn { event }
            | EventdEvent::Configured { event, .. }
            | EventdEvent::Vacated { event, .. } => event.clone(),
            EventdEvent::Cleaned { .. } => "cleanup".into(),
        }
    }

    /// Says in EventdLog what a recorded decision does.
    fn tell(&self, e: &EventdEvent) {
        match e {
            EventdEvent::Activated {
                event,
                start,
                end,
                needed,
            } => info!(message = "Event active.", event = %event, start, end, needed),
            EventdEvent::Asked { id, machine, ask } => {
                info!(message = "Asking.", id = %id, machine = %machine, ask = ?ask);
            }
            EventdEvent::Answered { id, ok, answer } => {
                let p = self.state.pending.get(id);
                let machine = p.map_or("", |p| p.machine.as_str());
                if *ok {
                    info!(message = "Answered.", id = %id, machine = %machine, answer = %answer);
                } else {
                    warn!(message = "Not done; asked again at the next round where it must be.", id = %id, machine = %machine, answer = %answer);
                }
            }
            EventdEvent::Ended { event } => info!(message = "Event over.", event = %event),
            EventdEvent::Withdrawn { event } => {
                info!(message = "Event no longer configured; given up.", event = %event);
            }
            _ => {}
        }
    }

    /// Sends queued requests while fewer than [`ASK_AT_ONCE`] are out.
    fn pump(&mut self, ctx: &mut Context<Self>) {
        while self.in_flight < ASK_AT_ONCE {
            let Some(out) = self.queue.pop_front() else {
                return;
            };
            self.in_flight += 1;
            let pool = self.pool.clone();
            let addr = ctx.address();
            actix::spawn(async move {
                let id = out.id.clone();
                let (ok, answer) = tokio::task::spawn_blocking(move || deliver(&pool, &out))
                    .await
                    .unwrap_or_else(|_| (false, "the request's thread failed".into()));
                addr.do_send(Answer { id, ok, answer });
            });
        }
    }

    /// Sets the timer for the next wake-up the core wants.
    fn arm(&mut self, ctx: &mut Context<Self>) {
        if let Some(h) = self.timer.take() {
            ctx.cancel_future(h);
        }
        let now_ms = SystemClock.now_ms();
        let at = next_wake(&self.state, &self.timers);
        // At least a second: a wake-up that finds nothing due (the pool
        // unreadable for a cleanup, say) must not spin.
        let wait = u64::try_from((at - now_ms).max(1000)).unwrap_or(1000);
        self.timer = Some(ctx.run_later(Duration::from_millis(wait), |_, ctx| {
            ctx.notify(Wake);
        }));
    }
}

/// Sends request `out` and waits for its answer; a resumed one is looked
/// up first, so that it is sent at most once.
fn deliver(pool: &PoolSettings, out: &Outgoing) -> (bool, String) {
    let result = (|| {
        if out.resumed {
            match inbox::sent(pool, &out.machine, &out.id)? {
                Sent::Replied(r) => return Ok(r),
                Sent::Waiting => {
                    return inbox::wait_reply(pool, &out.machine, &out.id, pool.timeout);
                }
                Sent::No => {}
            }
        }
        inbox::send(pool, &out.machine, &out.id, action_of(&out.ask))?;
        crate::failpoint::hit("eventd-sent");
        inbox::wait_reply(pool, &out.machine, &out.id, pool.timeout)
    })();
    match result {
        Ok(r) => (r.ok, r.message),
        Err(e) => (false, e.to_string()),
    }
}

/// The pool's slot ads (those that parse).
fn read_pool(pool: &PoolSettings) -> Option<Vec<ClassAd>> {
    let prefix = format!("{}Machine/", pool.ads_prefix());
    match pool.client().range_prefix(&prefix) {
        Ok(kvs) => Some(
            kvs.iter()
                .filter_map(|kv| parse_ad(&String::from_utf8_lossy(&kv.value)).ok())
                .collect(),
        ),
        Err(e) => {
            warn!(message = "Cannot read the pool.", error = %e);
            None
        }
    }
}

impl Actor for EventdActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let started = DaemonEvent::Started {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            host: self.pool.principal().to_string(),
            slots: Vec::new(),
            boot: String::new(),
        };
        if !self.record(vec![("daemon".into(), EventdLogged::Daemon(started))], ctx) {
            return;
        }
        // What the last run asked and did not hear back about.
        for (id, p) in &self.state.pending {
            info!(message = "A request of the last run not answered; looked up.", id = %id, machine = %p.machine);
            self.queue.push_back(Outgoing {
                id: id.clone(),
                machine: p.machine.clone(),
                ask: p.ask.clone(),
                resumed: true,
            });
        }
        self.pump(ctx);
        ctx.notify(Wake);
    }
}

impl Handler<Wake> for EventdActor {
    type Result = ();

    fn handle(&mut self, _: Wake, ctx: &mut Context<Self>) {
        if self.reading {
            return;
        }
        let core_ctx = CoreCtx {
            settings: &self.settings,
            tz: &self.tz,
            now_ms: SystemClock.now_ms(),
            run: &self.run,
        };
        if !wants_pool(&self.state, &core_ctx, &self.timers) {
            self.step(&Input::Wake { ads: None }, ctx);
            return;
        }
        self.reading = true;
        let pool = self.pool.clone();
        let addr = ctx.address();
        actix::spawn(async move {
            let ads = tokio::task::spawn_blocking(move || read_pool(&pool))
                .await
                .unwrap_or(None);
            addr.do_send(PoolRead(ads));
        });
    }
}

impl Handler<PoolRead> for EventdActor {
    type Result = ();

    fn handle(&mut self, PoolRead(ads): PoolRead, ctx: &mut Context<Self>) {
        self.reading = false;
        self.step(
            &Input::Wake {
                ads: ads.as_deref(),
            },
            ctx,
        );
    }
}

impl Handler<Answer> for EventdActor {
    type Result = ();

    fn handle(&mut self, a: Answer, ctx: &mut Context<Self>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        crate::failpoint::hit("eventd-answered");
        self.step(
            &Input::Answered {
                id: a.id,
                ok: a.ok,
                answer: a.answer,
            },
            ctx,
        );
    }
}

impl Handler<Reconfig> for EventdActor {
    type Result = ();

    fn handle(&mut self, Reconfig(s): Reconfig, ctx: &mut Context<Self>) {
        info!(message = "Reconfigured.", events = s.events.len());
        self.settings = s;
        self.step(&Input::Reconfigured, ctx);
    }
}

impl Handler<Stop> for EventdActor {
    type Result = ();

    fn handle(&mut self, Stop(why): Stop, ctx: &mut Context<Self>) {
        info!(message = "Stopping.", why = %why, unanswered = self.state.pending.len());
        let stopped = DaemonEvent::Stopped { why };
        if self.record(vec![("daemon".into(), EventdLogged::Daemon(stopped))], ctx) {
            ctx.stop();
            System::current().stop();
        }
    }
}
