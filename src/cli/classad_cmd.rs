//! `roost classad`: evaluate expressions, convert ads between syntaxes, and
//! match jobs against machines. The output formats are a contract other
//! tools depend on; see `docs/classad.md`.

use std::collections::HashMap;
use std::io::{BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde::Deserialize;

use super::sysenv::SystemEnv;
use crate::classad::matchmaking::match_job;
use crate::classad::old::{parse_ad_auto, read_ad_auto, read_ads_auto};
use crate::classad::unparse::{
    OldOrder, ad_to_json, ad_to_old, ad_to_pretty, ad_to_string, value_to_string,
};
use crate::classad::{ClassAd, Env, Evaluator, FixedEnv, Limits, Name, ParseError, parse_expr};

/// `roost classad` subcommands.
#[derive(Subcommand, Debug)]
pub enum ClassadCmd {
    /// Evaluate an expression and print its value as a ClassAd literal.
    Eval(EvalArgs),
    /// Convert ads read on stdin to another syntax.
    Fmt(FmtArgs),
    /// Match every job against every machine (symmetric match, then Rank).
    Match(MatchArgs),
}

/// Arguments of `roost classad eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The expression (omit with --jsonl).
    expr: Option<String>,
    /// The ad the expression is evaluated in (MY).
    #[arg(long, value_name = "FILE")]
    my: Option<PathBuf>,
    /// The ad matched against (TARGET).
    #[arg(long, value_name = "FILE")]
    target: Option<PathBuf>,
    /// Read JSON lines {"my","target","expr"} on stdin, write one JSON line
    /// each: {"value": ...} or {"error": ...}.
    #[arg(long)]
    jsonl: bool,
    /// Evaluate as if the time were this many seconds since the epoch, in
    /// UTC (for reproducible results).
    #[arg(long, value_name = "SECS")]
    now: Option<i64>,
}

/// Arguments of `roost classad fmt`.
#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct FmtArgs {
    /// Old syntax: `Name = expr` lines, as HTCondor writes ads for hooks.
    #[arg(long)]
    old: bool,
    /// New syntax, one ad per line.
    #[arg(long)]
    new: bool,
    /// New syntax, indented.
    #[arg(long)]
    pretty: bool,
    /// JSON, as HTCondor writes it.
    #[arg(long)]
    json: bool,
}

/// Arguments of `roost classad match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// Machine ads (new syntax one after another, or old syntax separated
    /// by blank lines).
    #[arg(long, value_name = "FILE")]
    machines: PathBuf,
    /// Job ads, in the same forms.
    #[arg(long, value_name = "FILE")]
    jobs: PathBuf,
    /// Write JSON lines instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs a `roost classad` subcommand.
pub fn run(cmd: ClassadCmd) -> Result<ExitCode> {
    match cmd {
        ClassadCmd::Eval(a) => eval(&a),
        ClassadCmd::Fmt(a) => fmt(&a),
        ClassadCmd::Match(a) => matching(&a),
    }
}

fn read_ad(path: &Path) -> Result<ClassAd> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let (ad, skipped) = read_ad_auto(&text, &Limits::default())
        .with_context(|| format!("parsing {}", path.display()))?;
    warn_skipped(&path.display().to_string(), &skipped);
    Ok(ad)
}

fn read_ads(path: &Path) -> Result<Vec<ClassAd>> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let (ads, skipped) = read_ads_auto(&text, &Limits::default())
        .with_context(|| format!("parsing {}", path.display()))?;
    warn_skipped(&path.display().to_string(), &skipped);
    Ok(ads)
}

/// Tells, on stderr, where an old-syntax ad was cut short: HTCondor's
/// reader keeps the lines before a bad one and skips the rest of the ad.
fn warn_skipped(source: &str, skipped: &[ParseError]) {
    for e in skipped {
        eprintln!(
            "roost: warning: {source}: {e}; the ad ends before this line (the lines before it are kept, as HTCondor's reader does)"
        );
    }
}

fn make_env(now: Option<i64>) -> Box<dyn Env> {
    match now {
        Some(t) => Box::new(FixedEnv::new(t)),
        None => Box::new(SystemEnv::new()),
    }
}

fn eval(a: &EvalArgs) -> Result<ExitCode> {
    let env = make_env(a.now);
    if a.jsonl {
        if a.expr.is_some() {
            bail!("give either an expression or --jsonl, not both");
        }
        return eval_jsonl(env.as_ref());
    }
    let Some(text) = &a.expr else {
        bail!("no expression given (or use --jsonl)");
    };
    let my = a.my.as_deref().map(read_ad).transpose()?;
    let target = a.target.as_deref().map(read_ad).transpose()?;
    let expr = match parse_expr(text) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("roost: cannot parse the expression: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let value = Evaluator::new(my.as_ref(), target.as_ref(), env.as_ref()).eval_expr(&expr);
    println!("{}", value_to_string(&value));
    Ok(ExitCode::SUCCESS)
}

#[derive(Deserialize)]
struct EvalLine {
    my: Option<String>,
    target: Option<String>,
    expr: String,
}

/// Parsed ads by their text, so repeated ads are parsed once.
struct AdCache {
    ads: HashMap<String, Result<ClassAd, ParseError>>,
}

impl AdCache {
    fn get(&mut self, text: &str) -> Result<ClassAd, ParseError> {
        if let Some(r) = self.ads.get(text) {
            return r.clone();
        }
        if self.ads.len() > 4096 {
            self.ads.clear();
        }
        let r = parse_ad_auto(text.as_bytes(), &Limits::default());
        self.ads.insert(text.to_string(), r.clone());
        r
    }
}

fn eval_line(line: &str, cache: &mut AdCache, env: &dyn Env) -> serde_json::Value {
    let req: EvalLine = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => return serde_json::json!({ "error": format!("invalid request: {e}") }),
    };
    let my = match req.my.as_deref().map(|t| cache.get(t)).transpose() {
        Ok(a) => a,
        Err(e) => return serde_json::json!({ "error": format!("my: {e}") }),
    };
    let target = match req.target.as_deref().map(|t| cache.get(t)).transpose() {
        Ok(a) => a,
        Err(e) => return serde_json::json!({ "error": format!("target: {e}") }),
    };
    let expr = match parse_expr(&req.expr) {
        Ok(e) => e,
        Err(e) => return serde_json::json!({ "error": format!("expr: {e}") }),
    };
    let value = Evaluator::new(my.as_ref(), target.as_ref(), env).eval_expr(&expr);
    serde_json::json!({ "value": value_to_string(&value) })
}

fn eval_jsonl(env: &dyn Env) -> Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut cache = AdCache {
        ads: HashMap::new(),
    };
    for line in stdin.lock().lines() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = eval_line(&line, &mut cache, env);
        serde_json::to_writer(&mut out, &answer)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn fmt(a: &FmtArgs) -> Result<ExitCode> {
    let mut text = Vec::new();
    std::io::stdin()
        .read_to_end(&mut text)
        .context("reading stdin")?;
    let (ads, skipped) = read_ads_auto(&text, &Limits::default()).context("parsing stdin")?;
    warn_skipped("stdin", &skipped);
    let mut out = BufWriter::new(std::io::stdout().lock());
    if a.json {
        if ads.len() == 1 {
            writeln!(out, "{}", ad_to_json(&ads[0]))?;
        } else {
            writeln!(out, "[")?;
            for (i, ad) in ads.iter().enumerate() {
                let sep = if i + 1 < ads.len() { "," } else { "" };
                writeln!(out, "{}{sep}", ad_to_json(ad))?;
            }
            writeln!(out, "]")?;
        }
    } else {
        for (i, ad) in ads.iter().enumerate() {
            if a.old {
                if i > 0 {
                    writeln!(out)?;
                }
                write!(out, "{}", ad_to_old(ad, OldOrder::Bytes))?;
            } else if a.pretty {
                writeln!(out, "{}", ad_to_pretty(ad))?;
            } else {
                writeln!(out, "{}", ad_to_string(ad))?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn ad_name(ad: &ClassAd, env: &dyn Env) -> Option<String> {
    match ad.eval_attr("Name", env) {
        crate::classad::Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    }
}

fn matching(a: &MatchArgs) -> Result<ExitCode> {
    let machines = read_ads(&a.machines)?;
    let jobs = read_ads(&a.jobs)?;
    let env = SystemEnv::new();
    let start = Instant::now();
    let results: Vec<_> = jobs.iter().map(|j| match_job(j, &machines, &env)).collect();
    let seconds = start.elapsed().as_secs_f64();
    let total: usize = results.iter().map(|r| r.matches).sum();
    let pairs = machines.len() * jobs.len();
    let name_of = |i: usize| ad_name(&machines[i], &env).unwrap_or_else(|| format!("machine {i}"));
    let job_id = Name::new("GlobalJobId");
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (i, (job, r)) in jobs.iter().zip(&results).enumerate() {
        let id = match job.get(&job_id).map(|_| job.eval_attr("GlobalJobId", &env)) {
            Some(crate::classad::Value::Str(s)) => s.to_string_lossy(),
            _ => format!("job {i}"),
        };
        if a.json {
            let line = serde_json::json!({
                "job": id,
                "matches": r.matches,
                "best": r.best.map(name_of),
                "best_index": r.best,
                "rank": r.best.map(|_| r.best_rank),
            });
            writeln!(out, "{line}")?;
        } else {
            match r.best {
                Some(b) => writeln!(
                    out,
                    "{id}: {} matching machines, best {} (rank {})",
                    r.matches,
                    name_of(b),
                    r.best_rank
                )?,
                None => writeln!(out, "{id}: no matching machine")?,
            }
        }
    }
    if a.json {
        let summary = serde_json::json!({ "pairs": pairs, "matches": total, "seconds": seconds });
        writeln!(out, "{summary}")?;
    } else {
        writeln!(out, "{pairs} pairs, {total} matches, {seconds:.3} s")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
