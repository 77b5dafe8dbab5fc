//! What a restart recovers of the hooks the last run left running: the
//! output of each FETCH_WORK whose files are still in
//! `$(SPOOL)/roost-hooks` and whose end the log does not hold. The hook is
//! waited for (it may still be running: the daemon died, not the hook),
//! its output read as the daemon would have read it, and a `Hook.Finished`
//! (with the job it handed out, if any) written for it, so that the
//! restart answers that job like any other hand-out it did not answer.
//! And what starters that left with no daemon (their orphan timeout ran
//! out) reported and no daemon heard, from `$(SPOOL)/roost-starters`.

use std::path::Path;
use std::time::Duration;

use tracing::{info, warn};

use crate::actors::startd::shared::Dirs;
use crate::events::{Event, EventStore};
use crate::hooks::{Exit, HookOutput, capture, output::classify_fetch};
use crate::startd::HookEvent;
use crate::startd::Replay;
use crate::startd::replay::{OpenHook, OpenStarter};

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

/// What a restart read back from the files the last run's hooks and
/// starters left: the events for the log, and the files to remove once
/// they are in it.
pub struct ReadBack {
    /// By actor, in order.
    pub events: Vec<(String, Event)>,
    captures: Vec<std::path::PathBuf>,
    leftovers: Vec<std::path::PathBuf>,
}

impl ReadBack {
    /// Removes the files read (their meaning is in the log).
    pub fn remove(&self) {
        self.captures.iter().for_each(|c| capture::remove(c));
        self.leftovers
            .iter()
            .for_each(|f| drop(std::fs::remove_file(f)));
    }
}

/// Reads back, into `last` and as events, what the FETCH_WORK hooks the
/// last run left running printed (a job in it is a hand-out, answered like
/// the others; `limit`: the most stdout kept) and what its starters that
/// are gone (not `alive`) reported with no daemon to hear it (JOB_EXIT
/// told, the job's exit), before anything is decided about their claims.
pub fn read_back(
    store: &dyn EventStore,
    last: &mut Replay,
    now: i64,
    limit: usize,
    dirs: &Dirs,
    alive: impl Fn(&OpenStarter) -> bool,
) -> ReadBack {
    let (mut events, captures) =
        fetch_outputs(&dirs.hook_output(), &last.hooks, store, limit, HOOK_WAIT);
    for (actor, e) in &events {
        last.apply_event(last.last_seq, now, actor, e);
    }
    let (left, leftovers) = starter_leftovers(
        &dirs.starter_leftovers(),
        last.starters.iter().filter(|(_, st)| !alive(st)),
    );
    for (actor, e) in &left {
        last.apply_event(last.last_seq, now, actor, e);
    }
    events.extend(left);
    ReadBack {
        events,
        captures,
        leftovers,
    }
}

/// The reports the starters of the last run that are gone (`gone`) left in
/// `dir` and the log does not hold, as their events; and every file in
/// `dir`, to remove once those are in the log (a starter writes its file
/// only as it leaves, so none is still wanted).
pub fn starter_leftovers<'a>(
    dir: &Path,
    gone: impl Iterator<Item = (&'a String, &'a OpenStarter)>,
) -> (Vec<(String, Event)>, Vec<std::path::PathBuf>) {
    let mut events = Vec::new();
    for (actor, st) in gone {
        let Some(hello) = crate::starter::link::read_leftover(dir, actor, st.pid, st.started)
        else {
            continue;
        };
        let known = usize::try_from(st.reports).unwrap_or(usize::MAX);
        let new: Vec<_> = (hello.reports.into_iter().skip(known))
            .filter_map(super::starter::recorded)
            .map(|e| (actor.clone(), Event::Starter(e)))
            .collect();
        info!(message = "A starter of the last run left what it reported with no daemon.",
            slot = %st.slot, claim = st.claim, starter = %actor, reports = new.len());
        events.extend(new);
    }
    let files = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    (events, files)
}
