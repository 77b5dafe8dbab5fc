//! `roost schedd`'s command line. The daemon itself — its composition
//! root, its actors, its settings and its replay — is its wing,
//! `actors::schedd`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

/// `roost schedd`.
#[derive(Args, Debug)]
pub struct ScheddCmd {
    /// The root configuration file (default: $CONDOR_CONFIG, then the
    /// standard places).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// Stay in the foreground (as condor_schedd -f).
    #[arg(short = 'f', long)]
    foreground: bool,
}

/// Runs `roost schedd` (see `actors::schedd::daemon::run`).
pub fn run(cmd: ScheddCmd) -> Result<ExitCode> {
    crate::actors::schedd::daemon::run(cmd.config.as_deref(), cmd.foreground)
}
