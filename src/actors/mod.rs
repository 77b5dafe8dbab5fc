//! The daemon's actors (actix). Each is a thin shell: it receives a
//! message, asks the pure core what to do, appends the resulting events to
//! the log, applies them, and only then acts on the world.
//!
//! * [`node::NodeActor`]: the supervisor (slots, drains, shutdown); in a
//!   pool it feeds the publisher thread its slots' ads ([`pool`]).
//! * [`slot::SlotActor`]: one per slot, around `policy::engine::decide`.
//! * [`hook::HookActor`]: one per hook invocation.
//! * [`starter::StarterActor`]: one per `roost starter` process (after a
//!   restart, one per starter of the last run taken again);
//!   [`request`] builds what a starter is asked to run.
//! * [`backfill::BackfillActor`]: the one backfill client (BOINC) that
//!   every slot in Backfill shares, run by a starter.
//! * [`cron::CronManager`]: one per daemon ClassAd hook manager (startd
//!   cron, benchmarks), keeping the schedule; [`cron::CronJobActor`]: one
//!   per cron job, running it and publishing its ads; both reach their
//!   daemon through [`cron_host::CronHost`].
//! * [`supply::StarterSupply`] (not an actor): the starter program, the
//!   spare starters and owners' accounts the starter actors share.
//! * [`admin`]: the admin socket's server, a task per connection that
//!   hands commands to the supervisor.
//! * [`schedd::ScheddActor`]: `roost schedd`'s job queue (its own daemon and
//!   log), with its socket's server; [`router`] is its job router (a
//!   poll timer and the router's hooks); [`schedd_cron`] its own ad and
//!   schedd cron (the cron actors on a [`cron_host::ScheddHost`]);
//!   [`schedd_pool`] its ad in the pool.
//!
//! The single event-log writer is `events::GroupCommitter`'s thread.

pub mod admin;
pub mod backfill;
pub mod clock;
pub mod cron;
pub mod cron_host;
pub mod eventd;
pub mod hook;
pub mod machine;
pub mod messages;
pub mod metrics_http;
pub mod node;
mod phase;
pub mod pool;
pub mod quiet;
pub mod request;
pub mod router;
pub mod schedd;
pub mod schedd_cron;
pub mod schedd_pool;
pub mod shared;
pub mod slot;
pub mod starter;
pub mod supply;
pub mod systemd;
