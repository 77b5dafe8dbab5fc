//! What a restart recovers of the hooks the last run left running: the
//! output of each FETCH_WORK whose files are still in
//! `$(SPOOL)/roost-hooks` and whose end the log does not hold. The hook is
//! waited for (it may still be running: the daemon died, not the hook),
//! its output read as the daemon would have read it, and a `Hook.Finished`
//! (with the job it handed out, if any) written for it, so that the
//! restart answers that job like any other hand-out it did not answer.

use std::path::Path;
use std::time::Duration;

use tracing::{info, warn};

use crate::events::replay::OpenHook;
use crate::events::{Event, EventStore, HookEvent};
use crate::hooks::{Exit, HookOutput, capture, output::classify_fetch};

/// How long a restart waits for a FETCH_WORK hook of the last run that is
/// still running, before it kills it.
pub const HOOK_WAIT: Duration = Duration::from_secs(10);

/// The events that end the FETCH_WORK runs of the last run whose output
/// files are in `dir`: those open in the replay (`open`), and those the log
/// never heard of (their `Started` was not written); the files of any
/// other are stale and removed. `limit` is the most stdout kept. Returns
/// the events, by hook actor, and the files to remove once they are in
/// the log.
pub fn fetch_outputs(
    dir: &Path,
    open: &std::collections::BTreeMap<String, OpenHook>,
    store: &dyn EventStore,
    limit: usize,
    wait: Duration,
) -> (Vec<(String, Event)>, Vec<std::path::PathBuf>) {
    let mut events = Vec::new();
    let mut done = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (events, done);
    };
    let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for file in files {
        let (Some(actor), Some(base)) = (capture::actor_of(&file), capture::base_of_out(&file))
        else {
            continue;
        };
        let slot = actor.split('/').next().unwrap_or_default().to_string();
        let started = match open.get(&actor) {
            Some(h) => Some(h.hook.clone()),
            None => {
                if store.read_actor_back(&actor).flatten().next().is_some() {
                    // Its end is in the log: the files outlived a crash
                    // just after it was written.
                    done.push(base);
                    continue;
                }
                None
            }
        };
        if started.as_deref().is_some_and(|h| h != "FETCH_WORK") {
            done.push(base);
            continue;
        }
        let finished = capture::wait_done(&base, wait);
        if !finished {
            warn!(message = "A FETCH_WORK hook of the last run was still running; killed it.",
                slot = %slot, hook = %actor);
        }
        let got = capture::read(&base, limit, 20);
        for line in &got.stderr {
            warn!(message = "Hook stderr.", hook = "FETCH_WORK", slot = %slot, line = %line);
        }
        let out = HookOutput {
            pid: 0,
            exit: Exit::Code(-1),
            stdout: got.stdout,
            truncated: got.truncated,
            stderr: got.stderr,
            timed_out: !finished,
            elapsed: Duration::ZERO,
        };
        let (outcome, handout) = classify_fetch(&out);
        info!(message = "Recovered the output of a FETCH_WORK hook the daemon did not see end.",
            slot = %slot, hook = %actor, outcome = %outcome);
        if started.is_none() {
            events.push((
                actor.clone(),
                Event::Hook(HookEvent::Started {
                    hook: "FETCH_WORK".into(),
                    slot: slot.clone(),
                    path: String::new(),
                    args: Vec::new(),
                    pid: 0,
                    claim: None,
                }),
            ));
        }
        events.push((
            actor,
            Event::Hook(HookEvent::Finished {
                exit: out.exit,
                timed_out: out.timed_out,
                truncated: out.truncated,
                stdout_bytes: out.stdout.len() as u64,
                outcome: format!(
                    "read after the daemon's restart (exit status not known): {outcome}"
                ),
                elapsed: 0.0,
                handout,
            }),
        ));
        done.push(base);
    }
    (events, done)
}
