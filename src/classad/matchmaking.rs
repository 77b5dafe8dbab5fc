//! Matchmaking: the symmetric match and `Rank`.
//!
//! Two ads match when each one's `Requirements` is true with the other as
//! TARGET (HTCondor evaluates `RIGHT.requirements && LEFT.requirements`; a
//! requirement that is an integer counts as true when non-zero, anything
//! else as false). `Rank` is evaluated in an ad with the other as TARGET; a
//! non-numeric rank is 0.0.

use std::sync::LazyLock;

use super::ad::ClassAd;
use super::eval::{Env, Evaluator};
use super::name::Name;
use super::value::Value;

static REQUIREMENTS: LazyLock<Name> = LazyLock::new(|| Name::new("Requirements"));
static RANK: LazyLock<Name> = LazyLock::new(|| Name::new("Rank"));

fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        _ => false,
    }
}

/// Whether `left`'s and `right`'s requirements are both satisfied.
pub fn symmetric_match(left: &ClassAd, right: &ClassAd, env: &dyn Env) -> bool {
    let mut ev = Evaluator::new(Some(left), Some(right), env);
    if !truthy(&ev.eval_target_attr(&REQUIREMENTS)) {
        return false;
    }
    truthy(&ev.eval_attr(&REQUIREMENTS))
}

/// Whether `ad`'s requirements are satisfied with `target` as TARGET.
pub fn requirements_met(ad: &ClassAd, target: &ClassAd, env: &dyn Env) -> bool {
    truthy(&Evaluator::new(Some(ad), Some(target), env).eval_attr(&REQUIREMENTS))
}

/// `ad`'s `Rank` of `target` (0.0 if it is not a number).
pub fn rank(ad: &ClassAd, target: &ClassAd, env: &dyn Env) -> f64 {
    match Evaluator::new(Some(ad), Some(target), env).eval_attr(&RANK) {
        #[allow(clippy::cast_precision_loss)]
        Value::Int(i) => i as f64,
        Value::Real(r) => r,
        Value::Bool(b) => f64::from(u8::from(b)),
        _ => 0.0,
    }
}

/// The result of matching one job against machines.
#[derive(Clone, Debug, PartialEq)]
pub struct JobMatch {
    /// How many machines matched.
    pub matches: usize,
    /// Index of the best-ranked matching machine (the first on ties).
    pub best: Option<usize>,
    /// Its rank.
    pub best_rank: f64,
}

/// Matches `job` against every machine: symmetric match, then the job's
/// `Rank` of each match.
pub fn match_job(job: &ClassAd, machines: &[ClassAd], env: &dyn Env) -> JobMatch {
    let mut out = JobMatch {
        matches: 0,
        best: None,
        best_rank: 0.0,
    };
    for (i, m) in machines.iter().enumerate() {
        if !symmetric_match(job, m, env) {
            continue;
        }
        out.matches += 1;
        let r = rank(job, m, env);
        if out.best.is_none() || r > out.best_rank {
            out.best = Some(i);
            out.best_rank = r;
        }
    }
    out
}
