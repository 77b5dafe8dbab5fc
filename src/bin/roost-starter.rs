//! `roost-starter`: the starter as a program of its own. The daemon runs it
//! once per job when it sits beside `roost` (else `roost starter`, the same
//! code). Linking only the starter's code makes each job's process start
//! map and fault in far fewer pages than the whole daemon's program.
//! `roost-starter --build-id` prints the build it comes from.
//!
//! Linked statically against musl (`tools/install.sh`), it allocates with
//! dlmalloc: musl's own allocator maps and unmaps pages for most
//! allocations, which cost a starter more CPU than the dynamic loader the
//! static build saves (`docs/performance.md`).

#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

fn main() -> std::process::ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--build-id") {
        println!("{}", roost::BUILD_ID);
        return std::process::ExitCode::SUCCESS;
    }
    roost::starter::run::main()
}
