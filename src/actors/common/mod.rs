//! What the daemons' wings share: the clock ([`clock`]), their sockets'
//! plumbing ([`socket`]), what a composition root does the same way in
//! every daemon ([`daemon`]: directories, logging, detaching, signals),
//! the daemon log file ([`daemon_log`]), configuration read from the
//! file system ([`sysconfig`]), what is detected of the machine
//! ([`machine`]), state one actor owns and others read ([`latest`]), and
//! daemon ClassAd hooks — the cron actors ([`cron`])
//! and what they need of the daemon that runs them ([`cron_host`]).
//! Nothing here knows a particular daemon's actors.

pub mod clock;
pub mod cron;
pub mod cron_host;
pub mod daemon;
pub mod daemon_log;
pub mod latest;
pub mod machine;
pub mod socket;
pub mod sysconfig;
