//! `roost schedd`'s wing: the access point's composition root and actors.
//!
//! * [`daemon`]: the composition root (`roost schedd`): configuration
//!   ([`settings`]: the queue's knobs, the routes, schedd cron), the log
//!   replayed ([`replay`]), the actor started, signals.
//! * [`queue::ScheddActor`]: the job queue (its own daemon and log), with
//!   its socket's server.
//! * [`router`]: its job router (a poll timer, each routed job's next
//!   step), and [`route_job::RoutedJobActor`], one per routed job, which
//!   runs its hooks.
//! * [`cron`]: its own ad and schedd cron (the common cron actors on a
//!   `ScheddHost`).
//! * [`pool`]: its ad in the pool.

pub mod cron;
pub mod daemon;
pub mod pool;
pub mod queue;
pub mod replay;
pub mod route_job;
pub mod router;
pub mod settings;
pub mod transfer;
pub mod userlog;
