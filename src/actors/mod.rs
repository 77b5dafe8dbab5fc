//! The daemons' actors (actix), one wing per daemon. Each actor is a thin
//! shell: it receives a message, asks the pure core what to do, appends
//! the resulting events to the log, applies them, and only then acts on
//! the world.
//!
//! * [`startd`]: the execute point (node, slots, hooks, starters,
//!   backfill, its admin socket, its pool publisher).
//! * [`schedd`]: the access point (the queue, the job router, schedd
//!   cron, its pool ad).
//! * [`eventd`]: the event daemon (its composition root and its actor).
//! * [`common`]: what they share (the clock, socket plumbing, the cron
//!   actors and their host trait); no wing reaches into another's actors.
//!
//! The single event-log writer is `events::GroupCommitter`'s thread.

pub mod common;
pub mod eventd;
pub mod schedd;
pub mod startd;
