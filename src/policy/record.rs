//! The on-disk form of a slot's whole state, as a `Slot.Snapshot` event
//! carries it: [`SlotRecord`], a type of its own with exactly the fields,
//! names and defaults the log has always held, converted to and from the
//! in-memory [`Slot`]. A field added to, renamed in or removed from `Slot`
//! then changes nothing on disk until this type changes too (and the golden
//! bytes in `tests/fixtures/events/` say so). The claims, resources and
//! kinds inside are the same types other events already carry, so they are
//! part of the log's format anyway.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::slot::{Activity, Claim, Resources, Slot, SlotKind, State};

/// A slot's state as the log stores it (see the module comment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotRecord {
    id: String,
    name: String,
    state: State,
    activity: Activity,
    entered_state: i64,
    entered_activity: i64,
    claim: Option<Claim>,
    preempting: Option<Claim>,
    starter: bool,
    fetching: bool,
    last_fetch_spawned: Option<i64>,
    last_fetch_completed: Option<i64>,
    total_time: BTreeMap<String, i64>,
    next_claim: u64,
    kind: SlotKind,
    resources: Resources,
    children: BTreeSet<u32>,
    deleted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    matched_at: Option<i64>,
    #[serde(default, skip_serializing_if = "is_false")]
    backfill: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    backfill_ending: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

impl From<&Slot> for SlotRecord {
    fn from(s: &Slot) -> SlotRecord {
        let s = s.clone();
        SlotRecord {
            id: s.id,
            name: s.name,
            state: s.state,
            activity: s.activity,
            entered_state: s.entered_state,
            entered_activity: s.entered_activity,
            claim: s.claim,
            preempting: s.preempting,
            starter: s.starter,
            fetching: s.fetching,
            last_fetch_spawned: s.last_fetch_spawned,
            last_fetch_completed: s.last_fetch_completed,
            total_time: s.total_time,
            next_claim: s.next_claim,
            kind: s.kind,
            resources: s.resources,
            children: s.children,
            deleted: s.deleted,
            matched_at: s.matched_at,
            backfill: s.backfill,
            backfill_ending: s.backfill_ending,
        }
    }
}

impl From<&SlotRecord> for Slot {
    fn from(r: &SlotRecord) -> Slot {
        let r = r.clone();
        Slot {
            id: r.id,
            name: r.name,
            state: r.state,
            activity: r.activity,
            entered_state: r.entered_state,
            entered_activity: r.entered_activity,
            claim: r.claim,
            preempting: r.preempting,
            starter: r.starter,
            fetching: r.fetching,
            last_fetch_spawned: r.last_fetch_spawned,
            last_fetch_completed: r.last_fetch_completed,
            total_time: r.total_time,
            next_claim: r.next_claim,
            kind: r.kind,
            resources: r.resources,
            children: r.children,
            deleted: r.deleted,
            matched_at: r.matched_at,
            backfill: r.backfill,
            backfill_ending: r.backfill_ending,
        }
    }
}

impl SlotRecord {
    /// The slot it records.
    #[must_use]
    pub fn slot(&self) -> Slot {
        Slot::from(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_comes_back_from_its_record_unchanged() {
        let mut slot = Slot::new("slot1_2", "node", 7);
        slot.claim = Some(Claim::new(3, "[ Owner = \"a\" ]".into(), 1.5, true, 9));
        slot.kind = SlotKind::Dynamic {
            parent: "slot1".into(),
        };
        slot.matched_at = Some(8);
        slot.backfill = true;
        slot.total_time.insert("Claimed/Busy".into(), 40);
        let record = SlotRecord::from(&slot);
        assert_eq!(record.slot(), slot);
        // Unset flags stay off the disk, as they always have.
        let plain =
            serde_json::to_value(SlotRecord::from(&Slot::new("slot1", "n", 0))).expect("encodes");
        assert!(plain.get("backfill").is_none() && plain.get("matched_at").is_none());
    }
}
