//! `roost eventd`'s command line. The daemon itself — its composition
//! root, its actor and its replay — is its wing, `actors::eventd`, over
//! the pure core `eventd::core`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

/// `roost eventd`.
#[derive(Args, Debug)]
pub struct EventdCmd {
    /// The root configuration file (default: $CONDOR_CONFIG, then the
    /// standard places).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// Stay in the foreground.
    #[arg(short = 'f', long)]
    foreground: bool,
}

/// Runs `roost eventd` (see `actors::eventd::run`).
pub fn run(cmd: EventdCmd) -> Result<ExitCode> {
    crate::actors::eventd::run(cmd.config.as_deref(), cmd.foreground)
}
