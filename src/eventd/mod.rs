//! The event daemon's pure core (issue 34; `../shared/spec/eventd.txt`):
//! scheduled SHUTDOWN events over the pool — when each happens in the
//! eventd's local time, how long its vacates take at its bandwidth, when
//! it must become active, and in which order the machines go
//! ([`schedule`]). No I/O, no clock: the time and zone are given.

pub mod schedule;
