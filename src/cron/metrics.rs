//! Custom machine resource monitors: a cron job with `_METRICS`
//! (`SUM:GPUs, PEAK:GPUsMemory`) prints, per device, `Uptime<X>Seconds`
//! (the seconds of use since its last report) and `Uptime<X>PeakUsage` (the
//! peak since then), each ad targeting the slots that hold the device
//! (`SlotMergeConstraint = StringListMember("CUDA0", AssignedGPUs)`).
//! Those attributes are not merged into slot ads as they are: each run's
//! share for each slot is decided once ([`usage`]), recorded in the log
//! with the run's ads, and accumulated ([`Metrics::apply`]). A slot then
//! shows `Uptime<X>Seconds` (its devices' total), `Device<X>PeakUsage`
//! (their latest peak), and while a job runs `<X>Usage` — for a sum the
//! average use over the job so far (also `<X>AverageUsage`), for a peak the
//! largest seen since the job started. Pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::config::Metric;
use super::merge::goes_into;
use crate::classad::{ClassAd, Env, Value};

impl Metric {
    /// The attribute a monitor prints for it.
    pub fn reported(&self) -> String {
        match self {
            Metric::Sum(x) => format!("Uptime{x}Seconds"),
            Metric::Peak(x) => format!("Uptime{x}PeakUsage"),
        }
    }
}

/// One run's share for one slot, as the log records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotUsage {
    /// The slot (`slot1`, `slot1_2`).
    pub slot: String,
    /// When the slot's job started, if one was running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_start: Option<i64>,
    /// Seconds of use to add, by metric name (`GPUs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sums: Vec<(String, f64)>,
    /// The peak reported, by metric name (`GPUsMemory`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peaks: Vec<(String, f64)>,
}

/// A slot that a run's ads may go into, as the slot last showed itself.
#[derive(Clone, Debug)]
pub struct Target {
    /// Its number.
    pub id: u32,
    /// Its ad for targeting (name, ids, resources, `Assigned<X>`).
    pub ad: ClassAd,
    /// When its job started, if one runs.
    pub job_start: Option<i64>,
}

/// What one run's ads add for each slot: for each slot that some ad goes
/// into, the sum of those ads' `Uptime<X>Seconds` and the largest of their
/// `Uptime<X>PeakUsage`. Slots no ad goes into are left out.
pub fn usage(
    metrics: &[Metric],
    ads: &[&ClassAd],
    job_slots: &[u32],
    targets: &BTreeMap<String, Target>,
    env: &dyn Env,
) -> Vec<SlotUsage> {
    let mut out = Vec::new();
    for (slot, t) in targets {
        let mine: Vec<&&ClassAd> = (ads.iter())
            .filter(|a| goes_into(a, job_slots, &t.ad, t.id, env))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut u = SlotUsage {
            slot: slot.clone(),
            job_start: t.job_start,
            sums: Vec::new(),
            peaks: Vec::new(),
        };
        for m in metrics {
            let values: Vec<f64> = (mine.iter())
                .filter_map(|a| number(&a.eval_attr(&m.reported(), env)))
                .collect();
            if values.is_empty() {
                continue;
            }
            match m {
                Metric::Sum(x) => u.sums.push((x.clone(), values.iter().sum())),
                Metric::Peak(x) => {
                    let peak = values.iter().copied().fold(f64::MIN, f64::max);
                    u.peaks.push((x.clone(), peak));
                }
            }
        }
        out.push(u);
    }
    out
}

#[allow(clippy::cast_precision_loss)]
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Real(r) if r.is_finite() => Some(*r),
        _ => None,
    }
}

/// `ad` without the attributes a monitor reports (they are accumulated,
/// not merged).
pub fn strip(metrics: &[Metric], ad: &ClassAd) -> ClassAd {
    let mut out = ad.clone();
    for m in metrics {
        out.remove(&m.reported());
    }
    out
}

/// The job running in a slot, as its monitor saw it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobUsage {
    /// When it started.
    pub start: i64,
    /// The slot's sums when the monitor first saw it.
    pub base: BTreeMap<String, f64>,
    /// The largest peak reported since.
    pub peak: BTreeMap<String, f64>,
}

/// What a monitor has said of one slot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SlotMetrics {
    /// When it last said something.
    pub at: i64,
    /// Seconds of use so far, by metric.
    pub sums: BTreeMap<String, f64>,
    /// The latest peak, by metric.
    pub peaks: BTreeMap<String, f64>,
    /// The job running, if one was at the last report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobUsage>,
}

/// What a monitor has said, by slot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics(pub BTreeMap<String, SlotMetrics>);

impl Metrics {
    /// Whether it has said nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds one run's shares, reported at `time`.
    pub fn apply(&mut self, time: i64, usage: &[SlotUsage]) {
        for u in usage {
            let m = self.0.entry(u.slot.clone()).or_default();
            m.at = time;
            if m.job.as_ref().map(|j| j.start) != u.job_start {
                m.job = u.job_start.map(|start| JobUsage {
                    start,
                    base: m.sums.clone(),
                    peak: BTreeMap::new(),
                });
            }
            for (x, v) in &u.sums {
                *m.sums.entry(x.clone()).or_default() += v;
            }
            for (x, v) in &u.peaks {
                m.peaks.insert(x.clone(), *v);
                if let Some(j) = &mut m.job {
                    let p = j.peak.entry(x.clone()).or_insert(*v);
                    *p = p.max(*v);
                }
            }
        }
    }

    /// Forgets the slots `keep` says no to (slots gone).
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.0.retain(|s, _| keep(s));
    }

    /// The attributes slot `slot` shows.
    pub fn attributes(&self, slot: &str) -> Vec<(String, Value)> {
        let Some(m) = self.0.get(slot) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (x, v) in &m.sums {
            out.push((format!("Uptime{x}Seconds"), Value::Real(*v)));
            if let Some(j) = &m.job {
                let used = v - j.base.get(x).copied().unwrap_or(0.0);
                #[allow(clippy::cast_precision_loss)]
                let avg = used / (m.at - j.start).max(1) as f64;
                out.push((format!("{x}Usage"), Value::Real(avg)));
                out.push((format!("{x}AverageUsage"), Value::Real(avg)));
            }
        }
        for (x, v) in &m.peaks {
            out.push((format!("Device{x}PeakUsage"), Value::Real(*v)));
            if let Some(p) = m.job.as_ref().and_then(|j| j.peak.get(x)) {
                out.push((format!("{x}Usage"), Value::Real(*p)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::{FixedEnv, parse_ad};

    fn target(id: u32, ids: &str, job_start: Option<i64>) -> Target {
        Target {
            id,
            ad: parse_ad(&format!(
                "[ Name = \"slot{id}@n\"; SlotId = {id}; AssignedSQUIDs = \"{ids}\" ]"
            ))
            .expect("ad"),
            job_start,
        }
    }

    fn monitor(device: &str, secs: i64, peak: i64) -> ClassAd {
        parse_ad(&format!(
            "[ SlotMergeConstraint = StringListMember(\"{device}\", AssignedSQUIDs); \
             UptimeSQUIDsSeconds = {secs}; UptimeSQUIDsMemoryPeakUsage = {peak}; Other = 1 ]"
        ))
        .expect("ad")
    }

    #[test]
    fn a_monitor_accumulates_per_slot_and_measures_the_running_job() {
        let metrics = [
            Metric::Sum("SQUIDs".into()),
            Metric::Peak("SQUIDsMemory".into()),
        ];
        let env = FixedEnv::new(0);
        let mut targets = BTreeMap::from([
            ("slot1".to_string(), target(1, "SQUID0,SQUID1", None)),
            ("slot2".to_string(), target(2, "SQUID2", None)),
        ]);
        let run = [
            monitor("SQUID0", 1, 51),
            monitor("SQUID1", 4, 42),
            monitor("SQUID2", 5, 53),
        ];
        let ads: Vec<&ClassAd> = run.iter().collect();
        let mut m = Metrics::default();
        m.apply(100, &usage(&metrics, &ads, &[], &targets, &env));
        let attrs = |m: &Metrics, s: &str| -> BTreeMap<String, f64> {
            (m.attributes(s).into_iter())
                .filter_map(|(k, v)| match v {
                    Value::Real(r) => Some((k, r)),
                    _ => None,
                })
                .collect()
        };
        let one = attrs(&m, "slot1");
        assert_eq!(one["UptimeSQUIDsSeconds"], 5.0);
        assert_eq!(one["DeviceSQUIDsMemoryPeakUsage"], 51.0);
        assert!(!one.contains_key("SQUIDsUsage"), "no job: {one:?}");
        // A job starts in slot2 at 100; two more runs, 10 s apart.
        targets.insert("slot2".into(), target(2, "SQUID2", Some(100)));
        let run = [monitor("SQUID2", 5, 93)];
        let ads: Vec<&ClassAd> = run.iter().collect();
        m.apply(110, &usage(&metrics, &ads, &[], &targets, &env));
        let run = [monitor("SQUID2", 5, 13)];
        let ads: Vec<&ClassAd> = run.iter().collect();
        m.apply(120, &usage(&metrics, &ads, &[], &targets, &env));
        let two = attrs(&m, "slot2");
        assert_eq!(two["UptimeSQUIDsSeconds"], 15.0);
        assert_eq!(two["SQUIDsAverageUsage"], 0.5, "10 s of use in 20 s");
        assert_eq!(two["SQUIDsUsage"], 0.5);
        assert_eq!(two["DeviceSQUIDsMemoryPeakUsage"], 13.0, "the latest");
        assert_eq!(two["SQUIDsMemoryUsage"], 93.0, "the job's largest");
        // The reported attributes are not merged as they are.
        let kept = strip(&metrics, &run[0]);
        assert!(kept.lookup("UptimeSQUIDsSeconds").is_none() && kept.lookup("Other").is_some());
    }
}
