//! A daemon's log file (`<SUBSYS>_LOG`: the startd's `$(LOG)/StartLog`,
//! the schedd's `SchedLog`, the eventd's `EventdLog`), rotated as HTCondor
//! rotates its daemon logs, so that a node that runs for months does not
//! fill its disk with it. The startd's knobs are named below; the others'
//! are the same with their subsystem.
//!
//! Before a line is written to a file that has reached `MAX_STARTD_LOG`
//! (a size, or an age: [`LogLimit`]), the file is renamed and a new one
//! begun. With `MAX_NUM_STARTD_LOG` at 1 (the default) or 0 the rotated
//! file is `StartLog.old`, replacing the one before. With N > 1 it is
//! `StartLog.<local time as YYYYMMDDThhmmss>`, and while more than N
//! rotated files exist the oldest becomes `StartLog.old` (replacing the
//! one before): N rotated files and the live one at most. (A second
//! rotation within the same second waits for the next second instead of
//! replacing the first's file.)
//! `TRUNC_STARTD_LOG_ON_OPEN` empties the log at start. A reconfig gives
//! the log its new limit and count ([`LogFile::set_limits`]); the path and
//! the truncation are read at start only.
//!
//! A failed rotation never loses a line: the line goes to the file as it
//! is, the failure is said once on stderr, and rotation is tried again at
//! the next line.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use crate::config::{Config, LogLimit, TypeError};

/// The daemon log's knobs as a configuration sets them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSettings {
    /// `STARTD_LOG` (default `<LOG>/StartLog`).
    pub path: PathBuf,
    /// `MAX_STARTD_LOG` (default 10 MiB).
    pub limit: LogLimit,
    /// `MAX_NUM_STARTD_LOG` (default 1).
    pub keep: u32,
    /// `TRUNC_STARTD_LOG_ON_OPEN` (default false).
    pub truncate: bool,
}

impl LogSettings {
    /// Reads the knobs; `log_dir` is `LOG`. A value that does not read is
    /// an error naming the knob.
    pub fn from_config(config: &Config, log_dir: &Path) -> Result<LogSettings, TypeError> {
        LogSettings::of(config, log_dir, "STARTD", "StartLog")
    }

    /// The knobs of subsystem `subsys` (`<SUBSYS>_LOG`, default
    /// `<LOG>/<file>`, and its limits).
    pub fn of(
        config: &Config,
        log_dir: &Path,
        subsys: &str,
        file: &str,
    ) -> Result<LogSettings, TypeError> {
        let path = config
            .text(&format!("{subsys}_LOG"))?
            .map_or_else(|| log_dir.join(file), PathBuf::from);
        let limit = config
            .log_limit(&format!("MAX_{subsys}_LOG"))?
            .unwrap_or(LogLimit::Bytes(10 << 20));
        let keep = config
            .int(&format!("MAX_NUM_{subsys}_LOG"))?
            .map_or(1, |n| u32::try_from(n.max(0)).unwrap_or(u32::MAX));
        let truncate = config
            .bool(&format!("TRUNC_{subsys}_LOG_ON_OPEN"))?
            .unwrap_or(false);
        Ok(LogSettings {
            path,
            limit,
            keep,
            truncate,
        })
    }
}

/// The daemon log as the tracing subscriber writes it, shared with the
/// reconfig that changes its limits.
#[derive(Clone)]
pub struct LogFile(Arc<Mutex<RotatingLog>>);

impl LogFile {
    /// Opens the log `settings` name.
    pub fn open(settings: &LogSettings) -> io::Result<LogFile> {
        let log = RotatingLog::open(
            &settings.path,
            settings.limit,
            settings.keep,
            settings.truncate,
        )?;
        Ok(LogFile(Arc::new(Mutex::new(log))))
    }

    /// Takes the limit and count of `settings` from the next line on.
    pub fn set_limits(&self, settings: &LogSettings) {
        let mut log = self.lock();
        log.limit = settings.limit;
        log.keep = settings.keep;
    }

    fn lock(&self) -> MutexGuard<'_, RotatingLog> {
        // A line half written by a thread that panicked leaves nothing
        // inconsistent behind: go on with the file.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogFile {
    type Writer = LogLine<'a>;

    fn make_writer(&'a self) -> LogLine<'a> {
        LogLine(self.lock())
    }
}

/// One line (or more) written to the log while holding it.
pub struct LogLine<'a>(MutexGuard<'a, RotatingLog>);

impl Write for LogLine<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Where the stamp of a rotated file comes from (the local time; a fixed
/// sequence in tests).
type Stamp = Box<dyn FnMut() -> String + Send>;

/// A log file rotated by size or age.
pub struct RotatingLog {
    path: PathBuf,
    file: Option<File>,
    /// Bytes in the current file.
    size: u64,
    /// When the current file was begun (for an age limit).
    begun: SystemTime,
    limit: LogLimit,
    keep: u32,
    stamp: Stamp,
    /// A rotation failed and was reported; said again only after one
    /// succeeds.
    failing: bool,
}

impl RotatingLog {
    /// Opens (or creates) the log at `path` for appending; `truncate`
    /// empties it first. `keep` is `MAX_NUM_<SUBSYS>_LOG`.
    pub fn open(path: &Path, limit: LogLimit, keep: u32, truncate: bool) -> io::Result<Self> {
        Self::with_stamp(path, limit, keep, truncate, Box::new(local_stamp))
    }

    fn with_stamp(
        path: &Path,
        limit: LogLimit,
        keep: u32,
        truncate: bool,
        stamp: Stamp,
    ) -> io::Result<Self> {
        let file = open_log(path, truncate)?;
        let meta = file.metadata()?;
        Ok(RotatingLog {
            path: path.to_path_buf(),
            file: Some(file),
            size: meta.len(),
            begun: meta.created().unwrap_or_else(|_| SystemTime::now()),
            limit,
            keep,
            stamp,
            failing: false,
        })
    }

    fn due(&self, now: SystemTime) -> bool {
        match self.limit {
            LogLimit::Unbounded => false,
            LogLimit::Bytes(max) => self.size >= max,
            LogLimit::Seconds(max) => {
                self.size > 0
                    && now.duration_since(self.begun).unwrap_or(Duration::ZERO)
                        >= Duration::from_secs(max)
            }
        }
    }

    /// Renames the log aside, begins a new one, and trims the rotated
    /// files to `keep`.
    fn rotate(&mut self, now: SystemTime) -> io::Result<()> {
        let suffix = if self.keep <= 1 {
            "old".to_string()
        } else {
            (self.stamp)()
        };
        let aside = with_suffix(&self.path, &suffix);
        if self.keep > 1 && aside.exists() {
            // Rotated already within this second: the log goes on until
            // the stamp changes rather than replace that file.
            return Ok(());
        }
        std::fs::rename(&self.path, &aside)?;
        self.file = None;
        self.file = Some(open_log(&self.path, false)?);
        self.size = 0;
        self.begun = now;
        if self.keep > 1 {
            self.trim()?;
        }
        Ok(())
    }

    /// While more than `keep` rotated files exist, the oldest becomes
    /// `<log>.old`.
    fn trim(&self) -> io::Result<()> {
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let base = self.path.file_name().unwrap_or_default().to_string_lossy();
        let mut rotated: Vec<String> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| {
                name.strip_prefix(base.as_ref())
                    .and_then(|rest| rest.strip_prefix('.'))
                    .is_some_and(|s| s == "old" || is_stamp(s))
            })
            .collect();
        // Stamps sort in time order, and before "old".
        rotated.sort();
        let old = format!("{base}.old");
        let mut count = rotated.len();
        for oldest in &rotated {
            if count <= self.keep as usize || *oldest == old {
                break;
            }
            std::fs::rename(dir.join(oldest), dir.join(&old))?;
            count -= 1;
        }
        Ok(())
    }
}

impl Write for RotatingLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let now = SystemTime::now();
        if self.due(now) {
            match self.rotate(now) {
                Ok(()) => self.failing = false,
                Err(e) => {
                    if !self.failing {
                        eprintln!("cannot rotate the log {}: {e}", self.path.display());
                    }
                    self.failing = true;
                    // Not again for a while if it is the age that is due.
                    self.begun = now;
                }
            }
        }
        // Reopened if a rotation renamed it but could not begin a new one.
        let file = match self.file {
            Some(ref mut f) => f,
            None => self.file.insert(open_log(&self.path, false)?),
        };
        let n = file.write(buf)?;
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

fn open_log(path: &Path, truncate: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true);
    if truncate {
        options.write(true).truncate(true);
    } else {
        options.append(true);
    }
    options.open(path)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// `YYYYMMDDThhmmss`, the stamp of a rotated log.
fn is_stamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 15
        && b[8] == b'T'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 8 || c.is_ascii_digit())
}

fn local_stamp() -> String {
    jiff::Zoned::now().strftime("%Y%m%dT%H%M%S").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("roost-daemon-log-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn read(p: PathBuf) -> String {
        std::fs::read_to_string(p).unwrap_or_default()
    }

    #[test]
    fn a_log_past_its_size_becomes_old_and_a_new_one_begins() {
        let dir = temp("one");
        let path = dir.join("StartLog");
        std::fs::write(&path, "from before\n").expect("write");
        let mut log = RotatingLog::open(&path, LogLimit::Bytes(20), 1, false).expect("open");
        // Appended to what was there; the limit is checked before a line.
        log.write_all(b"line 1 of ten\n").expect("write");
        log.write_all(b"line 2\n").expect("write");
        assert_eq!(
            read(dir.join("StartLog.old")),
            "from before\nline 1 of ten\n"
        );
        assert_eq!(read(path.clone()), "line 2\n");
        log.write_all(b"line 3 is longer\n").expect("write");
        log.write_all(b"line 4\n").expect("write");
        assert_eq!(read(dir.join("StartLog.old")), "line 2\nline 3 is longer\n");
        assert_eq!(read(path), "line 4\n");
        assert_eq!(names(&dir), ["StartLog", "StartLog.old"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn with_more_to_keep_rotated_logs_are_stamped_and_the_oldest_is_old() {
        let dir = temp("many");
        let path = dir.join("StartLog");
        // Something else in the directory with a similar name stays.
        std::fs::write(dir.join("StartLog.notes"), "mine").expect("write");
        let mut n = 0;
        let stamps: Stamp = Box::new(move || {
            n += 1;
            format!("2026112{n}T120000")
        });
        let mut log =
            RotatingLog::with_stamp(&path, LogLimit::Bytes(5), 3, true, stamps).expect("open");
        for i in 1..=6 {
            log.write_all(format!("line {i}\n").as_bytes())
                .expect("write");
        }
        // Five rotations: 1..4 stamped, the oldest ones becoming .old in
        // turn; three rotated files and the live one remain.
        assert_eq!(
            names(&dir),
            [
                "StartLog",
                "StartLog.20261124T120000",
                "StartLog.20261125T120000",
                "StartLog.notes",
                "StartLog.old"
            ]
        );
        assert_eq!(read(dir.join("StartLog.old")), "line 3\n");
        assert_eq!(read(dir.join("StartLog.20261125T120000")), "line 5\n");
        assert_eq!(read(path), "line 6\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_second_rotation_in_the_same_second_waits_for_the_next() {
        let dir = temp("second");
        let path = dir.join("StartLog");
        let mut stamps = ["20261126T120000", "20261126T120000", "20261126T120001"].into_iter();
        let stamp: Stamp = Box::new(move || stamps.next().unwrap_or("x").to_string());
        let mut log =
            RotatingLog::with_stamp(&path, LogLimit::Bytes(5), 3, true, stamp).expect("open");
        for i in 1..=4 {
            log.write_all(format!("line {i}\n").as_bytes())
                .expect("write");
        }
        assert_eq!(read(dir.join("StartLog.20261126T120000")), "line 1\n");
        assert_eq!(
            read(dir.join("StartLog.20261126T120001")),
            "line 2\nline 3\n"
        );
        assert_eq!(read(path), "line 4\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_age_limit_rotates_an_old_log_and_no_limit_never_does() {
        let dir = temp("age");
        let path = dir.join("StartLog");
        let mut log = RotatingLog::open(&path, LogLimit::Seconds(3600), 1, true).expect("open");
        log.write_all(b"first\n").expect("write");
        // An hour later (as if the file had been begun an hour ago).
        log.begun -= Duration::from_secs(3600);
        log.write_all(b"second\n").expect("write");
        assert_eq!(read(dir.join("StartLog.old")), "first\n");
        assert_eq!(read(path.clone()), "second\n");

        let mut log = RotatingLog::open(&path, LogLimit::Unbounded, 1, true).expect("open");
        for _ in 0..100 {
            log.write_all(b"a line that is never rotated\n")
                .expect("write");
        }
        assert_eq!(read(path).lines().count(), 100);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_rotation_that_fails_loses_no_line() {
        let dir = temp("fail");
        let path = dir.join("StartLog");
        let mut log = RotatingLog::open(&path, LogLimit::Bytes(5), 1, true).expect("open");
        log.write_all(b"line 1\n").expect("write");
        // A directory in the way of the rotated name: the rename fails.
        std::fs::create_dir(dir.join("StartLog.old")).expect("mkdir");
        std::fs::write(dir.join("StartLog.old/x"), "").expect("write");
        log.write_all(b"line 2\n").expect("write");
        assert!(log.failing);
        assert_eq!(read(path.clone()), "line 1\nline 2\n");
        // Once the way is clear, the next line rotates.
        std::fs::remove_dir_all(dir.join("StartLog.old")).expect("rm");
        log.write_all(b"line 3\n").expect("write");
        assert!(!log.failing);
        assert_eq!(read(dir.join("StartLog.old")), "line 1\nline 2\n");
        assert_eq!(read(path), "line 3\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn settings_come_from_the_configuration_and_limits_change_on_the_fly() {
        let dir = temp("settings");
        let read_config = |text: &str| {
            crate::config::load_text("t", text, crate::config::Scope::default(), vec![])
                .expect("config")
        };
        // STARTD_LOG's default is $(LOG)/StartLog.
        let defaults =
            LogSettings::from_config(&read_config(&format!("LOG = {}\n", dir.display())), &dir)
                .expect("defaults");
        assert_eq!(
            defaults,
            LogSettings {
                path: dir.join("StartLog"),
                limit: LogLimit::Bytes(10 << 20),
                keep: 1,
                truncate: false
            }
        );
        let path = dir.join("Other");
        let set = read_config(&format!(
            "STARTD_LOG = {}\nMAX_STARTD_LOG = 10\nMAX_NUM_STARTD_LOG = 4\n\
             TRUNC_STARTD_LOG_ON_OPEN = true\n",
            path.display()
        ));
        let set = LogSettings::from_config(&set, &dir).expect("set");
        assert_eq!(
            (set.limit, set.keep, set.truncate),
            (LogLimit::Bytes(10), 4, true)
        );
        let bad = read_config("MAX_NUM_STARTD_LOG = many\n");
        let e = LogSettings::from_config(&bad, &dir)
            .expect_err("bad")
            .to_string();
        assert!(e.contains("MAX_NUM_STARTD_LOG"), "{e}");

        let file = LogFile::open(&defaults).expect("open");
        file.make_writer_for_test()
            .write_all(b"line 1 of a log\n")
            .expect("write");
        file.set_limits(&LogSettings {
            limit: LogLimit::Bytes(5),
            ..defaults.clone()
        });
        file.make_writer_for_test()
            .write_all(b"line 2\n")
            .expect("write");
        assert_eq!(read(dir.join("StartLog.old")), "line 1 of a log\n");
        assert_eq!(read(dir.join("StartLog")), "line 2\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    impl LogFile {
        fn make_writer_for_test(&self) -> LogLine<'_> {
            tracing_subscriber::fmt::MakeWriter::make_writer(self)
        }
    }

    #[test]
    fn stamps_are_fifteen_characters_with_a_t() {
        assert!(is_stamp("20261126T235959"));
        assert!(!is_stamp("20261126-235959"));
        assert!(!is_stamp("2026112T235959"));
        assert!(!is_stamp("old"));
        assert_eq!(local_stamp().len(), 15);
        assert!(is_stamp(&local_stamp()));
    }
}
