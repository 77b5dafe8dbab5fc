//! What the daemons' wings share: the clock ([`clock`]), their sockets'
//! plumbing ([`socket`]), and daemon ClassAd hooks — the cron actors
//! ([`cron`]) and what they need of the daemon that runs them
//! ([`cron_host`]). Nothing here knows a particular daemon's actors.

pub mod clock;
pub mod cron;
pub mod cron_host;
pub mod socket;
