//! A log of each daemon, written by real runs of this build and
//! committed (`tests/fixtures/logs/`): the startd's and the schedd's from
//! the router's crash test (a job routed, its copy run on the node, the
//! schedd killed during each of the four hooks), the eventd's from its
//! crash test. Every later build must replay them to the same state and
//! `roost-log` must still tell their story; a change to a logged event's
//! shape needs an upcaster ("Changing a logged event", ARCHITECTURE.md),
//! never a new fixture.

use std::path::{Path, PathBuf};

use roost::eventd::event::EventdLogged;
use roost::events::SledStore;
use roost::schedd::event::ScheddEvent;
use roost::startd::Replay;

use super::daemon::{events, temp};

/// The committed log `name`, copied where it may be opened (sled writes
/// on open).
fn fixture(name: &str) -> PathBuf {
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/logs")
        .join(name);
    let to = temp(&format!("log-fixture-{name}"));
    copy_dir(&from, &to);
    to
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("fixture").flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy");
        }
    }
}

/// The kinds of events (`Route.HookStarted`) of `actor` in the log.
fn kinds(log: &Path, actor: &str) -> Vec<String> {
    events(log)
        .iter()
        .filter(|e| e["actor"] == actor)
        .filter_map(|e| {
            let (daemon, body) = e["event"].as_object()?.iter().next()?;
            let kind = body.as_object()?.keys().next()?;
            Some(format!("{daemon}.{kind}"))
        })
        .collect()
}

#[test]
fn the_startds_committed_log_replays() {
    let dir = fixture("startd");
    let store = SledStore::open(&dir).expect("opens");
    let last = Replay::from_last_start(&store);
    assert!(last.problems.is_empty(), "{:?}", last.problems);
    assert!(last.starters.is_empty() && last.hooks.is_empty());
    assert_eq!(last.slots.len(), 2, "{:?}", last.slots.keys());
    drop(store);
    let claims = super::events_cli::roost_log(&dir, &["claims"]);
    assert!(claims.contains("job 2.0 (nobody, keyword Q)"), "{claims}");
    assert!(claims.contains("job: exit: exit code 0"), "{claims}");
}

#[test]
fn the_schedds_committed_log_replays() {
    let dir = fixture("schedd");
    let store: SledStore<ScheddEvent> = SledStore::open_as(&dir).expect("opens");
    let last = roost::actors::schedd::replay::replay(&store, 100);
    assert!(last.queue.jobs.is_empty(), "{:?}", last.queue.jobs.keys());
    assert_eq!(last.queue.history.len(), 2);
    assert!(last.router.jobs.is_empty());
    drop(store);
    // The routed job's story: each hook started, the interrupted run
    // ended at the restart, the hook run again, the job retired.
    let story = kinds(&dir, "route1.0");
    assert_eq!(story.first().map(String::as_str), Some("Route.Claimed"));
    assert_eq!(story.last().map(String::as_str), Some("Route.Retired"));
    let starts = story.iter().filter(|k| *k == "Route.HookStarted").count();
    let ends = story.iter().filter(|k| *k == "Route.HookRan").count();
    assert!(starts >= 8 && starts == ends, "{story:?}");
}

#[test]
fn the_eventds_committed_log_replays() {
    let dir = fixture("eventd");
    let store: SledStore<EventdLogged> = SledStore::open_as(&dir).expect("opens");
    let state = roost::actors::eventd::replay(&store);
    assert!(state.pending.is_empty(), "{:?}", state.pending);
    assert!(state.active.contains_key("Nightly"));
    assert_eq!(state.asked, 4);
    drop(store);
    let story = kinds(&dir, "Nightly");
    for kind in [
        "Eventd.Activated",
        "Eventd.Asked",
        "Eventd.Round",
        "Eventd.Answered",
    ] {
        assert!(story.iter().any(|k| k == kind), "{kind} in {story:?}");
    }
}
