//! The job event log a starter writes when the job ad names
//! `StarterUserLog`: HTCondor's user log format, so that HTCondor's own
//! readers (`condor_wait`, `htcondor2.JobEventLog`, DAGMan) follow a Roost
//! job as they follow one of HTCondor's.
//!
//! Pure: an event and its time stamp (already broken down into local civil
//! time by the caller) become the exact text a record takes, in the
//! classic text form (`001 (001.000.000) 2026-11-22 01:41:13 Job
//! executing on host: …` … `...`) or, with `StarterUserLogUseXML`, one
//! `<c>` element per event. The events are those HTCondor's starter writes
//! for a locally fetched job: execute (001), evicted (004), terminated
//! (005), suspended (010), unsuspended (011) and starter error (021).
//!
//! The XML attributes come in the order HTCondor's ClassAd library keeps
//! them in (its hash order, read from HTCondor itself with
//! `tools/userlog_oracle.py`); `tests/it/userlog.rs` checks that HTCondor's
//! reader reads every record of both forms back to exactly
//! [`attributes`].

use std::fmt::Write;

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
            match end {
                End::Exit(c) => {
                    let _ = writeln!(out, "\t(1) Normal termination (return value {c})");
                }
                End::Signal(sig) => {
                    let _ = writeln!(out, "\t(0) Abnormal termination (signal {sig})");
                    out.push_str("\t(0) No core file\n");
                }
            }
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
    }
    out.push_str("...\n");
    out
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
                (
                    "Checkpointed" | "TerminatedAndRequeued" | "TerminatedNormally",
                    Event::Evicted { .. },
                ) => Bool(false),
                ("RunRemoteUsage", Event::Evicted { usage })
                | ("RunRemoteUsage" | "TotalRemoteUsage", Event::Terminated { usage, .. }) => {
                    Str(rusage(*usage))
                }
                ("TerminatedNormally", Event::Terminated { end, .. }) => {
                    Bool(matches!(end, End::Exit(_)))
                }
                (
                    "ReturnValue",
                    Event::Terminated {
                        end: End::Exit(c), ..
                    },
                ) => Int(i64::from(*c)),
                (
                    "TerminatedBySignal",
                    Event::Terminated {
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
