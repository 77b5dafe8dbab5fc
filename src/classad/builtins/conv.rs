//! Type predicates, conversions, `ifThenElse`, `eval`, `unparse` and
//! `debug`.

use super::super::ast::Expr;
use super::super::convert;
use super::super::eval::{Evaluator, R};
use super::super::name::Name;
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

pub(super) fn debug(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    a.eval(ev, 0)
}
