//! `roost-startd`: the daemon as a program of its own. `roost startd ARGS`
//! becomes `roost-startd ARGS` (by `exec`, the same process) when this
//! program sits beside `roost` and comes from the same build. Linking only
//! the daemon's code leaves out the command line's other tools (the ClassAd
//! and policy tools, the admin client, clap's parsers for them): 1.3 MB less
//! program, 0.3-0.5 MB less of it resident in a running daemon
//! (`docs/performance.md`).
//!
//! `roost-startd --build-id` prints the build it comes from. It holds no
//! starter: a daemon that finds no `roost-starter` beside it runs
//! `roost starter` (also beside it). Leaving the starter's code out keeps
//! another 0.2 MB of the program out of the daemon's memory: less code,
//! fewer of its pages mapped around the code the daemon runs.

use std::process::ExitCode;

use clap::Parser;

/// Roost's execute-point daemon (the same as `roost startd`).
#[derive(Parser, Debug)]
#[command(name = "roost-startd", version)]
struct Cli {
    #[command(flatten)]
    startd: roost::cli::startd_cmd::StartdCmd,
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--build-id") {
        println!("{}", roost::BUILD_ID);
        return ExitCode::SUCCESS;
    }
    match roost::cli::startd_cmd::run(Cli::parse().startd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("roost: {e:#}");
            ExitCode::from(2)
        }
    }
}
