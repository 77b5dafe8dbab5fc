//! `roost config` driven as an administrator would: through the binary, on
//! configuration files in a temporary directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roost-config-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Runs `roost config --config <dir>/condor_config ARGS` with a clean
/// configuration environment.
fn roost_config(d: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roost"))
        .arg("config")
        .arg("--config")
        .arg(d.join("condor_config"))
        .args(args)
        .env_remove("CONDOR_CONFIG")
        .output()
        .expect("roost runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SITE: &str = "\
# an execute node
use POLICY : Always_Run_Jobs
STARTD_JOB_HOOK_KEYWORD = ROOST
ROOST_HOOK_FETCH_WORK = $(LIBEXEC)/fetch.sh
STARTD.EXTRA = for the startd
EXTRA = for everyone
EMPTY =
BAD = $(LOOP) twelve
LOOP = $(BAD)
NOT_A_NUMBER = twelve
LENIENT = $INT(NOT_A_NUMBER)
";

#[test]
fn get_prints_expanded_values_like_condor_config_val() {
    let d = dir("get");
    std::fs::write(d.join("condor_config"), SITE).expect("write");
    let out = roost_config(&d, &["get", "start", "ROOST_HOOK_FETCH_WORK", "EXTRA"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "True\n/usr/libexec/fetch.sh\nfor everyone\n"
    );

    let out = roost_config(&d, &["--subsystem", "startd", "get", "EXTRA"]);
    assert_eq!(text(&out.stdout), "for the startd\n");

    let out = roost_config(&d, &["get", "NOPE"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Not defined: NOPE"));
}

#[test]
fn json_maps_names_to_values_null_or_error() {
    let d = dir("json");
    std::fs::write(d.join("condor_config"), SITE).expect("write");
    let names = ["START", "EMPTY", "NOPE", "BAD", "LENIENT"];
    let out = roost_config(&d, &[&["get", "--json"][..], &names].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["START"], "True");
    assert!(v["EMPTY"].is_null());
    assert!(v["NOPE"].is_null());
    let err = v["BAD"]["error"].as_str().expect("an error object");
    assert!(err.contains("circular reference"), "{err}");
    // HTCondor 25's $INT() of a non-number is empty, not an error.
    assert!(v["LENIENT"].is_null(), "{}", v["LENIENT"]);
}

#[test]
fn verbose_names_the_file_line_and_template() {
    let d = dir("verbose");
    std::fs::write(d.join("condor_config"), SITE).expect("write");
    let out = roost_config(&d, &["get", "-v", "EXTRA", "START", "MINUTE"]);
    let s = text(&out.stdout);
    let file = d.join("condor_config");
    assert!(
        s.contains(&format!(
            "EXTRA = for everyone\n # at: {}, line 6\n",
            file.display()
        )),
        "{s}"
    );
    assert!(s.contains(", line 2, use POLICY:Always_Run_Jobs"), "{s}");
    assert!(
        s.contains("MINUTE = 60\n # at: <Default>\n # raw: 60\n"),
        "{s}"
    );
}

#[test]
fn dump_lists_every_macro_sorted() {
    let d = dir("dump");
    std::fs::write(d.join("condor_config"), "b = 2\nA = 1\nC = $(A)\n").expect("write");
    let out = roost_config(&d, &["dump"]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    let a = s.find("A = 1\n").expect("A");
    let b = s.find("b = 2\n").expect("b");
    let c = s.find("C = $(A)\n").expect("C unexpanded");
    assert!(a < b && b < c, "{s}");
}

#[test]
fn a_bad_configuration_fails_with_file_line_and_cause() {
    let d = dir("bad");
    std::fs::write(
        d.join("condor_config"),
        "A = 1\ninclude : $(CONFIG_ROOT)/site.conf\n",
    )
    .expect("write");
    std::fs::write(d.join("site.conf"), "B = 2\n\nuse POLICY : Nonexistent\n").expect("write");
    let out = roost_config(&d, &["get", "A"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("site.conf, line 3"), "{err}");
    assert!(err.contains("does not recognise Nonexistent"), "{err}");

    for (body, cause) in [
        ("A @=end\nnever ends\n", "'@end'"),
        ("if true\nA = 1\n", "endif"),
        ("just words\n", "expected"),
        ("include : /nonexistent/file.conf\n", "cannot include"),
    ] {
        std::fs::write(d.join("condor_config"), body).expect("write");
        let out = roost_config(&d, &["get", "A"]);
        assert!(!out.status.success(), "{body}");
        let err = text(&out.stderr);
        assert!(
            err.contains("condor_config, line") && err.contains(cause),
            "{body}: {err}"
        );
    }
}

#[test]
fn a_circular_reference_is_an_error_not_a_hang() {
    let d = dir("cycle");
    std::fs::write(
        d.join("condor_config"),
        "A = $(B)\nB = x $(C)\nC = $(A)\nD = fine\n",
    )
    .expect("write");
    let out = roost_config(&d, &["get", "--json", "A", "D"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let err = v["A"]["error"].as_str().expect("error");
    assert!(
        err.contains("circular reference: a -> b -> c -> a"),
        "{err}"
    );
    assert_eq!(v["D"], "fine");
}

#[test]
fn a_missing_root_file_fails() {
    let d = dir("missing");
    let out = roost_config(&d, &["get", "A"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("cannot read file"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn only_env_reads_no_files() {
    let out = Command::new(env!("CARGO_BIN_EXE_roost"))
        .args(["config", "get", "--json", "A", "MINUTE"])
        .env("CONDOR_CONFIG", "ONLY_ENV")
        .env("_CONDOR_A", "from the environment")
        .output()
        .expect("roost runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["A"], "from the environment");
    assert_eq!(v["MINUTE"], "60");
}

#[test]
fn local_name_overrides_subsystem_which_overrides_plain() {
    let d = dir("localname");
    std::fs::write(
        d.join("condor_config"),
        "X = plain\nSTARTD.X = subsystem\nSTARTD2.X = local\n",
    )
    .expect("write");
    let get = |extra: &[&str]| {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["get", "X"]);
        text(&roost_config(&d, &args).stdout)
    };
    assert_eq!(get(&[]), "plain\n");
    assert_eq!(get(&["--subsystem", "STARTD"]), "subsystem\n");
    assert_eq!(
        get(&["--subsystem", "STARTD", "--local-name", "STARTD2"]),
        "local\n"
    );
}

/// HTCondor defines DETECTED_CORES before reading the files, so a file may
/// set it; DETECTED_CPUS is defined again after them and stays the
/// machine's (checked with HTCondor 25's reader: 99 and the machine's).
#[test]
fn a_file_may_set_detected_cores_but_not_detected_cpus() {
    let d = dir("detected");
    std::fs::write(
        d.join("condor_config"),
        "DETECTED_CORES = 99\nDETECTED_CPUS = 77\nCORES = $(DETECTED_CORES)\n",
    )
    .expect("write");
    let out = roost_config(&d, &["get", "DETECTED_CORES", "CORES", "DETECTED_CPUS"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(text(&out.stdout), format!("99\n99\n{cpus}\n"));
}
