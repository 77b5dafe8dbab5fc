//! How a process ended (`Exit`): a plain value the pure cores, the event
//! log and the process runners (hooks, starters, cron jobs) share, so that
//! a core or the log can speak of an exit without depending on the code
//! that runs processes.

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "signal {s}"),
        }
    }
}
