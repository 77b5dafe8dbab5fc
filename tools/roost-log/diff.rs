//! `roost-log diff`: the fields that differ between two replayed states,
//! one line each, as `path: before -> after`.

use roost::events::Replay;
use serde_json::Value;

/// The differences from `a` to `b` (slots, starters, hooks; not the
/// position in the log itself).
pub fn changes(a: &Replay, b: &Replay) -> Vec<String> {
    let view = |r: &Replay| {
        serde_json::json!({
            "slots": r.slots,
            "starters": r.starters,
            "hooks": r.hooks,
        })
    };
    let mut out = Vec::new();
    walk("", &view(a), &view(b), &mut out);
    out
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) if s.chars().count() > 80 => {
            format!("{:?}…", s.chars().take(80).collect::<String>())
        }
        other => other.to_string(),
    }
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                match y.get(k) {
                    Some(vb) => walk(&join(k), va, vb, out),
                    None => out.push(format!("{}: gone (was {})", join(k), show(va))),
                }
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    out.push(format!("{}: new: {}", join(k), show(vb)));
                }
            }
        }
        (x, y) if x == y => {}
        (Value::Object(_), y) => out.push(format!("{path}: {{…}} -> {}", show(y))),
        (x, Value::Object(_)) => out.push(format!("{path}: {} -> {{…}}", show(x))),
        (x, y) => out.push(format!("{path}: {} -> {}", show(x), show(y))),
    }
}
