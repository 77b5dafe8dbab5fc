//! Inside `roost schedd`'s actor: its own ad (`MyType = "Scheduler"`,
//! `schedd::ad`) with what its cron jobs (`SCHEDD_CRON_*`) published, and
//! those jobs' manager, the startd's cron actors (`cron.rs`) run on a
//! [`ScheddHost`]. The ad the jobs' `_CONDITION` sees is made again every
//! second while cron runs; the ad a caller asks for is made at once. A
//! reconfiguration (SIGHUP) gives the manager its new jobs and the router
//! its new routes.

use std::rc::Rc;
use std::sync::Arc;

use actix::prelude::*;
use tracing::{debug, info};

use super::queue::{RouterSettings, ScheddActor};
use crate::actors::common::cron::{CronChanged, CronManager, NewCron, restore};
use crate::actors::common::cron_host::{CronHost, ScheddCronSetup};
use crate::classad::ClassAd;
use crate::cron::config::CronSettings;
use crate::schedd::ad::{Totals, schedd_ad};

/// A new configuration (SIGHUP), read and checked.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Reconfigure {
    /// `SCHEDD_CRON_*`.
    pub cron: CronSettings,
    /// The router's (`None`: the router is off).
    pub routing: Option<RouterSettings>,
}

impl ScheddActor {
    /// Runs schedd cron from `setup` once started.
    #[must_use]
    pub fn with_cron(mut self, setup: ScheddCronSetup) -> ScheddActor {
        self.cron_setup = Some(setup);
        self
    }

    /// Starts the cron manager, the ads of the last run published first.
    pub(super) fn start_cron(&mut self, ctx: &mut Context<ScheddActor>) {
        let Some(setup) = self.cron_setup.take() else {
            return;
        };
        let board = &setup.pens.board;
        let kept =
            (setup.last.as_ref()).map(|l| restore(board, std::slice::from_ref(&setup.settings), l));
        setup.pens.ad.publish(self.own_ad());
        let host: Rc<dyn CronHost> = setup.host.clone();
        let jobs = setup.settings.jobs.len();
        let manager = CronManager::new(
            &host,
            board,
            setup.settings,
            ctx.address().recipient(),
            kept,
        )
        .start();
        info!(message = "Schedd cron started.", jobs);
        self.cron = Some((setup.host, setup.pens.ad, manager));
    }

    /// The schedd's ad without what cron jobs published.
    fn own_ad(&self) -> ClassAd {
        schedd_ad(&self.identity, &Totals::of(&self.queue))
    }

    /// The schedd's ad as `roost status -schedd` shows it.
    pub(super) fn full_ad(&self) -> ClassAd {
        let own = self.own_ad();
        match &self.cron {
            Some((host, _, _)) => host.merged(&own),
            None => own,
        }
    }

    /// Makes the ad cron jobs' conditions see again.
    pub(super) fn refresh_cron_ad(&self) {
        if let Some((_, ad, _)) = &self.cron {
            ad.publish(self.own_ad());
        }
    }
}

impl Handler<CronChanged> for ScheddActor {
    type Result = ();

    fn handle(&mut self, _: CronChanged, _: &mut Context<Self>) {
        debug!(message = "A schedd cron job published.");
    }
}

impl Handler<Reconfigure> for ScheddActor {
    type Result = ();

    fn handle(&mut self, r: Reconfigure, ctx: &mut Context<Self>) {
        self.identity.reconfigured = self.clock.now();
        if let Some((_, _, manager)) = &self.cron {
            manager.do_send(NewCron(r.cron));
        }
        let routes = r.routing.as_ref().map_or(0, |s| s.cfg.routes.len());
        let was_on = self.routing.is_some();
        self.routing = r.routing.map(Arc::new);
        if !was_on {
            // Its polling period is taken when it starts.
            self.start_router(ctx);
        }
        info!(message = "Reconfigured.", routes);
    }
}
