//! Submit descriptions as `condor_submit` reads them, into job ads:
//! `name = value` commands and macros (`$(name)`, `$(name:default)`, the
//! built-in `$(Cluster)`, `$(Process)`, `$(Item)`, `$(ItemIndex)`,
//! `$(Step)`, `$(Row)`), `+Attr` / `MY.Attr` attributes, comment lines,
//! `\` continuations, and `queue` statements (`queue`, `queue N`,
//! `queue [N] [vars] in (…)`, `from (…)` or `from FILE`,
//! `matching [files|dirs] GLOB…`), each job ad with HTCondor's attributes
//! and defaults. A command Roost does not carry out (file transfer, other
//! universes, schedd policy expressions) is refused naming its line, as
//! is anything that does not read. Checked against HTCondor's own submit
//! code (`tools/submit_oracle.py`, `tests/fixtures/submit`). Pure.

use std::collections::BTreeMap;

use super::lines::{logical_lines, parse_queue, queue_rest};
use crate::classad::argenv::{EnvList, join_v2, split_v2};
use crate::classad::{ClassAd, Value, parse_expr};

/// Files a description refers to, read for it.
pub trait SubmitFiles {
    /// The text of `path` (relative to the submit directory), if readable.
    fn read(&self, path: &str) -> Option<String>;
    /// The names matching `pattern` in the submit directory (files, or
    /// directories when `dirs`), sorted.
    fn glob(&self, pattern: &str, dirs: bool) -> Vec<String>;
    /// Whether `path` (absolute) is a directory.
    fn is_dir(&self, path: &str) -> bool;
    /// The bytes of `path` (absolute; a directory's files counted whole),
    /// if it exists.
    fn size(&self, path: &str) -> Option<u64>;
}

/// Where and for whom a description is submitted.
pub struct Submission<'a> {
    /// The description.
    pub text: &'a str,
    /// The cluster its jobs get.
    pub cluster: i64,
    /// The submit time.
    pub qdate: i64,
    /// The submitter (`Owner`).
    pub owner: &'a str,
    /// The submit directory (absolute): the default `Iwd`.
    pub cwd: &'a str,
    /// The submit machine's `FileSystemDomain`.
    pub domain: &'a str,
    /// The submit machine's `Arch` and `OpSys` (`X86_64`, `LINUX`).
    pub platform: (&'a str, &'a str),
    /// The files it may name.
    pub files: &'a dyn SubmitFiles,
    /// The submitter's environment (`getenv` takes from it).
    pub environ: &'a [(String, String)],
}

/// A description that cannot be submitted: the line and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SubmitError {
    /// The line (from 1; 0 for the description as a whole).
    pub line: usize,
    /// Why.
    pub message: String,
}

pub(super) fn err(line: usize, message: impl Into<String>) -> SubmitError {
    SubmitError {
        line,
        message: message.into(),
    }
}

/// Commands HTCondor has that Roost does not carry out: refused, not
/// silently ignored.
const UNSUPPORTED: &[&str] = &[
    "docker_image",
    "container_image",
    "vm_type",
    "x509userproxy",
    "checkpoint_exit_code",
    "cron_minute",
    "cron_hour",
    "cron_day_of_month",
    "cron_month",
    "cron_day_of_week",
    "cron_window",
    "cron_prep_time",
];

/// One `name = value` of the description, and its line.
#[derive(Clone, Debug)]
struct Command {
    line: usize,
    value: String,
}

/// The commands so far, by name in lower case; custom attributes by name
/// as written.
#[derive(Clone, Debug, Default)]
struct State {
    commands: BTreeMap<String, Command>,
    attrs: Vec<(String, Command)>,
}

/// The job ads of a description, in order.
pub fn jobs(s: &Submission<'_>) -> Result<Vec<ClassAd>, SubmitError> {
    let lines = logical_lines(s.text)?;
    let mut state = State::default();
    let mut out = Vec::new();
    let mut queued = false;
    for (line, text) in lines {
        if let Some(rest) = queue_rest(&text) {
            let q = parse_queue(rest, line, s.files)?;
            queued = true;
            for (item_index, row) in q
                .rows
                .clone()
                .unwrap_or_else(|| vec![Vec::new()])
                .iter()
                .enumerate()
            {
                for step in 0..q.count {
                    let proc_id = i64::try_from(out.len()).unwrap_or(i64::MAX);
                    let mut vars: BTreeMap<String, String> = BTreeMap::new();
                    for (v, value) in q.vars.iter().zip(row) {
                        vars.insert(v.to_ascii_lowercase(), value.clone());
                    }
                    for (k, v) in [
                        ("cluster", s.cluster),
                        ("clusterid", s.cluster),
                        ("process", proc_id),
                        ("procid", proc_id),
                        ("step", step),
                        ("itemindex", i64::try_from(item_index).unwrap_or(0)),
                        ("row", i64::try_from(item_index).unwrap_or(0)),
                    ] {
                        vars.insert(k.into(), v.to_string());
                    }
                    out.push(job_ad(s, &state, &vars, proc_id)?);
                }
            }
            continue;
        }
        let Some((name, value)) = text.split_once('=') else {
            return Err(err(
                line,
                format!("cannot read \"{}\": not name = value", text.trim()),
            ));
        };
        let name = name.trim();
        let value = value.trim().to_string();
        let cmd = Command { line, value };
        if let Some(attr) = name.strip_prefix('+').or_else(|| strip_my(name)) {
            if attr.is_empty() {
                return Err(err(line, "an attribute with no name"));
            }
            state.attrs.retain(|(a, _)| !a.eq_ignore_ascii_case(attr));
            state.attrs.push((attr.to_string(), cmd));
            continue;
        }
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(err(line, format!("\"{name}\" is not a command name")));
        }
        let lower = name.to_ascii_lowercase();
        if UNSUPPORTED.contains(&lower.as_str()) {
            return Err(err(
                line,
                format!("{name}: Roost does not support this command"),
            ));
        }
        state.commands.insert(lower, cmd);
    }
    if !queued {
        return Err(err(0, "no queue statement: nothing to submit"));
    }
    Ok(out)
}

fn strip_my(name: &str) -> Option<&str> {
    (name.len() > 3 && name[..3].eq_ignore_ascii_case("MY.")).then(|| &name[3..])
}

/// `$(name)` and `$(name:default)` of `text` from `vars` (undefined: the
/// default, else empty); `$$(…)` is left for match time.
fn expand(
    text: &str,
    vars: &dyn Fn(&str) -> Option<String>,
    line: usize,
) -> Result<String, SubmitError> {
    expand_in(text, vars, line, 0)
}

fn expand_in(
    text: &str,
    vars: &dyn Fn(&str) -> Option<String>,
    line: usize,
    depth: usize,
) -> Result<String, SubmitError> {
    if depth > 32 {
        return Err(err(
            line,
            format!("macros in \"{text}\" refer to each other without end"),
        ));
    }
    if let Some(f) = macro_function(text) {
        return Err(err(
            line,
            format!(
                "${f}() in \"{text}\": Roost does not expand macro functions in submit descriptions"
            ),
        ));
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("$(") {
        if rest[..i].ends_with('$') {
            let end = rest[i..].find(')').map_or(rest.len(), |e| i + e + 1);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(close) = after.find(')') else {
            return Err(err(line, format!("unclosed $( in \"{text}\"")));
        };
        let inner = &after[..close];
        let (name, default) = match inner.split_once(':') {
            Some((n, d)) => (n.trim(), Some(d)),
            None => (inner.trim(), None),
        };
        let value = vars(name)
            .or_else(|| default.map(str::to_string))
            .unwrap_or_default();
        out.push_str(&expand_in(&value, vars, line, depth + 1)?);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The name of a `$NAME(…)` macro function in `text`, if one is there.
fn macro_function(text: &str) -> Option<&str> {
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        let after = &rest[i + 1..];
        let n = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        if n > 0 && after[n..].starts_with('(') && !rest[..i].ends_with('$') {
            return Some(&after[..n]);
        }
        rest = after;
    }
    None
}

/// Memory (MiB) or disk (KiB) with an optional unit (`K`, `M`, `G`, `T`,
/// with or without `B`); `None`: not a number with a unit (an expression).
#[allow(clippy::cast_possible_truncation)]
fn quantity(text: &str, unit_kib: f64) -> Option<i64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let kib = match unit.trim().to_ascii_uppercase().trim_end_matches('B') {
        "" => return Some(n.ceil() as i64),
        "K" => n,
        "M" => n * 1024.0,
        "G" => n * 1024.0 * 1024.0,
        "T" => n * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some((kib / unit_kib).ceil() as i64)
}

fn job_ad(
    s: &Submission<'_>,
    state: &State,
    loop_vars: &BTreeMap<String, String>,
    proc_id: i64,
) -> Result<ClassAd, SubmitError> {
    let lookup = |name: &str| -> Option<String> {
        let lower = name.to_ascii_lowercase();
        loop_vars
            .get(&lower)
            .cloned()
            .or_else(|| state.commands.get(&lower).map(|c| c.value.clone()))
    };
    let get = |name: &str| -> Result<Option<(usize, String)>, SubmitError> {
        match state.commands.get(name) {
            None => Ok(None),
            Some(c) => Ok(Some((c.line, expand(&c.value, &lookup, c.line)?))),
        }
    };
    let mut ad = ClassAd::new();
    let set_expr =
        |ad: &mut ClassAd, attr: &str, text: &str, line: usize| -> Result<(), SubmitError> {
            let e = parse_expr(text)
                .map_err(|e| err(line, format!("{attr} = {text}: not an expression ({e})")))?;
            ad.insert(attr, e);
            Ok(())
        };
    let universe = get("universe")?;
    if let Some((line, u)) = &universe
        && !u.eq_ignore_ascii_case("vanilla")
    {
        return Err(err(
            *line,
            format!("universe {u}: Roost runs vanilla jobs only"),
        ));
    }
    program(s, &get, &mut ad)?;
    requests(s, state, &get, &mut ad, &set_expr)?;
    match get("rank")? {
        Some((line, r)) => set_expr(&mut ad, "Rank", &r, line)?,
        None => ad.insert_value("Rank", 0.0),
    }
    fixed(&mut ad, s, proc_id);
    job_policy(&get, &mut ad, &set_expr)?;
    super::submit_more::set(&get, s.owner, &mut ad)?;
    let iwd = super::queue::str_of(&ad, "Iwd").unwrap_or_default();
    super::submit_transfer::set(&get, s.files, &iwd, &mut ad)?;
    let (status, hold) = match get("hold")? {
        Some((_, h)) if h.eq_ignore_ascii_case("true") || h == "1" => (5, true),
        _ => (1, false),
    };
    ad.insert_value("JobStatus", status);
    if hold {
        ad.insert_value("HoldReason", "submitted on hold at user's request");
        ad.insert_value("HoldReasonCode", 15);
    }
    ad.insert_value("JobPrio", int_of(get("priority")?, 0)?);
    let notification = match get("notification")? {
        None => 0,
        Some((line, n)) => match n.to_ascii_lowercase().as_str() {
            "never" => 0,
            "always" => 1,
            "complete" => 2,
            "error" => 3,
            _ => {
                return Err(err(
                    line,
                    format!("notification {n}: never, always, complete or error"),
                ));
            }
        },
    };
    ad.insert_value("JobNotification", notification);
    if let Some(v) = get("job_max_vacate_time")? {
        ad.insert_value("JobMaxVacateTime", int_of(Some(v), 0)?);
    }
    let leave = get("leave_in_queue")?;
    match leave {
        Some((line, l)) => set_expr(&mut ad, "LeaveJobInQueue", &l, line)?,
        None => ad.insert_value("LeaveJobInQueue", false),
    }
    for (attr, cmd) in &state.attrs {
        let text = expand(&cmd.value, &lookup, cmd.line)?;
        set_expr(&mut ad, attr, &text, cmd.line)?;
    }
    Ok(ad)
}

/// `Cmd`, its arguments and environment, its files (`In`, `Out`, `Err`,
/// `UserLog`) and `Iwd`.
fn program(s: &Submission<'_>, get: &Get<'_>, ad: &mut ClassAd) -> Result<(), SubmitError> {
    let Some((_, cmd)) = get("executable")? else {
        return Err(err(0, "No 'executable' parameter was provided"));
    };
    ad.insert_value("Cmd", cmd.as_str());
    match get("arguments")? {
        Some((line, a)) if a.starts_with('"') => {
            let inner = a
                .strip_prefix('"')
                .and_then(|a| a.strip_suffix('"'))
                .ok_or_else(|| {
                    err(
                        line,
                        format!("arguments {a}: a quoted argument list must end with '\"'"),
                    )
                })?;
            let items = split_v2(&inner.replace("\"\"", "\""))
                .map_err(|e| err(line, format!("arguments {a}: {e}")))?;
            ad.insert_value("Arguments", join_v2(&items).as_str());
        }
        Some((line, a)) if a.contains('"') => {
            return Err(err(
                line,
                format!("Found illegal unescaped double-quote: {a}"),
            ));
        }
        Some((_, a)) if !a.is_empty() => ad.insert_value("Args", a.as_str()),
        _ => ad.insert_value("Arguments", ""),
    }
    let mut env = EnvList::new();
    if let Some((_, g)) = get("getenv")? {
        for (n, v) in getenv(&g, s.environ) {
            env.set(n, v);
        }
    }
    if let Some((line, e)) = get("environment")? {
        let r = match e.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
            Some(v2) => env.merge_v2(v2),
            None => env.merge_v1(&e),
        };
        r.map_err(|why| err(line, format!("environment {e}: {why}")))?;
    }
    ad.insert_value("Environment", env.to_v2().as_str());
    for (attr, cmd) in [("In", "input"), ("Out", "output"), ("Err", "error")] {
        let v = get(cmd)?.map_or_else(|| "/dev/null".to_string(), |(_, v)| v);
        // HTCondor's file-transfer flags: a /dev/null is not transferred,
        // a file is not streamed.
        let flag = if v == "/dev/null" {
            "Transfer"
        } else {
            "Stream"
        };
        ad.insert_value(format!("{flag}{attr}").as_str(), false);
        ad.insert_value(attr, v.as_str());
    }
    let iwd = match get("initialdir")? {
        Some((line, d)) => {
            let abs = if d.starts_with('/') {
                d
            } else {
                format!("{}/{d}", s.cwd.trim_end_matches('/'))
            };
            if !s.files.is_dir(&abs) {
                return Err(err(line, format!("No such directory: {abs}")));
            }
            abs
        }
        None => s.cwd.to_string(),
    };
    if let Some((_, log)) = get("log")? {
        let abs = if log.starts_with('/') {
            log
        } else {
            format!("{}/{log}", iwd.trim_end_matches('/'))
        };
        ad.insert_value("UserLog", abs.as_str());
    }
    ad.insert_value("Iwd", iwd.as_str());
    Ok(())
}

fn int_of(v: Option<(usize, String)>, default: i64) -> Result<i64, SubmitError> {
    match v {
        None => Ok(default),
        Some((line, t)) => t
            .trim()
            .parse()
            .map_err(|_| err(line, format!("\"{t}\" is not an integer"))),
    }
}

pub(super) type Get<'a> = dyn Fn(&str) -> Result<Option<(usize, String)>, SubmitError> + 'a;
type SetExpr<'a> = dyn Fn(&mut ClassAd, &str, &str, usize) -> Result<(), SubmitError> + 'a;

/// `RequestCpus`, `RequestMemory`, `RequestDisk`, each `Request<Name>` of a
/// `request_<name>`, and `Requirements` with HTCondor's clauses.
fn requests(
    s: &Submission<'_>,
    state: &State,
    get: &Get<'_>,
    ad: &mut ClassAd,
    set_expr: &SetExpr<'_>,
) -> Result<(), SubmitError> {
    let cpus = get("request_cpus")?;
    match &cpus {
        Some((line, c)) => set_expr(ad, "RequestCpus", c, *line)?,
        None => ad.insert_value("RequestCpus", 1),
    }
    match get("request_memory")? {
        Some((line, m)) => match quantity(&m, 1024.0) {
            Some(mb) => ad.insert_value("RequestMemory", mb),
            None => set_expr(ad, "RequestMemory", &m, line)?,
        },
        None => set_expr(
            ad,
            "RequestMemory",
            "ifthenelse(MemoryUsage isnt undefined,MemoryUsage,(ImageSize + 1023) / 1024)",
            0,
        )?,
    }
    match get("request_disk")? {
        Some((line, d)) => match quantity(&d, 1.0) {
            Some(kb) => ad.insert_value("RequestDisk", kb),
            None => set_expr(ad, "RequestDisk", &d, line)?,
        },
        None => set_expr(ad, "RequestDisk", "DiskUsage", 0)?,
    }
    let mut custom = Vec::new();
    for name in state.commands.keys() {
        let Some(res) = name.strip_prefix("request_") else {
            continue;
        };
        if ["cpus", "memory", "disk"].contains(&res) || res.is_empty() {
            continue;
        }
        let attr = if res == "gpus" {
            "GPUs".to_string()
        } else {
            let mut c = res.chars();
            c.next().map_or_else(String::new, |f| {
                f.to_ascii_uppercase().to_string() + c.as_str()
            })
        };
        if let Some((line, v)) = get(name)? {
            set_expr(ad, &format!("Request{attr}"), &v, line)?;
            custom.push(attr);
        }
    }
    let (arch, opsys) = s.platform;
    let mut clauses = Vec::new();
    let user = get("requirements")?;
    if let Some((_, r)) = &user {
        clauses.push(format!("({r})"));
    }
    clauses.push(format!("(TARGET.Arch == \"{arch}\")"));
    clauses.push(format!("(TARGET.OpSys == \"{opsys}\")"));
    clauses.push("(TARGET.Disk >= RequestDisk)".into());
    clauses.push("(TARGET.Memory >= RequestMemory)".into());
    if cpus.is_some() {
        clauses.push("(TARGET.Cpus >= RequestCpus)".into());
    }
    for c in &custom {
        clauses.push(format!("(TARGET.{c} >= Request{c})"));
    }
    clauses.push(super::submit_transfer::read(get)?.clause());
    if get("deferral_time")?.is_some() {
        clauses.push(super::submit_more::DEFERRAL_CLAUSE.into());
    }
    let line = user.map_or(0, |(l, _)| l);
    let text = clauses.join(" && ");
    parse_expr(&text).map_err(|e| {
        err(
            line,
            format!("Parse error in expression: Requirements = {text} ({e})"),
        )
    })?;
    set_expr(ad, "Requirements", &text, line)
}

/// The job's own policy: `periodic_hold`, `periodic_release`,
/// `periodic_remove`, `on_exit_hold`, `on_exit_remove` as expressions, and
/// `max_retries` as condor_submit writes it (`JobMaxRetries`, with
/// `OnExitRemove` true once the job has run that many more times or has
/// exited 0, or by the job's own `on_exit_remove`). `schedd::policy`
/// carries them out.
fn job_policy(get: &Get<'_>, ad: &mut ClassAd, set_expr: &SetExpr<'_>) -> Result<(), SubmitError> {
    // A command set to nothing is not set, as in condor_submit.
    let get = |cmd: &str| Ok::<_, SubmitError>(get(cmd)?.filter(|(_, v)| !v.trim().is_empty()));
    for (cmd, attr) in [
        ("periodic_hold", "PeriodicHold"),
        ("periodic_release", "PeriodicRelease"),
        ("periodic_remove", "PeriodicRemove"),
        ("on_exit_hold", "OnExitHold"),
        ("on_exit_remove", "OnExitRemove"),
    ] {
        if let Some((line, e)) = get(cmd)? {
            set_expr(ad, attr, &e, line)?;
        }
    }
    if let Some((line, n)) = get("max_retries")? {
        let n: i64 = n
            .trim()
            .parse()
            .map_err(|_| err(line, format!("max_retries = {n}: not a whole number")))?;
        ad.insert_value("JobMaxRetries", n);
        if get("on_exit_hold")?.is_none() {
            ad.insert_value("OnExitHold", false);
        }
        let mut remove = "NumJobCompletions > JobMaxRetries || ExitCode is 0".to_string();
        if let Some((_, own)) = get("on_exit_remove")? {
            remove = format!("{remove} || {own}");
        }
        set_expr(ad, "OnExitRemove", &remove, line)?;
    }
    Ok(())
}

/// The submitter's variables `getenv` gives the job, as condor_submit 23
/// gives them: `true` (in any case) all, `false` none; anything else is a
/// list of names, split at commas and blanks, matched without regard to
/// case, `*` standing for any run of characters (`?` is itself; `yes`
/// names a variable). The
/// `environment` command's entries then override them.
fn getenv<'e>(value: &str, environ: &'e [(String, String)]) -> Vec<(&'e str, &'e str)> {
    let value = value.trim();
    let all = value.eq_ignore_ascii_case("true");
    if value.eq_ignore_ascii_case("false") {
        return Vec::new();
    }
    let patterns: Vec<String> = value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_uppercase)
        .collect();
    environ
        .iter()
        .filter(|(n, _)| {
            all || patterns
                .iter()
                .any(|p| glob(p.as_bytes(), n.to_ascii_uppercase().as_bytes()))
        })
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

/// Whether `name` matches `pattern` (`*`: any run of bytes).
fn glob(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.split_first(), name.split_first()) {
        (None, None) => true,
        (Some((b'*', rest)), _) => {
            glob(rest, name) || name.split_first().is_some_and(|(_, n)| glob(pattern, n))
        }
        (Some((p, rest)), Some((c, n))) if p == c => glob(rest, n),
        _ => false,
    }
}

/// The attributes every new job has, at their starting values.
fn fixed(ad: &mut ClassAd, s: &Submission<'_>, proc_id: i64) {
    ad.insert_value("MyType", "Job");
    ad.insert_value("TargetType", "Machine");
    ad.insert_value("ClusterId", s.cluster);
    ad.insert_value("ProcId", proc_id);
    ad.insert_value("QDate", s.qdate);
    ad.insert_value("EnteredCurrentStatus", s.qdate);
    ad.insert_value("Owner", s.owner);
    ad.insert_value("FileSystemDomain", s.domain);
    ad.insert_value("JobUniverse", 5);
    ad.insert_value("ShouldTransferFiles", "IF_NEEDED");
    ad.insert_value("WhenToTransferOutput", "ON_EXIT");
    ad.insert_value("JobLeaseDuration", 2400);
    for (attr, v) in [
        ("ExitBySignal", Value::Bool(false)),
        ("RemoteSysCpu", Value::Real(0.0)),
        ("RemoteUserCpu", Value::Real(0.0)),
        ("RemoteWallClockTime", Value::Real(0.0)),
        ("CumulativeRemoteSysCpu", Value::Real(0.0)),
        ("CumulativeRemoteUserCpu", Value::Real(0.0)),
    ] {
        ad.insert_value(attr, v);
    }
    for attr in [
        "CommittedSlotTime",
        "CommittedSuspensionTime",
        "CommittedTime",
        "CumulativeSlotTime",
        "CumulativeSuspensionTime",
        "CurrentHosts",
        "ExitStatus",
        "LastSuspensionTime",
        "NumCkpts",
        "NumJobCompletions",
        "NumJobStarts",
        "NumRestarts",
        "NumSystemHolds",
        "TotalSuspensions",
        "TransferInputSizeMB",
    ] {
        ad.insert_value(attr, 0);
    }
    ad.insert_value("MaxHosts", 1);
    ad.insert_value("MinHosts", 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoFiles;

    impl SubmitFiles for NoFiles {
        fn read(&self, _: &str) -> Option<String> {
            None
        }
        fn glob(&self, _: &str, _: bool) -> Vec<String> {
            Vec::new()
        }
        fn is_dir(&self, _: &str) -> bool {
            false
        }
        fn size(&self, _: &str) -> Option<u64> {
            None
        }
    }

    fn submit(text: &str) -> Result<Vec<ClassAd>, SubmitError> {
        jobs(&Submission {
            text,
            cluster: 3,
            qdate: 100,
            owner: "bob",
            cwd: "/home/bob",
            domain: "node",
            platform: ("X86_64", "LINUX"),
            files: &NoFiles,
            environ: &[],
        })
    }

    fn attr(ad: &ClassAd, name: &str) -> String {
        ad.lookup(name)
            .map(crate::classad::unparse::expr_to_string)
            .unwrap_or_default()
    }

    #[test]
    fn each_queue_statement_adds_jobs_with_the_commands_so_far() {
        let ads = submit(
            "executable = /bin/echo\narguments = first $(Process)\nqueue\n\
             arguments = $(word:none) $(Process)\nqueue 2\n",
        )
        .expect("submits");
        let args: Vec<String> = ads.iter().map(|a| attr(a, "Args")).collect();
        assert_eq!(args, ["\"first 0\"", "\"none 1\"", "\"none 2\""]);
        assert_eq!(attr(&ads[2], "Owner"), "\"bob\"");
    }

    #[test]
    fn what_roost_does_not_do_is_refused_naming_the_line() {
        let e = submit("executable = /bin/true\n\ndocker_image = a\nqueue\n").expect_err("refused");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("docker_image"), "{e}");
        let e = submit(
            "executable = /bin/true\nshould_transfer_files = YES\ntransfer_input_files = s3://b/k\nqueue\n",
        )
        .expect_err("refused");
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("s3:// URLs"), "{e}");
        let e = submit("universe = docker\nexecutable = /bin/true\nqueue\n").expect_err("refused");
        assert_eq!((e.line, e.message.contains("vanilla")), (1, true), "{e}");
        let e =
            submit("executable = /bin/true\nthis line is nothing\nqueue\n").expect_err("refused");
        assert_eq!(e.line, 2);
        let e = submit("executable = /bin/true\n").expect_err("refused");
        assert!(e.message.contains("no queue statement"), "{e}");
        let e = submit("executable = /bin/true\nqueue x in (a\nb\n").expect_err("refused");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("closing"), "{e}");
    }

    #[test]
    fn macros_that_refer_to_each_other_are_an_error_not_a_hang() {
        let e = submit("a = $(b)\nb = $(a)\nexecutable = /bin/echo\narguments = $(a)\nqueue\n")
            .expect_err("refused");
        assert!(e.message.contains("without end"), "{e}");
        // `$$(…)` is for match time: left as it is.
        let ads = submit("executable = /bin/echo\narguments = $$(Memory)\nqueue\n").expect("ok");
        assert_eq!(attr(&ads[0], "Args"), "\"$$(Memory)\"");
    }
}
