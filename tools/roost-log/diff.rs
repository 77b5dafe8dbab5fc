//! `roost-log diff`: the fields that differ between two replayed states,
//! one line each, as `path: before -> after` (or as JSON objects).

use roost::startd::Replay;
use serde_json::Value;

/// One field that differs.
#[derive(Debug, serde::Serialize)]
pub struct Change {
    /// Where, `slots.slot1.claim.id`.
    pub path: String,
    /// Its value at the first point (`None`: it did not exist).
    pub before: Option<Value>,
    /// Its value at the second point (`None`: it no longer exists).
    pub after: Option<Value>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = |v: &Value| match v {
            Value::Object(_) => "{…}".to_string(),
            other => show(other),
        };
        match (&self.before, &self.after) {
            (Some(a), None) => write!(f, "{}: gone (was {})", self.path, show(a)),
            (None, Some(b)) => write!(f, "{}: new: {}", self.path, show(b)),
            (Some(a), Some(b)) => write!(f, "{}: {} -> {}", self.path, short(a), short(b)),
            (None, None) => write!(f, "{}: unchanged", self.path),
        }
    }
}

/// The differences from `a` to `b` (the node's drain or shutdown, slots,
/// starters, hooks; not the position in the log itself).
pub fn changes(a: &Replay, b: &Replay) -> Vec<Change> {
    let view = |r: &Replay| {
        serde_json::json!({
            "node": r.node,
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

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<Change>) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    let change = |path: String, before: Option<&Value>, after: Option<&Value>| Change {
        path,
        before: before.cloned(),
        after: after.cloned(),
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                match y.get(k) {
                    Some(vb) => walk(&join(k), va, vb, out),
                    None => out.push(change(join(k), Some(va), None)),
                }
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    out.push(change(join(k), None, Some(vb)));
                }
            }
        }
        (x, y) if x == y => {}
        (x, y) => out.push(change(path.to_string(), Some(x), Some(y))),
    }
}
