//! The submit commands that set attributes others act on, as
//! `condor_submit` 23 writes them: `accounting_group` /
//! `accounting_group_user` (`AcctGroup`, `AcctGroupUser`,
//! `AccountingGroup`), `concurrency_limits` (`ConcurrencyLimits`, lower
//! case, comma-separated: the queue hands a job out only while its limits
//! have room, `schedd::limits`), `coresize` (`CoreSize`: the starter's
//! core-file limit),
//! `noop_job` / `noop_job_exit_code` / `noop_job_exit_signal` (the queue
//! completes such a job without running it), `deferral_time` /
//! `deferral_window` / `deferral_prep_time` (the starter waits for the
//! time; the job matches only near it), `transfer_executable`, and
//! `stream_output` / `stream_error` (accepted; nothing is transferred, so
//! output already goes straight to its file, and HTCondor's ad says nothing
//! of them either). Pure.

use super::submit::{SubmitError, err};
use crate::classad::{ClassAd, Value, parse_expr};

type Get<'a> = dyn Fn(&str) -> Result<Option<(usize, String)>, SubmitError> + 'a;

/// The clause condor_submit adds to a deferred job's `Requirements`: a
/// node that defers jobs, from `ScheddInterval` + `DeferralPrepTime`
/// before the time to the end of its window.
pub(super) const DEFERRAL_CLAUSE: &str = "TARGET.HasJobDeferral && (((time() + ScheddInterval) \
     >= (DeferralTime - DeferralPrepTime)) && (time() < (DeferralTime + DeferralWindow)))";

/// Sets the attributes of these commands in `ad` (of a job of `owner`).
pub(super) fn set(get: &Get<'_>, owner: &str, ad: &mut ClassAd) -> Result<(), SubmitError> {
    accounting(get, owner, ad)?;
    if let Some((_, limits)) = get("concurrency_limits")? {
        let names: Vec<String> = (limits.split(|c: char| c == ',' || c.is_ascii_whitespace()))
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        if !names.is_empty() {
            ad.insert_value("ConcurrencyLimits", names.join(",").as_str());
        }
    }
    if let Some(n) = integer(get, "coresize", " (bytes; -1: no limit)")? {
        ad.insert_value("CoreSize", n);
    }
    if let Some((line, noop)) = get("noop_job")? {
        let e = parse_expr(&noop)
            .map_err(|e| err(line, format!("noop_job = {noop}: not an expression ({e})")))?;
        ad.insert("IsNoopJob", e);
        for (cmd, attr) in [
            ("noop_job_exit_code", "NoopJobExitCode"),
            ("noop_job_exit_signal", "NoopJobExitSignal"),
        ] {
            if let Some(n) = integer(get, cmd, "")? {
                ad.insert_value(attr, n);
            }
        }
    }
    if let Some((line, t)) = get("deferral_time")? {
        let e = parse_expr(&t).map_err(|e| {
            err(
                line,
                format!("deferral_time = {t}: not an expression ({e})"),
            )
        })?;
        if t.trim().parse::<i64>().is_ok_and(|n| n < 0) {
            return Err(err(
                line,
                format!("deferral_time = {t}: must be a time (seconds since 1970), not negative"),
            ));
        }
        ad.insert("DeferralTime", e);
        ad.insert_value("ScheddInterval", crate::schedd::queue::SCHEDD_INTERVAL);
        for (cmd, attr, default) in [
            ("deferral_window", "DeferralWindow", 0),
            ("deferral_prep_time", "DeferralPrepTime", 300),
        ] {
            ad.insert_value(attr, integer(get, cmd, "")?.unwrap_or(default));
        }
    }
    // condor_submit writes `TransferExecutable = false` for a value that
    // begins with `f`, and nothing for any other.
    if let Some((_, t)) = get("transfer_executable")?
        && t.trim_start().starts_with(['f', 'F'])
    {
        ad.insert_value("TransferExecutable", false);
    }
    if let Some((line, t)) = get("log_xml")? {
        let xml = boolean(&t).ok_or_else(|| {
            err(
                line,
                format!("log_xml={t} is invalid, must eval to a boolean."),
            )
        })?;
        ad.insert_value("UserLogUseXML", xml);
    }
    for cmd in ["stream_output", "stream_error"] {
        if let Some((line, t)) = get(cmd)?
            && !is_boolean(&t)
        {
            return Err(err(
                line,
                format!("{cmd}={t} is invalid, must eval to a boolean."),
            ));
        }
    }
    Ok(())
}

/// Command `cmd` as a whole number, if given; else an error naming it
/// (with `hint`).
fn integer(get: &Get<'_>, cmd: &str, hint: &str) -> Result<Option<i64>, SubmitError> {
    get(cmd)?
        .map(|(line, v)| {
            (v.trim().parse())
                .map_err(|_| err(line, format!("{cmd} = {v}: must be an integer{hint}")))
        })
        .transpose()
}

/// `AcctGroup` (the group), `AcctGroupUser` (the group's user: the owner
/// unless `accounting_group_user` says) and `AccountingGroup`
/// (`group.user`, or the user alone without a group).
fn accounting(get: &Get<'_>, owner: &str, ad: &mut ClassAd) -> Result<(), SubmitError> {
    let group = get("accounting_group")?
        .map(|(_, g)| g.trim().to_string())
        .filter(|g| !g.is_empty());
    let user = get("accounting_group_user")?
        .map(|(_, u)| u.trim().to_string())
        .filter(|u| !u.is_empty());
    match (group, user) {
        (Some(g), user) => {
            let u = user.unwrap_or_else(|| owner.to_string());
            ad.insert_value("AcctGroup", g.as_str());
            ad.insert_value("AcctGroupUser", u.as_str());
            ad.insert_value("AccountingGroup", format!("{g}.{u}").as_str());
        }
        (None, Some(u)) => {
            ad.insert_value("AcctGroupUser", u.as_str());
            ad.insert_value("AccountingGroup", u.as_str());
        }
        (None, None) => {}
    }
    Ok(())
}

/// Whether a submit value is a boolean as condor_submit reads one
/// (`string_is_boolean_param`): `true` or `false` in any case, or an
/// expression that evaluates to a boolean or a number.
fn is_boolean(t: &str) -> bool {
    boolean(t).is_some()
}

/// A command's value as condor_submit reads a boolean: `true`/`false` in
/// any case, or an expression that evaluates to a boolean or a number
/// (true when not zero).
fn boolean(t: &str) -> Option<bool> {
    let t = t.trim();
    if t.eq_ignore_ascii_case("true") {
        return Some(true);
    }
    if t.eq_ignore_ascii_case("false") {
        return Some(false);
    }
    let e = parse_expr(t).ok()?;
    match crate::classad::Evaluator::new(None, None, &crate::classad::FixedEnv::new(0))
        .eval_expr(&e)
    {
        Value::Bool(b) => Some(b),
        Value::Int(i) => Some(i != 0),
        Value::Real(r) => Some(r != 0.0),
        _ => None,
    }
}
