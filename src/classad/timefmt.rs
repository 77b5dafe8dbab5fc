//! Calendar arithmetic, and HTCondor's text forms of absolute and relative
//! times.
//!
//! Pure: no clock, no time-zone database. Where HTCondor would use the local
//! time zone, callers pass an offset (see [`super::eval::Env`]); a time
//! string parsed without a zone is taken as UTC.

use super::cfmt::{fmt_g, strtod, zero_pad};
use super::value::AbsTime;

/// Broken-down time, as C's `struct tm` (month 0-11, year in full).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Tm {
    pub(crate) year: i64,
    pub(crate) mon: i64,
    pub(crate) mday: i64,
    pub(crate) hour: i64,
    pub(crate) min: i64,
    pub(crate) sec: i64,
    pub(crate) wday: i64,
    pub(crate) yday: i64,
    /// Offset east of UTC, for `%z`.
    pub(crate) gmtoff: i64,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1-12).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date (year, month 1-12, day) of a day number since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `gmtime`: the broken-down UTC time of `secs`.
pub(crate) fn gmtime(secs: i64) -> Tm {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, mon, mday) = civil_from_days(days);
    Tm {
        year,
        mon: mon - 1,
        mday,
        hour: rem / 3600,
        min: rem % 3600 / 60,
        sec: rem % 60,
        wday: (days + 4).rem_euclid(7),
        yday: days - days_from_civil(year, 1, 1),
        gmtoff: 0,
    }
}

/// `timegm`: seconds since the epoch of a broken-down UTC time, normalizing
/// out-of-range fields as `mktime` does (day 0 is the last day of the
/// previous month, month 12 is January of the next year).
pub(crate) fn timegm(year: i64, mon0: i64, mday: i64, hour: i64, min: i64, sec: i64) -> i64 {
    let y = year + mon0.div_euclid(12);
    let m = mon0.rem_euclid(12) + 1;
    let days = days_from_civil(y, m, 1) + mday - 1;
    days * 86_400 + hour * 3600 + min * 60 + sec
}

/// HTCondor's text form of an absolute time: `YYYY-MM-DDThh:mm:ss+hh:mm`.
/// A zero offset prints as `-00:00`, and the year is not padded (year 19
/// is `19`, year -1 is `-1`), as HTCondor's are; such years only come from
/// odd time strings and do not read back.
pub(crate) fn abstime_to_string(t: AbsTime) -> String {
    let tm = gmtime(t.secs.saturating_add(i64::from(t.offset)));
    let (sign, tz) = if t.offset > 0 {
        ('+', i64::from(t.offset))
    } else {
        ('-', -i64::from(t.offset))
    };
    format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}{}{:02}:{:02}",
        tm.year,
        tm.mon + 1,
        tm.mday,
        tm.hour,
        tm.min,
        tm.sec,
        sign,
        tz / 3600,
        (tz / 60) % 60
    )
}

/// C's `(int)` conversion of a double as x86-64 performs it: truncation,
/// with NaN and out-of-range values giving the minimum `int`.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn c_int(x: f64) -> i64 {
    if x.is_nan() || x >= 2_147_483_648.0 || x <= -2_147_483_649.0 {
        i64::from(i32::MIN)
    } else {
        x as i64
    }
}

/// HTCondor's text form of a relative time: `[-][d+]hh:mm:ss` with leading
/// zero components left out and fractional seconds printed with `%g`.
pub(crate) fn reltime_to_string(rsecs: f64) -> String {
    let mut out = String::new();
    let mut r = rsecs;
    if r < 0.0 {
        out.push('-');
        r = -r;
    }
    let frac = r - r.floor();
    let whole = c_int(r);
    let days = whole / 86_400;
    let hrs = whole % 86_400 / 3600;
    let mins = whole % 3600 / 60;
    let secs_f = (whole % 60) as f64 + frac;
    let secs = if frac == 0.0 {
        format!("{:02}", whole % 60)
    } else {
        zero_pad(fmt_g(secs_f, 6, false), 2)
    };
    if days != 0 {
        out.push_str(&format!("{days}+{hrs:02}:{mins:02}:{secs}"));
    } else if hrs != 0 {
        out.push_str(&format!("{hrs:02}:{mins:02}:{secs}"));
    } else if mins != 0 {
        out.push_str(&format!("{mins:02}:{secs}"));
    } else {
        out.push_str(&secs);
    }
    out
}

fn c_isspace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// C's `atoi` on a window of bytes: optional space and sign, then digits.
/// A day, hour or minute field of a relative time: a C int, and 0 when the
/// digits do not fit one, as HTCondor reads it.
fn int_field(b: &[u8]) -> i32 {
    i32::try_from(atoi(b)).unwrap_or(0)
}

fn atoi(b: &[u8]) -> i64 {
    let mut i = 0;
    while i < b.len() && c_isspace(b[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let mut n: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add(i64::from(b[i] - b'0'));
        i += 1;
    }
    if neg { -n } else { n }
}

/// Parses an absolute time string as HTCondor's `absTime("...")` does:
/// up to six runs of digits (year, month, day, hour, minute, second) with
/// anything else between them, and an optional zone `Z`, `+hhmm` or
/// `+hh:mm`. Without a zone the time is taken as UTC.
pub(crate) fn parse_abstime(src: &[u8]) -> Option<AbsTime> {
    let mut s = src.to_vec();
    let len = s.len();
    let mut zone: Option<i64> = None;
    let mut last = len;
    while last > 0 && c_isspace(s[last - 1]) {
        last -= 1;
    }
    if last > 1 && matches!(s[last - 1], b'z' | b'Z') {
        s.remove(last - 1);
        zone = Some(0);
    } else if len > 5 && matches!(s[len - 5], b'+' | b'-') {
        zone = Some(take_zone(&mut s));
    } else if len > 6 && matches!(s[len - 6], b'+' | b'-') && s[len - 3] == b':' {
        s.remove(len - 3);
        zone = Some(take_zone(&mut s));
    }
    let len = s.len();
    let mut i = 0;
    let skip = |i: &mut usize| {
        while *i < len && !s[*i].is_ascii_digit() {
            *i += 1;
        }
    };
    skip(&mut i);
    if len < 4 || i > len - 4 {
        return None;
    }
    let year = atoi(&s[i..i + 4]);
    i += 4;
    // Month (stored 0-based), day, hours, minutes, seconds; an absent field
    // keeps the value of a zeroed C struct tm (so "2020" is day 0 of
    // January: 2019-12-31).
    let mut fields = [0i64; 5];
    for (k, f) in fields.iter_mut().enumerate() {
        skip(&mut i);
        if len >= 2 && i <= len - 2 {
            *f = atoi(&s[i..i + 2]) - i64::from(k == 0);
            i += 2;
        }
    }
    skip(&mut i);
    if i < len && s[i].is_ascii_digit() {
        return None;
    }
    let [mon0, mday, hour, min, sec] = fields;
    let offset = zone.unwrap_or(0);
    let local = timegm(year, mon0, mday, hour, min, sec);
    // mktime's error value: HTCondor cannot tell it from a failure.
    if local == -1 {
        return None;
    }
    let secs = local - offset;
    Some(AbsTime {
        secs,
        offset: i32::try_from(offset).ok()?,
    })
}

/// Removes a trailing `+hhmm` and returns it as seconds.
fn take_zone(s: &mut Vec<u8>) -> i64 {
    let n = s.len();
    let sign = if s[n - 5] == b'-' { -1 } else { 1 };
    let hh = atoi(&s[n - 4..n - 2]);
    let mm = atoi(&s[n - 2..n]);
    s.truncate(n - 5);
    sign * (hh * 3600 + mm * 60)
}

/// Parses a relative time string as HTCondor's `relTime("...")` does:
/// `[-][days+|d][hh:|h][mm:|m]ss[.fff][s]`, read from the end.
pub(crate) fn parse_reltime(src: &[u8]) -> Option<f64> {
    let s = src;
    // Index of the character being looked at, counting down; -1 is "before
    // the start".
    let mut i: isize = isize::try_from(s.len()).ok()? - 1;
    let at = |i: isize| -> Option<u8> { usize::try_from(i).ok().and_then(|u| s.get(u).copied()) };
    let skip_space = |i: &mut isize| {
        while at(*i).is_some_and(c_isspace) {
            *i -= 1;
        }
    };
    let take_digits = |i: &mut isize| -> String {
        let mut rev = String::new();
        while let Some(c) = at(*i).filter(u8::is_ascii_digit) {
            rev.push(char::from(c));
            *i -= 1;
        }
        rev.chars().rev().collect()
    };
    let mut secs = 0.0;
    let mut mins = 0i32;
    let mut hrs = 0i32;
    let mut days = 0i32;
    skip_space(&mut i);
    if let Some(c) = at(i).filter(|c| matches!(c, b's' | b'S') || c.is_ascii_digit()) {
        if matches!(c, b's' | b'S') {
            i -= 1;
        }
        skip_space(&mut i);
        let mut text = take_digits(&mut i);
        if at(i) == Some(b'.') {
            i -= 1;
            let int = take_digits(&mut i);
            text = format!("{int}.{text}");
        }
        secs = strtod(text.as_bytes()).0;
    }
    skip_space(&mut i);
    if at(i).is_some_and(|c| matches!(c, b'm' | b'M' | b':')) {
        i -= 1;
        skip_space(&mut i);
        mins = int_field(take_digits(&mut i).as_bytes());
    }
    skip_space(&mut i);
    if at(i).is_some_and(|c| matches!(c, b'h' | b'H' | b':')) {
        i -= 1;
        skip_space(&mut i);
        hrs = int_field(take_digits(&mut i).as_bytes());
    }
    skip_space(&mut i);
    if at(i).is_some_and(|c| matches!(c, b'd' | b'D' | b'+')) {
        i -= 1;
        skip_space(&mut i);
        days = int_field(take_digits(&mut i).as_bytes());
    }
    skip_space(&mut i);
    let mut negative = false;
    if at(i) == Some(b'-') {
        negative = true;
        i -= 1;
    }
    skip_space(&mut i);
    if at(i).is_some_and(|c| !c_isspace(c)) {
        return None;
    }
    // HTCondor adds the fields in C int arithmetic, which wraps.
    let whole = days
        .wrapping_mul(86_400)
        .wrapping_add(hrs.wrapping_mul(3600))
        .wrapping_add(mins.wrapping_mul(60));
    let total = f64::from(whole) + secs;
    // Minus zero would print as `relTime("00")`, which reads back as plus
    // zero (HTCondor keeps the minus zero, so its text does not read back).
    Some(if negative && total != 0.0 {
        -total
    } else {
        total
    })
}

const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn name_of(table: &[&'static str], i: i64) -> &'static str {
    usize::try_from(i)
        .ok()
        .and_then(|i| table.get(i))
        .copied()
        .unwrap_or("?")
}

/// ISO 8601 week-based year and week number.
fn iso_week(tm: &Tm) -> (i64, i64) {
    let wday = (tm.wday + 6) % 7; // Monday = 0
    let mut year = tm.year;
    let mut week = (tm.yday - wday + 10) / 7;
    let days_in = |y: i64| {
        if days_from_civil(y + 1, 1, 1) - days_from_civil(y, 1, 1) == 366 {
            366
        } else {
            365
        }
    };
    if week < 1 {
        year -= 1;
        let yday = tm.yday + days_in(year);
        week = (yday - wday + 10) / 7;
    } else if week == 53 {
        let jan1_next = (wday - tm.yday + days_in(year)).rem_euclid(7);
        if jan1_next <= 3 {
            year += 1;
            week = 1;
        }
    }
    (year, week)
}

/// A day's or month's first three letters (all of "?", glibc's name for
/// one out of range).
fn abbreviated(name: &str) -> String {
    name.get(..3).unwrap_or(name).to_string()
}

/// C's `strftime` in the "C" locale, for the conversions glibc supports.
/// `zone` is what `%Z` prints. Unknown conversions are copied as written.
pub(crate) fn strftime(fmt: &[u8], tm: &Tm, zone: &str, epoch: i64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' || i + 1 >= fmt.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let spec = fmt[i + 1];
        i += 2;
        let hour12 = if tm.hour % 12 == 0 { 12 } else { tm.hour % 12 };
        let piece: String = match spec {
            b'a' => abbreviated(name_of(&WEEKDAYS, tm.wday)),
            b'A' => name_of(&WEEKDAYS, tm.wday).to_string(),
            b'b' | b'h' => abbreviated(name_of(&MONTHS, tm.mon)),
            b'B' => name_of(&MONTHS, tm.mon).to_string(),
            b'c' => String::from_utf8_lossy(&strftime(b"%a %b %e %H:%M:%S %Y", tm, zone, epoch))
                .into_owned(),
            b'C' => format!("{:02}", tm.year.div_euclid(100)),
            b'd' => format!("{:02}", tm.mday),
            b'D' | b'x' => {
                String::from_utf8_lossy(&strftime(b"%m/%d/%y", tm, zone, epoch)).into_owned()
            }
            b'e' => format!("{:2}", tm.mday),
            b'F' => String::from_utf8_lossy(&strftime(b"%Y-%m-%d", tm, zone, epoch)).into_owned(),
            b'g' => format!("{:02}", iso_week(tm).0.rem_euclid(100)),
            b'G' => iso_week(tm).0.to_string(),
            b'H' => format!("{:02}", tm.hour),
            b'I' => format!("{hour12:02}"),
            b'j' => format!("{:03}", tm.yday + 1),
            b'k' => format!("{:2}", tm.hour),
            b'l' => format!("{hour12:2}"),
            b'm' => format!("{:02}", tm.mon + 1),
            b'M' => format!("{:02}", tm.min),
            b'n' => "\n".to_string(),
            b'p' => (if tm.hour >= 12 { "PM" } else { "AM" }).to_string(),
            b'P' => (if tm.hour >= 12 { "pm" } else { "am" }).to_string(),
            b'r' => {
                String::from_utf8_lossy(&strftime(b"%I:%M:%S %p", tm, zone, epoch)).into_owned()
            }
            b'R' => format!("{:02}:{:02}", tm.hour, tm.min),
            b's' => epoch.to_string(),
            b'S' => format!("{:02}", tm.sec),
            b't' => "\t".to_string(),
            b'T' | b'X' => format!("{:02}:{:02}:{:02}", tm.hour, tm.min, tm.sec),
            b'u' => (if tm.wday == 0 { 7 } else { tm.wday }).to_string(),
            b'U' => format!("{:02}", (tm.yday + 7 - tm.wday) / 7),
            b'V' => format!("{:02}", iso_week(tm).1),
            b'w' => tm.wday.to_string(),
            b'W' => format!("{:02}", (tm.yday + 7 - (tm.wday + 6) % 7) / 7),
            b'y' => format!("{:02}", tm.year.rem_euclid(100)),
            b'Y' => tm.year.to_string(),
            b'z' => {
                let off = tm.gmtoff;
                let sign = if off < 0 { '-' } else { '+' };
                let a = off.abs();
                format!("{sign}{:02}{:02}", a / 3600, a / 60 % 60)
            }
            b'Z' => zone.to_string(),
            b'%' => "%".to_string(),
            other => format!("%{}", char::from(other)),
        };
        out.extend_from_slice(piece.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for days in [
            -800_000i64,
            -1,
            0,
            1,
            59,
            60,
            365,
            10_957,
            18_262,
            2_932_896,
        ] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(gmtime(0).wday, 4);
        assert_eq!(timegm(2020, 0, 0, 0, 0, 0), timegm(2019, 11, 31, 0, 0, 0));
    }

    #[test]
    fn time_strings_match_htcondor() {
        assert_eq!(
            abstime_to_string(AbsTime { secs: 0, offset: 0 }),
            "1970-01-01T00:00:00-00:00"
        );
        assert_eq!(
            abstime_to_string(AbsTime {
                secs: 1000,
                offset: 3600
            }),
            "1970-01-01T01:16:40+01:00"
        );
        assert_eq!(reltime_to_string(60.0), "01:00");
        assert_eq!(reltime_to_string(0.0), "00");
        assert_eq!(reltime_to_string(183_845.5), "2+03:04:5.5");
        assert_eq!(reltime_to_string(-90_061.0), "-1+01:01:01");
    }

    #[test]
    fn parses_time_strings() {
        let t = parse_abstime(b"2020-01-01T00:00:00+01:30");
        assert_eq!(
            t,
            Some(AbsTime {
                secs: 1_577_836_800 - 5400,
                offset: 5400
            })
        );
        assert_eq!(
            parse_abstime(b"2020-01-01").map(|t| t.secs),
            Some(1_577_836_800)
        );
        assert!(parse_abstime(b"garbage").is_none());
        assert_eq!(parse_reltime(b"1:00"), Some(60.0));
        assert_eq!(parse_reltime(b"2+03:04:05.5"), Some(183_845.5));
        assert_eq!(parse_reltime(b"-1:00"), Some(-60.0));
        assert_eq!(parse_reltime(b"garbage"), None);
    }

    #[test]
    fn strftime_basics() {
        let tm = gmtime(1_577_836_800 + 13 * 3600 + 5 * 60 + 9);
        let s = strftime(b"%Y-%m-%d %H:%M:%S %a %b %j %I%p %%", &tm, "UTC", 0);
        assert_eq!(
            String::from_utf8_lossy(&s),
            "2020-01-01 13:05:09 Wed Jan 001 01PM %"
        );
        let c = strftime(b"%c", &tm, "UTC", 0);
        assert_eq!(String::from_utf8_lossy(&c), "Wed Jan  1 13:05:09 2020");
    }
}
