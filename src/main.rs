//! The `roost` binary.
//!
//! It uses the system allocator: the daemon and each starter are long-lived
//! processes whose resident memory matters more than allocation speed (with
//! mimalloc the idle daemon held ~60 MB, mostly eagerly committed arena
//! pages; with glibc's malloc ~9 MB). The benchmarks of the pure core use
//! mimalloc, as an embedding program might (`docs/performance.md`).

fn main() -> std::process::ExitCode {
    roost::cli::run()
}
