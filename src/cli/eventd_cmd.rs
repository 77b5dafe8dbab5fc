//! `roost eventd`: the event daemon (`../shared/spec/eventd.txt`). Every
//! `EVENTD_INTERVAL` it reads the pool's slot ads from etcd and, for each
//! SHUTDOWN event of `EVENT_LIST`, asks the pure core
//! (`eventd::schedule`) whether the event must be active; an active
//! event's rounds (`eventd::plan`) give machines to put down — the
//! shutdown configuration set in each node's persistent runtime
//! configuration through the pool (`pool::inbox`) — and slots to vacate,
//! paced by the vacate estimate. Every `EVENTD_SHUTDOWN_CLEANUP_INTERVAL`
//! expired shutdown configurations are removed. Stateless, as the spec
//! says: a restarted eventd starts again from the pool's ads. Its
//! decisions go to its own event log (`$(SPOOL)/roost-eventd-events`,
//! `roost-log --log` reads it) and to EventdLog.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, anyhow};
use clap::Args;
use tracing::{info, warn};

use super::daemon_log::LogSettings;
use super::startd_cmd::{dir, init_logging_as};
use super::sysconfig::load_daemon_config;
use crate::actors::clock::{Clock, SystemClock};
use crate::admin::Request;
use crate::classad::{ClassAd, parse_ad};
use crate::eventd::event::EventdEvent;
use crate::eventd::plan::{self, Pacing, Progress};
use crate::eventd::schedule::END_DOWN_TIME;
use crate::eventd::settings::EventdSettings;
use crate::events::{DaemonEvent, Event, EventStore, SledStore};
use crate::pool::PoolSettings;
use crate::pool::inbox::{Action, ask};

/// `roost eventd`.
#[derive(Args, Debug)]
pub struct EventdCmd {
    /// The root configuration file (default: $CONDOR_CONFIG, then the
    /// standard places).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// Stay in the foreground.
    #[arg(short = 'f', long)]
    foreground: bool,
}

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

/// The knobs [`shutdown_statements`] set, which the cleanup drops.
const SHUTDOWN_KNOBS: [&str; 4] = [END_DOWN_TIME, "Shutdown", "START", "STARTD_EXPRS"];

/// How many machines the eventd asks at once.
const ASK_AT_ONCE: usize = 32;

/// One active event: what this run did, and when its next round is.
struct Active {
    progress: Progress,
    next_round: i64,
}

/// The daemon's state (none of it survives a restart, by design).
struct Eventd {
    settings: EventdSettings,
    pool: PoolSettings,
    store: SledStore,
    tz: jiff::tz::TimeZone,
    active: BTreeMap<String, Active>,
    next_look: i64,
    next_cleanup: i64,
    /// Machines whose expired configuration was removed, with the
    /// `EndDownTime` it had.
    cleaned: std::collections::BTreeSet<(String, i64)>,
}

impl Eventd {
    fn record(&mut self, now: i64, actor: &str, e: Event) {
        let next = self.store.next_seq();
        if let Err(err) = self.store.append(next, &[(now, actor.to_string(), e)]) {
            warn!(message = "Cannot record in the eventd's log.", error = %err);
        }
    }

    /// The pool's slot ads (those that parse).
    fn ads(&self) -> Result<Vec<ClassAd>, crate::pool::etcd::EtcdError> {
        let kvs = self
            .pool
            .client()
            .range_prefix(&format!("{}Machine/", self.pool.ads_prefix()))?;
        Ok(kvs
            .iter()
            .filter_map(|kv| parse_ad(&String::from_utf8_lossy(&kv.value)).ok())
            .collect())
    }

    /// Asks `machine` for `action`; whether it took it, and its answer.
    fn ask(&self, machine: &str, action: Action) -> (bool, String) {
        match ask(&self.pool, machine, action, self.pool.timeout) {
            Ok(r) => (r.ok, r.message),
            Err(e) => (false, e.to_string()),
        }
    }

    /// Asks each machine for its action, [`ASK_AT_ONCE`] at a time (a
    /// round may put thousands of machines down); the answers in order.
    fn ask_all(&self, asks: Vec<(String, Action)>) -> Vec<(bool, String)> {
        let mut out = Vec::with_capacity(asks.len());
        for chunk in asks.chunks(ASK_AT_ONCE) {
            std::thread::scope(|s| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|(m, a)| s.spawn(|| self.ask(m, a.clone())))
                    .collect();
                for h in handles {
                    out.push(
                        h.join()
                            .unwrap_or_else(|_| (false, "the request's thread failed".into())),
                    );
                }
            });
        }
        out
    }

    /// One wake-up at `now`; when the next is due.
    fn tick(&mut self, now: i64) -> i64 {
        let mut ads: Option<Vec<ClassAd>> = None;
        let mut load = |me: &Eventd| -> Option<Vec<ClassAd>> {
            if ads.is_none() {
                match me.ads() {
                    Ok(a) => ads = Some(a),
                    Err(e) => warn!(message = "Cannot read the pool.", error = %e),
                }
            }
            ads.clone()
        };
        if now >= self.next_cleanup
            && let Some(a) = load(self)
        {
            self.cleanup(&a, now);
            self.next_cleanup = now + self.settings.cleanup_interval;
        }
        if now >= self.next_look {
            self.next_look = now + self.settings.interval;
            for event in self.settings.events.clone() {
                if self.active.contains_key(&event.name) {
                    continue;
                }
                let prep = self.settings.max_preparation;
                if event.to_consider(now, prep, &self.tz).is_none() {
                    continue;
                }
                let Some(a) = load(self) else { continue };
                let interval = self.settings.interval;
                if let Some(act) = event.activation(now, interval, prep, &a, &self.tz) {
                    let (start, end, needed) = (act.start, act.end, act.needed);
                    info!(message = "Event active.", event = %event.name, start, end, needed);
                    let e = EventdEvent::Activated {
                        event: event.name.clone(),
                        start,
                        end,
                        needed,
                    };
                    self.record(now, &event.name, Event::Eventd(e));
                    let progress = Progress {
                        end,
                        ..Progress::default()
                    };
                    self.active.insert(
                        event.name.clone(),
                        Active {
                            progress,
                            next_round: now,
                        },
                    );
                }
            }
        }
        let mut next = self.next_look.min(self.next_cleanup);
        for event in self.settings.events.clone() {
            let Some(mut act) = self.active.remove(&event.name) else {
                continue;
            };
            if now >= act.progress.end {
                info!(message = "Event over.", event = %event.name);
                let e = EventdEvent::Ended {
                    event: event.name.clone(),
                };
                self.record(now, &event.name, Event::Eventd(e));
                continue;
            }
            if now >= act.next_round {
                match load(self) {
                    Some(a) => {
                        let wait = self.round(&event, &a, now, &mut act.progress);
                        act.next_round = now + wait;
                    }
                    None => act.next_round = now + 10,
                }
            }
            next = next.min(act.next_round).min(act.progress.end);
            self.active.insert(event.name.clone(), act);
        }
        next
    }

    /// One round of an active event; seconds to the next.
    fn round(
        &mut self,
        event: &crate::eventd::schedule::Shutdown,
        ads: &[ClassAd],
        now: i64,
        progress: &mut Progress,
    ) -> i64 {
        let pacing = Pacing {
            interval: self.settings.interval,
            slow_start: self.settings.slow_start,
        };
        let r = plan::round(event, ads, now, pacing, progress);
        let asks = (r.configure.iter())
            .map(|(m, until)| {
                let set = shutdown_statements(*until);
                (m.clone(), Action::Config { set, unset: vec![] })
            })
            .collect();
        let answers = self.ask_all(asks);
        for ((machine, until), (ok, answer)) in r.configure.into_iter().zip(answers) {
            if ok {
                info!(message = "Machine put down.", event = %event.name, machine = %machine, until);
            } else {
                warn!(message = "Machine not put down; asked again next round.", event = %event.name, machine = %machine, answer = %answer);
                progress.configured.remove(&machine);
            }
            let e = EventdEvent::Configured {
                event: event.name.clone(),
                machine,
                until,
                answer,
                ok,
            };
            self.record(now, &event.name, Event::Eventd(e));
        }
        let asks = (r.vacate.iter())
            .map(|slot| {
                let machine = slot.split_once('@').map_or(slot.as_str(), |(_, m)| m);
                let request = Request::Vacate {
                    slot: Some(slot.clone()),
                    fast: false,
                };
                (machine.to_string(), Action::Command { request })
            })
            .collect();
        let answers = self.ask_all(asks);
        for (slot, (ok, answer)) in r.vacate.into_iter().zip(answers) {
            info!(message = "Slot vacated.", event = %event.name, slot = %slot, ok, answer = %answer);
            if !ok {
                progress.vacated.remove(&slot);
            }
            let e = EventdEvent::Vacated {
                event: event.name.clone(),
                slot,
                answer,
                ok,
            };
            self.record(now, &event.name, Event::Eventd(e));
        }
        r.next_in.max(1)
    }

    /// Removes the shutdown configuration of machines whose `EndDownTime`
    /// has passed.
    fn cleanup(&mut self, ads: &[ClassAd], now: i64) {
        let expired = plan::expired(ads, now);
        // A machine cleaned whose ad still shows the old EndDownTime (its
        // next publication is on its way) is not asked again.
        self.cleaned.retain(|c| expired.contains(c));
        for (machine, until) in expired {
            if self.cleaned.contains(&(machine.clone(), until)) {
                continue;
            }
            let unset = SHUTDOWN_KNOBS.iter().map(|k| k.to_string()).collect();
            let (ok, answer) = self.ask(&machine, Action::Config { set: vec![], unset });
            info!(message = "Expired shutdown configuration removed.", machine = %machine, ok, answer = %answer);
            if ok {
                self.cleaned.insert((machine.clone(), until));
            }
            let e = EventdEvent::Cleaned {
                machine,
                answer,
                ok,
            };
            self.record(now, "cleanup", Event::Eventd(e));
        }
    }
}

/// Runs `roost eventd` until SIGTERM or SIGINT; SIGHUP re-reads the
/// configuration (one that does not read is logged and the old kept).
pub fn run(cmd: EventdCmd) -> Result<ExitCode> {
    let config = load_daemon_config(cmd.config.as_deref(), "EVENTD")?;
    let settings = EventdSettings::read(&config).map_err(|e| anyhow!("configuration: {e}"))?;
    let pool = PoolSettings::from_config(&config)?
        .ok_or_else(|| anyhow!("roost eventd works on a pool: set ROOST_POOL_ETCD"))?;
    let log_dir = dir(&config, "LOG")?;
    let spool = dir(&config, "SPOOL")?;
    let log_settings =
        LogSettings::of(&config, &log_dir, "EVENTD", "EventdLog").map_err(|e| anyhow!(e))?;
    if !cmd.foreground {
        nix::unistd::daemon(true, false).map_err(|e| anyhow!("cannot detach: {e}"))?;
    }
    init_logging_as(&config, "EVENTD", &log_settings)?;
    let events = spool.join("roost-eventd-events");
    let store = SledStore::open(&events).map_err(|e| anyhow!("event log: {e}"))?;
    let now = SystemClock.now();
    let mut d = Eventd {
        settings,
        pool,
        store,
        tz: jiff::tz::TimeZone::system(),
        active: BTreeMap::new(),
        next_look: now,
        next_cleanup: now,
        cleaned: std::collections::BTreeSet::new(),
    };
    let started = DaemonEvent::Started {
        version: env!("CARGO_PKG_VERSION").into(),
        pid: std::process::id(),
        host: d.pool.principal().to_string(),
        slots: Vec::new(),
        boot: String::new(),
    };
    d.record(now, "daemon", Event::Daemon(started));
    info!(message = "Starting.", events = d.settings.events.len(), log = %events.display(),
        interval = d.settings.interval);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let why = rt.block_on(serve(&mut d, cmd.config.as_deref()))?;
    d.record(
        SystemClock.now(),
        "daemon",
        Event::Daemon(DaemonEvent::Stopped { why: why.clone() }),
    );
    info!(message = "Stopped.", why = %why);
    Ok(ExitCode::SUCCESS)
}

/// The daemon's loop; why it ended.
async fn serve(d: &mut Eventd, config: Option<&str>) -> Result<String> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    loop {
        let now = SystemClock.now();
        let next = d.tick(now);
        let wait = Duration::from_secs(u64::try_from((next - now).max(1)).unwrap_or(1));
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            _ = term.recv() => return Ok("SIGTERM".into()),
            _ = int.recv() => return Ok("SIGINT".into()),
            _ = hup.recv() => {
                match load_daemon_config(config, "EVENTD")
                    .and_then(|c| EventdSettings::read(&c).map_err(|e| anyhow!("{e}")))
                {
                    Ok(s) => {
                        info!(message = "Reconfigured.", events = s.events.len());
                        d.active.retain(|name, _| s.events.iter().any(|e| &e.name == name));
                        d.settings = s;
                        d.next_look = SystemClock.now();
                    }
                    Err(e) => warn!(message = "Reconfiguration refused; keeping the old configuration.", error = %e),
                }
            }
        }
    }
}
