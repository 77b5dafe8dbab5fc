//! Time for the actors: wall-clock seconds come from a [`Clock`], so tests
//! can run the actor system on virtual time ([`RuntimeClock`] on a paused
//! runtime).

use std::time::{SystemTime, UNIX_EPOCH};

/// A source of "now" in seconds since the epoch.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> i64;

    /// Now in nanoseconds, on the same time line: [`Clock::now`] is this
    /// divided by 10^9, rounded down. Timers that must fire at a given
    /// point within a second use it.
    fn now_nanos(&self) -> i128;

    /// Now in milliseconds, on the same time line.
    fn now_ms(&self) -> i64 {
        i64::try_from(self.now_nanos() / 1_000_000).unwrap_or(i64::MAX)
    }

    /// Whether time moves only when the actors' runtime has nothing to do
    /// (virtual time). The actors then wait for the event log in place,
    /// blocking their thread: awaited as a future, the writer thread's
    /// work would leave the runtime idle and let time jump ahead of the
    /// decision being recorded (see [`crate::actors::startd::shared::Shared::append_later`]).
    fn waits_in_place(&self) -> bool {
        false
    }
}

/// The system's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    }

    fn now_nanos(&self) -> i128 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
    }
}

/// The clock of the async runtime the actors run on: `base` seconds when
/// made, then moving as the runtime's timers move. On a runtime whose time
/// is paused (tokio's `test-util`), that is virtual time: timers fire as
/// soon as nothing else is ready and "now" jumps to them, so hours of
/// policy run in milliseconds, with every decision and every event-log
/// time stamp at the virtual time it would have had.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeClock {
    base: i64,
    start: tokio::time::Instant,
}

impl RuntimeClock {
    /// A clock showing `base` now (call it inside the runtime).
    pub fn starting_at(base: i64) -> RuntimeClock {
        RuntimeClock {
            base,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for RuntimeClock {
    fn now(&self) -> i64 {
        let elapsed = i64::try_from(self.start.elapsed().as_secs()).unwrap_or(i64::MAX);
        self.base.saturating_add(elapsed)
    }

    fn now_nanos(&self) -> i128 {
        let elapsed = i128::try_from(self.start.elapsed().as_nanos()).unwrap_or(i128::MAX);
        (i128::from(self.base) * 1_000_000_000).saturating_add(elapsed)
    }

    /// Made for paused runtimes (on a running one, waiting in place is
    /// only slower).
    fn waits_in_place(&self) -> bool {
        true
    }
}
