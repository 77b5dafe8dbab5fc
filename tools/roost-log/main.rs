//! `roost-log`: read Roost's event log. `list` and `follow` print events
//! with filters (actor, slot, claim, kind, time); `state` replays the log
//! to any point and `diff` compares two; `tui` is an interactive view; `claims` prints the audit trail of every claim; `verify`
//! and `repair` check the log and set damaged records aside. Works on a
//! log a running daemon holds, through the daemon's admin socket.

mod diff;
mod filter;
mod source;
mod state;
mod tui;

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand};
use roost::events::{Envelope, Event, SledStore, StoreError};
use roost::policy::slot::SlotEvent;
use roost::startd::Replay;
use roost::startd::audit::{Audit, ClaimRecord};

use filter::{Filter, parse_time, show_time};

/// `roost-log` reads millions of events, each decoded into a few small
/// allocations: mimalloc makes that about a quarter faster. (The daemon keeps
/// the system allocator, which holds less memory when idle.)
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use source::Source;
use state::state_text;

/// Read Roost's event log.
#[derive(Parser, Debug)]
#[command(name = "roost-log", version, about)]
struct Cli {
    /// The event log directory (default: `$(SPOOL)/roost-events` of the
    /// configuration `CONDOR_CONFIG` names).
    #[arg(long, value_name = "DIR", global = true)]
    log: Option<PathBuf>,
    /// The HTCondor configuration file to find the log from.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug, Default, Clone)]
struct FilterArgs {
    /// Only this actor's events (`slot1`, `slot1_2`, `daemon`, a hook or
    /// starter id).
    #[arg(long)]
    actor: Option<String>,
    /// Only events about this slot: its own, and its hooks' and starters'.
    #[arg(long)]
    slot: Option<String>,
    /// Only events of this claim number (with `--slot`, of that slot's).
    #[arg(long)]
    claim: Option<u64>,
    /// Only events of this kind: `Slot`, `Hook.Finished`,
    /// `Slot.ActivityChanged`, … (case-insensitive prefix).
    #[arg(long)]
    kind: Option<String>,
    /// From this time: `2026-11-22 10:00`, `2026-11-22T10:00:00Z`, epoch
    /// seconds as `@1764000000`, or relative: `-1h`, `-30m`, `-2d`.
    #[arg(long, allow_hyphen_values = true)]
    since: Option<String>,
    /// Up to this time (same forms as `--since`).
    #[arg(long, allow_hyphen_values = true)]
    until: Option<String>,
    /// Start at this sequence number.
    #[arg(long, default_value_t = 1)]
    from: u64,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print events in order.
    List(FilterArgs),
    /// Print new events as they are appended (Ctrl-C to stop).
    Follow {
        #[command(flatten)]
        filter: FilterArgs,
        /// Also print this many events from before now.
        #[arg(long, short = 'n', default_value_t = 10)]
        lines: u64,
    },
    /// The state of every slot (or one actor) at a point of the log.
    State {
        /// A sequence number, or a time (as `--since` takes); default: the end.
        #[arg(long, allow_hyphen_values = true)]
        at: Option<String>,
        /// Only this slot.
        #[arg(long)]
        actor: Option<String>,
        /// The whole replayed state as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What changed between two points of the log: every field of every
    /// slot (or one), the starters and hooks that started or ended.
    Diff {
        /// The first point: a sequence number or a time.
        #[arg(allow_hyphen_values = true)]
        a: String,
        /// The second point.
        #[arg(allow_hyphen_values = true)]
        b: String,
        /// Only this slot.
        #[arg(long)]
        actor: Option<String>,
        /// One JSON object: the two points and every change.
        #[arg(long)]
        json: bool,
    },
    /// An interactive view: the slots' timeline, the events, the selected
    /// event, why it happened and its slot's state after it.
    Tui {
        /// Only the last this many events (the whole log is read).
        #[arg(long, default_value_t = 200_000)]
        last: usize,
    },
    /// The audit trail: every claim, its job, hooks, timing and ending.
    Claims {
        /// Only claims of this slot.
        #[arg(long)]
        slot: Option<String>,
        /// Only claims with an anomaly.
        #[arg(long)]
        anomalies: bool,
        /// One JSON object per claim.
        #[arg(long)]
        json: bool,
    },
    /// Check every record decodes, numbers are contiguous and the per-actor
    /// index matches the log. Exit status 1 when something is wrong.
    Verify {
        /// One JSON object: ok, the events' range, every problem.
        #[arg(long)]
        json: bool,
    },
    /// Set records that do not decode aside (tree `quarantine`, kept) and
    /// rebuild the per-actor index. The daemon must be stopped.
    Repair {
        /// One JSON object: what was done.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script (`source <(roost-log completions bash)`).
    Completions(roost::cli::docs::CompletionsCmd),
    /// Write the manual pages (roost-log.1, roost-log-list.1, …) into a
    /// directory.
    Man(roost::cli::docs::ManCmd),
}

fn summary(e: &Event) -> String {
    match e {
        Event::Slot(SlotEvent::ActivityChanged {
            state,
            activity,
            transition,
            why,
            ..
        }) => format!("-> {state}/{activity} (transition {transition}, {why})"),
        Event::Slot(SlotEvent::FetchesEmpty {
            at,
            first,
            count,
            hook_seconds,
            ..
        }) => format!(
            "Slot.FetchesEmpty {count} FETCH_WORK polls found no work over {} s \
             (their hooks ran {hook_seconds:.1} s in all)",
            at - first
        ),
        Event::Slot(SlotEvent::Snapshot { slot, .. }) => {
            let slot = slot.slot();
            format!(
                "Slot.Snapshot {}/{} claim={} next_claim={}",
                slot.state,
                slot.activity,
                slot.claim
                    .as_ref()
                    .map_or("none".into(), |c| c.id.to_string()),
                slot.next_claim
            )
        }
        Event::Slot(
            SlotEvent::ClaimCreated { claim, .. } | SlotEvent::PreemptingClaimQueued { claim, .. },
        ) => format!(
            "{} claim {} job {} rank {}{}",
            filter::kind_of(e),
            claim.id,
            roost::startd::audit::job_label(&claim.job),
            claim.rank,
            if claim.fetched { " (fetched)" } else { "" }
        ),
        other => generic_summary(other),
    }
}

/// `Kind.Variant field=value …` from the event's serde form.
fn generic_summary(e: &Event) -> String {
    fn flat(v: &serde_json::Value, path: &mut Vec<String>, fields: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) if m.len() == 1 && path.len() < 2 => {
                if let Some((k, inner)) = m.iter().next() {
                    path.push(k.clone());
                    flat(inner, path, fields);
                }
            }
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    if k != "at" {
                        fields.push(format!("{k}={v}"));
                    }
                }
            }
            serde_json::Value::String(s) => path.push(s.clone()),
            other => fields.push(other.to_string()),
        }
    }
    let v = serde_json::to_value(e).unwrap_or_default();
    let (mut path, mut fields) = (Vec::new(), Vec::new());
    flat(&v, &mut path, &mut fields);
    let head = path.join(".");
    if fields.is_empty() {
        head
    } else {
        format!("{head} {}", fields.join(" "))
    }
}

fn line(env: &Envelope, json: bool) -> String {
    if json {
        serde_json::to_string(env).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    } else {
        format!(
            "{:>8}  {}  {:<12}  {}",
            env.seq,
            show_time(env.time),
            env.actor,
            summary(&env.event)
        )
    }
}

/// The log directory: `--log`, else the configuration's SPOOL.
fn log_dir(cli: &Cli) -> Result<PathBuf, String> {
    if let Some(d) = &cli.log {
        return Ok(d.clone());
    }
    let config = roost::actors::common::sysconfig::load_startd_config(cli.config.as_deref())
        .map_err(|e| format!("no --log given, and the configuration cannot be read: {e:#}"))?;
    match config.get("SPOOL") {
        Ok(Some(s)) if !s.trim().is_empty() => Ok(PathBuf::from(s.trim()).join("roost-events")),
        _ => Err("no --log given, and the configuration sets no SPOOL".into()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let made = match &cli.command {
        Command::Completions(c) => Some(roost::cli::docs::completions(c, Cli::command())),
        Command::Man(m) => Some(roost::cli::docs::man(m, Cli::command())),
        _ => None,
    };
    if let Some(made) = made {
        return made.unwrap_or_else(|e| {
            eprintln!("roost-log: {e:#}");
            ExitCode::from(2)
        });
    }
    match run(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("roost-log: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> Result<ExitCode, String> {
    let dir = log_dir(cli)?;
    if let Command::Repair { json } = cli.command {
        return repair(&dir, json);
    }
    let source = Source::open(&dir)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let now = jiff::Timestamp::now().as_second();
    match &cli.command {
        Command::List(f) => {
            let mut filter = Filter::new(f, now)?;
            let mut bad = 0;
            for item in source.read(f.from, f.actor.as_deref()) {
                match item {
                    Ok(env) => {
                        if filter.past_end(&env) {
                            break;
                        }
                        if filter.keep(&env) && writeln!(out, "{}", line(&env, f.json)).is_err() {
                            return Ok(ExitCode::from(1));
                        }
                    }
                    Err(e) => {
                        eprintln!("roost-log: {e}");
                        bad += 1;
                    }
                }
            }
            let _ = out.flush();
            Ok(if bad > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Follow { filter: f, lines } => {
            let mut filter = Filter::new(f, now)?;
            let mut next = if f.from > 1 {
                f.from
            } else {
                (source.last_seq() + 1).saturating_sub(*lines).max(1)
            };
            loop {
                for item in source.read(next, None) {
                    match item {
                        Ok(env) => {
                            next = env.seq + 1;
                            if filter.past_end(&env) {
                                return Ok(ExitCode::SUCCESS);
                            }
                            if filter.keep(&env) && writeln!(out, "{}", line(&env, f.json)).is_err()
                            {
                                return Ok(ExitCode::SUCCESS);
                            }
                        }
                        Err(e) => {
                            eprintln!("roost-log: {e}");
                            break;
                        }
                    }
                }
                if out.flush().is_err() {
                    return Ok(ExitCode::SUCCESS);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        Command::State { at, actor, json } => {
            let stop = match at {
                None => At::End,
                Some(s) => At::parse(s, now)?,
            };
            let mut replay = Replay::default();
            let mut items = source.read(1, None).peekable();
            replay_to(&mut replay, &mut items, stop);
            only(&mut replay, actor.as_deref())?;
            let text = if *json {
                serde_json::to_string_pretty(&replay).map_err(|e| e.to_string())?
            } else {
                state_text(&replay)
            };
            let _ = writeln!(out, "{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Diff { a, b, actor, json } => {
            let (a, b) = (At::parse(a, now)?, At::parse(b, now)?);
            let mut replay = Replay::default();
            let mut items = source.read(1, None).peekable();
            replay_to(&mut replay, &mut items, a);
            let mut before = replay.clone();
            replay_to(&mut replay, &mut items, b);
            let mut after = replay;
            // A slot may exist at one point only (a dynamic slot).
            let had = only(&mut before, actor.as_deref()).is_ok();
            if only(&mut after, actor.as_deref()).is_err() && !had {
                return Err(format!(
                    "no slot {} at either point of the log",
                    actor.as_deref().unwrap_or("")
                ));
            }
            let changes = diff::changes(&before, &after);
            if *json {
                let point =
                    |r: &Replay| serde_json::json!({"seq": r.last_seq, "time": r.last_time});
                let doc = serde_json::json!({
                    "from": point(&before),
                    "to": point(&after),
                    "changes": changes,
                });
                let _ = writeln!(out, "{doc}");
                return Ok(ExitCode::SUCCESS);
            }
            let _ = writeln!(
                out,
                "from record {} ({}) to record {} ({}): {} change(s)",
                before.last_seq,
                show_time(before.last_time),
                after.last_seq,
                show_time(after.last_time),
                changes.len()
            );
            for c in changes {
                let _ = writeln!(out, "{c}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Claims {
            slot,
            anomalies,
            json,
        } => {
            let mut audit = Audit::default();
            let mut bad = 0;
            for item in source.read(1, None) {
                match item {
                    Ok(env) => audit.apply(&env),
                    Err(e) => {
                        eprintln!("roost-log: {e}");
                        bad += 1;
                    }
                }
            }
            // Claims whose events retention cut, kept beside the log.
            let mut records = Vec::new();
            let kept = dir.join(roost::events::KEPT_CLAIMS_FILE);
            if let Ok(text) = std::fs::read_to_string(&kept) {
                for (n, line) in text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                {
                    match serde_json::from_str::<ClaimRecord>(line) {
                        Ok(c) => records.push(c),
                        Err(e) => {
                            eprintln!("roost-log: {}:{}: {e}", kept.display(), n + 1);
                            bad += 1;
                        }
                    }
                }
            }
            records.extend(audit.finish());
            for c in roost::startd::audit::join(records) {
                if slot.as_ref().is_some_and(|s| *s != c.slot)
                    || (*anomalies && c.anomalies.is_empty())
                {
                    continue;
                }
                let text = if *json {
                    serde_json::to_string(&c).map_err(|e| e.to_string())?
                } else {
                    claim_text(&c)
                };
                if writeln!(out, "{text}").is_err() {
                    return Ok(ExitCode::from(1));
                }
            }
            let _ = out.flush();
            Ok(if bad > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Verify { json } => {
            let problems = match &source {
                Source::Local(s) => s.verify(),
                Source::Remote(_) => verify_stream(&source),
            };
            let first = match &source {
                Source::Local(s) => s.reader().first_seq().max(1),
                Source::Remote(_) => 1,
            };
            let last = source.last_seq();
            if *json {
                let doc = serde_json::json!({
                    "ok": problems.is_empty(),
                    "first": first,
                    "last": last,
                    "events": (last + 1).saturating_sub(first),
                    "problems": problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
                });
                let _ = writeln!(out, "{doc}");
                return Ok(if problems.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                });
            }
            for p in &problems {
                let _ = writeln!(out, "{p}");
            }
            if problems.is_empty() {
                if first > 1 {
                    let _ = writeln!(
                        out,
                        "ok: {} events ({first} to {last}; earlier ones were cut by retention)",
                        last + 1 - first
                    );
                } else {
                    let _ = writeln!(out, "ok: {last} events");
                }
                Ok(ExitCode::SUCCESS)
            } else {
                Ok(ExitCode::from(1))
            }
        }
        Command::Tui { last } => {
            // The events not shown still make the state the shown ones follow.
            let mut base = Replay::default();
            let mut events = std::collections::VecDeque::new();
            for item in source.read(1, None) {
                match item {
                    Ok(env) => {
                        if events.len() == (*last).max(1)
                            && let Some(old) = events.pop_front()
                        {
                            base.apply(&old);
                        }
                        events.push_back(env);
                    }
                    Err(e) => eprintln!("roost-log: {e}"),
                }
            }
            drop(out);
            tui::run(base, events.into()).map_err(|e| format!("terminal: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Repair { .. } | Command::Completions(_) | Command::Man(_) => Ok(ExitCode::SUCCESS),
    }
}

/// A point of the log.
#[derive(Clone, Copy)]
enum At {
    End,
    Seq(u64),
    Time(i64),
}

impl At {
    /// A sequence number (a plain integer) or a time (as `--since`).
    fn parse(s: &str, now: i64) -> Result<At, String> {
        match s.parse::<u64>() {
            Ok(seq) => Ok(At::Seq(seq)),
            Err(_) => parse_time(s, now).map(At::Time),
        }
    }
}

/// Applies events from `items` to `replay` up to and including `stop`.
fn replay_to(
    replay: &mut Replay,
    items: &mut std::iter::Peekable<Box<dyn Iterator<Item = Result<Envelope, StoreError>> + '_>>,
    stop: At,
) {
    loop {
        let past = match items.peek() {
            None => return,
            Some(Err(_)) => false,
            Some(Ok(env)) => match stop {
                At::End => false,
                At::Seq(s) => env.seq > s,
                At::Time(t) => env.time > t,
            },
        };
        if past {
            return;
        }
        match items.next() {
            Some(Ok(env)) => replay.apply(&env),
            Some(Err(e)) => replay.problems.push(e.to_string()),
            None => return,
        }
    }
}

/// Keeps only slot `actor` (all when `None`); an error when it has none.
fn only(replay: &mut Replay, actor: Option<&str>) -> Result<(), String> {
    if let Some(a) = actor {
        replay.slots.retain(|k, _| k == a);
        replay.starters.retain(|_, s| s.slot == a);
        replay.hooks.retain(|_, h| h.slot == a);
        if replay.slots.is_empty() {
            return Err(format!("no slot {a} at that point of the log"));
        }
    }
    Ok(())
}

/// What a reader outside the daemon can check: every record decodes and
/// the numbers are contiguous.
fn verify_stream(source: &Source) -> Vec<String> {
    let mut problems = Vec::new();
    let mut expected = None;
    for item in source.read(1, None) {
        match item {
            Ok(env) => {
                if let Some(x) = expected
                    && env.seq != x
                {
                    problems.push(roost::events::missing(x, env.seq - 1));
                }
                expected = Some(env.seq + 1);
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    problems
}

fn repair(dir: &std::path::Path, json: bool) -> Result<ExitCode, String> {
    if !dir.join("db").is_file() {
        return Err(format!("{}: no event log here", dir.display()));
    }
    let mut store = SledStore::open(dir).map_err(|e| e.to_string())?;
    let report = store.repair().map_err(|e| e.to_string())?;
    if json {
        let doc = serde_json::json!({
            "repaired": !report.is_empty(),
            "actions": report.iter().map(ToString::to_string).collect::<Vec<_>>(),
        });
        println!("{doc}");
        return Ok(ExitCode::SUCCESS);
    }
    for line in &report {
        println!("{line}");
    }
    if report.is_empty() {
        println!("nothing to repair");
    }
    Ok(ExitCode::SUCCESS)
}

fn claim_text(c: &ClaimRecord) -> String {
    let t = |x: Option<i64>| x.map_or("-".to_string(), show_time);
    let mut s = format!(
        "{}#{}  job {} ({}{})  {}",
        c.slot,
        c.claim,
        c.job,
        if c.owner.is_empty() { "?" } else { &c.owner },
        c.keyword
            .as_ref()
            .map(|k| format!(", keyword {k}"))
            .unwrap_or_default(),
        if c.fetched { "fetched" } else { "requested" },
    );
    s.push_str(&format!(
        "\n    fetched {}  accepted {}  started {}  ended {}",
        t(c.fetched_at),
        show_time(c.accepted_at),
        match c.started_at.as_slice() {
            [] => "-".to_string(),
            v => v
                .iter()
                .map(|x| show_time(*x))
                .collect::<Vec<_>>()
                .join(", "),
        },
        t(c.ended_at)
    ));
    if c.begins_before_log {
        s.push_str("\n    began before this log (its beginning is in an archive)");
    }
    if c.suspensions > 0 {
        s.push_str(&format!(
            "\n    suspended {} time(s), {} s in all",
            c.suspensions, c.suspended_secs
        ));
    }
    s.push_str(&format!(
        "\n    ended: {}{}; job: {}",
        c.end_cause.as_deref().unwrap_or("not yet"),
        c.ending
            .as_ref()
            .map(|(at, why)| format!(", began to end {} ({why})", show_time(*at)))
            .unwrap_or_default(),
        c.job_outcome.as_deref().unwrap_or("no record")
    ));
    for h in &c.hooks {
        s.push_str(&format!(
            "\n    hook {}{}: {}{}",
            h.hook,
            if h.args.is_empty() {
                String::new()
            } else {
                format!(" {}", h.args.join(" "))
            },
            h.exit,
            if h.outcome.is_empty() {
                String::new()
            } else {
                format!(" ({})", h.outcome)
            }
        ));
    }
    for a in &c.anomalies {
        s.push_str(&format!("\n    ! {a}"));
    }
    s
}
