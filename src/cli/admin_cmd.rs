//! `roost status`, `who`, `vacate`, `drain`, `off` and `reconfig`: the
//! admin commands, talking to a running `roost startd` over its admin
//! socket. The socket is found from the same configuration the daemon
//! reads (`--config`, `CONDOR_CONFIG`, …) or given with `--socket`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, anyhow};
use clap::{Args, ValueEnum};

use crate::admin::{Request, Response, call};
use crate::classad::unparse::{OldOrder, ad_to_old, ads_to_json_list, value_to_string};
use crate::classad::{ClassAd, FixedEnv, Value, parse_ad, parse_expr};
use crate::policy::engine::{DrainHow, OnCompletion};

/// Which daemon to talk to.
#[derive(Args, Debug)]
pub(crate) struct Target {
    /// The daemon's root configuration file (default: $CONDOR_CONFIG, then
    /// the standard places); names the socket.
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// The admin socket itself (overrides the configuration).
    #[arg(long, value_name = "PATH", conflicts_with = "name")]
    socket: Option<PathBuf>,
    /// Another node of the pool (its daemon's name, as `roost status
    /// -pool` shows it after the slot's `@`): the command goes through
    /// etcd (`ROOST_POOL_ETCD`), as this configuration's etcd user.
    #[arg(long, value_name = "NODE")]
    name: Option<String>,
}

impl Target {
    fn send(&self, req: &Request) -> Result<Response> {
        if let Some(node) = &self.name {
            let action = crate::pool::inbox::Action::Command {
                request: req.clone(),
            };
            return pool_ask(self.config(), node, action);
        }
        let path = self.path("STARTD", crate::admin::SOCKET_KNOB, "roost_startd.sock")?;
        Ok(call(&path, req, Duration::from_secs(30))?)
    }

    /// The socket: `--socket`, else the knob `knob` of the configuration
    /// as subsystem `subsys` reads it, else `file` in `LOCK` or `LOG`.
    pub(crate) fn path(&self, subsys: &str, knob: &str, file: &str) -> Result<PathBuf> {
        match &self.socket {
            Some(p) => Ok(p.clone()),
            None => {
                let config = crate::actors::common::sysconfig::load_daemon_config(
                    self.config.as_deref(),
                    subsys,
                )?;
                crate::admin::socket_path_of(&config, knob, file)
                    .ok_or_else(|| anyhow!("the configuration sets none of {knob}, LOCK and LOG"))
            }
        }
    }

    /// The root configuration file given, if one was.
    pub(crate) fn config(&self) -> Option<&str> {
        self.config.as_deref()
    }
}

/// How `roost status`, `q` and `history` show the ads they select.
#[derive(Args, Debug)]
pub(crate) struct AdView {
    /// Print whole ads (old syntax), as `-l` does for condor_status and
    /// condor_q.
    #[arg(short = 'l', long = "long")]
    long: bool,
    /// Print these attributes' values (or expressions), one ad per line.
    #[arg(long = "af", alias = "autoformat", value_name = "ATTR", num_args = 1..)]
    af: Vec<String>,
    /// Print the ads as one JSON array, as `-json` does for condor_status
    /// and condor_q (expressions as `"\/Expr(...)\/"` strings).
    #[arg(long, conflicts_with_all = ["long", "af"])]
    json: bool,
    /// Only ads for which this ClassAd expression is true.
    #[arg(long, value_name = "EXPR")]
    pub(crate) constraint: Option<String>,
}

impl AdView {
    /// `ads` as `-l` or `-af` asks, else as `table` prints them.
    pub(crate) fn render(
        &self,
        ads: &[ClassAd],
        now: i64,
        table: impl FnOnce() -> String,
    ) -> String {
        if self.json {
            ads_to_json_list(ads)
        } else if self.long {
            ads.iter()
                .map(|a| ad_to_old(a, OldOrder::Bytes))
                .collect::<Vec<_>>()
                .join("\n")
        } else if !self.af.is_empty() {
            autoformat(ads, &self.af, now)
        } else {
            table()
        }
    }
}

/// `roost status`.
#[derive(Args, Debug)]
pub struct StatusCmd {
    #[command(flatten)]
    pub(crate) target: Target,
    #[command(flatten)]
    pub(crate) view: AdView,
    /// The `roost schedd`'s own ad (its queue's totals and what its cron
    /// jobs published) instead of the startd's slots, as `condor_status
    /// -schedd` shows a schedd; with `-pool`, every schedd in the pool.
    #[arg(long)]
    pub(crate) schedd: bool,
    /// Every node's slots in the pool (etcd, `ROOST_POOL_ETCD`) instead of
    /// this node's.
    #[arg(long)]
    pub(crate) pool: bool,
    /// Only the totals (by `Arch`/`OpSys`, then all), as condor_status
    /// -total prints them.
    #[arg(long)]
    pub(crate) total: bool,
    /// Only these slots (`slot1`, `slot1_2` or the full name).
    pub(crate) slots: Vec<String>,
}

/// `roost who`.
#[derive(Args, Debug)]
pub struct WhoCmd {
    #[command(flatten)]
    target: Target,
    /// Print the ads of the slots running jobs as one JSON array (as
    /// `condor_status -json` prints ads).
    #[arg(long)]
    json: bool,
}

/// `roost vacate`.
#[derive(Args, Debug)]
pub struct VacateCmd {
    #[command(flatten)]
    target: Target,
    /// Let the job retire (its MaxJobRetirementTime honoured), then soft-kill
    /// it (the default).
    #[arg(long, conflicts_with = "fast")]
    graceful: bool,
    /// Hard-kill the job at once.
    #[arg(long)]
    fast: bool,
    /// The slot to vacate (`slot1`, `slot1_2` or the full name); all when
    /// omitted.
    slot: Option<String>,
}

/// `-how` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum How {
    Graceful,
    Quick,
    Fast,
}

/// `roost drain`.
#[derive(Args, Debug)]
pub struct DrainCmd {
    #[command(flatten)]
    target: Target,
    /// How running jobs go: graceful (retirement and vacate time
    /// honoured), quick (vacate time only) or fast (killed).
    #[arg(long, value_enum, default_value = "graceful")]
    how: How,
    /// Same as `-how graceful`.
    #[arg(long, conflicts_with_all = ["quick", "fast"])]
    graceful: bool,
    /// Same as `-how quick`.
    #[arg(long, conflicts_with = "fast")]
    quick: bool,
    /// Same as `-how fast`.
    #[arg(long)]
    fast: bool,
    /// Why (published as DrainReason; default "by command").
    #[arg(long)]
    reason: Option<String>,
    /// START while draining (default: nothing starts).
    #[arg(long, value_name = "EXPR")]
    start: Option<String>,
    /// Refuse the drain unless this is true in every slot.
    #[arg(long, value_name = "EXPR")]
    check: Option<String>,
    /// Accept work again once every slot is drained.
    #[arg(long)]
    resume_on_completion: bool,
    /// Exit the daemon once every slot is drained.
    #[arg(long, conflicts_with = "resume_on_completion")]
    exit_on_completion: bool,
    /// Restart the daemon once every slot is drained.
    #[arg(long, conflicts_with_all = ["resume_on_completion", "exit_on_completion"])]
    restart_on_completion: bool,
    /// Re-read the configuration and resume once every slot is drained.
    #[arg(long, conflicts_with_all = ["resume_on_completion", "exit_on_completion", "restart_on_completion"])]
    reconfig_on_completion: bool,
    /// Cancel the drain in progress instead.
    #[arg(long)]
    cancel: bool,
    /// With --cancel: only if the drain in progress has this id.
    #[arg(long, requires = "cancel")]
    request_id: Option<String>,
}

/// `roost off`.
#[derive(Args, Debug)]
pub struct OffCmd {
    #[command(flatten)]
    target: Target,
    /// Let every job run to completion (default: graceful, which honours
    /// retirement and vacate time).
    #[arg(long, conflicts_with = "fast")]
    peaceful: bool,
    /// Graceful (the default).
    #[arg(long, conflicts_with_all = ["peaceful", "fast"])]
    graceful: bool,
    /// Kill every job at once.
    #[arg(long)]
    fast: bool,
}

/// `roost reconfig`.
#[derive(Args, Debug)]
pub struct ReconfigCmd {
    #[command(flatten)]
    target: Target,
}

/// `roost cron run [JOB…]`.
#[derive(clap::Subcommand, Debug)]
pub enum CronCmd {
    /// Run startd cron or benchmark jobs now (`OnDemand` ones, or any by
    /// name); with no name, every `OnDemand` job.
    Run {
        /// The jobs' names (`STARTD_CRON_JOBLIST`, `BENCHMARKS_JOBLIST`).
        jobs: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
}

/// The options HTCondor's tools spell with one dash (`-af`, `-constraint`,
/// `-how`, …); `normalize` doubles the dash so both spellings work.
const LONG_WITH_ONE_DASH: &[&str] = &[
    "-long",
    "-af",
    "-autoformat",
    "-constraint",
    "-how",
    "-graceful",
    "-quick",
    "-fast",
    "-peaceful",
    "-reason",
    "-start",
    "-check",
    "-cancel",
    "-request-id",
    "-resume-on-completion",
    "-exit-on-completion",
    "-restart-on-completion",
    "-reconfig-on-completion",
    "-config",
    "-socket",
    "-name",
    "-hold",
    "-run",
    "-nobatch",
    "-all",
    "-limit",
    "-match",
    "-ad",
    "-schedd",
    "-pool",
    "-total",
    "-json",
];

/// The admin subcommands, whose options may take one dash.
const ADMIN: &[&str] = &[
    "status",
    "who",
    "vacate",
    "drain",
    "off",
    "reconfig",
    "schedd",
    "submit",
    "q",
    "history",
    "rm",
    "hold",
    "release",
    "queue-hook",
];

/// Rewrites `roost drain -how fast` as `roost drain --how fast`, for the
/// admin subcommands only, and only for their own option names (never for
/// an option's value).
pub fn normalize(args: Vec<String>) -> Vec<String> {
    if !args.get(1).is_some_and(|a| ADMIN.contains(&a.as_str())) {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    for a in args {
        if !value_next && LONG_WITH_ONE_DASH.contains(&a.as_str()) {
            value_next = matches!(
                a.as_str(),
                "-how"
                    | "-reason"
                    | "-start"
                    | "-check"
                    | "-constraint"
                    | "-request-id"
                    | "-config"
                    | "-socket"
                    | "-name"
                    | "-limit"
                    | "-match"
                    | "-ad"
            );
            out.push(format!("-{a}"));
        } else {
            value_next = !value_next
                && matches!(
                    a.as_str(),
                    "--how"
                        | "--reason"
                        | "--start"
                        | "--check"
                        | "--constraint"
                        | "--request-id"
                        | "--config"
                        | "--socket"
                        | "--name"
                        | "--limit"
                        | "--match"
                        | "--ad"
                );
            out.push(a);
        }
    }
    out
}

pub(super) fn refused(r: &Response) -> ExitCode {
    eprintln!("roost: {}", r.message);
    ExitCode::from(1)
}

fn answered(r: Response) -> ExitCode {
    if !r.ok {
        return refused(&r);
    }
    println!("{}", r.message);
    ExitCode::SUCCESS
}

pub(super) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

pub(super) fn parse_ads(r: &Response) -> Result<Vec<ClassAd>> {
    r.ads
        .iter()
        .map(|t| parse_ad(t).map_err(|e| anyhow!("the daemon sent an unreadable slot ad: {e}")))
        .collect()
}

/// Runs `roost status`.
pub fn status(cmd: StatusCmd) -> Result<ExitCode> {
    if cmd.pool {
        return super::pool_cmd::pool_status(&cmd);
    }
    if cmd.schedd {
        return super::pool_cmd::schedd_status(&cmd);
    }
    let r = cmd.target.send(&Request::Status)?;
    if !r.ok {
        return Ok(refused(&r));
    }
    let t = now();
    let ads = select(
        parse_ads(&r)?,
        cmd.view.constraint.as_deref(),
        &cmd.slots,
        t,
    )?;
    let text = cmd.view.render(&ads, t, || status_table(&ads, t));
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// The ads `constraint` holds for (true, not merely defined) and, when
/// `slots` are named, only those.
pub fn select(
    ads: Vec<ClassAd>,
    constraint: Option<&str>,
    slots: &[String],
    now: i64,
) -> Result<Vec<ClassAd>> {
    let env = FixedEnv::new(now);
    let c = constraint
        .map(parse_expr)
        .transpose()
        .map_err(|e| anyhow!("-constraint is not a ClassAd expression: {e}"))?;
    Ok(ads
        .into_iter()
        .filter(|ad| {
            c.as_ref()
                .is_none_or(|c| matches!(ad.eval(c, &env), Value::Bool(true)))
        })
        .filter(|ad| {
            slots.is_empty() || {
                let name = text(ad, "Name", &env);
                slots
                    .iter()
                    .any(|s| *s == name || name.split('@').next() == Some(s.as_str()))
            }
        })
        .collect())
}

pub(super) fn text(ad: &ClassAd, attr: &str, env: &FixedEnv) -> String {
    match ad.eval_attr(attr, env) {
        Value::Str(s) => s.to_string_lossy(),
        Value::Undefined => "undefined".into(),
        v => value_to_string(&v),
    }
}

/// `-af`: each attribute's value, strings bare, one ad per line.
pub fn autoformat(ads: &[ClassAd], attrs: &[String], now: i64) -> String {
    let env = FixedEnv::new(now);
    let mut out = String::new();
    for ad in ads {
        let vals: Vec<String> = attrs
            .iter()
            .map(|a| match parse_expr(a) {
                Ok(e) => match ad.eval(&e, &env) {
                    Value::Str(s) => s.to_string_lossy(),
                    v => value_to_string(&v),
                },
                Err(_) => "error".into(),
            })
            .collect();
        out.push_str(&vals.join(" "));
        out.push('\n');
    }
    out
}

/// `D+HH:MM:SS`, as condor_status prints durations.
pub fn duration(secs: i64) -> String {
    let s = secs.max(0);
    format!(
        "{}+{:02}:{:02}:{:02}",
        s / 86400,
        (s / 3600) % 24,
        (s / 60) % 60,
        s % 60
    )
}

pub(super) fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        out.push_str(line.join(" ").trim_end());
        out.push('\n');
    }
    out
}

/// The slot states condor_status counts, in its order.
pub(super) const STATES: [&str; 7] = [
    "Owner",
    "Claimed",
    "Unclaimed",
    "Matched",
    "Preempting",
    "Drained",
    "Backfill",
];

/// condor_status's default view: one row per slot, then totals by state.
pub fn status_table(ads: &[ClassAd], now: i64) -> String {
    let env = FixedEnv::new(now);
    let mut rows = vec![
        [
            "Name",
            "OpSys",
            "Arch",
            "State",
            "Activity",
            "LoadAv",
            "Mem",
            "ActvtyTime",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let states = STATES;
    let mut totals = [0usize; 7];
    for ad in ads {
        let load = match ad.eval_attr("LoadAvg", &env) {
            Value::Real(r) => format!("{r:.3}"),
            Value::Int(i) => format!("{i}.000"),
            _ => "-".into(),
        };
        let since = match ad.eval_attr("EnteredCurrentActivity", &env) {
            Value::Int(t) => duration(now - t),
            _ => "-".into(),
        };
        let state = text(ad, "State", &env);
        if let Some(i) = states.iter().position(|s| *s == state) {
            totals[i] += 1;
        }
        rows.push(vec![
            text(ad, "Name", &env),
            text(ad, "OpSys", &env),
            text(ad, "Arch", &env),
            state,
            text(ad, "Activity", &env),
            load,
            text(ad, "Memory", &env),
            since,
        ]);
    }
    let mut out = table(&rows);
    out.push('\n');
    let mut head = vec!["Total".to_string()];
    head.extend(states.iter().map(|s| s.to_string()));
    let mut tot = vec![ads.len().to_string()];
    tot.extend(totals.iter().map(|n| n.to_string()));
    out.push_str(&table(&[head, tot]));
    out
}

/// The slots `roost who` shows: claimed, or running a starter.
fn working(ads: &[ClassAd], now: i64) -> impl Iterator<Item = &ClassAd> {
    let env = FixedEnv::new(now);
    ads.iter()
        .filter(move |ad| text(ad, "State", &env) == "Claimed" || ad.contains("StarterPid"))
}

/// condor_who's view: the jobs running on this machine.
pub fn who_table(ads: &[ClassAd], now: i64) -> String {
    let env = FixedEnv::new(now);
    let mut rows = vec![
        ["OWNER", "SLOT", "JOB", "STATE", "RUNTIME", "PID", "STARTER"]
            .map(String::from)
            .to_vec(),
    ];
    for ad in working(ads, now) {
        let dash = |v: String| if v == "undefined" { "-".into() } else { v };
        let runtime = match ad.eval_attr("JobStart", &env) {
            Value::Int(t) => duration(now - t),
            _ => "-".into(),
        };
        rows.push(vec![
            dash(text(ad, "RemoteOwner", &env)),
            text(ad, "Name", &env),
            dash(text(ad, "JobId", &env)),
            format!("{}/{}", text(ad, "State", &env), text(ad, "Activity", &env)),
            runtime,
            dash(text(ad, "JobPid", &env)),
            dash(text(ad, "StarterPid", &env)),
        ]);
    }
    if rows.len() == 1 {
        return "No job is running.\n".into();
    }
    table(&rows)
}

/// Runs `roost who`.
pub fn who(cmd: WhoCmd) -> Result<ExitCode> {
    let r = cmd.target.send(&Request::Status)?;
    if !r.ok {
        return Ok(refused(&r));
    }
    let ads = parse_ads(&r)?;
    let t = now();
    if cmd.json {
        let working: Vec<ClassAd> = working(&ads, t).cloned().collect();
        print!("{}", ads_to_json_list(&working));
    } else {
        print!("{}", who_table(&ads, t));
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks `node` for `action` through the pool this configuration (as a
/// tool) names, and waits for its reply.
pub(crate) fn pool_ask(
    config: Option<&str>,
    node: &str,
    action: crate::pool::inbox::Action,
) -> Result<Response> {
    let config = crate::actors::common::sysconfig::load_daemon_config(config, "TOOL")?;
    let pool = crate::pool::PoolSettings::from_config(&config)?.ok_or_else(|| {
        anyhow!("ROOST_POOL_ETCD is not set: -name reaches a node through the pool")
    })?;
    let reply = crate::pool::inbox::ask(&pool, node, action, Duration::from_secs(30))?;
    Ok(if reply.ok {
        Response::done(reply.message)
    } else {
        Response::refused(reply.message)
    })
}

/// Runs `roost vacate`.
pub fn vacate(cmd: VacateCmd) -> Result<ExitCode> {
    let req = Request::Vacate {
        slot: cmd.slot,
        fast: cmd.fast,
    };
    Ok(answered(cmd.target.send(&req)?))
}

/// Runs `roost drain`.
pub fn drain(cmd: DrainCmd) -> Result<ExitCode> {
    if cmd.cancel {
        let req = Request::CancelDrain {
            request_id: cmd.request_id,
        };
        return Ok(answered(cmd.target.send(&req)?));
    }
    let how = if cmd.fast {
        DrainHow::Fast
    } else if cmd.quick {
        DrainHow::Quick
    } else if cmd.graceful {
        DrainHow::Graceful
    } else {
        match cmd.how {
            How::Graceful => DrainHow::Graceful,
            How::Quick => DrainHow::Quick,
            How::Fast => DrainHow::Fast,
        }
    };
    let on_completion = if cmd.resume_on_completion {
        OnCompletion::Resume
    } else if cmd.exit_on_completion {
        OnCompletion::Exit
    } else if cmd.restart_on_completion {
        OnCompletion::Restart
    } else if cmd.reconfig_on_completion {
        OnCompletion::Reconfig
    } else {
        OnCompletion::Nothing
    };
    let req = Request::Drain {
        how,
        reason: cmd.reason,
        start: cmd.start,
        check: cmd.check,
        on_completion,
    };
    Ok(answered(cmd.target.send(&req)?))
}

/// Runs `roost off`.
pub fn off(cmd: OffCmd) -> Result<ExitCode> {
    let how = if cmd.fast {
        DrainHow::Fast
    } else if cmd.peaceful {
        DrainHow::Peaceful
    } else {
        DrainHow::Graceful
    };
    Ok(answered(cmd.target.send(&Request::Off { how })?))
}

/// Runs `roost reconfig`.
pub fn reconfig(cmd: ReconfigCmd) -> Result<ExitCode> {
    Ok(answered(cmd.target.send(&Request::Reconfig)?))
}

/// `roost cron run`.
pub fn cron(cmd: CronCmd) -> Result<ExitCode> {
    let CronCmd::Run { jobs, target } = cmd;
    Ok(answered(target.send(&Request::CronRun { jobs })?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn one_dash_options_are_accepted_for_admin_commands_only() {
        assert_eq!(
            normalize(args("roost status -af Name State -constraint -af")),
            args("roost status --af Name State --constraint -af")
        );
        assert_eq!(
            normalize(args("roost drain -how fast -start -fast -check true")),
            args("roost drain --how fast --start -fast --check true")
        );
        assert_eq!(
            normalize(args("roost classad eval -af")),
            args("roost classad eval -af")
        );
    }

    #[test]
    fn durations_print_as_condor_status_does() {
        assert_eq!(duration(0), "0+00:00:00");
        assert_eq!(duration(93784), "1+02:03:04");
        assert_eq!(duration(-5), "0+00:00:00");
    }

    fn ad(t: &str) -> ClassAd {
        parse_ad(t).unwrap()
    }

    #[test]
    fn status_selects_formats_and_counts() {
        let ads = vec![
            ad(
                r#"[Name="slot1@h"; State="Claimed"; Activity="Busy"; OpSys="LINUX"; Arch="X86_64"; LoadAvg=0.5; Memory=1024; EnteredCurrentActivity=100; RemoteOwner="alice"; JobId="7.0"; JobStart=90; JobPid=42; StarterPid=41]"#,
            ),
            ad(
                r#"[Name="slot2@h"; State="Unclaimed"; Activity="Idle"; OpSys="LINUX"; Arch="X86_64"; LoadAvg=0.0; Memory=1024; EnteredCurrentActivity=40]"#,
            ),
        ];
        let only = select(ads.clone(), Some(r#"State == "claimed""#), &[], 160).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(
            select(ads.clone(), None, &["slot2".into()], 160)
                .unwrap()
                .len(),
            1
        );
        assert!(select(ads.clone(), Some("State =="), &[], 160).is_err());
        assert_eq!(
            autoformat(
                &ads,
                &["Name".into(), "Memory * 2".into(), "Nope".into()],
                160
            ),
            "slot1@h 2048 undefined\nslot2@h 2048 undefined\n"
        );
        let t = status_table(&ads, 160);
        assert!(
            t.contains("slot1@h LINUX X86_64 Claimed   Busy     0.500  1024 0+00:01:00"),
            "{t}"
        );
        assert!(
            t.contains("slot2@h LINUX X86_64 Unclaimed Idle     0.000  1024 0+00:02:00"),
            "{t}"
        );
        assert!(t.contains("2     0     1       1"), "{t}");
        let w = who_table(&ads, 160);
        assert!(
            w.contains("alice slot1@h 7.0 Claimed/Busy 0+00:01:10 42  41"),
            "{w}"
        );
        assert!(!w.contains("slot2"), "{w}");
        assert_eq!(who_table(&ads[1..], 160), "No job is running.\n");
    }
}
