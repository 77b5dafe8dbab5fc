//! File transfer between `roost schedd` and the node that runs a job, the
//! pure part: what a job's ad says is sent to the node before it runs and
//! where what comes back goes ([`plan`]), and the lines the two sides say
//! to each other ([`wire`]). The schedd serves a job's files
//! (`actors/schedd/transfer.rs`) to the starter that runs it
//! (`starter/transfer.rs`), which proves it holds the job's lease.

pub mod plan;
pub mod wire;

pub use plan::{Entry, InputPlan, Kind, OutputPlan, PlanError};
pub use wire::{Ask, Hello, Said};

/// The attribute of a handed-out job that says where its files are
/// served (`host:port`).
pub const ADDRESS_ATTR: &str = "RoostTransferAddress";
