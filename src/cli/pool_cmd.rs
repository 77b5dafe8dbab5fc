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
    let config = super::sysconfig::load_daemon_config(cmd.target.config(), "STARTD")?;
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

/// `roost pool-load`: synthetic nodes' slot ads written into the pool,
/// for measuring it (`tools/bench_pool.sh`).
#[derive(clap::Args, Debug)]
pub struct PoolLoadCmd {
    /// The root configuration file naming the pool.
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// How many nodes.
    #[arg(long, default_value_t = 10_000)]
    nodes: usize,
    /// Slots per node.
    #[arg(long, default_value_t = 2)]
    slots: usize,
    /// Seconds the ads live (their lease).
    #[arg(long, default_value_t = 600)]
    ttl: i64,
}

/// A synthetic slot ad of about 2 KB, as a startd of the pool writes one.
fn synthetic_ad(node: usize, slot: usize, now: i64) -> String {
    let state = if node.is_multiple_of(3) {
        "Claimed"
    } else {
        "Unclaimed"
    };
    let activity = if node.is_multiple_of(3) {
        "Busy"
    } else {
        "Idle"
    };
    let mut ad = format!(
        "[ MyType = \"Machine\"; Name = \"slot{slot}@node{node:05}.pool.test\"; \
         Machine = \"node{node:05}.pool.test\"; State = \"{state}\"; Activity = \"{activity}\"; \
         OpSys = \"LINUX\"; Arch = \"X86_64\"; Cpus = 1; Memory = 4096; Disk = 104857600; \
         LoadAvg = 0.{load:03}; EnteredCurrentActivity = {now}; SlotID = {slot}; \
         Start = (KeyboardIdle > 15 * 60) && (LoadAvg < 0.3); Rank = 0; \
         Requirements = START && (TARGET.RequestCpus <= MY.Cpus); ",
        load = node % 1000
    );
    if node.is_multiple_of(3) {
        // A running job; every tenth a standard-universe one (a costly vacate).
        let (universe, size) = if node.is_multiple_of(30) {
            (1, 200_000 + node)
        } else {
            (5, 20_000)
        };
        ad.push_str(&format!("JobUniverse = {universe}; ImageSize = {size}; "));
    }
    for i in 0..48 {
        ad.push_str(&format!("RoostSynthetic{i:02} = {}; ", node * 31 + i));
    }
    ad.push(']');
    ad
}

/// Writes `cmd.nodes` × `cmd.slots` synthetic ads under one lease, 100 a
/// transaction; prints how long it took.
pub fn pool_load(cmd: &PoolLoadCmd) -> Result<ExitCode> {
    let config = super::sysconfig::load_daemon_config(cmd.config.as_deref(), "STARTD")?;
    let pool = PoolSettings::from_config(&config)
        .map_err(|e| anyhow!(e))?
        .ok_or_else(|| anyhow!("no pool: ROOST_POOL_ETCD is not set"))?;
    let etcd = pool.client();
    let lease = etcd.grant(cmd.ttl).map_err(|e| anyhow!(e))?;
    let t = now();
    let started = std::time::Instant::now();
    let mut batch = Vec::with_capacity(100);
    let (mut ads, mut bytes) = (0usize, 0usize);
    for node in 0..cmd.nodes {
        for slot in 1..=cmd.slots {
            let ad = synthetic_ad(node, slot, t);
            let key = pool.ad_key("Machine", &format!("slot{slot}@node{node:05}.pool.test"));
            bytes += ad.len();
            batch.push((key, ad.into_bytes()));
            if batch.len() == 100 {
                etcd.write(&batch, &[], Some(lease))
                    .map_err(|e| anyhow!(e))?;
                ads += batch.len();
                batch.clear();
            }
        }
    }
    etcd.write(&batch, &[], Some(lease))
        .map_err(|e| anyhow!(e))?;
    ads += batch.len();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "wrote {ads} ads ({:.1} MB) in {secs:.2} s: {:.0} ads/s",
        bytes as f64 / 1e6,
        ads as f64 / secs
    );
    Ok(ExitCode::SUCCESS)
}

/// `roost eventd-round`: the eventd's work at one look over the pool as
/// it is (`tools/bench_pool.sh`): read and parse every slot ad, estimate a
/// SHUTDOWN event taking all of them, and plan its first round; prints
/// each part's time.
#[derive(clap::Args, Debug)]
pub struct EventdRoundCmd {
    /// The root configuration file naming the pool.
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
}

/// Runs `roost eventd-round`.
pub fn eventd_round(cmd: &EventdRoundCmd) -> Result<ExitCode> {
    use crate::eventd::plan::{self, Pacing, Progress};
    use crate::eventd::schedule::Shutdown;
    let config = super::sysconfig::load_daemon_config(cmd.config.as_deref(), "EVENTD")?;
    let pool = PoolSettings::from_config(&config)
        .map_err(|e| anyhow!(e))?
        .ok_or_else(|| anyhow!("no pool: ROOST_POOL_ETCD is not set"))?;
    let knob = |k: &str| match k {
        "All" => Some("true".to_string()),
        "Rank" => Some("(0 - ImageSize)".to_string()),
        _ => None,
    };
    let event = Shutdown::parse("Bench", "SHUTDOWN UMTWRFS 04:00 3600 100 All Rank", &knob)
        .map_err(|e| anyhow!(e))?;
    let t0 = std::time::Instant::now();
    let kvs = pool
        .client()
        .range_prefix(&format!("{}Machine/", pool.ads_prefix()))
        .map_err(|e| anyhow!(e))?;
    let t1 = std::time::Instant::now();
    let ads: Vec<crate::classad::ClassAd> = kvs
        .iter()
        .filter_map(|kv| crate::classad::parse_ad(&String::from_utf8_lossy(&kv.value)).ok())
        .collect();
    let t2 = std::time::Instant::now();
    let env = crate::classad::FixedEnv::new(now());
    let needed = event.time_needed(ads.iter().filter(|ad| event.takes(ad, &env)));
    let t3 = std::time::Instant::now();
    let mut progress = Progress {
        end: now() + 3600,
        ..Progress::default()
    };
    let pacing = Pacing {
        interval: 900,
        slow_start: 10,
    };
    let round = plan::round(&event, &ads, now(), pacing, &mut progress);
    let t4 = std::time::Instant::now();
    let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
    println!(
        "{} ads: read {:.0} ms, parse {:.0} ms, estimate {:.0} ms ({needed} s of vacates), \
         round {:.0} ms ({} machines to put down, {} slots to vacate, next in {} s)",
        ads.len(),
        ms(t0, t1),
        ms(t1, t2),
        ms(t2, t3),
        ms(t3, t4),
        round.configure.len(),
        round.vacate.len(),
        round.next_in
    );
    Ok(ExitCode::SUCCESS)
}
