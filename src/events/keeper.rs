//! Retention on a thread of its own. After a checkpoint the writer asks
//! the keeper to cut the log to its retention and goes on appending; the
//! keeper reads the log, keeps what the daemon's domain summarizes of the
//! events cut ([`CutSummary`]: the startd's claims' audit trail), archives
//! what goes and removes it ([`LogKeeper::prune_before`], in small steps beside
//! the writer), so no appender waits for a pass. One pass runs at a time;
//! one more may wait; an ask beyond that is dropped (the next checkpoint
//! asks again). Dropping the keeper waits for the pass under way.

use std::sync::Arc;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

use super::{Envelope, LogKeeper, Retention, StoreError};

/// What retention keeps, apart from the log, of the events it cuts: a
/// daemon's log domain reads them and answers the lines to keep (the
/// startd keeps its claims' audit trail, `startd::audit`), in
/// `Retention::claims_file` for `Retention::keep_claims_seconds`.
pub trait CutSummary: Send + Sync {
    /// The lines to keep of `events`, the events cut, in order: each a
    /// JSON object on one line, with the time it ages from.
    fn summarize(
        &self,
        events: &mut dyn Iterator<Item = Result<Envelope, StoreError>>,
    ) -> Result<Vec<(i64, String)>, StoreError>;

    /// The time a line kept by an earlier pass ages from (`None`: a line
    /// it cannot read, kept as it is).
    fn aged_from(&self, line: &str) -> Option<i64>;
}

/// A pass to make: the retention, the time of the log's last event, and
/// what to keep of the events cut.
type Pass = (Retention, i64, Option<Arc<dyn CutSummary>>);

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
                for (retention, now, summary) in rx {
                    keep_to(log.as_ref(), &retention, now, summary.as_deref());
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

    /// Asks for a pass keeping the log to `retention` at time `now`,
    /// keeping `summary` of the events cut.
    pub(super) fn ask(
        &self,
        retention: &Retention,
        now: i64,
        summary: Option<Arc<dyn CutSummary>>,
    ) {
        if let Some(tx) = &self.tx {
            match tx.try_send((retention.clone(), now, summary)) {
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
/// says so, and keeping `summary` of it. A failure is logged; the log is
/// then kept whole.
fn keep_to(log: &dyn LogKeeper, retention: &Retention, now: i64, summary: Option<&dyn CutSummary>) {
    let boundaries: Vec<(u64, i64)> = log
        .read_actor("daemon", 1)
        .flatten()
        .filter(|e| e.event.starts_replay())
        .map(|e| (e.seq, e.time))
        .collect();
    let records = log.record_sizes();
    let Some(cut) = retention.cut(&boundaries, now, &records) else {
        return;
    };
    let first = records.first().map_or(1, |r| r.0);
    if let (Some(file), Some(summary)) = (&retention.claims_file, summary)
        && let Err(e) = keep_claims(log, retention, now, (file, summary), cut)
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

/// Adds the summary of the events before `cut` to the kept-claims file,
/// and drops from it the lines older than the retention keeps them. The
/// file is replaced whole (written beside it, then renamed); a line the
/// summary cannot read is kept as it is.
fn keep_claims(
    log: &dyn LogKeeper,
    retention: &Retention,
    now: i64,
    (file, summary): (&std::path::Path, &dyn CutSummary),
    cut: u64,
) -> Result<(), StoreError> {
    let at = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| StoreError::File { path, source }
    };
    let mut cut_events = log
        .read_from(1)
        .take_while(|e| e.as_ref().is_ok_and(|e| e.seq < cut) || e.is_err());
    let kept = summary.summarize(&mut cut_events)?;
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
        match summary.aged_from(line) {
            Some(at) if at < oldest => {}
            _ => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    for (aged_from, line) in kept {
        if aged_from >= oldest {
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
