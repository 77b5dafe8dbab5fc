//! The router's events (one actor per routed job in the schedd's log:
//! `route<c>.<p>`, the source job's id) and its hooks' names.

use serde::{Deserialize, Serialize};

use crate::schedd::event::{JobEvent, JobId};

/// A router hook (`<Keyword>_HOOK_<name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RouterHook {
    /// `TRANSLATE_JOB`: makes the routed copy.
    Translate,
    /// `UPDATE_JOB_INFO`: each poll of a submitted job.
    UpdateJobInfo,
    /// `JOB_FINALIZE` (or the older `JOB_EXIT`): the routed copy finished.
    Finalize,
    /// `JOB_CLEANUP`: the routed job is given up or done.
    Cleanup,
}

impl RouterHook {
    /// The knob names of the hook, first found wins.
    pub fn knobs(self, keyword: &str) -> Vec<String> {
        let names: &[&str] = match self {
            RouterHook::Translate => &["TRANSLATE_JOB"],
            RouterHook::UpdateJobInfo => &["UPDATE_JOB_INFO"],
            RouterHook::Finalize => &["JOB_FINALIZE", "JOB_EXIT"],
            RouterHook::Cleanup => &["JOB_CLEANUP"],
        };
        names
            .iter()
            .map(|n| format!("{keyword}_HOOK_{n}"))
            .collect()
    }

    /// Every hook.
    pub const ALL: [RouterHook; 4] = [
        RouterHook::Translate,
        RouterHook::UpdateJobInfo,
        RouterHook::Finalize,
        RouterHook::Cleanup,
    ];
}

/// One change of a routed job, in the past tense.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RouteEvent {
    /// The router took an idle job for a route (`Managed = "External"`).
    Claimed {
        /// When.
        at: i64,
        /// The source job.
        src: JobId,
        /// The route's name.
        route: String,
    },
    /// A hook ran for the job, and what its result meant.
    HookRan {
        /// When it ended.
        at: i64,
        /// The source job.
        src: JobId,
        /// Which hook.
        hook: RouterHook,
        /// How it ended (`exit code 0`, `signal 9`, or why it did not run).
        exit: String,
        /// What the router made of it.
        outcome: String,
    },
    /// The routed copy entered the queue.
    Submitted {
        /// When.
        at: i64,
        /// The source job.
        src: JobId,
        /// The routed copy.
        dest: JobId,
    },
    /// The routed copy completed.
    Finished {
        /// When.
        at: i64,
        /// The source job.
        src: JobId,
    },
    /// The routed job is over: finalized, or given up (HTCondor's
    /// "gracefully remove"); its cleanup follows.
    Ending {
        /// When.
        at: i64,
        /// The source job.
        src: JobId,
        /// Whether it was finalized (the source then leaves as done).
        done: bool,
        /// Why it ended.
        why: String,
    },
    /// Cleaned up: the routed copy removed if unfinished, the source job
    /// given back to the queue. The router forgets the job.
    Retired {
        /// When.
        at: i64,
        /// The source job.
        src: JobId,
    },
    /// A hook's process started for the job. Recorded as soon as the
    /// process exists and before anything it prints is taken, so that a
    /// restart knows every hook that may still be running; its end is the
    /// job's next `HookRan`.
    HookStarted {
        /// When.
        at: i64,
        /// The source job.
        src: JobId,
        /// Which hook.
        hook: RouterHook,
        /// Its process (the leader of its process group).
        pid: u32,
        /// When that process started, in the kernel's ticks since boot
        /// (0: not known), so that a restart does not take another
        /// process with the same pid for it.
        started: u64,
    },
}

impl RouteEvent {
    /// The source job it concerns.
    pub fn src(&self) -> JobId {
        match self {
            RouteEvent::Claimed { src, .. }
            | RouteEvent::HookRan { src, .. }
            | RouteEvent::Submitted { src, .. }
            | RouteEvent::Finished { src, .. }
            | RouteEvent::Ending { src, .. }
            | RouteEvent::Retired { src, .. }
            | RouteEvent::HookStarted { src, .. } => *src,
        }
    }

    /// When it happened.
    pub fn at(&self) -> i64 {
        match self {
            RouteEvent::Claimed { at, .. }
            | RouteEvent::HookRan { at, .. }
            | RouteEvent::Submitted { at, .. }
            | RouteEvent::Finished { at, .. }
            | RouteEvent::Ending { at, .. }
            | RouteEvent::Retired { at, .. }
            | RouteEvent::HookStarted { at, .. } => *at,
        }
    }

    /// The routed job's actor name in the log: `route12.0`.
    pub fn actor(&self) -> String {
        format!("route{}", self.src())
    }
}

/// An event of the schedd's log: the queue's or the router's.
#[derive(Clone, Debug, PartialEq)]
pub enum Logged {
    /// A job of the queue.
    Job(JobEvent),
    /// A routed job.
    Route(RouteEvent),
}
