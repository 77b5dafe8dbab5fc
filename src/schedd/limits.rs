//! Concurrency limits, as HTCondor's negotiator keeps them, kept by the
//! queue (which is the matchmaker of a fetch-work pool): a job's
//! `ConcurrencyLimits` names limits (`name` or `name:increment`, any case,
//! at commas or blanks; an increment that is not positive counts 1), each
//! running or leased job uses its increments, and a job is handed out only
//! while `in use + increment <= max` for every limit it names. A limit's
//! max is the knob `<name>_LIMIT`, else `CONCURRENCY_LIMIT_DEFAULT_<scope>`
//! for a name `<scope>.<rest>` (the part before the last dot), else
//! `CONCURRENCY_LIMIT_DEFAULT` (2308032). Pure.

use std::collections::BTreeMap;

/// HTCondor's `CONCURRENCY_LIMIT_DEFAULT` when it is not set.
pub const DEFAULT_MAX: f64 = 2_308_032.0;

/// The configured maxima, names in lower case.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// `CONCURRENCY_LIMIT_DEFAULT`.
    pub default: f64,
    /// `CONCURRENCY_LIMIT_DEFAULT_<scope>`, by scope.
    pub scoped: BTreeMap<String, f64>,
    /// `<name>_LIMIT`, by name.
    pub max: BTreeMap<String, f64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            default: DEFAULT_MAX,
            scoped: BTreeMap::new(),
            max: BTreeMap::new(),
        }
    }
}

impl Limits {
    /// The limits of configuration knobs `(name, value)`: every
    /// `<name>_LIMIT` and `CONCURRENCY_LIMIT_DEFAULT[_<scope>]` whose value
    /// is a number (others are not limits and are left out).
    pub fn from_knobs<'a>(knobs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Limits {
        let mut l = Limits::default();
        for (name, value) in knobs {
            let Ok(v) = value.trim().parse::<f64>() else {
                continue;
            };
            let lower = name.to_ascii_lowercase();
            if lower == "concurrency_limit_default" {
                l.default = v;
            } else if let Some(scope) = lower.strip_prefix("concurrency_limit_default_") {
                l.scoped.insert(scope.to_string(), v);
            } else if let Some(limit) = lower.strip_suffix("_limit") {
                l.max.insert(limit.to_string(), v);
            }
        }
        l
    }

    /// The most limit `name` (lower case) allows in use at once.
    pub fn max_of(&self, name: &str) -> f64 {
        if let Some(m) = self.max.get(name) {
            return *m;
        }
        (name.rfind('.'))
            .and_then(|dot| self.scoped.get(&name[..dot]).copied())
            .unwrap_or(self.default)
    }

    /// Whether a job naming `limits` fits beside `in_use`.
    pub fn fits(&self, limits: &str, in_use: &BTreeMap<String, f64>) -> bool {
        parse(limits)
            .iter()
            .all(|(name, inc)| in_use.get(name).copied().unwrap_or(0.0) + inc <= self.max_of(name))
    }
}

/// The limits a `ConcurrencyLimits` value names, each with its increment;
/// names that are not HTCondor attribute names (on either side of a dot)
/// are left out, as the negotiator ignores them.
pub fn parse(limits: &str) -> Vec<(String, f64)> {
    (limits.split(|c: char| c == ',' || c.is_ascii_whitespace()))
        .filter(|w| !w.is_empty())
        .filter_map(|w| {
            let w = w.to_ascii_lowercase();
            let (name, inc) = match w.split_once(':') {
                Some((n, i)) => (n.to_string(), leading_number(i)),
                None => (w, 1.0),
            };
            let inc = if inc > 0.0 { inc } else { 1.0 };
            let valid = |s: &str| {
                s.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            };
            let ok = match name.split_once('.') {
                Some((a, b)) => valid(a) && valid(b),
                None => valid(&name),
            };
            ok.then_some((name, inc))
        })
        .collect()
}

/// The number a text starts with (`strtod`'s reading; 0 for none).
fn leading_number(s: &str) -> f64 {
    let s = s.trim_start();
    let end = (1..=s.len())
        .rev()
        .find(|&i| s.is_char_boundary(i) && s[..i].parse::<f64>().is_ok())
        .unwrap_or(0);
    s[..end].parse().unwrap_or(0.0)
}

/// Adds the increments of `limits` (a job's `ConcurrencyLimits`) to
/// `in_use`.
pub fn add_use(limits: &str, in_use: &mut BTreeMap<String, f64>) {
    for (name, inc) in parse(limits) {
        *in_use.entry(name).or_insert(0.0) += inc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_read_counted_and_defaulted_as_htcondors_negotiator_does() {
        assert_eq!(
            parse("DB:2, sw  tape:0,bad-name,license.matlab:1.5x, a.b.c"),
            [
                ("db".to_string(), 2.0),
                ("sw".to_string(), 1.0),
                ("tape".to_string(), 1.0),
                ("license.matlab".to_string(), 1.5),
            ]
        );
        let l = Limits::from_knobs([
            ("DB_LIMIT", "3"),
            ("CONCURRENCY_LIMIT_DEFAULT", "5"),
            ("CONCURRENCY_LIMIT_DEFAULT_LICENSE", "1"),
            ("START_LIMIT", "not a number"),
            ("License.Special_LIMIT", "4"),
        ]);
        assert_eq!(l.max_of("db"), 3.0);
        assert_eq!(l.max_of("other"), 5.0);
        assert_eq!(l.max_of("license.matlab"), 1.0);
        assert_eq!(l.max_of("license.special"), 4.0);
        assert_eq!(Limits::default().max_of("x"), DEFAULT_MAX);
        let mut used = BTreeMap::new();
        add_use("db:2", &mut used);
        assert!(l.fits("db", &used));
        assert!(!l.fits("db:2", &used));
        assert!(l.fits("license.matlab", &used));
        add_use("license.matlab", &mut used);
        assert!(!l.fits("sw, license.matlab", &used));
        assert!(l.fits("", &used));
    }
}
