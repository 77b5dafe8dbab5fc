//! `roost status -schedd` and `roost status -pool`: the ads of other
//! daemons than the local startd — the `roost schedd`'s own ad, asked on
//! its socket, and every node's slots in the pool, read from etcd
//! (`ROOST_POOL_ETCD`, `pool`), shown as condor_status shows them.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, anyhow};

use super::admin_cmd::{
    STATES, StatusCmd, now, parse_ads, refused, select, status_table, table, text,
};
use crate::admin::Response;
use crate::classad::{ClassAd, FixedEnv, Value, parse_ad};
use crate::pool::PoolSettings;

/// `roost status -schedd`: the schedd's ad.
pub(super) fn schedd_status(cmd: &StatusCmd) -> Result<ExitCode> {
    use crate::schedd::protocol::{SOCKET_KNOB, ScheddRequest};
    let path = cmd
        .target
        .path("SCHEDD", SOCKET_KNOB, "roost_schedd.sock")?;
    let r: Response = crate::admin::call_with(&path, &ScheddRequest::Ad, Duration::from_secs(30))?;
    if !r.ok {
        return Ok(refused(&r));
    }
    let t = now();
    let ads = select(parse_ads(&r)?, cmd.view.constraint.as_deref(), &[], t)?;
    let text = cmd.view.render(&ads, t, || schedd_table(&ads, t));
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// condor_status -schedd's table: a line per schedd, then the totals.
fn schedd_table(ads: &[ClassAd], now: i64) -> String {
    let env = FixedEnv::new(now);
    let int = |ad: &ClassAd, a: &str| match ad.eval_attr(a, &env) {
        Value::Int(n) => n,
        _ => 0,
    };
    let counts = ["TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs"];
    let mut out = format!(
        "{:<24} {:<24} {:>11} {:>10} {:>10}\n\n",
        "Name", "Machine", "RunningJobs", "IdleJobs", "HeldJobs"
    );
    let mut sum = [0i64; 3];
    for ad in ads {
        let n = counts.map(|a| int(ad, a));
        for (s, v) in sum.iter_mut().zip(n) {
            *s += v;
        }
        out.push_str(&format!(
            "{:<24} {:<24} {:>11} {:>10} {:>10}\n",
            text(ad, "Name", &env),
            text(ad, "Machine", &env),
            n[0],
            n[1],
            n[2]
        ));
    }
    out.push_str(&format!(
        "\n{:<24} {:>18} {:>18} {:>18}\n\n{:<24} {:>18} {:>18} {:>18}\n",
        "", counts[0], counts[1], counts[2], "Total", sum[0], sum[1], sum[2]
    ));
    out
}

/// `roost status -pool`: every slot ad the pool holds (with `-schedd`,
/// every schedd's ad).
pub(super) fn pool_status(cmd: &StatusCmd) -> Result<ExitCode> {
    let config =
        crate::actors::common::sysconfig::load_daemon_config(cmd.target.config(), "STARTD")?;
    let pool = PoolSettings::from_config(&config)
        .map_err(|e| anyhow!(e))?
        .ok_or_else(|| anyhow!("no pool: ROOST_POOL_ETCD is not set"))?;
    let my_type = if cmd.schedd { "Scheduler" } else { "Machine" };
    let kvs = pool
        .client()
        .range_prefix(&pool.ad_key(my_type, ""))
        .map_err(|e| anyhow!(e))?;
    let mut ads = Vec::with_capacity(kvs.len());
    for kv in kvs {
        match std::str::from_utf8(&kv.value)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_ad(t).map_err(|e| e.to_string()))
        {
            Ok(ad) => ads.push(ad),
            Err(e) => eprintln!("roost: warning: the ad at {} does not parse: {e}", kv.key),
        }
    }
    let t = now();
    let ads = select(ads, cmd.view.constraint.as_deref(), &cmd.slots, t)?;
    let text = if cmd.schedd {
        cmd.view.render(&ads, t, || schedd_table(&ads, t))
    } else if cmd.total {
        totals_table(&ads, t)
    } else {
        cmd.view.render(&ads, t, || status_table(&ads, t))
    };
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// condor_status -total: slots by state, a row per `Arch/OpSys`, then all.
pub(super) fn totals_table(ads: &[ClassAd], now: i64) -> String {
    let env = FixedEnv::new(now);
    let mut by: std::collections::BTreeMap<String, [usize; 8]> = Default::default();
    let mut all = [0usize; 8];
    for ad in ads {
        let key = format!("{}/{}", text(ad, "Arch", &env), text(ad, "OpSys", &env));
        let row = by.entry(key).or_default();
        let state = text(ad, "State", &env);
        for r in [&mut *row, &mut all] {
            r[0] += 1;
            if let Some(i) = STATES.iter().position(|s| *s == state) {
                r[i + 1] += 1;
            }
        }
    }
    let mut head = vec![String::new(), "Total".to_string()];
    head.extend(STATES.iter().map(|s| s.to_string()));
    let line = |name: &str, n: &[usize; 8]| {
        let mut r = vec![name.to_string()];
        r.extend(n.iter().map(usize::to_string));
        r
    };
    let mut rows = vec![head];
    rows.extend(by.iter().map(|(k, n)| line(k, n)));
    let mut out = table(&rows);
    out.push('\n');
    out.push_str(&table(&[line("Total", &all)]));
    out
}
