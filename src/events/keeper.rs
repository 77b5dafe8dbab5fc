//! Retention on a thread of its own. After a checkpoint the writer asks
//! the keeper to cut the log to its retention and goes on appending; the
//! keeper reads the log, keeps the cut claims' audit trail, archives what
//! goes and removes it ([`LogKeeper::prune_before`], in small steps beside
//! the writer), so no appender waits for a pass. One pass runs at a time;
//! one more may wait; an ask beyond that is dropped (the next checkpoint
//! asks again). Dropping the keeper waits for the pass under way.

use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

use super::{DaemonEvent, Event, LogKeeper, Retention, StoreError};

/// A pass to make: the retention, and the time of the log's last event.
type Pass = (Retention, i64);

/// The retention thread.
pub(super) struct Keeper {
    tx: Option<SyncSender<Pass>>,
    handle: Option<JoinHandle<()>>,
}

impl Keeper {
    /// Starts the thread over `log`; `None` (and an error in the daemon's
    /// log) when no thread can be started: the log is then kept whole.
    pub(super) fn start(log: Box<dyn LogKeeper>) -> Option<Keeper> {
        let (tx, rx) = mpsc::sync_channel::<Pass>(1);
        let spawned = std::thread::Builder::new()
            .name("event-log-keeper".into())
            .spawn(move || {
                for (retention, now) in rx {
                    keep_to(log.as_ref(), &retention, now);
                }
            });
        match spawned {
            Ok(handle) => Some(Keeper {
                tx: Some(tx),
                handle: Some(handle),
            }),
            Err(e) => {
                tracing::error!(message = "Cannot start the event log's retention thread; the log is kept whole.", error = %e);
                None
            }
        }
    }

    /// Asks for a pass keeping the log to `retention` at time `now`.
    pub(super) fn ask(&self, retention: &Retention, now: i64) {
        if let Some(tx) = &self.tx {
            match tx.try_send((retention.clone(), now)) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    tracing::debug!(
                        message = "A retention pass is under way and another waits; this one is left to the next checkpoint."
                    );
                }
                Err(TrySendError::Disconnected(_)) => {
                    tracing::error!(
                        message = "The event log's retention thread has stopped; the log is no longer cut."
                    );
                }
            }
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Cuts the log to `retention` at time `now`, archiving what goes when it
/// says so. A failure is logged; the log is then kept whole.
fn keep_to(log: &dyn LogKeeper, retention: &Retention, now: i64) {
    let boundaries: Vec<(u64, i64)> = log
        .read_actor("daemon", 1)
        .flatten()
        .filter(|e| {
            matches!(
                e.event,
                Event::Daemon(DaemonEvent::Started { .. } | DaemonEvent::Checkpoint { .. })
            )
        })
        .map(|e| (e.seq, e.time))
        .collect();
    let records = log.record_sizes();
    let Some(cut) = retention.cut(&boundaries, now, &records) else {
        return;
    };
    let first = records.first().map_or(1, |r| r.0);
    if let Some(file) = &retention.claims_file
        && let Err(e) = keep_claims(log, retention, now, file, cut)
    {
        // Cutting now would lose the claims' audit trail: keep the log.
        tracing::error!(message = "Cannot keep the cut claims; the log is not cut.",
            file = %file.display(), error = %e);
        return;
    }
    let archive = retention
        .archive
        .as_ref()
        .map(|d| d.join(format!("events-{first}-{}", cut - 1)));
    match log.prune_before(cut, archive.as_deref()) {
        Ok(n) => tracing::info!(
            message = "Event log cut to its retention.",
            events = n,
            first_kept = cut,
            archive = %archive.as_ref().map_or("(deleted)".into(), |a| a.display().to_string())
        ),
        Err(e) => tracing::error!(message = "Cannot cut the event log.", error = %e),
    }
}

/// Adds the audit trail of the claims in the events before `cut` to the
/// kept-claims file, and drops from it the claims accepted longer ago than
/// the retention keeps them. The file is replaced whole (written beside it,
/// then renamed); a line it cannot read is kept as it is.
fn keep_claims(
    log: &dyn LogKeeper,
    retention: &Retention,
    now: i64,
    file: &std::path::Path,
    cut: u64,
) -> Result<(), StoreError> {
    let at = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| StoreError::File { path, source }
    };
    let mut audit = super::audit::Audit::default();
    for env in log.read_from(1) {
        let env = env?;
        if env.seq >= cut {
            break;
        }
        audit.apply(&env);
    }
    let oldest = retention
        .keep_claims_seconds
        .map_or(i64::MIN, |keep| now.saturating_sub(keep));
    let mut text = String::new();
    let old = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(at(file)(e)),
    };
    for line in old.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<super::audit::ClaimRecord>(line) {
            Ok(c) if c.accepted_at < oldest => {}
            _ => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    for c in audit.finish() {
        if c.accepted_at >= oldest {
            let line = serde_json::to_string(&c).map_err(|e| at(file)(std::io::Error::other(e)))?;
            text.push_str(&line);
            text.push('\n');
        }
    }
    let tmp = file.with_extension("jsonl.new");
    // Durable before the events it keeps are cut.
    let write = || -> std::io::Result<()> {
        use std::io::Write as _;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    };
    write().map_err(at(&tmp))?;
    std::fs::rename(&tmp, file).map_err(at(file))?;
    if let Some(dir) = file.parent() {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(at(dir))?;
    }
    Ok(())
}
