//! `roost-log`'s event filters (actor, slot, claim, kind, time) and its
//! time formats.

use std::collections::BTreeMap;

use roost::events::{DaemonEvent, Envelope, Event};
use roost::policy::node::NodeEvent;
use roost::policy::slot::SlotEvent;
use roost::startd::{HookEvent, StarterEvent};

use super::FilterArgs;

/// A filter over events read in order; it tracks which hook and starter
/// belongs to which slot and claim, as their later events do not say.
pub struct Filter {
    actor: Option<String>,
    slot: Option<String>,
    claim: Option<u64>,
    kind: Option<String>,
    since: Option<i64>,
    until: Option<i64>,
    /// Hook or starter actor → (slot, claim).
    owners: BTreeMap<String, (String, Option<u64>)>,
    /// Slot → (current claim, waiting claim).
    claims: BTreeMap<String, (Option<u64>, Option<u64>)>,
}

impl Filter {
    /// The filter `args` ask for; times relative to `now`.
    pub fn new(args: &FilterArgs, now: i64) -> Result<Filter, String> {
        let time = |s: &Option<String>| s.as_deref().map(|s| parse_time(s, now)).transpose();
        Ok(Filter {
            actor: args.actor.clone(),
            slot: args.slot.clone(),
            claim: args.claim,
            kind: args.kind.as_ref().map(|k| k.to_ascii_lowercase()),
            since: time(&args.since)?,
            until: time(&args.until)?,
            owners: BTreeMap::new(),
            claims: BTreeMap::new(),
        })
    }

    /// Whether `env` is after `--until` (the log is in time order).
    pub fn past_end(&self, env: &Envelope) -> bool {
        self.until.is_some_and(|u| env.time > u)
    }

    /// Whether `env` passes; must see every event in order.
    pub fn keep(&mut self, env: &Envelope) -> bool {
        let (slot, claim) = self.track(env);
        if self.actor.as_ref().is_some_and(|a| *a != env.actor)
            || self.since.is_some_and(|s| env.time < s)
            || self.until.is_some_and(|u| env.time > u)
        {
            return false;
        }
        if let Some(want) = &self.slot
            && slot.as_ref() != Some(want)
        {
            return false;
        }
        if let Some(want) = self.claim
            && !claim.contains(&want)
        {
            return false;
        }
        if let Some(k) = &self.kind {
            let name = kind_of(&env.event).to_ascii_lowercase();
            if !name.starts_with(k.as_str()) {
                return false;
            }
        }
        true
    }

    /// The slot `env` concerns and the claims it belongs to.
    fn track(&mut self, env: &Envelope) -> (Option<String>, Vec<u64>) {
        match &env.event {
            Event::Slot(e) => {
                let c = self.claims.entry(env.actor.clone()).or_default();
                let of = match e {
                    SlotEvent::ClaimCreated { claim, .. } => {
                        c.0 = Some(claim.id);
                        Some(claim.id)
                    }
                    SlotEvent::PreemptingClaimQueued { claim, .. } => {
                        c.1 = Some(claim.id);
                        Some(claim.id)
                    }
                    SlotEvent::DynamicSlotCreated { claim, .. } => Some(claim.id),
                    SlotEvent::ClaimEnded { .. } => {
                        let ended = c.0;
                        *c = (c.1, None);
                        ended
                    }
                    _ => c.0,
                };
                (Some(env.actor.clone()), of.into_iter().collect())
            }
            Event::Hook(HookEvent::Started { slot, claim, .. }) => {
                self.owners
                    .insert(env.actor.clone(), (slot.clone(), *claim));
                (Some(slot.clone()), claim.iter().copied().collect())
            }
            Event::Hook(HookEvent::Refused { slot, .. }) => (Some(slot.clone()), Vec::new()),
            Event::Starter(StarterEvent::Spawned { slot, claim, .. }) => {
                self.owners
                    .insert(env.actor.clone(), (slot.clone(), Some(*claim)));
                (Some(slot.clone()), vec![*claim])
            }
            Event::Hook(_) | Event::Starter(_) => match self.owners.get(&env.actor) {
                Some((s, c)) => (Some(s.clone()), c.iter().copied().collect()),
                None => (None, Vec::new()),
            },
            Event::Daemon(DaemonEvent::Reconciled { slot, .. }) => (Some(slot.clone()), Vec::new()),
            Event::Node(
                NodeEvent::SlotCreated { slot, .. } | NodeEvent::SlotDeleted { slot, .. },
            ) => (Some(slot.clone()), Vec::new()),
            Event::Daemon(_)
            | Event::Node(_)
            | Event::Cron(_)
            | Event::Job(_)
            | Event::Route(_)
            | Event::Eventd(_) => (None, Vec::new()),
        }
    }
}

/// `Slot.ActivityChanged`, `Hook.Finished`, …
pub fn kind_of(e: &Event) -> String {
    let v = serde_json::to_value(e).unwrap_or_default();
    let mut path = Vec::new();
    let mut cur = &v;
    while path.len() < 2 {
        match cur {
            serde_json::Value::Object(m) if m.len() == 1 => {
                let Some((k, inner)) = m.iter().next() else {
                    break;
                };
                path.push(k.clone());
                cur = inner;
            }
            serde_json::Value::String(s) => {
                path.push(s.clone());
                break;
            }
            _ => break,
        }
    }
    path.join(".")
}

/// A time as the options take it: `@<epoch seconds>`, `-1h`/`-30m`/`-2d`/
/// `-45s` before `now`, an RFC 3339 time, or a local `YYYY-MM-DD[ HH:MM[:SS]]`.
pub fn parse_time(s: &str, now: i64) -> Result<i64, String> {
    let s = s.trim();
    let bad = || {
        format!(
            "cannot read the time '{s}': use @<epoch seconds>, -1h/-30m/-2d/-45s, \
             2026-11-22T10:00:00Z or 2026-11-22 10:00[:00]"
        )
    };
    if let Some(n) = s.strip_prefix('@') {
        return n.parse().map_err(|_| bad());
    }
    if let Some(rel) = s.strip_prefix('-')
        && let Some(unit) = rel.chars().last()
        && let Ok(n) = rel[..rel.len() - unit.len_utf8()].parse::<i64>()
    {
        let secs = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => return Err(bad()),
        };
        return Ok(now - n * secs);
    }
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Ok(t.as_second());
    }
    let civil = s
        .parse::<jiff::civil::DateTime>()
        .or_else(|_| {
            s.parse::<jiff::civil::Date>()
                .map(|d| d.to_datetime(jiff::civil::Time::midnight()))
        })
        .map_err(|_| bad())?;
    civil
        .to_zoned(jiff::tz::TimeZone::system())
        .map(|z| z.timestamp().as_second())
        .map_err(|_| bad())
}

/// An event time in local time, to the second.
pub fn show_time(t: i64) -> String {
    match jiff::Timestamp::from_second(t) {
        Ok(ts) => ts
            .to_zoned(jiff::tz::TimeZone::system())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string(),
        Err(_) => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_every_form() {
        assert_eq!(parse_time("@1764000000", 0), Ok(1_764_000_000));
        assert_eq!(parse_time("-1h", 10_000), Ok(6_400));
        assert_eq!(parse_time("-30m", 10_000), Ok(8_200));
        assert_eq!(parse_time("-2d", 200_000), Ok(27_200));
        assert_eq!(parse_time("2026-11-22T10:00:00Z", 0), Ok(1_795_341_600));
        assert!(parse_time("2026-11-22 10:00", 0).is_ok());
        assert!(parse_time("2026-11-22", 0).is_ok());
        let e = parse_time("yesterday", 0).unwrap_err();
        assert!(e.contains("'yesterday'"), "{e}");
        assert!(parse_time("-5y", 0).is_err());
    }
}
