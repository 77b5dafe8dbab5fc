//! What the daemon and a `roost starter` process say to each other: one
//! JSON [`Request`] line on the starter's stdin, then [`Command`] lines;
//! [`Report`] lines on its stdout. The starter's stderr is its log.
//!
//! From [`PROTOCOL`] 2 on, a starter outlives its daemon: it waits for
//! [`Command::Go`] before it does anything with the job (the daemon sends
//! it once the starter is durably in its log), ends with [`Report::Done`]
//! and waits for [`Command::Bye`] (sent once every report is durable), and
//! when its daemon goes away it keeps the job running and calls the
//! daemon's admin socket again with a [`Hello`] — every report it made —
//! until a daemon answers [`Attached`] or its orphan timeout runs out.
//! One that leaves with no daemon (its orphan timeout ran out) writes that
//! [`Hello`] to a file ([`leftover_file`]) that the next daemon reads.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::exit::Exit;

/// The starter hooks chosen for a job (paths already validated).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StarterHooks {
    /// The keyword they came from.
    pub keyword: Option<String>,
    /// `<KW>_HOOK_PREPARE_JOB`.
    pub prepare_job: Option<PathBuf>,
    /// `<KW>_HOOK_PREPARE_JOB_ARGS`, split.
    pub prepare_job_args: Vec<String>,
    /// `<KW>_HOOK_UPDATE_JOB_INFO`.
    pub update_job_info: Option<PathBuf>,
    /// `<KW>_HOOK_JOB_EXIT`.
    pub job_exit: Option<PathBuf>,
    /// Timeouts in seconds: PREPARE_JOB, UPDATE_JOB_INFO, JOB_EXIT.
    pub timeouts: [u64; 3],
    /// The hooks of the keyword the node fetched the job under, when the
    /// job's own `HookKeyword` is another: the fetcher's hooks are the
    /// node's contract with whoever handed out the job, so its
    /// UPDATE_JOB_INFO and JOB_EXIT run after the job's own, and its
    /// PREPARE_JOB when the job's keyword has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetcher: Option<Box<StarterHooks>>,
}

impl StarterHooks {
    /// These hooks, then the fetcher's.
    pub fn each(&self) -> impl Iterator<Item = &StarterHooks> {
        std::iter::once(self).chain(self.fetcher.as_deref())
    }

    /// Whose PREPARE_JOB runs: the job's keyword's, else the fetcher's.
    pub fn preparing(&self) -> &StarterHooks {
        match self.fetcher.as_deref() {
            Some(f) if self.prepare_job.is_none() => f,
            _ => self,
        }
    }
}

/// Everything a starter needs; it reads no configuration itself.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Request {
    /// The slot's id (`slot1`, `slot1_2`): `_CONDOR_SLOT`.
    pub slot: String,
    /// The job ad, old syntax.
    pub job: String,
    /// The slot ad, old syntax (`.machine.ad`).
    pub machine: String,
    /// `EXECUTE`: the sandbox is made under it.
    pub execute: PathBuf,
    /// The hooks.
    pub hooks: StarterHooks,
    /// The job's device variables (`_CONDOR_AssignedGPUs`,
    /// `CUDA_VISIBLE_DEVICES`, …) from the slot's devices.
    #[serde(default)]
    pub device_env: Vec<(String, String)>,
    /// `STARTER_INITIAL_UPDATE_INTERVAL`, `STARTER_UPDATE_INTERVAL`.
    pub update_intervals: (u64, u64),
    /// The environment hooks inherit from the daemon.
    pub hook_env: crate::spawn::Environment,
    /// The hook stdout cap.
    pub stdout_limit: usize,
    /// Seconds the job may take to leave after its `KillSig` when the
    /// daemon goes away (the claim's pledged MachineMaxVacateTime); then it
    /// is killed.
    #[serde(default)]
    pub vacate_grace: u64,
    /// `BASE_CGROUP`: the job gets its own cgroup under it where the
    /// machine allows; `None`: process-group tracking only.
    #[serde(default)]
    pub cgroup_base: Option<String>,
    /// The directory of the daemon's own cgroup, which is the starter's
    /// too (found once by the daemon); `None`: the starter finds it.
    #[serde(default)]
    pub cgroup_home: Option<PathBuf>,
    /// Set when the starter that ran this job was lost (killed, crashed)
    /// before the job ended: this starter only records that in the job
    /// event log, as the job's user, and exits.
    #[serde(default)]
    pub lost: Option<Lost>,
    /// The job's `Owner` as the daemon's user database knows it, when the
    /// daemon runs as root and found the user: the starter runs the job and
    /// its hooks as this account instead of looking the name up itself (a
    /// static starter's C library may not reach the site's directory
    /// service — LDAP, SSSD — that the daemon's does). `None`: the starter
    /// looks the Owner up.
    #[serde(default)]
    pub owner: Option<Account>,
    /// The daemon logs at debug level (`STARTD_DEBUG = D_FULLDEBUG`): the
    /// starter also writes its routine lines (the job's cgroup, its start
    /// and exit), which the daemon says itself at the default level.
    #[serde(default)]
    pub debug_log: bool,
    /// The protocol the daemon speaks (absent: 1, which knows no `Go`,
    /// `Done`, `Bye` and no reattaching).
    #[serde(default = "protocol_one")]
    pub protocol: u32,
    /// The daemon's name for this starter (its actor), said again when it
    /// calls a restarted daemon.
    #[serde(default)]
    pub actor: String,
    /// Where to call a restarted daemon (its admin socket); `None`: the
    /// job is evicted as soon as the daemon is gone.
    #[serde(default)]
    pub reattach: Option<PathBuf>,
    /// `ROOST_STARTER_ORPHAN_TIMEOUT`: seconds the job keeps running
    /// without a daemon before it is evicted (0: at once).
    #[serde(default)]
    pub orphan_timeout: u64,
    /// Where a starter that leaves with no daemon writes what it reported
    /// ([`Hello`] as JSON, in [`leftover_file`]), for the next daemon to
    /// read; `None`: nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leftover: Option<PathBuf>,
}

fn protocol_one() -> u32 {
    1
}

/// The protocol this build speaks.
pub const PROTOCOL: u32 = 2;

/// The oldest protocol of a starter this build's daemon reattaches to.
pub const OLDEST_REATTACH: u32 = 2;

/// What a starter whose daemon went away says when it calls a daemon
/// (as the admin request `attach`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The starter's protocol.
    pub protocol: u32,
    /// The starter's build (`BUILD_ID`), for the log.
    pub build: String,
    /// The starter's pid (checked against the caller's credentials).
    pub pid: u32,
    /// When the starter process started, in clock ticks since boot (the
    /// 22nd field of `/proc/<pid>/stat`): with the pid, which process.
    pub started: u64,
    /// The daemon's name for it ([`Request::actor`]).
    pub actor: String,
    /// It was told [`Command::Go`].
    pub go: bool,
    /// Every report it made, in order; the daemon keeps those it has not.
    pub reports: Vec<Report>,
}

/// The file in directory `dir` where starter `actor` leaves its reports
/// when it leaves with no daemon.
pub fn leftover_file(dir: &std::path::Path, actor: &str) -> PathBuf {
    let name: String = actor
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{name}.json"))
}

/// The daemon's answer to a [`Hello`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Attached {
    /// Taken: commands follow, reports may be sent.
    Welcome,
    /// Not taken: the daemon does not know this starter, or has already
    /// ended its claim (and told the fetcher). The starter kills its job,
    /// if any, and leaves without telling anyone.
    Abandon {
        /// Why, for the starter's log.
        reason: String,
    },
}

impl Hello {
    /// Whether a daemon of this build takes the starter that says this
    /// (pure): a starter of protocol [`OLDEST_REATTACH`] to [`PROTOCOL`]
    /// is taken, whatever its build — an upgrade reattaches to the
    /// starters of the build before; an older one, or a newer one (a
    /// downgraded daemon would misread its reports), is refused.
    pub fn answer(&self) -> Attached {
        if self.protocol < OLDEST_REATTACH {
            Attached::Abandon {
                reason: format!(
                    "protocol {} is older than this daemon takes ({OLDEST_REATTACH})",
                    self.protocol
                ),
            }
        } else if self.protocol > PROTOCOL {
            Attached::Abandon {
                reason: format!(
                    "protocol {} is newer than this daemon speaks ({PROTOCOL})",
                    self.protocol
                ),
            }
        } else {
            Attached::Welcome
        }
    }
}

/// A user account: its name and ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The login name.
    pub name: String,
    /// The user id.
    pub uid: u32,
    /// The primary group id.
    pub gid: u32,
}

impl From<nix::unistd::User> for Account {
    fn from(u: nix::unistd::User) -> Account {
        Account {
            name: u.name,
            uid: u.uid.as_raw(),
            gid: u.gid.as_raw(),
        }
    }
}

/// A starter lost before its job ended, for the job event log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lost {
    /// What happened, one line.
    pub reason: String,
    /// The job's process had started (so the log holds its execute event).
    pub job_started: bool,
}

impl Request {
    /// Whether the job ad sets `StarterUserLog` (old syntax: one
    /// `Name = value` per line, names case-insensitive).
    pub fn names_user_log(&self) -> bool {
        const NAME: &str = "StarterUserLog";
        self.job.lines().any(|l| {
            let l = l.trim_start();
            l.get(..NAME.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(NAME))
                && l[NAME.len()..].trim_start().starts_with('=')
        })
    }
}

/// From the daemon to a starter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    /// SIGSTOP the job's process group.
    Suspend,
    /// SIGCONT it.
    Continue,
    /// Send the job's `KillSig`.
    SoftKill,
    /// SIGKILL the job's process group.
    HardKill,
    /// The starter is in the daemon's log: it may run the job (protocol 2).
    Go,
    /// Every report is durable: the starter may exit (protocol 2).
    Bye,
}

/// From a starter to the daemon.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Report {
    /// The job process exists.
    JobStarted {
        /// Its pid.
        pid: u32,
    },
    /// The job was not started; JOB_EXIT was (or would be) told so.
    NotStarted {
        /// Why, for the fetcher and the log.
        reason: String,
    },
    /// A starter hook finished.
    Hook {
        /// `PREPARE_JOB`, `UPDATE_JOB_INFO`, `JOB_EXIT`.
        hook: String,
        /// Its arguments.
        args: Vec<String>,
        /// How it ended (`None`: it could not be started).
        exit: Option<Exit>,
        /// Killed at its timeout.
        timed_out: bool,
        /// What came of it, for the log.
        outcome: String,
        /// Seconds it ran (0: not run; starters before it was reported
        /// send none).
        #[serde(default)]
        elapsed: f64,
    },
    /// The job was suspended or continued.
    Suspended {
        /// True: stopped; false: continued.
        stopped: bool,
    },
    /// The job's process ended.
    JobExited {
        /// How.
        exit: Exit,
        /// The JOB_EXIT argument: `exit`, `evict`, `hold`, `remove`.
        how: String,
        /// Seconds it ran.
        duration: f64,
    },
    /// The fetcher no longer wants the job (removed or held in its queue,
    /// said through UPDATE_JOB_INFO): the daemon vacates it, and JOB_EXIT
    /// is told `how`.
    Withdrawn {
        /// `remove` or `hold`.
        how: String,
        /// Why, as the queue said it.
        reason: String,
    },
    /// Something worth a line in the daemon's log.
    Warning {
        /// The message.
        message: String,
    },
    /// Nothing more will be reported; the starter waits for
    /// [`Command::Bye`] (protocol 2).
    Done,
}

/// The first line a starter whose daemon went away sends to a daemon's
/// admin socket, asking it to take the starter (the admin protocol's
/// `Attach` request, which names it the same way); the daemon answers
/// with an [`Attached`] line and the connection goes on with reports
/// and commands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum AttachCall {
    /// Take this starter.
    Attach {
        /// Who it is and what it reported.
        hello: Hello,
    },
}

/// Default timeouts of hooks, in seconds. HTCondor has only JOB_EXIT's
/// (30); the rest are Roost's, so that a hung hook never holds a slot.
pub fn default_hook_timeout(hook: &str) -> u64 {
    match hook {
        "FETCH_WORK" | "REPLY_FETCH" | "EVICT_CLAIM" | "UPDATE_JOB_INFO" => 60,
        "PREPARE_JOB" | "PREPARE_JOB_BEFORE_TRANSFER" => 300,
        _ => 30,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_takes_starters_of_older_builds_within_the_protocols_it_speaks() {
        let hello = |protocol: u32, build: &str| Hello {
            protocol,
            build: build.into(),
            pid: 1,
            started: 1,
            actor: "slot1/starter/1".into(),
            go: true,
            reports: Vec::new(),
        };
        // An upgrade: the starter of the build before speaks a protocol
        // this build still takes.
        assert_eq!(
            hello(PROTOCOL, "0.0.9+0123456789abcdef").answer(),
            Attached::Welcome
        );
        assert_eq!(hello(OLDEST_REATTACH, "old").answer(), Attached::Welcome);
        for p in [1, OLDEST_REATTACH - 1, PROTOCOL + 1] {
            let Attached::Abandon { reason } = hello(p, "x").answer() else {
                panic!("protocol {p} taken");
            };
            assert!(reason.contains(&format!("protocol {p} is")), "{reason}");
        }
    }

    fn with_job(job: &str) -> Request {
        Request {
            slot: "slot1".into(),
            job: job.into(),
            machine: String::new(),
            execute: PathBuf::from("/tmp"),
            hooks: StarterHooks::default(),
            device_env: Vec::new(),
            update_intervals: (8, 300),
            hook_env: crate::spawn::Environment::default(),
            stdout_limit: 10240,
            vacate_grace: 0,
            cgroup_base: None,
            cgroup_home: None,
            lost: None,
            owner: None,
            debug_log: false,
            protocol: PROTOCOL,
            actor: String::new(),
            reattach: None,
            orphan_timeout: 0,
            leftover: None,
        }
    }

    #[test]
    fn a_user_log_is_found_by_its_attribute_name_only() {
        assert!(with_job("Cmd = \"/bin/true\"\nStarterUserLog = \"j.log\"\n").names_user_log());
        assert!(with_job("starteruserlog=\"j.log\"").names_user_log());
        assert!(!with_job("StarterUserLogUseXML = true\n").names_user_log());
        assert!(!with_job("Cmd = \"StarterUserLog = x\"\n").names_user_log());
        assert!(!with_job("Cmd = \"/bin/true\"\n").names_user_log());
    }
}
