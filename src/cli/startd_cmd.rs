//! `roost startd`'s command line. The daemon itself — its composition
//! root, its actors and its replay — is its wing, `actors::startd`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::actors::startd::daemon::StartdOptions;

/// `roost startd` options.
#[derive(Args, Debug)]
pub struct StartdCmd {
    /// The root configuration file (default: $CONDOR_CONFIG, then the
    /// standard places).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// Stay in the foreground (as HTCondor's -f); without it the daemon
    /// detaches.
    #[arg(short = 'f', long)]
    foreground: bool,
    /// Write the quickstart setup (configuration, spool hooks, example
    /// jobs) into DIR if it is not there yet, and run on it.
    #[arg(long, value_name = "DIR", conflicts_with = "config")]
    quickstart: Option<PathBuf>,
}

/// Runs `roost startd` (see `actors::startd::daemon::run`).
pub fn run(cmd: StartdCmd) -> Result<ExitCode> {
    crate::actors::startd::daemon::run(StartdOptions {
        config: cmd.config,
        foreground: cmd.foreground,
        quickstart: cmd.quickstart,
    })
}
