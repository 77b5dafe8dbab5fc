//! The event daemon's pure core (issue 34; `../shared/spec/eventd.txt`):
//! scheduled SHUTDOWN events over the pool — when each happens in the
//! eventd's local time, how long its vacates take at its bandwidth, when
//! it must become active, and in which order the machines go
//! ([`schedule`]); what each round of an active event does — machines put
//! down with a slow start, slots vacated one costly job at a time,
//! expired configurations found ([`plan`]). No I/O, no clock: the time,
//! the zone and the pool's ads are given. [`event`] is what the daemon
//! (`roost eventd`, `cli::eventd_cmd`) logs of its decisions;
//! [`settings`] its knobs.

pub mod core;
pub mod event;
pub mod plan;
pub mod schedule;
pub mod settings;
