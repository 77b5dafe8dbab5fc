//! The job event log ("user log") in HTCondor's format, so that
//! HTCondor's own readers (`condor_wait`, `htcondor2.JobEventLog`, DAGMan)
//! follow a Roost job as they follow one of HTCondor's. A starter writes
//! one when the job ad names `StarterUserLog`; `roost schedd` writes the
//! one a submitted job names (`log`, the ad's `UserLog`).
//!
//! Pure: an event and its time stamp (already broken down into local civil
//! time by the caller) become the exact text a record takes, in the
//! classic text form (`001 (001.000.000) 2026-11-22 01:41:13 Job
//! executing on host: …` … `...`) or, with `StarterUserLogUseXML` /
//! `UserLogUseXML`, one `<c>` element per event. The events are those
//! HTCondor's starter writes for a locally fetched job: execute (001),
//! evicted (004), terminated (005), suspended (010), unsuspended (011) and
//! starter error (021); and those its schedd and shadow write for a
//! queued job: submitted (000), terminated and requeued (004), aborted
//! (009), held (012), released (013) and file transfer (040).
//!
//! The XML attributes come in the order HTCondor's ClassAd library keeps
//! them in (its hash order, read from HTCondor itself with
//! `tools/userlog_oracle.py`); `tests/it/userlog.rs` checks that HTCondor's
//! reader reads every record of both forms back to exactly
//! [`attributes`].

use std::fmt::Write;

use crate::classad::{ClassAd, FixedEnv, Value};

/// CPU time a job used, in whole seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// User time.
    pub user: u64,
    /// System time.
    pub system: u64,
}

/// How a job's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It exited with this status.
    Exit(i32),
    /// A signal killed it.
    Signal(i32),
}

/// One record of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// 001: the job's process started on `host`.
    Execute {
        /// The execute host, as HTCondor writes it (`<…>`).
        host: String,
    },
    /// 004: the job was told to leave (vacate, drain, shutdown) and is gone.
    Evicted {
        /// What it used.
        usage: Usage,
    },
    /// 005: the job ended by itself.
    Terminated {
        /// How.
        end: End,
        /// What it used.
        usage: Usage,
    },
    /// 010: the job was stopped.
    Suspended {
        /// How many processes were stopped.
        pids: i64,
    },
    /// 011: the job was continued.
    Unsuspended,
    /// 021: the starter could not run the job.
    StarterError {
        /// The execute host.
        host: String,
        /// Why, one or more lines.
        message: String,
    },
    /// 000: the job entered the queue.
    Submitted {
        /// The submit host, as HTCondor writes it (`<…>`).
        host: String,
    },
    /// 004: the job ended, and its `OnExitRemove` sent it back to the
    /// queue to run again.
    Requeued {
        /// How it ended.
        end: End,
        /// What it used.
        usage: Usage,
    },
    /// 009: the job was removed.
    Aborted {
        /// Why (`RemoveReason`), when known.
        reason: String,
    },
    /// 012: the job was put on hold.
    Held {
        /// `HoldReason`.
        reason: String,
        /// `HoldReasonCode`.
        code: i64,
        /// `HoldReasonSubCode`.
        subcode: i64,
    },
    /// 013: the job was released from hold.
    Released {
        /// `ReleaseReason`, when known.
        reason: String,
    },
    /// 040: a step of the job's file transfer.
    Transfer {
        /// Which.
        stage: Stage,
        /// The other side, when known.
        host: Option<String>,
    },
}

/// A step of a file transfer, numbered as HTCondor's `Type` of event 040.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stage {
    /// The job's input files began to move (2).
    InputStarted,
    /// They all arrived (3).
    InputFinished,
    /// Its output files began to move (5).
    OutputStarted,
    /// They all arrived (6).
    OutputFinished,
}

impl Stage {
    /// Its bit in a set of steps taken.
    pub fn bit(self) -> u8 {
        1 << self.number()
    }

    /// HTCondor's number for it.
    pub fn number(self) -> i64 {
        match self {
            Stage::InputStarted => 2,
            Stage::InputFinished => 3,
            Stage::OutputStarted => 5,
            Stage::OutputFinished => 6,
        }
    }

    /// The first line of its record.
    pub fn text(self) -> &'static str {
        match self {
            Stage::InputStarted => "Started transferring input files",
            Stage::InputFinished => "Finished transferring input files",
            Stage::OutputStarted => "Started transferring output files",
            Stage::OutputFinished => "Finished transferring output files",
        }
    }
}

impl Event {
    /// The event's number in HTCondor's user log.
    pub fn number(&self) -> u32 {
        match self {
            Event::Execute { .. } => 1,
            Event::Evicted { .. } => 4,
            Event::Terminated { .. } => 5,
            Event::Suspended { .. } => 10,
            Event::Unsuspended => 11,
            Event::StarterError { .. } => 21,
            Event::Submitted { .. } => 0,
            Event::Requeued { .. } => 4,
            Event::Aborted { .. } => 9,
            Event::Held { .. } => 12,
            Event::Released { .. } => 13,
            Event::Transfer { .. } => 40,
        }
    }

    /// Its `MyType` in the XML form.
    pub fn my_type(&self) -> &'static str {
        match self {
            Event::Execute { .. } => "ExecuteEvent",
            Event::Evicted { .. } => "JobEvictedEvent",
            Event::Terminated { .. } => "JobTerminatedEvent",
            Event::Suspended { .. } => "JobSuspendedEvent",
            Event::Unsuspended => "JobUnsuspendedEvent",
            Event::StarterError { .. } => "RemoteErrorEvent",
            Event::Submitted { .. } => "SubmitEvent",
            Event::Requeued { .. } => "JobEvictedEvent",
            Event::Aborted { .. } => "JobAbortedEvent",
            Event::Held { .. } => "JobHeldEvent",
            Event::Released { .. } => "JobReleaseEvent",
            Event::Transfer { .. } => "FileTransferEvent",
        }
    }
}

/// When an event happened, in the node's local time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Year, month (1–12), day (1–31).
    pub date: (i32, u32, u32),
    /// Hour, minute, second.
    pub time: (u32, u32, u32),
    /// Milliseconds (shown in the XML form only, and only when not zero).
    pub millis: u32,
}

impl Stamp {
    /// The stamp of a civil (local) date and time.
    pub fn of(t: &jiff::civil::DateTime) -> Stamp {
        let n = |v: i8| u32::try_from(v).unwrap_or(0);
        Stamp {
            date: (i32::from(t.year()), n(t.month()), n(t.day())),
            time: (n(t.hour()), n(t.minute()), n(t.second())),
            millis: u32::try_from(t.subsec_nanosecond() / 1_000_000).unwrap_or(0),
        }
    }
}

/// The job an event is about: `ClusterId`, `ProcId` (subproc is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobId {
    /// `ClusterId`.
    pub cluster: i64,
    /// `ProcId`.
    pub proc: i64,
}

/// A value of an event's attribute (the XML form, and what HTCondor's
/// reader makes of a record).
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// `<i>`.
    Int(i64),
    /// `<r>`.
    Real(f64),
    /// `<s>`.
    Str(String),
    /// `<b v="t|f"/>`.
    Bool(bool),
}

/// The CPU time the usage attributes of a job ad record (`RemoteUserCpu`,
/// `RemoteSysCpu`), whole seconds.
pub fn usage_of(ad: &ClassAd) -> Usage {
    let env = FixedEnv::new(0);
    let secs = |name: &str| match ad.eval_attr(name, &env) {
        Value::Real(r) if r.is_finite() && r > 0.0 => {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let s = r as u64;
            s
        }
        Value::Int(i) => u64::try_from(i).unwrap_or(0),
        _ => 0,
    };
    Usage {
        user: secs("RemoteUserCpu"),
        system: secs("RemoteSysCpu"),
    }
}

/// `Usr D HH:MM:SS, Sys D HH:MM:SS`.
fn rusage(u: Usage) -> String {
    let part = |s: u64| {
        format!(
            "{} {:02}:{:02}:{:02}",
            s / 86_400,
            s % 86_400 / 3600,
            s % 3600 / 60,
            s % 60
        )
    };
    format!("Usr {}, Sys {}", part(u.user), part(u.system))
}

/// The record in the classic text form, `...` line included.
pub fn text(id: JobId, at: Stamp, event: &Event) -> String {
    let mut out = String::with_capacity(256);
    let (y, mo, d) = at.date;
    let (h, mi, s) = at.time;
    let _ = write!(
        out,
        "{:03} ({:03}.{:03}.000) {y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} ",
        event.number(),
        id.cluster,
        id.proc
    );
    match event {
        Event::Execute { host } => {
            let _ = writeln!(out, "Job executing on host: {host}");
        }
        Event::Evicted { usage } => {
            let none = rusage(Usage::default());
            let _ = write!(
                out,
                "Job was evicted.\n\t(0) CPU times\n\t\t{}  -  Run Remote Usage\n\t\t{none}  -  Run Local Usage\n\t0  -  Run Bytes Sent By Job\n\t0  -  Run Bytes Received By Job\n",
                rusage(*usage)
            );
        }
        Event::Terminated { end, usage } => {
            out.push_str("Job terminated.\n");
            termination(*end, &mut out);
            let run = rusage(*usage);
            let none = rusage(Usage::default());
            let _ = write!(
                out,
                "\t\t{run}  -  Run Remote Usage\n\t\t{none}  -  Run Local Usage\n\t\t{run}  -  Total Remote Usage\n\t\t{none}  -  Total Local Usage\n"
            );
            for what in [
                "Run Bytes Sent",
                "Run Bytes Received",
                "Total Bytes Sent",
                "Total Bytes Received",
            ] {
                let _ = writeln!(out, "\t0  -  {what} By Job");
            }
        }
        Event::Suspended { pids } => {
            let _ = writeln!(
                out,
                "Job was suspended.\n\tNumber of processes actually suspended: {pids}"
            );
        }
        Event::Unsuspended => out.push_str("Job was unsuspended.\n"),
        Event::StarterError { host, message } => {
            let _ = writeln!(out, "Error from starter on {host}:");
            for line in message.lines() {
                let _ = writeln!(out, "\t{line}");
            }
        }
        Event::Submitted { host } => {
            let _ = writeln!(out, "Job submitted from host: {host}");
        }
        Event::Requeued { end, usage } => {
            let _ = write!(
                out,
                "Job was evicted.\n\t(0) Job terminated and was requeued\n\t\t{}  -  Run Remote Usage\n\t\t{}  -  Run Local Usage\n\t0  -  Run Bytes Sent By Job\n\t0  -  Run Bytes Received By Job\n",
                rusage(*usage),
                rusage(Usage::default())
            );
            termination(*end, &mut out);
        }
        Event::Aborted { reason } => {
            out.push_str("Job was aborted.\n");
            reason_line(reason, &mut out);
        }
        Event::Held {
            reason,
            code,
            subcode,
        } => {
            out.push_str("Job was held.\n");
            reason_line(one_line(reason, "Reason unspecified"), &mut out);
            let _ = writeln!(out, "\tCode {code} Subcode {subcode}");
        }
        Event::Released { reason } => {
            out.push_str("Job was released.\n");
            reason_line(reason, &mut out);
        }
        Event::Transfer { stage, host } => {
            let _ = writeln!(out, "{}", stage.text());
            if let Some(host) = host {
                let _ = writeln!(out, "\tTransferring to host: {host}");
            }
        }
    }
    out.push_str("...\n");
    out
}

/// `(1) Normal termination …` or `(0) Abnormal termination …` lines.
fn termination(end: End, out: &mut String) {
    match end {
        End::Exit(c) => {
            let _ = writeln!(out, "\t(1) Normal termination (return value {c})");
        }
        End::Signal(sig) => {
            let _ = writeln!(out, "\t(0) Abnormal termination (signal {sig})");
            out.push_str("\t(0) No core file\n");
        }
    }
}

/// A reason kept to one line (a record's lines are its structure; HTCondor's
/// reader takes the first line of a reason only), or `default` when empty.
fn one_line<'a>(reason: &'a str, default: &'a str) -> &'a str {
    let first = reason.lines().next().unwrap_or_default().trim();
    if first.is_empty() { default } else { first }
}

/// A tab-indented reason line, when there is a reason.
fn reason_line(reason: &str, out: &mut String) {
    let line = one_line(reason, "");
    if !line.is_empty() {
        let _ = writeln!(out, "\t{line}");
    }
}

/// The attribute names of each kind of record, in HTCondor's order.
fn order(event: &Event) -> &'static [&'static str] {
    match event {
        Event::Execute { .. } => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "ExecuteHost",
            "EventTypeNumber",
        ],
        Event::Evicted { .. } => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "SentBytes",
            "Checkpointed",
            "ReceivedBytes",
            "RunLocalUsage",
            "RunRemoteUsage",
            "EventTypeNumber",
            "TerminatedNormally",
            "TerminatedAndRequeued",
        ],
        Event::Terminated { .. } => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "SentBytes",
            "ReturnValue",
            "ReceivedBytes",
            "RunLocalUsage",
            "RunRemoteUsage",
            "TotalSentBytes",
            "EventTypeNumber",
            "TotalLocalUsage",
            "TotalRemoteUsage",
            "TerminatedBySignal",
            "TerminatedNormally",
            "TotalReceivedBytes",
        ],
        Event::Suspended { .. } => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "NumberOfPIDs",
            "EventTypeNumber",
        ],
        Event::Unsuspended => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "EventTypeNumber",
        ],
        Event::StarterError { .. } => &[
            "Proc",
            "Daemon",
            "MyType",
            "Cluster",
            "Subproc",
            "ErrorMsg",
            "EventTime",
            "ExecuteHost",
            "EventTypeNumber",
        ],
        _ => access_point_order(event),
    }
}

/// [`order`] of the access point's records.
fn access_point_order(event: &Event) -> &'static [&'static str] {
    match event {
        Event::Submitted { .. } => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "SubmitHost",
            "EventTypeNumber",
        ],
        Event::Requeued { .. } => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "SentBytes",
            "ReturnValue",
            "Checkpointed",
            "ReceivedBytes",
            "RunLocalUsage",
            "RunRemoteUsage",
            "EventTypeNumber",
            "TerminatedBySignal",
            "TerminatedNormally",
            "TerminatedAndRequeued",
        ],
        Event::Aborted { .. } | Event::Released { .. } => &[
            "Proc",
            "MyType",
            "Reason",
            "Cluster",
            "Subproc",
            "EventTime",
            "EventTypeNumber",
        ],
        Event::Held { .. } => &[
            "Proc",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "HoldReason",
            "HoldReasonCode",
            "EventTypeNumber",
            "HoldReasonSubCode",
        ],
        Event::Transfer { .. } => &[
            "Host",
            "Proc",
            "Type",
            "MyType",
            "Cluster",
            "Subproc",
            "EventTime",
            "EventTypeNumber",
        ],
        _ => &[],
    }
}

/// The record as attributes, in HTCondor's order: what the XML form holds
/// and what HTCondor's reader makes of either form.
pub fn attributes(id: JobId, at: Stamp, event: &Event) -> Vec<(&'static str, AttrValue)> {
    use AttrValue::{Bool, Int, Real, Str};
    let (y, mo, d) = at.date;
    let (h, mi, s) = at.time;
    let mut time = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}");
    if at.millis != 0 {
        let _ = write!(time, ".{:03}", at.millis);
    }
    let none = rusage(Usage::default());
    let value = |name: &str| -> Option<AttrValue> {
        Some(match name {
            "Proc" => Int(id.proc),
            "Cluster" => Int(id.cluster),
            "Subproc" => Int(0),
            "MyType" => Str(event.my_type().into()),
            "EventTime" => Str(time.clone()),
            "EventTypeNumber" => Int(i64::from(event.number())),
            "SentBytes" | "ReceivedBytes" | "TotalSentBytes" | "TotalReceivedBytes" => Real(0.0),
            "RunLocalUsage" | "TotalLocalUsage" => Str(none.clone()),
            "Daemon" => Str("starter".into()),
            _ => match (name, event) {
                ("ExecuteHost", Event::Execute { host } | Event::StarterError { host, .. }) => {
                    Str(host.clone())
                }
                ("ErrorMsg", Event::StarterError { message, .. }) => {
                    Str(message.lines().collect::<Vec<_>>().join("\n"))
                }
                ("NumberOfPIDs", Event::Suspended { pids }) => Int(*pids),
                ("SubmitHost", Event::Submitted { host }) => Str(host.clone()),
                ("Reason", Event::Aborted { reason } | Event::Released { reason }) => {
                    match one_line(reason, "") {
                        "" => return None,
                        line => Str(line.into()),
                    }
                }
                ("HoldReason", Event::Held { reason, .. }) => match one_line(reason, "") {
                    "" => return None,
                    line => Str(line.into()),
                },
                ("HoldReasonCode", Event::Held { code, .. }) => Int(*code),
                ("HoldReasonSubCode", Event::Held { subcode, .. }) => Int(*subcode),
                ("Type", Event::Transfer { stage, .. }) => Int(stage.number()),
                ("Host", Event::Transfer { host, .. }) => Str(host.clone()?),
                ("Checkpointed" | "TerminatedAndRequeued", Event::Requeued { .. }) => {
                    Bool(name == "TerminatedAndRequeued")
                }
                ("RunRemoteUsage", Event::Requeued { usage, .. }) => Str(rusage(*usage)),
                (
                    "Checkpointed" | "TerminatedAndRequeued" | "TerminatedNormally",
                    Event::Evicted { .. },
                ) => Bool(false),
                ("RunRemoteUsage", Event::Evicted { usage })
                | ("RunRemoteUsage" | "TotalRemoteUsage", Event::Terminated { usage, .. }) => {
                    Str(rusage(*usage))
                }
                (
                    "TerminatedNormally",
                    Event::Terminated { end, .. } | Event::Requeued { end, .. },
                ) => Bool(matches!(end, End::Exit(_))),
                (
                    "ReturnValue",
                    Event::Terminated {
                        end: End::Exit(c), ..
                    }
                    | Event::Requeued {
                        end: End::Exit(c), ..
                    },
                ) => Int(i64::from(*c)),
                (
                    "TerminatedBySignal",
                    Event::Terminated {
                        end: End::Signal(s),
                        ..
                    }
                    | Event::Requeued {
                        end: End::Signal(s),
                        ..
                    },
                ) => Int(i64::from(*s)),
                _ => return None,
            },
        })
    };
    order(event)
        .iter()
        .filter_map(|n| value(n).map(|v| (*n, v)))
        .collect()
}

/// Escapes markup in text, as HTCondor's XML writer does (its reader
/// decodes `&amp;`, `&lt;` and `&gt;` only; quotes stay as they are).
fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// The record in the XML form: one `<c>` element.
pub fn xml(id: JobId, at: Stamp, event: &Event) -> String {
    let mut out = String::with_capacity(512);
    out.push_str("<c>\n");
    for (name, v) in attributes(id, at, event) {
        let _ = write!(out, "    <a n=\"{name}\">");
        match v {
            AttrValue::Int(i) => {
                let _ = write!(out, "<i>{i}</i>");
            }
            AttrValue::Real(0.0) => out.push_str("<r>0.0</r>"),
            AttrValue::Real(r) => {
                let _ = write!(out, "<r>{r:.15E}</r>");
            }
            AttrValue::Str(s) => {
                out.push_str("<s>");
                escape(&s, &mut out);
                out.push_str("</s>");
            }
            AttrValue::Bool(b) => {
                let _ = write!(out, "<b v=\"{}\"/>", if b { "t" } else { "f" });
            }
        }
        out.push_str("</a>\n");
    }
    out.push_str("</c>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: JobId = JobId {
        cluster: 1,
        proc: 0,
    };

    fn at(h: u32, mi: u32, s: u32, millis: u32) -> Stamp {
        Stamp {
            date: (2026, 11, 22),
            time: (h, mi, s),
            millis,
        }
    }

    #[test]
    fn rusage_counts_days_hours_minutes_seconds() {
        let u = Usage {
            user: 86_400 + 3600 * 2 + 60 * 3 + 4,
            system: 59,
        };
        assert_eq!(rusage(u), "Usr 1 02:03:04, Sys 0 00:00:59");
    }

    #[test]
    fn a_multi_line_error_is_indented_line_by_line() {
        let e = Event::StarterError {
            host: "<h>".into(),
            message: "one\ntwo".into(),
        };
        let t = text(ID, at(1, 2, 3, 0), &e);
        assert!(t.ends_with(":\n\tone\n\ttwo\n...\n"), "{t}");
    }

    #[test]
    fn milliseconds_show_in_xml_only_when_not_zero() {
        let e = Event::Unsuspended;
        assert!(xml(ID, at(1, 2, 3, 45), &e).contains("2026-11-22T01:02:03.045<"));
        assert!(xml(ID, at(1, 2, 3, 0), &e).contains("2026-11-22T01:02:03<"));
        assert!(
            text(ID, at(1, 2, 3, 45), &e).starts_with("011 (001.000.000) 2026-11-22 01:02:03 ")
        );
    }
}
