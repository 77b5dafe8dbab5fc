//! File transfer through a real `roost schedd` and `roost startd`: a job
//! whose files travel runs in its sandbox with its inputs (files, a
//! directory whole, a directory's contents, its executable) and its
//! outputs come back to where the job named them (listed, remapped, stdout
//! and stderr, a directory whole; or every file the job made); a missing
//! input holds the job with code 13, a missing listed output with 12.

use std::os::unix::fs::PermissionsExt;

use super::daemon::{stop, wait_for};
use super::schedd::{Ap, lines};

#[test]
fn a_job_s_files_travel_to_its_sandbox_and_back() {
    let ap = Ap::setup("schedd-transfer", "");
    let schedd = ap.schedd();
    ap.up();
    let work = ap.dir.join("work");
    let prog = ap.write(
        "prog.sh",
        "#!/bin/sh\npwd > where.txt\ncat in.txt flat.txt > copy.txt\nls data > listing.txt\n\
         echo out-line\necho err-line >&2\nmkdir made\necho deep > made/deep.txt\n\
         echo untouched > not-listed.txt\n",
    );
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    ap.write("in.txt", "input\n");
    for d in ["data", "flat"] {
        std::fs::create_dir_all(work.join(d)).expect("mkdir");
    }
    ap.write("data/a", "a\n");
    ap.write("data/b", "b\n");
    ap.write("flat/flat.txt", "flat\n");
    ap.submit_as_nobody(
        "listed.sub",
        "executable = prog.sh\nshould_transfer_files = YES\n\
         transfer_input_files = in.txt, data, flat/\noutput = out.txt\nerror = err.txt\n\
         transfer_output_files = where.txt, copy.txt, listing.txt, made\n\
         transfer_output_remaps = \"listing.txt = results/listing\"\nlog = listed.log\nqueue\n",
    );
    ap.submit_as_nobody(
        "changed.sub",
        "executable = /bin/sh\narguments = \"-c 'echo hi > new.txt'\"\n\
         transfer_executable = false\nshould_transfer_files = YES\nqueue\n",
    );
    ap.submit_as_nobody(
        "no_input.sub",
        "executable = /bin/true\ntransfer_executable = false\nshould_transfer_files = YES\n\
         transfer_input_files = nothere.txt\nqueue\n",
    );
    ap.submit_as_nobody(
        "no_output.sub",
        "executable = /bin/true\ntransfer_executable = false\nshould_transfer_files = YES\n\
         transfer_output_files = never.txt\nqueue\n",
    );
    let startd = ap.startd();
    assert_eq!(
        ended_or_held(&ap, 4),
        ["1 4 0", "2 4 0", "3 5 13", "4 5 12"]
    );
    let read =
        |p: &str| std::fs::read_to_string(work.join(p)).unwrap_or_else(|e| format!("{p}: {e}"));
    let ran_in = read("where.txt");
    assert!(
        ran_in.trim() != work.display().to_string() && ran_in.contains("/execute/"),
        "the job ran in {ran_in}"
    );
    assert_eq!(read("copy.txt"), "input\nflat\n");
    assert_eq!(read("results/listing"), "a\nb\n");
    assert!(!work.join("listing.txt").exists());
    assert_eq!(read("out.txt"), "out-line\n");
    assert_eq!(read("err.txt"), "err-line\n");
    assert_eq!(read("made/deep.txt"), "deep\n");
    assert!(
        !work.join("not-listed.txt").exists(),
        "only what is listed comes back"
    );
    assert_eq!(read("new.txt"), "hi\n");
    assert!(
        !work.join(".job.ad").exists(),
        "the starter's own files stay"
    );
    let reason = ap.ok(&["q", "-af", "HoldReason", "-constraint", "ClusterId == 3"]);
    assert!(
        reason.contains("Transfer input files failure") && reason.contains("nothere.txt"),
        "{reason}"
    );
    let reason = ap.ok(&["q", "-af", "HoldReason", "-constraint", "ClusterId == 4"]);
    assert!(reason.contains("Transfer output files failure"), "{reason}");
    // Outputs are the job's owner's.
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(work.join("copy.txt"))
        .expect("copy.txt")
        .uid();
    assert_eq!(owner, super::schedd::NOBODY);
    // The user log, in HTCondor's order: the inputs arrive, then the job
    // executes; its outputs go back, then it is done.
    let log = work.join("listed.log");
    let mut records = Vec::new();
    wait_for("the user log's seven records", || {
        records = super::schedd::user_log(&log);
        records.len() >= 7
    });
    let heads: Vec<&str> = records
        .iter()
        .map(|r| r.split('|').next().unwrap_or_default())
        .collect();
    assert_eq!(
        heads,
        [
            "000 (001.000.000) Job submitted from host",
            "040 (001.000.000) Started transferring input files",
            "040 (001.000.000) Finished transferring input files",
            "001 (001.000.000) Job executing on host",
            "040 (001.000.000) Started transferring output files",
            "040 (001.000.000) Finished transferring output files",
            "005 (001.000.000) Job terminated.",
        ],
        "{records:#?}"
    );
    assert!(
        records[1].contains("|Transferring to host: slot"),
        "{}",
        records[1]
    );
    assert!(
        records[6].contains("|(1) Normal termination (return value 0)"),
        "{}",
        records[6]
    );
    let dates = ap.ok(&[
        "history",
        "-af",
        "JobCurrentStartTransferInputDate =!= undefined",
        "JobCurrentFinishTransferOutputDate =!= undefined",
        "JobCurrentStartExecutingDate >= JobCurrentFinishTransferInputDate",
        "-constraint",
        "ClusterId == 1",
    ]);
    assert_eq!(dates, "true true true\n");
    stop(startd);
    stop(schedd);
    let _ = std::fs::remove_dir_all(&ap.dir);
}

/// The schedd crashes half way through sending a job's input, and again
/// half way through taking its output: each time the node's starter makes
/// the connection again to the restarted schedd and the transfer goes on
/// from where it stopped, and the job's files arrive whole.
#[test]
fn a_transfer_broken_by_a_schedd_crash_goes_on_where_it_stopped() {
    let (ap, startd) = big_copy_until_the_schedd_crashes("schedd-transfer-crash");
    let mut schedd = schedd_with(&ap, "transfer-received-half");
    let crashed = schedd.wait(std::time::Duration::from_secs(90));
    assert!(
        crashed.is_some(),
        "the schedd did not reach its failpoint while receiving"
    );
    let schedd = ap.schedd();
    ap.up();
    the_big_copy_completes(&ap);
    // Each file went on from the middle: the second run of each transfer
    // moved only the rest.
    let log = std::fs::read_to_string(ap.dir.join("log/SchedLog")).expect("SchedLog");
    let numbers = |key: &str| -> Vec<u64> {
        log.lines()
            .filter(|l| l.contains("File transfer done"))
            .filter_map(|l| l.split(key).nth(1)?.split_whitespace().next()?.parse().ok())
            .collect()
    };
    let full = 24u64 << 20;
    assert!(
        numbers("bytes_sent=").iter().any(|&n| n > 0 && n < full),
        "input resumed: {log}"
    );
    assert!(
        numbers("bytes_received=")
            .iter()
            .any(|&n| n > 0 && n < full),
        "output resumed: {log}"
    );
    stop(startd);
    stop(schedd);
    let _ = std::fs::remove_dir_all(&ap.dir);
}

/// The node's starter is killed (SIGKILL) with a job's input half moved,
/// while its schedd is down too: the daemon gives the job back, the queue
/// hands it out again once it is up, and a new starter fetches the input
/// whole; the job's output comes back whole, and the killed starter's
/// sandbox is removed.
#[test]
fn a_starter_killed_during_a_transfer_leaves_the_job_to_run_again_whole() {
    let (ap, startd) = big_copy_until_the_schedd_crashes("schedd-transfer-starter-kill");
    // The starter's sandbox is dir_<its pid>, holding half the input.
    let execute = ap.dir.join("execute");
    let mut sandbox = None;
    wait_for("the starter's sandbox with half the input", || {
        sandbox = std::fs::read_dir(&execute).ok().and_then(|d| {
            d.flatten()
                .map(|e| e.path())
                .find(|p| std::fs::metadata(p.join("big.in")).is_ok_and(|m| m.len() > 0))
        });
        sandbox.is_some()
    });
    let sandbox = sandbox.expect("a sandbox");
    let pid: i32 = sandbox
        .file_name()
        .and_then(|n| n.to_str()?.strip_prefix("dir_")?.parse().ok())
        .expect("dir_<pid>");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill the starter");
    let schedd = ap.schedd();
    ap.up();
    the_big_copy_completes(&ap);
    wait_for("the killed starter's sandbox to go", || !sandbox.exists());
    assert_eq!(
        ap.ok(&["history", "-af", "NumJobStarts"]),
        "2\n",
        "the job ran again"
    );
    stop(startd);
    stop(schedd);
    let _ = std::fs::remove_dir_all(&ap.dir);
}

/// Once `n` jobs have ended or are held: each as `cluster status code`
/// (its `ExitCode` when it ended, its `HoldReasonCode` when held), sorted.
fn ended_or_held(ap: &Ap, n: usize) -> Vec<String> {
    let mut states = Vec::new();
    wait_for("the jobs to end or be held", || {
        states = lines(&ap.ok(&["history", "-af", "ClusterId", "JobStatus", "ExitCode"]));
        states.extend(lines(&ap.ok(&[
            "q",
            "-af",
            "ClusterId",
            "JobStatus",
            "HoldReasonCode",
            "-constraint",
            "JobStatus == 5",
        ])));
        states.sort();
        states.len() >= n
    });
    states
}

/// A small web server on the loopback address: `/data.txt` is served,
/// any other path is 404. Returns its port.
fn web_server() -> u16 {
    use std::io::{BufRead, Write};
    let server = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = server.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in server.incoming().flatten() {
            let mut reader = std::io::BufReader::new(&stream);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let answer = if first.starts_with("GET /data.txt ") {
                "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nfrom http\n"
            } else {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            };
            let _ = (&stream).write_all(answer.as_bytes());
        }
    });
    port
}

/// An `http://` input is fetched by the node itself (its slots advertise
/// the method, so the job matches); one the server does not have holds
/// the job with code 13, naming the URL and the answer.
#[test]
fn an_http_input_is_fetched_by_the_node() {
    let port = web_server();
    let ap = Ap::setup("schedd-transfer-http", "");
    let schedd = ap.schedd();
    ap.up();
    let work = ap.dir.join("work");
    for (name, path) in [("got.sub", "data.txt"), ("missing.sub", "missing.txt")] {
        ap.submit_as_nobody(
            name,
            &format!(
                "executable = /bin/cat\narguments = data.txt\ntransfer_executable = false\n\
                 should_transfer_files = YES\n\
                 transfer_input_files = http://127.0.0.1:{port}/{path}\noutput = got.txt\nqueue\n"
            ),
        );
    }
    let startd = ap.startd();
    assert_eq!(ended_or_held(&ap, 2), ["1 4 0", "2 5 13"]);
    assert_eq!(
        std::fs::read_to_string(work.join("got.txt")).expect("got.txt"),
        "from http\n"
    );
    let reason = ap.ok(&["q", "-af", "HoldReason", "-constraint", "ClusterId == 2"]);
    assert!(
        reason.contains("missing.txt") && reason.contains("404"),
        "{reason}"
    );
    stop(startd);
    stop(schedd);
    let _ = std::fs::remove_dir_all(&ap.dir);
}

/// A schedd that crashes half way through sending `work/big.in` (24 MiB)
/// to the node of a job that copies it to `big.out`, and the node's
/// startd; returned once the schedd has crashed.
fn big_copy_until_the_schedd_crashes(name: &str) -> (Ap, super::daemon::Daemon) {
    let ap = Ap::setup(name, "");
    let mut schedd = schedd_with(&ap, "transfer-sent-half");
    ap.up();
    big_input(&ap.dir.join("work"));
    ap.submit_as_nobody(
        "big.sub",
        "executable = /bin/cp\narguments = big.in big.out\ntransfer_executable = false\n\
         should_transfer_files = YES\ntransfer_input_files = big.in\n\
         transfer_output_files = big.out\nqueue\n",
    );
    let startd = ap.startd();
    let crashed = schedd.wait(std::time::Duration::from_secs(60));
    assert!(
        crashed.is_some(),
        "the schedd did not reach its failpoint while sending"
    );
    (ap, startd)
}

/// Waits for that job to complete, and checks its output is its input.
fn the_big_copy_completes(ap: &Ap) {
    wait_for("the job to complete", || {
        ap.ok(&["history", "-af", "ClusterId", "JobStatus"]) == "1 4\n"
    });
    let work = ap.dir.join("work");
    let sent = std::fs::read(work.join("big.out")).expect("big.out");
    let given = std::fs::read(work.join("big.in")).expect("big.in");
    assert!(
        sent == given,
        "the output is not the input ({} bytes)",
        sent.len()
    );
}

/// A schedd that aborts at `failpoint`.
fn schedd_with(ap: &Ap, failpoint: &str) -> super::daemon::Daemon {
    super::daemon::Daemon::spawn(
        std::process::Command::new(env!("CARGO_BIN_EXE_roost"))
            .args(["schedd", "-f", "--config"])
            .arg(&ap.config)
            .env("ROOST_FAILPOINT", failpoint)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    )
}

/// `work/big.in`: 24 MiB of bytes that differ from place to place.
fn big_input(work: &std::path::Path) {
    use std::io::Write;
    let mut big = std::fs::File::create(work.join("big.in")).expect("create");
    let mut x: u64 = 1;
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..24 {
        for b in &mut block {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            *b = (x >> 56) as u8;
        }
        big.write_all(&block).expect("write");
    }
    drop(big);
    std::fs::set_permissions(work.join("big.in"), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
}

/// A vacate heard while a job's inputs are moving cuts the transfer
/// short: with the schedd gone half way through the input, the starter
/// would try again for two minutes; a fast vacate of the node evicts the
/// job at once.
#[test]
fn a_vacate_cuts_an_input_transfer_short() {
    let ap = Ap::setup("schedd-transfer-vacate", "");
    let mut schedd = schedd_with(&ap, "transfer-sent-half");
    ap.up();
    big_input(&ap.dir.join("work"));
    ap.submit_as_nobody(
        "big.sub",
        "executable = /bin/true\ntransfer_executable = false\nshould_transfer_files = YES\n\
         transfer_input_files = big.in\nqueue\n",
    );
    let startd = ap.startd();
    let crashed = schedd.wait(std::time::Duration::from_secs(60));
    assert!(
        crashed.is_some(),
        "the schedd did not reach its failpoint while sending"
    );
    let log = ap.dir.join("log/StartLog");
    let said = |what: &str| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains(what)
    };
    wait_for("the starter to try the schedd again", || {
        said("file transfer broke")
    });
    let o = ap.roost(&["vacate", "-fast"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    wait_for("the job to be vacated while its files moved", || {
        said("vacated while its input files were moving")
    });
    stop(startd);
    let _ = std::fs::remove_dir_all(&ap.dir);
}

/// `examples/queue/transfer.sub`, submitted from a copy of the
/// repository's layout, runs in its sandbox and its files come back.
#[test]
fn the_transfer_example_runs() {
    let ap = Ap::setup("schedd-transfer-example", "");
    let schedd = ap.schedd();
    ap.up();
    let work = ap.dir.join("work");
    std::fs::create_dir_all(work.join("examples/queue")).expect("mkdir");
    ap.write(
        "examples/queue/hello.sub",
        include_str!("../../examples/queue/hello.sub"),
    );
    ap.submit_as_nobody(
        "transfer.sub",
        include_str!("../../examples/queue/transfer.sub"),
    );
    let startd = ap.startd();
    assert_eq!(super::schedd::wait_history(&ap, 1), ["1 0 4 0"]);
    let lines = std::fs::read_to_string(work.join("lines.txt")).expect("lines.txt");
    let want = include_str!("../../examples/queue/hello.sub")
        .lines()
        .count();
    assert_eq!(lines, format!("{want} hello.sub\n"));
    let ran_in = std::fs::read_to_string(work.join("transfer.1.out")).expect("stdout");
    assert!(ran_in.contains("/execute/"), "it ran in {ran_in}");
    stop(startd);
    stop(schedd);
    let _ = std::fs::remove_dir_all(&ap.dir);
}
