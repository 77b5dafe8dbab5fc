//! String-list functions: a string holding items separated by delimiter
//! characters (by default comma and white space), as HTCondor's
//! `stringList*` functions read it.

use std::collections::BTreeSet;

use super::super::cfmt::strtod;
use super::super::eval::{Evaluator, R};
use super::super::value::Value;
use super::regex::{Letters, compile, is_match};
use super::{Args, Builtin};

/// Items of a string list: split at any delimiter, trimmed of white space,
/// empty items dropped.
pub(crate) fn tokens<'s>(s: &'s [u8], delims: &[u8]) -> Vec<&'s [u8]> {
    s.split(|c| delims.contains(c))
        .map(|t| t.trim_ascii())
        .filter(|t| !t.is_empty())
        .collect()
}

fn str_arg(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Str(s) => Some(s.as_bytes()),
        _ => None,
    }
}

pub(super) fn size(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    let delims: &[u8] = match vals.get(1) {
        None => b", ",
        Some(v) => match str_arg(v) {
            Some(d) => d,
            None => return Ok(Value::Error),
        },
    };
    let Some(list) = str_arg(&vals[0]) else {
        return Ok(Value::Error);
    };
    Ok(Value::Int(
        i64::try_from(tokens(list, delims).len()).unwrap_or(i64::MAX),
    ))
}

pub(super) fn summarize(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    let delims: &[u8] = match vals.get(1) {
        None => b", ",
        Some(v) => match str_arg(v) {
            Some(d) => d,
            None => return Ok(Value::Error),
        },
    };
    let Some(list) = str_arg(&vals[0]) else {
        return Ok(Value::Error);
    };
    // HTCondor starts min at FLT_MAX and max at FLT_MIN (the smallest
    // positive float), so an all-negative list has a maximum of ~0.
    let (mut acc, empty_ok, avg): (f64, bool, bool) = match f {
        Builtin::StringListSum => (0.0, true, false),
        Builtin::StringListAvg => (0.0, true, true),
        Builtin::StringListMin => (f64::from(f32::MAX), false, false),
        _ => (f64::from(f32::MIN_POSITIVE), false, false),
    };
    let mut count = 0u32;
    let mut real = false;
    for item in tokens(list, delims) {
        let (x, used) = strtod(item);
        if used == 0 {
            return Ok(Value::Error);
        }
        if !item.iter().all(|c| b"+-0123456789".contains(c)) {
            real = true;
        }
        acc = match f {
            Builtin::StringListMin => {
                if x < acc {
                    x
                } else {
                    acc
                }
            }
            Builtin::StringListMax => {
                if x > acc {
                    x
                } else {
                    acc
                }
            }
            _ => acc + x,
        };
        count += 1;
    }
    if count == 0 {
        return Ok(if empty_ok {
            Value::Real(0.0)
        } else {
            Value::Undefined
        });
    }
    if avg {
        acc /= f64::from(count);
    }
    Ok(if real {
        Value::Real(acc)
    } else {
        Value::Int(super::super::convert::c_ll(acc))
    })
}

pub(super) fn member(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 && a.len() != 3 {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    let as_text = |v: &Value| -> Option<Vec<u8>> {
        match v {
            Value::Undefined => Some(Vec::new()),
            Value::Str(s) => Some(s.as_bytes().to_vec()),
            _ => None,
        }
    };
    let (Some(item), Some(list)) = (as_text(&vals[0]), as_text(&vals[1])) else {
        return Ok(Value::Error);
    };
    let delims = match vals.get(2) {
        None | Some(Value::Undefined) => b", \t\r\n".to_vec(),
        Some(Value::Str(d)) => d.as_bytes().to_vec(),
        Some(_) => return Ok(Value::Error),
    };
    if vals[0].is_undefined() && vals[1].is_undefined() {
        return Ok(Value::Undefined);
    }
    let caseless = matches!(
        f,
        Builtin::StringListIMember | Builtin::StringListISubsetMatch
    );
    let eq = |x: &[u8], y: &[u8]| {
        if caseless {
            x.eq_ignore_ascii_case(y)
        } else {
            x == y
        }
    };
    let items = tokens(&list, &delims);
    let r = match f {
        Builtin::StringListMember | Builtin::StringListIMember => {
            items.iter().any(|t| eq(t, &item))
        }
        _ => {
            if item.is_empty() {
                true
            } else {
                tokens(&item, &delims)
                    .iter()
                    .all(|want| items.iter().any(|t| eq(t, want)))
            }
        }
    };
    Ok(Value::Bool(r))
}

pub(super) fn intersect(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 && a.len() != 3 {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    if vals.iter().any(Value::is_error) {
        return Ok(Value::Error);
    }
    if vals.iter().any(Value::is_undefined) {
        return Ok(Value::Undefined);
    }
    let delims: Vec<u8> = match vals.get(2) {
        None => b" ,".to_vec(),
        Some(Value::Str(d)) if !d.is_empty() => d.as_bytes().to_vec(),
        Some(Value::Str(_)) => b" ,".to_vec(),
        Some(_) => return Ok(Value::Error),
    };
    let (Some(x), Some(y)) = (str_arg(&vals[0]), str_arg(&vals[1])) else {
        return Ok(Value::Error);
    };
    let split = |s: &[u8]| -> Vec<Vec<u8>> {
        s.split(|c| delims.contains(c))
            .filter(|t| !t.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let right: BTreeSet<Vec<u8>> = split(y).into_iter().collect();
    Ok(Value::Bool(split(x).iter().any(|t| right.contains(t))))
}

pub(super) fn regexp_member(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if !(2..=4).contains(&a.len()) {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    if vals.iter().any(|v| !matches!(v, Value::Str(_))) {
        return Ok(Value::Error);
    }
    let s = |i: usize| vals.get(i).and_then(str_arg);
    let (Some(pat), Some(list)) = (s(0), s(1)) else {
        return Ok(Value::Error);
    };
    let delims = s(2).unwrap_or(b", ");
    let options = s(3)
        .map(|o| String::from_utf8_lossy(o).into_owned())
        .unwrap_or_default();
    let Some(re) = compile(pat, &options, Letters::AnyCase) else {
        return Ok(Value::Error);
    };
    let items = tokens(list, delims);
    if items.is_empty() {
        return Ok(Value::Undefined);
    }
    Ok(Value::Bool(items.iter().any(|t| is_match(&re, t))))
}
