//! Differential tests against HTCondor's own configuration reader.
//!
//! `tests/fixtures/config/cases-25.jsonl` holds configuration files and what
//! HTCondor 25.14's reader (`htcondor2`) answered for them, `cases-23.jsonl`
//! the same for HTCondor 23.10's (`tools/config_oracle.py`). Each case is
//! written to a fresh directory and loaded by Roost the way `roost config`
//! loads it: as HTCondor 25 (the default), or with
//! `_CONDOR_ROOST_HTCONDOR_VERSION=23` for the 23 answers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use roost::actors::common::sysconfig::FsFiles;
use roost::config::{Config, ConfigError, LoadInput, Root, Scope, load};
use serde_json::Value as Json;

/// Knobs Roost answers differently from HTCondor on purpose or by nature,
/// with the reason. `*` matches every knob of the case.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "use-feature-uwcs_desktop_policy_values",
        "UWCS_PERIODIC_CHECKPOINT",
        "$RANDOM_INTEGER(): a random value",
    ),
    (
        "use-policy-uwcs_desktop",
        "PERIODIC_CHECKPOINT",
        "$RANDOM_INTEGER(): a random value",
    ),
];

/// The cases answered by HTCondor `major`'s reader.
fn cases(major: u32) -> Vec<Json> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/config/cases-{major}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad case line {l}: {e}")))
        .collect()
}

fn scratch(major: u32, name: &str) -> PathBuf {
    let dir = scratch_root(major).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn scratch_root(major: u32) -> PathBuf {
    std::env::temp_dir().join(format!(
        "roost-config-oracle-{}-{major}",
        std::process::id()
    ))
}

fn write_files(dir: &Path, files: &serde_json::Map<String, Json>) {
    let root = dir.to_str().expect("utf-8 temp dir");
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let text = text.as_str().expect("file text").replace("{ROOT}", root);
        std::fs::write(&path, text).expect("write fixture file");
        if rel.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
}

/// The machine facts of the oracle's machine, from the "machine-facts"
/// case: Roost is given the same, so knobs built from them compare.
fn machine_facts(cases: &[Json]) -> Vec<(String, String)> {
    let facts = cases
        .iter()
        .find(|c| c["name"] == "machine-facts")
        .expect("a machine-facts case");
    facts["expected"]
        .as_object()
        .expect("facts")
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// Loads a case the way `roost config` does, with the oracle's machine facts.
fn load_case(
    major: u32,
    case: &Json,
    dir: &Path,
    facts: &[(String, String)],
) -> Result<Config, ConfigError> {
    let root = dir.to_str().expect("utf-8");
    let mut env = vec![
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ("HOME".to_string(), root.to_string()),
    ];
    if major == 23 {
        env.push((
            "_CONDOR_ROOST_HTCONDOR_VERSION".to_string(),
            "23".to_string(),
        ));
    }
    if let Some(e) = case["env"].as_object() {
        for (k, v) in e {
            env.push((k.clone(), v.as_str().unwrap_or("").replace("{ROOT}", root)));
        }
    }
    let input = LoadInput {
        root: Root::File(dir.join("condor_config").to_string_lossy().into_owned()),
        scope: Scope {
            subsys: Some(case["subsystem"].as_str().unwrap_or("TOOL").to_string()),
            localname: None,
        },
        attributes: vec![],
        specials: facts.to_vec(),
        env,
        now: 1_700_000_000,
    };
    load(&input, &FsFiles)
}

fn check(major: u32, case: &Json, facts: &[(String, String)]) -> Vec<String> {
    let name = case["name"].as_str().expect("case name");
    let dir = scratch(major, name);
    write_files(&dir, case["files"].as_object().expect("files"));
    let root = dir.to_str().expect("utf-8").to_string();
    let loaded = load_case(major, case, &dir, facts);
    let mut problems = Vec::new();
    if let Some(err) = case.get("load_error") {
        let err = err.as_str().unwrap_or("");
        match loaded {
            Ok(_) => problems.push(format!(
                "{name}: HTCondor fails to load ({err}); Roost loads it"
            )),
            Err(e) => {
                // HTCondor names the line of a syntax error; so must Roost.
                if let Some(line) = err
                    .split("Configuration Error Line ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .and_then(|n| n.parse::<u32>().ok())
                    && line != e.line
                    && !err.contains("Include Depth")
                {
                    problems.push(format!(
                        "{name}: error at line {} ({e}); HTCondor says line {line}",
                        e.line
                    ));
                }
                if e.file.is_empty() || e.message.is_empty() {
                    problems.push(format!("{name}: error without file or cause: {e:?}"));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        return problems;
    }
    let config = match loaded {
        Ok(c) => c,
        Err(e) => {
            problems.push(format!("{name}: HTCondor loads it; Roost fails: {e}"));
            return problems;
        }
    };
    let expected: BTreeMap<String, Json> = case["expected"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    for (knob, want) in &expected {
        if KNOWN_DIFFERENCES
            .iter()
            .any(|(c, k, _)| *c == name && (*k == "*" || k == knob))
        {
            continue;
        }
        let got = config.get(knob);
        match want {
            Json::Null => match &got {
                Ok(None) => {}
                Ok(Some(s)) if s.is_empty() => {}
                other => problems.push(format!(
                    "{name}: {knob}: HTCondor: undefined; Roost: {other:?}"
                )),
            },
            Json::String(w) => {
                let got_text = got
                    .as_ref()
                    .ok()
                    .and_then(|o| o.as_ref())
                    .map(|s| s.replace(&root, "{ROOT}"));
                if got_text.as_deref() != Some(w.as_str()) {
                    problems.push(format!("{name}: {knob}: HTCondor: {w:?}; Roost: {got:?}"));
                }
            }
            _ => {
                if got.is_ok() {
                    problems.push(format!(
                        "{name}: {knob}: HTCondor fails ({want}); Roost: {got:?}"
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    problems
}

/// Every case of HTCondor `major`'s fixture, read by Roost as that release.
fn matches(major: u32) {
    let cases = cases(major);
    assert!(cases.len() >= 250, "only {} cases", cases.len());
    let facts = machine_facts(&cases);
    let mut problems = Vec::new();
    for case in &cases {
        problems.extend(check(major, case, &facts));
    }
    let _ = std::fs::remove_dir_all(scratch_root(major));
    assert!(
        problems.is_empty(),
        "{} differences in {} cases of HTCondor {major}:\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n")
    );
}

#[test]
fn configuration_matches_htcondor_25() {
    matches(25);
}

#[test]
fn configuration_matches_htcondor_23() {
    matches(23);
}
