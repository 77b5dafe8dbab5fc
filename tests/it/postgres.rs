//! The PostgreSQL fetch-work hooks (`examples/postgresql/`) against a real
//! PostgreSQL (Debian's `postgresql`, started here on a temp directory and
//! a loopback port, stopped after): three `roost startd` processes drain
//! 1,000 jobs from one table — none lost, none run twice, every row ends
//! with its job's exit status — then again with one daemon SIGKILLed and
//! restarted midway.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::daemon::{Daemon, temp};
use super::daemon_admin::Node;

const NOBODY: u32 = 65534;
const JOBS: u32 = 1000;

/// A private PostgreSQL server, run as nobody (it refuses root).
struct Postgres {
    child: Child,
    port: u16,
    bin: PathBuf,
    dir: PathBuf,
}

impl Postgres {
    fn start(name: &str) -> Postgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                    .filter(|b| b.join("postgres").exists())
                    .max()
            })
            .expect(
                "PostgreSQL's server: install Debian's postgresql (apt-get install postgresql)",
            );
        let dir = temp(name);
        // initdb makes the data directory itself, owned by nobody.
        let data = dir.join("data");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let as_nobody = |program: &str| {
            let mut c = Command::new(bin.join(program));
            if nix::unistd::Uid::effective().is_root() {
                c.uid(NOBODY).gid(NOBODY);
            }
            c.env("HOME", &dir).current_dir(&dir);
            c
        };
        let o = as_nobody("initdb")
            .args([
                "-U",
                "roost",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data)
            .output()
            .expect("initdb runs");
        assert!(
            o.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let port = super::daemon_ops::free_port();
        let child = as_nobody("postgres")
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-h", "127.0.0.1", "-k"])
            .arg(&dir)
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("postgres starts");
        let pg = Postgres {
            child,
            port,
            bin,
            dir,
        };
        let start = Instant::now();
        while !pg.sql("postgres", "SELECT 1").is_ok_and(|o| o == "1") {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "PostgreSQL did not come up"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        pg
    }

    /// Runs `sql` in `db`; its output (unaligned, tuples only) or psql's
    /// error.
    fn sql(&self, db: &str, sql: &str) -> Result<String, String> {
        let o = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
            ])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "roost",
                "-d",
                db,
                "-c",
                sql,
            ])
            .output()
            .map_err(|e| e.to_string())?;
        if o.status.success() {
            Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        }
    }

    fn ok(&self, db: &str, sql: &str) -> String {
        self.sql(db, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(0)),
            nix::sys::signal::Signal::SIGQUIT,
        );
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The example hooks, copied beside a `db.env` naming this database.
fn hooks(pg: &Postgres, db: &str, dir: &Path) -> PathBuf {
    let hooks = dir.join("pg-hooks");
    std::fs::create_dir_all(&hooks).expect("mkdir");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/postgresql");
    for f in [
        "common.sh",
        "fetch_work.sh",
        "reply_fetch.sh",
        "job_exit.sh",
        "evict_claim.sh",
    ] {
        std::fs::copy(example.join(f), hooks.join(f)).expect("copy hook");
    }
    std::fs::write(
        hooks.join("db.env"),
        format!(
            "PGHOST=127.0.0.1\nPGPORT={}\nPGUSER=roost\nPGDATABASE={db}\n\
             PATH={}:/usr/bin:/bin\nROOST_PG_LEASE=20\n",
            pg.port,
            pg.bin.display()
        ),
    )
    .expect("db.env");
    hooks
}

/// A database with the example schema and `JOBS` jobs; each job appends a
/// line to `ran/<id>` and exits with `id % 4`.
fn fill(pg: &Postgres, db: &str, ran: &Path) {
    pg.ok("postgres", &format!("CREATE DATABASE {db}"));
    let schema = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/postgresql/schema.sql"),
    )
    .expect("schema");
    pg.ok(db, &schema);
    let ad = format!(
        "Owner = \"nobody\"\nJobUniverse = 5\nCmd = \"/bin/sh\"\n\
         Arguments = \"-c ''echo ran >> {}/@ID@; exit @CODE@''\"",
        ran.display()
    );
    pg.ok(
        db,
        &format!("INSERT INTO roost_jobs (ad) SELECT '{ad}' FROM generate_series(1, {JOBS})"),
    );
    pg.ok(
        db,
        "UPDATE roost_jobs SET ad = replace(replace(ad, '@ID@', id::text), '@CODE@', (id % 4)::text)",
    );
}

/// Three nodes on the hooks, four slots each, fetching without delay.
fn nodes(name: &str, hooks: &Path) -> Vec<Node> {
    ["a", "b", "c"]
        .iter()
        .map(|n| {
            let h = |f: &str| hooks.join(f).display().to_string();
            Node::setup(
                &format!("{name}-{n}"),
                &format!(
                    "STARTD_NAME = node{n}\nNUM_CPUS = 4\nNUM_SLOTS_TYPE_1 = 4\nFetchWorkDelay = 0\n\
                     T_HOOK_FETCH_WORK = {}\nT_HOOK_REPLY_FETCH = {}\nT_HOOK_EVICT_CLAIM = {}\n\
                     T_HOOK_JOB_EXIT = {}\n",
                    h("fetch_work.sh"),
                    h("reply_fetch.sh"),
                    h("evict_claim.sh"),
                    h("job_exit.sh")
                ),
            )
        })
        .collect()
}

/// Waits (up to five minutes) until `done` jobs are done.
fn wait_done(pg: &Postgres, db: &str, done: u32) {
    let start = Instant::now();
    loop {
        let n: u32 = pg
            .ok(db, "SELECT count(*) FROM roost_jobs WHERE state = 'done'")
            .parse()
            .unwrap_or(0);
        if n >= done {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "{n} of {done} jobs done after five minutes: {}",
            pg.ok(db, "SELECT state, count(*) FROM roost_jobs GROUP BY state")
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Every row done with its job's exit status, and every job ran once.
fn check(pg: &Postgres, db: &str, ran: &Path) {
    assert_eq!(
        pg.ok(
            db,
            "SELECT count(*) FROM roost_jobs WHERE state = 'done' AND exit_how = 'exit' \
             AND exit_status = id % 4 AND node IS NOT NULL"
        ),
        JOBS.to_string(),
        "{}",
        pg.ok(
            db,
            "SELECT state, exit_how, count(*) FROM roost_jobs GROUP BY 1, 2"
        )
    );
    for id in 1..=JOBS {
        let runs = std::fs::read_to_string(ran.join(id.to_string())).unwrap_or_default();
        assert_eq!(
            runs.lines().count(),
            1,
            "job {id} ran {} times",
            runs.lines().count()
        );
    }
    // The work was shared.
    let per_node = pg.ok(
        db,
        "SELECT count(DISTINCT split_part(node, '@', 2)) FROM roost_jobs",
    );
    assert_eq!(per_node, "3");
}

fn ran_dir(pg: &Postgres, name: &str) -> PathBuf {
    let ran = pg.dir.join(name);
    std::fs::create_dir_all(&ran).expect("mkdir");
    std::fs::set_permissions(&ran, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    ran
}

#[test]
fn three_nodes_drain_a_postgresql_job_table_even_with_a_node_killed() {
    let pg = Postgres::start("pg");

    // Three nodes drain the table.
    let ran = ran_dir(&pg, "ran1");
    fill(&pg, "first", &ran);
    let hooks1 = hooks(&pg, "first", &pg.dir);
    let nodes1 = nodes("pg1", &hooks1);
    let daemons: Vec<Daemon> = nodes1.iter().map(Node::start).collect();
    wait_done(&pg, "first", JOBS);
    check(&pg, "first", &ran);
    for d in daemons {
        let status = super::daemon::stop(d);
        assert!(status.success(), "daemon exit: {status}");
    }

    // Again, with node b SIGKILLed and restarted midway: its running jobs
    // go on under the restarted daemon, and nothing it had claimed is lost
    // or run twice.
    let ran = ran_dir(&pg, "ran2");
    fill(&pg, "second", &ran);
    let hooks2 = hooks(&pg, "second", &pg.dir.join("h2"));
    let nodes2 = nodes("pg2", &hooks2);
    let mut daemons: Vec<Daemon> = nodes2.iter().map(Node::start).collect();
    wait_done(&pg, "second", JOBS / 3);
    daemons.remove(1).kill();
    std::thread::sleep(Duration::from_millis(500));
    daemons.push(nodes2[1].start());
    wait_done(&pg, "second", JOBS);
    check(&pg, "second", &ran);
    for d in daemons {
        let status = super::daemon::stop(d);
        assert!(status.success(), "daemon exit: {status}");
    }
}
