//! The startd's side of cron: its `Shared` as the cron actors' host
//! ([`CronHost`]), and each slot's machine ad with the cron ads that go
//! into it ([`SlotCronAd`]).

use std::cell::RefCell;
use std::path::PathBuf;

use tracing::warn;

use super::shared::Shared;
use crate::actors::common::cron_host::CronHost;
use crate::actors::common::latest::Pen;
use crate::classad::{ClassAd, FixedEnv, Value};
use crate::cron::metrics::Target;
use crate::events::Event;
use crate::policy::layout::SlotSpec;
use crate::policy::slot::Slot;

impl CronHost for Shared {
    fn now(&self) -> i64 {
        self.clock.now()
    }

    fn record(
        &self,
        actor: &str,
        events: Vec<crate::cron::event::CronEvent>,
    ) -> Result<(), crate::events::StoreError> {
        Shared::record(self, actor, events.into_iter().map(Event::Cron).collect())
    }

    fn roost_exe(&self) -> PathBuf {
        self.roost_exe.clone()
    }

    fn config_root(&self) -> Option<String> {
        self.config().files().first().cloned()
    }

    fn hook_env(&self) -> crate::spawn::Environment {
        self.hooks.env.clone()
    }

    fn hook_user(&self) -> Option<(u32, u32)> {
        self.hooks.user
    }

    fn log_dir(&self) -> PathBuf {
        self.dirs.log.clone()
    }

    fn condition_ad(&self) -> ClassAd {
        self.node.read().machine.clone()
    }

    fn targets(&self) -> std::cell::Ref<'_, std::collections::BTreeMap<String, Target>> {
        self.cron_targets.read()
    }
}

/// A slot's machine ad with the cron ads that go into it merged in, made
/// again only when the machine ad or the cron ads changed, so the policy's
/// cached slot ad sees the same ad until then. While a resource monitor is
/// configured, the slot also tells the monitors who it is (its entry of
/// `Shared::cron_targets`, written through its own pen) whenever its
/// machine ad or its job changes; the entry goes with the slot.
#[derive(Default)]
pub struct SlotCronAd {
    merged: RefCell<Option<(ClassAd, u64, ClassAd)>>,
    told: RefCell<Option<(ClassAd, Option<i64>)>>,
    pen: RefCell<Option<Pen<Target>>>,
}

impl SlotCronAd {
    /// The slot is going: its entry for the resource monitors goes.
    pub fn leave(&self) {
        self.pen.borrow_mut().take();
    }

    /// `machine` with `slot`'s cron ads (of `shared`) merged in, at `now`.
    pub fn machine_ad(
        &self,
        shared: &Shared,
        machine: &ClassAd,
        slot: &Slot,
        spec: &SlotSpec,
        now: i64,
    ) -> ClassAd {
        let cron = shared.cron.read();
        if cron.monitoring() {
            let job_start = slot.claim.as_ref().and_then(|c| c.job_start);
            let mut told = self.told.borrow_mut();
            if !told
                .as_ref()
                .is_some_and(|(m, j)| ClassAd::ptr_eq(m, machine) && *j == job_start)
            {
                let target = Target {
                    id: spec.id,
                    ad: target_ad(machine, slot, spec),
                    job_start,
                };
                let mut pen = self.pen.borrow_mut();
                if pen.is_none() {
                    *pen = shared.cron_targets.pen(&slot.id);
                }
                match pen.as_ref() {
                    Some(pen) => pen.write(target),
                    None => {
                        warn!(message = "Another actor writes this slot's resource-monitor entry; not written.",
                        slot = %slot.id)
                    }
                }
                *told = Some((machine.clone(), job_start));
            }
        }
        if cron.is_empty() {
            return machine.clone();
        }
        let mut merged = self.merged.borrow_mut();
        if let Some((m, g, ad)) = &*merged
            && ClassAd::ptr_eq(m, machine)
            && *g == cron.generation()
        {
            return ad.clone();
        }
        let target = target_ad(machine, slot, spec);
        let env = FixedEnv::new(now);
        let ad = cron.merged(machine, &target, (&slot.id, spec.id), &env);
        *merged = Some((machine.clone(), cron.generation(), ad.clone()));
        ad
    }
}

/// What a cron ad targets: the slot's name, number, type, resources and
/// devices, on the machine's attributes.
fn target_ad(machine: &ClassAd, slot: &Slot, spec: &SlotSpec) -> ClassAd {
    let mut target = machine.clone();
    target.insert_value("Name", Value::from(slot.name.as_str()));
    target.insert_value("SlotID", i64::from(spec.id));
    target.insert_value("SlotTypeID", i64::from(spec.type_id));
    #[allow(clippy::cast_possible_truncation)]
    target.insert_value("Cpus", slot.resources.cpus.round() as i64);
    target.insert_value("Memory", slot.resources.memory_mb);
    target.insert_value("Disk", slot.resources.disk_kb);
    for res in slot.resources.ids.keys() {
        if let Some((attr, ids)) = slot.resources.assigned(res) {
            target.insert_value(attr.as_str(), ids.as_str());
        }
    }
    target
}
