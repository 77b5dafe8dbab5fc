//! Roost: an event-sourced execute-node daemon for HTCondor-style pools.
//!
//! See `ARCHITECTURE.md` for the map of the code.

#![warn(missing_docs)]

/// This build's id (the version and a hash of the sources, `build.rs`):
/// `roost` runs the `roost-startd`, and the daemon the `roost-starter`,
/// beside it only when that reports the same ([`program_beside`]).
pub const BUILD_ID: &str = env!("ROOST_BUILD_ID");

pub mod actors;
pub mod admin;
pub mod classad;
pub mod cli;
pub mod config;
pub mod cron;
pub mod eventd;
pub mod events;
pub mod exit;
pub mod failpoint;
pub mod hooks;
pub mod metrics;
pub mod policy;
pub mod pool;
pub mod schedd;
pub mod spawn;
pub mod startd;
pub mod starter;
pub mod transfer;
pub mod userlog;

/// What [`program_beside`] found.
#[derive(Debug, PartialEq)]
pub enum Beside {
    /// No executable file of that name.
    Absent,
    /// An executable built from these very sources.
    Same(std::path::PathBuf),
    /// An executable from another build: its path and what it said.
    Other(std::path::PathBuf, String),
}

/// The program `name` in the directory of `exe`: whether it is there, an
/// executable file, and built from the same sources (it says so when run
/// with `--build-id`: the version and a hash of the sources, the same for
/// a program built for another target).
pub fn program_beside(exe: &std::path::Path, name: &str) -> Beside {
    use std::os::unix::fs::PermissionsExt;
    let path = exe.with_file_name(name);
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => {}
        _ => return Beside::Absent,
    }
    let said = std::process::Command::new(&path)
        .arg("--build-id")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match said {
        Ok(id) if id == crate::BUILD_ID => Beside::Same(path),
        Ok(id) => Beside::Other(path, id),
        Err(e) => Beside::Other(path, e.to_string()),
    }
}
