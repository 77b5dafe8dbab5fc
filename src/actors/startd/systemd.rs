//! systemd's service notifications (`sd_notify`): what `roost startd`
//! tells the service manager that started it with `Type=notify`.
//!
//! `READY=1` once the event log is replayed and the slots are started,
//! `STATUS=` with the node's summary whenever it changes,
//! `RELOADING=1` … `READY=1` around a reconfig, `STOPPING=1` once a
//! shutdown begins, and `WATCHDOG=1` at half the unit's `WatchdogSec` from
//! the node actor's own thread (a daemon whose actors are stuck stops
//! answering the watchdog). Without `NOTIFY_SOCKET` (not started by
//! systemd, or `Type=exec`) every call is a no-op. A message that cannot
//! be sent is logged, once, and the daemon goes on.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sd_notify::NotifyState;
use tracing::{debug, warn};

/// Whether systemd listens (`NOTIFY_SOCKET` was set at start-up).
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("NOTIFY_SOCKET").is_some_and(|s| !s.is_empty()))
}

/// Sends `states`; a failure is logged the first time only.
fn send(states: &[NotifyState<'_>]) {
    static FAILED: AtomicBool = AtomicBool::new(false);
    if !enabled() {
        return;
    }
    match sd_notify::notify(false, states) {
        Ok(()) => debug!(message = "Told systemd.", states = ?states),
        Err(e) => {
            if !FAILED.swap(true, Ordering::Relaxed) {
                warn!(message = "Cannot notify systemd (NOTIFY_SOCKET).", error = %e);
            }
        }
    }
}

/// The daemon is up: `READY=1` and its status.
pub fn ready(status: &str) {
    send(&[NotifyState::Ready, NotifyState::Status(status)]);
}

/// The node's status line changed.
pub fn status(status: &str) {
    send(&[NotifyState::Status(status)]);
}

/// A reconfig begins (`RELOADING=1`, with the monotonic clock's time as
/// systemd 253 and later ask); [`ready`] ends it.
pub fn reloading() {
    let mut states = vec![
        NotifyState::Reloading,
        NotifyState::Status("reading the configuration again"),
    ];
    if let Ok(now) = NotifyState::monotonic_usec_now() {
        states.push(now);
    }
    send(&states);
}

/// A shutdown began.
pub fn stopping(status: &str) {
    send(&[NotifyState::Stopping, NotifyState::Status(status)]);
}

/// Keeps the watchdog fed.
pub fn watchdog() {
    send(&[NotifyState::Watchdog]);
}

/// How often to feed the watchdog: half the unit's `WatchdogSec`, when it
/// set one for this process.
pub fn watchdog_every() -> Option<Duration> {
    let mut usec = 0;
    if enabled() && sd_notify::watchdog_enabled(false, &mut usec) && usec > 0 {
        Some(Duration::from_micros(usec / 2).max(Duration::from_millis(100)))
    } else {
        None
    }
}
