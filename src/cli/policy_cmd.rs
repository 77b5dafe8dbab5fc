//! `roost policy`: try a startd policy before deploying it. `simulate`
//! runs a scenario on virtual time and prints every transition and effect
//! as JSON lines; see `docs/policy.md`.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use clap::Subcommand;

use crate::events::{EventStore, SledStore, recorded_batch};
use crate::policy::sim::{Scenario, simulate_with};

/// `roost policy` subcommands.
#[derive(Subcommand, Debug)]
pub enum PolicyCmd {
    /// Run a scenario (TOML) on virtual time; print JSON lines.
    Simulate {
        /// The scenario file.
        scenario: PathBuf,
        /// Also write every event to an event log in this directory (a
        /// sled database), as the daemon does.
        #[arg(long, value_name = "DIR")]
        log: Option<PathBuf>,
    },
}

/// Runs `roost policy`.
pub fn run(cmd: PolicyCmd) -> Result<ExitCode> {
    match cmd {
        PolicyCmd::Simulate { scenario, log } => {
            let text = std::fs::read_to_string(&scenario)
                .with_context(|| format!("cannot read {}", scenario.display()))?;
            let mut sc =
                Scenario::parse(&text).map_err(|e| anyhow!("{}: {e}", scenario.display()))?;
            if let Some(file) = sc.config_file.clone() {
                let path = scenario
                    .parent()
                    .map_or_else(|| PathBuf::from(&file), |d| d.join(&file));
                sc.config = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read config_file {}", path.display()))?;
            }
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            let mut failed = None;
            let mut store = match &log {
                Some(dir) => Some(SledStore::open(dir).map_err(|e| anyhow!("event log: {e}"))?),
                None => None,
            };
            simulate_with(
                &sc,
                |line| {
                    if failed.is_none()
                        && let Err(e) = writeln!(out, "{line}")
                    {
                        failed = Some(e);
                    }
                },
                |actor, events| {
                    let Some(store) = store.as_mut() else {
                        return Ok(());
                    };
                    let batch = recorded_batch(actor, events);
                    let next = store.next_seq();
                    store
                        .append(next, &batch)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                },
            )
            .map_err(|e| anyhow!("{}: {e}", scenario.display()))?;
            if let Some(e) = failed {
                return Err(e.into());
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
