//! `roost-log`: read Roost's event log. `list` prints events in order, all
//! or one actor's, as aligned text or JSON lines.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use roost::events::{Envelope, Event, EventStore, SledStore};
use roost::policy::slot::SlotEvent;

/// Read Roost's event log.
#[derive(Parser, Debug)]
#[command(name = "roost-log", version, about)]
struct Cli {
    /// The event log directory.
    #[arg(long, value_name = "DIR", global = true, default_value = ".")]
    log: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print events in order.
    List {
        /// Only this actor's events (`slot1`, `slot1_2`).
        #[arg(long)]
        actor: Option<String>,
        /// Start at this sequence number.
        #[arg(long, default_value_t = 1)]
        from: u64,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

fn summary(e: &Event) -> String {
    match e {
        Event::Slot(SlotEvent::ActivityChanged {
            state,
            activity,
            transition,
            why,
            ..
        }) => format!("-> {state}/{activity} (transition {transition}, {why})"),
        other => generic_summary(other),
    }
}

/// `Kind.Variant field=value …` from the event's serde form.
fn generic_summary(e: &Event) -> String {
    fn flat(v: &serde_json::Value, path: &mut Vec<String>, fields: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) if m.len() == 1 && path.len() < 2 => {
                if let Some((k, inner)) = m.iter().next() {
                    path.push(k.clone());
                    flat(inner, path, fields);
                }
            }
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    if k != "at" {
                        fields.push(format!("{k}={v}"));
                    }
                }
            }
            serde_json::Value::String(s) => path.push(s.clone()),
            other => fields.push(other.to_string()),
        }
    }
    let v = serde_json::to_value(e).unwrap_or_default();
    let (mut path, mut fields) = (Vec::new(), Vec::new());
    flat(&v, &mut path, &mut fields);
    let head = path.join(".");
    if fields.is_empty() {
        head
    } else {
        format!("{head} {}", fields.join(" "))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::List { actor, from, json } = cli.command;
    // Reading must never create a log.
    if !cli.log.join("db").is_file() {
        eprintln!("roost-log: {}: no event log here", cli.log.display());
        return ExitCode::from(2);
    }
    let store = match SledStore::open(&cli.log) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("roost-log: {e}");
            return ExitCode::from(2);
        }
    };
    let events: Box<dyn Iterator<Item = _>> = match &actor {
        Some(a) => Box::new(
            store
                .read_actor(a)
                .filter(|e| e.as_ref().map_or(true, |e| e.seq >= from)),
        ),
        None => store.read_from(from),
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut bad = 0;
    for item in events {
        let env: Envelope = match item {
            Ok(e) => e,
            Err(e) => {
                eprintln!("roost-log: {e}");
                bad += 1;
                continue;
            }
        };
        let line = if json {
            serde_json::to_string(&env).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
        } else {
            format!(
                "{:>8}  {:>12}  {:<10}  {}",
                env.seq,
                env.time,
                env.actor,
                summary(&env.event)
            )
        };
        if writeln!(out, "{line}").is_err() {
            return ExitCode::from(1);
        }
    }
    let _ = out.flush();
    if bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
