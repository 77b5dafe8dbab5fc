//! `unresolved(attr[, pattern])` (also `MY.attr`, `TARGET.attr`): the
//! references of an attribute's expression that nothing defines, followed
//! through the attributes that are defined, as HTCondor's library lists
//! them.
//!
//! The walk looks at every reference in the expression (both branches of
//! a condition, every list element and argument), without evaluating the
//! expression itself:
//! - a bare name is looked up from its own scope outwards (never in
//!   TARGET); when found, its expression is walked in turn, else the name
//!   is listed;
//! - `scope.name` evaluates `scope`: an ad is searched for `name` as above;
//!   an undefined scope lists the whole reference (`c.d`, `Other.x`; a
//!   `TARGET.` in front is dropped from what is shown, not from the sort
//!   order); anything else (`b.x` with `b = 1`) makes the function fail;
//! - `.name` is looked up at the root; an ad literal's attributes are
//!   walked in the literal's scope;
//! - referring back to an attribute being walked (`a = a + x`) fails.
//!
//! The names are listed once each (compared without regard to case, the
//! first spelling kept), sorted without regard to case, joined by commas.
//! With a pattern, the result is whether any shown name matches it, case
//! ignored; an empty pattern matches nothing.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::super::ad::ClassAd;
use super::super::ast::Expr;
use super::super::eval::{Env, Evaluator, Fail, Found, R};
use super::super::name::Name;
use super::super::unparse::expr_to_string;
use super::super::value::{AdValue, Frame, Side, Value};
use super::Args;

/// How many references one call may follow before it gives up (fails).
const MAX_VISITS: u32 = 100_000;

/// What one call has collected.
struct Walk {
    /// Sort key (lower case) → the name as shown.
    names: BTreeMap<Vec<u8>, String>,
    /// The attributes being walked, innermost last.
    path: Vec<(usize, usize)>,
    /// Attributes walked already (their names are in `names`).
    done: HashSet<(usize, usize)>,
    visits: u32,
}

impl Walk {
    fn add(&mut self, key: &str, shown: &str) {
        self.names
            .entry(key.to_ascii_lowercase().into_bytes())
            .or_insert_with(|| shown.to_string());
    }
}

pub(super) fn unresolved(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 1 && a.len() != 2 {
        return Ok(Value::Error);
    }
    let found = match &a.exprs[0] {
        Expr::Attr(attr) => ev.lookup(attr, a.frame, false)?,
        Expr::Select(base, attr) => match ev.eval(base, a.frame)? {
            Value::Ad(AdValue(f)) => ev.lookup(attr, &f, false)?,
            _ => Found::Undefined,
        },
        _ => return Ok(Value::Error),
    };
    let Found::Entry(frame, index) = found else {
        return Ok(Value::Undefined);
    };
    let names = names(ev, &frame, index).unwrap_or_default();
    if a.len() == 1 {
        return Ok(Value::string(names.join(",")));
    }
    let Value::Str(p) = a.eval(ev, 1)? else {
        return Err(Fail);
    };
    if p.as_bytes().is_empty() {
        return Ok(Value::Bool(false));
    }
    let Some(re) = super::regex::compile(p.as_bytes(), "i", super::regex::Letters::Lower) else {
        return Ok(Value::Error);
    };
    Ok(Value::Bool(
        names
            .iter()
            .any(|n| re.is_match(n.as_bytes()).unwrap_or(false)),
    ))
}

/// The names listed for entry `index` of the frame's ad, in order; `None`
/// when the walk fails.
fn names(ev: &mut Evaluator<'_>, frame: &Frame, index: usize) -> Option<Vec<String>> {
    let mut walk = Walk {
        names: BTreeMap::new(),
        path: Vec::new(),
        done: HashSet::new(),
        visits: 0,
    };
    entry(ev, frame, index, &mut walk).ok()?;
    Some(walk.names.into_values().collect())
}

impl ClassAd {
    /// What `unresolved(name)` lists for this ad's attribute `name`
    /// evaluated on its own: `None` when the ad has no such attribute or
    /// the walk fails (where the function gives `""`), so that a caller can
    /// tell "refers to nothing outside the ad" from "cannot tell".
    pub fn unresolved_names(&self, name: &str, env: &dyn Env) -> Option<Vec<String>> {
        let index = self.index_of(&Name::new(name))?;
        let mut ev = Evaluator::new(Some(self), None, env);
        names(&mut ev, &Frame::Top(Side::Left), index)
    }
}

/// Identifies a frame for the cycle check (nested ads by their allocation).
fn frame_key(f: &Frame) -> usize {
    match f {
        Frame::Empty => 0,
        Frame::Top(side) => 1 + *side as usize,
        Frame::Ctx(side) => 3 + *side as usize,
        Frame::Match => 5,
        Frame::Nested(n) => Arc::as_ptr(n) as usize,
    }
}

/// Walks entry `index` of the frame's ad.
fn entry(ev: &mut Evaluator<'_>, frame: &Frame, index: usize, walk: &mut Walk) -> R<()> {
    let at = (frame_key(frame), index);
    if walk.path.contains(&at) {
        return Err(Fail);
    }
    if walk.done.contains(&at) {
        return Ok(());
    }
    let Some(expr) = ev
        .frame_ad(frame)
        .and_then(|ad| ad.entry(index))
        .map(|(_, e)| e.clone())
    else {
        return Ok(());
    };
    walk.path.push(at);
    let r = refs(ev, frame, &expr, walk);
    walk.path.pop();
    walk.done.insert(at);
    r
}

/// Walks what `name` finds from `frame` (listing it when nothing).
fn found(ev: &mut Evaluator<'_>, name: &Name, frame: &Frame, walk: &mut Walk) -> R<()> {
    match ev.lookup(name, frame, false)? {
        Found::Entry(f, i) => entry(ev, &f, i, walk),
        Found::Value(_) => Ok(()),
        Found::Undefined => {
            walk.add(name.as_str(), name.as_str());
            Ok(())
        }
    }
}

fn refs(ev: &mut Evaluator<'_>, frame: &Frame, e: &Expr, walk: &mut Walk) -> R<()> {
    walk.visits += 1;
    if walk.visits > MAX_VISITS {
        return Err(Fail);
    }
    match e {
        Expr::Attr(n) => found(ev, n, frame, walk),
        Expr::AbsAttr(n) => match ev.root() {
            Some(root) => found(ev, n, &root, walk),
            None => {
                walk.add(n.as_str(), n.as_str());
                Ok(())
            }
        },
        Expr::Select(base, n) => match ev.eval(base, frame)? {
            Value::Ad(AdValue(f)) => found(ev, n, &f, walk),
            Value::Undefined => {
                let full = expr_to_string(e);
                let shown = match full.get(..7) {
                    Some(p) if p.eq_ignore_ascii_case("target.") => &full[7..],
                    _ => &full,
                };
                walk.add(&full, shown);
                Ok(())
            }
            _ => Err(Fail),
        },
        Expr::Ad(_) => match ev.eval(e, frame)? {
            Value::Ad(AdValue(f)) => {
                let n = ev.frame_ad(&f).map_or(0, |ad| ad.len());
                (0..n).try_for_each(|i| entry(ev, &f, i, walk))
            }
            _ => Ok(()),
        },
        Expr::Unary(_, x) | Expr::Paren(x) => refs(ev, frame, x, walk),
        Expr::Elvis(l, r) | Expr::Index(l, r) => {
            refs(ev, frame, l, walk)?;
            refs(ev, frame, r, walk)
        }
        Expr::Binary(b) => {
            refs(ev, frame, &b.lhs, walk)?;
            refs(ev, frame, &b.rhs, walk)
        }
        Expr::Cond(c, x, y) => [c, x, y]
            .into_iter()
            .try_for_each(|s| refs(ev, frame, s, walk)),
        Expr::Call(c) => c.args.iter().try_for_each(|x| refs(ev, frame, x, walk)),
        Expr::List(items) => items.iter().try_for_each(|x| refs(ev, frame, x, walk)),
        Expr::Lit(_) | Expr::RelTimeLit(_) | Expr::AbsTimeLit(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::classad::{FixedEnv, parse_ad};

    fn names(ad: &str) -> Option<Vec<String>> {
        let ad = parse_ad(ad).expect("ad");
        ad.unresolved_names("Rank", &FixedEnv::new(0))
    }

    #[test]
    fn a_failed_walk_is_told_apart_from_no_names() {
        assert_eq!(names("[Rank = 10 * Mips; Mips = 5]"), Some(vec![]));
        assert_eq!(
            names("[Rank = TARGET.Prio + Owner; Mips = 5]"),
            Some(vec!["Owner".to_string(), "Prio".to_string()])
        );
        // A cycle, and a scope that is not an ad: unresolved() gives "".
        assert_eq!(names("[Rank = x + Rank]"), None);
        assert_eq!(names("[Rank = Mips.x + TARGET.Prio; Mips = 5]"), None);
        assert_eq!(names("[Other = 1]"), None);
    }
}
