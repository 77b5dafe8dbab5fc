//! Event log speed: durable appends (one flush per batch) of single events
//! and of 1,000-event batches, and reading the log back. Results and the
//! issue's targets are in `docs/performance.md`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use roost::events::{EventRead, EventStore, SledStore};

/// The allocator the `roost` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::event;

fn bench_events(c: &mut Criterion) {
    let base = std::env::temp_dir().join(format!("roost-bench-events-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let mut g = c.benchmark_group("event log");
    g.measurement_time(Duration::from_secs(10));

    let mut store = SledStore::open(&base.join("single")).expect("open");
    let mut i = 0;
    g.throughput(Throughput::Elements(1));
    g.bench_function("durable append, 1 event per batch", |b| {
        b.iter(|| {
            i += 1;
            let next = store.next_seq();
            black_box(store.append(next, &[event(i)]).expect("append"))
        });
    });
    drop(store);

    let store = SledStore::open(&base.join("group")).expect("open");
    let (committer, appender) = roost::events::GroupCommitter::start(store);
    g.throughput(Throughput::Elements(64 * 50));
    g.sample_size(10);
    g.bench_function(
        "durable append with group commit, 64 writers x 50 single events",
        |b| {
            b.iter(|| {
                let threads: Vec<_> = (0..64)
                    .map(|w| {
                        let a = appender.clone();
                        std::thread::spawn(move || {
                            for i in 0..50 {
                                a.append(vec![event(w * 1000 + i)]).expect("append");
                            }
                        })
                    })
                    .collect();
                for t in threads {
                    t.join().expect("writer");
                }
            });
        },
    );
    drop(appender);
    drop(committer.finish());
    g.sample_size(100);

    let mut store = SledStore::open(&base.join("batch")).expect("open");
    let batch: Vec<_> = (0..1000).map(event).collect();
    g.throughput(Throughput::Elements(1000));
    g.bench_function("durable append, 1000 events per batch", |b| {
        b.iter(|| {
            let next = store.next_seq();
            black_box(store.append(next, &batch).expect("append"))
        });
    });
    let total = store.next_seq() - 1;
    g.throughput(Throughput::Elements(total));
    g.sample_size(10);
    g.bench_function(format!("read back {total} events"), |b| {
        b.iter(|| black_box(store.read_from(1).filter(Result::is_ok).count()));
    });
    g.finish();
    drop(store);
    let size: u64 = walk(&base.join("batch"));
    eprintln!(
        "event log: {total} events, {size} bytes on disk ({} bytes per event)",
        size / total.max(1)
    );
    let _ = std::fs::remove_dir_all(&base);
}

fn walk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        walk(&p)
                    } else {
                        e.metadata().map_or(0, |m| m.len())
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

criterion_group!(benches, bench_events);
criterion_main!(benches);
