//! `roost-devtools pool-load` and `eventd-round`: synthetic nodes' slot
//! ads written into a pool, and the eventd's work at one look over it,
//! timed — for measuring the pool (`tools/bench_pool.sh`).

use std::process::ExitCode;

use anyhow::{Result, anyhow};
use roost::actors::common::clock::{Clock, SystemClock};
use roost::pool::PoolSettings;

fn now() -> i64 {
    SystemClock.now()
}

/// `roost-devtools pool-load`: synthetic nodes' slot ads written into the pool,
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
    let config =
        roost::actors::common::sysconfig::load_daemon_config(cmd.config.as_deref(), "STARTD")?;
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

/// `roost-devtools eventd-round`: the eventd's work at one look over the pool as
/// it is (`tools/bench_pool.sh`): read and parse every slot ad, estimate a
/// SHUTDOWN event taking all of them, and plan its first round; prints
/// each part's time.
#[derive(clap::Args, Debug)]
pub struct EventdRoundCmd {
    /// The root configuration file naming the pool.
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
}

/// Runs `roost-devtools eventd-round`.
pub fn eventd_round(cmd: &EventdRoundCmd) -> Result<ExitCode> {
    use roost::eventd::plan::{self, Pacing, Progress};
    use roost::eventd::schedule::Shutdown;
    let config =
        roost::actors::common::sysconfig::load_daemon_config(cmd.config.as_deref(), "EVENTD")?;
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
    let ads: Vec<roost::classad::ClassAd> = kvs
        .iter()
        .filter_map(|kv| roost::classad::parse_ad(&String::from_utf8_lossy(&kv.value)).ok())
        .collect();
    let t2 = std::time::Instant::now();
    let env = roost::classad::FixedEnv::new(now());
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
