//! Why the starter could not set a job up, as a type: the text of each is
//! what the daemon logs and the job's owner reads in the hold reason.

use std::path::PathBuf;

/// Why the starter could not set a job up (its sandbox, its files, its
/// user's identity); the job is then not started, and the text of this
/// error is what the daemon and the job's owner read.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The sandbox directory could not be made.
    #[error("cannot create sandbox {path}: {1}", path = .0.display())]
    Sandbox(PathBuf, #[source] std::io::Error),
    /// The sandbox could not be given to the job's user.
    #[error("cannot give sandbox to {0}: {1}")]
    Chown(String, #[source] nix::Error),
    /// A file could not be written.
    #[error("cannot write {path}: {1}", path = .0.display())]
    Write(PathBuf, #[source] std::io::Error),
    /// The starter could not act as the job's user.
    #[error("cannot take the job user's identity: {0}")]
    Identity(#[source] nix::Error),
    /// The job names no Owner (the starter runs as root).
    #[error("Owner not found in job ad; a job must name its Owner")]
    NoOwner,
    /// The Owner has no account here.
    #[error("Uid for \"{0}\" not found in passwd database for a local job")]
    UnknownOwner(String),
    /// The Owner's account could not be looked up.
    #[error("cannot look up Owner \"{0}\": {1}")]
    OwnerLookup(String, #[source] nix::Error),
    /// The Owner is root.
    #[error("Owner \"{0}\" is root; jobs may not run as root")]
    RootOwner(String),
    /// One of the job's standard files could not be opened.
    /// (`In`, `Out` or `Err`, and the file.)
    #[error("cannot open {0} file {1}: {2}")]
    Stdio(&'static str, String, #[source] std::io::Error),
}
