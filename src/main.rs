//! The `roost` binary.

fn main() -> std::process::ExitCode {
    roost::cli::run()
}
