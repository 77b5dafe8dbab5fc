//! Which slots a machine has: the machine's resources as configured
//! (`NUM_CPUS`, `MEMORY`, `MACHINE_RESOURCE_<name>`, …) and their division
//! into static and partitionable slots (`SLOT_TYPE_<N>`,
//! `NUM_SLOTS_TYPE_<N>`, `NUM_SLOTS`, `SLOT_TYPE_<N>_PARTITIONABLE`), with
//! HTCondor's rules for fractions, percentages, `auto` shares and blanket
//! defaults.
//!
//! Pure: detected facts come in [`MachineInputs`], configuration in a
//! loaded [`Config`].

use std::collections::BTreeMap;
use std::fmt;

use crate::config::Config;

/// What detection found on the machine (or what a simulation says).
#[derive(Clone, Debug, PartialEq)]
pub struct MachineInputs {
    /// Detected CPU cores.
    pub cpus: u32,
    /// Detected physical memory, MiB.
    pub memory_mb: i64,
    /// Free space of the partition holding `EXECUTE`, KiB.
    pub disk_kb: i64,
    /// Virtual memory (swap), KiB.
    pub swap_kb: i64,
    /// GPUs found by GPU discovery (used when `STARTD_DETECT_GPUS` is on
    /// and no `MACHINE_RESOURCE_GPUS` is configured).
    pub gpus: u32,
}

/// The machine's resources after configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// `NUM_CPUS`.
    pub cpus: i64,
    /// `MEMORY` (less `RESERVED_MEMORY`), MiB.
    pub memory_mb: i64,
    /// Disk of the execute partition (less `RESERVED_DISK`), KiB.
    pub disk_kb: i64,
    /// Swap, KiB.
    pub swap_kb: i64,
    /// Custom resources by name (`GPUs`, from `MACHINE_RESOURCE_<name>`),
    /// with the quantity.
    pub custom: BTreeMap<String, f64>,
    /// Device ids of custom resources configured as id lists.
    pub custom_ids: BTreeMap<String, Vec<String>>,
}

/// One slot the configuration asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotSpec {
    /// The slot number: `slot<id>`.
    pub id: u32,
    /// `SlotTypeID`: the `N` of `SLOT_TYPE_<N>`, 0 for the default type.
    pub type_id: u32,
    /// Whether it is partitionable.
    pub partitionable: bool,
    /// Whether it is a backfill slot (`SLOT_TYPE_<N>_BACKFILL`).
    pub backfill: bool,
    /// CPUs.
    pub cpus: f64,
    /// Memory, MiB.
    pub memory_mb: i64,
    /// Share of the execute partition's disk.
    pub disk_fraction: f64,
    /// Share of swap.
    pub swap_fraction: f64,
    /// Custom resources.
    pub custom: BTreeMap<String, f64>,
    /// The devices of the custom resources with ids it holds, handed out
    /// in the order the configuration lists them.
    pub ids: BTreeMap<String, Vec<String>>,
}

impl SlotSpec {
    /// A new slot (Owner/Idle at `now`) with this spec's resources.
    pub fn new_slot(&self, m: &Machine, host: &str, now: i64) -> super::slot::Slot {
        let kind = if self.partitionable {
            super::slot::SlotKind::Partitionable
        } else {
            super::slot::SlotKind::Static
        };
        let resources = super::slot::Resources {
            cpus: self.cpus,
            memory_mb: self.memory_mb,
            disk_kb: self.disk_kb(m),
            custom: self.custom.clone(),
            ids: self.ids.clone(),
        };
        super::slot::Slot::with(&format!("slot{}", self.id), host, now, kind, resources)
    }

    /// Disk of this slot, KiB.
    pub fn disk_kb(&self, m: &Machine) -> i64 {
        fraction_of(self.disk_fraction, m.disk_kb)
    }

    /// Swap of this slot, KiB.
    pub fn swap_kb(&self, m: &Machine) -> i64 {
        fraction_of(self.swap_fraction, m.swap_kb)
    }
}

#[allow(clippy::cast_possible_truncation)]
fn fraction_of(f: f64, total: i64) -> i64 {
    (f * total as f64) as i64
}

/// A slot configuration that cannot be built: says what and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LayoutError(pub String);

/// Reserved names that cannot be custom resources.
const RESERVED: &[&str] = &["CPU", "CPUS", "DISK", "SWAP", "MEM", "MEMORY", "RAM"];

/// The machine's resources as the configuration sets them.
pub fn machine(config: &Config, inputs: &MachineInputs) -> Result<Machine, LayoutError> {
    let int = |name: &str| config.int(name).map_err(|e| LayoutError(e.to_string()));
    let text = |name: &str| {
        config
            .expanded(name)
            .map_err(|e| LayoutError(e.to_string()))
    };
    let cpus = int("NUM_CPUS")?.unwrap_or(i64::from(inputs.cpus));
    let memory = int("MEMORY")?.unwrap_or(inputs.memory_mb) - int("RESERVED_MEMORY")?.unwrap_or(0);
    let disk = inputs.disk_kb - int("RESERVED_DISK")?.unwrap_or(0) * 1024;
    let mut custom = BTreeMap::new();
    let mut custom_ids = BTreeMap::new();
    for m in config.table().iter() {
        let Some(tag) = m
            .name
            .get(..17)
            .filter(|p| p.eq_ignore_ascii_case("MACHINE_RESOURCE_"))
            .map(|_| &m.name[17..])
        else {
            continue;
        };
        if tag.is_empty() || tag.eq_ignore_ascii_case("NAMES") || m.value.is_empty() {
            continue;
        }
        if tag.len() > 10 && tag[..10].eq_ignore_ascii_case("INVENTORY_") {
            return Err(LayoutError(format!(
                "{}: resource inventory scripts are not supported; list the resource as \
                 MACHINE_RESOURCE_{} = <count or ids> instead",
                m.name,
                &tag[10..]
            )));
        }
        let value = config
            .get(&m.name)
            .map_err(|e| LayoutError(format!("{}: {e}", m.name)))?
            .unwrap_or_default();
        let (count, ids) = parse_resource(&value);
        let offline_name = format!("OFFLINE_{}", m.name);
        let offline = config
            .get(&offline_name)
            .map_err(|e| LayoutError(format!("{offline_name}: {e}")))?
            .unwrap_or_default();
        let (off_count, off_ids) = parse_resource(&offline);
        let (count, ids) = if ids.is_empty() {
            (
                (count
                    - if offline.trim().is_empty() {
                        0.0
                    } else {
                        off_count
                    })
                .max(0.0),
                ids,
            )
        } else {
            let online: Vec<String> = ids
                .iter()
                .filter(|i| !off_ids.contains(i))
                .cloned()
                .collect();
            (online.len() as f64, online)
        };
        custom.insert(tag.to_string(), count);
        if !ids.is_empty() {
            custom_ids.insert(tag.to_string(), ids);
        }
    }
    let has_gpus = custom.keys().any(|k| k.eq_ignore_ascii_case("GPUs"))
        || config.raw("MACHINE_RESOURCE_INVENTORY_GPUS").is_some();
    if !has_gpus {
        let detect = text("STARTD_DETECT_GPUS")?.unwrap_or_default();
        let d = detect.trim();
        if !d.is_empty() && !d.eq_ignore_ascii_case("false") && d != "0" {
            custom.insert("GPUs".to_string(), f64::from(inputs.gpus));
        }
    }
    let allowed: Vec<String> = text("MACHINE_RESOURCE_NAMES")?
        .map(|v| {
            v.split([',', ' ', '\t'])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if !allowed.is_empty() {
        custom.retain(|k, _| allowed.iter().any(|a| a.eq_ignore_ascii_case(k)));
    }
    if let Some(bad) = custom
        .keys()
        .find(|k| RESERVED.iter().any(|r| r.eq_ignore_ascii_case(k)))
    {
        return Err(LayoutError(format!(
            "MACHINE_RESOURCE_{bad} is invalid: '{bad}' is a reserved resource name"
        )));
    }
    Ok(Machine {
        cpus,
        memory_mb: memory,
        disk_kb: disk,
        swap_kb: inputs.swap_kb,
        custom,
        custom_ids,
    })
}

/// A count, or a list of device ids (whose count is their number).
fn parse_resource(value: &str) -> (f64, Vec<String>) {
    let t = value.trim();
    if let Some(n) = crate::config::parse_real(t, 0) {
        return (n.max(0.0), Vec::new());
    }
    let ids: Vec<String> = t
        .split([',', ' ', '\t'])
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    (unique.len() as f64, unique)
}

/// A share of one resource in a slot type.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Share {
    /// Divide what is left evenly among the `auto` slots.
    Auto,
    /// A fraction of the machine's total (`25%`, `1/4`).
    Fraction(f64),
    /// An absolute amount (`cpus=2`, `mem=1024`).
    Amount(f64),
}

fn parse_share(s: &str, type_id: u32) -> Result<Share, LayoutError> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("auto") || t.eq_ignore_ascii_case("automatic") {
        return Ok(Share::Auto);
    }
    if t.eq_ignore_ascii_case("min") || t.eq_ignore_ascii_case("minimal") {
        return Ok(Share::Fraction(1.0 / 128.0));
    }
    if t.contains('%') {
        return Ok(Share::Fraction(atof(t) / 100.0));
    }
    if let Some((num, den)) = t.split_once('/') {
        let den = atof(den);
        if den <= 0.0 {
            return Err(LayoutError(format!(
                "slot type {type_id}: cannot read the share \"{t}\": the denominator must be positive"
            )));
        }
        return Ok(Share::Fraction(atof(num) / den));
    }
    Ok(Share::Amount(atof(t)))
}

/// C's `atof`: the longest numeric prefix, 0 if none.
fn atof(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    let b = t.as_bytes();
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_e = false;
    while end < b.len() {
        let c = b[end];
        let ok = match c {
            b'0'..=b'9' => {
                seen_digit = true;
                true
            }
            b'+' | b'-' => end == 0 || matches!(b[end - 1], b'e' | b'E'),
            b'.' if !seen_dot && !seen_e => {
                seen_dot = true;
                true
            }
            b'e' | b'E' if seen_digit && !seen_e => {
                seen_e = true;
                true
            }
            _ => false,
        };
        if !ok {
            break;
        }
        end += 1;
    }
    let mut prefix = &t[..end];
    while !prefix.is_empty() && prefix.parse::<f64>().is_err() {
        prefix = &prefix[..prefix.len() - 1];
    }
    prefix.parse().unwrap_or(0.0)
}

/// One slot as requested, before `auto` shares are handed out.
#[derive(Clone, Debug)]
struct Request {
    cpus: Option<f64>,
    memory: Option<i64>,
    swap: Option<f64>,
    disk: Option<f64>,
    custom: BTreeMap<String, Option<f64>>,
    fractional_cpus: bool,
}

/// An amount from a share: `None` for `auto`.
#[allow(clippy::cast_possible_truncation)]
fn amount_f(total: f64, share: Share, min: f64, integral: bool) -> Option<f64> {
    let v = match share {
        Share::Auto => return None,
        Share::Fraction(f) => f * total,
        Share::Amount(a) => a,
    };
    let v = if integral { v.trunc() } else { v };
    Some(v.max(min))
}

fn request(m: &Machine, list: &str, type_id: u32) -> Result<Request, LayoutError> {
    let mut default = Share::Auto;
    let mut fractional_cpus = false;
    let mut cpus = None;
    let mut memory = None;
    let mut swap = None;
    let mut disk = None;
    let mut custom: BTreeMap<String, Option<Share>> =
        m.custom.keys().map(|k| (k.clone(), None)).collect();
    let delims: &[char] = if list.contains('\n') {
        &['\n']
    } else {
        &[',', ' ', '\t', '\r', '\n']
    };
    for item in list.split(delims).map(str::trim).filter(|s| !s.is_empty()) {
        let Some((attr, val)) = item.split_once('=') else {
            let s = parse_share(item, type_id)?;
            let bad = match s {
                Share::Amount(a) => a > 0.0,
                Share::Fraction(f) => !(0.0..=1.0).contains(&f),
                Share::Auto => false,
            };
            if bad {
                return Err(LayoutError(format!(
                    "slot type {type_id}: \"{item}\" is invalid: give a percentage (like \"25%\"), \
                     a fraction (like \"1/4\"), or every resource (like \"c=1, r=25%, s=25%, d=25%\")"
                )));
            }
            if item.eq_ignore_ascii_case("min") || item.eq_ignore_ascii_case("minimal") {
                fractional_cpus = true;
            }
            default = s;
            continue;
        };
        let attr = attr.trim();
        let val = val.trim();
        let val = val.split_once(':').map_or(val, |(v, _)| v.trim());
        if val.is_empty() {
            return Err(LayoutError(format!(
                "slot type {type_id}: cannot read \"{item}\": no value after '='"
            )));
        }
        let share = parse_share(val, type_id)?;
        if let Some(k) = custom
            .keys()
            .find(|k| k.eq_ignore_ascii_case(attr))
            .cloned()
        {
            custom.insert(k, Some(share));
            continue;
        }
        let prefix_of = |word: &str| {
            !attr.is_empty()
                && attr.len() <= word.len()
                && word[..attr.len()].eq_ignore_ascii_case(attr)
        };
        if prefix_of("cpus") {
            cpus = Some(share);
        } else if prefix_of("ram") || prefix_of("memory") {
            memory = Some(share);
        } else if prefix_of("swap") || prefix_of("virtualmemory") {
            if let Share::Amount(a) = share
                && a > 0.0
            {
                return Err(LayoutError(format!(
                    "slot type {type_id}: swap must be a percentage or a fraction, not \"{val}\""
                )));
            }
            swap = Some(share);
        } else if prefix_of("disk") {
            if let Share::Amount(a) = share
                && a > 0.0
            {
                return Err(LayoutError(format!(
                    "slot type {type_id}: disk must be a percentage or a fraction, not \"{val}\""
                )));
            }
            disk = Some(share);
        } else if matches!(share, Share::Amount(a) if a > 0.0) {
            return Err(LayoutError(format!(
                "slot type {type_id}: unknown resource \"{attr}\" (known: Cpus, Memory, Disk, Swap{})",
                m.custom
                    .keys()
                    .map(|k| format!(", {k}"))
                    .collect::<String>()
            )));
        }
    }
    let lower = if fractional_cpus { 0.0 } else { 1.0 };
    #[allow(clippy::cast_precision_loss)]
    let cpus = amount_f(
        m.cpus as f64,
        cpus.unwrap_or(default),
        lower,
        !fractional_cpus,
    );
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let memory =
        amount_f(m.memory_mb as f64, memory.unwrap_or(default), lower, true).map(|v| v as i64);
    let frac = |s: Share| match s {
        Share::Auto => None,
        Share::Fraction(f) => Some(f),
        Share::Amount(a) => Some(a.max(0.0)),
    };
    let swap = frac(swap.unwrap_or(default));
    let disk = frac(disk.unwrap_or(default));
    let custom = custom
        .into_iter()
        .map(|(k, s)| {
            let total = m.custom.get(&k).copied().unwrap_or(0.0);
            let v = amount_f(total, s.unwrap_or(default), 0.0, true);
            (k, v)
        })
        .collect();
    Ok(Request {
        cpus,
        memory,
        swap,
        disk,
        custom,
        fractional_cpus,
    })
}

/// What is left to hand out, and how many `auto` shares want each part.
struct Avail {
    cpus: f64,
    cpus_auto: u32,
    memory: i64,
    memory_auto: i64,
    swap: f64,
    swap_auto: u32,
    disk: f64,
    disk_auto: u32,
    custom: BTreeMap<String, f64>,
    custom_auto: BTreeMap<String, u32>,
}

impl Avail {
    #[allow(clippy::cast_precision_loss)]
    fn new(m: &Machine) -> Avail {
        Avail {
            cpus: m.cpus as f64,
            cpus_auto: 0,
            memory: m.memory_mb,
            memory_auto: 0,
            swap: 1.0,
            swap_auto: 0,
            disk: 1.0,
            disk_auto: 0,
            custom: m.custom.clone(),
            custom_auto: m.custom.keys().map(|k| (k.clone(), 0)).collect(),
        }
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "Cpus: {}, Memory: {}, Swap: {:.2}%, Disk: {:.2}%",
            self.cpus,
            self.memory,
            100.0 * self.swap,
            100.0 * self.disk
        );
        for (k, v) in &self.custom {
            s.push_str(&format!(", {k}: {v}"));
        }
        s
    }

    /// Takes a request's fixed amounts; false if something runs out.
    fn decrement(&mut self, r: &Request) -> bool {
        const FLOOR: f64 = -0.000_001;
        let cpus = match r.cpus {
            Some(c) if !(r.fractional_cpus && c < 0.5) => self.cpus - c,
            _ => self.cpus,
        };
        let memory = self.memory - r.memory.unwrap_or(0);
        let swap = self.swap - r.swap.unwrap_or(0.0);
        let disk = self.disk - r.disk.unwrap_or(0.0);
        let mut custom = self.custom.clone();
        for (k, v) in &mut custom {
            if let Some(Some(a)) = r.custom.get(k) {
                *v -= a;
            }
        }
        #[allow(clippy::cast_precision_loss)]
        if cpus < FLOOR
            || (memory as f64) < FLOOR
            || swap < FLOOR
            || disk < FLOOR
            || custom.values().any(|v| *v < FLOOR)
        {
            return false;
        }
        self.cpus = cpus;
        self.memory = memory;
        self.swap = swap;
        self.disk = disk;
        self.custom = custom;
        self.cpus_auto += u32::from(r.cpus.is_none());
        self.memory_auto += i64::from(r.memory.is_none());
        self.swap_auto += u32::from(r.swap.is_none());
        self.disk_auto += u32::from(r.disk.is_none());
        for (k, n) in &mut self.custom_auto {
            if matches!(r.custom.get(k), Some(None)) {
                *n += 1;
            }
        }
        true
    }
}

/// The slots the configuration defines, numbered from 1, or what could not
/// be satisfied.
pub fn layout(config: &Config, m: &Machine) -> Result<Vec<SlotSpec>, LayoutError> {
    let int = |name: &str| config.int(name).map_err(|e| LayoutError(e.to_string()));
    let boolean = |name: &str, default: bool| {
        config
            .bool(name)
            .map(|b| b.unwrap_or(default))
            .map_err(|e| LayoutError(e.to_string()))
    };
    for bad in ["SLOT_TYPE_0", "NUM_SLOTS_TYPE_0"] {
        if config.raw(bad).is_some_and(|v| !v.trim().is_empty()) {
            return Err(LayoutError(format!(
                "{bad} is not allowed: slot type 0 is the default type; number your types from 1"
            )));
        }
    }
    let max_types =
        u32::try_from(int("MAX_SLOT_TYPES")?.unwrap_or(10).clamp(0, 1000)).unwrap_or(10) + 1;
    let mut counts = vec![0i64; max_types as usize];
    let mut backfill = vec![false; max_types as usize];
    let mut any = false;
    for t in 1..max_types {
        let n = int(&format!("NUM_SLOTS_TYPE_{t}"))?.unwrap_or(0);
        if n < 0 {
            return Err(LayoutError(format!("NUM_SLOTS_TYPE_{t} = {n} is negative")));
        }
        counts[t as usize] = n;
        any |= n != 0;
        backfill[t as usize] = boolean(&format!("SLOT_TYPE_{t}_BACKFILL"), false)?;
    }
    if !any {
        let pslot = boolean("SLOT_TYPE_0_PARTITIONABLE", true)?;
        counts[0] = int("NUM_SLOTS")?.unwrap_or(if pslot { 1 } else { m.cpus });
        backfill[0] = boolean("SLOT_TYPE_0_BACKFILL", false)?;
    }

    let mut avail = Avail::new(m);
    let mut bk_avail = Avail::new(m);
    let mut reqs: Vec<(u32, Request)> = Vec::new();
    for t in 0..max_types {
        let n = counts[t as usize];
        if n == 0 {
            continue;
        }
        let list = if t == 0 {
            "auto".to_string()
        } else {
            config
                .get(&format!("SLOT_TYPE_{t}"))
                .map_err(|e| LayoutError(format!("SLOT_TYPE_{t}: {e}")))?
                .unwrap_or_default()
        };
        for j in 0..n {
            let r = request(m, &list, t)?;
            let pool = if backfill[t as usize] {
                &mut bk_avail
            } else {
                &mut avail
            };
            if !pool.decrement(&r) {
                return Err(LayoutError(format!(
                    "cannot create slot {} of type {t} (SLOT_TYPE_{t} = {list}): requesting {}; available: {}",
                    j + 1,
                    describe_request(&r),
                    pool.describe()
                )));
            }
            reqs.push((t, r));
        }
    }

    let mut remain: [BTreeMap<String, f64>; 2] = [avail.custom.clone(), bk_avail.custom.clone()];
    let mut remain_n: [BTreeMap<String, u32>; 2] =
        [avail.custom_auto.clone(), bk_avail.custom_auto.clone()];
    // How many devices of each resource with ids the slots before have
    // taken (the backfill slots have the machine's devices over again).
    let mut ids_taken: [BTreeMap<String, usize>; 2] = Default::default();
    let mut slots = Vec::with_capacity(reqs.len());
    for (i, (t, r)) in reqs.into_iter().enumerate() {
        let bk = backfill[t as usize];
        let pool = if bk { &bk_avail } else { &avail };
        let which = usize::from(bk);
        let id = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let fail = |what: &str| {
            LayoutError(format!(
                "cannot create slot {id} (slot type {t}): no {what} left for its automatic share; available: {}",
                pool.describe()
            ))
        };
        let cpus = match r.cpus {
            Some(c) => c,
            None => {
                let v = pool.cpus / f64::from(pool.cpus_auto.max(1));
                if (r.fractional_cpus && v <= 0.0) || (!r.fractional_cpus && v < 1.0) {
                    return Err(fail("CPU"));
                }
                v
            }
        };
        let memory = match r.memory {
            Some(mm) => mm,
            None => {
                let v = pool.memory / pool.memory_auto.max(1);
                if v < 1 {
                    return Err(fail("memory"));
                }
                v
            }
        };
        let swap = match r.swap {
            Some(s) => s,
            None => {
                let v = pool.swap / f64::from(pool.swap_auto.max(1));
                if v <= 0.0 {
                    return Err(fail("swap"));
                }
                v
            }
        };
        let disk = match r.disk {
            Some(d) => d,
            None => {
                let v = pool.disk / f64::from(pool.disk_auto.max(1));
                if v <= 0.0 {
                    return Err(fail("disk"));
                }
                v
            }
        };
        let custom = custom_amounts(&r, pool, &mut remain[which], &mut remain_n[which]);
        let ids = take_ids(m, &custom, &mut ids_taken[which]);
        let partitionable = config
            .bool(&format!("SLOT_TYPE_{t}_PARTITIONABLE"))
            .map_err(|e| LayoutError(e.to_string()))?
            .unwrap_or(t == 0);
        slots.push(SlotSpec {
            id,
            type_id: t,
            partitionable,
            backfill: bk,
            cpus,
            memory_mb: memory,
            disk_fraction: disk,
            swap_fraction: swap,
            custom,
            ids,
        });
    }
    Ok(slots)
}

/// A slot's custom resources: each fixed amount as asked, each `auto`
/// share an equal part (rounded up) of what `remain` has left for the
/// `remain_n` slots still to take one.
fn custom_amounts(
    r: &Request,
    pool: &Avail,
    remain: &mut BTreeMap<String, f64>,
    remain_n: &mut BTreeMap<String, u32>,
) -> BTreeMap<String, f64> {
    let mut custom = BTreeMap::new();
    for (k, v) in &r.custom {
        let amount = match v {
            Some(a) => *a,
            None => {
                let left = pool.custom.get(k).copied().unwrap_or(0.0);
                let n = remain_n.get(k).copied().unwrap_or(1).max(1);
                let a = if left < 1.0 {
                    0.0
                } else {
                    (remain.get(k).copied().unwrap_or(0.0) / f64::from(n)).ceil()
                };
                if let Some(rc) = remain.get_mut(k) {
                    *rc -= a;
                }
                if let Some(rn) = remain_n.get_mut(k) {
                    *rn = rn.saturating_sub(1);
                }
                a
            }
        };
        custom.insert(k.clone(), amount);
    }
    custom
}

/// The devices a slot with `custom` resources takes of `m`'s, after the
/// first `taken` of each (counted on).
fn take_ids(
    m: &Machine,
    custom: &BTreeMap<String, f64>,
    taken: &mut BTreeMap<String, usize>,
) -> BTreeMap<String, Vec<String>> {
    let mut ids = BTreeMap::new();
    for (k, all) in &m.custom_ids {
        let Some(&n) = custom.get(k) else { continue };
        let from = taken.entry(k.clone()).or_default();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = n.max(0.0).ceil() as usize;
        let mine: Vec<String> = all.iter().skip(*from).take(n).cloned().collect();
        *from += mine.len();
        if !mine.is_empty() {
            ids.insert(k.clone(), mine);
        }
    }
    ids
}

fn describe_request(r: &Request) -> String {
    let show = |v: Option<f64>, pct: bool| match v {
        None => "auto".to_string(),
        Some(x) if pct => format!("{:.2}%", 100.0 * x),
        Some(x) => format!("{x}"),
    };
    #[allow(clippy::cast_precision_loss)]
    let mut s = format!(
        "Cpus: {}, Memory: {}, Swap: {}, Disk: {}",
        show(r.cpus, false),
        show(r.memory.map(|m| m as f64), false),
        show(r.swap, true),
        show(r.disk, true)
    );
    for (k, v) in &r.custom {
        s.push_str(&format!(", {k}: {}", show(*v, false)));
    }
    s
}

impl fmt::Display for SlotSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "slot{} type {}{}: Cpus {}, Memory {}, Disk {:.2}%, Swap {:.2}%",
            self.id,
            self.type_id,
            if self.partitionable {
                " (partitionable)"
            } else {
                ""
            },
            self.cpus,
            self.memory_mb,
            100.0 * self.disk_fraction,
            100.0 * self.swap_fraction
        )?;
        for (k, v) in &self.custom {
            write!(f, ", {k} {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Scope, load_text};

    fn inputs(cpus: u32, memory_mb: i64) -> MachineInputs {
        MachineInputs {
            cpus,
            memory_mb,
            disk_kb: 1_000_000,
            swap_kb: 500_000,
            gpus: 0,
        }
    }

    fn slots(text: &str, inp: &MachineInputs) -> Result<(Machine, Vec<SlotSpec>), LayoutError> {
        let specials = vec![("DETECTED_CPUS".to_string(), inp.cpus.to_string())];
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        let config = load_text("condor_config", text, scope, specials).expect("config loads");
        let m = machine(&config, inp)?;
        let s = layout(&config, &m)?;
        Ok((m, s))
    }

    fn summary(s: &[SlotSpec]) -> Vec<(u32, bool, f64, i64, f64)> {
        s.iter()
            .map(|x| {
                (
                    x.type_id,
                    x.partitionable,
                    x.cpus,
                    x.memory_mb,
                    x.disk_fraction,
                )
            })
            .collect()
    }

    #[test]
    fn by_default_one_partitionable_slot_holds_the_machine() {
        let (m, s) = slots("", &inputs(4, 8192)).expect("layout");
        assert_eq!(summary(&s), vec![(0, true, 4.0, 8192, 1.0)]);
        assert_eq!(s[0].disk_kb(&m), 1_000_000);
        assert_eq!(
            s[0].custom.get("GPUs"),
            Some(&0.0),
            "GPU discovery is on by default"
        );
    }

    #[test]
    fn static_slots_template_gives_one_core_each() {
        let (_, s) = slots("use FEATURE : StaticSlots\n", &inputs(4, 8192)).expect("layout");
        assert_eq!(summary(&s), vec![(1, false, 1.0, 2048, 0.25); 4]);
        assert_eq!(s.iter().map(|x| x.id).collect::<Vec<_>>(), [1, 2, 3, 4]);
    }

    #[test]
    fn num_slots_divides_the_default_type() {
        let (_, s) = slots(
            "NUM_SLOTS = 4\nSLOT_TYPE_0_PARTITIONABLE = False\n",
            &inputs(4, 1000),
        )
        .expect("layout");
        assert_eq!(summary(&s), vec![(0, false, 1.0, 250, 0.25); 4]);
    }

    #[test]
    fn the_manuals_equivalent_slot_types() {
        // 4 cores and 256 MB: types 1-3 are equal, as are types 4-6.
        let inp = inputs(4, 256);
        for (def, want) in [
            ("cpus=2, ram=128, swap=25%, disk=1/2", (2.0, 128, 0.5, 0.25)),
            (
                "cpus=1/2, memory=128, virt=25%, disk=50%",
                (2.0, 128, 0.5, 0.25),
            ),
            ("c=1/2, m=50%, v=1/4, disk=1/2", (2.0, 128, 0.5, 0.25)),
            ("c=25%, m=64, v=1/4, d=25%", (1.0, 64, 0.25, 0.25)),
            ("25%", (1.0, 64, 0.25, 0.25)),
            ("1/4", (1.0, 64, 0.25, 0.25)),
        ] {
            let text = format!("SLOT_TYPE_1 = {def}\nNUM_SLOTS_TYPE_1 = 1\n");
            let (_, s) = slots(&text, &inp).expect(def);
            let x = &s[0];
            assert_eq!(
                (x.cpus, x.memory_mb, x.disk_fraction, x.swap_fraction),
                want,
                "{def}"
            );
            assert!(!x.partitionable);
        }
    }

    #[test]
    fn auto_shares_divide_what_is_left() {
        let text = "SLOT_TYPE_1 = mem=10%\nNUM_SLOTS_TYPE_1 = 2\nSLOT_TYPE_2 = auto\nNUM_SLOTS_TYPE_2 = 2\n";
        let (_, s) = slots(text, &inputs(8, 1000)).expect("layout");
        assert_eq!(
            summary(&s),
            vec![
                (1, false, 2.0, 100, 0.25),
                (1, false, 2.0, 100, 0.25),
                (2, false, 2.0, 400, 0.25),
                (2, false, 2.0, 400, 0.25),
            ]
        );
    }

    #[test]
    fn custom_resources_as_in_the_manual() {
        let text = "MACHINE_RESOURCE_Cogs = 16\nMACHINE_RESOURCE_actuator = 8\n\
            SLOT_TYPE_1 = cogs=50%,actuator=6,50%\nSLOT_TYPE_1_PARTITIONABLE = TRUE\nNUM_SLOTS_TYPE_1 = 1\n\
            SLOT_TYPE_2 = cogs=25%,actuator=1,25%\nSLOT_TYPE_2_PARTITIONABLE = FALSE\nNUM_SLOTS_TYPE_2 = 2\n";
        let (m, s) = slots(text, &inputs(8, 16000)).expect("layout");
        assert_eq!(m.custom.get("Cogs"), Some(&16.0));
        assert_eq!(
            summary(&s),
            vec![
                (1, true, 4.0, 8000, 0.5),
                (2, false, 2.0, 4000, 0.25),
                (2, false, 2.0, 4000, 0.25)
            ]
        );
        assert_eq!(s[0].custom.get("Cogs"), Some(&8.0));
        assert_eq!(s[0].custom.get("actuator"), Some(&6.0));
        assert_eq!(s[2].custom.get("actuator"), Some(&1.0));
    }

    #[test]
    fn auto_custom_resources_give_the_excess_to_the_first_slots() {
        let text = "MACHINE_RESOURCE_GPUs = 3\nNUM_SLOTS_TYPE_1 = 2\n";
        let (_, s) = slots(text, &inputs(2, 1000)).expect("layout");
        let gpus: Vec<f64> = s.iter().map(|x| x.custom["GPUs"]).collect();
        assert_eq!(gpus, [2.0, 1.0]);
        let (m, _) = slots(
            "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1 CUDA2\nOFFLINE_MACHINE_RESOURCE_GPUs = CUDA1\n",
            &inputs(2, 1000),
        )
        .expect("layout");
        assert_eq!(m.custom["GPUs"], 2.0);
        assert_eq!(m.custom_ids["GPUs"], ["CUDA0", "CUDA2"]);
    }

    #[test]
    fn devices_go_to_the_slots_in_the_order_they_are_listed() {
        let (_, s) = slots(
            "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1, CUDA2
NUM_SLOTS_TYPE_1 = 2
             NUM_SLOTS_TYPE_2 = 1
SLOT_TYPE_2 = cpus=1, gpus=0
",
            &inputs(3, 1000),
        )
        .expect("layout");
        let ids: Vec<Vec<String>> = (s.iter())
            .map(|x| x.ids.get("GPUs").cloned().unwrap_or_default())
            .collect();
        assert_eq!(
            ids,
            [vec!["CUDA0", "CUDA1"], vec!["CUDA2"], vec![]],
            "the first slot has the excess"
        );
        // A partitionable slot holds them all; a count has no ids.
        let (_, s) = slots(
            "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1
MACHINE_RESOURCE_Cogs = 4
             NUM_SLOTS_TYPE_1 = 1
SLOT_TYPE_1_PARTITIONABLE = true
",
            &inputs(3, 1000),
        )
        .expect("layout");
        assert_eq!(s[0].ids.get("GPUs").map(Vec::len), Some(2));
        assert!(!s[0].ids.contains_key("Cogs"));
    }

    #[test]
    fn impossible_layouts_say_what_could_not_be_satisfied() {
        let err = slots(
            "SLOT_TYPE_1 = cpus=3\nNUM_SLOTS_TYPE_1 = 2\n",
            &inputs(4, 1000),
        )
        .expect_err("too many cpus");
        assert!(err.0.contains("cannot create slot 2 of type 1"), "{err}");
        assert!(err.0.contains("Cpus: 1"), "{err}");
        let err =
            slots("NUM_SLOTS_TYPE_1 = 8\n", &inputs(4, 1000)).expect_err("more slots than cpus");
        assert!(err.0.contains("automatic share"), "{err}");
        let err = slots(
            "SLOT_TYPE_1 = disk=100\nNUM_SLOTS_TYPE_1 = 1\n",
            &inputs(4, 1000),
        )
        .expect_err("absolute disk");
        assert!(err.0.contains("disk must be a percentage"), "{err}");
        let err = slots(
            "SLOT_TYPE_1 = 150%\nNUM_SLOTS_TYPE_1 = 1\n",
            &inputs(4, 1000),
        )
        .expect_err("over 100%");
        assert!(err.0.contains("is invalid"), "{err}");
        let err = slots(
            "SLOT_TYPE_1 = widgets=2\nNUM_SLOTS_TYPE_1 = 1\n",
            &inputs(4, 1000),
        )
        .expect_err("unknown");
        assert!(err.0.contains("unknown resource \"widgets\""), "{err}");
        let err = slots("SLOT_TYPE_0 = 50%\n", &inputs(4, 1000)).expect_err("type 0");
        assert!(err.0.contains("SLOT_TYPE_0"), "{err}");
        let err = slots("MACHINE_RESOURCE_Memory = 4\n", &inputs(4, 1000)).expect_err("reserved");
        assert!(err.0.contains("reserved resource name"), "{err}");
    }

    #[test]
    fn configured_totals_override_detection() {
        let (m, s) = slots(
            "NUM_CPUS = 2\nMEMORY = 3000\nRESERVED_MEMORY = 1000\nSTARTD_DETECT_GPUS = false\n",
            &inputs(16, 64000),
        )
        .expect("layout");
        assert_eq!((m.cpus, m.memory_mb), (2, 2000));
        assert!(m.custom.is_empty());
        assert_eq!(summary(&s), vec![(0, true, 2.0, 2000, 1.0)]);
    }
}
