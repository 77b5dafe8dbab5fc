//! `roost classad` driven as a user would: through the binary.

use std::io::Write;
use std::process::{Command, Stdio};

fn roost() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roost"))
}

/// Runs `roost ARGS` with `stdin`; returns stdout, stderr and success.
pub(crate) fn run_with_stdin(args: &[&str], stdin: &str) -> (String, String, bool) {
    let mut child = roost()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("roost runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("roost finishes");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

#[test]
fn eval_prints_a_literal() {
    let out = roost()
        .args(["classad", "eval", "1 + 2 * 3"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7\n");
}

/// A pattern whose empty matches cannot be looked at again anchored (it
/// starts with a `(*…)` option) moves on past them instead of finding the
/// same empty match for ever.
#[test]
fn replace_all_with_a_leading_pcre_option_ends() {
    for (expr, want) in [
        (r#"replaceAll("(*UTF)", "abc", "")"#, "error\n"),
        (r#"replaceAll("(*UTF)b", "abc", "x")"#, "\"axc\"\n"),
    ] {
        let out = roost()
            .args(["classad", "eval", expr])
            .output()
            .expect("runs");
        assert!(out.status.success(), "{expr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{expr}");
    }
}

#[test]
fn eval_reports_parse_errors_with_position() {
    let out = roost()
        .args(["classad", "eval", "1 +"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 1, column 4"), "{err}");
}

#[test]
fn jsonl_answers_each_line_in_order() {
    let input = concat!(
        r#"{"my": "[a = 1]", "target": "[b = 2]", "expr": "a + b"}"#,
        "\n",
        r#"{"my": null, "target": null, "expr": "1 +"}"#,
        "\n",
        r#"{"my": "A = 5\nB = A * 2", "target": null, "expr": "B"}"#,
        "\n",
        r#"{"my": "[Requirements = TARGET.x > 1]", "target": "[x = 2]", "expr": "Requirements"}"#,
        "\n",
    );
    let (out, _, ok) = run_with_stdin(&["classad", "eval", "--jsonl"], input);
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], r#"{"value":"3"}"#);
    assert!(
        lines[1].starts_with(r#"{"error":"expr: line 1, column 4"#),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], r#"{"value":"10"}"#);
    assert_eq!(lines[3], r#"{"value":"true"}"#);
}

#[test]
fn fmt_converts_between_syntaxes() {
    let (out, _, ok) = run_with_stdin(
        &["classad", "fmt", "--old"],
        "[b = 1.5; A = \"x\"; c = a =?= b]",
    );
    assert!(ok);
    assert_eq!(out, "A = \"x\"\nb = 1.5\nc = a =?= b\n");
    let (out, _, ok) = run_with_stdin(&["classad", "fmt", "--new"], "A = \"x\"\nb = 1.5\n");
    assert!(ok);
    assert_eq!(out, "[ A = \"x\"; b = 1.500000000000000E+00 ]\n");
}

#[test]
fn match_counts_matches_and_picks_the_best_rank() {
    let dir = std::env::temp_dir().join(format!("roost-match-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let machines = dir.join("machines");
    let jobs = dir.join("jobs");
    std::fs::write(
        &machines,
        "[Name = \"slot1@a\"; Memory = 1024; Requirements = TARGET.RequestMemory <= Memory]\n\
         [Name = \"slot1@b\"; Memory = 4096; Requirements = TARGET.RequestMemory <= Memory]\n\
         [Name = \"slot1@c\"; Memory = 256; Requirements = TARGET.RequestMemory <= Memory]\n",
    )
    .expect("write machines");
    std::fs::write(
        &jobs,
        "RequestMemory = 512\nRequirements = TARGET.Memory >= 512\nRank = TARGET.Memory\n\n\
         RequestMemory = 8192\nRequirements = true\n",
    )
    .expect("write jobs");
    let out = roost()
        .args(["classad", "match", "--json", "--machines"])
        .arg(&machines)
        .arg("--jobs")
        .arg(&jobs)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["matches"], 2);
    assert_eq!(lines[0]["best"], "slot1@b");
    assert_eq!(lines[1]["matches"], 0);
    assert_eq!(lines[2]["pairs"], 6);
    assert_eq!(lines[2]["matches"], 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Old-syntax ads are read as HTCondor's reader reads them: comment lines
/// skipped, an ad cut short at its first bad line (with a warning naming
/// it), an ad with no good line before the bad one left out, and a text
/// with no ad left refused.
#[test]
fn old_ads_keep_the_lines_before_a_bad_one() {
    let (out, err, ok) = run_with_stdin(
        &["classad", "fmt", "--old"],
        "# written by a site script\nA = 1\nnot an assignment\nB = 2\n\nC = 3 # note\n",
    );
    assert!(ok, "{err}");
    assert_eq!(out, "A = 1\n\nC = 3\n");
    assert!(
        err.contains("warning: stdin: line 3, column 1") && err.contains("the ad ends"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("roost-old-ad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let my = dir.join("my.ad");
    std::fs::write(&my, "# slot\nMemory = 2048\nCpus = (\nDisk = 10\n").expect("write");
    let o = roost()
        .args([
            "classad",
            "eval",
            "Memory * 2 + (isUndefined(Cpus) ? 0 : 1)",
        ])
        .arg("--my")
        .arg(&my)
        .output()
        .expect("run");
    assert!(o.status.success(), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "4096\n");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("line 3"),
        "{o:?}"
    );
    let (out, err, ok) = run_with_stdin(&["classad", "fmt", "--old"], "A = 1\n\nbad\nB = 2\n");
    assert!(ok, "{err}");
    assert_eq!(out, "A = 1\n");
    assert!(err.contains("line 3, column 1"), "{err}");
    let (_, err, ok) = run_with_stdin(&["classad", "fmt", "--old"], "# x\nbad\nB = 2\n");
    assert!(!ok);
    assert!(err.contains("line 2, column 1"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
