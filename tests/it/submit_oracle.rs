//! `roost submit`'s reader against HTCondor's own submit code: every
//! description in `tests/fixtures/submit/cases.jsonl` (made by
//! `tools/submit_oracle.py`) gives the same job ads, attribute for
//! attribute, or is refused where HTCondor refuses it.

use roost::classad::unparse::expr_to_string;
use roost::schedd::submit::{Submission, SubmitFiles, jobs};

/// The scratch directory the oracle submitted from.
struct Scratch;

impl SubmitFiles for Scratch {
    fn read(&self, path: &str) -> Option<String> {
        (path == "items.txt").then(|| "alpha\nbeta\n".to_string())
    }
    fn glob(&self, pattern: &str, dirs: bool) -> Vec<String> {
        match (pattern, dirs) {
            ("*.dat", false) => vec!["one.dat".into(), "two.dat".into()],
            _ => Vec::new(),
        }
    }
    fn is_dir(&self, path: &str) -> bool {
        ["${CWD}/sub", "${CWD}", "${CWD}/data"].contains(&path)
    }
    fn size(&self, path: &str) -> Option<u64> {
        match path.strip_prefix("${CWD}/")? {
            "items.txt" => Some(11),
            "one.dat" | "two.dat" => Some(2),
            "in.txt" => Some(6),
            "sub" => Some(0),
            "big.bin" | "data/../big.bin" => Some(5 << 19),
            "data" | "data/b1" => Some(1 << 20),
            _ => None,
        }
    }
}

/// What the oracle's ads carry that depends on how it was called, not on
/// the description.
const CALLER: [&str; 3] = ["Owner", "JobSubmitMethod", "FileSystemDomain"];

#[test]
fn every_description_gives_htcondors_job_ads_or_its_refusal() {
    let text = include_str!("../fixtures/submit/cases.jsonl");
    let mut failures = Vec::new();
    // The submitter's environment the oracle gave `getenv` cases
    // (tools/submit_oracle.py's GETENV_ENVIRON).
    let environ: Vec<(String, String)> = [
        ("PATH", "/usr/bin:/bin"),
        ("HOME", "/home/alice"),
        ("LANG", "C"),
        ("ZED", "z z"),
        ("QUOTE", "it's"),
        ("EMPTY", ""),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect();
    for line in text.lines() {
        let case: serde_json::Value = serde_json::from_str(line).expect("fixture line");
        let name = case["name"].as_str().unwrap_or("?");
        let submit = case["submit"].as_str().unwrap_or("");
        let s = Submission {
            text: submit,
            cluster: 7,
            qdate: 1_700_000_000,
            owner: "alice",
            cwd: "${CWD}",
            domain: "vm",
            platform: ("X86_64", "LINUX"),
            files: &Scratch,
            environ: &environ,
        };
        let got = jobs(&s);
        match (case.get("error"), got) {
            (Some(_), Err(_)) => {}
            (Some(e), Ok(ads)) => {
                failures.push(format!(
                    "{name}: HTCondor refuses ({e}), Roost made {} job(s)",
                    ads.len()
                ));
            }
            (None, Err(e)) => failures.push(format!("{name}: Roost refuses: {e}")),
            (None, Ok(ads)) => {
                let want = case["jobs"].as_array().cloned().unwrap_or_default();
                if want.len() != ads.len() {
                    failures.push(format!(
                        "{name}: {} jobs, HTCondor {}",
                        ads.len(),
                        want.len()
                    ));
                    continue;
                }
                for (i, (w, ad)) in want.iter().zip(&ads).enumerate() {
                    let w = w.as_object().cloned().unwrap_or_default();
                    for (attr, value) in &w {
                        if CALLER.contains(&attr.as_str()) {
                            continue;
                        }
                        let mine = ad.lookup(attr).map(expr_to_string);
                        if mine.as_deref() != value.as_str() {
                            failures.push(format!(
                                "{name} job {i}: {attr} = {} (HTCondor: {value})",
                                mine.unwrap_or_else(|| "<absent>".into())
                            ));
                        }
                    }
                    for (attr, _) in ad.iter() {
                        if !w.keys().any(|k| k.eq_ignore_ascii_case(attr.as_str()))
                            && !CALLER.contains(&attr.as_str())
                        {
                            failures.push(format!("{name} job {i}: {attr} is not HTCondor's"));
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
