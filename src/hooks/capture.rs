//! Hook output that outlives the daemon. A hook whose output must not be
//! lost (FETCH_WORK: what it printed may be a job the fetcher has handed
//! out) writes its stdout and stderr to files, `<base>.out` and
//! `<base>.err` under `$(SPOOL)/roost-hooks`, instead of pipes. The daemon
//! takes an exclusive `flock` on the stdout file before the hook starts;
//! the hook inherits the descriptor, so the lock is held for as long as
//! the hook or anything it started keeps the file open. A daemon restarted
//! after a crash finds the files of hooks the log shows unfinished, waits
//! for the lock (the hook is done), and reads what the hook printed.
//!
//! A hook cannot fill the disk through them: while the daemon watches,
//! a hook whose files pass [`HARD_CAP`] times the kept size is killed.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A hook is killed when a file passes this many times what is kept.
pub const HARD_CAP: u64 = 4;

/// What a captured hook left in its files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// Its stdout, at most the limit.
    pub stdout: Vec<u8>,
    /// Whether stdout went past the limit.
    pub truncated: bool,
    /// Its first stderr lines.
    pub stderr: Vec<String>,
}

/// `base` with `suffix` added to its name.
fn with_suffix(base: &Path, suffix: &str) -> PathBuf {
    let mut name = base.as_os_str().to_os_string();
    name.push(suffix);
    name.into()
}

/// The stdout file of capture `base`.
pub fn out_path(base: &Path) -> PathBuf {
    with_suffix(base, ".out")
}

/// The stderr file of capture `base`.
pub fn err_path(base: &Path) -> PathBuf {
    with_suffix(base, ".err")
}

/// The capture whose stdout file is `file` (`dir/x.out` → `dir/x`).
pub fn base_of_out(file: &Path) -> Option<PathBuf> {
    let name = file.file_name()?.to_str()?.strip_suffix(".out")?;
    Some(file.with_file_name(name))
}

/// The base name of the capture of hook actor `actor` in `dir`
/// (`slot1/FETCH_WORK/17` → `dir/slot1.FETCH_WORK.17`).
pub fn base_of(dir: &Path, actor: &str) -> PathBuf {
    dir.join(actor.replace('/', "."))
}

/// The hook actor whose capture `file` is (`slot1.FETCH_WORK.17.out` →
/// `slot1/FETCH_WORK/17`), if the name is one.
pub fn actor_of(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?.strip_suffix(".out")?;
    let mut parts = name.rsplitn(3, '.');
    let n = parts.next()?;
    let hook = parts.next()?;
    let slot = parts.next()?;
    if n.parse::<u64>().is_err() || hook.is_empty() || slot.is_empty() {
        return None;
    }
    Some(format!("{slot}/{hook}/{n}"))
}

/// Creates (emptied) the stdout and stderr files of capture `base`, locks
/// the stdout one, and gives the descriptors to hand to the hook.
pub fn create(base: &Path) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let open = |p: PathBuf| {
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(p)
    };
    let out = open(out_path(base))?;
    // A `flock`: it belongs to the open file, which the hook shares. It is
    // never unlocked, only released when the last holder closes the file.
    out.try_lock().map_err(std::io::Error::from)?;
    let err = open(err_path(base))?;
    Ok((out.into(), err.into()))
}

/// The bytes in the files of capture `base`: stdout's and stderr's.
pub fn sizes(base: &Path) -> (u64, u64) {
    let len = |p: PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    (len(out_path(base)), len(err_path(base)))
}

/// Reads the files of capture `base`: at most `limit` bytes of stdout and
/// the first `lines` lines of stderr.
pub fn read(base: &Path, limit: usize, lines: usize) -> Captured {
    let mut stdout = Vec::new();
    let mut truncated = false;
    if let Ok(f) = std::fs::File::open(out_path(base)) {
        let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
        let _ = f.take(cap).read_to_end(&mut stdout);
        if stdout.len() > limit {
            stdout.truncate(limit);
            truncated = true;
        }
    }
    let mut err = Vec::new();
    if let Ok(f) = std::fs::File::open(err_path(base)) {
        let _ = f.take(256 * 1024).read_to_end(&mut err);
    }
    let stderr = String::from_utf8_lossy(&err)
        .lines()
        .take(lines)
        .map(str::to_string)
        .collect();
    Captured {
        stdout,
        truncated,
        stderr,
    }
}

/// Removes the files of capture `base`.
pub fn remove(base: &Path) {
    let _ = std::fs::remove_file(out_path(base));
    let _ = std::fs::remove_file(err_path(base));
}

/// Whether no process holds the stdout file of capture `base` open any
/// more (its lock is free), or it is gone.
pub fn finished(base: &Path) -> bool {
    let Ok(f) = std::fs::File::open(out_path(base)) else {
        return true;
    };
    // Released when `f` closes.
    f.try_lock().is_ok()
}

/// The processes that hold the stdout file of capture `base` open.
pub fn holders(base: &Path) -> Vec<u32> {
    let target = out_path(base);
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == target))
            })
        })
        .collect()
}

/// Waits up to `wait` for the hook of capture `base` (and whatever it
/// started) to be done, then kills the process groups of what still holds
/// its output; whether it finished by itself.
pub fn wait_done(base: &Path, wait: Duration) -> bool {
    let until = Instant::now() + wait;
    while Instant::now() < until {
        if finished(base) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in holders(base) {
        super::kill_group(pid);
        if let Ok(p) = i32::try_from(pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until && !finished(base) {
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("roost-capture-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }

    #[test]
    fn an_actor_and_its_capture_name_each_other() {
        let dir = Path::new("/s");
        let base = base_of(dir, "slot1_2/FETCH_WORK/17");
        assert_eq!(base, Path::new("/s/slot1_2.FETCH_WORK.17"));
        assert_eq!(
            actor_of(&out_path(&base)).as_deref(),
            Some("slot1_2/FETCH_WORK/17")
        );
        assert_eq!(actor_of(Path::new("/s/x.out")), None);
        assert_eq!(actor_of(Path::new("/s/a.B.c.out")), None);
        assert_eq!(actor_of(&err_path(&base)), None);
        assert_eq!(base_of_out(&out_path(&base)), Some(base));
    }

    #[test]
    fn the_lock_is_held_while_a_descriptor_is_open_and_output_is_cut_at_the_limit() {
        let dir = temp("lock");
        let base = base_of(&dir, "slot1/FETCH_WORK/1");
        let (out, err) = create(&base).expect("create");
        assert!(!finished(&base), "held by the creator");
        let mut f = std::fs::File::from(out);
        std::io::Write::write_all(&mut f, b"A = 1\nB = 2\n").expect("write");
        std::io::Write::write_all(&mut std::fs::File::from(err), b"one\ntwo\nthree\n")
            .expect("write");
        assert_eq!(holders(&base), vec![std::process::id()]);
        drop(f);
        assert!(finished(&base));
        let got = read(&base, 6, 2);
        assert_eq!(got.stdout, b"A = 1\n");
        assert!(got.truncated);
        assert_eq!(got.stderr, vec!["one", "two"]);
        let whole = read(&base, 100, 10);
        assert!(!whole.truncated);
        assert_eq!(sizes(&base), (12, 14));
        remove(&base);
        assert!(finished(&base));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
