//! The one-conversion `printf` formats that `$INT(name,fmt)`,
//! `$REAL(name,fmt)` and `$STRING(name,fmt)` accept.

use crate::classad::cfmt;

/// What a conversion formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Float,
    Str,
}

/// The value to format.
pub(crate) enum Arg<'a> {
    Int(i64),
    Float(f64),
    Str(&'a str),
}

struct Spec {
    start: usize,
    end: usize,
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alt: bool,
    width: usize,
    precision: Option<usize>,
    conv: u8,
}

fn parse(fmt: &str) -> Option<Spec> {
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        let start = i;
        i += 1;
        let mut s = Spec {
            start,
            end: 0,
            left: false,
            plus: false,
            space: false,
            zero: false,
            alt: false,
            width: 0,
            precision: None,
            conv: 0,
        };
        while let Some(&c) = b.get(i) {
            match c {
                b'-' => s.left = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'0' => s.zero = true,
                b'#' => s.alt = true,
                _ => break,
            }
            i += 1;
        }
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            s.width = s
                .width
                .saturating_mul(10)
                .saturating_add(usize::from(c - b'0'));
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            let mut p = 0usize;
            while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
                p = p.saturating_mul(10).saturating_add(usize::from(c - b'0'));
                i += 1;
            }
            s.precision = Some(p);
        }
        while matches!(
            b.get(i),
            Some(b'l' | b'h' | b'q' | b'L' | b'j' | b'z' | b't')
        ) {
            i += 1;
        }
        s.conv = *b.get(i)?;
        s.end = i + 1;
        return Some(s);
    }
    None
}

/// The kind of the first conversion in `fmt`, if it has a valid one.
pub(crate) fn conversion(fmt: &str) -> Option<Kind> {
    match parse(fmt)?.conv {
        b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' => Some(Kind::Int),
        b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => Some(Kind::Float),
        b's' => Some(Kind::Str),
        _ => None,
    }
}

/// Formats `arg` with the first conversion of `fmt`; the text around it is
/// copied (with `%%` as `%`).
pub(crate) fn format(fmt: &str, arg: Arg<'_>) -> String {
    let Some(s) = parse(fmt) else {
        return fmt.replace("%%", "%");
    };
    let body = match (s.conv, arg) {
        (b'd' | b'i', Arg::Int(v)) => sign(v < 0, &s, v.unsigned_abs().to_string()),
        (b'u', Arg::Int(v)) => v.cast_unsigned().to_string(),
        (b'x', Arg::Int(v)) => prefix(&s, "0x", format!("{:x}", v.cast_unsigned())),
        (b'X', Arg::Int(v)) => prefix(&s, "0X", format!("{:X}", v.cast_unsigned())),
        (b'o', Arg::Int(v)) => prefix(&s, "0", format!("{:o}", v.cast_unsigned())),
        (b'f' | b'F', Arg::Float(v)) => {
            let p = s.precision.unwrap_or(6);
            sign(v.is_sign_negative(), &s, format!("{:.p$}", v.abs()))
        }
        (b'e' | b'E', Arg::Float(v)) => {
            let p = s.precision.unwrap_or(6);
            sign(
                v.is_sign_negative(),
                &s,
                cfmt::fmt_e(v.abs(), p, s.conv == b'E'),
            )
        }
        (b'g' | b'G', Arg::Float(v)) => {
            let p = s.precision.unwrap_or(6);
            sign(
                v.is_sign_negative(),
                &s,
                cfmt::fmt_g(v.abs(), p, s.conv == b'G'),
            )
        }
        (b's', Arg::Str(v)) => match s.precision {
            Some(p) => v.chars().take(p).collect(),
            None => v.to_string(),
        },
        (_, Arg::Int(v)) => v.to_string(),
        (_, Arg::Float(v)) => cfmt::fmt_g(v, 6, false),
        (_, Arg::Str(v)) => v.to_string(),
    };
    let padded = pad(&s, body);
    let mut out = fmt[..s.start].replace("%%", "%");
    out.push_str(&padded);
    out.push_str(&fmt[s.end..].replace("%%", "%"));
    out
}

fn sign(negative: bool, s: &Spec, digits: String) -> String {
    if negative {
        format!("-{digits}")
    } else if s.plus {
        format!("+{digits}")
    } else if s.space {
        format!(" {digits}")
    } else {
        digits
    }
}

fn prefix(s: &Spec, p: &str, digits: String) -> String {
    if s.alt && digits != "0" {
        format!("{p}{digits}")
    } else {
        digits
    }
}

fn pad(s: &Spec, body: String) -> String {
    let n = body.chars().count();
    if n >= s.width {
        return body;
    }
    let fill = s.width - n;
    if s.left {
        format!("{body}{}", " ".repeat(fill))
    } else if s.zero && s.conv != b's' {
        let sign_len = usize::from(body.starts_with(['-', '+', ' ']));
        format!(
            "{}{}{}",
            &body[..sign_len],
            "0".repeat(fill),
            &body[sign_len..]
        )
    } else {
        format!("{}{body}", " ".repeat(fill))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_c() {
        assert_eq!(format("%05d", Arg::Int(42)), "00042");
        assert_eq!(format("%-4d|", Arg::Int(7)), "7   |");
        assert_eq!(format("%x", Arg::Int(255)), "ff");
        assert_eq!(format("%.2f", Arg::Float(1.23456)), "1.23");
        assert_eq!(format("%.16G", Arg::Float(0.1)), "0.1");
        assert_eq!(format("[%s]", Arg::Str("a")), "[a]");
        assert_eq!(conversion("%d"), Some(Kind::Int));
        assert_eq!(conversion("abc"), None);
    }
}
