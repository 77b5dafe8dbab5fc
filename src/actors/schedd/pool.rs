//! The schedd in the pool (`ROOST_POOL_ETCD`): every second the schedd
//! actor offers its ad (with schedd cron's attributes) to a publisher
//! thread (`pool::publish`), which writes it under the schedd's lease at
//! `<prefix>/ads/Scheduler/<Name>` every `UPDATE_INTERVAL`, and withdraws
//! it when the schedd stops; `roost status -pool -schedd` reads them.
//! Nothing here waits on etcd.

use std::time::Duration;

use actix::prelude::*;
use tracing::{info, warn};

use super::queue::ScheddActor;
use crate::classad::unparse::ad_to_string;
use crate::pool::PoolSettings;
use crate::pool::publish::Publisher;

impl ScheddActor {
    /// Publishes the schedd's ad in `pool` (`None`: in no pool).
    #[must_use]
    pub fn with_pool(mut self, pool: Option<PoolSettings>) -> ScheddActor {
        self.pool = pool;
        self
    }

    /// Starts the publisher and the second's timer that feeds it.
    pub(super) fn start_pool(&mut self, ctx: &mut Context<ScheddActor>) {
        let Some(pool) = self.pool.clone() else {
            return;
        };
        let prefix = pool.prefix.clone();
        match Publisher::start(pool, self.identity.name.clone()) {
            Ok(p) => self.publisher = Some(p),
            Err(e) => {
                warn!(message = "Cannot start the pool publisher; the schedd runs outside the pool.", error = %e);
                return;
            }
        }
        info!(message = "Publishing in the pool.", prefix = %prefix);
        ctx.run_interval(Duration::from_secs(1), |me, _| {
            if let Some(p) = &me.publisher {
                p.offer(vec![ad_to_string(&me.full_ad())]);
            }
        });
    }
}
