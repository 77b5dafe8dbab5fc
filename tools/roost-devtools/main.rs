//! `roost-devtools`: helpers for Roost's own tests and benchmarks, kept
//! out of the product's `roost` command: `log-writer` (appends to an event
//! log until killed, for the log's crash test; or writes a claims' log for
//! the log benchmarks), `pool-load` and `eventd-round` (for measuring the
//! pool). Built with the other programs; `tools/install.sh` does not
//! install it.

mod log_writer;
mod pool;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "roost-devtools",
    version,
    about = "Helpers for Roost's tests and benchmarks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Append to an event log from several threads until killed, printing
    /// each acknowledged batch (for the crash test of the log).
    LogWriter(log_writer::LogWriterCmd),
    /// Write synthetic nodes' slot ads into the pool (`tools/bench_pool.sh`).
    PoolLoad(pool::PoolLoadCmd),
    /// The eventd's work at one look over the pool, timed
    /// (`tools/bench_pool.sh`).
    EventdRound(pool::EventdRoundCmd),
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::LogWriter(cmd) => log_writer::run(&cmd),
        Command::PoolLoad(cmd) => pool::pool_load(&cmd),
        Command::EventdRound(cmd) => pool::eventd_round(&cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("roost-devtools: {e:#}");
            ExitCode::from(2)
        }
    }
}
