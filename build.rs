//! Build script: stamps each build with an id (`ROOST_BUILD_ID`), so the
//! daemon can tell whether the `roost-starter` beside it comes from the
//! same sources as itself (`cargo run` rebuilds only the program it runs,
//! and a starter left from older sources may speak another protocol). The
//! id is the package version and a hash of the sources, so builds of one
//! tree for different targets (a static starter beside a dynamic daemon,
//! `tools/install.sh`) agree.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    files.sort();
    files.extend(["build.rs", "Cargo.toml", "Cargo.lock"].map(|f| root.join(f)));
    // FNV-1a over each file's path (relative) and contents.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap_or(f);
        feed(rel.to_string_lossy().as_bytes());
        feed(&[0]);
        feed(&std::fs::read(f).unwrap_or_default());
        feed(&[0]);
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=ROOST_BUILD_ID={version}+{h:016x}");
}

/// Every file under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}
