//! The `roost` command line: argument parsing and dispatch to subcommands.

mod admin_cmd;
mod classad_cmd;
pub mod config_cmd;
pub mod docs;
pub mod eventd_cmd;
mod policy_cmd;
pub mod pool_cmd;
mod queue_cmd;
mod queue_table;
pub mod schedd_cmd;
pub mod startd_cmd;
pub mod sysenv;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Roost: an execute-node daemon for HTCondor-style pools.
#[derive(Parser, Debug)]
#[command(name = "roost", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Evaluate, convert and match ClassAds.
    #[command(subcommand)]
    Classad(classad_cmd::ClassadCmd),
    /// Read HTCondor configuration and print knobs (like condor_config_val).
    Config(config_cmd::ConfigCmd),
    /// Try a startd policy on virtual time.
    #[command(subcommand)]
    Policy(policy_cmd::PolicyCmd),
    /// Run the execute-point daemon.
    Startd(startd_cmd::StartdCmd),
    /// The running daemon's slots (like condor_status on this node).
    Status(admin_cmd::StatusCmd),
    /// The jobs running on this node (like condor_who).
    Who(admin_cmd::WhoCmd),
    /// Vacate one slot's job, or every slot's.
    Vacate(admin_cmd::VacateCmd),
    /// Drain the node, or cancel a drain (like condor_drain).
    Drain(admin_cmd::DrainCmd),
    /// Shut the daemon down (like condor_off).
    Off(admin_cmd::OffCmd),
    /// Make the daemon re-read its configuration (like condor_reconfig).
    Reconfig(admin_cmd::ReconfigCmd),
    /// Startd cron and benchmark jobs of the running daemon.
    #[command(subcommand)]
    Cron(admin_cmd::CronCmd),
    /// Run the access point's job queue daemon (like condor_schedd).
    Schedd(schedd_cmd::ScheddCmd),
    /// Run the event daemon: scheduled SHUTDOWN events across the pool
    /// (EVENT_LIST; docs/eventd.md).
    Eventd(eventd_cmd::EventdCmd),
    /// Put jobs into the queue (like condor_submit).
    Submit(queue_cmd::SubmitCmd),
    /// The jobs in the queue (like condor_q).
    Q(queue_cmd::QueryCmd),
    /// Jobs that left the queue (like condor_history).
    History(queue_cmd::QueryCmd),
    /// Remove jobs (like condor_rm).
    Rm(queue_cmd::ActCmd),
    /// Put jobs on hold (like condor_hold).
    Hold(queue_cmd::ActCmd),
    /// Release held jobs (like condor_release).
    Release(queue_cmd::ActCmd),
    /// The fetch-work hooks that take jobs from a `roost schedd` (a
    /// startd's FETCH_WORK, REPLY_FETCH, JOB_EXIT and EVICT_CLAIM).
    QueueHook(queue_cmd::QueueHookCmd),
    /// Print a shell completion script (`source <(roost completions bash)`).
    Completions(docs::CompletionsCmd),
    /// Write the manual pages (roost.1, roost-status.1, …) into a directory.
    Man(docs::ManCmd),
    /// Run one job for the daemon (started by `roost startd`, not by hand).
    #[command(hide = true)]
    Starter,
    /// Run one of Roost's benchmarks and print its attribute (`Mips = N`,
    /// `KFlops = N`), as the daemon's default BENCHMARKS jobs do.
    #[command(hide = true)]
    Benchmark {
        /// `mips` or `kflops`.
        #[arg(value_parser = ["mips", "kflops"])]
        which: String,
    },
}

/// `roost startd ARGS`: becomes `roost-startd ARGS` (the same process,
/// by `exec`) when that program sits beside `roost` and comes from the same
/// build. It holds the daemon's code only, so the daemon maps and keeps
/// resident less of its own program (`docs/performance.md`). Returns when
/// it cannot, and `roost` runs the daemon itself.
fn daemon_program(args: &[String]) {
    use crate::{Beside, program_beside};
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let path = match program_beside(&exe, "roost-startd") {
        Beside::Same(path) => path,
        Beside::Absent => return,
        Beside::Other(path, says) => {
            eprintln!(
                "roost: not using {}: it is from another build ({says}; this is {}); running the daemon in roost",
                path.display(),
                crate::BUILD_ID
            );
            return;
        }
    };
    let cstrings = std::iter::once(path.as_os_str())
        .chain(args.iter().map(std::ffi::OsStr::new))
        .map(|a| std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(a)))
        .collect::<Result<Vec<_>, _>>();
    let Ok(argv) = cstrings else {
        return;
    };
    // `execv` returns only when it failed.
    let Err(e) = nix::unistd::execv(&argv[0], &argv);
    eprintln!(
        "roost: cannot run {}: {e}; running the daemon in roost",
        path.display()
    );
}

/// Runs the command line; returns the process exit code.
pub fn run() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "starter") {
        // Once per job: skip building the whole command line parser.
        return crate::starter::run::main();
    }
    if args.get(1).is_some_and(|a| a == "startd") {
        daemon_program(&args[2..]);
    }
    let cli = Cli::parse_from(admin_cmd::normalize(args));
    let result = match cli.command {
        Command::Classad(cmd) => classad_cmd::run(cmd),
        Command::Config(cmd) => config_cmd::run(cmd),
        Command::Policy(cmd) => policy_cmd::run(cmd),
        Command::Startd(cmd) => startd_cmd::run(cmd),
        Command::Status(cmd) => admin_cmd::status(cmd),
        Command::Who(cmd) => admin_cmd::who(cmd),
        Command::Vacate(cmd) => admin_cmd::vacate(cmd),
        Command::Drain(cmd) => admin_cmd::drain(cmd),
        Command::Off(cmd) => admin_cmd::off(cmd),
        Command::Reconfig(cmd) => admin_cmd::reconfig(cmd),
        Command::Cron(cmd) => admin_cmd::cron(cmd),
        Command::Schedd(cmd) => schedd_cmd::run(cmd),
        Command::Eventd(cmd) => eventd_cmd::run(cmd),
        Command::Submit(cmd) => queue_cmd::submit(cmd),
        Command::Q(cmd) => queue_cmd::query(cmd, false),
        Command::History(cmd) => queue_cmd::query(cmd, true),
        Command::Rm(cmd) => queue_cmd::act(cmd, crate::schedd::protocol::Action::Remove),
        Command::Hold(cmd) => queue_cmd::act(cmd, crate::schedd::protocol::Action::Hold),
        Command::Release(cmd) => queue_cmd::act(cmd, crate::schedd::protocol::Action::Release),
        Command::QueueHook(cmd) => queue_cmd::queue_hook(cmd),
        Command::Completions(cmd) => docs::completions(&cmd, Cli::command()),
        Command::Man(cmd) => docs::man(&cmd, Cli::command()),
        Command::Benchmark { which } => {
            let each = std::time::Duration::from_millis(250);
            if which == "mips" {
                println!("Mips = {}", crate::actors::common::machine::mips(each));
            } else {
                println!("KFlops = {}", crate::actors::common::machine::kflops(each));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Starter => Ok(crate::starter::run::main()),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("roost: {e:#}");
            ExitCode::from(2)
        }
    }
}
