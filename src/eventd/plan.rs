//! One round of an active SHUTDOWN event, as the spec lays it out: the
//! list of startd ads the event still concerns is rebuilt from the pool,
//! in RANK order (higher first); every machine on it not yet down until
//! the event's end gets the shutdown configuration, each one's
//! `EndDownTime` a slow-start interval after the last's; then slots are
//! vacated down the list — a job that costs no vacate time (not standard
//! universe) and the next at once, until the first that does, whose
//! estimated vacate time sets the next round. With nothing left to vacate
//! the eventd looks again every `EVENTD_INTERVAL` until the event ends.
//! Machines whose `EndDownTime` has passed get their shutdown
//! configuration removed. Pure: the pool's ads, the time and what the
//! round before did are given; what to do comes back.

use std::collections::BTreeSet;

use super::schedule::{Shutdown, down_until};
use crate::classad::{ClassAd, FixedEnv, Value};

/// What an active event has done so far (lost when the eventd restarts,
/// as the spec says: it then starts again from the pool's ads).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// When the occurrence ends (its start plus its duration).
    pub end: i64,
    /// How many machines were given their `EndDownTime` (the slow-start
    /// counter).
    pub slow_start_pos: i64,
    /// Machines (daemon names) given the shutdown configuration.
    pub configured: BTreeSet<String>,
    /// Slots (names) told to vacate.
    pub vacated: BTreeSet<String>,
}

/// One round's decisions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// Machines to put in shutdown until the given time.
    pub configure: Vec<(String, i64)>,
    /// Slots to vacate, in order.
    pub vacate: Vec<String>,
    /// Seconds until the next round.
    pub next_in: i64,
    /// The estimated seconds the last vacate takes, when it costs any
    /// (the next round then waits that long after it is sent); else 0.
    pub vacate_wait: i64,
}

/// The knobs a round uses.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    /// `EVENTD_INTERVAL`.
    pub interval: i64,
    /// `EVENTD_SHUTDOWN_SLOW_START_INTERVAL`.
    pub slow_start: i64,
}

/// The machine (startd) a slot ad belongs to: its name after the slot's
/// `slotN@`.
pub fn machine_of(ad: &ClassAd, env: &FixedEnv) -> Option<String> {
    match ad.eval_attr("Name", env) {
        Value::Str(s) => {
            let name = s.to_string_lossy();
            Some(match name.split_once('@') {
                Some((_, rest)) => rest.to_string(),
                None => name,
            })
        }
        _ => None,
    }
}

fn text(ad: &ClassAd, attr: &str, env: &FixedEnv) -> Option<String> {
    match ad.eval_attr(attr, env) {
        Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    }
}

fn has_job(ad: &ClassAd, env: &FixedEnv) -> bool {
    matches!(ad.eval_attr("ImageSize", env), Value::Int(_))
        && matches!(ad.eval_attr("JobUniverse", env), Value::Int(_))
}

/// One round of `event` (active, `progress` so far) over the pool's slot
/// `ads` at `now`.
pub fn round(
    event: &Shutdown,
    ads: &[ClassAd],
    now: i64,
    pacing: Pacing,
    progress: &mut Progress,
) -> Round {
    let env = FixedEnv::new(now);
    // The spec's list: ads the event takes that still need a vacate or
    // the shutdown configuration.
    let mut list: Vec<(&ClassAd, f64)> = ads
        .iter()
        .filter(|ad| event.takes(ad, &env))
        .filter(|ad| {
            let busy =
                has_job(ad, &env) && text(ad, "State", &env).as_deref() != Some("Preempting");
            busy || down_until(ad, &env).is_none_or(|t| t < progress.end)
        })
        .map(|ad| (ad, event.rank_of(ad, &env)))
        .collect();
    list.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut out = Round::default();
    for (ad, _) in &list {
        let Some(machine) = machine_of(ad, &env) else {
            continue;
        };
        if down_until(ad, &env).is_none_or(|t| t < progress.end)
            && progress.configured.insert(machine.clone())
        {
            let until = progress.end + progress.slow_start_pos * pacing.slow_start;
            progress.slow_start_pos += 1;
            out.configure.push((machine, until));
        }
    }
    let mut wait = 0;
    for (ad, _) in &list {
        let Some(name) = text(ad, "Name", &env) else {
            continue;
        };
        if text(ad, "State", &env).as_deref() != Some("Claimed")
            || !has_job(ad, &env)
            || progress.vacated.contains(&name)
        {
            continue;
        }
        progress.vacated.insert(name.clone());
        out.vacate.push(name);
        wait = event.vacate_seconds(ad);
        if wait > 0 {
            break;
        }
    }
    out.next_in = if wait > 0 { wait } else { pacing.interval };
    out.vacate_wait = wait;
    out
}

/// Machines whose shutdown configuration has run out (`EndDownTime` has
/// passed), each with that `EndDownTime`: theirs to remove.
pub fn expired(ads: &[ClassAd], now: i64) -> BTreeSet<(String, i64)> {
    let env = FixedEnv::new(now);
    ads.iter()
        .filter_map(|ad| {
            let until = down_until(ad, &env).filter(|t| *t < now)?;
            Some((machine_of(ad, &env)?, until))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn event() -> Shutdown {
        let knobs = |k: &str| match k {
            "All" => Some("regexp(\"^slot\", Name)".to_string()),
            "Big" => Some("ImageSize".to_string()),
            _ => None,
        };
        Shutdown::parse("E", "SHUTDOWN MTWRFSU 16:00 3600 1 All Big", &knobs).expect("event")
    }

    fn slot(name: &str, extra: &str) -> ClassAd {
        parse_ad(&format!(
            "[ Name = \"{name}\"; State = \"Unclaimed\"; {extra} ]"
        ))
        .expect("ad")
    }

    fn busy(name: &str, universe: i64, image: i64) -> ClassAd {
        slot(
            name,
            &format!("State = \"Claimed\"; JobUniverse = {universe}; ImageSize = {image}"),
        )
    }

    #[test]
    fn machines_go_down_slowly_and_slots_are_vacated_one_costly_job_at_a_time() {
        let e = event();
        let pacing = Pacing {
            interval: 900,
            slow_start: 60,
        };
        let mut p = Progress {
            end: 10_000,
            ..Progress::default()
        };
        // RANK is ImageSize: the biggest first. b's vanilla job costs
        // nothing, so the round goes on to a's standard one (1,280 KiB at
        // 1 Mb/s: 10 s) and stops there.
        let ads = vec![
            busy("slot1@a", 1, 1280),
            busy("slot2@a", 1, 128),
            busy("slot1@b", 5, 999_999),
            slot("slot1@c", ""),
        ];
        let r = round(&e, &ads, 5_000, pacing, &mut p);
        assert_eq!(
            r.configure,
            [
                ("b".to_string(), 10_000),
                ("a".to_string(), 10_060),
                ("c".to_string(), 10_120)
            ]
        );
        assert_eq!(r.vacate, ["slot1@b", "slot1@a"]);
        assert_eq!(r.next_in, 10);
        // The next round: the machines now say EndDownTime; a's second
        // slot goes; then nothing is left but to look again.
        let down = |ad: &ClassAd, t: i64| {
            let mut ad = ad.clone();
            ad.insert_value("EndDownTime", t);
            ad
        };
        let mut ads: Vec<ClassAd> = ads.iter().map(|a| down(a, 10_000)).collect();
        ads[0].insert_value("State", "Preempting");
        let r = round(&e, &ads, 5_010, pacing, &mut p);
        assert!(r.configure.is_empty());
        assert_eq!(
            (r.vacate.as_slice(), r.next_in),
            (&["slot2@a".to_string()][..], 1)
        );
        let r = round(&e, &ads, 5_011, pacing, &mut p);
        assert_eq!((r.vacate.len(), r.next_in), (0, 900));
        // A machine that joins during the event is put down too.
        ads.push(busy("slot1@d", 5, 10));
        let r = round(&e, &ads, 6_000, pacing, &mut p);
        assert_eq!(r.configure, [("d".to_string(), 10_180)]);
        assert_eq!(r.vacate, ["slot1@d"]);
        // After the event, the configurations that ran out are removed.
        assert_eq!(
            expired(&ads, 10_001)
                .into_iter()
                .map(|(m, _)| m)
                .collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }
}
