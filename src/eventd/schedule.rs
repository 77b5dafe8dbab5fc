//! SHUTDOWN events as `EVENT_LIST` names them (`SHUTDOWN DAYS TIME
//! DURATION BANDWIDTH CONSTRAINT RANK`), and when they happen: the
//! eventd's local time zone decides (the spec: "the timezone in effect
//! where the eventd is running determines the timing of events"). Pure:
//! the time and the zone are given.
//!
//! - DAYS: letters of the week, any case — `U` Sunday, `M`, `T`, `W`,
//!   `R` Thursday, `F`, `S` Saturday (`MTWRF`, `MTWRFSU`).
//! - TIME: `HH:MM`, the local time of day the shutdown begins.
//! - DURATION: seconds (`3600`), or `H:MM`.
//! - BANDWIDTH: megabits per second the vacates may use (`2`, `0.5`).
//! - CONSTRAINT, RANK: names of knobs holding ClassAd expressions: which
//!   startd ads the event takes, and in which order they are vacated
//!   (higher first).

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::classad::{ClassAd, Env, Expr, FixedEnv, Value, parse_expr};

/// A SHUTDOWN event.
#[derive(Clone, Debug)]
pub struct Shutdown {
    /// Its name in `EVENT_LIST`.
    pub name: String,
    /// The days it happens, bit `n` for weekday `n` (0 Sunday).
    pub days: u8,
    /// Seconds after local midnight it begins.
    pub time_of_day: i64,
    /// How long the machines stay down, seconds.
    pub duration: i64,
    /// Megabits per second the vacates may use.
    pub bandwidth: f64,
    /// The startd ads it takes (the knob's expression).
    pub constraint: Expr,
    /// Their vacate order, higher first.
    pub rank: Expr,
}

/// An event definition that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {event}: {message}")]
pub struct EventError {
    /// The event's name.
    pub event: String,
    /// What is wrong, naming the field.
    pub message: String,
}

fn day_bit(c: char) -> Option<u8> {
    let n = match c.to_ascii_uppercase() {
        'U' => 0,
        'M' => 1,
        'T' => 2,
        'W' => 3,
        'R' => 4,
        'F' => 5,
        'S' => 6,
        _ => return None,
    };
    Some(1 << n)
}

/// `H:MM` as seconds.
fn clock_time(text: &str) -> Option<i64> {
    let (h, m) = text.split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    ((0..=99).contains(&h) && (0..60).contains(&m)).then_some((h * 60 + m) * 60)
}

impl Shutdown {
    /// Event `name` from its definition `text`; `knob` gives the value of
    /// the constraint's and the rank's knobs.
    pub fn parse(
        name: &str,
        text: &str,
        knob: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Shutdown, EventError> {
        let err = |message: String| EventError {
            event: name.to_string(),
            message,
        };
        let f: Vec<&str> = text.split_whitespace().collect();
        if f.first().map(|t| t.to_ascii_uppercase()) != Some("SHUTDOWN".into()) {
            return Err(err(format!(
                "only SHUTDOWN events exist; \"{}\" is not one",
                f.first().copied().unwrap_or("")
            )));
        }
        if f.len() != 7 {
            return Err(err(format!(
                "a SHUTDOWN event has 6 fields (DAYS TIME DURATION BANDWIDTH CONSTRAINT RANK), not {}",
                f.len() - 1
            )));
        }
        let mut days = 0u8;
        for c in f[1].chars() {
            days |= day_bit(c)
                .ok_or_else(|| err(format!("DAYS \"{}\": '{c}' is not one of UMTWRFS", f[1])))?;
        }
        let time_of_day = clock_time(f[2])
            .filter(|t| *t < 24 * 3600)
            .ok_or_else(|| err(format!("TIME \"{}\" is not HH:MM", f[2])))?;
        let duration = f[3]
            .parse::<i64>()
            .ok()
            .or_else(|| clock_time(f[3]))
            .filter(|d| *d > 0)
            .ok_or_else(|| err(format!("DURATION \"{}\" is not seconds or H:MM", f[3])))?;
        let bandwidth = f[4]
            .parse::<f64>()
            .ok()
            .filter(|b| b.is_finite() && *b > 0.0)
            .ok_or_else(|| err(format!("BANDWIDTH \"{}\" is not a positive number", f[4])))?;
        let expr = |what: &str, knob_name: &str| {
            let text = knob(knob_name)
                .ok_or_else(|| err(format!("{what} names {knob_name}, which is not set")))?;
            parse_expr(&text).map_err(|e| err(format!("{what} {knob_name}: {e}")))
        };
        Ok(Shutdown {
            name: name.to_string(),
            days,
            time_of_day,
            duration,
            bandwidth,
            constraint: expr("CONSTRAINT", f[5])?,
            rank: expr("RANK", f[6])?,
        })
    }

    fn on(&self, weekday: i8) -> bool {
        self.days & (1 << weekday.rem_euclid(7)) != 0
    }

    /// The occurrence going on at `now`, or the next one: its start and
    /// end (seconds). Days are the zone's calendar days, so a shutdown at
    /// 02:30 on a day that skips 02:30 begins at the zone's 03:30.
    pub fn occurrence(&self, now: i64, tz: &TimeZone) -> Option<(i64, i64)> {
        let ts = Timestamp::from_second(now).ok()?;
        let today = ts.to_zoned(tz.clone()).date();
        // Yesterday's may still go on; then up to a week ahead.
        for offset in -1..=7 {
            let day = today.checked_add(jiff::Span::new().days(offset)).ok()?;
            if !self.on(day.weekday().to_sunday_zero_offset()) {
                continue;
            }
            // A time the zone skips is taken as the zone takes it (later).
            let start = day
                .at(
                    i8::try_from(self.time_of_day / 3600).ok()?,
                    i8::try_from(self.time_of_day % 3600 / 60).ok()?,
                    0,
                    0,
                )
                .to_zoned(tz.clone())
                .ok()?
                .timestamp()
                .as_second();
            if start + self.duration > now {
                return Some((start, start + self.duration));
            }
        }
        None
    }

    /// Whether the startd ad `ad` is one the event takes.
    pub fn takes(&self, ad: &ClassAd, env: &dyn Env) -> bool {
        matches!(ad.eval(&self.constraint, env), Value::Bool(true))
    }

    /// `ad`'s place in the vacate order (higher first; not a number: 0).
    pub fn rank_of(&self, ad: &ClassAd, env: &dyn Env) -> f64 {
        match ad.eval(&self.rank, env) {
            Value::Int(i) => i as f64,
            Value::Real(r) => r,
            _ => 0.0,
        }
    }

    /// Seconds to vacate the job of startd ad `ad` at the event's
    /// bandwidth: a standard universe job (`JobUniverse` 1) writes its
    /// `ImageSize` (KiB; 128 KiB a megabit); any other job costs nothing.
    #[allow(clippy::cast_possible_truncation)] // seconds: far inside i64
    pub fn vacate_seconds(&self, ad: &ClassAd) -> i64 {
        let env = FixedEnv::new(0);
        let int = |a: &str| match ad.eval_attr(a, &env) {
            Value::Int(i) => Some(i),
            _ => None,
        };
        if int("JobUniverse") != Some(1) {
            return 0;
        }
        let kib = int("ImageSize").unwrap_or(0).max(0);
        (kib as f64 / 128.0 / self.bandwidth).ceil() as i64
    }

    /// Seconds to vacate every job of `ads` (those the event takes).
    pub fn time_needed<'a>(&self, ads: impl IntoIterator<Item = &'a ClassAd>) -> i64 {
        ads.into_iter().map(|a| self.vacate_seconds(a)).sum()
    }

    /// Whether the event must be active at `now`: it goes on, or its
    /// start is so near that waiting one more `interval` would leave less
    /// than `needed` seconds to vacate.
    pub fn due(&self, now: i64, interval: i64, needed: i64, tz: &TimeZone) -> bool {
        self.occurrence(now, tz)
            .is_some_and(|(start, _)| now + interval + needed >= start)
    }

    /// The occurrence worth a look at the pool at `now`: the current or
    /// next one, unless `EVENTD_MAX_PREPARATION` (`max_preparation`, 0 for
    /// no limit) says its start is still too far off to prepare for.
    pub fn to_consider(&self, now: i64, max_preparation: i64, tz: &TimeZone) -> Option<(i64, i64)> {
        let (start, end) = self.occurrence(now, tz)?;
        (max_preparation <= 0 || start - now <= max_preparation).then_some((start, end))
    }

    /// Whether the event becomes active at `now`, given the startd ads of
    /// the pool: the occurrence is worth considering and, with the vacate
    /// time the ads it takes need, due. The decision the eventd records
    /// (`Eventd.Activated`).
    pub fn activation(
        &self,
        now: i64,
        interval: i64,
        max_preparation: i64,
        ads: &[ClassAd],
        tz: &TimeZone,
    ) -> Option<Activation> {
        let (start, end) = self.to_consider(now, max_preparation, tz)?;
        let env = FixedEnv::new(now);
        let needed = self.time_needed(ads.iter().filter(|ad| self.takes(ad, &env)));
        self.due(now, interval, needed, tz)
            .then_some(Activation { start, end, needed })
    }
}

/// An occurrence the eventd acts on: its start and end, and the seconds
/// its vacates are estimated to need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Activation {
    /// When the occurrence begins (seconds).
    pub start: i64,
    /// When it ends.
    pub end: i64,
    /// The vacate estimate that made it due.
    pub needed: i64,
}

/// The name of the attribute a machine's shutdown configuration ends at.
pub const END_DOWN_TIME: &str = "EndDownTime";

/// Until when a startd ad says its machine is down (`EndDownTime`).
pub fn down_until(ad: &ClassAd, env: &dyn Env) -> Option<i64> {
    match ad.eval_attr(END_DOWN_TIME, env) {
        Value::Int(t) => Some(t),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn knobs(name: &str) -> Option<String> {
        match name {
            "Froth" => Some("(Machine == \"froth.cs.wisc.edu\")".into()),
            "SmallFirst" => Some("(0 - ImageSize)".into()),
            "Broken" => Some("(Machine == ".into()),
            _ => None,
        }
    }

    fn event(text: &str) -> Shutdown {
        Shutdown::parse("TestEvent", text, &knobs).expect("reads")
    }

    /// Central time without daylight saving: -06:00.
    fn zone() -> TimeZone {
        TimeZone::fixed(jiff::tz::offset(-6))
    }

    /// `y-m-d h:m` in `zone()`.
    fn local(date: &str) -> i64 {
        let dt: jiff::civil::DateTime = date.parse().expect("a date");
        dt.to_zoned(zone()).expect("zoned").timestamp().as_second()
    }

    #[test]
    fn the_specs_examples_read_and_bad_fields_are_named() {
        let e = event("SHUTDOWN W 16:00 3600 2 Froth SmallFirst");
        assert_eq!(
            (e.days, e.time_of_day, e.duration, e.bandwidth),
            (1 << 3, 16 * 3600, 3600, 2.0)
        );
        let e = event("shutdown mtwrfsu 04:00 1:30 0.5 Froth SmallFirst");
        assert_eq!((e.days, e.duration), (0x7f, 5400));
        for (text, says) in [
            ("SHUTDOWN X 16:00 3600 2 Froth SmallFirst", "DAYS \"X\""),
            ("SHUTDOWN W 25:00 3600 2 Froth SmallFirst", "TIME \"25:00\""),
            (
                "SHUTDOWN W 16:00 soon 2 Froth SmallFirst",
                "DURATION \"soon\"",
            ),
            (
                "SHUTDOWN W 16:00 3600 0 Froth SmallFirst",
                "BANDWIDTH \"0\"",
            ),
            (
                "SHUTDOWN W 16:00 3600 2 Nothing SmallFirst",
                "CONSTRAINT names Nothing",
            ),
            ("SHUTDOWN W 16:00 3600 2 Froth Broken", "RANK Broken"),
            ("SHUTDOWN W 16:00 3600 2 Froth", "6 fields"),
            ("REBOOT W 16:00 3600 2 Froth SmallFirst", "only SHUTDOWN"),
        ] {
            let err = Shutdown::parse("E", text, &knobs).expect_err(text);
            assert!(err.to_string().contains(says), "{text}: {err}");
            assert!(err.to_string().starts_with("event E: "), "{err}");
        }
    }

    #[test]
    fn activation_weighs_the_preparation_window_and_the_vacates_the_ads_need() {
        // Wednesday 16:00 for an hour, 2 Mbit/s: a 128,000 KiB standard
        // universe image on froth takes 500 s; other machines and vanilla
        // jobs cost nothing.
        let e = event("SHUTDOWN W 16:00 3600 2 Froth SmallFirst");
        let tz = zone();
        let start = local("2026-12-02T16:00");
        let ad = |machine: &str, universe: i64| {
            parse_ad(&format!(
                "[Machine = \"{machine}\"; JobUniverse = {universe}; ImageSize = 128000]"
            ))
            .expect("parses")
        };
        let pool = vec![
            ad("froth.cs.wisc.edu", 1),
            ad("other", 1),
            ad("froth.cs.wisc.edu", 5),
        ];
        let interval = 300;
        // 900 s before the start: 300 + 500 < 900, not yet due.
        assert_eq!(e.activation(start - 900, interval, 0, &pool, &tz), None);
        // 700 s before: 300 + 500 >= 700, due, with the estimate.
        assert_eq!(
            e.activation(start - 700, interval, 0, &pool, &tz),
            Some(Activation {
                start,
                end: start + 3600,
                needed: 500
            })
        );
        // Without the costly job the start itself is needed.
        assert_eq!(
            e.activation(start - 700, interval, 0, &pool[1..], &tz),
            None
        );
        assert!(e.activation(start - 300, interval, 0, &[], &tz).is_some());
        // A preparation window shorter than the lead leaves it for later.
        assert_eq!(e.to_consider(start - 700, 600, &tz), None);
        assert_eq!(e.activation(start - 700, interval, 600, &pool, &tz), None);
        assert_eq!(
            e.to_consider(start - 500, 600, &tz),
            Some((start, start + 3600))
        );
    }

    #[test]
    fn a_week_in_virtual_time_activates_each_occurrence_on_its_days() {
        let e = event("SHUTDOWN MWF 16:00 3600 2 Froth SmallFirst");
        let tz = zone();
        let (interval, needed) = (900, 500);
        let monday = local("2026-11-30T00:00");
        let mut windows = std::collections::BTreeSet::new();
        let mut active_minutes = 0;
        for minute in 0..7 * 24 * 60 {
            let now = monday + minute * 60;
            let (start, end) = e.occurrence(now, &tz).expect("an occurrence");
            assert!(end > now && end - start == 3600);
            windows.insert(start);
            let due = e.due(now, interval, needed, &tz);
            // Active from when one more interval would leave less than the
            // vacates need, to the end of the shutdown.
            assert_eq!(due, now >= start - interval - needed, "at minute {minute}");
            active_minutes += i64::from(due);
        }
        assert_eq!(
            windows.into_iter().collect::<Vec<_>>(),
            [
                local("2026-11-30T16:00"),
                local("2026-12-02T16:00"),
                local("2026-12-04T16:00"),
                local("2026-12-07T16:00"),
            ]
        );
        // Three shutdowns of an hour, each active from 1,400 s before
        // (the whole minutes from 23 before).
        assert_eq!(active_minutes, 3 * (60 + 23));
    }

    #[test]
    fn an_event_across_midnight_is_still_on_the_next_day() {
        let e = event("SHUTDOWN U 23:30 7200 2 Froth SmallFirst");
        let tz = zone();
        let sunday = local("2026-11-29T23:30");
        assert_eq!(
            e.occurrence(local("2026-11-30T00:30"), &tz),
            Some((sunday, sunday + 7200))
        );
        assert_eq!(
            e.occurrence(local("2026-11-30T01:30"), &tz),
            Some((local("2026-12-06T23:30"), local("2026-12-07T01:30")))
        );
    }

    #[test]
    fn the_zone_of_the_eventd_decides_also_across_daylight_saving() {
        // New York: 2026-03-08 02:00 does not exist; 01:30 is EST, and
        // after the change the same local time is an hour less after UTC.
        let tz = TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").expect("zone");
        let e = event("SHUTDOWN U 01:30 600 2 Froth SmallFirst");
        let before = jiff::Timestamp::from_second(e.occurrence(1_772_900_000, &tz).expect("on").0)
            .expect("ts")
            .to_zoned(tz.clone());
        assert_eq!((before.hour(), before.minute()), (1, 30));
        let e = event("SHUTDOWN MTWRFSU 12:00 600 2 Froth SmallFirst");
        let noon = |t: i64| e.occurrence(t, &tz).expect("on").0;
        // Noon local is 17:00 UTC in winter and 16:00 UTC in summer.
        assert_eq!(noon(local("2026-03-01T00:00")) % 86400, 17 * 3600);
        assert_eq!(noon(local("2026-03-10T00:00")) % 86400, 16 * 3600);
    }

    #[test]
    fn vacate_time_counts_standard_universe_images_at_the_bandwidth() {
        let e = event("SHUTDOWN W 16:00 3600 2 Froth SmallFirst");
        let ad = |t: &str| parse_ad(t).expect("ad");
        let big = ad("[ Machine = \"froth.cs.wisc.edu\"; JobUniverse = 1; ImageSize = 128000 ]");
        let vanilla =
            ad("[ Machine = \"froth.cs.wisc.edu\"; JobUniverse = 5; ImageSize = 999999 ]");
        let other = ad("[ Machine = \"perdita\"; JobUniverse = 1; ImageSize = 256 ]");
        // 128,000 KiB is 1,000 megabits: 500 s at 2 Mb/s.
        assert_eq!(e.vacate_seconds(&big), 500);
        assert_eq!(e.vacate_seconds(&vanilla), 0);
        assert_eq!(e.time_needed([&big, &vanilla]), 500);
        let env = FixedEnv::new(0);
        assert!(e.takes(&big, &env) && !e.takes(&other, &env));
        assert!(e.rank_of(&other, &env) > e.rank_of(&big, &env));
    }
}
