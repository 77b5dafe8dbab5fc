//! The startd's policy engine, as pure code: which slots a machine has
//! ([`layout`]), and (to come) the state machine that decides when each one
//! starts, suspends, retires, vacates or kills a job.
//!
//! No I/O, no clock reads, no actix: configuration and machine facts come
//! in as values.

pub mod engine;
pub mod layout;
pub mod publish;
pub mod sim;
pub mod slot;
