//! Which slot ads a cron ad goes into, and how, as HTCondor's startd
//! decides: `SlotMergeConstraint` (true with the slot ad as TARGET) first;
//! else a non-empty `SlotName` (or `Name`) that begins the slot's `Name`;
//! else a `SlotTypeId` equal to the slot's; else a `SlotId` equal to the
//! slot's; else every slot — always within the job's `_SLOTS` list when it
//! has one. Those five attributes are never copied into the slot ad.
//! Ads go in HTCondor's list order, a later one's values winning: each
//! job's own ad (`<job>`) holds the place its job was configured at (every
//! job's before any tagged ad, startd cron jobs before benchmarks), and a
//! tagged ad (`<job>.<tag>`) is put after the others when it is first
//! published. So a slot's own tagged ad wins over the job's untagged ad,
//! whatever order they were printed in. Pure.

use std::collections::BTreeMap;

use crate::classad::{ClassAd, Env, Evaluator, Name, Value};

/// The attributes that target an ad and are not copied into slot ads.
const TARGETING: [&str; 5] = [
    "Name",
    "SlotId",
    "SlotMergeConstraint",
    "SlotName",
    "SlotTypeId",
];

/// Whether `ad` (of a job with slot list `slots`, empty: all) goes into the
/// ad `slot` of slot number `slot_id`.
pub fn goes_into(ad: &ClassAd, slots: &[u32], slot: &ClassAd, slot_id: u32, env: &dyn Env) -> bool {
    if !slots.is_empty() && !slots.contains(&slot_id) {
        return false;
    }
    let own = |name: &str| ad.eval_attr(name, env);
    if ad.get(&Name::new("SlotMergeConstraint")).is_some() {
        let v =
            Evaluator::new(Some(ad), Some(slot), env).eval_attr(&Name::new("SlotMergeConstraint"));
        return match v {
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Real(r) => r != 0.0,
            _ => false,
        };
    }
    let name = match own("SlotName") {
        Value::Str(s) => Some(s),
        _ => match own("Name") {
            Value::Str(s) => Some(s),
            _ => None,
        },
    };
    if let (Some(prefix), Value::Str(slot_name)) = (name, slot.eval_attr("Name", env))
        && !prefix.is_empty()
    {
        return slot_name
            .to_string_lossy()
            .starts_with(prefix.to_string_lossy().as_str());
    }
    for id in ["SlotTypeId", "SlotId"] {
        if let (Value::Int(a), Value::Int(b)) = (own(id), slot.eval_attr(id, env)) {
            return a == b;
        }
    }
    true
}

/// Copies `ad`'s attributes into `slot`, but those that target it.
pub fn merge_into(slot: &mut ClassAd, ad: &ClassAd) {
    for (name, expr) in ad.iter() {
        if !TARGETING
            .iter()
            .any(|t| name.as_str().eq_ignore_ascii_case(t))
        {
            slot.insert(name.clone(), expr.clone());
        }
    }
}

/// Every ad the cron jobs published, in HTCondor's list order (each job's
/// own ad where the job was registered, tagged ads where they were first
/// published), as slots merge them. Written by the cron actors;
/// each change counts a generation, so a slot rebuilds its merged ad only
/// when one happened.
#[derive(Clone, Debug, Default)]
pub struct Published {
    entries: Vec<Entry>,
    /// What resource monitors show in each slot, by job then slot.
    metrics: BTreeMap<String, BTreeMap<String, Vec<(String, Value)>>>,
    /// The jobs that are resource monitors (slots then say who they are:
    /// [`super::metrics::Target`]).
    monitors: BTreeMap<String, usize>,
    generation: u64,
}

#[derive(Clone, Debug)]
struct Entry {
    /// The job's actor (`cron.<name>`).
    job: String,
    /// `<job>` or `<job>.<tag>`.
    name: String,
    /// The job's `_SLOTS`.
    slots: Vec<u32>,
    /// `None`: the job's own ad, registered, not published yet.
    ad: Option<ClassAd>,
}

impl Published {
    /// Holds the place of job `job`'s (of slot list `slots`) own ad `name`
    /// after those registered or published so far, as HTCondor registers
    /// a cron job's ad when the job is configured. A job already there
    /// keeps its place (its slot list is updated).
    pub fn register(&mut self, job: &str, slots: &[u32], name: &str) {
        match self.entry(job, name) {
            Some(e) => e.slots = slots.to_vec(),
            None => self.entries.push(Entry {
                job: job.to_string(),
                name: name.to_string(),
                slots: slots.to_vec(),
                ad: None,
            }),
        }
    }

    /// Puts job `job`'s (of slot list `slots`) ad `name` in place of the
    /// one of that name (names are compared exactly, as HTCondor's list
    /// does), or after the others.
    pub fn replace(&mut self, job: &str, slots: &[u32], name: &str, ad: ClassAd) {
        self.generation += 1;
        let entry = Entry {
            job: job.to_string(),
            name: name.to_string(),
            slots: slots.to_vec(),
            ad: Some(ad),
        };
        match self.entry(job, name) {
            Some(old) => *old = entry,
            None => self.entries.push(entry),
        }
    }

    fn entry(&mut self, job: &str, name: &str) -> Option<&mut Entry> {
        (self.entries.iter_mut()).find(|e| e.job == job && e.name == name)
    }

    /// The published ads, in merge order.
    fn ads(&self) -> impl Iterator<Item = (&Entry, &ClassAd)> {
        (self.entries.iter()).filter_map(|e| e.ad.as_ref().map(|a| (e, a)))
    }

    /// Forgets every ad of the jobs `keep` says no to (jobs gone from the
    /// configuration).
    pub fn retain_jobs(&mut self, keep: impl Fn(&str) -> bool) {
        let before = (self.entries.len(), self.metrics.len());
        self.entries.retain(|e| keep(&e.job));
        self.metrics.retain(|j, _| keep(j));
        if (self.entries.len(), self.metrics.len()) != before {
            self.generation += 1;
        }
    }

    /// What resource monitor `job` now shows in each slot.
    pub fn set_metrics(&mut self, job: &str, metrics: &super::metrics::Metrics) {
        self.generation += 1;
        let by_slot = (metrics.0.keys())
            .map(|slot| (slot.clone(), metrics.attributes(slot)))
            .collect();
        self.metrics.insert(job.to_string(), by_slot);
    }

    /// How many of `manager`'s configured jobs are resource monitors.
    pub fn set_monitors(&mut self, manager: &str, n: usize) {
        self.monitors.insert(manager.to_string(), n);
    }

    /// Whether any configured job is a resource monitor.
    pub fn monitoring(&self) -> bool {
        self.monitors.values().any(|n| *n > 0)
    }

    /// Counts every change; a slot's merged ad is stale when it differs.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether no job has published an ad.
    pub fn is_empty(&self) -> bool {
        self.ads().next().is_none() && self.metrics.is_empty()
    }

    /// `machine` with every ad that goes into slot `slot` (number
    /// `slot_id`, its ad for targeting: `target`) merged in, in order, then
    /// what resource monitors show in it.
    pub fn merged(
        &self,
        machine: &ClassAd,
        target: &ClassAd,
        (slot, slot_id): (&str, u32),
        env: &dyn Env,
    ) -> ClassAd {
        let mut ad = machine.clone();
        for (e, published) in self.ads() {
            if goes_into(published, &e.slots, target, slot_id, env) {
                merge_into(&mut ad, published);
            }
        }
        for attrs in self.metrics.values().filter_map(|m| m.get(slot)) {
            for (name, v) in attrs {
                ad.insert_value(name.as_str(), v.clone());
            }
        }
        ad
    }
}

/// The attributes a daemon's own ad keeps whatever its cron jobs say.
const OWN: [&str; 3] = ["MyType", "Name", "TargetType"];

impl Published {
    /// A daemon's ad (the schedd's: one ad per job, no slots) with every
    /// published ad merged in, in order, but for the attributes that say
    /// what the ad is (`MyType`, `Name`, `TargetType`).
    pub fn merged_daemon(&self, daemon: &ClassAd) -> ClassAd {
        let mut ad = daemon.clone();
        for (_, published) in self.ads() {
            for (name, expr) in published.iter() {
                if !OWN.iter().any(|t| name.as_str().eq_ignore_ascii_case(t)) {
                    ad.insert(name.clone(), expr.clone());
                }
            }
        }
        ad
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::{FixedEnv, parse_ad};

    fn slot(id: i64, type_id: i64) -> ClassAd {
        parse_ad(&format!(
            "[ Name = \"slot{id}@node\"; SlotId = {id}; SlotTypeId = {type_id}; Cpus = {id} ]"
        ))
        .expect("slot ad")
    }

    fn into(ad: &str, slots: &[u32]) -> Vec<u32> {
        let ad = parse_ad(ad).expect("ad");
        let env = FixedEnv::new(0);
        (1..=3)
            .filter(|&i| {
                goes_into(
                    &ad,
                    slots,
                    &slot(i64::from(i), 1 + i64::from(i == 3)),
                    i,
                    &env,
                )
            })
            .collect()
    }

    #[test]
    fn targeting_follows_htcondors_order() {
        assert_eq!(into("[ V = 1 ]", &[]), [1, 2, 3]);
        assert_eq!(into("[ V = 1; SlotId = 2 ]", &[]), [2]);
        assert_eq!(into("[ V = 1; SlotTypeId = 2; SlotId = 1 ]", &[]), [3]);
        assert_eq!(into("[ SlotName = \"slot1\"; SlotId = 2 ]", &[]), [1]);
        assert_eq!(into("[ Name = \"slot\"; SlotId = 2 ]", &[]), [1, 2, 3]);
        assert_eq!(into("[ SlotName = \"\"; SlotId = 2 ]", &[]), [2]);
        assert_eq!(
            into(
                "[ SlotMergeConstraint = TARGET.Cpus >= 2; SlotId = 1 ]",
                &[]
            ),
            [2, 3]
        );
        assert_eq!(
            into("[ SlotMergeConstraint = \"yes\" ]", &[]),
            Vec::<u32>::new()
        );
        assert_eq!(into("[ V = 1 ]", &[1, 3]), [1, 3]);
        assert_eq!(into("[ SlotId = 2 ]", &[1, 3]), Vec::<u32>::new());
    }

    #[test]
    fn published_ads_merge_in_order_and_a_later_one_replaces_its_name() {
        let env = FixedEnv::new(0);
        let mut p = Published::default();
        let machine = parse_ad("[ Arch = \"X86_64\"; Healthy = false ]").expect("ad");
        p.replace(
            "cron.a",
            &[],
            "a",
            parse_ad("[ Healthy = true; X = 1 ]").expect("ad"),
        );
        p.replace("cron.b", &[2], "b", parse_ad("[ X = 2 ]").expect("ad"));
        let g = p.generation();
        let on = |p: &Published, id: u32, name: &str| {
            let m = p.merged(
                &machine,
                &slot(i64::from(id), 1),
                (&format!("slot{id}"), id),
                &env,
            );
            m.eval_attr(name, &env)
        };
        assert!(on(&p, 1, "X").identical(&Value::Int(1)));
        assert!(on(&p, 2, "X").identical(&Value::Int(2)));
        assert!(on(&p, 1, "Healthy").identical(&Value::Bool(true)));
        p.replace("cron.a", &[], "a", parse_ad("[ Y = 3 ]").expect("ad"));
        assert!(p.generation() > g);
        assert!(on(&p, 1, "X").identical(&Value::Undefined));
        assert!(on(&p, 1, "Healthy").identical(&Value::Bool(false)));
        p.retain_jobs(|j| j != "cron.b");
        assert!(on(&p, 2, "X").identical(&Value::Undefined));
        assert!(on(&p, 2, "Y").identical(&Value::Int(3)));
        p.retain_jobs(|_| false);
        assert!(p.is_empty());
    }

    /// The manual's example: one run prints an ad for slot 1 (tag `s1`),
    /// one for slot 2 (`s2`), then an untagged one for every slot. The
    /// job's own ad holds the place the job was registered at, so the
    /// slots' own ads win in their slots, and the job registered after it
    /// wins over its own ad elsewhere; with a prefix nothing targets and
    /// the last tagged ad wins everywhere.
    #[test]
    fn a_jobs_own_ad_keeps_its_registered_place_and_tagged_ads_win() {
        let env = FixedEnv::new(0);
        let ad = |t: &str| parse_ad(t).expect("ad");
        let machine = ad("[ Arch = \"X86_64\" ]");
        let value = |p: &Published, id: u32, name: &str| {
            p.merged(
                &machine,
                &slot(i64::from(id), 1),
                (&format!("slot{id}"), id),
                &env,
            )
            .eval_attr(name, &env)
        };
        let mut p = Published::default();
        p.register("cron.test", &[], "test");
        p.register("cron.other", &[], "other");
        p.replace("cron.other", &[], "other", ad("[ Value = 5; Other = 1 ]"));
        for (name, text) in [
            ("test.s1", "[ Value = 1; SlotId = 1 ]"),
            ("test.s2", "[ Value = 2; SlotId = 2 ]"),
            ("test", "[ Value = 10 ]"),
        ] {
            p.replace("cron.test", &[], name, ad(text));
        }
        assert!(value(&p, 1, "Value").identical(&Value::Int(1)));
        assert!(value(&p, 2, "Value").identical(&Value::Int(2)));
        assert!(value(&p, 3, "Value").identical(&Value::Int(5)));
        p.retain_jobs(|j| j != "cron.other");
        assert!(value(&p, 3, "Value").identical(&Value::Int(10)));
        // Registering again keeps the place.
        p.register("cron.test", &[], "test");
        assert!(value(&p, 1, "Value").identical(&Value::Int(1)));
        let mut prefixed = Published::default();
        prefixed.register("cron.test", &[], "test");
        for (name, text) in [
            ("test.s1", "[ P_Value = 1; P_SlotId = 1 ]"),
            ("test.s2", "[ P_Value = 2; P_SlotId = 2 ]"),
            ("test", "[ P_Value = 10 ]"),
        ] {
            prefixed.replace("cron.test", &[], name, ad(text));
        }
        for id in 1..=3 {
            assert!(value(&prefixed, id, "P_Value").identical(&Value::Int(2)));
        }
        let mut none = Published::default();
        none.register("cron.test", &[], "test");
        assert!(none.is_empty());
    }

    #[test]
    fn targeting_attributes_stay_out_of_the_slot_ad() {
        let mut s = slot(1, 1);
        let ad =
            parse_ad("[ Value = 10; SlotId = 7; SlotName = \"x\"; name = \"y\" ]").expect("ad");
        merge_into(&mut s, &ad);
        let env = FixedEnv::new(0);
        assert!(s.eval_attr("Value", &env).identical(&Value::Int(10)));
        assert!(s.eval_attr("SlotId", &env).identical(&Value::Int(1)));
        assert!(
            s.eval_attr("Name", &env)
                .identical(&Value::from("slot1@node"))
        );
        assert!(s.eval_attr("SlotName", &env).identical(&Value::Undefined));
    }

    #[test]
    fn a_daemon_ad_takes_every_published_attribute_but_its_identity() {
        let mut p = Published::default();
        let ad = |t: &str| parse_ad(t).expect("ad");
        p.replace(
            "cron.a",
            &[],
            "a",
            ad("[ Name = \"x\"; SlotId = 3; A = 1; B = 1 ]"),
        );
        p.replace("cron.b", &[], "b", ad("[ MyType = \"Machine\"; B = 2 ]"));
        let merged = p.merged_daemon(&ad("[ MyType = \"Scheduler\"; Name = \"s\"; B = 0 ]"));
        assert_eq!(
            crate::classad::unparse::ad_to_string(&merged),
            crate::classad::unparse::ad_to_string(&ad(
                "[ MyType = \"Scheduler\"; Name = \"s\"; B = 2; SlotId = 3; A = 1 ]"
            ))
        );
    }
}
