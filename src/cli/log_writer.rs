//! `roost log-writer DIR` (hidden): appends batches to an event log from
//! several threads through the group committer until it is killed, and
//! prints a line for each batch once the log has acknowledged it:
//! `<first seq> <events> <writer> <batch number>`. The crash test kills it
//! with SIGKILL at random points and checks that every acknowledged batch
//! is in the log, whole and in place.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Result, anyhow};
use clap::Args;

use crate::events::{DaemonEvent, Event, GroupCommitter, SledStore};

/// Arguments of `roost log-writer`.
#[derive(Args, Debug)]
pub struct LogWriterCmd {
    /// The event log directory (created if missing).
    dir: PathBuf,
    /// Writer threads.
    #[arg(long, default_value_t = 4)]
    writers: usize,
}

/// The text of batch `n`'s event `i` of writer `w`: what the test looks for.
pub fn payload(w: usize, n: u64, i: usize) -> String {
    format!("w{w} b{n} e{i}")
}

/// Runs until killed (or until the log fails).
pub fn run(cmd: &LogWriterCmd) -> Result<ExitCode> {
    let store = SledStore::open(&cmd.dir).map_err(|e| anyhow!("event log: {e}"))?;
    let (_committer, appender) = GroupCommitter::start(store);
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let threads: Vec<_> = (0..cmd.writers.max(1))
        .map(|w| {
            let appender = appender.clone();
            let out = Arc::clone(&out);
            std::thread::spawn(move || -> String {
                for n in 0u64.. {
                    // Batches of one to three events.
                    let len = 1 + usize::try_from(n % 3).unwrap_or(0);
                    let batch = (0..len)
                        .map(|i| {
                            let e = Event::Daemon(DaemonEvent::Command {
                                command: payload(w, n, i),
                            });
                            (0, format!("w{w}"), e)
                        })
                        .collect();
                    match appender.append(batch) {
                        Ok(first) => {
                            let mut o = out
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                            if writeln!(o, "{first} {len} {w} {n}")
                                .and_then(|()| o.flush())
                                .is_err()
                            {
                                return "stdout closed".into();
                            }
                        }
                        Err(e) => return e.to_string(),
                    }
                }
                String::new()
            })
        })
        .collect();
    drop(appender);
    for t in threads {
        if let Ok(why) = t.join() {
            eprintln!("roost log-writer: {why}");
        }
    }
    Ok(ExitCode::from(1))
}
