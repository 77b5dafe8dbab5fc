//! Failure injection at the log's I/O sites: a store whose writes or
//! flushes fail on demand (a full disk, an I/O error), under the group
//! committer as the daemon uses it. A failed append reaches its caller as
//! an error, takes nothing into the log, leaves no gap, and loses nothing
//! acknowledged before or after it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use roost::events::{
    DaemonEvent, Envelope, Event, EventRead, EventStore, GroupCommitter, SledStore, StoreError,
};

/// Fails the next `writes` writes and the next `flushes` flushes.
#[derive(Clone, Default)]
struct Faults {
    writes: Arc<AtomicU32>,
    flushes: Arc<AtomicU32>,
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
            return Err(StoreError::Io("No space left on device (injected)".into()));
        }
        self.inner.write(expected, batch)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        if take(&self.faults.flushes) {
            return Err(StoreError::Io(
                "flush failed: Input/output error (injected)".into(),
            ));
        }
        self.inner.flush()
    }
    fn truncate(&mut self, from: u64) -> Result<(), StoreError> {
        self.inner.truncate(from)
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

#[test]
fn failed_writes_and_flushes_reach_the_caller_and_lose_nothing_acknowledged() {
    let dir = std::env::temp_dir().join(format!("roost-faults-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let faults = Faults::default();
    let store = Faulty {
        inner: SledStore::open(&dir).expect("open"),
        faults: faults.clone(),
    };
    let (committer, appender) = GroupCommitter::start(store);
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
