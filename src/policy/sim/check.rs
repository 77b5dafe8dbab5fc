//! The simulator's check after every instant: a partitionable slot's
//! free resources and its live dynamic slots' add up to what it was given.

use super::super::slot::SlotKind;
use super::{ScenarioError, SimSlot};

/// A partitionable slot's free resources and its live dynamic slots' always
/// add up to what it was given.
pub(super) fn check_resources(
    slots: &[SimSlot],
    m: &crate::policy::layout::Machine,
) -> Result<(), ScenarioError> {
    for p in slots
        .iter()
        .filter(|s| s.slot.kind == SlotKind::Partitionable)
    {
        let mut cpus = p.slot.resources.cpus;
        let mut memory = p.slot.resources.memory_mb;
        for c in slots.iter().filter(|s| !s.gone) {
            if let SlotKind::Dynamic { parent } = &c.slot.kind
                && *parent == p.slot.id
            {
                cpus += c.slot.resources.cpus;
                memory += c.slot.resources.memory_mb;
            }
        }
        let spec = &p.spec;
        if (cpus - spec.cpus).abs() > 1e-9 || memory != spec.memory_mb {
            return Err(ScenarioError(format!(
                "resources of {} and its dynamic slots do not add up: {cpus} CPUs, {memory} MiB of {} and {} (disk {})",
                p.slot.id,
                spec.cpus,
                spec.memory_mb,
                spec.disk_kb(m)
            )));
        }
    }
    Ok(())
}
