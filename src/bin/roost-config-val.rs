//! `roost-config-val`: `condor_config_val` for cron scripts. A startd cron
//! script is told this program in `STARTD_CRON_CONFIG_VAL` when the
//! configuration names none (HTCondor's default is its own
//! `condor_config_val`): `$STARTD_CRON_CONFIG_VAL NAME` prints the knob as
//! the daemon's configuration has it.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    roost::cli::config_cmd::config_val(&args)
}
