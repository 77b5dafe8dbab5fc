//! What the configuration reader asks of the machine: the bytes of a
//! file, the output of a command, the entries of a directory — and why
//! one could not be had. Implemented on the real file system by
//! `actors::common::sysconfig`, in memory by tests and by `load_text`.

/// Access to configuration sources: the only I/O phase one needs.
pub trait Files {
    /// The bytes of the file at `path`.
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError>;
    /// The standard output of `command` (a shell command line), for
    /// `include : command |` and a piped `LOCAL_CONFIG_FILE`.
    fn run(&self, command: &str) -> Result<Vec<u8>, SourceError>;
    /// The full paths of the entries of directory `path` that are not
    /// directories, in any order.
    fn list_dir(&self, path: &str) -> Result<Vec<String>, SourceError>;
}

/// Why a configuration source (a file, a command, a directory) could not
/// be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The operating system refused.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A file was expected.
    #[error("is a directory")]
    IsDirectory,
    /// The source is larger than Roost reads.
    #[error("larger than {limit} bytes")]
    TooLarge {
        /// The largest source read.
        limit: u64,
    },
    /// A command ended unsuccessfully: its exit code, or the signal that
    /// killed it.
    #[error("{}", match (code, signal) {
        (Some(c), _) => format!("command exited with status {c}"),
        (None, Some(s)) => format!("command was killed by signal {s}"),
        (None, None) => "command failed".to_string(),
    })]
    Failed {
        /// The exit code, when it exited.
        code: Option<i32>,
        /// The signal, when one killed it.
        signal: Option<i32>,
    },
    /// This kind of source cannot be read where the configuration is
    /// loaded (given as text: only the text itself).
    #[error("{0}")]
    Unavailable(&'static str),
}
