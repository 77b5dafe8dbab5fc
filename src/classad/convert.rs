//! HTCondor's value conversions (`int()`, `real()`, `string()` and the
//! implicit conversions functions apply to their arguments).

use super::cfmt::strtod;
use super::timefmt::{abstime_to_string, reltime_to_string};
use super::unparse::value_to_string;
use super::value::{Str, Value};

/// C's `(long long)` of a double on x86-64: truncation, with NaN and
/// out-of-range values giving the minimum integer.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
pub(crate) fn c_ll(x: f64) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// A relative time as C's `time_t` (truncated).
pub(crate) fn reltime_secs(t: f64) -> i64 {
    c_ll(t)
}

/// `string()`: `undefined` and `error` stay; lists, ads and numbers are
/// printed; times use their text forms.
pub fn to_string(v: &Value) -> Value {
    match v {
        Value::Undefined => Value::Undefined,
        Value::Error => Value::Error,
        Value::Str(_) => v.clone(),
        Value::AbsTime(t) => Value::string(abstime_to_string(*t)),
        #[allow(clippy::cast_precision_loss)]
        Value::RelTime(t) => Value::string(reltime_to_string(reltime_secs(*t) as f64)),
        _ => Value::string(value_to_string(v)),
    }
}

/// The string form of a value for functions that concatenate (`None` for
/// `undefined` and `error`).
pub(crate) fn as_text(v: &Value) -> Option<Str> {
    match to_string(v) {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// `int()`.
pub fn to_int(v: &Value) -> Value {
    match v {
        Value::Undefined => Value::Undefined,
        Value::Int(_) => v.clone(),
        Value::Bool(b) => Value::Int(i64::from(*b)),
        Value::Real(r) => Value::Int(c_ll(*r)),
        Value::AbsTime(t) => Value::Int(t.secs),
        Value::RelTime(t) => Value::Int(reltime_secs(*t)),
        Value::Str(s) => {
            let (x, used) = strtod(s.as_bytes());
            if used == 0 && x == 0.0 {
                Value::Error
            } else {
                Value::Int(c_ll(x))
            }
        }
        Value::Error | Value::List(_) | Value::Ad(_) => Value::Error,
    }
}

/// `real()`.
pub fn to_real(v: &Value) -> Value {
    match v {
        Value::Undefined => Value::Undefined,
        Value::Real(_) => v.clone(),
        Value::Bool(b) => Value::Real(if *b { 1.0 } else { 0.0 }),
        #[allow(clippy::cast_precision_loss)]
        Value::Int(i) => Value::Real(*i as f64),
        #[allow(clippy::cast_precision_loss)]
        Value::AbsTime(t) => Value::Real(t.secs as f64),
        #[allow(clippy::cast_precision_loss)]
        Value::RelTime(t) => Value::Real(reltime_secs(*t) as f64),
        Value::Str(s) => {
            let (x, used) = strtod(s.as_bytes());
            if used == 0 && x == 0.0 {
                Value::Error
            } else {
                Value::Real(x)
            }
        }
        Value::Error | Value::List(_) | Value::Ad(_) => Value::Error,
    }
}

/// The real value of `v` for functions that need a number (`None` if it
/// cannot be converted).
pub(crate) fn real_of(v: &Value) -> Option<f64> {
    match to_real(v) {
        Value::Real(r) => Some(r),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_follow_strtod() {
        assert!(matches!(to_int(&Value::from("  12abc")), Value::Int(12)));
        assert!(matches!(to_int(&Value::from("0x10")), Value::Int(16)));
        assert!(to_int(&Value::from("abc")).is_error());
        assert!(matches!(to_int(&Value::Real(-2.7)), Value::Int(-2)));
        assert!(matches!(
            to_int(&Value::Real(f64::NAN)),
            Value::Int(i64::MIN)
        ));
        assert!(matches!(to_real(&Value::from("1e5x")), Value::Real(r) if r == 1e5));
    }
}
