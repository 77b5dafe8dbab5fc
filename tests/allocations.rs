//! Allocations per ClassAd operation, counted by an instrumented global
//! allocator. Counts are deterministic (unlike times), so they are checked
//! here; `docs/performance.md` records them. This is a test binary of its
//! own without the test harness: it counts on the main thread, with no
//! other thread that could allocate while it counts.

use std::alloc::System;

use roost::classad::matchmaking::{rank, requirements_met};
use roost::classad::{Evaluator, FixedEnv, Name, parse_ad, parse_expr};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const POLICY: &str = include_str!("../benches/data/policy.txt");
const MACHINE: &str = include_str!("../benches/data/machine.ad");
const JOB: &str = include_str!("../benches/data/job.ad");

/// Allocations made by `f`, per call, over `n` calls.
fn allocations_per_call(n: usize, mut f: impl FnMut()) -> f64 {
    let region = Region::new(GLOBAL);
    for _ in 0..n {
        f();
    }
    #[allow(clippy::cast_precision_loss)]
    let per = region.change().allocations as f64 / n as f64;
    per
}

fn main() {
    allocations_per_operation();
    println!("allocations: ok");
}

fn allocations_per_operation() {
    let machine = parse_ad(MACHINE).expect("machine ad parses");
    let job = parse_ad(JOB).expect("job ad parses");
    let env = FixedEnv::new(1_700_000_000);
    let (start, requirements, rank_name) = (
        Name::new("START"),
        Name::new("Requirements"),
        Name::new("Rank"),
    );
    let policy = POLICY.trim_end();

    let mut pair = || {
        let s = Evaluator::new(Some(&machine), Some(&job), &env).eval_attr(&start);
        let mut ev = Evaluator::new(Some(&job), Some(&machine), &env);
        let r = ev.eval_attr(&requirements);
        let k = ev.eval_attr(&rank_name);
        std::hint::black_box((s, r, k));
    };
    let mut matchmaking = || {
        let m = requirements_met(&job, &machine, &env) && requirements_met(&machine, &job, &env);
        std::hint::black_box((m, rank(&job, &machine, &env)));
    };
    let mut parse = || {
        std::hint::black_box(parse_expr(policy).is_ok());
    };
    // Warm up: the first calls intern names and build shared tables.
    pair();
    matchmaking();
    parse();

    let eval = allocations_per_call(1000, &mut pair);
    let mm = allocations_per_call(1000, &mut matchmaking);
    let parsed = allocations_per_call(1000, &mut parse);
    eprintln!("allocations: pair evaluation {eval}, matchmaking pair {mm}, policy parse {parsed}");

    assert!(eval == 0.0, "evaluating a pair allocated {eval} times");
    assert!(mm == 0.0, "matchmaking a pair allocated {mm} times");
    // One allocation per tree node that owns children, plus the parser's
    // own: a regression here shows as a higher count.
    assert!(
        parsed <= 16.0,
        "parsing the policy allocated {parsed} times"
    );
}
