//! `roost eventd`'s wing (`../shared/spec/eventd.txt`): its composition
//! root ([`run`]: configuration, logging, its event log replayed into the
//! core's state, the actor, the signals) and its one actor
//! ([`actor::EventdActor`]), a thin shell around the pure core
//! `eventd::core`: at each wake-up and each answer it asks the core, records
//! the decision in its log (`$(SPOOL)/roost-eventd-events`), and only then
//! sends the requests the decision asks for — machines put down (their
//! persistent runtime configuration set through the pool), slots vacated,
//! expired configurations removed. A restart replays the log and carries
//! on: a request recorded and not answered is looked up in etcd first
//! (answered, sent, or never sent), so none is sent twice or skipped.

pub mod actor;

use std::path::PathBuf;
use std::process::ExitCode;

use actix::prelude::*;
use anyhow::{Context as _, Result, anyhow};
use tracing::{info, warn};

use self::actor::{EventdActor, Reconfig, Stop};
use crate::actors::common::daemon::{DaemonSignal, Signals, detach, dir, init_logging_as};
use crate::actors::common::daemon_log::LogSettings;
use crate::actors::common::sysconfig::load_daemon_config;
use crate::eventd::core::EventdState;
use crate::eventd::event::EventdLogged;
use crate::eventd::settings::EventdSettings;
use crate::events::{EventRead, SledStore};
use crate::pool::PoolSettings;

/// The exit code when the event log cannot be written.
const LOG_FAILED: i32 = 3;

/// Where the eventd keeps its log under `spool`.
pub fn events_dir(spool: &std::path::Path) -> PathBuf {
    spool.join("roost-eventd-events")
}

/// The state the eventd's log gives (events that do not decode are
/// skipped, each with a warning naming its place).
pub fn replay(store: &SledStore<EventdLogged>) -> EventdState {
    let mut state = EventdState::default();
    for e in store.read_from(1) {
        match e {
            Ok(env) => {
                if let EventdLogged::Eventd(ev) = &env.event {
                    crate::eventd::core::apply(&mut state, ev);
                }
            }
            Err(err) => {
                warn!(message = "An event of the eventd's log does not read; skipped.", error = %err);
            }
        }
    }
    state
}

/// Runs `roost eventd` until SIGTERM, SIGINT or SIGQUIT; SIGHUP re-reads the
/// configuration (one that does not read is logged and the old kept).
pub fn run(config_path: Option<&str>, foreground: bool) -> Result<ExitCode> {
    let config = load_daemon_config(config_path, "EVENTD")?;
    let settings = EventdSettings::read(&config).map_err(|e| anyhow!("configuration: {e}"))?;
    let pool = PoolSettings::from_config(&config)?
        .ok_or_else(|| anyhow!("roost eventd works on a pool: set ROOST_POOL_ETCD"))?;
    let log_dir = dir(&config, "LOG")?;
    let spool = dir(&config, "SPOOL")?;
    let log_settings =
        LogSettings::of(&config, &log_dir, "EVENTD", "EventdLog").map_err(|e| anyhow!(e))?;
    detach(foreground)?;
    init_logging_as(&config, "EVENTD", &log_settings)?;
    let events = events_dir(&spool);
    let store = SledStore::open_as(&events).map_err(|e| anyhow!("event log: {e}"))?;
    let state = replay(&store);
    info!(message = "Starting.", events = settings.events.len(), log = %events.display(),
        interval = settings.interval, active = state.active.len(), unanswered = state.pending.len());
    let sys = System::new();
    let config_path = config_path.map(str::to_string);
    sys.block_on(async move {
        let actor = EventdActor::new(settings, pool, store, state).start();
        Signals::serve(|s| signals(s, actor, config_path));
    });
    let code = sys.run_with_code().context("actor system")?;
    if code == LOG_FAILED {
        return Err(anyhow!(
            "stopped: the event log could not be written (EventdLog says why); \
             restarted, the eventd replays it and goes on"
        ));
    }
    info!(message = "Stopped.");
    Ok(ExitCode::SUCCESS)
}

/// Stops on SIGTERM, SIGINT or SIGQUIT; reads the configuration again on
/// SIGHUP.
async fn signals(mut signals: Signals, actor: Addr<EventdActor>, config: Option<String>) {
    loop {
        match signals.next().await {
            DaemonSignal::Hup => match load_daemon_config(config.as_deref(), "EVENTD")
                .and_then(|c| EventdSettings::read(&c).map_err(|e| anyhow!("{e}")))
            {
                Ok(s) => actor.do_send(Reconfig(s)),
                Err(e) => {
                    warn!(message = "Reconfiguration refused; keeping the old configuration.", error = %e)
                }
            },
            stop => {
                actor.do_send(Stop(stop.name().into()));
                return;
            }
        }
    }
}
