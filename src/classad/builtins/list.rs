//! List functions: `member`, `identicalMember`, `size`, `sum`, `avg`,
//! `min`, `max`, `anyCompare`, `allCompare`, `evalInEachContext` and
//! `countMatches`.

use super::super::ast::BinOp;
use super::super::eval::{Evaluator, R};
use super::super::ops;
use super::super::value::{ListValue, Value};
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

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Real(_) | Value::Bool(_))
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
    for i in 0..list.len() {
        let v = ev.eval_item(&list, i)?;
        if v.is_undefined() {
            continue;
        }
        if !is_number(&v) {
            return Ok(Value::Error);
        }
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
    Ok(result)
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
    for i in 0..list.len() {
        let v = ev.eval_item(&list, i)?;
        if v.is_undefined() {
            continue;
        }
        if !is_number(&v) {
            return Ok(Value::Error);
        }
        if first || matches!(ops::binary(op, &v, &result), Value::Bool(true)) {
            result = v;
            first = false;
        }
    }
    Ok(result)
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
    let list = match a.eval(ev, 1)? {
        Value::List(l) => l,
        Value::Undefined if count => return Ok(Value::Int(0)),
        _ => return Ok(Value::Error),
    };
    let expr = &a.exprs[0];
    let mut values = Vec::with_capacity(list.len());
    let mut matches = 0i64;
    for i in 0..list.len() {
        let item = ev.eval_item(&list, i)?;
        let Value::Ad(ad) = item else {
            if count {
                continue;
            }
            return Ok(Value::Error);
        };
        let r = ev.eval_in_ad(expr, &ad)?;
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
