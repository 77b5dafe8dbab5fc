//! Where starters come from: the starter program, the spare starters
//! started ahead of need, and the job owners' accounts a starter runs
//! jobs as. Shared by the starter actors of one daemon (one thread: cells,
//! no locks); the numbers it follows (`ROOST_SPARE_STARTERS`,
//! `PASSWD_CACHE_REFRESH`) come from the settings in force at each call.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use crate::spawn::{self, Stdio};
use crate::starter::protocol::Account;

/// The starter program, the spares and the accounts.
pub struct StarterSupply {
    /// The starter's program and arguments (see [`starter_program`]).
    pub program: (PathBuf, Vec<String>),
    /// The environment starters inherit (the hooks').
    env: spawn::Environment,
    /// Starters started ahead of need, each waiting for its request (see
    /// [`StarterSupply::take_spare`]).
    spares: RefCell<Vec<spawn::Child>>,
    /// Job owners' accounts looked up so far ([`StarterSupply::account`]).
    accounts: RefCell<Accounts>,
}

impl StarterSupply {
    /// The supply for the daemon's program `exe`, whose starters inherit
    /// `env`; no spares yet.
    pub fn new(exe: &std::path::Path, env: spawn::Environment) -> StarterSupply {
        StarterSupply {
            program: starter_program(exe),
            env,
            spares: RefCell::new(Vec::new()),
            accounts: RefCell::new(Accounts::default()),
        }
    }

    /// The starter program's command line: stdin and stderr piped, stdout
    /// as given, a process group of its own, the hooks' environment.
    pub fn command(&self, stdout: Stdio) -> spawn::Command {
        let (program, args) = &self.program;
        let mut cmd = spawn::Command::new(program);
        cmd.args(args)
            .stdin(Stdio::Piped)
            .stdout(stdout)
            .stderr(Stdio::Piped)
            .process_group()
            .environment(&self.env);
        cmd
    }

    /// A spare starter, started ahead of need and still waiting for its
    /// request, if there is one: a job handed to it skips the starter's
    /// exec and start-up (about a millisecond). One that has gone meanwhile
    /// is reaped and passed over.
    pub fn take_spare(&self) -> Option<spawn::Child> {
        let mut spares = self.spares.borrow_mut();
        prune(&mut spares);
        let spare = spares.pop();
        crate::metrics::global().set_spares(spares.len());
        spare
    }

    /// Starts spare starters until `want` (`ROOST_SPARE_STARTERS`: default
    /// 1, 0 for none) are waiting; fewer wanted (after a reconfig), the
    /// extra ones are told to go. Called once a
    /// starter has started its job, off the path from fetch to exec.
    pub fn refill(&self, want: usize) {
        let mut spares = self.spares.borrow_mut();
        prune(&mut spares);
        // Dropping a spare closes its stdin: it exits, and is reaped.
        spares.truncate(want);
        while spares.len() < want {
            let mut cmd = self.command(Stdio::Piped);
            cmd.args(["--spare"]);
            match cmd.spawn() {
                Ok(c) => spares.push(c),
                Err(e) => {
                    tracing::warn!(message = "Cannot start a spare starter.", error = %e);
                    break;
                }
            }
        }
        crate::metrics::global().set_spares(spares.len());
    }

    /// The account of user `name` for a starter to run a job as, when the
    /// daemon runs as root (otherwise jobs run as the daemon's user and
    /// nothing is looked up), from the system's user database through
    /// [`Accounts`]. `None` leaves the lookup — and its error for the job —
    /// to the starter. Kept accounts younger than `refresh` seconds
    /// (`PASSWD_CACHE_REFRESH`) answer without a lookup.
    pub fn account(&self, name: &str, now: i64, refresh: i64) -> Option<Account> {
        if !nix::unistd::Uid::effective().is_root() {
            return None;
        }
        self.accounts.borrow_mut().get(name, now, refresh, |n| {
            nix::unistd::User::from_name(n).map(|u| u.map(Account::from))
        })
    }

    /// Kills the spare starters and waits for them: at the daemon's end,
    /// before it exits or starts again.
    pub fn close(&self) {
        for c in self.spares.borrow_mut().drain(..) {
            c.kill_and_reap();
        }
    }
}

/// Job owners' accounts looked up so far, each with when, as HTCondor's
/// passwd cache keeps them.
#[derive(Debug, Default)]
pub struct Accounts(HashMap<String, (Account, i64)>);

impl Accounts {
    /// `name`'s account at `now`: the one kept if it is younger than
    /// `refresh` seconds, else what `lookup` says — kept when found,
    /// forgotten when the user is gone (so a user added since is found at
    /// once, and one removed is not run as); when `lookup` fails (say, the
    /// directory service is down) the one kept, however old, and the
    /// failure is logged.
    pub fn get<E: std::fmt::Display>(
        &mut self,
        name: &str,
        now: i64,
        refresh: i64,
        lookup: impl FnOnce(&str) -> Result<Option<Account>, E>,
    ) -> Option<Account> {
        if let Some((a, at)) = self.0.get(name)
            && now.saturating_sub(*at) < refresh
        {
            return Some(a.clone());
        }
        match lookup(name) {
            Ok(Some(a)) => {
                self.0.insert(name.to_string(), (a.clone(), now));
                Some(a)
            }
            Ok(None) => {
                self.0.remove(name);
                None
            }
            Err(e) => {
                tracing::warn!(message = "Cannot look up a job's Owner.", owner = name, error = %e);
                self.0.get(name).map(|(a, _)| a.clone())
            }
        }
    }
}

/// Reaps and drops the spare starters that have gone (killed, out of
/// memory): they cannot take a job.
fn prune(spares: &mut Vec<spawn::Child>) {
    spares.retain_mut(|c| match c.try_wait() {
        Ok(None) => true,
        Ok(Some(status)) => {
            tracing::warn!(message = "A spare starter had exited.", pid = c.id(), status = %status);
            false
        }
        Err(e) => {
            tracing::warn!(message = "Cannot check a spare starter.", pid = c.id(), error = %e);
            false
        }
    });
}

/// The starter for the daemon's program `exe`: `roost-starter` beside it
/// when that is an executable file built from these very sources (it says
/// so when run with `--build-id`: the version and a hash of the sources,
/// the same for a static starter built for another target; one left from
/// other sources is not used, with a warning), else `exe starter` (`roost
/// starter` beside `roost-startd`, which holds no starter).
pub fn starter_program(exe: &std::path::Path) -> (PathBuf, Vec<String>) {
    let (program, args) = match same_build_starter(exe) {
        Some(small) => (small, Vec::new()),
        // `roost-startd` holds no starter; `roost`, beside it, does.
        None if exe.file_name().is_some_and(|n| n == "roost-startd") => {
            (exe.with_file_name("roost"), vec!["starter".to_string()])
        }
        None => (exe.to_path_buf(), vec!["starter".to_string()]),
    };
    tracing::info!(message = "Starter program.", path = %program.display(), args = ?args);
    (program, args)
}

/// `roost-starter` beside `exe`, if it is there and from the same sources.
fn same_build_starter(exe: &std::path::Path) -> Option<PathBuf> {
    use crate::{Beside, program_beside};
    match program_beside(exe, "roost-starter") {
        Beside::Same(small) => Some(small),
        Beside::Absent => None,
        Beside::Other(path, says) => {
            tracing::warn!(
                message = "Not using the roost-starter beside roost: it is from another build.",
                path = %path.display(),
                says = %says,
                build = crate::BUILD_ID
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Account, Accounts, starter_program};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_small_starter_is_used_only_when_it_is_an_executable_of_this_build() {
        let dir = std::env::temp_dir().join(format!("roost-starter-pick-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let roost = dir.join("roost");
        let small = dir.join("roost-starter");
        let fallback = (roost.clone(), vec!["starter".to_string()]);
        assert_eq!(starter_program(&roost), fallback, "none there");
        std::fs::write(&small, format!("#!/bin/sh\necho '{}'\n", crate::BUILD_ID)).unwrap();
        std::fs::set_permissions(&small, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(starter_program(&roost), fallback, "not executable");
        std::fs::set_permissions(&small, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            starter_program(&roost),
            (small.clone(), Vec::<String>::new())
        );
        std::fs::write(&small, "#!/bin/sh\necho 0.0.1+1\n").unwrap();
        assert_eq!(starter_program(&roost), fallback, "another build");
        assert_eq!(
            starter_program(&dir.join("roost-startd")),
            fallback,
            "the daemon's own program falls back to `roost starter`"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn owner_accounts_are_kept_for_the_refresh_time_and_failures_fall_back() {
        let acct = |uid| Account {
            name: "alice".into(),
            uid,
            gid: uid,
        };
        let found = |uid| move |_: &str| Ok::<_, String>(Some(acct(uid)));
        let mut cache = Accounts::default();
        assert_eq!(cache.get("alice", 100, 60, found(1000)), Some(acct(1000)));
        // Within the refresh time the kept account answers; no lookup.
        let never = |_: &str| -> Result<Option<Account>, String> { panic!("looked up") };
        assert_eq!(cache.get("alice", 159, 60, never), Some(acct(1000)));
        // Then it is looked up again, and the new answer kept.
        assert_eq!(cache.get("alice", 160, 60, found(1001)), Some(acct(1001)));
        // A failed lookup falls back to the kept account, however old.
        let down = |_: &str| Err::<Option<Account>, _>("directory down".to_string());
        assert_eq!(cache.get("alice", 1000, 60, down), Some(acct(1001)));
        // A user gone is forgotten, and not found even when the directory
        // fails next.
        assert_eq!(
            cache.get("alice", 1000, 60, |_: &str| Ok::<_, String>(None)),
            None
        );
        assert_eq!(cache.get("alice", 1001, 60, down), None);
        // Nothing kept and a failed lookup: nothing (the starter looks).
        assert_eq!(cache.get("bob", 1, 60, down), None);
    }
}
