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

use crate::classad::{ClassAd, Expr, Value};
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
    let owner = match ad.lookup("Owner") {
        Some(Expr::Lit(Value::Str(s))) => Some(s.to_string_lossy()),
        _ => None,
    };
    Some(Record { path, owner, text })
}

/// A time in seconds since the epoch, in this machine's local time.
fn stamp(at: i64) -> Stamp {
    let t = jiff::Timestamp::from_second(at).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    Stamp::of(&t.to_zoned(jiff::tz::TimeZone::system()).datetime())
}

/// The writer's thread, fed in order.
#[derive(Clone)]
pub struct UserLogs {
    to: mpsc::Sender<Vec<Record>>,
}

impl UserLogs {
    /// Starts the writer's thread.
    pub fn start() -> std::io::Result<UserLogs> {
        let (to, from) = mpsc::channel::<Vec<Record>>();
        std::thread::Builder::new()
            .name("user-logs".into())
            .spawn(move || {
                let mut owners = Owners::default();
                for batch in from {
                    for r in batch {
                        write(&r, &mut owners);
                    }
                }
            })?;
        Ok(UserLogs { to })
    }

    /// Appends `records` (already durable in the event log).
    pub(super) fn send(&self, records: Vec<Record>) {
        if !records.is_empty() && self.to.send(records).is_err() {
            warn!(message = "The user-log writer has stopped; job event logs are not written.");
        }
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
