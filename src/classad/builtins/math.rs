//! Math functions: `floor`, `ceiling`, `round`, `pow`, `quantize`, `random`.

use super::super::convert::{c_ll, real_of};
use super::super::eval::{Evaluator, Fail, R};
use super::super::value::Value;
use super::{Args, Builtin};

pub(super) fn round(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    let v = a.eval(ev, 0)?;
    if let Value::Int(_) = v {
        return Ok(v);
    }
    let Some(r) = real_of(&v) else {
        return Ok(Value::Error);
    };
    Ok(Value::Int(c_ll(match f {
        Builtin::Floor => r.floor(),
        Builtin::Ceiling => r.ceil(),
        _ => r.round_ties_even(),
    })))
}

pub(super) fn pow(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 {
        return Ok(Value::Error);
    }
    let (x, y) = (a.eval(ev, 0)?, a.eval(ev, 1)?);
    if let (Value::Int(b), Value::Int(e)) = (&x, &y)
        && *e >= 0
    {
        #[allow(clippy::cast_precision_loss)]
        let r = (*b as f64).powf(*e as f64) + 0.5;
        return Ok(Value::Int(c_ll(r)));
    }
    match (real_of(&x), real_of(&y)) {
        (Some(b), Some(e)) => Ok(Value::Real(b.powf(e))),
        _ => Ok(Value::Error),
    }
}

pub(super) fn quantize(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 {
        return Ok(Value::Error);
    }
    let (x, b) = (a.eval(ev, 0)?, a.eval(ev, 1)?);
    let Some(rx) = real_of(&x) else {
        return Ok(Value::Error);
    };
    let (base, rbase) = if let Value::List(list) = &b {
        // The first item at least as large as x; else multiples of the last.
        let mut base = Value::Real(0.0);
        let mut rbase = 0.0;
        for i in 0..list.len() {
            base = ev.eval_item(list, i)?;
            let Some(r) = real_of(&base) else {
                return Ok(Value::Error);
            };
            rbase = r;
            if rbase >= rx {
                return Ok(base);
            }
        }
        (base, rbase)
    } else {
        match real_of(&b) {
            Some(r) => (b, r),
            None => return Ok(Value::Error),
        }
    };
    if let Value::Int(ib) = base {
        if ib == 0 {
            return Ok(x);
        }
        if let Value::Int(ix) = x {
            return Ok(Value::Int((ix.wrapping_add(ib - 1) / ib).wrapping_mul(ib)));
        }
        #[allow(clippy::cast_precision_loss)]
        let ibf = ib as f64;
        return Ok(Value::Real((rx / ibf).ceil() * ibf));
    }
    if (-1e-8..=1e-8).contains(&rbase) {
        return Ok(x);
    }
    Ok(Value::Real((rx / rbase).ceil() * rbase))
}

pub(super) fn random(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    let limit = match a.len() {
        0 => Value::Real(1.0),
        1 => a.eval(ev, 0)?,
        _ => return Ok(Value::Error),
    };
    match limit {
        Value::Int(n) => {
            // HTCondor takes the limit as a C int; zero is a failure.
            #[allow(clippy::cast_possible_truncation)]
            let n = n as i32;
            if n == 0 {
                return Err(Fail);
            }
            let r = i64::from(ev.env.random_u31()) % i64::from(n);
            Ok(Value::Int(r))
        }
        Value::Real(x) => {
            let r = f64::from(ev.env.random_u31()) / f64::from(i32::MAX);
            Ok(Value::Real(x * r))
        }
        _ => Ok(Value::Error),
    }
}
