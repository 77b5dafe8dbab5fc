//! Schedd cron (`SCHEDD_CRON_*`) in a real `roost schedd`: what the jobs
//! print is merged into the schedd's ad (`roost status -schedd`), one ad
//! per job as HTCondor's schedd keeps it (the last block of a run wins, a
//! `- tag` names no second ad, the ad's `Name` and `MyType` stay the
//! schedd's); `_CONDITION` sees the queue's totals; the ads, the schedule
//! and the runs survive `kill -9` (a run left going is killed, a job not
//! due is not run again, its ad is back at once); SIGHUP gives new jobs and
//! withdraws the ads of jobs gone; each run is in the schedd's log.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::daemon::{events, stop, wait_for};
use super::schedd::{Ap, NOBODY};

/// A cron script `name.sh` in `dir` that counts its runs in `name.runs`
/// and then runs `body` (with `$n` the run's number).
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{name}.sh"));
    let runs = dir.join(format!("{name}.runs"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nn=$(($(cat {r} 2>/dev/null || echo 0) + 1))\necho $n > {r}\n{body}\n",
            r = runs.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn runs(dir: &Path, name: &str) -> u32 {
    std::fs::read_to_string(dir.join(format!("{name}.runs")))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// `roost status -schedd -af ATTRS`.
fn schedd_af(ap: &Ap, attrs: &[&str]) -> String {
    let mut args = vec!["status", "-schedd", "-af"];
    args.extend_from_slice(attrs);
    ap.ok(&args).trim().to_string()
}

fn cron_config(dir: &Path, jobs: &[&str]) -> String {
    let probe = script(
        dir,
        "probe",
        "echo \"Runs = $n\"\necho 'First = true'\necho '- one'\n\
         echo \"Runs = $n\"\necho 'Second = true'\necho '- two'",
    );
    let slow = script(
        dir,
        "slow",
        "echo \"SlowRun = $n\"\necho 'Name = \"impostor\"'\necho 'MyType = \"Machine\"'",
    );
    let cond = script(dir, "cond", "echo 'SawHeld = true'");
    let hang = script(
        dir,
        "hang",
        &format!(
            "echo $$ > {}/hang.pid.$n\necho 'HangAlive = true'\necho '-'\nexec sleep 1000",
            dir.display()
        ),
    );
    let added = script(dir, "added", "echo 'Added = true'");
    let mut text = format!("SCHEDD_CRON_JOBLIST = {}\n", jobs.join(" "));
    for (name, path, rest) in [
        (
            "PROBE",
            &probe,
            "PERIOD = 1\nSCHEDD_CRON_PROBE_PREFIX = pre_",
        ),
        ("SLOW", &slow, "PERIOD = 3600"),
        (
            "COND",
            &cond,
            "PERIOD = 1\nSCHEDD_CRON_COND_CONDITION = TotalHeldJobs > 0",
        ),
        ("HANG", &hang, "MODE = OneShot"),
        ("ADDED", &added, "MODE = OneShot"),
    ] {
        text.push_str(&format!(
            "SCHEDD_CRON_{name}_EXECUTABLE = {}\nSCHEDD_CRON_{name}_{rest}\n",
            path.display()
        ));
    }
    text
}

#[test]
fn schedd_cron_publishes_into_the_schedd_ad_and_survives_kill_9() {
    let dir = super::daemon::temp("schedd-cron-jobs");
    std::fs::create_dir_all(&dir).expect("mkdir");
    // The jobs run as the hooks' user and count their runs here.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let extra = cron_config(&dir, &["probe", "slow", "cond", "hang"]);
    let ap = Ap::setup("schedd-cron", &extra);
    let schedd = ap.schedd();
    ap.up();

    // One ad per job: the run's last block, prefixed, with its LastUpdate;
    // the schedd keeps its name and type.
    wait_for("the probe's ad", || {
        schedd_af(&ap, &["pre_Runs"])
            .parse::<u32>()
            .is_ok_and(|n| n >= 2)
    });
    assert_eq!(
        schedd_af(&ap, &["pre_First", "pre_Second", "pre_LastUpdate > 0"]),
        "undefined true true"
    );
    wait_for("the other jobs' ads", || {
        schedd_af(&ap, &["SlowRun", "HangAlive"]) == "1 true"
    });
    let name = schedd_af(&ap, &["Name"]);
    assert_ne!(name, "impostor");
    assert_eq!(schedd_af(&ap, &["MyType"]), "Scheduler");

    // `_CONDITION` sees the queue's totals: nothing held, no run.
    assert_eq!(runs(&dir, "cond"), 0);
    let sub = ap.write("held.sub", "executable = /bin/true\nhold = true\nqueue\n");
    let out = ap.roost_as(&["submit", sub.to_str().expect("utf-8")], Some(NOBODY));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for("the condition to hold", || {
        schedd_af(&ap, &["TotalHeldJobs", "SawHeld"]) == "1 true"
    });
    assert_eq!(schedd_af(&ap, &["TotalJobAds", "NumUsers"]), "1 1");

    // kill -9: the hung run is left behind; the next schedd kills it, does
    // not run the slow job before its hour, and shows its ad at once.
    let hung: i32 = std::fs::read_to_string(dir.join("hang.pid.1"))
        .expect("the hung run's pid")
        .trim()
        .parse()
        .expect("pid");
    schedd.kill();
    assert!(Path::new(&format!("/proc/{hung}")).exists());
    let schedd = ap.schedd();
    ap.up();
    assert_eq!(schedd_af(&ap, &["SlowRun"]), "1");
    wait_for("the hung run of the last schedd killed", || {
        std::fs::read_to_string(format!("/proc/{hung}/stat"))
            .map_or(true, |s| s.split(' ').nth(2) == Some("Z"))
    });
    // In the same boot, a one-shot job that ran is not run again (as the
    // startd's cron does); its ad stays.
    assert_eq!((runs(&dir, "slow"), runs(&dir, "hang")), (1, 1));
    assert_eq!(schedd_af(&ap, &["HangAlive"]), "true");

    // SIGHUP: a job added runs; a job dropped takes its ad with it.
    let config = std::fs::read_to_string(&ap.config).expect("config");
    std::fs::write(
        &ap.config,
        config.replace(
            "SCHEDD_CRON_JOBLIST = probe slow cond hang",
            "SCHEDD_CRON_JOBLIST = probe cond added",
        ),
    )
    .expect("config");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(schedd.id()).expect("pid")),
        nix::sys::signal::Signal::SIGHUP,
    )
    .expect("hup");
    wait_for("the added job's ad", || {
        schedd_af(&ap, &["Added"]) == "true"
    });
    assert_eq!(
        schedd_af(&ap, &["SlowRun", "HangAlive"]),
        "undefined undefined"
    );
    let table = ap.ok(&["status", "-schedd"]);
    assert!(
        table.contains("HeldJobs") && table.contains(&name),
        "{table}"
    );

    // Every run is in the schedd's log, as the log's actor cron.<name>.
    stop(schedd);
    let log = ap.dir.join("spool/roost-schedd-events");
    let all = events(&log);
    let of = |actor: &str, kind: &str| {
        all.iter()
            .filter(|e| e["actor"] == actor && e["event"]["Cron"][kind].is_object())
            .count()
    };
    assert!(of("cron.probe", "Published") >= 2);
    assert_eq!(of("cron.slow", "Started"), 1);
    assert!(
        all.iter().any(|e| e["actor"] == "cron.hang"
            && e["event"]["Cron"]["Ended"]["killed"] == "left running by the last run"),
        "the hung run's end"
    );
}
