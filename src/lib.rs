//! Roost: an event-sourced execute-node daemon for HTCondor-style pools.
//!
//! See `ARCHITECTURE.md` for the map of the code.

#![warn(missing_docs)]

/// This build's id (version and build time): the daemon runs the
/// `roost-starter` beside it only when that reports the same.
pub const BUILD_ID: &str = env!("ROOST_BUILD_ID");

pub mod actors;
pub mod admin;
pub mod classad;
pub mod cli;
pub mod config;
pub mod events;
pub mod hooks;
pub mod policy;
pub mod spawn;
pub mod starter;
