//! The daemon's actors on virtual time: the real supervisor and slot
//! actors, the real event log, started as `roost startd` starts them but on
//! a paused runtime with a [`RuntimeClock`], so a day of policy takes
//! milliseconds and every decision and time stamp is where HTCondor's
//! evaluation cadence puts it.

use std::sync::Arc;
use std::time::Duration;

use roost::actors::common::clock::{Clock, RuntimeClock};
use roost::actors::common::sysconfig::load_startd_config;
use roost::actors::startd::daemon::Prepared;
use roost::actors::startd::node::{Control, DrainRequest};
use roost::actors::startd::shared::Dirs;
use roost::policy::engine::{DrainHow, OnCompletion};

use super::daemon::{events, temp};

/// A Unix time to start the virtual clock at.
const T0: i64 = 1_800_000_000;

/// The slot ads of a status answer, each as attribute -> value literal.
fn ads(r: &roost::admin::Response) -> Vec<Ad> {
    r.ads
        .iter()
        .map(|a| Ad(roost::classad::parse_ad(a).expect("a slot ad parses")))
        .collect()
}

#[derive(Debug)]
struct Ad(roost::classad::ClassAd);

impl Ad {
    /// The attribute's value, printed as a ClassAd literal.
    fn get(&self, name: &str) -> String {
        let v = self.0.eval_attr(name, &roost::classad::FixedEnv::new(0));
        roost::classad::unparse::value_to_string(&v)
    }
}

/// Loads the daemon's configuration from `config_path`, makes its
/// directories and prepares the daemon at time `now`, as `roost startd`
/// does; also returns the reload for its supervisor.
pub(crate) fn prepare(
    config_path: &std::path::Path,
    now: i64,
) -> (
    roost::config::Config,
    Prepared,
    roost::actors::startd::node::Reload,
) {
    let root = config_path.display().to_string();
    let config = load_startd_config(Some(&root)).expect("config loads");
    let mut dirs = Vec::new();
    for knob in ["LOG", "EXECUTE", "SPOOL"] {
        let d = std::path::PathBuf::from(config.get(knob).expect("knob").expect("set"));
        std::fs::create_dir_all(&d).expect("mkdir");
        dirs.push(d);
    }
    let dirs = Dirs {
        log: dirs[0].clone(),
        execute: dirs[1].clone(),
        spool: dirs[2].clone(),
        socket: None,
    };
    let prepared = Prepared::open(&config, dirs, now).expect("the daemon prepares");
    let reload = Box::new(move || load_startd_config(Some(&root)));
    (config, prepared, reload)
}

#[test]
fn a_day_of_policy_runs_on_virtual_time_at_htcondors_cadence() {
    let dir = temp("virtual");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let config_path = dir.join("condor_config");
    std::fs::write(
        &config_path,
        format!(
            "LOCAL_DIR = {d}\nLOG = $(LOCAL_DIR)/log\nEXECUTE = $(LOCAL_DIR)/execute\n\
             SPOOL = $(LOCAL_DIR)/spool\nNUM_CPUS = 2\nSLOT_TYPE_1 = cpus=1\n\
             NUM_SLOTS_TYPE_1 = 2\nRunBenchmarks = False\nUPDATE_INTERVAL = 300\n\
             START = True\n\
             # The owner has the machine for the first hour.\n\
             IS_OWNER = time() < {t}\n",
            d = dir.display(),
            t = T0 + 3600,
        ),
    )
    .expect("config");
    let (config, prepared, reload) = prepare(&config_path, T0);

    let real = std::time::Instant::now();
    let sys = actix::System::new();
    let (status_at_2h, status_drained, virtual_end, committer) = sys.block_on(async move {
        tokio::time::pause();
        let clock = Arc::new(RuntimeClock::starting_at(T0));
        let (shared, node, committer) = prepared.start(config, clock.clone(), reload);

        // Two hours: the owner's hour, then the slots are offered.
        tokio::time::sleep(Duration::from_secs(7200)).await;
        let at_2h = node.send(Control::Status).await.expect("status");

        // A graceful drain with nothing running: drained at once.
        let r = node
            .send(Control::Drain(DrainRequest {
                how: DrainHow::Graceful,
                reason: Some("virtual maintenance".into()),
                start: None,
                check: None,
                on_completion: OnCompletion::Nothing,
            }))
            .await
            .expect("drain");
        assert!(r.ok, "{}", r.message);
        // The rest of the day.
        tokio::time::sleep(Duration::from_secs(86_400 - 7200)).await;
        let drained = node.send(Control::Status).await.expect("status");
        let end = clock.now();
        let r = node
            .send(Control::Off(DrainHow::Fast))
            .await
            .expect("shutdown");
        assert!(r.ok, "{}", r.message);
        drop(shared);
        (at_2h, drained, end, committer)
    });
    drop(sys);
    drop(committer.finish());
    let elapsed = real.elapsed();
    assert_eq!(virtual_end, T0 + 86_400, "a whole virtual day went by");

    // After two hours: offered since the evaluation that saw the owner's
    // hour end (UPDATE_INTERVAL cadence from the start: exactly T0 + 3600).
    let at_2h = ads(&status_at_2h);
    assert_eq!(at_2h.len(), 2, "{at_2h:?}");
    for ad in &at_2h {
        assert_eq!(ad.get("State"), "\"Unclaimed\"", "{ad:?}");
        assert_eq!(ad.get("EnteredCurrentState"), (T0 + 3600).to_string());
        assert_eq!(ad.get("TotalTimeOwnerIdle"), "3600");
        assert_eq!(ad.get("MyCurrentTime"), (T0 + 7200).to_string());
    }
    // The rest of the day drained.
    for ad in &ads(&status_drained) {
        assert_eq!(ad.get("State"), "\"Drained\"", "{ad:?}");
        assert_eq!(ad.get("EnteredCurrentState"), (T0 + 7200).to_string());
        assert_eq!(ad.get("DrainReason"), "\"virtual maintenance\"");
        assert_eq!(ad.get("TotalTimeUnclaimedIdle"), "3600");
    }

    // The event log has each transition at its virtual time.
    let ev = events(&dir.join("spool/roost-events"));
    let changes: Vec<(String, i64, String, String)> = ev
        .iter()
        .filter_map(|e| {
            let c = e.pointer("/event/Slot/ActivityChanged")?;
            Some((
                e["actor"].as_str()?.to_string(),
                c["at"].as_i64()?,
                c["state"].as_str()?.to_string(),
                c["activity"].as_str()?.to_string(),
            ))
        })
        .collect();
    for slot in ["slot1", "slot2"] {
        let mine: Vec<(i64, &str, &str)> = changes
            .iter()
            .filter(|(a, ..)| a == slot)
            .map(|(_, t, s, a)| (*t, s.as_str(), a.as_str()))
            .collect();
        assert_eq!(
            mine,
            [
                (T0 + 3600, "Unclaimed", "Idle"),
                (T0 + 7200, "Drained", "Retiring"),
                (T0 + 7200, "Drained", "Idle"),
            ],
            "{slot}: {changes:?}"
        );
    }
    eprintln!("a virtual day took {elapsed:?} of real time");
    let _ = std::fs::remove_dir_all(&dir);
}
