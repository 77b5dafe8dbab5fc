//! Daemon ClassAd hooks ("startd cron"): programs the daemon runs on a
//! schedule whose output becomes attributes of its slot ads. This is the
//! pure core: the jobs a configuration defines ([`config`]), reading a
//! run's output into named ads ([`output`]) and deciding which slot ads
//! each goes into ([`merge`]), what a resource monitor's reports add up to
//! ([`metrics`]), and when each job runs ([`schedule`]). No I/O, no clock.

pub mod config;
pub mod event;
pub mod merge;
pub mod metrics;
pub mod output;
pub mod schedule;

pub use output::{CronAd, CronOutput};
