//! The ads a routed job is made of: the routed copy's start from its
//! source (HTCondor's `VanillaToGrid`), what the source mirrors from its
//! copy (`update_job_status`), and the ads hooks print.

use super::Logged;
use crate::classad::old::parse_line;
use crate::classad::unparse::{OldOrder, ad_to_old, expr_to_string};
use crate::classad::{ClassAd, Env, Expr, Limits, ParseError, Value};
use crate::schedd::event::{JobEvent, JobId, Status};
use crate::schedd::queue::{Job, int_of, str_of};

/// A hook's output line that is not `Name = expression`.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: '{text}' is not 'Name = expression': {source}")]
pub struct HookOutputError {
    /// Its number, from 1.
    pub line: usize,
    /// The line.
    pub text: String,
    /// Why it does not parse.
    pub source: ParseError,
}

/// Attributes of the routed copy the source job mirrors (HTCondor's
/// list), besides `JobStatus`.
const MIRRORED: [&str; 36] = [
    "BytesSent",
    "BytesRecvd",
    "CompletionDate",
    "JobRunCount",
    "JobStartDate",
    "ExitBySignal",
    "ExitSignal",
    "ExitCode",
    "ExitReason",
    "JobCurrentStartDate",
    "JobCurrentStartExecutingDate",
    "JobLastStartDate",
    "ShadowBday",
    "RemoteSysCpu",
    "RemoteUserCpu",
    "NumCkpts",
    "NumJobStarts",
    "NumJobReconnects",
    "NumShadowExceptions",
    "NumShadowStarts",
    "NumJobMatches",
    "NumRestarts",
    "RemoteWallClockTime",
    "LastRemoteWallClockTime",
    "JobCoreDumped",
    "ImageSize",
    "MemoryUsage",
    "ResidentSetSize",
    "ProportionalSetSize",
    "DiskUsage",
    "ScratchDirFileCount",
    "SpooledOutputFiles",
    "CpusUsage",
    "CpusProvisioned",
    "DiskProvisioned",
    "MemoryProvisioned",
];

/// Attributes a routed copy does not take from its source (HTCondor's
/// `VanillaToGrid`), and this queue's own bookkeeping.
const NOT_COPIED: [&str; 30] = [
    "ClusterId",
    "ProcId",
    "BufferBlockSize",
    "BufferSize",
    "CondorPlatform",
    "CondorVersion",
    "CoreSize",
    "GlobalJobId",
    "User",
    "QDate",
    "RemoteWallClockTime",
    "LastRemoteWallClockTime",
    "ServerTime",
    "AutoClusterId",
    "AutoClusterAttrs",
    "TotalSubmitProcs",
    "StageInFinish",
    "StageInStart",
    "UserLog",
    "UserLogUseXML",
    "DAGManNodesLog",
    "DAGManNodesMask",
    "TimerRemove",
    "SUBMIT_Iwd",
    "Managed",
    "ManagedManager",
    "RoutedToJobId",
    crate::schedd::queue::LEASE_ATTR,
    crate::schedd::queue::START_FAILURES,
    "CurrentHosts",
];

/// The routed copy's start, from its source (HTCondor's `VanillaToGrid`).
pub(super) fn vanilla_to_grid(ad: &mut ClassAd, universe: i64, grid_resource: Option<&str>) {
    for a in NOT_COPIED {
        if a != "CurrentHosts" || universe == crate::schedd::route::GRID_UNIVERSE {
            ad.remove(a);
        }
    }
    ad.insert_value("JobStatus", Status::Idle as i64);
    for a in ["RemoteUserCpu", "RemoteSysCpu"] {
        ad.insert_value(a, 0.0);
    }
    for a in [
        "ExitStatus",
        "CompletionDate",
        "NumCkpts",
        "NumRestarts",
        "NumSystemHolds",
        "CommittedTime",
        "CommittedSlotTime",
        "CumulativeSlotTime",
        "TotalSuspensions",
        "LastSuspensionTime",
        "CumulativeSuspensionTime",
        "CommittedSuspensionTime",
    ] {
        ad.insert_value(a, 0i64);
    }
    ad.insert_value("ExitBySignal", false);
    if let Some(u) = ad.lookup("JobUniverse").cloned() {
        ad.insert("Remote_JobUniverse", u);
    }
    ad.insert_value("JobUniverse", universe);
    if universe == crate::schedd::route::GRID_UNIVERSE
        && let Some(g) = grid_resource
    {
        ad.insert_value("GridResource", g);
    }
}

/// A hook's output as an ad: `Name = expr` lines (blank lines skipped);
/// the first line that is not one is an error naming it.
pub(super) fn hook_ad(stdout: &[u8]) -> Result<ClassAd, HookOutputError> {
    let mut ad = ClassAd::new();
    for (i, line) in stdout.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let (name, e) =
            parse_line(line, n, &Limits::default()).map_err(|source| HookOutputError {
                line: i + 1,
                text: String::from_utf8_lossy(line).into_owned(),
                source,
            })?;
        ad.insert(name, e);
    }
    Ok(ad)
}

pub(super) fn old(ad: &ClassAd) -> String {
    ad_to_old(ad, OldOrder::Bytes)
}

pub(super) fn updated(at: i64, id: JobId, attrs: Vec<(String, String)>) -> Option<Logged> {
    (!attrs.is_empty()).then_some(Logged::Job(JobEvent::Updated { at, id, attrs }))
}

pub(super) fn set(name: &str, v: impl Into<Value>) -> (String, String) {
    (
        name.to_string(),
        expr_to_string(&Expr::from_value(v.into())),
    )
}

pub(super) fn idle(job: &Job, now: i64) -> Vec<(String, String)> {
    let mut v = vec![
        set("JobStatus", Status::Idle as i64),
        set("EnteredCurrentStatus", now),
    ];
    if let Some(s) = int_of(&job.ad, "JobStatus") {
        v.push(set("LastJobStatus", s));
    }
    v
}

pub(super) fn copy_changed(
    src: &ClassAd,
    dest: &ClassAd,
    name: &str,
    out: &mut Vec<(String, String)>,
) {
    if let Some(d) = dest.lookup(name) {
        let text = expr_to_string(d);
        if src.lookup(name).map(expr_to_string).as_deref() != Some(text.as_str()) {
            out.push((name.to_string(), text));
        }
    }
}

/// The source job's updates from its routed copy (HTCondor's
/// `update_job_status`): its status as the copy's (a hold copied with its
/// reason, a removal never), then the copied attributes that changed.
pub(super) fn mirror(
    src: &ClassAd,
    dest: &ClassAd,
    env: &dyn Env,
    now: i64,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let src_status = int_of(src, "JobStatus").unwrap_or(0);
    let dest_status = int_of(dest, "JobStatus").unwrap_or(0);
    let copied = matches!(
        src.eval_attr("HoldCopiedFromTargetJob", env),
        Value::Bool(true)
    );
    if src_status != Status::Held as i64 && copied {
        out.push(set("HoldCopiedFromTargetJob", false));
    }
    let simple = |to: i64, out: &mut Vec<(String, String)>| {
        if (src_status == Status::Held as i64 && !copied)
            || src_status == to
            || src_status == Status::Removed as i64
        {
            return;
        }
        out.push(set("LastJobStatus", src_status));
        out.push(set("JobStatus", to));
        out.push(set("EnteredCurrentStatus", now));
        if copied {
            out.push(set("HoldCopiedFromTargetJob", false));
        }
    };
    if src_status != dest_status {
        match Status::from_code(dest_status) {
            Some(Status::Idle) => simple(Status::Idle as i64, &mut out),
            Some(Status::Running | Status::TransferringOutput) => {
                simple(Status::Running as i64, &mut out);
            }
            Some(Status::Held) => {
                if !matches!(src_status, 3..=5) {
                    out.push(set("LastJobStatus", src_status));
                    out.push(set("JobStatus", Status::Held as i64));
                    out.push(set("EnteredCurrentStatus", now));
                    let reason = str_of(dest, "HoldReason").unwrap_or("Unknown reason".into());
                    out.push(set("HoldReason", reason.as_str()));
                    for a in ["HoldReasonCode", "HoldReasonSubCode"] {
                        out.push(set(a, int_of(dest, a).unwrap_or(0)));
                    }
                    out.push(set("HoldCopiedFromTargetJob", true));
                    let holds = int_of(src, "NumSystemHolds").unwrap_or(0);
                    out.push(set("NumSystemHolds", holds + 1));
                }
            }
            Some(Status::Removed) | None => {}
            Some(s) => {
                out.push(set("LastJobStatus", src_status));
                out.push(set("JobStatus", s as i64));
            }
        }
    }
    for a in MIRRORED {
        copy_changed(src, dest, a, &mut out);
    }
    out
}
