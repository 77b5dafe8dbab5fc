//! What a job ad asks the starter to run, read as HTCondor's starter reads
//! a locally fetched job: `Cmd` (required), `Arguments` (V2) over `Args`
//! (V1), `Environment` (V2) over `Env` (V1), `Iwd`, `In`/`Out`/`Err`,
//! `JobUniverse`, `KillSig`, `Owner`, `ClusterId`/`ProcId`, `CoreSize`. Pure: paths
//! are resolved as text, nothing is looked up on disk.

use crate::classad::argenv::{EnvList, split_v1, split_v2};
use crate::classad::{ClassAd, FixedEnv, Value};

/// Why a job cannot be started, as the fetcher will read it in JOB_EXIT.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

/// The job, ready to be spawned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// The executable (absolute, or relative to `iwd`).
    pub cmd: String,
    /// Arguments after argv\[0\].
    pub args: Vec<String>,
    /// The job's own environment entries.
    pub env: Vec<(String, String)>,
    /// Initial working directory; `None`: the sandbox.
    pub iwd: Option<String>,
    /// stdin, stdout, stderr paths (`None`: /dev/null); relative to the Iwd.
    pub stdio: [Option<String>; 3],
    /// The signal that asks the job to leave.
    pub kill_sig: i32,
    /// `Owner`, if given.
    pub owner: Option<String>,
    /// `ClusterId`, `ProcId`.
    pub id: (i64, i64),
    /// The core-file limit in bytes (`None`: no limit), as HTCondor's
    /// starter sets it: `CoreSize`, negative for none, 0 when unset.
    pub core_limit: Option<u64>,
}

fn string(ad: &ClassAd, name: &str) -> Option<String> {
    match ad.eval_attr(name, &FixedEnv::new(0)) {
        Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    }
}

fn int(ad: &ClassAd, name: &str) -> Option<i64> {
    match ad.eval_attr(name, &FixedEnv::new(0)) {
        Value::Int(i) => Some(i),
        Value::Real(r) if r.fract() == 0.0 && r.abs() < 9e15 =>
        {
            #[allow(clippy::cast_possible_truncation)]
            Some(r as i64)
        }
        _ => None,
    }
}

/// The signal number for a `KillSig` value: a number, or a name with its
/// `SIG` prefix (case-insensitive); anything else is SIGTERM.
pub fn signal_number(ad: &ClassAd, name: &str) -> i32 {
    const TERM: i32 = 15;
    match ad.eval_attr(name, &FixedEnv::new(0)) {
        Value::Int(i) => i32::try_from(i).ok().filter(|n| *n > 0).unwrap_or(TERM),
        Value::Str(s) => {
            let s = s.to_string_lossy().to_ascii_uppercase();
            s.strip_prefix("SIG")
                .and_then(|n| {
                    SIGNALS
                        .iter()
                        .find(|(name, _)| *name == n)
                        .map(|(_, num)| *num)
                })
                .unwrap_or(TERM)
        }
        _ => TERM,
    }
}

/// Signal names of Linux, without the prefix.
pub const SIGNALS: &[(&str, i32)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("STKFLT", 16),
    ("CHLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("PWR", 30),
    ("SYS", 31),
];

/// The name HTCondor gives a signal in `ExitReason` ("died on signal 9
/// (Killed)" uses strsignal's text).
pub fn signal_description(sig: i32) -> &'static str {
    match sig {
        1 => "Hangup",
        2 => "Interrupt",
        3 => "Quit",
        4 => "Illegal instruction",
        5 => "Trace/breakpoint trap",
        6 => "Aborted",
        7 => "Bus error",
        8 => "Floating point exception",
        9 => "Killed",
        10 => "User defined signal 1",
        11 => "Segmentation fault",
        12 => "User defined signal 2",
        13 => "Broken pipe",
        14 => "Alarm clock",
        15 => "Terminated",
        _ => "Unknown signal",
    }
}

/// When a job may start, as HTCondor's starter decides from
/// `DeferralTime` (seconds since 1970, less `DeferralOffset`) and
/// `DeferralWindow` (default 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deferral {
    /// Now (no deferral, or late within the window).
    Now,
    /// After this many seconds.
    Wait(u64),
    /// Never: its time passed more than the window ago.
    Missed,
}

/// [`Deferral`] of the job `ad` at `now`; a `DeferralTime` that is not a
/// positive integer is no deferral.
pub fn deferral(ad: &ClassAd, now: i64) -> Deferral {
    let env = FixedEnv::new(now);
    let int = |name: &str| match ad.eval_attr(name, &env) {
        Value::Int(i) => Some(i),
        _ => None,
    };
    let Some(at) = int("DeferralTime").filter(|t| *t > 0) else {
        return Deferral::Now;
    };
    let now = now - int("DeferralOffset").unwrap_or(0);
    let window = int("DeferralWindow").unwrap_or(0);
    match at - now {
        d if d > 0 => Deferral::Wait(d.unsigned_abs()),
        d if -d > window => Deferral::Missed,
        _ => Deferral::Now,
    }
}

/// Reads the job from its ad.
pub fn job_spec(ad: &ClassAd) -> Result<JobSpec, JobError> {
    let Some(cmd) = string(ad, "Cmd").filter(|c| !c.is_empty()) else {
        return Err(JobError("Can't find Cmd in job ad".into()));
    };
    let universe = int(ad, "JobUniverse").unwrap_or(5);
    if universe != 5 {
        return Err(JobError(format!(
            "JobUniverse {universe} is not supported: only vanilla (5) jobs run here"
        )));
    }
    let args = if let Some(v2) = string(ad, "Arguments") {
        split_v2(&v2).map_err(|e| JobError(format!("Arguments: {e}")))?
    } else if let Some(v1) = string(ad, "Args") {
        split_v1(&v1)
    } else {
        Vec::new()
    };
    let mut env = EnvList::new();
    if let Some(v2) = string(ad, "Environment") {
        env.merge_v2(&v2)
            .map_err(|e| JobError(format!("Environment: {e}")))?;
    } else if let Some(v1) = string(ad, "Env") {
        env.merge_v1(&v1)
            .map_err(|e| JobError(format!("Env: {e}")))?;
    }
    let iwd = string(ad, "Iwd").filter(|s| !s.is_empty());
    let stdio = ["In", "Out", "Err"].map(|n| string(ad, n).filter(|s| !s.is_empty()));
    Ok(JobSpec {
        cmd,
        args,
        env: env.entries().to_vec(),
        iwd,
        stdio,
        kill_sig: signal_number(ad, "KillSig"),
        owner: string(ad, "Owner").filter(|s| !s.is_empty()),
        core_limit: match int(ad, "CoreSize") {
            Some(n) if n < 0 => None,
            Some(n) => Some(n.unsigned_abs()),
            None => Some(0),
        },
        id: (
            int(ad, "ClusterId").unwrap_or(1),
            int(ad, "ProcId").unwrap_or(0),
        ),
    })
}

/// `path` made absolute against `dir` (the Iwd), as the starter does.
pub fn under(dir: &str, path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", dir.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn spec(text: &str) -> Result<JobSpec, JobError> {
        job_spec(&parse_ad(text).unwrap_or_default())
    }

    #[test]
    fn reads_a_job_as_the_starter_does() {
        let j = spec(
            r#"[Cmd = "/bin/echo"; Args = "a b"; Arguments = "'x y' z"; Env = "A=1;B=2";
               Environment = "C=3"; Out = "out.txt"; KillSig = "SIGINT"; Owner = "nobody"]"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.args, vec!["x y".to_string(), "z".to_string()]);
        assert_eq!(j.env, vec![("C".to_string(), "3".to_string())]);
        assert_eq!(j.kill_sig, 2);
        assert_eq!(j.stdio[1].as_deref(), Some("out.txt"));
        assert_eq!(j.id, (1, 0));
        assert_eq!(under("/w", "out.txt"), "/w/out.txt");
        // No core files unless the job asks (HTCondor's starter).
        assert_eq!(j.core_limit, Some(0));
        let core = |v: &str| spec(&format!("[Cmd = \"/x\"; CoreSize = {v}]")).map(|j| j.core_limit);
        assert_eq!(core("4096"), Ok(Some(4096)));
        assert_eq!(core("-1"), Ok(None));
    }

    #[test]
    fn a_deferred_job_waits_for_its_time_and_misses_it_after_its_window() {
        let ad = |t: &str| parse_ad(t).unwrap_or_default();
        assert_eq!(deferral(&ad("[]"), 100), Deferral::Now);
        assert_eq!(
            deferral(&ad("[DeferralTime = 130]"), 100),
            Deferral::Wait(30)
        );
        assert_eq!(
            deferral(&ad("[DeferralTime = CurrentTime + 5]"), 100),
            Deferral::Wait(5)
        );
        assert_eq!(deferral(&ad("[DeferralTime = 100]"), 100), Deferral::Now);
        assert_eq!(deferral(&ad("[DeferralTime = 99]"), 100), Deferral::Missed);
        assert_eq!(
            deferral(&ad("[DeferralTime = 90; DeferralWindow = 10]"), 100),
            Deferral::Now
        );
        assert_eq!(
            deferral(&ad("[DeferralTime = 130; DeferralOffset = -10]"), 100),
            Deferral::Wait(20)
        );
        assert_eq!(
            deferral(&ad("[DeferralTime = \"soon\"]"), 100),
            Deferral::Now
        );
    }

    #[test]
    fn refuses_what_cannot_run() {
        assert_eq!(
            spec("[Args = \"x\"]").err().map(|e| e.0),
            Some("Can't find Cmd in job ad".into())
        );
        assert!(spec("[Cmd = \"/bin/true\"; JobUniverse = 7]").is_err());
        assert!(spec("[Cmd = \"/bin/true\"; Arguments = \"'open\"]").is_err());
    }

    #[test]
    fn kill_signal_needs_the_sig_prefix() {
        let ad = |v: &str| parse_ad(&format!("[KillSig = {v}]")).unwrap_or_default();
        assert_eq!(signal_number(&ad("\"TERM\""), "KillSig"), 15);
        assert_eq!(signal_number(&ad("\"sigusr1\""), "KillSig"), 10);
        assert_eq!(signal_number(&ad("9"), "KillSig"), 9);
        assert_eq!(signal_number(&ad("\"SIGBOGUS\""), "KillSig"), 15);
    }
}
