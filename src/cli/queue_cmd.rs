//! The access point's commands, talking to `roost schedd` on its socket:
//! `roost submit`, `q`, `rm`, `hold`, `release`, `history` (with
//! condor_submit's, condor_q's, condor_rm's… options and output), and
//! `roost queue-hook`, the fetch-work hooks a `roost startd` (or an
//! HTCondor startd) uses to take its jobs from the queue.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, anyhow};
use clap::{Args, ValueEnum};

use crate::actors::common::sysconfig::load_daemon_config;
use crate::admin::{Response, call_with};
use crate::classad::old::read_ads_auto;
use crate::classad::unparse::{OldOrder, ad_to_old, ad_to_string};
use crate::classad::{ClassAd, FixedEnv, Limits, Value, parse_ad};
use crate::schedd::event::ExitHow;
use crate::schedd::protocol::{Action, SOCKET_KNOB, ScheddRequest};
use crate::schedd::queue::{LEASE_ATTR, Targets};
use crate::schedd::submit::{Submission, SubmitFiles, jobs};

/// The schedd a command talks to (`--config`, `--socket`).
type Schedd = super::admin_cmd::Target;

fn send(schedd: &Schedd, req: &ScheddRequest) -> Result<Response> {
    let path = schedd.path("SCHEDD", SOCKET_KNOB, "roost_schedd.sock")?;
    Ok(call_with(&path, req, Duration::from_secs(60))?)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

fn refused(r: &Response) -> ExitCode {
    eprintln!("roost: {}", r.message);
    ExitCode::from(1)
}

/// Job ids (`12`, `12.3`) and owners, as condor_q and condor_rm take them.
fn targets(args: &[String], constraint: Option<String>, all: bool) -> Targets {
    let (ids, owners): (Vec<String>, Vec<String>) = args
        .iter()
        .cloned()
        .partition(|a| a.chars().next().is_some_and(|c| c.is_ascii_digit()));
    Targets {
        ids,
        owners,
        constraint,
        all,
    }
}

/// `roost submit`.
#[derive(Args, Debug)]
pub struct SubmitCmd {
    #[command(flatten)]
    schedd: Schedd,
    /// The submit description (`-` or none: standard input).
    file: Option<String>,
    /// Job ads instead of a description (condor_submit -spool's `-ad`):
    /// new or old syntax, several separated by blank lines.
    #[arg(long = "ad", value_name = "FILE", conflicts_with = "file")]
    ad: Option<String>,
}

/// Files a description names, read from the submit directory.
struct DirFiles(PathBuf);

impl SubmitFiles for DirFiles {
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(path)).ok()
    }

    fn glob(&self, pattern: &str, dirs: bool) -> Vec<String> {
        let (dir, name) = match pattern.rsplit_once('/') {
            Some((d, n)) => (Some(d), n),
            None => (None, pattern),
        };
        let base = dir.map_or_else(|| self.0.clone(), |d| self.0.join(d));
        let Ok(entries) = std::fs::read_dir(&base) else {
            return Vec::new();
        };
        let mut out: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() == dirs))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with('.') && wildcard(name.as_bytes(), n.as_bytes()))
            .map(|n| dir.map_or_else(|| n.clone(), |d| format!("{d}/{n}")))
            .collect();
        out.sort();
        out
    }

    fn is_dir(&self, path: &str) -> bool {
        Path::new(path).is_dir()
    }

    fn size(&self, path: &str) -> Option<u64> {
        fn walk(p: &Path) -> u64 {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.is_dir() => std::fs::read_dir(p)
                    .map(|d| d.filter_map(Result::ok).map(|e| walk(&e.path())).sum())
                    .unwrap_or(0),
                Ok(m) => m.len(),
                Err(_) => 0,
            }
        }
        // The named file as it points; inside a directory, links are not
        // followed (no loops).
        let p = Path::new(path);
        let m = p.metadata().ok()?;
        Some(if m.is_dir() { walk(p) } else { m.len() })
    }
}

/// Whether `name` matches `pattern` (`*` any run, `?` any one byte).
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|i| wildcard(rest, &name[i..])),
        Some((b'?', rest)) => !name.is_empty() && wildcard(rest, &name[1..]),
        Some((c, rest)) => name.first() == Some(c) && wildcard(rest, &name[1..]),
    }
}

fn read_input(file: Option<&str>) -> Result<String> {
    match file {
        None | Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| anyhow!("cannot read standard input: {e}"))?;
            Ok(s)
        }
        Some(f) => std::fs::read_to_string(f).map_err(|e| anyhow!("cannot read {f}: {e}")),
    }
}

/// Runs `roost submit`.
pub fn submit(cmd: SubmitCmd) -> Result<ExitCode> {
    if let Some(file) = &cmd.ad {
        let text = read_input(Some(file))?;
        // A job is queued only from an ad read whole: HTCondor's reader
        // would keep the lines before a bad one, a job without the rest.
        let (ads, skipped) = read_ads_auto(text.as_bytes(), &Limits::default())
            .map_err(|e| anyhow!("{file}: {e}"))?;
        if let Some(e) = skipped.first() {
            return Err(anyhow!("{file}: {e}; nothing was queued"));
        }
        let ads = ads.iter().map(ad_to_string).collect();
        return finish_submit(&cmd.schedd, ads, None);
    }
    let name = cmd.file.as_deref().unwrap_or("-");
    let text = read_input(cmd.file.as_deref())?;
    let config = load_daemon_config(cmd.schedd.config(), "SUBMIT")?;
    let host = config
        .expanded("FULL_HOSTNAME")?
        .unwrap_or_else(|| "localhost".into());
    let domain = config
        .expanded("FILESYSTEM_DOMAIN")?
        .filter(|d| !d.trim().is_empty())
        .unwrap_or(host);
    let cwd = std::env::current_dir().map_err(|e| anyhow!("no current directory: {e}"))?;
    let owner = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map_or_else(|| "nobody".into(), |u| u.name);
    let r = send(&cmd.schedd, &ScheddRequest::NewCluster)?;
    if !r.ok {
        return Ok(refused(&r));
    }
    let cluster: i64 = r
        .message
        .parse()
        .map_err(|_| anyhow!("the schedd gave no cluster number: {}", r.message))?;
    let cwd_text = cwd.display().to_string();
    let environ: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(n, v)| Some((n.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let ads = jobs(&Submission {
        text: &text,
        cluster,
        qdate: now(),
        owner: &owner,
        cwd: &cwd_text,
        domain: domain.trim(),
        platform: ("X86_64", "LINUX"),
        files: &DirFiles(cwd.clone()),
        environ: &environ,
    })
    .map_err(|e| anyhow!("{name}: {e}"))?;
    let ads = ads
        .into_iter()
        .map(|mut ad| {
            sizes(&mut ad);
            ad_to_string(&ad)
        })
        .collect();
    finish_submit(&cmd.schedd, ads, Some(cluster))
}

/// What condor_submit measures on the submit machine: the executable's
/// size in KiB (`ExecutableSize`), the first guesses of `ImageSize` and
/// `DiskUsage` (which the default `RequestMemory` and `RequestDisk` read),
/// unless the description set them.
fn sizes(ad: &mut ClassAd) {
    let env = FixedEnv::new(0);
    let Value::Str(cmd) = ad.eval_attr("Cmd", &env) else {
        return;
    };
    let kib = std::fs::metadata(cmd.to_string_lossy()).map_or(0, |m| m.len().div_ceil(1024));
    let kib = i64::try_from(kib).unwrap_or(i64::MAX);
    for attr in ["ExecutableSize", "ImageSize", "DiskUsage"] {
        if !ad.contains(attr) {
            ad.insert_value(attr, kib);
        }
    }
}

fn finish_submit(schedd: &Schedd, ads: Vec<String>, cluster: Option<i64>) -> Result<ExitCode> {
    println!("Submitting job(s){}", ".".repeat(ads.len().min(1000)));
    let r = send(schedd, &ScheddRequest::Submit { ads, cluster })?;
    if !r.ok {
        return Ok(refused(&r));
    }
    println!("{}", r.message);
    Ok(ExitCode::SUCCESS)
}

/// `roost q` and `roost history`.
#[derive(Args, Debug)]
pub struct QueryCmd {
    #[command(flatten)]
    schedd: Schedd,
    /// Job ids (`12`, `12.3`) and owners.
    names: Vec<String>,
    #[command(flatten)]
    view: super::admin_cmd::AdView,
    /// Held jobs, with why (condor_q -hold).
    #[arg(long, conflicts_with = "run")]
    hold: bool,
    /// Running jobs, with where (condor_q -run).
    #[arg(long)]
    run: bool,
    /// One line per job rather than per batch (condor_q -nobatch).
    #[arg(long)]
    nobatch: bool,
    /// At most this many (condor_history -limit; -match is the same).
    #[arg(long, alias = "match", value_name = "N")]
    limit: Option<usize>,
}

/// Runs `roost q` (`history` false) or `roost history`.
pub fn query(cmd: QueryCmd, history: bool) -> Result<ExitCode> {
    let mut constraint = cmd.view.constraint.clone();
    let extra = if cmd.hold {
        Some("JobStatus == 5")
    } else if cmd.run {
        Some("JobStatus == 2")
    } else {
        None
    };
    if let Some(x) = extra {
        constraint = Some(match constraint {
            Some(c) => format!("({c}) && {x}"),
            None => x.to_string(),
        });
    }
    let r = send(
        &cmd.schedd,
        &ScheddRequest::Query {
            targets: targets(&cmd.names, constraint, false),
            history,
            limit: cmd.limit,
        },
    )?;
    if !r.ok {
        return Ok(refused(&r));
    }
    let ads: Vec<ClassAd> = r
        .ads
        .iter()
        .map(|t| parse_ad(t).map_err(|e| anyhow!("the schedd sent an unreadable job ad: {e}")))
        .collect::<Result<_>>()?;
    let t = now();
    let text = cmd.view.render(&ads, t, || {
        if history {
            super::queue_table::history_table(&ads)
        } else if cmd.hold {
            super::queue_table::hold_table(&ads)
        } else if cmd.run {
            super::queue_table::run_table(&ads, t)
        } else if cmd.nobatch {
            super::queue_table::job_table(&ads, t)
        } else {
            super::queue_table::batch_table(&ads)
        }
    });
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// `roost rm`, `hold`, `release`.
#[derive(Args, Debug)]
pub struct ActCmd {
    #[command(flatten)]
    schedd: Schedd,
    /// Job ids (`12`, `12.3`) and owners.
    names: Vec<String>,
    /// Only jobs for which this is true.
    #[arg(long, value_name = "EXPR")]
    constraint: Option<String>,
    /// Every job (yours, or everyone's for a queue super user).
    #[arg(long)]
    all: bool,
    /// The reason recorded (`HoldReason`, `RemoveReason`, `ReleaseReason`).
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
}

/// Runs `roost rm`, `hold` or `release`.
pub fn act(cmd: ActCmd, action: Action) -> Result<ExitCode> {
    let targets = targets(&cmd.names, cmd.constraint, cmd.all);
    if targets.is_empty() {
        return Err(anyhow!(
            "roost {}: name jobs (12 or 12.3), users, -constraint or -all",
            action.command()
        ));
    }
    let r = send(
        &cmd.schedd,
        &ScheddRequest::Act {
            action,
            targets,
            reason: cmd.reason,
        },
    )?;
    if !r.ok {
        return Ok(refused(&r));
    }
    println!("{}", r.message);
    Ok(ExitCode::SUCCESS)
}

/// Which hook `roost queue-hook` is run as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HookKind {
    /// FETCH_WORK: stdin the slot ad; stdout a job, or nothing.
    Fetch,
    /// REPLY_FETCH: argument accept or reject; stdin job, `-----`, slot.
    Reply,
    /// JOB_EXIT: argument exit, remove, hold or evict; stdin the job.
    Exit,
    /// EVICT_CLAIM: stdin job, `-----`, slot.
    Evict,
    /// UPDATE_JOB_INFO: stdin the running job.
    Update,
}

/// `roost queue-hook`.
#[derive(Args, Debug)]
pub struct QueueHookCmd {
    #[command(flatten)]
    schedd: Schedd,
    /// The hook.
    #[arg(value_enum)]
    hook: HookKind,
    /// The argument the daemon gives the hook (REPLY_FETCH, JOB_EXIT).
    arg: Option<String>,
}

/// The job part of a hook's input (before a `-----` line).
fn job_part(input: &str) -> &str {
    let mut at = 0;
    for line in input.split_inclusive('\n') {
        if line.trim_end().starts_with("-----") {
            return &input[..at];
        }
        at += line.len();
    }
    input
}

/// The job's id and lease token from its ad.
fn lease_of(ad: &ClassAd) -> Result<(String, String)> {
    let env = FixedEnv::new(0);
    let int = |a: &str| match ad.eval_attr(a, &env) {
        Value::Int(n) => Ok(n),
        _ => Err(anyhow!(
            "the job ad has no {a}: it did not come from a roost schedd"
        )),
    };
    let token = match ad.eval_attr(LEASE_ATTR, &env) {
        Value::Str(s) => s.to_string_lossy(),
        _ => {
            return Err(anyhow!(
                "the job ad has no {LEASE_ATTR}: it did not come from a roost schedd"
            ));
        }
    };
    Ok((format!("{}.{}", int("ClusterId")?, int("ProcId")?), token))
}

/// Runs `roost queue-hook`.
pub fn queue_hook(cmd: QueueHookCmd) -> Result<ExitCode> {
    let input = read_input(None)?;
    let arg = cmd.arg.as_deref();
    let request = match cmd.hook {
        HookKind::Fetch => ScheddRequest::Fetch { slot: input },
        other => {
            let part = job_part(&input);
            let ad = crate::classad::old::parse_ad_auto(part.as_bytes(), &Limits::default())
                .map_err(|e| anyhow!("the job ad on standard input does not parse: {e}"))?;
            let (job, token) = lease_of(&ad)?;
            match other {
                HookKind::Reply => ScheddRequest::Reply {
                    job,
                    token,
                    accept: match arg {
                        Some("accept") => true,
                        Some("reject") => false,
                        a => {
                            return Err(anyhow!(
                                "REPLY_FETCH's argument is {a:?}, not accept or reject"
                            ));
                        }
                    },
                },
                HookKind::Exit => ScheddRequest::Exit {
                    job,
                    token,
                    how: arg
                        .unwrap_or_default()
                        .parse::<ExitHow>()
                        .map_err(|e| anyhow!("JOB_EXIT's argument: {e}"))?,
                    ad: ad_to_string(&ad),
                },
                HookKind::Update => ScheddRequest::Update {
                    job,
                    token,
                    ad: ad_to_string(&ad),
                },
                _ => ScheddRequest::EvictClaim { job, token },
            }
        }
    };
    let r = send(&cmd.schedd, &request)?;
    if !r.ok {
        return Ok(refused(&r));
    }
    if let Some(job) = r.ads.first() {
        let ad = parse_ad(job).map_err(|e| anyhow!("the schedd sent an unreadable job: {e}"))?;
        print!("{}", ad_to_old(&ad, OldOrder::Bytes));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_shells_do() {
        assert!(wildcard(b"*.txt", b"a.txt"));
        assert!(wildcard(b"in?", b"in1"));
        assert!(!wildcard(b"in?", b"in12"));
        assert!(wildcard(b"*", b""));
        assert!(!wildcard(b"*.txt", b"a.dat"));
    }

    #[test]
    fn names_split_into_ids_and_owners() {
        let t = targets(&["12".into(), "alice".into(), "3.1".into()], None, false);
        assert_eq!(t.ids, vec!["12", "3.1"]);
        assert_eq!(t.owners, vec!["alice"]);
    }

    #[test]
    fn the_job_part_of_hook_input_ends_at_the_separator() {
        assert_eq!(job_part("A = 1\n-----\nB = 2\n"), "A = 1\n");
        assert_eq!(job_part("A = 1\n"), "A = 1\n");
    }
}
