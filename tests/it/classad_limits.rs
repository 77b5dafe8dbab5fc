//! Hostile input: deep nesting, huge strings and huge ads end in a clear
//! error, never a crash or unbounded memory, through the library and the
//! CLI.

use roost::classad::old::{OldItem, OldReader, parse_ad_auto};
use roost::classad::unparse::expr_to_string;
use roost::classad::{Evaluator, FixedEnv, Limits, Value, parse_ad, parse_expr, parse_expr_with};

#[test]
fn a_hundred_thousand_nested_parentheses_are_an_error() {
    let deep = "(".repeat(100_000) + "1" + &")".repeat(100_000);
    let err = parse_expr(&deep).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("nested more than 1000")),
        "{err:?}"
    );
    // Lists, ads and calls count as nesting too.
    for (open, close) in [("{", "}"), ("[a=", "]"), ("f(", ")")] {
        let deep = open.repeat(50_000) + "1" + &close.repeat(50_000);
        assert!(parse_expr(&deep).is_err(), "{open}");
    }
    // Unbracketed chains are bounded by tree depth instead.
    let chain = "-".repeat(100_000) + "1";
    assert!(parse_expr(&chain).is_err());
    let chain = "1".to_string() + &" + 1".repeat(100_000);
    assert!(parse_expr(&chain).is_err());
}

#[test]
fn the_deepest_nesting_allowed_parses_on_a_small_stack() {
    // A daemon's worker threads have small stacks; 999 levels of each kind
    // of bracket must still parse (the parser moves to the heap when the
    // stack runs low) and come out whole.
    let parsed = std::thread::Builder::new()
        .stack_size(128 * 1024)
        .spawn(|| {
            let mut out = Vec::new();
            for (open, close) in [("(", ")"), ("{", "}"), ("[a=", "]"), ("f(", ")")] {
                let text = open.repeat(999) + "1" + &close.repeat(999);
                out.push((open, parse_expr(&text).map_err(|e| e.to_string())));
            }
            out
        })
        .expect("thread starts")
        .join()
        .expect("parsing does not overflow the stack");
    for (open, expr) in parsed {
        // What parsed is the whole text: it prints back with every bracket.
        let printed = expr.as_ref().map(expr_to_string);
        assert!(
            printed.as_ref().is_ok_and(|p| p.len() >= 999 * 2),
            "{open}: {}",
            printed.unwrap_or_else(|e| e.clone())
        );
    }
}

#[test]
fn a_ten_megabyte_string_is_an_error() {
    let huge = format!("\"{}\"", "x".repeat(10 * 1024 * 1024));
    let err = parse_expr(&huge).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("more than the limit")),
        "{err:?}"
    );
    // Under the text limit, the string-literal limit applies.
    let limits = Limits {
        max_text_bytes: 64 * 1024 * 1024,
        ..Default::default()
    };
    let err = parse_expr_with(huge.as_bytes(), roost::classad::Syntax::New, &limits)
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("string literal longer than")),
        "{err:?}"
    );
}

#[test]
fn strings_built_while_evaluating_are_bounded() {
    // x is 200 KiB; strcat of 40 copies (8000 KiB) is fine, of 90 copies
    // (18000 KiB) is past the 16 MiB an evaluation may build.
    let copies = |n: usize| vec!["x"; n].join(", ");
    let text = format!(
        "[ x = \"{}\"; ok = strcat({}); big = strcat({}) ]",
        "y".repeat(200 * 1024),
        copies(40),
        copies(90)
    );
    let ad = parse_ad(&text).expect("ad parses");
    let env = FixedEnv::default();
    let mut ev = Evaluator::new(Some(&ad), None, &env);
    assert!(matches!(ev.eval_attr(&"ok".into()), Value::Str(s) if s.len() == 40 * 200 * 1024));
    assert!(matches!(ev.eval_attr(&"big".into()), Value::Error));
}

#[test]
fn a_one_megabyte_ad_is_an_error() {
    let mut text = String::from("[");
    let mut i = 0;
    while text.len() < 1024 * 1024 {
        text.push_str(&format!(" attr{i} = \"{}\";", "v".repeat(100)));
        i += 1;
    }
    text.push(']');
    let err = parse_ad(&text).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("more than the limit")),
        "{err:?}"
    );
    // In old syntax too, as a hook would print it.
    let old: String = (0..i)
        .map(|i| format!("Attr{i} = \"{}\"\n", "v".repeat(100)))
        .collect();
    let err = parse_ad_auto(old.as_bytes(), &Limits::default())
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("more than the limit")),
        "{err:?}"
    );
    // A hook's output stream: the oversized ad is reported, the next one
    // is still read.
    let stream = format!("{old}-----\nSmall = 1\n");
    let items = OldReader::default().read(stream.as_bytes());
    let ads: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            OldItem::Ad(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(ads.len(), 2);
    assert!(
        ads[0]
            .errors
            .iter()
            .any(|e| e.to_string().contains("more than the limit")),
        "{:?}",
        ads[0].errors.first()
    );
    assert!(ads[1].errors.is_empty() && ads[1].ad.contains("Small"));
}

#[test]
fn the_cli_reports_limits_and_keeps_answering() {
    let deep = "(".repeat(100_000) + "1" + &")".repeat(100_000);
    let lines = [
        serde_json::json!({"my": null, "target": null, "expr": deep}).to_string(),
        serde_json::json!({"my": null, "target": null, "expr": "1 + 1"}).to_string(),
    ]
    .join("\n");
    let (text, _, ok) = super::classad_cli::run_with_stdin(&["classad", "eval", "--jsonl"], &lines);
    assert!(ok);
    let answers: Vec<&str> = text.lines().collect();
    assert_eq!(answers.len(), 2, "{text}");
    assert!(answers[0].contains("\"error\"") && answers[0].contains("nested"));
    assert_eq!(answers[1], r#"{"value":"2"}"#);
}

#[test]
fn exponentially_many_references_end_in_error_not_a_hang() {
    // a40 would take 2^40 additions; the step budget stops it.
    let mut text = String::from("[ a0 = 1");
    for n in 1..=40 {
        text.push_str(&format!("; a{n} = a{m} + a{m}", m = n - 1));
    }
    text.push_str(" ]");
    let ad = parse_ad(&text).expect("ad parses");
    let env = FixedEnv::default();
    assert!(matches!(
        Evaluator::new(Some(&ad), None, &env).eval_attr(&"a20".into()),
        Value::Int(1_048_576)
    ));
    assert!(matches!(
        Evaluator::new(Some(&ad), None, &env).eval_attr(&"a40".into()),
        Value::Error
    ));
}
