//! C `printf` number formats that HTCondor's output depends on.
//!
//! HTCondor prints reals with `%1.15E` (new syntax), `%.16G` (old syntax)
//! and times with `%02g`; these reproduce the C library's output exactly,
//! using Rust's correctly rounded decimal conversion underneath.

/// `%.{prec}E` (or `%.{prec}e` when `upper` is false): one digit, a point,
/// `prec` digits, and an exponent of at least two digits.
pub(crate) fn fmt_e(x: f64, prec: usize, upper: bool) -> String {
    if !x.is_finite() {
        return nonfinite(x, upper);
    }
    let s = format!("{x:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    let e = if upper { 'E' } else { 'e' };
    format!("{mant}{e}{sign}{:02}", exp.unsigned_abs())
}

/// `%.{prec}G` (or `%g`): the shorter of fixed and exponent notation with
/// `prec` significant digits, trailing zeros removed.
pub(crate) fn fmt_g(x: f64, prec: usize, upper: bool) -> String {
    let mut out = String::new();
    fmt_g_into(&mut out, x, prec, upper);
    out
}

/// [`fmt_g`] appended to `out`; the usual precisions allocate nothing.
pub(crate) fn fmt_g_into(out: &mut String, x: f64, prec: usize, upper: bool) {
    if !x.is_finite() {
        out.push_str(&nonfinite(x, upper));
        return;
    }
    let p = prec.max(1);
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // The exponent after rounding to p significant digits.
    let mut buf = Stack::default();
    let exp: i32 = with_formatted(&mut buf, format_args!("{x:.prec$e}", prec = p - 1), |e| {
        e.split_once('e')
            .and_then(|(_, e)| e.parse().ok())
            .unwrap_or(0)
    });
    let p_i = i32::try_from(p).unwrap_or(i32::MAX);

    if exp < -4 || exp >= p_i {
        let s = fmt_e(x, p - 1, upper);
        let (mant, rest) = s.split_at(s.find(['e', 'E']).unwrap_or(s.len()));
        out.push_str(strip_zeros(mant));
        out.push_str(rest);
    } else {
        let decimals = usize::try_from(p_i - 1 - exp).unwrap_or(0);
        let mut buf = Stack::default();
        with_formatted(&mut buf, format_args!("{x:.decimals$}"), |f| {
            out.push_str(strip_zeros(f));
        });
    }
}

/// A small buffer on the stack to format a number into.
struct Stack {
    buf: [u8; 64],
    len: usize,
}

impl Default for Stack {
    fn default() -> Stack {
        Stack {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl std::fmt::Write for Stack {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Calls `f` with `args` formatted: in `buf` when it fits, else in a
/// string of its own.
fn with_formatted<R>(
    buf: &mut Stack,
    args: std::fmt::Arguments<'_>,
    f: impl FnOnce(&str) -> R,
) -> R {
    if std::fmt::write(buf, args).is_ok()
        && let Ok(s) = std::str::from_utf8(&buf.buf[..buf.len])
    {
        return f(s);
    }
    f(&std::fmt::format(args))
}

/// `%{width}g`-style zero padding on the left (for `%02g`).
pub(crate) fn zero_pad(s: String, width: usize) -> String {
    if s.len() >= width {
        return s;
    }
    let (sign, digits) = match s.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", s.as_str()),
    };
    format!("{sign}{}{digits}", "0".repeat(width - s.len()))
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn nonfinite(x: f64, upper: bool) -> String {
    let s = if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    };
    if upper {
        s.to_uppercase()
    } else {
        s.to_string()
    }
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// C's `strtod`: the value of the longest prefix of `s` that is a number
/// (after leading white space), and how many bytes it used (0 if none).
/// Accepts decimal and hexadecimal forms, `inf`, `infinity` and `nan`.
pub(crate) fn strtod(s: &[u8]) -> (f64, usize) {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let start = i;
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let rest = &s[i..];
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    let signed = |v: f64| if neg { -v } else { v };
    if starts(b"infinity") {
        return (signed(f64::INFINITY), i + 8);
    }
    if starts(b"inf") {
        return (signed(f64::INFINITY), i + 3);
    }
    if starts(b"nan") {
        let mut j = i + 3;
        if s.get(j) == Some(&b'(') {
            let mut k = j + 1;
            while k < s.len() && (s[k].is_ascii_alphanumeric() || s[k] == b'_') {
                k += 1;
            }
            if s.get(k) == Some(&b')') {
                j = k + 1;
            }
        }
        return (signed(f64::NAN), j);
    }
    if starts(b"0x") {
        let mut j = i + 2;
        let mut mant = 0.0f64;
        let mut digits = 0;
        let mut exp2: i64 = 0;
        while let Some(d) = s.get(j).and_then(|c| char::from(*c).to_digit(16)) {
            mant = mant * 16.0 + f64::from(d);
            digits += 1;
            j += 1;
        }
        if s.get(j) == Some(&b'.') {
            let mut k = j + 1;
            let mut frac_digits = 0;
            while let Some(d) = s.get(k).and_then(|c| char::from(*c).to_digit(16)) {
                mant = mant * 16.0 + f64::from(d);
                exp2 -= 4;
                frac_digits += 1;
                k += 1;
            }
            if digits + frac_digits > 0 {
                digits += frac_digits;
                j = k;
            }
        }
        if digits == 0 {
            // Just the "0": the x is not part of the number.
            return (signed(0.0), i + 1);
        }
        if matches!(s.get(j), Some(b'p' | b'P')) {
            let mut k = j + 1;
            let mut eneg = false;
            if matches!(s.get(k), Some(b'+' | b'-')) {
                eneg = s[k] == b'-';
                k += 1;
            }
            let mut e: i64 = 0;
            let mut any = false;
            while let Some(d) = s.get(k).filter(|c| c.is_ascii_digit()) {
                e = e.saturating_mul(10).saturating_add(i64::from(d - b'0'));
                any = true;
                k += 1;
            }
            if any {
                exp2 += if eneg { -e } else { e };
                j = k;
            }
        }
        let e = i32::try_from(exp2.clamp(-5000, 5000)).unwrap_or(0);
        return (signed(mant * 2f64.powi(e)), j);
    }
    let mut j = i;
    let mut digits = 0;
    while s.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
        digits += 1;
    }
    if s.get(j) == Some(&b'.') {
        let mut k = j + 1;
        let mut frac = 0;
        while s.get(k).is_some_and(u8::is_ascii_digit) {
            k += 1;
            frac += 1;
        }
        if digits + frac > 0 {
            digits += frac;
            j = k;
        }
    }
    if digits == 0 {
        return (0.0, 0);
    }
    if matches!(s.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(s.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let ds = k;
        while s.get(k).is_some_and(u8::is_ascii_digit) {
            k += 1;
        }
        if k > ds {
            j = k;
        }
    }
    let text = std::str::from_utf8(&s[start..j]).unwrap_or("0");
    let text = text.strip_prefix('+').unwrap_or(text);
    (text.parse::<f64>().unwrap_or(0.0), j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_format_matches_c() {
        assert_eq!(fmt_e(2.5, 15, true), "2.500000000000000E+00");
        assert_eq!(fmt_e(1.0 / 3.0, 15, true), "3.333333333333333E-01");
        assert_eq!(fmt_e(1e300, 15, true), "1.000000000000000E+300");
        assert_eq!(fmt_e(-1.5e-7, 2, false), "-1.50e-07");
    }

    #[test]
    fn strtod_takes_the_longest_prefix() {
        assert_eq!(strtod(b"  12abc"), (12.0, 4));
        assert_eq!(strtod(b"1e5x").0, 1e5);
        assert_eq!(strtod(b"0x10").0, 16.0);
        assert_eq!(strtod(b"abc"), (0.0, 0));
        assert!(strtod(b"-inf").0.is_infinite());
        assert!(strtod(b"nan").0.is_nan());
        assert_eq!(strtod(b"1.5e"), (1.5, 3));
        assert_eq!(strtod(b".5"), (0.5, 2));
        assert_eq!(strtod(b"."), (0.0, 0));
    }

    #[test]
    fn g_format_past_the_stack_buffer_matches_c() {
        // printf("%.60g", 1.0/3) and printf("%.40G", 123456.789)
        assert_eq!(
            fmt_g(1.0 / 3.0, 60, false),
            "0.333333333333333314829616256247390992939472198486328125"
        );
        assert_eq!(
            fmt_g(123_456.789, 40, true),
            "123456.7890000000043073669075965881347656"
        );
        let mut out = String::from("x=");
        fmt_g_into(&mut out, 2.5, 16, true);
        assert_eq!(out, "x=2.5");
    }

    #[test]
    fn g_format_matches_c() {
        assert_eq!(fmt_g(2.5, 16, true), "2.5");
        assert_eq!(fmt_g(100.0, 16, true), "100");
        assert_eq!(fmt_g(1e16, 16, true), "1E+16");
        assert_eq!(fmt_g(1e15, 16, true), "1000000000000000");
        assert_eq!(fmt_g(0.0001, 16, true), "0.0001");
        assert_eq!(fmt_g(0.00001, 16, true), "1E-05");
        assert_eq!(fmt_g(0.1 + 0.2, 16, true), "0.3");
        assert_eq!(fmt_g(0.1 + 0.2, 17, true), "0.30000000000000004");
        assert_eq!(fmt_g(5.5, 6, false), "5.5");
        assert_eq!(zero_pad(fmt_g(5.5, 6, false), 2), "5.5");
        assert_eq!(zero_pad(fmt_g(0.5, 6, false), 2), "0.5");
    }
}
