//! What a retention pass costs the appenders: single-event durable appends
//! through the group committer, one after another, while the writer
//! checkpoints every 500 events and — in the measured case — keeps the log
//! to 1 MB, cutting (and archiving) a log prefilled with 200,000 events.
//! The same run without retention is the comparison. Prints each case's
//! median, 99th percentile and worst append latency (the worst is what a
//! retention pass on the writer's path shows in). Results in
//! `docs/performance.md`, "Retention off the writer's path".
//!
//! `cargo bench --profile ci --bench retention`

use std::path::Path;
use std::time::Instant;

use roost::events::{DaemonEvent, Event, EventStore, GroupCommitter, Retention, SledStore};
use roost::startd::{CheckpointEvery, Checkpointer, Replay};

/// The allocator the `roost` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::event;

const PREFILL: i64 = 200_000;
const APPENDS: usize = 4_000;
const ROUNDS: usize = 3;

fn started(i: i64) -> (i64, String, Event) {
    (
        i,
        "daemon".into(),
        Event::Daemon(DaemonEvent::Started {
            version: "bench".into(),
            pid: 1,
            host: "bench".into(),
            slots: Vec::new(),
            boot: String::new(),
        }),
    )
}

/// A log of `PREFILL` events in 1,000-event batches, a daemon start every
/// 20,000 (where retention may cut).
fn prefill(dir: &Path) -> SledStore {
    let mut store = SledStore::open(dir).expect("open");
    let mut i = 0;
    while i < PREFILL {
        let mut batch: Vec<_> = (i..i + 1000).map(event).collect();
        if i % 20_000 == 0 {
            batch[0] = started(i);
        }
        let next = store.next_seq();
        store.append(next, &batch).expect("prefill");
        i += 1000;
    }
    store
}

/// Append latencies (µs, sorted) of `APPENDS` single events, one after
/// another, with `retention` kept by the writer.
fn run(dir: &Path, retention: Retention) -> Vec<u64> {
    let store = prefill(dir);
    let every = CheckpointEvery {
        events: 500,
        seconds: 0,
    };
    let cp = Checkpointer::new(Replay::default(), every).with_retention(retention);
    let (committer, appender) = GroupCommitter::start_with(store, Some(cp));
    let mut lat = Vec::with_capacity(APPENDS);
    for k in 0..APPENDS {
        let t = Instant::now();
        appender
            .append(vec![event(PREFILL + k as i64)])
            .expect("append");
        lat.push(u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX));
    }
    drop(appender);
    let store = committer.finish().expect("writer");
    drop(store);
    lat.sort_unstable();
    lat
}

/// The `per_mille`th of 1,000 in `sorted` (which is not empty).
fn pct(sorted: &[u64], per_mille: usize) -> u64 {
    sorted[(sorted.len() - 1) * per_mille / 1000]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter that does not name this
    // bench skips it (as criterion's benches do).
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args
        .iter()
        .any(|a| !a.starts_with('-') && !"retention".contains(a.as_str()))
    {
        return;
    }
    let base = std::env::temp_dir().join(format!("roost-bench-retention-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    println!("single-event durable appends, {APPENDS} per run, {ROUNDS} runs per case");
    println!(
        "{:<44} {:>9} {:>9} {:>9}",
        "case", "p50 µs", "p99 µs", "worst µs"
    );
    for (name, keep) in [
        ("no retention (comparison)", false),
        ("retention: keep 1 MB, archive", true),
    ] {
        let mut all = Vec::new();
        let mut worst = Vec::new();
        for r in 0..ROUNDS {
            let dir = base.join(format!("{}-{r}", u8::from(keep)));
            let retention = if keep {
                Retention {
                    keep_bytes: Some(1 << 20),
                    archive: Some(dir.join("archive")),
                    ..Retention::default()
                }
            } else {
                Retention::default()
            };
            let lat = run(&dir.join("log"), retention);
            worst.push(*lat.last().unwrap_or(&0));
            all.extend(lat);
            let _ = std::fs::remove_dir_all(&dir);
        }
        all.sort_unstable();
        println!(
            "{:<44} {:>9} {:>9} {:>9}   (worst per run: {:?})",
            name,
            pct(&all, 500),
            pct(&all, 990),
            all.last().copied().unwrap_or(0),
            worst
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}
