//! Time functions: `time`, `currentTime`, `timeZoneOffset`, `dayTime`,
//! `absTime`, `relTime`, the `get*` field functions, `splitTime`,
//! `formatTime` and `interval`. The clock and the local zone come from the
//! evaluator's [`Env`](super::super::eval::Env).

use super::super::ad::ClassAd;
use super::super::convert::reltime_secs;
use super::super::eval::{Evaluator, R};
use super::super::timefmt::{Tm, c_int, gmtime, strftime, timegm};
use super::super::value::{AbsTime, AdValue, Value};
use super::{Args, Builtin};

fn now_abs(ev: &Evaluator<'_>) -> AbsTime {
    let now = ev.env.now();
    AbsTime {
        secs: now,
        offset: ev.env.local_offset(now),
    }
}

pub(super) fn time(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    Ok(if a.len() == 0 {
        Value::Int(ev.env.now())
    } else {
        Value::Error
    })
}

pub(super) fn current_time(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    Ok(if a.len() == 0 {
        Value::AbsTime(now_abs(ev))
    } else {
        Value::Error
    })
}

pub(super) fn time_zone_offset(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 0 {
        return Ok(Value::Error);
    }
    Ok(Value::RelTime(f64::from(now_abs(ev).offset)))
}

pub(super) fn day_time(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 0 {
        return Ok(Value::Error);
    }
    let t = now_abs(ev);
    let tm = gmtime(t.secs + i64::from(t.offset));
    #[allow(clippy::cast_precision_loss)]
    Ok(Value::RelTime(
        (tm.hour * 3600 + tm.min * 60 + tm.sec) as f64,
    ))
}

/// A C `int` view of an integer value.
#[allow(clippy::cast_possible_truncation)]
fn c_int_of(i: i64) -> i64 {
    i64::from(i as i32)
}

pub(super) fn conv_time(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    let relative = f == Builtin::RelTime;
    if a.len() == 0 && !relative {
        return Ok(Value::AbsTime(now_abs(ev)));
    }
    if a.len() < 1 || a.len() > 2 {
        return Ok(Value::Error);
    }
    let arg = a.eval(ev, 0)?;
    let mut zone: Option<i32> = None;
    if a.len() == 2 {
        let z = a.eval(ev, 1)?;
        if relative {
            return Ok(Value::Error);
        }
        let z = match z {
            Value::Int(i) => c_int_of(i),
            Value::Real(r) => c_int(r),
            Value::RelTime(t) => c_int_of(reltime_secs(t)),
            _ => return Ok(Value::Error),
        };
        zone = Some(i32::try_from(z).unwrap_or(0));
    }
    let abs = |ev: &Evaluator<'_>, secs: i64| {
        let offset = zone.unwrap_or_else(|| ev.env.local_offset(secs));
        Value::AbsTime(AbsTime { secs, offset })
    };
    #[allow(clippy::cast_precision_loss)]
    Ok(match arg {
        Value::Undefined => Value::Undefined,
        Value::Error | Value::Ad(_) | Value::List(_) | Value::Bool(_) => Value::Error,
        Value::Int(i) if relative => Value::RelTime(c_int_of(i) as f64),
        Value::Int(i) => abs(ev, c_int_of(i)),
        Value::Real(r) if relative => Value::RelTime(r),
        Value::Real(r) => abs(ev, c_int(r)),
        // HTCondor folds string literals when parsing; a string computed at
        // run time falls through to its absolute-time case.
        Value::Str(_) if relative => Value::RelTime(0.0),
        Value::Str(_) => arg,
        Value::AbsTime(t) if relative => Value::RelTime(t.secs as f64),
        Value::AbsTime(_) => arg,
        Value::RelTime(_) if relative => arg,
        Value::RelTime(t) => abs(ev, reltime_secs(t)),
    })
}

pub(super) fn get_field(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    Ok(match a.eval(ev, 0)? {
        Value::AbsTime(t) => {
            let tm = gmtime(t.secs + i64::from(ev.env.local_offset(t.secs)));
            Value::Int(match f {
                Builtin::GetYear => tm.year,
                Builtin::GetMonth => tm.mon + 1,
                Builtin::GetDayOfYear => tm.yday,
                Builtin::GetDayOfMonth => tm.mday,
                Builtin::GetDayOfWeek => tm.wday,
                Builtin::GetHours => tm.hour,
                Builtin::GetMinutes => tm.min,
                Builtin::GetSeconds => tm.sec,
                _ => return Ok(Value::Error),
            })
        }
        Value::RelTime(t) => {
            let s = reltime_secs(t);
            Value::Int(match f {
                Builtin::GetDays => s / 86_400,
                Builtin::GetHours => (s % 86_400) / 3600,
                Builtin::GetMinutes => (s % 3600) / 60,
                Builtin::GetSeconds => s % 60,
                _ => return Ok(Value::Error),
            })
        }
        _ => Value::Error,
    })
}

/// The ad `splitTime` makes of a value, or `None` if it has no time form.
fn split(ev: &Evaluator<'_>, v: &Value) -> Option<ClassAd> {
    let abs = |t: AbsTime| {
        let tm = gmtime(t.secs + i64::from(t.offset));
        let mut ad = ClassAd::new();
        ad.insert_value("Type", "AbsoluteTime");
        ad.insert_value("Year", tm.year);
        ad.insert_value("Month", tm.mon + 1);
        ad.insert_value("Day", tm.mday);
        ad.insert_value("Hours", tm.hour);
        ad.insert_value("Minutes", tm.min);
        ad.insert_value("Seconds", tm.sec);
        ad.insert_value("Offset", i64::from(t.offset));
        ad
    };
    let local = |secs: i64| AbsTime {
        secs,
        offset: ev.env.local_offset(secs),
    };
    match v {
        Value::Int(i) => Some(abs(local(*i))),
        Value::Real(r) => Some(abs(local(c_int(*r)))),
        Value::AbsTime(t) => Some(abs(*t)),
        Value::RelTime(r) => {
            let neg = *r < 0.0;
            let r = r.abs();
            let whole = c_int(r);
            let mut days = whole / 86_400;
            let mut hrs = whole % 86_400 / 3600;
            let mut mins = whole % 3600 / 60;
            #[allow(clippy::cast_precision_loss)]
            let mut secs = (whole % 60) as f64 + (r - r.floor());
            if neg {
                if days > 0 {
                    days = -days;
                } else if hrs > 0 {
                    hrs = -hrs;
                } else if mins > 0 {
                    mins = -mins;
                } else {
                    secs = -secs;
                }
            }
            let mut ad = ClassAd::new();
            ad.insert_value("Type", "RelativeTime");
            ad.insert_value("Days", days);
            ad.insert_value("Hours", hrs);
            ad.insert_value("Minutes", mins);
            ad.insert_value("Seconds", secs);
            Some(ad)
        }
        _ => None,
    }
}

pub(super) fn split_time(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let v = a.eval(ev, 0)?;
    if v.is_undefined() {
        return Ok(Value::Undefined);
    }
    Ok(split(ev, &v).map_or(Value::Error, |ad| Value::Ad(AdValue::new(ad))))
}

/// HTCondor's weekday and day-of-year arithmetic (R.D. day numbers).
fn day_numbers(year: i64, month: i64, day: i64) -> (i64, i64) {
    let leap = |y: i64| y % 4 == 0 && !matches!(y % 400, 100 | 200 | 300);
    let fixed = |y: i64, m: i64, d: i64| {
        let adj = if m <= 2 {
            0
        } else if leap(y) {
            -1
        } else {
            -2
        };
        365 * (y - 1) + (y - 1) / 4 - (y - 1) / 100 + (y - 1) / 400 + (367 * m - 362) / 12 + adj + d
    };
    let f = fixed(year, month, day);
    (f % 7, f - fixed(year, 1, 1))
}

pub(super) fn format_time(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() > 2 {
        return Ok(Value::Error);
    }
    if a.len() == 0 {
        let t = now_abs(ev);
        let mut tm = gmtime(t.secs + i64::from(t.offset));
        tm.gmtoff = i64::from(t.offset);
        let zone = ev.env.zone_name(t.secs);
        return Ok(Value::string(strftime(b"%c", &tm, &zone, t.secs)));
    }
    let v = a.eval(ev, 0)?;
    if let Value::RelTime(_) = v {
        return Ok(Value::Error);
    }
    let ad = match &v {
        Value::Ad(ad) => ev.frame_ad(&ad.0).cloned(),
        other => split(ev, other),
    };
    let Some(ad) = ad else {
        return Ok(Value::Error);
    };
    // Fields that are missing keep the value of a zeroed C struct tm: month
    // 0 is January and year 0 is 1900.
    let field = |name: &str, ev: &mut Evaluator<'_>| -> Option<i64> {
        match ad.eval_attr(name, ev.env) {
            Value::Int(i) => Some(c_int_of(i)),
            _ => None,
        }
    };
    let sec = field("Seconds", ev).unwrap_or(0);
    let min = field("Minutes", ev).unwrap_or(0);
    let hour = field("Hours", ev).unwrap_or(0);
    let mday = field("Day", ev).unwrap_or(0);
    let mon = field("Month", ev).map_or(0, |m| m - 1);
    let year = field("Year", ev).unwrap_or(1900);
    let month = mon + 1;
    let (wday, yday) = day_numbers(year, month, mday);
    let tm = Tm {
        year,
        mon,
        mday,
        hour,
        min,
        sec,
        wday,
        yday,
        gmtoff: 0,
    };
    let format = if a.len() == 2 {
        match a.eval(ev, 1)? {
            Value::Str(s) => s.as_bytes().to_vec(),
            _ => return Ok(Value::Error),
        }
    } else {
        b"%c".to_vec()
    };
    // %s is mktime's reading of the fields as local time.
    let as_utc = timegm(year, month - 1, mday, hour, min, sec);
    let epoch = as_utc - i64::from(ev.env.local_offset(as_utc));
    let zone = ev.env.zone_name(epoch);
    let out = strftime(&format, &tm, &zone, epoch);
    Ok(Value::string(
        out.into_iter().take(1023).collect::<Vec<u8>>(),
    ))
}

pub(super) fn interval(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let v = a.eval(ev, 0)?;
    let Value::Int(i) = super::super::convert::to_int(&v) else {
        return Ok(Value::Error);
    };
    let mut t = c_int_of(i);
    let days = t / 86_400;
    t %= 86_400;
    let hours = t / 3600;
    t %= 3600;
    let min = t / 60;
    let secs = t % 60;
    let s = if days != 0 {
        format!(
            "{days}+{:02}:{:02}:{:02}",
            hours.abs(),
            min.abs(),
            secs.abs()
        )
    } else if hours != 0 {
        format!("{hours}:{:02}:{:02}", min.abs(), secs.abs())
    } else if min != 0 {
        format!("{min}:{:02}", secs.abs())
    } else {
        format!("{secs}")
    };
    Ok(Value::string(s))
}
