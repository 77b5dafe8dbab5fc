//! Fuzzes the ClassAd parser, printer and evaluator with arbitrary bytes.
//!
//! For each input: parse it as an expression, an ad and a stream of ads in
//! both syntaxes; print what parsed and check that the printed text, and
//! the text printed from that, parse back to expressions with the same
//! value (HTCondor's printing is not a textual fixed point: `- 7` prints as
//! ` -7`, which reads back as the literal `-7`, one minus sign per round);
//! evaluate the expression alone, with an ad as MY, and in a match context. Any panic, stack overflow, timeout or memory
//! blow-up is a bug. Run with `cargo +nightly fuzz run parse_eval`
//! (see `docs/classad.md`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use roost::classad::old::{OldReader, parse_ads_auto};
use roost::classad::unparse::{
    OldOrder, ad_to_old, ad_to_string, expr_to_string, value_to_string,
};
use roost::classad::{
    ClassAd, Evaluator, Expr, FixedEnv, Limits, Syntax, Value, parse_ad_with, parse_expr_with,
};

/// Whether `text` holds a time HTCondor prints in a form that does not read
/// back, in HTCondor either: an absolute time before the year 1000 (its
/// year is unpadded: `absTime("19-12-31T...")`), or a relative time past
/// what a C int of seconds holds (its fields come out negative:
/// `relTime("-24855+-3:-14:-8")`).
fn has_unreadable_time(text: &str) -> bool {
    let abs = text.match_indices("absTime(\"").any(|(i, m)| {
        let rest = &text.as_bytes()[i + m.len()..];
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        rest.first() == Some(&b'-') || digits < 4
    });
    let rel = text.match_indices("relTime(\"").any(|(i, m)| {
        let rest = &text[i + m.len()..];
        let lit = rest.split('"').next().unwrap_or_default();
        lit.contains("+-") || lit.contains(":-") || lit.contains("--")
    });
    abs || rel
}

/// The value of `e` printed, with MY and TARGET as given, in a fresh
/// deterministic environment.
///
/// Lists and ads hold unevaluated expressions, whose text printing may
/// normalize (` - -2` reads back as ` --2`), so only their kind is kept.
fn value_of(e: &Expr, my: Option<&ClassAd>, target: Option<&ClassAd>) -> String {
    let env = FixedEnv::new(1_700_000_000);
    match Evaluator::new(my, target, &env).eval_expr(e) {
        Value::List(l) => format!("a list of {}", l.len()),
        Value::Ad(_) => "an ad".to_string(),
        v => value_to_string(&v),
    }
}

const SLOT: &str = "[ Memory = 4096; Cpus = 4; Arch = \"X86_64\"; START = TARGET.RequestMemory <= Memory; L = { 1, \"a\", [ x = 1 ] } ]";
const JOB: &str = "[ RequestMemory = 2048; Owner = \"alice\"; Requirements = TARGET.Memory >= RequestMemory; Rank = TARGET.Cpus ]";

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let env = FixedEnv::new(1_700_000_000);
    let slot = parse_ad_with(SLOT.as_bytes(), &limits).expect("slot ad parses");
    let job = parse_ad_with(JOB.as_bytes(), &limits).expect("job ad parses");

    for syntax in [Syntax::New, Syntax::Old] {
        if let Ok(e) = parse_expr_with(data, syntax, &limits) {
            let text = expr_to_string(&e);
            if has_unreadable_time(&text) {
                continue;
            }
            let again = parse_expr_with(text.as_bytes(), Syntax::New, &limits)
                .unwrap_or_else(|err| panic!("printed {text:?} does not parse: {err}"));
            let text2 = expr_to_string(&again);
            let third = parse_expr_with(text2.as_bytes(), Syntax::New, &limits)
                .unwrap_or_else(|err| panic!("printed {text2:?} does not parse: {err}"));
            for (my, target) in [(None, None), (Some(&slot), None), (Some(&slot), Some(&job))] {
                let want = value_of(&e, my, target);
                assert_eq!(want, value_of(&again, my, target), "{text:?} keeps its meaning");
                assert_eq!(want, value_of(&third, my, target), "{text2:?} keeps its meaning");
            }
        }
    }
    if let Ok(ad) = parse_ad_with(data, &limits) {
        let text = ad_to_string(&ad);
        let again = parse_ad_with(text.as_bytes(), &limits)
            .unwrap_or_else(|err| panic!("printed {text:?} does not parse: {err}"));
        assert_eq!(ad.len(), again.len(), "{text:?} names every attribute");
        let _ = ad_to_old(&ad, OldOrder::Bytes);
        for name in ad.names() {
            let _ = Evaluator::new(Some(&ad), Some(&slot), &env).eval_attr(name);
        }
    }
    if let Ok(ads) = parse_ads_auto(data, &limits) {
        for ad in &ads {
            let _ = ad_to_string(ad);
        }
    }
    let _ = OldReader::default().read(data);
});
