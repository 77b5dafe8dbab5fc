//! A job's cgroup on the real daemon: a process that leaves the job's
//! process group and session (`setsid`) is still suspended, continued and
//! killed with the job when the job has its own cgroup (`BASE_CGROUP`),
//! and escapes when it has not (`BASE_CGROUP =` empty). On a machine
//! without a writable cgroup2 hierarchy, the starter says so in the log and
//! the job still runs.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::daemon::wait_for;
use super::daemon_admin::{Node, gone, kill_parent, proc_state};

/// Whether this machine lets us make cgroups (cgroup2 mounted, writable).
fn cgroups_here() -> bool {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    let Some(mount) = roost::starter::cgroup::cgroup2_mount(&info) else {
        return false;
    };
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| roost::starter::cgroup::own_cgroup(&t))
        .unwrap_or_default();
    let probe = mount
        .join(own.trim_start_matches('/'))
        .join(format!("roost-probe-{}", std::process::id()));
    let ok = std::fs::create_dir(&probe).is_ok() && probe.join("cgroup.procs").exists();
    let _ = std::fs::remove_dir(&probe);
    ok
}

struct Run {
    job_pid: String,
    escaped_pid: String,
    /// The escaped process's state while the job was suspended.
    escaped_while_suspended: Option<char>,
    start_log: String,
}

/// Drops a job that starts a `sleep` in a session of its own (out of the
/// job's process group) into `node`'s spool; returns the pids of the job
/// and of the escaped process once both run.
fn escaping_job(node: &Node) -> (String, String) {
    let out = node.dir.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    std::fs::write(
        node.dir.join("jobs/escape.job"),
        format!(
            "ClusterId = 9\nProcId = 0\nOwner = \"nobody\"\nCmd = \"/bin/sh\"\n\
             Arguments = \"-c 'setsid sleep 300 & echo $! > {out}/escaped.pid; echo $$ > {out}/job.pid; wait'\"\n\
             JobUniverse = 5\n",
            out = out.display()
        ),
    )
    .expect("job");
    let read = |f: &str| {
        std::fs::read_to_string(out.join(f))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    wait_for("the job and its escaped process", || {
        !read("escaped.pid").is_empty() && !read("job.pid").is_empty()
    });
    let (job_pid, escaped_pid) = (read("job.pid"), read("escaped.pid"));
    wait_for("the escaped process to sleep", || {
        proc_state(&escaped_pid) == Some('S')
    });
    (job_pid, escaped_pid)
}

/// Runs a job that starts an escaping `sleep`, suspends, continues and
/// fast-vacates it, and reports what became of the escaped process.
fn run(name: &str, extra: &str) -> Run {
    let node = Node::setup(
        name,
        // At debug level the starter names the job's cgroup in the log.
        &format!(
            "STARTD_DEBUG = D_FULLDEBUG\nWANT_SUSPEND = True\nCONTINUE = True\nSUSPEND = False\n{extra}"
        ),
    );
    let base = std::fs::read_to_string(&node.config).expect("config");
    let child = node.start();
    let (job_pid, escaped_pid) = escaping_job(&node);

    std::fs::write(
        &node.config,
        format!("{base}SUSPEND = True\nCONTINUE = False\n"),
    )
    .expect("config");
    assert!(node.roost(&["reconfig"]).status.success());
    wait_for("the job to stop", || proc_state(&job_pid) == Some('T'));
    // Give a signal to the escaped process time to land, if one was sent.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let escaped_while_suspended = proc_state(&escaped_pid);

    std::fs::write(&node.config, &base).expect("config");
    assert!(node.roost(&["reconfig"]).status.success());
    wait_for("the job to run again", || proc_state(&job_pid) == Some('S'));

    node.vacate_fast_and_stop(child);
    let start_log = node.start_log();
    let _ = std::fs::remove_dir_all(&node.dir);
    Run {
        job_pid,
        escaped_pid,
        escaped_while_suspended,
        start_log,
    }
}

fn kill(pid: &str) {
    if let Ok(p) = pid.parse::<i32>() {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), nix::sys::signal::SIGKILL);
    }
}

#[test]
fn a_process_that_leaves_the_jobs_group_is_still_suspended_and_killed_with_the_job() {
    let r = run("cgroup", "");
    assert!(gone(&r.job_pid), "the job is gone");
    if !cgroups_here() {
        kill(&r.escaped_pid);
        assert!(
            r.start_log.contains("no cgroup for the job"),
            "without cgroups the starter says so: {}",
            r.start_log
        );
        eprintln!("this machine has no writable cgroup2 hierarchy: checked the fallback only");
        return;
    }
    assert!(
        r.start_log.contains("the job runs in cgroup "),
        "{}",
        r.start_log
    );
    assert_eq!(
        r.escaped_while_suspended,
        Some('T'),
        "the escaped process was stopped with the job"
    );
    let escaped_gone = gone(&r.escaped_pid);
    kill(&r.escaped_pid);
    assert!(escaped_gone, "the escaped process was killed with the job");
    // The job's cgroup is removed afterwards.
    let path = r
        .start_log
        .split("the job runs in cgroup ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(|p| p.trim_matches('"').to_string())
        .unwrap_or_default();
    assert!(!path.is_empty(), "{}", r.start_log);
    assert!(!Path::new(&path).exists(), "{path} was removed");
}

#[test]
fn without_a_cgroup_a_process_that_leaves_the_jobs_group_escapes() {
    let r = run("nocgroup", "BASE_CGROUP =\n");
    let escaped_alive = !gone(&r.escaped_pid);
    let escaped_while_suspended = r.escaped_while_suspended;
    kill(&r.escaped_pid);
    assert!(gone(&r.job_pid), "the job is gone");
    assert!(
        !r.start_log.contains("the job runs in cgroup "),
        "{}",
        r.start_log
    );
    assert_eq!(
        escaped_while_suspended,
        Some('S'),
        "process-group tracking does not reach it"
    );
    assert!(escaped_alive, "process-group tracking does not kill it");
}

/// A starter killed mid-job: the daemon kills the job's process group and,
/// through the job's cgroup, what left it; the cgroup is removed.
#[test]
fn a_lost_starters_job_is_killed_through_its_cgroup_too() {
    if !cgroups_here() {
        eprintln!("this machine has no writable cgroup2 hierarchy: not checked");
        return;
    }
    let node = Node::setup("cgroup-lost", "");
    let child = node.start();
    let (job_pid, escaped_pid) = escaping_job(&node);
    let cgroup = std::fs::read_to_string(format!("/proc/{escaped_pid}/cgroup"))
        .ok()
        .and_then(|t| roost::starter::cgroup::own_cgroup(&t))
        .unwrap_or_default();
    assert!(cgroup.contains("/slot"), "the job's cgroup: {cgroup}");
    kill_parent(&job_pid);
    wait_for("the job to be gone", || gone(&job_pid));
    wait_for("the escaped process to be gone", || gone(&escaped_pid));
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let mount = roost::starter::cgroup::cgroup2_mount(&mountinfo).expect("cgroup2");
    let dir = mount.join(cgroup.trim_start_matches('/'));
    wait_for("the job's cgroup to be removed", || !dir.exists());
    let status = super::daemon::stop(child);
    assert!(status.success(), "daemon exit: {status}");
    let _ = std::fs::remove_dir_all(&node.dir);
}
