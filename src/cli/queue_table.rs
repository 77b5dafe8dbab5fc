//! condor_q's and condor_history's tables, for `roost q` and
//! `roost history`: the batch view (one line per owner and cluster), the
//! job view (`-nobatch`), `-hold`, `-run`, and the history's view, each
//! with condor_q's totals line where it has one.

use std::collections::BTreeMap;

use super::admin_cmd::duration;
use crate::classad::{ClassAd, FixedEnv, Value};
use crate::schedd::event::Status;
use crate::schedd::queue::status_of;

fn text(ad: &ClassAd, attr: &str) -> String {
    match ad.eval_attr(attr, &FixedEnv::new(0)) {
        Value::Str(s) => s.to_string_lossy(),
        _ => String::new(),
    }
}

/// An attribute's value as a whole number (0 when it is not a number).
pub(crate) fn int(ad: &ClassAd, attr: &str) -> i64 {
    match ad.eval_attr(attr, &FixedEnv::new(0)) {
        Value::Int(n) => n,
        // Seconds and sizes: the fraction is dropped.
        #[allow(clippy::cast_possible_truncation)]
        Value::Real(r) => r as i64,
        _ => 0,
    }
}

/// `MM/DD HH:MM` in local time, as condor_q prints dates.
fn date(t: i64) -> String {
    match jiff::Timestamp::from_second(t) {
        Ok(ts) => ts
            .to_zoned(jiff::tz::TimeZone::system())
            .strftime("%m/%d %H:%M")
            .to_string(),
        Err(_) => "??/?? ??:??".into(),
    }
}

fn id(ad: &ClassAd) -> String {
    format!("{:>4}.{:<3}", int(ad, "ClusterId"), int(ad, "ProcId"))
}

/// The command and its arguments, as condor_q's CMD column shows them.
fn cmd(ad: &ClassAd) -> String {
    let exe = text(ad, "Cmd");
    let base = exe.rsplit('/').next().unwrap_or(&exe).to_string();
    let args = match text(ad, "Arguments") {
        a if a.is_empty() => text(ad, "Args"),
        a => a,
    };
    let line = if args.is_empty() {
        base
    } else {
        format!("{base} {args}")
    };
    line.chars().take(40).collect()
}

/// `JobStatus` of an ad as condor_q's letter.
pub fn status_letter(ad: &ClassAd) -> char {
    status_of(ad).map_or('?', Status::letter)
}

/// `D+HH:MM:SS` of a job's run time.
pub fn run_time(ad: &ClassAd, now: i64) -> String {
    let mut t = int(ad, "RemoteWallClockTime");
    if status_of(ad) == Some(Status::Running) {
        t += (now - int(ad, "JobCurrentStartDate")).max(0);
    }
    duration(t)
}

/// condor_q's last line.
fn totals(ads: &[ClassAd]) -> String {
    let count = |s: Status| ads.iter().filter(|a| status_of(a) == Some(s)).count();
    format!(
        "\nTotal for query: {} jobs; {} completed, {} removed, {} idle, {} running, {} held, {} suspended\n",
        ads.len(),
        count(Status::Completed),
        count(Status::Removed),
        count(Status::Idle),
        count(Status::Running),
        count(Status::Held),
        count(Status::Suspended)
    )
}

/// `-nobatch`: one line per job.
pub fn job_table(ads: &[ClassAd], now: i64) -> String {
    let mut out =
        String::from(" ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD\n");
    for ad in ads {
        let size = int(ad, "ImageSize") as f64 / 1024.0;
        out.push_str(&format!(
            "{} {:<14} {:>11} {:>12} {:<2} {:<3} {:<4.1} {}\n",
            id(ad),
            text(ad, "Owner"),
            date(int(ad, "QDate")),
            run_time(ad, now),
            status_letter(ad),
            int(ad, "JobPrio"),
            size,
            cmd(ad)
        ));
    }
    out.push_str(&totals(ads));
    out
}

/// The default view: one line per owner and batch (`JobBatchName`, else
/// the cluster), with counts by state and the job ids.
pub fn batch_table(ads: &[ClassAd]) -> String {
    struct Batch {
        submitted: i64,
        counts: [usize; 3],
        ids: Vec<(i64, i64)>,
    }
    let mut batches: BTreeMap<(String, String), Batch> = BTreeMap::new();
    for ad in ads {
        let name = match text(ad, "JobBatchName") {
            n if n.is_empty() => format!("ID: {}", int(ad, "ClusterId")),
            n => n,
        };
        let b = batches.entry((text(ad, "Owner"), name)).or_insert(Batch {
            submitted: i64::MAX,
            counts: [0; 3],
            ids: Vec::new(),
        });
        b.submitted = b.submitted.min(int(ad, "QDate"));
        match status_of(ad) {
            Some(Status::Running) => b.counts[0] += 1,
            Some(Status::Idle) => b.counts[1] += 1,
            Some(Status::Held) => b.counts[2] += 1,
            _ => {}
        }
        b.ids.push((int(ad, "ClusterId"), int(ad, "ProcId")));
    }
    let held = ads.iter().any(|a| status_of(a) == Some(Status::Held));
    let mut out = if held {
        String::from(
            "OWNER      BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n",
        )
    } else {
        String::from("OWNER      BATCH_NAME      SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS\n")
    };
    let n = |c: usize| {
        if c == 0 {
            "_".to_string()
        } else {
            c.to_string()
        }
    };
    for ((owner, name), b) in &batches {
        let first = b.ids.iter().min().copied().unwrap_or_default();
        let last = b.ids.iter().max().copied().unwrap_or_default();
        let ids = if first == last {
            format!("{}.{}", first.0, first.1)
        } else if first.0 == last.0 {
            format!("{}.{}-{}", first.0, first.1, last.1)
        } else {
            format!("{}.{} ... {}.{}", first.0, first.1, last.0, last.1)
        };
        let hold = if held {
            format!("{:>6} ", n(b.counts[2]))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{:<10} {:<15} {} {:>6} {:>6} {:>6} {}{:>6} {}\n",
            owner,
            name,
            date(b.submitted),
            "_",
            n(b.counts[0]),
            n(b.counts[1]),
            hold,
            b.ids.len(),
            ids
        ));
    }
    out.push_str(&totals(ads));
    out
}

/// `-hold`: held jobs and why.
pub fn hold_table(ads: &[ClassAd]) -> String {
    let mut out = String::from(" ID      OWNER          HELD_SINCE  HOLD_REASON\n");
    for ad in ads {
        out.push_str(&format!(
            "{} {:<14} {:>11} {}\n",
            id(ad),
            text(ad, "Owner"),
            date(int(ad, "EnteredCurrentStatus")),
            text(ad, "HoldReason")
        ));
    }
    out.push_str(&totals(ads));
    out
}

/// `-run`: running jobs and where.
pub fn run_table(ads: &[ClassAd], now: i64) -> String {
    let mut out = String::from(" ID      OWNER            SUBMITTED     RUN_TIME HOST(S)\n");
    for ad in ads {
        out.push_str(&format!(
            "{} {:<14} {:>11} {:>12} {}\n",
            id(ad),
            text(ad, "Owner"),
            date(int(ad, "QDate")),
            run_time(ad, now),
            text(ad, "RemoteHost")
        ));
    }
    out.push_str(&totals(ads));
    out
}

/// condor_history's view.
pub fn history_table(ads: &[ClassAd]) -> String {
    let mut out =
        String::from(" ID     OWNER          SUBMITTED   RUN_TIME     ST COMPLETED   CMD\n");
    for ad in ads {
        let done = match int(ad, "CompletionDate") {
            0 => "???".to_string(),
            t => date(t),
        };
        out.push_str(&format!(
            "{} {:<14} {:>11} {:>12} {:<2} {:<11} {}\n",
            id(ad),
            text(ad, "Owner"),
            date(int(ad, "QDate")),
            run_time(ad, 0),
            status_letter(ad),
            done,
            cmd(ad)
        ));
    }
    out
}
