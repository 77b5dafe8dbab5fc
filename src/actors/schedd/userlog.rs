//! The schedd's user-log writer: the records `schedd::userlog` makes of
//! the queue's changes are appended, once the changes are durable in the
//! event log, to each job's `UserLog` by a thread of its own, with the
//! job's owner's file rights when the schedd is root. A log that cannot be
//! written is named in the schedd's log; the queue goes on (the event log
//! keeps the truth, and `roost-log` reads it).

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::mpsc;

use tracing::warn;

use crate::classad::ClassAd;
use crate::schedd::event::{JobEvent, JobId};
use crate::schedd::queue::Job;
use crate::spawn::FsUser;
use crate::userlog::{self, Stamp};

/// Records to append to one job's log.
pub(super) struct Record {
    path: String,
    owner: Option<String>,
    text: String,
}

/// The records of one change, made before it applies (they need the job
/// as it was), or `None` when the job names no log.
pub(super) fn records(
    event: &JobEvent,
    job: Option<&Job>,
    ad: Option<&ClassAd>,
    submit_host: &str,
) -> Option<Record> {
    let ad = job.map(|j| &j.ad).or(ad)?;
    let (path, xml) = crate::schedd::userlog::destination(ad)?;
    let events = crate::schedd::userlog::records(event, job, submit_host);
    if events.is_empty() {
        return None;
    }
    let JobId { cluster, proc } = event.id();
    let id = userlog::JobId { cluster, proc };
    let at = stamp(event.at());
    let text = events
        .iter()
        .map(|e| {
            if xml {
                userlog::xml(id, at, e)
            } else {
                userlog::text(id, at, e)
            }
        })
        .collect();
    let owner = crate::transfer::plan::string(ad, "Owner");
    Some(Record { path, owner, text })
}

/// A time in seconds since the epoch, in this machine's local time.
fn stamp(at: i64) -> Stamp {
    let t = jiff::Timestamp::from_second(at).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    Stamp::of(&t.to_zoned(jiff::tz::TimeZone::system()).datetime())
}

/// What the writer's thread is told, in the order the queue changed.
enum Told {
    /// The records of change number `0`, to write once it is durable.
    Pending(u64, Vec<Record>),
    /// Every change up to number `0` is durable (the event log is written
    /// in order: a later change durable means every earlier one is).
    Durable(u64),
}

/// The writer's thread. Records are handed over as the queue changes, in
/// that order, and written once their change is durable, still in that
/// order (the changes' durability is heard in any order).
pub struct UserLogs {
    to: mpsc::Sender<Told>,
    next: u64,
}

/// Says to the writer that a change is durable.
pub(super) struct Durable {
    to: mpsc::Sender<Told>,
    n: u64,
}

impl Durable {
    /// The change (and so every one before it) is durable: its records
    /// may be written.
    pub(super) fn done(self) {
        let _ = self.to.send(Told::Durable(self.n));
    }
}

impl UserLogs {
    /// Starts the writer's thread.
    pub fn start() -> std::io::Result<UserLogs> {
        let (to, from) = mpsc::channel::<Told>();
        std::thread::Builder::new()
            .name("user-logs".into())
            .spawn(move || {
                let mut owners = Owners::default();
                let mut pending: std::collections::VecDeque<(u64, Vec<Record>)> =
                    std::collections::VecDeque::new();
                for told in from {
                    match told {
                        Told::Pending(n, records) => pending.push_back((n, records)),
                        Told::Durable(upto) => {
                            while pending.front().is_some_and(|(n, _)| *n <= upto) {
                                if let Some((_, records)) = pending.pop_front() {
                                    records.iter().for_each(|r| write(r, &mut owners));
                                }
                            }
                        }
                    }
                }
            })?;
        Ok(UserLogs { to, next: 0 })
    }

    /// Hands over the records of the change being appended; what to tell
    /// once it is durable.
    pub(super) fn pending(&mut self, records: Vec<Record>) -> Option<Durable> {
        if records.is_empty() {
            return None;
        }
        self.next += 1;
        if self.to.send(Told::Pending(self.next, records)).is_err() {
            warn!(message = "The user-log writer has stopped; job event logs are not written.");
        }
        Some(Durable {
            to: self.to.clone(),
            n: self.next,
        })
    }
}

/// Why a job's log cannot be written with its owner's rights.
#[derive(Debug, thiserror::Error)]
enum OwnerError {
    /// The job names no owner.
    #[error("the job has no Owner")]
    None,
    /// The owner is not a user here.
    #[error("its owner {0} is not a user of this machine")]
    Unknown(String),
}

/// Owners' uids and gids, looked up once each.
#[derive(Default)]
struct Owners(HashMap<String, Option<(u32, u32)>>);

impl Owners {
    /// Whose rights a log is written with: the owner's when the schedd is
    /// root, else the schedd's own (`None`).
    fn ids(&mut self, owner: Option<&str>) -> Result<Option<(u32, u32)>, OwnerError> {
        if !nix::unistd::geteuid().is_root() {
            return Ok(None);
        }
        let name = owner.ok_or(OwnerError::None)?;
        let ids = self.0.entry(name.to_string()).or_insert_with(|| {
            nix::unistd::User::from_name(name)
                .ok()
                .flatten()
                .map(|u| (u.uid.as_raw(), u.gid.as_raw()))
        });
        ids.map(Some)
            .ok_or_else(|| OwnerError::Unknown(name.to_string()))
    }
}

fn write(r: &Record, owners: &mut Owners) {
    let ids = match owners.ids(r.owner.as_deref()) {
        Ok(ids) => ids,
        Err(why) => {
            return warn!(message = "A job's user log is not written.", path = %r.path, error = %why);
        }
    };
    let _as = FsUser::take(ids);
    let done = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .open(&r.path)
        .and_then(|mut f| f.write_all(r.text.as_bytes()));
    if let Err(e) = done {
        warn!(message = "A job's user log is not written.", path = %r.path, error = %e);
    }
}
