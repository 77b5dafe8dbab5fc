//! Operator semantics on values, as HTCondor's ClassAd library defines them.
//!
//! Strict operators return `error` if either operand is `error`, else
//! `undefined` if either is `undefined`. Booleans take part in arithmetic
//! and comparison as 0 and 1. Integer arithmetic wraps; integer division by
//! zero is `error`; `MIN / -1` is `MAX` and `MIN % -1` is 0. Real `%` is
//! `error`, and a real result of `+inf` is `error`. String comparison with
//! `==` and `<` ignores case; `=?=` (`is`) compares case and type exactly.
//! The logical operators, `?:` and `=?=` are not strict and are evaluated in
//! [`super::eval`], which short-circuits them.

use std::cmp::Ordering;

use super::ast::{BinOp, UnOp};
use super::value::{AbsTime, Value};

/// Applies a unary operator.
pub fn unary(op: UnOp, v: &Value) -> Value {
    match op {
        UnOp::Plus => match v {
            Value::Bool(_) | Value::Str(_) | Value::List(_) | Value::Ad(_) | Value::AbsTime(_) => {
                Value::Error
            }
            other => other.clone(),
        },
        UnOp::Neg => match v {
            Value::Int(i) => Value::Int(i.wrapping_neg()),
            Value::Real(r) => Value::Real(-r),
            Value::RelTime(t) => Value::RelTime(-t),
            Value::Undefined => Value::Undefined,
            _ => Value::Error,
        },
        UnOp::Not => match v.as_bool_equiv() {
            Some(b) => Value::Bool(!b),
            None if v.is_undefined() => Value::Undefined,
            None => Value::Error,
        },
        UnOp::BitNot => match v {
            Value::Int(i) => Value::Int(!i),
            Value::Undefined => Value::Undefined,
            _ => Value::Error,
        },
    }
}

/// Applies a strict binary operator (anything but `&&`, `||`, `=?=`, `=!=`).
pub fn binary(op: BinOp, a: &Value, b: &Value) -> Value {
    match op {
        BinOp::Is => {
            return match meta_equal(a, b) {
                Some(eq) => Value::Bool(eq),
                None => Value::Error,
            };
        }
        BinOp::Isnt => {
            return match meta_equal(a, b) {
                Some(eq) => Value::Bool(!eq),
                None => Value::Error,
            };
        }
        _ => {}
    }
    if a.is_error() || b.is_error() {
        return Value::Error;
    }
    if a.is_undefined() || b.is_undefined() {
        return Value::Undefined;
    }
    match op {
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => compare(op, a, b),
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => arithmetic(op, a, b),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr | BinOp::Ushr => {
            bitwise(op, a, b)
        }
        BinOp::And | BinOp::Or | BinOp::Is | BinOp::Isnt => Value::Error,
    }
}

/// The common cases of [`binary`] (integers and reals compared or added),
/// inlined into the evaluator; `None` for everything else.
#[inline]
#[allow(clippy::cast_precision_loss)]
pub(crate) fn binary_fast(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    let (x, y) = match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            return Some(match op {
                BinOp::Lt => Value::Bool(x < y),
                BinOp::Le => Value::Bool(x <= y),
                BinOp::Gt => Value::Bool(x > y),
                BinOp::Ge => Value::Bool(x >= y),
                BinOp::Eq => Value::Bool(x == y),
                BinOp::Ne => Value::Bool(x != y),
                BinOp::Add => Value::Int(x.wrapping_add(*y)),
                BinOp::Sub => Value::Int(x.wrapping_sub(*y)),
                BinOp::Mul => Value::Int(x.wrapping_mul(*y)),
                _ => return None,
            });
        }
        (Value::Real(x), Value::Real(y)) => (*x, *y),
        (Value::Int(x), Value::Real(y)) => (*x as f64, *y),
        (Value::Real(x), Value::Int(y)) => (*x, *y as f64),
        _ => return None,
    };
    // Comparisons only: real arithmetic has its own rules for infinities.
    Some(Value::Bool(match op {
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        BinOp::Ge => x >= y,
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        _ => return None,
    }))
}

/// `=?=`: `Some(true)` when both have the same type and value, `None` when
/// the comparison is an error (lists and ads cannot be compared).
pub fn meta_equal(a: &Value, b: &Value) -> Option<bool> {
    Some(match (a, b) {
        (Value::Undefined, Value::Undefined) | (Value::Error, Value::Error) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Real(x), Value::Real(y)) => x == y,
        (Value::RelTime(x), Value::RelTime(y)) => x == y,
        (Value::AbsTime(x), Value::AbsTime(y)) => x.secs == y.secs && x.offset == y.offset,
        (Value::Str(x), Value::Str(y)) => x.as_bytes() == y.as_bytes(),
        (Value::List(_), Value::List(_)) | (Value::Ad(_), Value::Ad(_)) => return None,
        _ => false,
    })
}

/// Numeric view of a value for comparison and arithmetic (booleans as 0/1).
enum Num {
    I(i64),
    R(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Real(r) => Some(Num::R(*r)),
        Value::Bool(b) => Some(Num::I(i64::from(*b))),
        _ => None,
    }
}

#[allow(clippy::cast_precision_loss)]
fn to_real(n: &Num) -> f64 {
    match n {
        Num::I(i) => *i as f64,
        Num::R(r) => *r,
    }
}

fn cmp_result(op: BinOp, ord: Option<Ordering>) -> Value {
    let r = match ord {
        None => op == BinOp::Ne,
        Some(o) => match op {
            BinOp::Lt => o == Ordering::Less,
            BinOp::Le => o != Ordering::Greater,
            BinOp::Gt => o == Ordering::Greater,
            BinOp::Ge => o != Ordering::Less,
            BinOp::Eq => o == Ordering::Equal,
            BinOp::Ne => o != Ordering::Equal,
            _ => false,
        },
    };
    Value::Bool(r)
}

/// Case-insensitive byte comparison (C's `strcasecmp`).
pub fn cmp_ignore_case(a: &[u8], b: &[u8]) -> Ordering {
    let la = a.iter().map(u8::to_ascii_lowercase);
    let lb = b.iter().map(u8::to_ascii_lowercase);
    la.cmp(lb)
}

fn compare(op: BinOp, a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Ad(_), _) | (_, Value::Ad(_)) | (Value::List(_), _) | (_, Value::List(_)) => {
            Value::Error
        }
        (Value::Str(x), Value::Str(y)) => {
            cmp_result(op, Some(cmp_ignore_case(x.as_bytes(), y.as_bytes())))
        }
        (Value::Str(_), _) | (_, Value::Str(_)) => Value::Error,
        (Value::AbsTime(x), Value::AbsTime(y)) => cmp_result(op, Some(x.secs.cmp(&y.secs))),
        (Value::AbsTime(_), _) | (_, Value::AbsTime(_)) => Value::Error,
        (Value::RelTime(x), Value::RelTime(y)) => cmp_result(op, x.partial_cmp(y)),
        (Value::RelTime(_), _) | (_, Value::RelTime(_)) => Value::Error,
        _ => match (num(a), num(b)) {
            (Some(Num::I(x)), Some(Num::I(y))) => cmp_result(op, Some(x.cmp(&y))),
            (Some(x), Some(y)) => cmp_result(op, to_real(&x).partial_cmp(&to_real(&y))),
            _ => Value::Error,
        },
    }
}

fn real_result(r: f64) -> Value {
    if r == f64::INFINITY {
        Value::Error
    } else {
        Value::Real(r)
    }
}

fn arithmetic(op: BinOp, a: &Value, b: &Value) -> Value {
    let is_arith = |v: &Value| {
        matches!(
            v,
            Value::Int(_) | Value::Real(_) | Value::Bool(_) | Value::AbsTime(_) | Value::RelTime(_)
        )
    };
    if !is_arith(a) || !is_arith(b) {
        return Value::Error;
    }
    if matches!(a, Value::AbsTime(_) | Value::RelTime(_))
        || matches!(b, Value::AbsTime(_) | Value::RelTime(_))
    {
        return time_arithmetic(op, a, b);
    }
    match (num(a), num(b)) {
        (Some(Num::I(x)), Some(Num::I(y))) => match op {
            BinOp::Add => Value::Int(x.wrapping_add(y)),
            BinOp::Sub => Value::Int(x.wrapping_sub(y)),
            BinOp::Mul => Value::Int(x.wrapping_mul(y)),
            BinOp::Div => {
                if x == i64::MIN && y == -1 {
                    Value::Int(i64::MAX)
                } else if y == 0 {
                    Value::Error
                } else {
                    Value::Int(x / y)
                }
            }
            BinOp::Mod => {
                if x == i64::MIN && y == -1 {
                    Value::Int(0)
                } else if y == 0 {
                    Value::Error
                } else {
                    Value::Int(x % y)
                }
            }
            _ => Value::Error,
        },
        (Some(x), Some(y)) => {
            let (x, y) = (to_real(&x), to_real(&y));
            match op {
                BinOp::Add => real_result(x + y),
                BinOp::Sub => real_result(x - y),
                BinOp::Mul => real_result(x * y),
                BinOp::Div => real_result(x / y),
                _ => Value::Error,
            }
        }
        _ => Value::Error,
    }
}

/// C's `(int)` of a relative time, as HTCondor adds it to an absolute time.
fn int_secs(t: f64) -> i64 {
    super::timefmt::c_int(t)
}

fn time_arithmetic(op: BinOp, a: &Value, b: &Value) -> Value {
    match (op, a, b) {
        (BinOp::Add, Value::AbsTime(t), Value::RelTime(r))
        | (BinOp::Add, Value::RelTime(r), Value::AbsTime(t)) => Value::AbsTime(AbsTime {
            secs: t.secs.wrapping_add(int_secs(*r)),
            offset: t.offset,
        }),
        (BinOp::Add, Value::RelTime(x), Value::RelTime(y)) => Value::RelTime(x + y),
        (BinOp::Sub, Value::AbsTime(x), Value::AbsTime(y)) => {
            #[allow(clippy::cast_precision_loss)]
            let d = x.secs.wrapping_sub(y.secs) as f64;
            Value::RelTime(d)
        }
        (BinOp::Sub, Value::AbsTime(t), Value::RelTime(r)) => Value::AbsTime(AbsTime {
            secs: t.secs.wrapping_sub(int_secs(*r)),
            offset: t.offset,
        }),
        (BinOp::Sub, Value::RelTime(x), Value::RelTime(y)) => Value::RelTime(x - y),
        (BinOp::Mul, Value::RelTime(t), Value::Int(n))
        | (BinOp::Mul, Value::Int(n), Value::RelTime(t)) => {
            #[allow(clippy::cast_precision_loss)]
            let n = *n as f64;
            Value::RelTime(t * n)
        }
        (BinOp::Mul, Value::RelTime(t), Value::Real(n))
        | (BinOp::Mul, Value::Real(n), Value::RelTime(t)) => Value::RelTime(t * n),
        (BinOp::Div, Value::RelTime(t), Value::Int(n)) => {
            #[allow(clippy::cast_precision_loss)]
            let n = *n as f64;
            Value::RelTime(t / n)
        }
        (BinOp::Div, Value::RelTime(t), Value::Real(n)) => Value::RelTime(t / n),
        _ => Value::Error,
    }
}

fn bitwise(op: BinOp, a: &Value, b: &Value) -> Value {
    let (Value::Int(x), Value::Int(y)) = (a, b) else {
        return Value::Error;
    };
    let (x, y) = (*x, *y);
    Value::Int(match op {
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        BinOp::Shl => x.wrapping_shl(shift_amount(y)),
        BinOp::Shr => {
            if x >= 0 {
                x.wrapping_shr(shift_amount(y))
            } else if y <= 0 {
                x
            } else {
                // Arithmetic shift, one bit at a time as HTCondor does.
                x >> y.min(63)
            }
        }
        BinOp::Ushr => {
            if x >= 0 {
                x.wrapping_shr(shift_amount(y))
            } else {
                let v = (x >> 1) & i64::MAX;
                v.wrapping_shr(shift_amount(y.wrapping_sub(1)))
            }
        }
        _ => return Value::Error,
    })
}

/// The shift count the hardware uses for a 64-bit shift (low six bits).
fn shift_amount(y: i64) -> u32 {
    u32::try_from(y & 63).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_corner_cases() {
        assert!(binary(BinOp::Div, &Value::Int(1), &Value::Int(0)).is_error());
        assert!(matches!(
            binary(BinOp::Div, &Value::Int(i64::MIN), &Value::Int(-1)),
            Value::Int(i64::MAX)
        ));
        assert!(matches!(
            binary(BinOp::Add, &Value::Int(i64::MAX), &Value::Int(1)),
            Value::Int(i64::MIN)
        ));
        assert!(matches!(
            binary(BinOp::Mod, &Value::Int(-7), &Value::Int(2)),
            Value::Int(-1)
        ));
    }

    #[test]
    fn strict_operators_prefer_error() {
        assert!(binary(BinOp::Add, &Value::Undefined, &Value::Error).is_error());
        assert!(binary(BinOp::Lt, &Value::Undefined, &Value::Int(1)).is_undefined());
    }

    #[test]
    fn strings_compare_without_case_but_is_is_exact() {
        let a = Value::from("ABC");
        let b = Value::from("abc");
        assert!(matches!(binary(BinOp::Eq, &a, &b), Value::Bool(true)));
        assert!(matches!(binary(BinOp::Is, &a, &b), Value::Bool(false)));
        assert!(matches!(
            binary(BinOp::Is, &Value::Int(1), &Value::Real(1.0)),
            Value::Bool(false)
        ));
        assert!(matches!(
            binary(BinOp::Eq, &Value::Bool(true), &Value::Int(1)),
            Value::Bool(true)
        ));
    }
}
