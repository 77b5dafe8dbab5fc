//! Environment and argument functions: `envV1ToV2`, `mergeEnvironment`,
//! `listToArgs`, `argsToList`, and the account functions `userHome` and
//! `userMap`.

use super::super::argenv::{EnvList, join_v1, join_v2, split_v1, split_v2};
use super::super::eval::{Evaluator, R};
use super::super::value::{ListValue, Value};
use super::Args;

pub(super) fn env_v1_to_v2(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 {
        return Ok(Value::Error);
    }
    Ok(match a.eval(ev, 0)? {
        Value::Undefined => Value::Undefined,
        Value::Str(s) => {
            let mut env = EnvList::new();
            match env.merge_v1(&s.to_string_lossy()) {
                Ok(()) => Value::string(env.to_v2()),
                Err(_) => Value::Error,
            }
        }
        _ => Value::Error,
    })
}

pub(super) fn merge_environment(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    let mut env = EnvList::new();
    for i in 0..a.len() {
        match a.eval(ev, i)? {
            Value::Undefined => {}
            Value::Str(s) => {
                if env.merge_v2(&s.to_string_lossy()).is_err() {
                    return Ok(Value::Error);
                }
            }
            _ => return Ok(Value::Error),
        }
    }
    Ok(Value::string(env.to_v2()))
}

/// The optional syntax-version argument (1 or 2, default 2).
fn version(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Option<i64>> {
    if a.len() != 2 {
        return Ok(Some(2));
    }
    Ok(match a.eval(ev, 1)? {
        Value::Int(v @ (1 | 2)) => Some(v),
        _ => None,
    })
}

pub(super) fn list_to_args(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let Some(vers) = version(ev, a)? else {
        return Ok(Value::Error);
    };
    let Value::List(list) = a.eval(ev, 0)? else {
        return Ok(Value::Error);
    };
    let mut items = Vec::with_capacity(list.len());
    for i in 0..list.len() {
        match ev.eval_item(&list, i)? {
            Value::Str(s) => items.push(s.to_string_lossy()),
            _ => return Ok(Value::Error),
        }
    }
    Ok(if vers == 1 {
        join_v1(&items).map_or(Value::Error, Value::string)
    } else {
        Value::string(join_v2(&items))
    })
}

pub(super) fn args_to_list(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let Some(vers) = version(ev, a)? else {
        return Ok(Value::Error);
    };
    let Value::Str(s) = a.eval(ev, 0)? else {
        return Ok(Value::Error);
    };
    let text = s.to_string_lossy();
    let items = if vers == 1 {
        split_v1(&text)
    } else {
        match split_v2(&text) {
            Ok(v) => v,
            Err(_) => return Ok(Value::Error),
        }
    };
    let values = items.into_iter().map(Value::string).collect();
    Ok(Value::List(ListValue::from_values(values)))
}

pub(super) fn user_home(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let name = a.eval(ev, 0)?;
    let default = if a.len() == 2 {
        match a.eval(ev, 1)? {
            Value::Str(s) if !s.is_empty() => Some(s),
            _ => None,
        }
    } else {
        None
    };
    let fallback = |otherwise: Value| default.clone().map_or(otherwise, Value::Str);
    Ok(match name {
        Value::Str(user) => match ev.env.user_home(&user.to_string_lossy()) {
            Some(home) => Value::string(home),
            None => fallback(Value::Undefined),
        },
        Value::Undefined => fallback(Value::Undefined),
        _ => fallback(Value::Error),
    })
}

pub(super) fn user_map(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if !(2..=4).contains(&a.len()) {
        return Ok(Value::Error);
    }
    let vals = a.eval_all(ev)?;
    if vals[0].is_error() || vals[1].is_error() {
        return Ok(Value::Error);
    }
    // No map files are configured for the ClassAd core: every name is
    // unmapped, which gives the default of the four-argument form.
    Ok(if a.len() == 4 {
        vals[3].clone()
    } else {
        Value::Undefined
    })
}
