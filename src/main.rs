//! The `roost` binary.

/// mimalloc: the daemon allocates and frees many small objects (expression
/// nodes, values, events); mimalloc does that several times faster than the
/// system allocator. The benchmarks use it too.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    roost::cli::run()
}
