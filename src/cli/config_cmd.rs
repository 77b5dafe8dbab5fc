//! `roost config`: read HTCondor configuration files and print knobs as
//! `condor_config_val` does. The output is a contract; see `docs/config.md`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use clap::{Args, Subcommand};

use crate::actors::common::sysconfig::{FsFiles, find_root, load_input};
use crate::config::{Config, Scope, load};
use crate::pool::inbox::Action;

/// `roost config` options and subcommands.
#[derive(Args, Debug)]
pub struct ConfigCmd {
    /// The root configuration file (default: $CONDOR_CONFIG, then
    /// /etc/condor/condor_config, /usr/local/etc/condor_config,
    /// ~condor/condor_config).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<String>,
    /// The subsystem to look knobs up for: SUBSYS.NAME overrides NAME.
    #[arg(long, value_name = "NAME", default_value = "TOOL", global = true)]
    subsystem: String,
    /// The local name of the daemon: LOCALNAME.NAME overrides SUBSYS.NAME.
    #[arg(long, value_name = "NAME", global = true)]
    local_name: Option<String>,
    #[command(subcommand)]
    action: ConfigAction,
}

#[derive(Subcommand, Debug)]
enum ConfigAction {
    /// Print the expanded value of each NAME.
    Get(GetArgs),
    /// Print every macro the configuration defines, sorted, unexpanded.
    Dump,
    /// Set knobs in a pool node's persistent runtime configuration, through
    /// etcd (as `condor_config_val -name NODE -set`); the node reconfigures.
    Set(RemoteArgs),
    /// Drop knobs from a pool node's persistent runtime configuration.
    Unset(RemoteArgs),
}

#[derive(Args, Debug)]
struct RemoteArgs {
    /// The node (its daemon's name).
    #[arg(long, value_name = "NODE")]
    name: String,
    /// `NAME = value` statements to set, or the names to unset.
    #[arg(required = true)]
    items: Vec<String>,
}

#[derive(Args, Debug)]
struct GetArgs {
    /// Knob names (case-insensitive).
    #[arg(required = true)]
    names: Vec<String>,
    /// Also print where each knob was defined and its raw value.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Print one JSON object: name -> expanded string, null when undefined
    /// or empty, or {"error": "..."} when expansion failed.
    #[arg(long, conflicts_with = "verbose")]
    json: bool,
}

/// Sends a runtime configuration change to `node` and prints its reply.
fn remote(config: Option<&str>, node: &str, action: Action) -> Result<ExitCode> {
    let r = super::admin_cmd::pool_ask(config, node, action)?;
    if r.ok {
        println!("{}", r.message);
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(super::admin_cmd::refused(&r))
    }
}

/// Runs `roost config`.
pub fn run(cmd: ConfigCmd) -> Result<ExitCode> {
    let root = find_root(cmd.config.as_deref()).map_err(|e| anyhow!(e))?;
    let scope = Scope {
        subsys: Some(cmd.subsystem.to_ascii_uppercase()),
        localname: cmd.local_name.clone(),
    };
    let input = load_input(root, scope);
    let config = load(&input, &FsFiles).map_err(|e| anyhow!("configuration error: {e}"))?;
    for w in config.warnings() {
        eprintln!("roost: warning: {w}");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cmd.action {
        ConfigAction::Set(RemoteArgs { name, items }) => {
            let action = Action::Config {
                set: items,
                unset: vec![],
            };
            remote(cmd.config.as_deref(), &name, action)
        }
        ConfigAction::Unset(RemoteArgs { name, items }) => {
            let action = Action::Config {
                set: vec![],
                unset: items,
            };
            remote(cmd.config.as_deref(), &name, action)
        }
        ConfigAction::Dump => {
            for m in config.dump() {
                writeln!(out, "{} = {}", m.name, m.value)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        ConfigAction::Get(args) if args.json => {
            let mut obj = serde_json::Map::new();
            for name in &args.names {
                let v = match config.get(name) {
                    Ok(Some(s)) if !s.is_empty() => serde_json::Value::String(s),
                    Ok(_) => serde_json::Value::Null,
                    Err(e) => serde_json::json!({ "error": e.to_string() }),
                };
                obj.insert(name.clone(), v);
            }
            writeln!(out, "{}", serde_json::Value::Object(obj))?;
            Ok(ExitCode::SUCCESS)
        }
        ConfigAction::Get(args) => get(&config, &args, &mut out),
    }
}

fn get(config: &Config, args: &GetArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let mut code = ExitCode::SUCCESS;
    for name in &args.names {
        match config.get(name) {
            Ok(Some(value)) => {
                if args.verbose {
                    writeln!(out, "{name} = {value}")?;
                    if let (Some(l), Some(at)) = (config.lookup(name), config.location(name)) {
                        writeln!(out, " # at: {at}")?;
                        writeln!(out, " # raw: {}", l.raw)?;
                    }
                } else {
                    writeln!(out, "{value}")?;
                }
            }
            Ok(None) => {
                eprintln!("Not defined: {name}");
                code = ExitCode::from(1);
            }
            Err(e) => {
                eprintln!("roost: {name}: {e}");
                code = ExitCode::from(1);
            }
        }
    }
    Ok(code)
}

/// `roost-config-val [-subsystem NAME] [-local-name NAME] [-verbose] NAME…`:
/// what cron scripts are given as `STARTD_CRON_CONFIG_VAL` when the
/// configuration names no program of its own — `condor_config_val`'s
/// arguments, reading the configuration `CONDOR_CONFIG` names (the daemon
/// passes its own). Each value on a line; an undefined knob is said on
/// stderr and exits 1; a bad argument exits 2.
pub fn config_val(args: &[String]) -> ExitCode {
    let mut subsystem = "TOOL".to_string();
    let mut local_name = None;
    let mut names = Vec::new();
    let mut verbose = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let flag = a.trim_start_matches('-').to_ascii_lowercase();
        if !a.starts_with('-') {
            names.push(a.clone());
            continue;
        }
        let mut value = |what: &str| match it.next() {
            Some(v) => Ok(v.clone()),
            None => Err(format!("{a} needs {what}")),
        };
        let r = match flag.as_str() {
            "subsystem" => value("a subsystem name").map(|v| subsystem = v),
            "local-name" | "local_name" => value("a local name").map(|v| local_name = Some(v)),
            "verbose" | "v" => {
                verbose = true;
                Ok(())
            }
            _ => Err(format!("unknown option {a}")),
        };
        if let Err(e) = r {
            eprintln!("roost-config-val: {e}");
            return ExitCode::from(2);
        }
    }
    if names.is_empty() {
        eprintln!("roost-config-val: name the knobs to print");
        return ExitCode::from(2);
    }
    let cmd = ConfigCmd {
        config: None,
        subsystem,
        local_name,
        action: ConfigAction::Get(GetArgs {
            names,
            verbose,
            json: false,
        }),
    };
    match run(cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("roost-config-val: {e:#}");
            ExitCode::from(2)
        }
    }
}
