//! What a starter is asked to run: the request for a job (the job and slot
//! ads, the hooks chosen for it, the intervals, the job owner's account,
//! how the starter outlives the daemon) from the daemon's settings.

use tracing::warn;

use super::hook::hook_timeout;
use super::shared::Shared;
use crate::classad::unparse::{OldOrder, ad_to_old};
use crate::classad::{ClassAd, FixedEnv, Value};
use crate::config::daemon_knobs::DaemonSettings;
use crate::hooks;
use crate::starter::protocol::{Request, StarterHooks};

/// What a starter is asked to do for `job`, with `hooks`, in slot `slot`,
/// whose ad is `machine`; `vacate_grace` is how long the job may take to
/// leave if the daemon goes away.
pub fn starter_request(
    shared: &Shared,
    settings: &DaemonSettings,
    slot: &str,
    job: &ClassAd,
    hooks: StarterHooks,
    machine: &ClassAd,
    vacate_grace: u64,
) -> Request {
    Request {
        slot: slot.to_string(),
        job: ad_to_old(job, OldOrder::Bytes),
        machine: ad_to_old(machine, OldOrder::Bytes),
        execute: shared.dirs.execute.clone(),
        hooks,
        device_env: settings.device_env.env(machine),
        update_intervals: settings.starter_update_intervals,
        hook_env: shared.hooks.env.clone(),
        stdout_limit: settings.pipe_buffer_max,
        vacate_grace,
        cgroup_base: settings.base_cgroup.clone(),
        cgroup_home: shared.cgroup_home.clone(),
        lost: None,
        protocol: crate::starter::protocol::PROTOCOL,
        // Named by `StarterActor::launch`.
        actor: String::new(),
        reattach: shared.dirs.socket.clone(),
        orphan_timeout: settings.starter_orphan_timeout,
        leftover: (settings.starter_orphan_timeout > 0).then(|| shared.dirs.starter_leftovers()),
        owner: match job.eval_attr("Owner", &FixedEnv::new(0)) {
            Value::Str(o) if !o.is_empty() => shared.starters.account(
                &o.to_string_lossy(),
                shared.clock.now(),
                settings.passwd_cache_refresh,
            ),
            _ => None,
        },
        debug_log: tracing::enabled!(target: "starter", tracing::Level::DEBUG),
    }
}

fn defines_hooks(settings: &DaemonSettings, keyword: &str) -> bool {
    ["PREPARE_JOB", "UPDATE_JOB_INFO", "JOB_EXIT"]
        .iter()
        .any(|h| settings.hook_path(keyword, h).is_some())
}

/// The starter hooks for a job: `STARTER_JOB_HOOK_KEYWORD`, else the job's
/// `HookKeyword` when that keyword defines hooks, else
/// `STARTER_DEFAULT_JOB_HOOK_KEYWORD`. Paths that fail HTCondor's checks,
/// and arguments that do not split, are left out (and logged).
///
/// A job the node fetched under keyword `fetched_with` whose own keyword
/// is another also gets the fetcher's hooks (`StarterHooks::fetcher`),
/// unless `STARTER_JOB_HOOK_KEYWORD` forces one keyword: whoever handed
/// out the job hears of its end whatever keyword the job names.
pub fn starter_hooks(
    settings: &DaemonSettings,
    job: &ClassAd,
    fetched_with: Option<&str>,
) -> StarterHooks {
    let from_job = match job.eval_attr("HookKeyword", &FixedEnv::new(0)) {
        Value::Str(s) => Some(s.to_string_lossy()).filter(|k| defines_hooks(settings, k)),
        _ => None,
    };
    let forced = settings.starter_job_hook_keyword.clone();
    let keyword = (forced.clone())
        .or(from_job)
        .or_else(|| settings.starter_default_job_hook_keyword.clone());
    let fetcher = fetched_with
        .filter(|f| forced.is_none() && !f.is_empty() && keyword.as_deref() != Some(*f))
        .filter(|f| defines_hooks(settings, f))
        .map(|f| Box::new(keyword_hooks(settings, f)));
    let Some(kw) = keyword else {
        return StarterHooks {
            fetcher,
            ..StarterHooks::default()
        };
    };
    StarterHooks {
        fetcher,
        ..keyword_hooks(settings, &kw)
    }
}

/// The starter hooks keyword `kw` defines.
fn keyword_hooks(settings: &DaemonSettings, kw: &str) -> StarterHooks {
    let checked = |hook: &str| {
        let p = settings.hook_path(kw, hook)?.to_path_buf();
        match hooks::validate(&p) {
            Ok(()) => Some(p),
            Err(e) => {
                warn!(message = "Starter hook refused.", hook, error = %e);
                None
            }
        }
    };
    let args = settings.hook_args(kw, "PREPARE_JOB").to_vec();
    let timeout = |hook: &str| hook_timeout(settings, kw, hook);
    StarterHooks {
        prepare_job: checked("PREPARE_JOB"),
        prepare_job_args: args,
        update_job_info: checked("UPDATE_JOB_INFO"),
        job_exit: checked("JOB_EXIT"),
        timeouts: [
            timeout("PREPARE_JOB"),
            timeout("UPDATE_JOB_INFO"),
            timeout("JOB_EXIT"),
        ],
        keyword: Some(kw.to_string()),
        fetcher: None,
    }
}
