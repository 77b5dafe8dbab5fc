//! Rules about the source itself: the pure core stays pure, every file says
//! what it is, and nothing unfinished hides behind a passing build.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Code lines of a file: comments left out.
fn code_of(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("//") || t.starts_with("///") || t.starts_with("//!"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_classad_config_and_policy_cores_do_no_io_and_read_no_clock() {
    let forbidden = [
        "std::fs",
        "std::net",
        "std::time",
        "std::process",
        "std::env",
        "std::thread::spawn",
        "std::io::stdin",
        "std::io::stdout",
        "SystemTime",
        "Instant",
        "actix",
        "sled",
        "tokio",
        "nix::",
    ];
    let mut bad = Vec::new();
    let mut files = rust_files(&root().join("src/classad"));
    files.extend(rust_files(&root().join("src/config")));
    files.extend(rust_files(&root().join("src/policy")));
    for f in files {
        let text = fs::read_to_string(&f).unwrap_or_default();
        let code = code_of(&text);
        for word in forbidden {
            if code.contains(word) {
                bad.push(format!("{}: uses {word}", f.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the ClassAd core must stay pure:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_source_file_starts_with_a_module_comment() {
    let mut bad = Vec::new();
    for dir in ["src", "tests", "benches"] {
        for f in rust_files(&root().join(dir)) {
            let text = fs::read_to_string(&f).unwrap_or_default();
            if !text.trim_start().starts_with("//!") {
                bad.push(f.display().to_string());
            }
        }
    }
    assert!(
        bad.is_empty(),
        "files without a //! header:\n{}",
        bad.join("\n")
    );
}

#[test]
fn nothing_is_left_unfinished() {
    let markers = ["todo!(", "unimplemented!(", "TODO", "FIXME", "XXX"];
    let mut bad = Vec::new();
    for f in rust_files(&root().join("src")) {
        let text = fs::read_to_string(&f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if markers.iter().any(|m| line.contains(m)) {
                bad.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "unfinished work:\n{}", bad.join("\n"));
}

#[test]
fn only_the_event_log_knows_sled_and_messagepack() {
    let mut bad = Vec::new();
    for f in rust_files(&root().join("src")) {
        if f.starts_with(root().join("src/events")) {
            continue;
        }
        let code = code_of(&fs::read_to_string(&f).unwrap_or_default());
        for word in ["sled", "rmp_serde", "rmpv"] {
            if code.contains(&format!("{word}::")) || code.contains(&format!("use {word}")) {
                bad.push(format!("{}: uses {word}", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
