//! `roost-starter`: the starter as a program of its own. The daemon runs it
//! once per job when it sits beside `roost` (else `roost starter`, the same
//! code). Linking only the starter's code makes each job's process start
//! map and fault in far fewer pages than the whole daemon's program.
//! `roost-starter --build-id` prints the build it comes from.

fn main() -> std::process::ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--build-id") {
        println!("{}", roost::BUILD_ID);
        return std::process::ExitCode::SUCCESS;
    }
    roost::starter::run::main()
}
