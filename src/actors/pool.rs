//! The node in the pool (`ROOST_POOL_ETCD`): every second the node actor
//! gathers its slots' public ads and offers them to the publisher thread
//! (`pool::publish`), which decides what etcd needs and when. Nothing here
//! waits on etcd.

use std::time::Duration;

use actix::prelude::*;
use tracing::{info, warn};

use super::node::NodeActor;
use crate::pool::PoolSettings;
use crate::pool::publish::Publisher;

impl NodeActor {
    /// Publishes the node's ads in `pool` (`None`: in no pool).
    #[must_use]
    pub fn with_pool(mut self, pool: Option<PoolSettings>) -> NodeActor {
        self.pool = pool;
        self
    }

    /// Starts the publisher and the second's timer that feeds it.
    pub(super) fn start_pool(&mut self, ctx: &mut Context<NodeActor>) {
        let Some(pool) = self.pool.clone() else {
            return;
        };
        let prefix = pool.prefix.clone();
        match Publisher::start(pool, self.shared.name.clone()) {
            Ok(p) => self.publisher = Some(p),
            Err(e) => {
                warn!(message = "Cannot start the pool publisher; the node runs outside the pool.", error = %e);
                return;
            }
        }
        info!(message = "Publishing in the pool.", prefix = %prefix);
        ctx.run_interval(Duration::from_secs(1), |act, ctx| {
            let ads = act.public_ads();
            ctx.spawn(ads.into_actor(act).map(|ads, act, _| {
                if let Some(p) = &act.publisher {
                    p.offer(ads);
                }
            }));
        });
    }
}
