//! List functions: `member`, `identicalMember`, `size`, `sum`, `avg`,
//! `min`, `max`, `anyCompare`, `allCompare`, `evalInEachContext` and
//! `countMatches`.

use super::super::ast::{BinOp, Expr};
use super::super::eval::{Evaluator, R};
use super::super::ops;
use super::super::value::{Frame, ListValue, Value};
use super::Args;

pub(super) fn member(ev: &mut Evaluator<'_>, identical: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 {
        return Ok(Value::Error);
    }
    let x = a.eval(ev, 0)?;
    let l = a.eval(ev, 1)?;
    if l.is_undefined() || (!identical && x.is_undefined()) {
        return Ok(Value::Undefined);
    }
    let Value::List(list) = l else {
        return Ok(Value::Error);
    };
    if matches!(x, Value::List(_) | Value::Ad(_)) || (!identical && x.is_error()) {
        return Ok(Value::Error);
    }
    let op = if identical { BinOp::Is } else { BinOp::Eq };
    for i in 0..list.len() {
        let item = ev.eval_item(&list, i)?;
        if matches!(ops::binary(op, &item, &x), Value::Bool(true)) {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

pub(super) fn size(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let v = a.eval(ev, 0)?;
    let n = match &v {
        Value::Undefined => return Ok(Value::Undefined),
        Value::List(l) => l.len(),
        Value::Ad(ad) => match ev.frame_ad(&ad.0) {
            Some(ad) => ad.len(),
            None => 0,
        },
        Value::Str(s) => s.len(),
        _ => return Ok(Value::Error),
    };
    Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

/// Evaluates a list argument: `Ok(Err(v))` is an immediate result.
fn list_arg(ev: &mut Evaluator<'_>, a: &Args<'_>, i: usize) -> R<Result<ListValue, Value>> {
    Ok(match a.eval(ev, i)? {
        Value::List(l) => Ok(l),
        Value::Undefined => Err(Value::Undefined),
        _ => Err(Value::Error),
    })
}

/// The number a list element stands for (booleans as 0 and 1).
fn number(v: Value) -> Option<Value> {
    match v {
        Value::Int(_) | Value::Real(_) => Some(v),
        Value::Bool(b) => Some(Value::Int(i64::from(b))),
        _ => None,
    }
}

pub(super) fn sum_avg(ev: &mut Evaluator<'_>, avg: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let list = match list_arg(ev, a, 0)? {
        Ok(l) => l,
        Err(v) => return Ok(v),
    };
    let mut result = Value::Int(0);
    let mut count = 0usize;
    let mut only = None;
    for i in 0..list.len() {
        let v = ev.eval_item(&list, i)?;
        if v.is_undefined() {
            continue;
        }
        only = Some(v.clone());
        let Some(v) = number(v) else {
            return Ok(Value::Error);
        };
        result = if count == 0 {
            v
        } else {
            ops::binary(BinOp::Add, &result, &v)
        };
        count += 1;
    }
    if avg && count > 0 {
        #[allow(clippy::cast_precision_loss)]
        let n = Value::Real(count as f64);
        return Ok(ops::binary(BinOp::Div, &result, &n));
    }
    Ok(alone(count, only).unwrap_or(result))
}

/// The one element a list held besides undefined ones, as it was: HTCondor's
/// `sum`, `min` and `max` of `{true}` are `true`, not 1.
fn alone(count: usize, only: Option<Value>) -> Option<Value> {
    only.filter(|_| count == 1)
}

pub(super) fn min_max(ev: &mut Evaluator<'_>, min: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let list = match list_arg(ev, a, 0)? {
        Ok(l) => l,
        Err(v) => return Ok(v),
    };
    let op = if min { BinOp::Lt } else { BinOp::Gt };
    let mut result = Value::Undefined;
    let mut first = true;
    let mut any_real = false;
    let (mut count, mut only) = (0usize, None);
    for i in 0..list.len() {
        let v = ev.eval_item(&list, i)?;
        if v.is_undefined() {
            continue;
        }
        count += 1;
        only = Some(v.clone());
        let Some(v) = number(v) else {
            return Ok(Value::Error);
        };
        any_real |= matches!(v, Value::Real(_));
        if first || matches!(ops::binary(op, &v, &result), Value::Bool(true)) {
            result = v;
            first = false;
        }
    }
    if let Some(v) = alone(count, only) {
        return Ok(v);
    }
    // The result is real if any element was.
    Ok(match result {
        #[allow(clippy::cast_precision_loss)]
        Value::Int(i) if any_real => Value::Real(i as f64),
        other => other,
    })
}

pub(super) fn list_compare(ev: &mut Evaluator<'_>, all: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 3 {
        return Ok(Value::Error);
    }
    let op = match a.eval(ev, 0)? {
        Value::Undefined => return Ok(Value::Undefined),
        Value::Str(s) => match s.as_bytes() {
            b"<" => BinOp::Lt,
            b"<=" => BinOp::Le,
            b"!=" => BinOp::Ne,
            b"==" => BinOp::Eq,
            b">" => BinOp::Gt,
            b">=" => BinOp::Ge,
            b"is" => BinOp::Is,
            b"isnt" => BinOp::Isnt,
            _ => return Ok(Value::Error),
        },
        _ => return Ok(Value::Error),
    };
    let list = match list_arg(ev, a, 1)? {
        Ok(l) => l,
        Err(v) => return Ok(v),
    };
    let target = a.eval(ev, 2)?;
    for i in 0..list.len() {
        let v = ev.eval_item(&list, i)?;
        match ops::binary(op, &v, &target) {
            Value::Bool(true) if !all => return Ok(Value::Bool(true)),
            Value::Bool(false) if all => return Ok(Value::Bool(false)),
            Value::Bool(_) => {}
            Value::Undefined => return Ok(Value::Bool(false)),
            _ => return Ok(Value::Error),
        }
    }
    Ok(Value::Bool(all))
}

pub(super) fn eval_in_each(ev: &mut Evaluator<'_>, count: bool, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 {
        return Ok(Value::Error);
    }
    // An attribute reference names the expression to evaluate in each ad
    // (evalInEachContext(RequireGPUs, AvailableGPUs)); if it names nothing,
    // the reference itself is evaluated there.
    let expr = match ev.deref(&a.exprs[0], a.frame)? {
        Some(e) => e,
        None => a.exprs[0].clone(),
    };
    let (items, frame) = match &a.exprs[1] {
        Expr::List(items) => (items.clone(), a.frame.clone()),
        other => match ev.eval(other, a.frame)? {
            Value::List(l) => (l.items.clone(), l.frame.clone().unwrap_or(Frame::Empty)),
            Value::Undefined => {
                return Ok(if count {
                    Value::Int(0)
                } else {
                    Value::Undefined
                });
            }
            _ => return Ok(Value::Error),
        },
    };
    let mut values = Vec::with_capacity(items.len());
    let mut matches = 0i64;
    for item in items.iter() {
        let r = match ev.eval(item, &frame) {
            Err(_) => Value::Error,
            Ok(Value::Ad(ad)) => ev.eval_in_ad(&expr, &ad).unwrap_or(Value::Error),
            Ok(Value::Undefined) => Value::Undefined,
            Ok(_) => Value::Error,
        };
        if count {
            if r.as_bool_equiv() == Some(true) {
                matches += 1;
            }
        } else {
            values.push(ev.detach(r));
        }
    }
    if count {
        Ok(Value::Int(matches))
    } else {
        Ok(Value::List(ListValue::from_values(values)))
    }
}
