//! `roost schedd`'s wing: the access point's actors.
//!
//! * [`queue::ScheddActor`]: the job queue (its own daemon and log), with
//!   its socket's server.
//! * [`router`]: its job router (a poll timer and the router's hooks).
//! * [`cron`]: its own ad and schedd cron (the common cron actors on a
//!   `ScheddHost`).
//! * [`pool`]: its ad in the pool.

pub mod cron;
pub mod pool;
pub mod queue;
pub mod router;
