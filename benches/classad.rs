//! ClassAd speed: parsing a policy expression, evaluating a job/machine
//! pair, and matchmaking. Results and the HTCondor comparison are in
//! `docs/performance.md`; `tools/bench_classad.sh` runs both sides on the
//! inputs in `benches/data/`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roost::classad::matchmaking::{rank, requirements_met};
use roost::classad::{ClassAd, Evaluator, FixedEnv, Name, parse_ad, parse_expr};

/// The allocator the `roost` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A 100-character START policy.
const POLICY: &str = include_str!("data/policy.txt");

/// A typical execute-node slot ad.
const MACHINE: &str = include_str!("data/machine.ad");

/// A typical job ad.
const JOB: &str = include_str!("data/job.ad");

fn bench_parse(c: &mut Criterion) {
    let policy = POLICY.trim_end();
    assert_eq!(policy.len(), 100);
    c.bench_function("parse 100-char policy expression", |b| {
        b.iter(|| parse_expr(black_box(policy)).map(drop))
    });
    // What every call costs whatever its text: building the parser, the
    // lexer's buffers, the checks.
    c.bench_function("parse the expression 1 (the cost of a call)", |b| {
        b.iter(|| parse_expr(black_box("1")).map(drop))
    });
    c.bench_function("parse machine ad (29 attributes)", |b| {
        b.iter(|| parse_ad(black_box(MACHINE)).map(drop))
    });
}

fn bench_eval(c: &mut Criterion) {
    let machine: ClassAd = parse_ad(MACHINE).expect("machine ad parses");
    let job: ClassAd = parse_ad(JOB).expect("job ad parses");
    let env = FixedEnv::new(1_700_000_000);
    let start = Name::new("START");
    let requirements = Name::new("Requirements");
    let rank_name = Name::new("Rank");
    c.bench_function(
        "evaluate pair (machine START, job Requirements, job Rank)",
        |b| {
            b.iter(|| {
                let s = Evaluator::new(Some(&machine), Some(&job), &env).eval_attr(&start);
                let mut ev = Evaluator::new(Some(&job), Some(&machine), &env);
                let r = ev.eval_attr(&requirements);
                let k = ev.eval_attr(&rank_name);
                black_box((s, r, k))
            })
        },
    );
    c.bench_function("matchmaking pair (symmetric match + rank)", |b| {
        b.iter(|| {
            let m =
                requirements_met(&job, &machine, &env) && requirements_met(&machine, &job, &env);
            black_box((m, rank(&job, &machine, &env)))
        })
    });
}

/// The attribute list of a new-syntax ad, without its brackets.
fn body(ad: &str) -> &str {
    let t = ad.trim();
    t.strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(t)
        .trim()
        .trim_end_matches(';')
}

/// The formulation `tools/bench_htcondor_classad.py` times HTCondor with:
/// `evalInEachContext` over pair ads, each side with the other as its
/// `TARGET` attribute, for a batch that fits in the CPU caches (200 pairs)
/// and one that does not (20,000). Criterion reports the time per batch.
fn bench_each_context(c: &mut Criterion) {
    let env = FixedEnv::new(1_700_000_000);
    let exprs: Vec<_> = [
        "evalInEachContext(START, M)",
        "evalInEachContext(Requirements, J)",
        "evalInEachContext(Rank, J)",
    ]
    .iter()
    .map(|e| parse_expr(e).expect("expression parses"))
    .collect();
    let mpair = format!("[{}; TARGET = {}]", body(MACHINE), JOB.trim());
    let jpair = format!("[{}; TARGET = {}]", body(JOB), MACHINE.trim());
    let limits = roost::classad::Limits {
        max_text_bytes: usize::MAX,
        ..Default::default()
    };
    let mut group = c.benchmark_group("evalInEachContext over pair ads");
    group.sample_size(20);
    for pairs in [200usize, 20_000] {
        let text = format!(
            "[ M = {{{}}}; J = {{{}}} ]",
            vec![mpair.as_str(); pairs].join(","),
            vec![jpair.as_str(); pairs].join(",")
        );
        let ctx = roost::classad::parse_ad_with(text.as_bytes(), &limits).expect("pair ads parse");
        group.bench_function(format!("{pairs} pairs"), |b| {
            b.iter(|| {
                for e in &exprs {
                    black_box(ctx.eval(e, &env));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_parse, bench_eval, bench_each_context);
criterion_main!(benches);
