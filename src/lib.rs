//! Roost: an event-sourced execute-node daemon for HTCondor-style pools.
//!
//! See `ARCHITECTURE.md` for the map of the code.

#![warn(missing_docs)]

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
