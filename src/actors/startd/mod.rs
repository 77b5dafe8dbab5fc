//! `roost startd`'s wing: the execute point's composition root and actors.
//!
//! * [`daemon`]: the composition root (`roost startd`): configuration,
//!   the log opened and the last run reconciled ([`reconcile`], with what
//!   hooks and starters left on disk: `recover`), the slots laid out, the
//!   actors started, signals; [`quickstart`] writes the embedded setup.
//! * [`node::NodeActor`]: the supervisor (slots, drains, shutdown); in a
//!   pool it feeds the publisher thread its slots' ads ([`pool`]).
//! * [`slot::SlotActor`]: one per slot, around `policy::engine::decide`.
//! * [`hook::HookActor`]: one per hook invocation.
//! * [`starter::StarterActor`]: one per `roost starter` process (after a
//!   restart, one per starter of the last run taken again);
//!   [`request`] builds what a starter is asked to run.
//! * [`backfill::BackfillActor`]: the one backfill client (BOINC) that
//!   every slot in Backfill shares, run by a starter.
//! * [`cron_ad`]: the startd as the cron actors' host, and each slot's
//!   machine ad with its cron ads merged in.
//! * [`supply::StarterSupply`] (not an actor): the starter program, the
//!   spare starters and owners' accounts the starter actors share.
//! * [`admin`]: the admin socket's server, a task per connection that
//!   hands commands to the supervisor.

pub mod admin;
pub mod backfill;
pub mod cron_ad;
pub mod daemon;
pub mod hook;
pub mod messages;
pub mod metrics_http;
pub mod node;
mod phase;
pub mod pool;
pub mod quickstart;
pub mod quiet;
pub mod reconcile;
mod recover;
pub mod request;
pub mod shared;
pub mod slot;
pub mod starter;
pub mod supply;
pub mod systemd;
