//! What `roost schedd` reads of its configuration: its socket, the
//! queue's knobs, how schedd cron's jobs run, and the job router's
//! configuration: the routes
//! (`JOB_ROUTER_ROUTE_NAMES`, `JOB_ROUTER_ROUTE_<name>`), the router's
//! knobs and the hooks of every keyword configured. A route that does not
//! read is left out with an error naming it and its line, as HTCondor
//! leaves it out; the others route.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use tracing::{error, info, warn};

use super::queue::{RouterSettings, ScheddSettings};
use crate::actors::common::cron_host::CronRunSettings;
use crate::actors::common::daemon::hook_user;
use crate::config::Config;
use crate::schedd::protocol::SOCKET_KNOB;
use crate::schedd::route::Route;
use crate::schedd::router::{RouterConfig, RouterHook};

/// The schedd socket's path under `config`: [`SOCKET_KNOB`], else
/// `$(LOCK)/roost_schedd.sock`, else `$(LOG)/roost_schedd.sock`.
pub fn socket_path(config: &Config) -> Option<PathBuf> {
    crate::admin::socket_path_of(config, SOCKET_KNOB, "roost_schedd.sock")
}

fn text(config: &Config, knob: &str) -> Result<Option<String>> {
    config.text(knob).map_err(|e| anyhow!(e))
}

/// The queue's knobs.
pub fn settings(config: &Config) -> Result<ScheddSettings> {
    let text = |k: &str| text(config, k);
    let host = text("FULL_HOSTNAME")?.unwrap_or_else(|| "localhost".into());
    let lease = config
        .int("ROOST_QUEUE_FETCH_LEASE")
        .map_err(|e| anyhow!(e))?
        .unwrap_or(300);
    if lease < 1 {
        return Err(anyhow!(
            "ROOST_QUEUE_FETCH_LEASE is {lease}: a lease must last at least a second"
        ));
    }
    Ok(ScheddSettings {
        name: text("SCHEDD_NAME")?.unwrap_or_else(|| host.clone()),
        domain: text("UID_DOMAIN")?.unwrap_or(host),
        lease,
        super_users: text("QUEUE_SUPER_USERS")?
            .unwrap_or_default()
            .split([',', ' ', '\t'])
            .filter(|u| !u.is_empty())
            .map(str::to_string)
            .collect(),
        history_jobs: config
            .int("ROOST_SCHEDD_HISTORY_JOBS")
            .map_err(|e| anyhow!(e))?
            .map_or(crate::schedd::queue::DEFAULT_HISTORY_JOBS, |n| {
                usize::try_from(n.max(0)).unwrap_or(usize::MAX)
            }),
        max_start_failures: config
            .int("ROOST_QUEUE_MAX_START_FAILURES")
            .map_err(|e| anyhow!(e))?
            .unwrap_or(crate::schedd::queue::DEFAULT_MAX_START_FAILURES),
        periodic_interval: u64::try_from(
            config
                .int("PERIODIC_EXPR_INTERVAL")
                .map_err(|e| anyhow!(e))?
                .unwrap_or(60)
                .max(1),
        )
        .unwrap_or(60),
        concurrency: concurrency_limits(config),
        transfer: match text("ROOST_SCHEDD_TRANSFER_ADDRESS")? {
            None => Some("127.0.0.1:0".into()),
            Some(a) if a.eq_ignore_ascii_case("none") || a.is_empty() => None,
            Some(a) => Some(a),
        },
    })
}

/// The concurrency limits' maxima: every knob named `<NAME>_LIMIT` or
/// `CONCURRENCY_LIMIT_DEFAULT[_<scope>]` whose value is a number.
fn concurrency_limits(config: &Config) -> crate::schedd::limits::Limits {
    let knobs: Vec<(String, String)> = (config.table().iter())
        .filter(|m| {
            let n = m.name.to_ascii_lowercase();
            n.ends_with("_limit") || n.starts_with("concurrency_limit_default")
        })
        .filter_map(|m| Some((m.name.clone(), config.get(&m.name).ok()??)))
        .collect();
    crate::schedd::limits::Limits::from_knobs(knobs.iter().map(|(n, v)| (n.as_str(), v.as_str())))
}

/// Schedd cron's jobs and how they run, from `config`.
pub fn cron_run(config: &Config, log_dir: &std::path::Path) -> Result<CronRunSettings> {
    Ok(CronRunSettings {
        roost_exe: std::env::current_exe().context("cannot find the roost executable")?,
        config_root: config.files().first().cloned(),
        env: crate::spawn::Environment::of_process(),
        user: hook_user(config),
        log_dir: log_dir.to_path_buf(),
    })
}

/// HTCondor's `JOB_ROUTER_NAME` default.
const DEFAULT_NAME: &str = "jobrouter";

/// The routes `JOB_ROUTER_ROUTE_NAMES` lists, in its order.
fn routes(config: &Config, has_constraint: bool) -> Result<Vec<Route>> {
    let names = config
        .text("JOB_ROUTER_ROUTE_NAMES")
        .map_err(|e| anyhow!(e))?
        .unwrap_or_default();
    let mut out: Vec<Route> = Vec::new();
    for name in names
        .split([',', ' ', '\t', '\n'])
        .filter(|n| !n.is_empty())
    {
        if name.eq_ignore_ascii_case("NAMES") {
            continue;
        }
        let knob = format!("JOB_ROUTER_ROUTE_{name}");
        let Some(text) = config.raw(&knob) else {
            error!(message = "A route in JOB_ROUTER_ROUTE_NAMES is not defined; it is left out.", route = %name, knob = %knob);
            continue;
        };
        if text.trim().is_empty() {
            warn!(message = "A route's definition is empty; it is left out.", knob = %knob);
            continue;
        }
        match Route::parse(name, text, config) {
            Ok(r) if r.requirements.is_none() && !has_constraint => {
                error!(message = "A route has no REQUIREMENTS and JOB_ROUTER_SOURCE_JOB_CONSTRAINT is not set; it is left out.", knob = %knob);
            }
            Ok(r) if out.iter().any(|o| o.name.eq_ignore_ascii_case(&r.name)) => {
                warn!(message = "A route is listed twice; the first one is used.", route = %name);
            }
            Ok(r) => {
                info!(message = "Route loaded.", route = %r.name, universe = r.universe,
                    max_jobs = r.max_jobs, max_idle_jobs = r.max_idle_jobs);
                out.push(r);
            }
            Err(e) => {
                error!(message = "A route does not read; it is left out.", knob = %knob, error = %e);
            }
        }
    }
    Ok(out)
}

/// The hooks configured under any keyword: every `<KW>_HOOK_<name>` knob
/// of the router's hooks whose program passes HTCondor's path checks.
fn hooks(config: &Config) -> HashMap<(String, RouterHook), std::path::PathBuf> {
    let mut keywords: HashSet<String> = HashSet::new();
    for m in config.table().iter() {
        let upper = m.name.to_ascii_uppercase();
        for h in RouterHook::ALL {
            for knob in h.knobs("") {
                if let Some(kw) = upper.strip_suffix(&knob[1..])
                    && let Some(kw) = kw.strip_suffix('_')
                    && !kw.is_empty()
                {
                    keywords.insert(kw.to_string());
                }
            }
        }
    }
    let mut out = HashMap::new();
    for kw in keywords {
        for h in RouterHook::ALL {
            let Some((knob, path)) = h
                .knobs(&kw)
                .into_iter()
                .find_map(|k| config.text(&k).ok().flatten().map(|p| (k, p)))
            else {
                continue;
            };
            let path = std::path::PathBuf::from(path.trim());
            match crate::hooks::validate(&path) {
                Ok(()) => {
                    out.insert((kw.clone(), h), path);
                }
                Err(e) => {
                    error!(message = "A router hook cannot be used; it is left out.", knob = %knob, error = %e)
                }
            }
        }
    }
    out
}

/// The router's settings (with no routes when none is configured: the
/// jobs a previous configuration routed still finish or are given back).
pub fn router_settings(
    config: &Config,
    queue: &ScheddSettings,
    log_dir: &Path,
) -> Result<Option<RouterSettings>> {
    for old in [
        "JOB_ROUTER_ENTRIES",
        "JOB_ROUTER_ENTRIES_FILE",
        "JOB_ROUTER_ENTRIES_CMD",
        "JOB_ROUTER_DEFAULTS",
    ] {
        if config.raw(old).is_some_and(|v| !v.trim().is_empty()) {
            warn!(
                message = "This router knob is no longer supported (as in HTCondor 25): write each route as JOB_ROUTER_ROUTE_<name> and list it in JOB_ROUTER_ROUTE_NAMES.",
                knob = old
            );
        }
    }
    let constraint = config
        .expr("JOB_ROUTER_SOURCE_JOB_CONSTRAINT")
        .map_err(|e| anyhow!(e))?;
    let routes = routes(config, constraint.is_some())?;
    if routes.is_empty() {
        // Jobs routed before (the log holds them) still finish or are
        // given back: the router runs, taking no new job.
        info!(message = "No routes (JOB_ROUTER_ROUTE_NAMES): no job is routed.");
    }
    let int = |k: &str| config.int(k).map_err(|e| anyhow!(e));
    let period = int("JOB_ROUTER_POLLING_PERIOD")?.unwrap_or(10);
    if period < 1 {
        return Err(anyhow!(
            "JOB_ROUTER_POLLING_PERIOD is {period}: the router polls at least every second"
        ));
    }
    let paths = hooks(config);
    let mut attrs_to_copy = BTreeMap::new();
    for (kw, _) in paths.keys() {
        if let Some(list) = config
            .text(&format!("{kw}_ATTRS_TO_COPY"))
            .map_err(|e| anyhow!(e))?
        {
            let attrs = list
                .split([',', ' ', '\t'])
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect();
            attrs_to_copy.insert(kw.clone(), attrs);
        }
    }
    let only_owner = (!nix::unistd::geteuid().is_root())
        .then(|| {
            nix::unistd::User::from_uid(nix::unistd::geteuid())
                .ok()
                .flatten()
        })
        .flatten()
        .map(|u| u.name);
    let cfg = RouterConfig {
        name: config
            .text("JOB_ROUTER_NAME")
            .map_err(|e| anyhow!(e))?
            .unwrap_or_else(|| DEFAULT_NAME.into()),
        routes,
        constraint,
        max_jobs: int("JOB_ROUTER_MAX_JOBS")?.unwrap_or(-1),
        keyword: config
            .text("JOB_ROUTER_HOOK_KEYWORD")
            .map_err(|e| anyhow!(e))?,
        release_on_hold: config
            .bool("JOB_ROUTER_RELEASE_ON_HOLD")
            .map_err(|e| anyhow!(e))?
            .unwrap_or(true),
        hooks: paths.keys().cloned().collect(),
        attrs_to_copy,
        only_owner,
        schedd: queue.name.clone(),
        domain: queue.domain.clone(),
        cleanup_tries: u32::try_from(int("ROOST_ROUTER_CLEANUP_TRIES")?.unwrap_or(30).max(0))
            .unwrap_or(u32::MAX),
    };
    let timeout = int("ROOST_ROUTER_HOOK_TIMEOUT")?.unwrap_or(300).max(1);
    info!(
        message = "Job routing on.",
        routes = cfg.routes.len(),
        period,
        hooks = paths.len()
    );
    Ok(Some(RouterSettings {
        cfg,
        period: Duration::from_secs(u64::try_from(period).unwrap_or(10)),
        paths,
        hook_timeout: Duration::from_secs(u64::try_from(timeout).unwrap_or(300)),
        env: crate::spawn::Environment::of_process(),
        cwd: log_dir.to_path_buf(),
    }))
}
