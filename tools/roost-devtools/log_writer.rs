//! `roost-devtools log-writer DIR`: appends batches to an event log from
//! several threads through the group committer until it is killed, and
//! prints a line for each batch once the log has acknowledged it:
//! `<first seq> <events> <writer> <batch number>`. The crash test kills it
//! with SIGKILL at random points and checks that every acknowledged batch
//! is in the log, whole and in place.
//!
//! With `--claims N` it instead writes the log of N claims as the daemon
//! would (fetch, accept, REPLY_FETCH, starter, PREPARE_JOB, job, JOB_EXIT,
//! end: 21 events each, on 8 slots) in non-durable batches flushed at the
//! end, prints how long that took, and exits: the input of the log
//! benchmarks (`tools/bench_log.sh`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Result, anyhow};
use clap::Args;

use roost::events::{DaemonEvent, Event, EventStore, GroupCommitter, SledStore};
use roost::exit::Exit;
use roost::policy::slot::{Activity, Claim, EndCause, Slot, SlotEvent, State, Transition as T};
use roost::startd::{HookEvent, StarterEvent};

/// Arguments of `roost-devtools log-writer`.
#[derive(Args, Debug)]
pub struct LogWriterCmd {
    /// The event log directory (created if missing).
    dir: PathBuf,
    /// Writer threads.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Write the log of this many claims and exit.
    #[arg(long)]
    claims: Option<u64>,
    /// Pad each event's text to this many bytes (so sled's I/O buffers
    /// fill and are sealed and written by its thread pool, not only by the
    /// flushing thread).
    #[arg(long, default_value_t = 0)]
    pad: usize,
}

/// The text of batch `n`'s event `i` of writer `w`, padded with `.` to
/// `pad` bytes: what the test looks for.
pub fn payload(w: usize, n: u64, i: usize, pad: usize) -> String {
    let mut s = format!("w{w} b{n} e{i}");
    if s.len() < pad {
        s.push_str(&".".repeat(pad - s.len()));
    }
    s
}

/// Runs until killed (or until the log fails).
pub fn run(cmd: &LogWriterCmd) -> Result<ExitCode> {
    if let Some(n) = cmd.claims {
        return claims(cmd, n);
    }
    let store = SledStore::open(&cmd.dir).map_err(|e| anyhow!("event log: {e}"))?;
    let (_committer, appender) = GroupCommitter::start(store);
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let pad = cmd.pad;
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
                                command: payload(w, n, i, pad),
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

/// The events of claim `n` on `slot`, as the daemon writes them.
fn lifecycle(n: u64, slot: &str, t: i64) -> Vec<(i64, String, Event)> {
    let job = format!(
        "[ ClusterId = {n}; ProcId = 0; Owner = \"alice\"; Cmd = \"/bin/sleep\"; \
         Arguments = \"60\"; RequestCpus = 1; RequestMemory = 1024; HookKeyword = \"T\"; \
         JobUniverse = 5 ]"
    );
    let hook = format!("hook-{n}");
    let starter = format!("starter-{n}");
    let s = |e: SlotEvent| (t, slot.to_string(), Event::Slot(e));
    let changed = |state, activity, transition: T, why: &str| {
        s(SlotEvent::ActivityChanged {
            at: t,
            state,
            activity,
            transition,
            why: why.into(),
        })
    };
    let st = |e: StarterEvent| (t, starter.clone(), Event::Starter(e));
    let pid = u32::try_from(n % 30_000).unwrap_or(0) + 1000;
    [
        s(SlotEvent::FetchStarted {
            at: t,
            prompted_by: None,
        }),
        s(SlotEvent::FetchCompleted { at: t }),
        s(SlotEvent::ClaimCreated {
            at: t,
            claim: Claim::new(n, job, 0.0, true, t),
        }),
        changed(
            State::Claimed,
            Activity::Idle,
            T::UnclaimedToClaimed,
            "fetched job accepted",
        ),
        (
            t,
            hook.clone(),
            Event::Hook(HookEvent::Started {
                hook: "REPLY_FETCH".into(),
                slot: slot.into(),
                path: "/usr/libexec/roost/reply_fetch".into(),
                args: vec!["accept".into()],
                pid,
                claim: Some(n),
            }),
        ),
        (
            t,
            hook,
            Event::Hook(HookEvent::Finished {
                exit: Exit::Code(0),
                timed_out: false,
                truncated: false,
                stdout_bytes: 0,
                outcome: "done".into(),
                elapsed: 0.004,
                handout: None,
            }),
        ),
        s(SlotEvent::JobStarted {
            at: t,
            pledged_vacate: 600,
        }),
        changed(
            State::Claimed,
            Activity::Busy,
            T::IdleToBusy,
            "starter spawned",
        ),
    ]
    .into_iter()
    .chain(starter_run(n, slot, pid).into_iter().map(st))
    .chain([
        s(SlotEvent::StarterExited { at: t + 60 }),
        changed(
            State::Claimed,
            Activity::Idle,
            T::BusyToIdle,
            "starter exited",
        ),
        s(SlotEvent::ClaimEnding {
            at: t + 60,
            cause: EndCause::NoMoreWork,
        }),
        changed(
            State::Preempting,
            Activity::Vacating,
            T::ClaimedToPreempting,
            "no more work",
        ),
        s(SlotEvent::ClaimEnded {
            at: t + 60,
            cause: EndCause::NoMoreWork,
        }),
        changed(
            State::Owner,
            Activity::Idle,
            T::VacatingToOwner,
            "claim ended",
        ),
        changed(
            State::Unclaimed,
            Activity::Idle,
            T::OwnerToUnclaimed,
            "IS_OWNER",
        ),
    ])
    .collect()
}

/// A starter's events for claim `n`'s job: PREPARE_JOB, the job's minute
/// and JOB_EXIT.
fn starter_run(n: u64, slot: &str, pid: u32) -> Vec<StarterEvent> {
    vec![
        StarterEvent::Spawned {
            slot: slot.into(),
            claim: n,
            pid,
            job: format!("{n}.0 alice"),
            started: 0,
        },
        StarterEvent::Hook {
            hook: "PREPARE_JOB".into(),
            args: Vec::new(),
            exit: Some(Exit::Code(0)),
            timed_out: false,
            outcome: "ok".into(),
            elapsed: 0.0,
        },
        StarterEvent::JobStarted { pid: pid + 1 },
        StarterEvent::JobExited {
            exit: Exit::Code(0),
            how: "exit".into(),
            duration: 60.0,
        },
        StarterEvent::Hook {
            hook: "JOB_EXIT".into(),
            args: vec!["exit".into()],
            exit: Some(Exit::Code(0)),
            timed_out: false,
            outcome: "ok".into(),
            elapsed: 0.0,
        },
        StarterEvent::Exited {
            exit: Exit::Code(0),
            lost: false,
        },
    ]
}

/// Writes the log of `n` claims (see the module comment).
fn claims(cmd: &LogWriterCmd, n: u64) -> Result<ExitCode> {
    let mut store = SledStore::open(&cmd.dir).map_err(|e| anyhow!("event log: {e}"))?;
    let started = std::time::Instant::now();
    let t0 = 1_795_000_000;
    let mut batch: Vec<(i64, String, Event)> = vec![(
        t0,
        "daemon".into(),
        Event::Daemon(DaemonEvent::Started {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            host: "bench".into(),
            slots: (1..=8).map(|i| format!("slot{i}@bench")).collect(),
            boot: String::new(),
        }),
    )];
    for i in 1..=8 {
        let slot = Slot::new(&format!("slot{i}"), "bench", t0);
        batch.push((
            t0,
            slot.id.clone(),
            Event::Slot(SlotEvent::snapshot(t0, &slot)),
        ));
    }
    let mut events = 0u64;
    for c in 1..=n {
        let slot = format!("slot{}", c % 8 + 1);
        let t = t0 + i64::try_from(c).unwrap_or(0);
        batch.extend(lifecycle(c, &slot, t));
        if batch.len() >= 2000 {
            events += batch.len() as u64;
            let next = store.next_seq();
            store.write(next, &batch).map_err(|e| anyhow!("{e}"))?;
            batch.clear();
        }
    }
    events += batch.len() as u64;
    let next = store.next_seq();
    store.append(next, &batch).map_err(|e| anyhow!("{e}"))?;
    let secs = started.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let rate = events as f64 / secs;
    println!("{events} events in {secs:.2} s ({rate:.0} events/s, batches of 2,000, one flush)");
    Ok(ExitCode::SUCCESS)
}
