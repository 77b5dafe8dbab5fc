//! A job's own cgroup (cgroup v2), where the machine allows one: every
//! process the job starts stays in it, even one that leaves the job's
//! process group or session, so suspend, continue and kill reach them all,
//! and CPU time is counted for all of them.
//!
//! The cgroup is `<cgroup2 mount><the starter's cgroup>/<BASE_CGROUP>/
//! <slot>.<starter pid>`. The job is put in it without a race: the starter
//! steps into the cgroup, spawns the job (a child starts in its parent's
//! cgroup), and steps back out ([`JobCgroup::enter`]). When cgroups are
//! not available (no cgroup2 mount, no permission), the starter says why
//! in its log and tracks the job by its process group alone.

use std::path::{Path, PathBuf};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The cgroup of one job.
#[derive(Debug)]
pub struct JobCgroup {
    /// Its directory.
    pub path: PathBuf,
    /// The starter's own cgroup, to step back into.
    home: PathBuf,
}

/// Why a job gets no cgroup.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// The machine has no cgroup v2 hierarchy.
    #[error("no cgroup2 file system is mounted")]
    NoCgroup2,
    /// `/proc/self/cgroup` names no v2 cgroup for this process.
    #[error("this process has no cgroup v2 path in /proc/self/cgroup")]
    NoOwnCgroup,
    /// A cgroup file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError + '_ {
    move |source| CgroupError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The mount point of the cgroup2 file system, from a mountinfo text.
pub fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        (right.split_whitespace().next()? == "cgroup2")
            .then(|| left.split_whitespace().nth(4).map(PathBuf::from))?
    })
}

/// This process's cgroup v2 path (`0::/path`), from a /proc/PID/cgroup text.
pub fn own_cgroup(proc_cgroup: &str) -> Option<String> {
    proc_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::to_string)
}

/// Whether a name is safe as one cgroup directory name.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b))
}

impl JobCgroup {
    /// The directory of this process's own cgroup (the cgroup2 mount
    /// joined with the path `/proc/self/cgroup` names). A starter is in its
    /// daemon's cgroup, so the daemon finds this once and hands it to each
    /// starter ([`crate::starter::protocol::Request::cgroup_home`]).
    pub fn own_home() -> Result<PathBuf, CgroupError> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(io(Path::new("/proc/self/mountinfo")))?;
        let mount = cgroup2_mount(&mountinfo).ok_or(CgroupError::NoCgroup2)?;
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(io(Path::new("/proc/self/cgroup")))?;
        let own = own_cgroup(&own).ok_or(CgroupError::NoOwnCgroup)?;
        Ok(mount.join(own.trim_start_matches('/')))
    }

    /// Makes the job's cgroup `<base>/<name>` under the cgroup whose
    /// directory is `home` ([`JobCgroup::own_home`]). `base` is
    /// `BASE_CGROUP` (one or more `/`-separated names).
    pub fn create(home: &Path, base: &str, name: &str) -> Result<JobCgroup, CgroupError> {
        let path = Self::locate(home, base, name)?;
        std::fs::create_dir_all(&path).map_err(io(&path))?;
        // A cgroup file system without cgroup.procs is not one we can use.
        let procs = path.join("cgroup.procs");
        std::fs::metadata(&procs).map_err(io(&procs))?;
        Ok(JobCgroup {
            path,
            home: home.to_path_buf(),
        })
    }

    /// The cgroup a starter made as [`JobCgroup::create`]`(home, base,
    /// name)`, if it is still there: how the daemon finds the job of a
    /// starter that died.
    pub fn existing(home: &Path, base: &str, name: &str) -> Option<JobCgroup> {
        let path = Self::locate(home, base, name).ok()?;
        path.join("cgroup.procs").exists().then(|| JobCgroup {
            path,
            home: home.to_path_buf(),
        })
    }

    /// The directory of the job's cgroup under `home`.
    fn locate(home: &Path, base: &str, name: &str) -> Result<PathBuf, CgroupError> {
        let mut path = home.to_path_buf();
        for part in base.split('/').filter(|p| !p.is_empty()) {
            if !safe_name(part) {
                return Err(CgroupError::Io {
                    path: PathBuf::from(base),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "BASE_CGROUP must be names of letters, digits, '.', '_', '-' or '@'",
                    ),
                });
            }
            path.push(part);
        }
        let leaf: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-@".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !safe_name(&leaf) {
            return Err(CgroupError::Io {
                path: path.join(leaf),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a usable cgroup name",
                ),
            });
        }
        path.push(leaf);
        Ok(path)
    }

    /// The cgroup's directory, opened for `CLONE_INTO_CGROUP`.
    pub fn open_dir(&self) -> Result<std::os::fd::OwnedFd, CgroupError> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_DIRECTORY)
            .open(&self.path)
            .map(Into::into)
            .map_err(io(&self.path))
    }

    /// Moves this process into the job's cgroup until the guard is
    /// dropped: a child spawned meanwhile starts inside it. Slow (each
    /// move waits for the kernel's RCU grace period): only for kernels
    /// without `CLONE_INTO_CGROUP` (before 5.7).
    pub fn enter(&self) -> Result<Entered<'_>, CgroupError> {
        write_pid(&self.path, std::process::id())?;
        Ok(Entered { cgroup: self })
    }

    /// The processes in it now.
    pub fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.path.join("cgroup.procs"))
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Sends a signal to every process in it.
    pub fn signal(&self, sig: Signal) {
        for p in self.pids() {
            let _ = kill(Pid::from_raw(p), sig);
        }
    }

    /// Kills every process in it (`cgroup.kill` where the kernel has it,
    /// else SIGKILL to each).
    pub fn kill_all(&self) {
        if std::fs::write(self.path.join("cgroup.kill"), "1").is_err() {
            self.signal(Signal::SIGKILL);
        }
    }

    /// CPU time of everything that ran in it: (user, system) seconds.
    pub fn cpu(&self) -> Option<(f64, f64)> {
        let text = std::fs::read_to_string(self.path.join("cpu.stat")).ok()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
        };
        #[allow(clippy::cast_precision_loss)]
        let secs = |us: u64| us as f64 / 1e6;
        Some((secs(field("user_usec ")?), secs(field("system_usec ")?)))
    }

    /// Kills what is left, waits (up to about a second) for it to empty,
    /// and removes it.
    pub fn remove(self) -> Result<(), CgroupError> {
        // Usually the job's processes are gone already: then removing the
        // directory is all (the kernel refuses while any process is left).
        if std::fs::remove_dir(&self.path).is_ok() {
            return Ok(());
        }
        self.kill_all();
        for _ in 0..100 {
            if self.pids().is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::fs::remove_dir(&self.path).map_err(io(&self.path))
    }
}

/// While alive, this process is in a job's cgroup.
pub struct Entered<'a> {
    cgroup: &'a JobCgroup,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        let _ = write_pid(&self.cgroup.home, std::process::id());
    }
}

fn write_pid(dir: &Path, pid: u32) -> Result<(), CgroupError> {
    let procs = dir.join("cgroup.procs");
    std::fs::write(&procs, pid.to_string()).map_err(io(&procs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup2_mount_is_found_in_mountinfo() {
        let info = "35 24 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                    41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_mount(info),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(cgroup2_mount("1 2 0:1 / /proc rw - proc proc rw\n"), None);
        assert_eq!(cgroup2_mount("garbage\n\n - \n"), None);
    }

    #[test]
    fn the_own_cgroup_is_the_v2_line() {
        let text = "4:memory:/x\n0::/system.slice/roost.service\n";
        assert_eq!(
            own_cgroup(text).as_deref(),
            Some("/system.slice/roost.service")
        );
        assert_eq!(own_cgroup("4:memory:/x\n"), None);
    }

    #[test]
    fn cgroup_names_are_plain() {
        assert!(safe_name("slot1_2.1234"));
        assert!(!safe_name(".."));
        assert!(!safe_name("a/b"));
        assert!(!safe_name(""));
    }
}
