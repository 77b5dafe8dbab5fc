//! Build script: stamps each build with an id (`ROOST_BUILD_ID`), so the
//! daemon can tell whether the `roost-starter` beside it comes from the
//! same build as itself (`cargo run` rebuilds only the program it runs).

use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=ROOST_BUILD_ID={version}+{nanos}");
}
