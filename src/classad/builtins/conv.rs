//! Type predicates, conversions, `ifThenElse`, `eval`, `unparse`,
//! `unresolved` and `debug`.

use std::collections::BTreeMap;

use super::super::ast::Expr;
use super::super::convert;
use super::super::eval::{Evaluator, R};
use super::super::name::{Name, Special};
use super::super::ops::cmp_ignore_case;
use super::super::parser::parse_expr;
use super::super::unparse::pretty_expr;
use super::super::value::Value;
use super::{Args, Builtin};

pub(super) fn is_type(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let v = a.eval(ev, 0)?;
    Ok(Value::Bool(match f {
        Builtin::IsUndefined => v.is_undefined(),
        Builtin::IsError => v.is_error(),
        Builtin::IsString => matches!(v, Value::Str(_)),
        Builtin::IsInteger => matches!(v, Value::Int(_)),
        Builtin::IsReal => matches!(v, Value::Real(_)),
        Builtin::IsList => matches!(v, Value::List(_)),
        Builtin::IsClassAd => matches!(v, Value::Ad(_)),
        Builtin::IsBoolean => matches!(v, Value::Bool(_)),
        Builtin::IsAbsTime => matches!(v, Value::AbsTime(_)),
        Builtin::IsRelTime => matches!(v, Value::RelTime(_)),
        _ => return Ok(Value::Error),
    }))
}

fn one(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Option<Value>> {
    if a.len() != 1 {
        return Ok(None);
    }
    a.eval(ev, 0).map(Some)
}

pub(super) fn int(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    Ok(one(ev, a)?.map_or(Value::Error, |v| convert::to_int(&v)))
}

pub(super) fn real(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    Ok(one(ev, a)?.map_or(Value::Error, |v| convert::to_real(&v)))
}

pub(super) fn string(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    Ok(one(ev, a)?.map_or(Value::Error, |v| convert::to_string(&v)))
}

pub(super) fn bool_(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    let Some(v) = one(ev, a)? else {
        return Ok(Value::Error);
    };
    Ok(match v {
        Value::Undefined => Value::Undefined,
        Value::Bool(b) => Value::Bool(b),
        Value::Int(i) => Value::Bool(i != 0),
        Value::Real(r) => Value::Bool(r != 0.0),
        Value::RelTime(t) => Value::Bool(convert::reltime_secs(t) != 0),
        Value::Str(s) => {
            let b = s.as_bytes();
            if b.eq_ignore_ascii_case(b"true") {
                Value::Bool(true)
            } else if b.eq_ignore_ascii_case(b"false") {
                Value::Bool(false)
            } else {
                Value::Undefined
            }
        }
        _ => Value::Error,
    })
}

pub(super) fn if_then_else(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 3 {
        return Ok(Value::Error);
    }
    let c = a.eval(ev, 0)?;
    match c {
        Value::Bool(_) | Value::Int(_) | Value::Real(_) => {
            let branch = if c.as_bool_equiv() == Some(true) {
                1
            } else {
                2
            };
            a.eval(ev, branch)
        }
        Value::Undefined => Ok(Value::Undefined),
        _ => Ok(Value::Error),
    }
}

pub(super) fn eval(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    let Some(v) = one(ev, a)? else {
        return Ok(Value::Error);
    };
    let Some(text) = convert::as_text(&v) else {
        return Ok(Value::Error);
    };
    let Ok(expr) = parse_expr(&text.to_string_lossy()) else {
        return Ok(Value::Error);
    };
    ev.nested(|ev| ev.eval(&expr, a.frame))
}

/// The attribute a reference names, as `unparse()` spells it.
fn reference_text(e: &Expr) -> Option<String> {
    match e {
        Expr::Attr(_) | Expr::AbsAttr(_) | Expr::Select(_, _) => {
            Some(super::super::unparse::expr_to_string(e))
        }
        _ => None,
    }
}

pub(super) fn unparse(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    let Some(text) = (if a.len() == 1 {
        reference_text(&a.exprs[0])
    } else {
        None
    }) else {
        return Ok(Value::Error);
    };
    let name = Name::new(&text);
    let out = ev
        .frame_ad(a.frame)
        .and_then(|ad| ad.get(&name))
        .map(pretty_expr)
        .unwrap_or_default();
    Ok(Value::string(out))
}

/// Collects the names an expression refers to that the ad does not define,
/// following the ad's own attributes.
fn external_refs(
    ev: &Evaluator<'_>,
    frame: &super::super::value::Frame,
    e: &Expr,
    seen: &mut Vec<Name>,
    out: &mut BTreeMap<Vec<u8>, String>,
    depth: u32,
) {
    if depth > 400 {
        return;
    }
    let mut add = |n: &Name| {
        out.entry(n.as_str().to_ascii_lowercase().into_bytes())
            .or_insert_with(|| n.as_str().to_string());
    };
    match e {
        Expr::Attr(n) => match ev.frame_ad(frame).and_then(|ad| ad.get(n)) {
            Some(inner) => {
                if !seen.iter().any(|s| s.matches(n)) {
                    seen.push(n.clone());
                    external_refs(ev, frame, inner, seen, out, depth + 1);
                }
            }
            None => {
                if !matches!(n.special(), Special::My | Special::SelfName) {
                    add(n);
                }
            }
        },
        Expr::Select(base, n) => match &**base {
            Expr::Attr(b) if matches!(b.special(), Special::My | Special::SelfName) => {
                external_refs(ev, frame, &Expr::Attr(n.clone()), seen, out, depth + 1);
            }
            Expr::Attr(b) if matches!(b.special(), Special::Target | Special::Other) => add(n),
            other => external_refs(ev, frame, other, seen, out, depth + 1),
        },
        Expr::AbsAttr(n) => add(n),
        Expr::Unary(_, x) | Expr::Paren(x) => external_refs(ev, frame, x, seen, out, depth + 1),
        Expr::Elvis(l, r) | Expr::Index(l, r) => {
            external_refs(ev, frame, l, seen, out, depth + 1);
            external_refs(ev, frame, r, seen, out, depth + 1);
        }
        Expr::Binary(b) => {
            external_refs(ev, frame, &b.lhs, seen, out, depth + 1);
            external_refs(ev, frame, &b.rhs, seen, out, depth + 1);
        }
        Expr::Cond(c, x, y) => {
            for s in [c, x, y] {
                external_refs(ev, frame, s, seen, out, depth + 1);
            }
        }
        Expr::Call(c) => {
            for arg in &c.args {
                external_refs(ev, frame, arg, seen, out, depth + 1);
            }
        }
        Expr::List(items) => {
            for item in items.iter() {
                external_refs(ev, frame, item, seen, out, depth + 1);
            }
        }
        Expr::Lit(_) | Expr::RelTimeLit(_) | Expr::AbsTimeLit(_) | Expr::Ad(_) => {}
    }
}

pub(super) fn unresolved(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let Expr::Attr(attr) = &a.exprs[0] else {
        return Ok(Value::Error);
    };
    let Some(expr) = ev.frame_ad(a.frame).and_then(|ad| ad.get(attr)).cloned() else {
        return Ok(Value::Undefined);
    };
    let mut names = BTreeMap::new();
    let mut seen = vec![attr.clone()];
    external_refs(ev, a.frame, &expr, &mut seen, &mut names, 0);
    let mut list: Vec<String> = names.into_values().collect();
    list.sort_by(|x, y| cmp_ignore_case(x.as_bytes(), y.as_bytes()));
    if a.len() == 1 {
        return Ok(Value::string(list.join(",")));
    }
    let pat = a.eval(ev, 1)?;
    let Value::Str(p) = pat else {
        return Ok(Value::Error);
    };
    let Some(re) = super::regex::compile(p.as_bytes(), "", super::regex::Letters::Lower) else {
        return Ok(Value::Error);
    };
    Ok(Value::Bool(
        list.iter()
            .any(|n| re.is_match(n.as_bytes()).unwrap_or(false)),
    ))
}

pub(super) fn debug(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    a.eval(ev, 0)
}
