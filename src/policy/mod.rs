//! The startd's policy engine, as pure code: which slots a machine has
//! ([`layout`]), the state machine that decides when each one starts,
//! suspends, retires, vacates or kills a job ([`engine`], [`slot`]), and
//! the node around them: drains, shutdowns, dynamic slots and timers
//! ([`node`], [`drain`]). The daemon's actors and the simulator ([`sim`])
//! drive the same cores.
//!
//! No I/O, no clock reads, no actix: configuration and machine facts come
//! in as values.

pub mod drain;
pub mod engine;
pub mod layout;
pub mod node;
pub mod publish;
pub mod quiet;
pub mod record;
pub mod sim;
pub mod slot;
pub mod transition;
