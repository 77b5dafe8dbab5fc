//! Failure injection at the log's I/O sites: a store whose writes or
//! flushes fail on demand (a full disk, an I/O error), or whose retention
//! pass is held, under the group committer as the daemon uses it. A failed append reaches its caller as
//! an error, takes nothing into the log, leaves no gap, and loses nothing
//! acknowledged before or after it. And under the daemon's actors: a slot
//! whose events cannot be written does not act on them, and the daemon
//! stops (a store that failed a write may fail every one after it, as sled
//! does; restarted, the daemon replays the log).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use roost::events::{
    Appender, DaemonEvent, Envelope, Event, EventRead, EventStore, GroupCommitter, LogKeeper,
    Retention, SledReader, SledStore, StoreError,
};
use roost::startd::{CheckpointEvery, Checkpointer, Replay};

/// Fails the next `writes` writes and the next `flushes` flushes; counts
/// the flushes done; holds the next flush in `gate` when one is set, and
/// the next retention pass's removal in `prune_gate`.
#[derive(Clone, Default)]
struct Faults {
    writes: Arc<AtomicU32>,
    flushes: Arc<AtomicU32>,
    flushed: Arc<AtomicU32>,
    gate: Arc<Mutex<Option<Gate>>>,
    prune_gate: Arc<Mutex<Option<Gate>>>,
}

/// Retention's handle on a [`Faulty`] store: the store's own, whose
/// removal waits at `gate` when one is set.
struct HeldKeeper {
    reader: SledReader,
    gate: Arc<Mutex<Option<Gate>>>,
}

impl EventRead for HeldKeeper {
    fn read_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.reader.read_from(from)
    }
    fn read_actor(
        &self,
        actor: &str,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.reader.read_actor(actor, from)
    }
    fn read_actor_back(
        &self,
        actor: &str,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.reader.read_actor_back(actor)
    }
}

impl LogKeeper for HeldKeeper {
    fn record_sizes(&self) -> Vec<(u64, u64)> {
        self.reader.record_sizes()
    }
    fn prune_before(&self, seq: u64, archive: Option<&std::path::Path>) -> Result<u64, StoreError> {
        let gate = self.gate.lock().expect("gate").take();
        if let Some(g) = gate {
            g.started.send(()).expect("the test waits for the pass");
            g.release.recv().expect("the test releases the pass");
        }
        self.reader.prune_before(seq, archive)
    }
}

/// Holds a flush: says when it has started, and lets it go on when told.
struct Gate {
    started: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
}

fn take(n: &AtomicU32) -> bool {
    n.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1))
        .is_ok()
}

struct Faulty {
    inner: SledStore,
    faults: Faults,
}

impl EventRead for Faulty {
    fn read_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.inner.read_from(from)
    }
    fn read_actor(
        &self,
        actor: &str,
        from: u64,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.inner.read_actor(actor, from)
    }
    fn read_actor_back(
        &self,
        actor: &str,
    ) -> Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_> {
        self.inner.read_actor_back(actor)
    }
}

impl EventStore for Faulty {
    fn next_seq(&self) -> u64 {
        self.inner.next_seq()
    }
    fn write(&mut self, expected: u64, batch: &[(i64, String, Event)]) -> Result<u64, StoreError> {
        if take(&self.faults.writes) {
            return Err(StoreError::Sled(sled::Error::Io(
                std::io::Error::from_raw_os_error(
                    28, // ENOSPC: No space left on device
                ),
            )));
        }
        self.inner.write(expected, batch)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        let gate = self.faults.gate.lock().expect("gate").take();
        if let Some(g) = gate {
            g.started.send(()).expect("the test waits for the flush");
            g.release.recv().expect("the test releases the flush");
        }
        self.faults.flushed.fetch_add(1, Ordering::SeqCst);
        if take(&self.faults.flushes) {
            return Err(StoreError::Sled(sled::Error::Io(
                std::io::Error::from_raw_os_error(
                    5, // EIO: Input/output error
                ),
            )));
        }
        self.inner.flush()
    }
    fn truncate(&mut self, from: u64) -> Result<(), StoreError> {
        self.inner.truncate(from)
    }
    fn keeper(&self) -> Option<Box<dyn LogKeeper>> {
        Some(Box::new(HeldKeeper {
            reader: self.inner.reader(),
            gate: Arc::clone(&self.faults.prune_gate),
        }))
    }
}

fn batch(tag: &str, n: usize) -> Vec<(i64, String, Event)> {
    (0..n)
        .map(|i| {
            (
                0,
                "daemon".to_string(),
                Event::Daemon(DaemonEvent::Command {
                    command: format!("{tag} {i}"),
                }),
            )
        })
        .collect()
}

/// A fresh faulty store in a temp directory named after `name`, under a
/// group committer: its directory, its faults, the committer, an appender.
fn faulty_log(name: &str) -> (std::path::PathBuf, Faults, GroupCommitter<Faulty>, Appender) {
    let dir = std::env::temp_dir().join(format!("roost-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let faults = Faults::default();
    let store = Faulty {
        inner: SledStore::open(&dir).expect("open"),
        faults: faults.clone(),
    };
    let (committer, appender) = GroupCommitter::start(store);
    (dir, faults, committer, appender)
}

/// Retention runs beside the writer: while a pass is held in the middle
/// of cutting the log, appends go on and are acknowledged; the pass then
/// completes, and the writer's end waits for it.
#[test]
fn appends_go_on_while_a_retention_pass_is_held() {
    let dir = std::env::temp_dir().join(format!("roost-held-pass-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut inner = SledStore::open(&dir).expect("open");
    for n in 0..4 {
        // A run start every 50 events: where retention may cut.
        let mut b = batch(&format!("run {n}"), 50);
        b[0].2 = Event::Daemon(DaemonEvent::Started {
            version: "test".into(),
            pid: 1,
            host: "h".into(),
            slots: Vec::new(),
            boot: String::new(),
        });
        let next = inner.next_seq();
        inner.append(next, &b).expect("prefill");
    }
    let faults = Faults::default();
    let (started_tx, started) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    *faults.prune_gate.lock().expect("gate") = Some(Gate {
        started: started_tx,
        release: release_rx,
    });
    let store = Faulty {
        inner,
        faults: faults.clone(),
    };
    let every = CheckpointEvery {
        events: 10,
        seconds: 0,
    };
    let cp = Checkpointer::new(Replay::default(), every).with_retention(Retention {
        keep_bytes: Some(1),
        ..Retention::default()
    });
    let (committer, appender) = GroupCommitter::start_with(store, Some(cp));
    for i in 0..10 {
        appender
            .append(batch(&format!("before {i}"), 1))
            .expect("append");
    }
    started
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("a retention pass began after the checkpoint");
    // The pass is held inside its removal: appends are still answered.
    let (done_tx, done) = mpsc::channel();
    let a = appender.clone();
    std::thread::spawn(move || {
        for i in 0..50 {
            a.append(batch(&format!("during {i}"), 1)).expect("append");
        }
        done_tx.send(()).expect("test waits");
    });
    done.recv_timeout(std::time::Duration::from_secs(60))
        .expect("appends were answered while the retention pass was held");
    release.send(()).expect("the pass waits");
    drop(appender);
    let store = committer.finish().expect("writer");
    let reader = store.inner.reader();
    assert!(
        reader.first_seq() > 1,
        "the pass cut the log before the writer ended"
    );
    assert!(
        store.inner.verify().is_empty(),
        "{:?}",
        store.inner.verify()
    );
    let last = reader.last_seq();
    let seqs: Vec<u64> = store
        .read_from(1)
        .map(|e| e.expect("decodes").seq)
        .collect();
    assert_eq!(seqs, (reader.first_seq()..=last).collect::<Vec<_>>());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failed_writes_and_flushes_reach_the_caller_and_lose_nothing_acknowledged() {
    let (dir, faults, committer, appender) = faulty_log("faults");
    let mut acked: Vec<String> = Vec::new();
    let ok = |acked: &mut Vec<String>, tag: &str, n: usize| {
        let first = appender.append(batch(tag, n)).expect("append");
        acked.extend((0..n).map(|i| format!("{tag} {i}")));
        first
    };
    assert_eq!(ok(&mut acked, "a", 3), 1);

    // A full disk: the write fails, the caller hears why.
    faults.writes.store(1, Ordering::SeqCst);
    let err = appender
        .append(batch("lost-write", 2))
        .expect_err("injected");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    assert_eq!(ok(&mut acked, "b", 1), 4, "no gap after a failed write");

    // The write succeeds but the flush fails: the batch is taken back.
    faults.flushes.store(1, Ordering::SeqCst);
    let err = appender
        .append(batch("lost-flush", 2))
        .expect_err("injected");
    assert!(err.to_string().contains("Input/output error"), "{err}");
    assert_eq!(
        ok(&mut acked, "c", 2),
        5,
        "the taken-back numbers are used again"
    );

    // A recorded (not awaited) batch whose write fails is logged by the
    // writer. An append grouped with it shares its fate and hears of it;
    // tried again, it goes in.
    faults.writes.store(1, Ordering::SeqCst);
    appender.record(batch("lost-record", 1)).expect("queued");
    let first = match appender.append(batch("d", 1)) {
        Ok(first) => first,
        Err(e) => {
            assert!(e.to_string().contains("No space left on device"), "{e}");
            appender.append(batch("d", 1)).expect("again")
        }
    };
    acked.push("d 0".into());
    assert_eq!(first, 7);

    drop(appender);
    let store = committer.finish().expect("the writer returns the store");
    let texts: Vec<String> = store
        .read_from(1)
        .map(|e| match e.expect("decodes").event {
            Event::Daemon(DaemonEvent::Command { command }) => command,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(texts, acked, "exactly what was acknowledged, in order");
    assert!(
        store.inner.verify().is_empty(),
        "{:?}",
        store.inner.verify()
    );
    drop(store);

    // And it is all on disk.
    let reopened = SledStore::open(&dir).expect("reopen");
    assert_eq!(reopened.read_from(1).count(), acked.len());
    assert_eq!(reopened.next_seq(), 8);
    drop(reopened);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn appends_awaited_as_futures_share_a_flush_and_hear_their_outcome() {
    let (dir, faults, committer, appender) = faulty_log("later");
    let (started_tx, started) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    *faults.gate.lock().expect("gate") = Some(Gate {
        started: started_tx,
        release: release_rx,
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    // The first append's flush is held; three more are handed over
    // meanwhile from the same thread, which never blocks.
    let a = appender.append_later(batch("a", 2));
    started.recv().expect("the first flush started");
    let b = appender.append_later(batch("b", 1));
    let c = appender.append_later(batch("c", 3));
    let d = appender.append_later(batch("d", 1));
    release.send(()).expect("release");
    let firsts = rt.block_on(async { (a.await, b.await, c.await, d.await) });
    assert_eq!(
        (
            firsts.0.expect("a"),
            firsts.1.expect("b"),
            firsts.2.expect("c"),
            firsts.3.expect("d")
        ),
        (1, 3, 4, 7),
        "each hears its first sequence number, in the order handed over"
    );
    assert_eq!(
        faults.flushed.load(Ordering::SeqCst),
        2,
        "the three handed over during the first flush went into one group"
    );

    // A failure reaches the future, and the next append goes in after
    // what was acknowledged.
    faults.writes.store(1, Ordering::SeqCst);
    let err = rt
        .block_on(appender.append_later(batch("lost", 1)))
        .expect_err("injected");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    assert_eq!(
        rt.block_on(appender.append_later(batch("e", 1)))
            .expect("e"),
        8
    );

    drop(appender);
    let store = committer.finish().expect("the writer returns the store");
    assert_eq!(
        store.read_from(1).count(),
        8,
        "exactly what was acknowledged"
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits (up to a minute, without blocking the actors' thread) for `ok`.
async fn until(what: &str, mut ok: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[test]
fn a_fetched_job_whose_events_cannot_be_written_is_not_acted_on_and_the_daemon_stops() {
    use roost::actors::common::clock::SystemClock;

    let dir = super::daemon::temp("append-fails");
    // FETCH_WORK notes each run and finds no work, until a job is offered.
    let runs = dir.join("fetches");
    let offered = dir.join("job");
    let config_path = super::daemon::fetch_hook_config(
        &dir,
        &format!(
            "#!/bin/sh\necho run >> {}\ncat {} 2>/dev/null\nexit 0\n",
            runs.display(),
            offered.display()
        ),
        1,
        "RunBenchmarks = False\nSTART = True\nFetchWorkDelay = 1\n",
    );
    let clock = SystemClock;
    let (config, prepared, reload) = super::actors_virtual::prepare(
        &config_path,
        roost::actors::common::clock::Clock::now(&clock),
    );
    let count = {
        let runs = runs.clone();
        move || {
            std::fs::read_to_string(&runs)
                .map(|t| t.lines().count())
                .unwrap_or(0)
        }
    };
    let faults = Faults::default();
    let sys = actix::System::new();
    let (shared, committer) = sys.block_on({
        let faults = faults.clone();
        let count = count.clone();
        let offered = offered.clone();
        async move {
            let (shared, _node, committer) = prepared.start_over(
                |inner| Faulty {
                    inner,
                    faults: faults.clone(),
                },
                config,
                std::sync::Arc::new(clock),
                reload,
            );
            until("two fetches", || count() >= 2).await;
            // The disk fills: every write fails from now on. Polls that
            // find nothing write nothing, so the daemon goes on, until
            // FETCH_WORK hands out a job.
            faults.writes.store(u32::MAX, Ordering::SeqCst);
            let before = count();
            until("another empty fetch", || count() > before).await;
            std::fs::write(&offered, "Owner = \"alice\"\nCmd = \"/bin/true\"\n").expect("job");
            // A daemon that went on would be stopped here, a minute on,
            // with another code.
            actix::spawn(async {
                tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                actix::System::current().stop_with_code(99);
            });
            (shared, committer)
        }
    });
    // The hand-out cannot be written, and the daemon's actor system stops
    // with the log's failure code.
    let code = sys.run_with_code().expect("the actor system ran");
    assert_eq!(code, 75, "the exit code of a failed event log");
    drop(shared);
    drop(committer.finish());
    // Nothing was done with the job: no claim, no starter.
    let log = super::daemon::events(&dir.join("spool/roost-events"));
    let acted = log
        .iter()
        .filter(|e| {
            e.pointer("/event/Slot/ClaimCreated").is_some() || e.pointer("/event/Starter").is_some()
        })
        .count();
    assert_eq!(acted, 0, "{log:?}");
    // The polls before the failure are held, not written one by one.
    let started = log
        .iter()
        .filter(|e| e.pointer("/event/Slot/FetchStarted").is_some())
        .count();
    assert!(
        started < count(),
        "{started} FetchStarted events for {} runs",
        count()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
