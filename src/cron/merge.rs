//! Which slot ads a cron ad goes into, and how, as HTCondor's startd
//! decides: `SlotMergeConstraint` (true with the slot ad as TARGET) first;
//! else a non-empty `SlotName` (or `Name`) that begins the slot's `Name`;
//! else a `SlotTypeId` equal to the slot's; else a `SlotId` equal to the
//! slot's; else every slot — always within the job's `_SLOTS` list when it
//! has one. Those five attributes are never copied into the slot ad.
//! Ads go in the order they were first published (the job's own ad first),
//! so a later one's values win. Pure.

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
}
