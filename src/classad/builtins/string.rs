//! String functions: `strcat`, `join`, case changes, `substr`, comparisons,
//! version comparison, `split` and its user/slot forms.

use std::cmp::Ordering;

use super::super::convert::{as_text, to_string};
use super::super::eval::{Evaluator, R};
use super::super::limits::MAX_EVAL_STRING_BYTES;
use super::super::ops::cmp_ignore_case;
use super::super::value::{ListValue, Str, Value};
use super::{Args, Builtin};

fn too_long(len: usize) -> bool {
    len > MAX_EVAL_STRING_BYTES
}

pub(super) fn strcat(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    let mut out: Vec<u8> = Vec::new();
    for i in 0..a.len() {
        let v = a.eval(ev, i)?;
        match to_string(&v) {
            Value::Str(s) => out.extend_from_slice(s.as_bytes()),
            Value::Undefined => return Ok(Value::Undefined),
            _ => return Ok(Value::Error),
        }
        if too_long(out.len()) {
            return Ok(Value::Error);
        }
    }
    Ok(Value::string(out))
}

pub(super) fn join(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    // join(list) and join(sep, list) join the list's items.
    let mut values: Vec<Value> = Vec::new();
    let mut expanded = false;
    if (1..=2).contains(&a.len()) {
        let last = a.eval(ev, a.len() - 1)?;
        if let Value::List(list) = &last {
            if a.len() == 2 {
                values.push(a.eval(ev, 0)?);
            } else {
                values.push(Value::string(""));
            }
            for i in 0..list.len() {
                values.push(ev.eval_item(list, i)?);
            }
            expanded = true;
        }
    }
    if !expanded {
        values = a.eval_all(ev)?;
    }
    let mut sep: Vec<u8> = Vec::new();
    let mut out: Vec<u8> = Vec::new();
    let mut appended = 0usize;
    let mut saw_undefined = false;
    for (i, v) in values.iter().enumerate() {
        let text = match to_string(v) {
            Value::Str(s) => s,
            Value::Undefined => {
                saw_undefined = true;
                continue;
            }
            _ => return Ok(Value::Error),
        };
        if i == 0 {
            sep = text.as_bytes().to_vec();
            continue;
        }
        if appended > 0 {
            out.extend_from_slice(&sep);
        }
        out.extend_from_slice(text.as_bytes());
        appended += 1;
        if too_long(out.len()) {
            return Ok(Value::Error);
        }
    }
    // Nothing but undefined items joins to undefined.
    if appended == 0 && saw_undefined {
        return Ok(Value::Undefined);
    }
    Ok(Value::string(out))
}

pub(super) fn change_case(ev: &mut Evaluator<'_>, upper: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let v = a.eval(ev, 0)?;
    Ok(match to_string(&v) {
        Value::Str(s) => {
            let b: Vec<u8> = if upper {
                s.as_bytes().to_ascii_uppercase()
            } else {
                s.as_bytes().to_ascii_lowercase()
            };
            Value::string(b)
        }
        other => other,
    })
}

/// HTCondor's `substr` index arithmetic on C `int`s.
#[allow(clippy::cast_possible_truncation)]
pub(super) fn substr(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 && a.len() != 3 {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    if vals.iter().any(Value::is_undefined) {
        return Ok(Value::Undefined);
    }
    let (Value::Str(s), Value::Int(off)) = (&vals[0], &vals[1]) else {
        return Ok(Value::Error);
    };
    let len_arg = match vals.get(2) {
        None => None,
        Some(Value::Int(l)) => Some(*l as i32),
        Some(_) => return Ok(Value::Error),
    };
    let alen = i64::try_from(s.len()).unwrap_or(i64::MAX);
    let mut offset = i64::from(*off as i32);
    if offset < 0 {
        offset += alen;
    } else if offset >= alen {
        offset = alen;
    }
    let offset = offset.clamp(0, alen);
    let mut len = i64::from(len_arg.unwrap_or(0));
    if len <= 0 {
        len = (alen - offset + len).max(0);
    } else if len > alen - offset {
        len = alen - offset;
    }
    if len_arg == Some(0) {
        len = 0;
    }
    let start = usize::try_from(offset).unwrap_or(0);
    let end = start + usize::try_from(len).unwrap_or(0);
    Ok(Value::string(s.as_bytes().get(start..end).unwrap_or(&[])))
}

fn sign(o: Ordering) -> i64 {
    match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

pub(super) fn compare(ev: &mut Evaluator<'_>, caseless: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 {
        return Ok(Value::Error);
    }
    let (x, y) = (a.eval(ev, 0)?, a.eval(ev, 1)?);
    if x.is_undefined() || y.is_undefined() {
        return Ok(Value::Undefined);
    }
    let (Some(x), Some(y)) = (as_text(&x), as_text(&y)) else {
        return Ok(Value::Error);
    };
    let o = if caseless {
        cmp_ignore_case(c_str(&x), c_str(&y))
    } else {
        c_str(&x).cmp(c_str(&y))
    };
    Ok(Value::Int(sign(o)))
}

/// The bytes of a string up to its first NUL, as C functions see them.
fn c_str(s: &Str) -> &[u8] {
    let b = s.as_bytes();
    b.iter().position(|&c| c == 0).map_or(b, |p| &b[..p])
}

/// `strverscmp`-like comparison: numbers compare by value, more leading
/// zeros sort first. Returns a difference like C's, not just its sign.
pub(crate) fn natural_cmp(s1: &[u8], s2: &[u8]) -> i64 {
    let at = |s: &[u8], i: usize| -> u8 { s.get(i).copied().filter(|&c| c != 0).unwrap_or(0) };
    let chr = |c: u8| i64::from(c.cast_signed());
    let dig = |c: u8| c.is_ascii_digit();
    let mut i = 0;
    while at(s1, i) != 0 && at(s1, i) == at(s2, i) {
        i += 1;
    }
    let (c1, c2) = (at(s1, i), at(s2, i));
    if c1 == c2 {
        return 0;
    }
    let mut nb = i;
    while nb > 0 && dig(at(s1, nb - 1)) {
        nb -= 1;
    }
    if nb == i && (!dig(c1) || !dig(c2)) {
        return chr(c1) - chr(c2);
    }
    let mut z1 = nb;
    while at(s1, z1) == b'0' {
        z1 += 1;
    }
    let mut z2 = nb;
    while at(s2, z2) == b'0' {
        z2 += 1;
    }
    if z1 > nb && !dig(at(s1, z1)) {
        z1 -= 1;
    }
    if z2 > nb && !dig(at(s2, z2)) {
        z2 -= 1;
    }
    let (lz1, lz2) = ((z1 - nb) as i64, (z2 - nb) as i64);
    if lz1 != lz2 {
        return lz2 - lz1;
    }
    if z1 > nb {
        return chr(c1) - chr(c2);
    }
    let mut e1 = z1;
    while dig(at(s1, e1)) {
        e1 += 1;
    }
    let mut e2 = z2;
    while dig(at(s2, e2)) {
        e2 += 1;
    }
    let (l1, l2) = ((e1 - nb) as i64, (e2 - nb) as i64);
    if l1 != l2 { l1 - l2 } else { chr(c1) - chr(c2) }
}

pub(super) fn version_compare(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 {
        return Ok(Value::Error);
    }
    let (x, y) = (a.eval(ev, 0)?, a.eval(ev, 1)?);
    if x.is_undefined() || y.is_undefined() {
        return Ok(Value::Undefined);
    }
    let (Some(x), Some(y)) = (as_text(&x), as_text(&y)) else {
        return Ok(Value::Error);
    };
    let r = natural_cmp(x.as_bytes(), y.as_bytes());
    // Function names are matched without regard to case (HTCondor 23
    // matched these five case-sensitively; 25 does not).
    Ok(match f {
        Builtin::VersionCmp => Value::Int(r),
        Builtin::VersionLE => Value::Bool(r <= 0),
        Builtin::VersionLT => Value::Bool(r < 0),
        Builtin::VersionGE => Value::Bool(r >= 0),
        Builtin::VersionGT => Value::Bool(r > 0),
        Builtin::VersionEQ => Value::Bool(r == 0),
        _ => Value::Error,
    })
}

pub(super) fn version_in_range(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 3 {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    if vals[1].is_undefined() || vals[2].is_undefined() {
        return Ok(Value::Undefined);
    }
    let (Some(t), Some(lo), Some(hi)) = (as_text(&vals[0]), as_text(&vals[1]), as_text(&vals[2]))
    else {
        return Ok(Value::Error);
    };
    let l = natural_cmp(lo.as_bytes(), t.as_bytes());
    let r = natural_cmp(t.as_bytes(), hi.as_bytes());
    Ok(Value::Bool(l <= 0 && r <= 0))
}

fn c_isspace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Splits at any of `seps`: runs of white space count once, a repeated
/// non-space separator makes an empty item (`"a,,b"` has three).
pub(crate) fn split_arbitrary(s: &[u8], seps: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut last = 0usize;
    if !seps.is_empty() {
        let mut prev_sep: Option<u8> = None;
        let mut i = 0;
        while i < s.len() {
            if seps.contains(&s[i]) {
                if i > last {
                    out.push(s[last..i].to_vec());
                } else if !prev_sep.is_some_and(c_isspace) && prev_sep == Some(s[i]) {
                    out.push(Vec::new());
                }
                if !c_isspace(s[i]) {
                    prev_sep = Some(s[i]);
                }
                last = i + 1;
            }
            i += 1;
        }
    }
    if s.len() > last {
        out.push(s[last..].to_vec());
    }
    out
}

fn string_list(items: Vec<Vec<u8>>) -> Value {
    Value::List(ListValue::from_values(
        items.into_iter().map(Value::string).collect(),
    ))
}

pub(super) fn split(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let s = a.eval(ev, 0)?;
    let seps = if a.len() == 2 {
        Some(a.eval(ev, 1)?)
    } else {
        None
    };
    let Value::Str(s) = s else {
        return Ok(Value::Error);
    };
    let seps: Vec<u8> = match seps {
        None => b", \t".to_vec(),
        Some(Value::Str(x)) => x.as_bytes().to_vec(),
        Some(_) => return Ok(Value::Error),
    };
    Ok(string_list(split_arbitrary(s.as_bytes(), &seps)))
}

pub(super) fn split_at(ev: &mut Evaluator<'_>, slot: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let Value::Str(s) = a.eval(ev, 0)? else {
        return Ok(Value::Error);
    };
    let b = s.as_bytes();
    let (first, second) = match b.iter().position(|&c| c == b'@') {
        Some(i) => (b[..i].to_vec(), b[i + 1..].to_vec()),
        None if slot => (Vec::new(), b.to_vec()),
        None => (b.to_vec(), Vec::new()),
    };
    Ok(string_list(vec![first, second]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let order = ["000", "00", "01", "010", "09", "0", "1", "9", "10"];
        for w in order.windows(2) {
            assert!(
                natural_cmp(w[0].as_bytes(), w[1].as_bytes()) < 0,
                "{} < {}",
                w[0],
                w[1]
            );
        }
        assert!(natural_cmp(b"7.9", b"7.10") < 0);
        assert_eq!(natural_cmp(b"abc", b"abc"), 0);
    }

    #[test]
    fn split_keeps_empty_items_between_repeated_separators() {
        let s = |x: &str| split_arbitrary(x.as_bytes(), b", \t");
        assert_eq!(s("a,,b").len(), 3);
        assert_eq!(s(" a  b ").len(), 2);
        assert_eq!(s("foo, bar"), s("foo ,bar"));
    }
}
