//! The `roost starter` process: makes the sandbox, runs PREPARE_JOB, the
//! job (in its own process group, as its owner), UPDATE_JOB_INFO on its
//! timer and JOB_EXIT at the end, obeys the daemon's commands, and reports
//! every step through its [`Link`] to the daemon (JSON lines on stdout,
//! or on the daemon's socket once it has called a restarted daemon).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::Signal;
use nix::unistd::{Gid, Pid, Uid, User};

use tokio::io::{AsyncBufReadExt, BufReader};

mod job_hooks;
mod transfer;
mod usage;

use usage::{Tracking, children_cpu, publish_usage, remove_cgroup};

use super::cgroup::JobCgroup;
pub use super::error::SetupError;
use super::job::{Deferral, JobSpec, job_spec, signal_description, under};
use super::link::{Heard, Link, Setup, report};
use super::protocol::{Account, Command, Lost, Report, Request};
use super::withdraw::Withdrawal;
use crate::classad::old::OldReader;
use crate::classad::unparse::{OldOrder, ad_to_old};
use crate::classad::{ClassAd, FixedEnv, Value};
use crate::hooks::{self, Exit, HookOutput, HookRun};
use crate::spawn::{self, Stdio};
use crate::userlog::{self, End, Event, JobId, Stamp, Usage, usage_of};

/// Runs a starter on this process's stdin/stdout; returns the exit code.
pub fn main() -> std::process::ExitCode {
    // A starter reads two ads once: a name cache of 16 slots, not 1,024.
    crate::classad::set_name_cache_bits(4);
    std::process::ExitCode::from(u8::try_from(run_starter()).unwrap_or(1))
}

fn run_starter() -> i32 {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            log_line(&format!("roost starter: cannot start: {e}"));
            return 1;
        }
    };
    // A spare starts before there is a job for it, and is told to go by
    // the end of its stdin.
    let spare = std::env::args().skip(1).any(|a| a == "--spare");
    let code = rt.block_on(async {
        let mut lines = BufReader::new(super::link::stdin()).lines();
        let request = match lines.next_line().await {
            Ok(Some(l)) => serde_json::from_str::<Request>(&l)
                .map_err(|e| Some(format!("the request line is not valid: {e}"))),
            Ok(None) if spare => Err(None),
            Ok(None) => Err(Some("no request on stdin".to_string())),
            Err(e) => Err(Some(format!("cannot read stdin: {e}"))),
        };
        match request {
            Ok(r) => {
                let link = Link::start(
                    lines,
                    super::link::stdout(),
                    Setup {
                        protocol: r.protocol,
                        actor: r.actor.clone(),
                        reattach: r.reattach.clone(),
                        orphan_timeout: Duration::from_secs(r.orphan_timeout),
                        leftover: r.leftover.clone(),
                    },
                );
                Starter::new(r, link).run().await
            }
            Err(None) => 0,
            Err(Some(e)) => {
                // The daemon may be gone: never a panic on a closed stderr.
                log_line(&format!("roost starter: {e}"));
                1
            }
        }
    });
    // The stdin reader may still be blocked on a read; do not wait for it.
    rt.shutdown_background();
    code
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Writes a line to the starter's log (stderr, read by the daemon). The
/// daemon may be gone: a failed write is ignored, never a panic.
pub(super) fn log_line(msg: &str) {
    use std::io::Write;
    // One write per line: stderr is unbuffered, and `writeln!` would write
    // the message and its newline apart.
    let mut line = String::with_capacity(msg.len() + 1);
    line.push_str(msg);
    line.push('\n');
    let _ = std::io::stderr().write_all(line.as_bytes());
}

struct Starter {
    req: Request,
    job: ClassAd,
    sandbox: PathBuf,
    /// The user the job and its hooks run as (`None`: ourselves).
    user: Option<Account>,
    /// The job's user is known (or we are not root): the job event log
    /// may be written.
    may_log: bool,
    /// The way to the daemon.
    link: Link,
    /// The fetcher withdrew the job (UPDATE_JOB_INFO said so).
    withdrawn: Arc<Mutex<Option<Withdrawal>>>,
    /// The job's files travel: it runs in the sandbox.
    transfer: Option<transfer::Transferring>,
}

impl Starter {
    fn new(req: Request, link: Link) -> Starter {
        let reader = OldReader {
            skip_comments: true,
            ..OldReader::default()
        };
        // The starter, like HTCondor's, ignores job-ad lines that do not
        // parse (the daemon already checked the ad).
        let mut job = ClassAd::new();
        for item in reader.read(req.job.as_bytes()) {
            if let crate::classad::old::OldItem::Ad(a) = item {
                job.update(&a.ad);
            }
        }
        let sandbox = super::sandbox_dir(&req.execute, std::process::id());
        Starter {
            req,
            job,
            sandbox,
            user: None,
            may_log: false,
            link,
            withdrawn: Arc::default(),
            transfer: None,
        }
    }

    /// Whom the job runs as: its Owner when we are root (unknown users and
    /// root refused), else ourselves.
    fn resolve_user(&self, spec: &JobSpec) -> Result<Option<Account>, SetupError> {
        if !Uid::effective().is_root() {
            return Ok(None);
        }
        let Some(owner) = &spec.owner else {
            return Err(SetupError::NoOwner);
        };
        // The daemon's lookup when it made one for this name, else ours.
        let account = match self.req.owner.as_ref().filter(|a| &a.name == owner) {
            Some(a) => a.clone(),
            None => match User::from_name(owner) {
                Ok(Some(u)) => Account::from(u),
                Ok(None) => return Err(SetupError::UnknownOwner(owner.clone())),
                Err(e) => return Err(SetupError::OwnerLookup(owner.clone(), e)),
            },
        };
        if account.uid == 0 {
            return Err(SetupError::RootOwner(owner.clone()));
        }
        Ok(Some(account))
    }

    fn make_sandbox(&self) -> Result<(), SetupError> {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        let sandbox = &self.sandbox;
        match new_sandbox_dir(sandbox) {
            Ok(None) => {}
            Ok(Some(aside)) => log_line(&format!(
                "set aside a sandbox left by an earlier starter: {}",
                aside.display()
            )),
            Err(e) => return Err(SetupError::Sandbox(sandbox.clone(), e)),
        }
        // The mode again, in case the umask took from it.
        let _ = std::fs::set_permissions(sandbox, std::fs::Permissions::from_mode(0o700));
        let owner = self
            .user
            .as_ref()
            .map(|u| (Uid::from_raw(u.uid), Gid::from_raw(u.gid), &u.name));
        if let Some((uid, gid, name)) = owner {
            nix::unistd::chown(sandbox, Some(uid), Some(gid))
                .map_err(|e| SetupError::Chown(name.clone(), e))?;
        }
        let write = |name: &str, text: &str| {
            let p = sandbox.join(name);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&p)
                .and_then(|mut f| f.write_all(text.as_bytes()).map(|()| f))
                .map_err(|e| SetupError::Write(p.clone(), e))?;
            if let Some((uid, gid, _)) = owner {
                let _ = nix::unistd::fchown(&file, Some(uid), Some(gid));
            }
            Ok::<(), SetupError>(())
        };
        write(".job.ad", &ad_to_old(&self.job, OldOrder::Bytes))?;
        write(".machine.ad", &self.req.machine)?;
        Ok(())
    }

    /// The HTCondor variables every job and starter hook sees.
    fn condor_env(&self, iwd: &str) -> Vec<(String, String)> {
        let sb = self.sandbox.display().to_string();
        vec![
            ("BATCH_SYSTEM".into(), "HTCondor".into()),
            ("_CONDOR_SCRATCH_DIR".into(), sb.clone()),
            ("_CONDOR_JOB_AD".into(), format!("{sb}/.job.ad")),
            ("_CONDOR_MACHINE_AD".into(), format!("{sb}/.machine.ad")),
            ("_CONDOR_JOB_IWD".into(), iwd.to_string()),
            ("_CONDOR_SLOT".into(), self.req.slot.clone()),
            (
                "_CONDOR_EXECUTE".into(),
                self.req.execute.display().to_string(),
            ),
            ("_CONDOR_JOB_PIDS".into(), String::new()),
            ("_CHIRP_DELAYED_UPDATE_PREFIX".into(), "Chirp*".into()),
            ("TMPDIR".into(), sb.clone()),
            ("TMP".into(), sb.clone()),
            ("TEMP".into(), sb),
        ]
    }

    fn hook_run(&self, path: &Path, args: Vec<String>, stdin: String, timeout: u64) -> HookRun {
        let iwd = self.iwd();
        let ours = self.condor_env(&iwd);
        let inherited = (self.req.hook_env.vars())
            .filter(|(n, _)| !ours.iter().any(|(k, _)| std::ffi::OsStr::new(k) == *n));
        let ours = ours.iter().map(|(k, v)| (k.as_ref(), v.as_ref()));
        let env = spawn::Environment::new(inherited.chain(ours));
        HookRun {
            path: path.to_path_buf(),
            args,
            stdin: stdin.into_bytes(),
            cwd: self.sandbox.clone(),
            env,
            user: self.user.as_ref().map(|u| (u.uid, u.gid)),
            timeout: Some(Duration::from_secs(timeout.max(1))),
            stdout_limit: self.req.stdout_limit,
            capture: None,
        }
    }

    /// A routine line for the log, written only when the daemon logs at
    /// debug level.
    fn debug(&self, msg: impl FnOnce() -> String) {
        if self.req.debug_log {
            log_line(&msg());
        }
    }

    fn iwd(&self) -> String {
        if self.transfer.is_some() {
            return self.sandbox.display().to_string();
        }
        match self.job.eval_attr("Iwd", &FixedEnv::new(0)) {
            Value::Str(s) if !s.is_empty() => s.to_string_lossy(),
            _ => self.sandbox.display().to_string(),
        }
    }

    async fn run(mut self) -> i32 {
        if let Some(lost) = self.req.lost.take() {
            self.record_lost(&lost);
            return 0;
        }
        // Nothing is done with the job before the daemon has this starter
        // in its log: a daemon that restarts without it has ended the
        // claim and told the fetcher.
        if let Err(why) = self.link.go().await {
            log_line(&format!("the job is not started: {why}"));
            return 0;
        }
        let code = self.work().await;
        self.link.finish().await;
        code
    }

    /// The job from its ad to JOB_EXIT.
    async fn work(&mut self) -> i32 {
        let spec = job_spec(&self.job);
        let user = match &spec {
            Ok(s) => self.resolve_user(s),
            Err(_) => Ok(None),
        };
        let prepared: Result<JobSpec, (String, &'static str)> = match (spec, user) {
            (Err(e), _) => Err((e.0, "evict")),
            (_, Err(e)) => Err((e.to_string(), "evict")),
            (Ok(s), Ok(u)) => {
                self.user = u;
                self.may_log = true;
                match self.make_sandbox() {
                    Ok(()) => Ok(s),
                    Err(e) => Err((e.to_string(), "evict")),
                }
            }
        };
        let spec = match prepared {
            Ok(s) => s,
            Err((reason, how)) => return self.not_started(&reason, how).await,
        };
        if let Err((reason, how, error)) = self.prepare_job().await {
            return self.not_started_as(&reason, how, &error).await;
        }
        // PREPARE_JOB may have changed the job.
        let spec = job_spec(&self.job).unwrap_or(spec);
        if let Some(code) = self.wait_for_deferral(spec.id).await {
            return code;
        }
        match self.inputs_here(spec).await {
            Ok(spec) => self.run_job(&spec).await,
            Err(code) => code,
        }
    }

    /// Waits for job `c.p`'s `DeferralTime` (HTCondor's deferred start): the
    /// exit code when the job is not to run after all — its time passed
    /// more than its `DeferralWindow` ago (held, as HTCondor holds it), or
    /// the daemon vacated it (or is gone) while it waited.
    async fn wait_for_deferral(&mut self, (c, p): (i64, i64)) -> Option<i32> {
        let secs = match super::job::deferral(&self.job, now()) {
            Deferral::Now => return None,
            Deferral::Missed => {
                let reason = "Job missed deferred execution time";
                let error = format!("Job {c}.{p} missed its execution time.");
                // HTCondor's hold code for it (MissedDeferredExecutionTime).
                self.job.insert_value("HoldReasonCode", 20);
                return Some(self.not_started_as(reason, "hold", &error).await);
            }
            Deferral::Wait(secs) => secs,
        };
        log_line(&format!("job deferred for {secs} seconds"));
        let until = tokio::time::Instant::now() + Duration::from_secs(secs);
        let (mut kill_at, mut abandoned) = (None, false);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until) => return None,
                heard = self.link.heard() => {
                    match self.command_of(heard, &mut kill_at, &mut abandoned) {
                        Command::SoftKill | Command::HardKill if abandoned => {
                            log_line("a daemon ended the claim while the job waited for its time");
                            self.cleanup();
                            return Some(0);
                        }
                        Command::SoftKill | Command::HardKill => {
                            return Some(
                                self.not_started("vacated while it waited for its deferral time", "evict")
                                    .await,
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// Writes to the job event log that the job's starter was lost (see
    /// [`Request::lost`]): the reason as a starter error and, when the job
    /// had started, its eviction.
    fn record_lost(&mut self, lost: &Lost) {
        let env = FixedEnv::new(0);
        let user = job_spec(&self.job)
            .map_err(|e| e.0)
            .and_then(|spec| self.resolve_user(&spec).map_err(|e| e.to_string()));
        match user {
            Ok(u) => self.user = u,
            Err(e) => return log_line(&format!("cannot write the job event log: {e}")),
        }
        let has_iwd = matches!(self.job.eval_attr("Iwd", &env), Value::Str(s) if !s.is_empty());
        let relative = matches!(self.job.eval_attr("StarterUserLog", &env),
            Value::Str(s) if !s.to_string_lossy().starts_with('/'));
        if relative && !has_iwd {
            return log_line("the job event log was in the lost starter's sandbox, which is gone");
        }
        self.may_log = true;
        self.user_log(|| Event::StarterError {
            host: self.execute_host(),
            message: lost.reason.clone(),
        });
        if lost.job_started {
            self.user_log(|| Event::Evicted {
                usage: Usage::default(),
            });
        }
    }

    /// Reports a job that never ran, still telling JOB_EXIT.
    async fn not_started(&self, reason: &str, how: &str) -> i32 {
        self.not_started_as(reason, how, reason).await
    }

    /// [`Self::not_started`], with the starter error the job event log
    /// gets when it differs from the reason JOB_EXIT hears.
    async fn not_started_as(&self, reason: &str, how: &str, error: &str) -> i32 {
        log_line(&format!("job not started: {reason}"));
        self.user_log(|| Event::StarterError {
            host: self.execute_host(),
            message: error.to_string(),
        });
        report(Report::NotStarted {
            reason: reason.to_string(),
        });
        let mut ad = self.job.clone();
        let (name, value) = if how == "hold" {
            ("HoldReason", reason)
        } else {
            ("VacateReason", reason)
        };
        ad.insert_value(name, Value::from(value));
        ad.insert_value("JobState", Value::from("Exited"));
        // JOB_EXIT runs in the sandbox, which may not exist yet.
        if !self.sandbox.exists()
            && let Err(e) = self.make_sandbox()
        {
            log_line(&e.to_string());
        }
        self.job_exit(&ad, how).await;
        self.cleanup();
        0
    }

    fn open_stdio(&self, spec: &JobSpec, iwd: &str) -> Result<[Stdio; 3], SetupError> {
        let mut out = [Stdio::Null, Stdio::Null, Stdio::Null];
        if spec.stdio.iter().all(Option::is_none) {
            return Ok(out);
        }
        // Files are opened with the job user's rights, so a job cannot
        // make the starter write where its owner may not.
        let guard = self.as_job_user()?;
        for (i, p) in spec.stdio.iter().enumerate().take(3) {
            let Some(p) = p else {
                continue;
            };
            let path = under(iwd, p);
            let f = if i == 0 {
                std::fs::File::open(&path)
            } else {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&path)
            };
            match f {
                Ok(f) => out[i] = Stdio::Fd(f.into()),
                Err(e) => return Err(SetupError::Stdio(["In", "Out", "Err"][i], path, e)),
            }
        }
        drop(guard);
        Ok(out)
    }

    async fn run_job(&mut self, spec: &JobSpec) -> i32 {
        let iwd = self.iwd();
        if self.job.lookup("Iwd").is_none() {
            self.job.insert_value("Iwd", Value::from(iwd.as_str()));
        }
        let [sin, sout, serr] = match self.open_stdio(spec, &iwd) {
            Ok(s) => s,
            Err(e) => return self.not_started(&e.to_string(), "evict").await,
        };
        let mut env = self.condor_env(&iwd);
        env.extend(self.req.device_env.iter().cloned());
        for (k, v) in &spec.env {
            env.retain(|(n, _)| n != k);
            env.push((k.clone(), v.clone()));
        }
        let cmd = under(&iwd, &spec.cmd);
        let mut c = spawn::Command::new(&cmd);
        c.args(&spec.args)
            .current_dir(&iwd)
            .envs(env)
            .stdin(sin)
            .stdout(sout)
            .stderr(serr)
            .process_group();
        c.core_limit(spec.core_limit.unwrap_or(u64::MAX));
        if let Some(u) = &self.user {
            c.user(u.uid, u.gid);
        }
        let cgroup = self.job_cgroup();
        let before = children_cpu();
        let started = Instant::now();
        let start_date = now();
        let spawned = match cgroup.as_ref().map(JobCgroup::open_dir) {
            // The job is born inside its cgroup.
            Some(Ok(dir)) => match c.cgroup(dir).spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                    // An older kernel: the starter steps into the cgroup
                    // for the spawn and out again when the guard goes.
                    let _inside = cgroup.as_ref().and_then(|cg| match cg.enter() {
                        Ok(g) => Some(g),
                        Err(e) => {
                            log_line(&format!("cannot enter the job's cgroup: {e}"));
                            None
                        }
                    });
                    c.spawn()
                }
                r => r,
            },
            Some(Err(e)) => {
                log_line(&format!("cannot open the job's cgroup: {e}"));
                c.spawn()
            }
            None => c.spawn(),
        };
        // The job has its own copies of its stdio files now.
        drop(c);
        let mut child = match spawned {
            Ok(ch) => ch,
            Err(e) => {
                remove_cgroup(cgroup);
                return self
                    .not_started(&format!("cannot execute {cmd}: {e}"), "evict")
                    .await;
            }
        };
        let track = Tracking {
            cgroup: cgroup.as_ref(),
            before,
        };
        let pid = child.id();
        self.debug(|| format!("job {}.{} started: pid {pid}", spec.id.0, spec.id.1));
        report(Report::JobStarted { pid });
        self.user_log(|| Event::Execute {
            host: self.execute_host(),
        });
        self.job.insert_value("JobPid", Value::Int(i64::from(pid)));
        self.job
            .insert_value("JobStartDate", Value::Int(start_date));

        let (first, every) = self.req.update_intervals;
        let every = every.max(1);
        let mut next_update = tokio::time::Instant::now() + Duration::from_secs(first.min(every));
        let mut suspended = false;
        let mut evicted = false;
        // Once the daemon has been gone for the orphan timeout, the job is
        // evicted; a daemon that refuses this starter has ended the claim
        // and told the fetcher, so the job is killed and no one is told.
        let mut kill_at: Option<tokio::time::Instant> = None;
        let mut abandoned = false;
        let group = Pid::from_raw(i32::try_from(pid).unwrap_or(0));
        let status = loop {
            tokio::select! {
                s = child.wait() => break s,
                heard = self.link.heard() => {
                    match self.command_of(heard, &mut kill_at, &mut abandoned) {
                        Command::Suspend if !suspended => {
                            track.signal(group, Signal::SIGSTOP);
                            suspended = true;
                            report(Report::Suspended { stopped: true });
                            let pids = track.usage(pid).4;
                            self.user_log(|| Event::Suspended { pids });
                        }
                        Command::Continue if suspended => {
                            track.signal(group, Signal::SIGCONT);
                            suspended = false;
                            report(Report::Suspended { stopped: false });
                            self.user_log(|| Event::Unsuspended);
                        }
                        Command::SoftKill => {
                            evicted = true;
                            let sig = Signal::try_from(spec.kill_sig).unwrap_or(Signal::SIGTERM);
                            track.signal(group, sig);
                            if suspended {
                                track.signal(group, Signal::SIGCONT);
                                suspended = false;
                            }
                        }
                        Command::HardKill => {
                            evicted = true;
                            track.kill(group);
                        }
                        _ => {}
                    }
                }
                () = async {
                    match kill_at {
                        Some(t) => tokio::time::sleep_until(t).await,
                        None => std::future::pending().await,
                    }
                } => {
                    kill_at = None;
                    log_line("the job did not leave in time: killing it");
                    track.kill(group);
                }
                () = tokio::time::sleep_until(next_update) => {
                    next_update += Duration::from_secs(every);
                    let state = if suspended { "Suspended" } else { "Running" };
                    self.update_job_info(pid, state, &track);
                }
            }
        };
        // Whatever the job left in its group or cgroup goes with it.
        track.kill(group);
        let exit = match status {
            Ok(s) => hooks::exit_of(s),
            Err(_) => Exit::Code(-1),
        };
        let duration = started.elapsed().as_secs_f64();
        let (withdrawn, how) = self.how_it_ended(evicted);
        self.debug(|| format!("job exited: {exit} ({how})"));
        report(Report::JobExited {
            exit: exit.clone(),
            how: how.to_string(),
            duration,
        });
        let mut ad = self.job.clone();
        publish_usage(&mut ad, pid, "Exited", &track);
        remove_cgroup(cgroup);
        match exit {
            Exit::Code(c) => {
                ad.insert_value("ExitBySignal", Value::Bool(false));
                ad.insert_value("ExitCode", Value::Int(i64::from(c)));
                ad.insert_value(
                    "ExitReason",
                    Value::from(format!("exited normally with status {c}").as_str()),
                );
            }
            Exit::Signal(s) => {
                ad.insert_value("ExitBySignal", Value::Bool(true));
                ad.insert_value("ExitSignal", Value::Int(i64::from(s)));
                ad.insert_value(
                    "ExitReason",
                    Value::from(format!("died on signal {s} ({})", signal_description(s)).as_str()),
                );
            }
        }
        ad.insert_value("JobDuration", Value::Real(duration));
        if let Some(w) = &withdrawn {
            ad.insert_value(w.reason_attr(), Value::from(w.reason.as_str()));
        }
        let (ad, how) = self.send_outputs(ad, how).await;
        let usage = usage_of(&ad);
        self.user_log(|| {
            if evicted {
                Event::Evicted { usage }
            } else {
                Event::Terminated {
                    end: match exit {
                        Exit::Code(c) => End::Exit(c),
                        Exit::Signal(s) => End::Signal(s),
                    },
                    usage,
                }
            }
        });
        if abandoned {
            log_line("the job was killed: a daemon ended its claim while the starter was away");
        } else {
            self.job_exit(&ad, how).await;
        }
        self.cleanup();
        0
    }

    /// What the job's loop does on what the link heard: the daemon's
    /// command; on no daemon for the orphan timeout, the soft kill, with
    /// the kill due after the vacate grace (`kill_at`); on a daemon that
    /// refuses the starter, the hard kill (`abandoned`: no one is told).
    fn command_of(
        &self,
        heard: Heard,
        kill_at: &mut Option<tokio::time::Instant>,
        abandoned: &mut bool,
    ) -> Command {
        match heard {
            Heard::Command(c) => c,
            Heard::Orphaned => {
                log_line(&format!(
                    "no daemon: evicting the job ({} s to leave)",
                    self.req.vacate_grace
                ));
                *kill_at =
                    Some(tokio::time::Instant::now() + Duration::from_secs(self.req.vacate_grace));
                Command::SoftKill
            }
            Heard::Abandoned(_) => {
                *abandoned = true;
                Command::HardKill
            }
        }
    }

    /// The job's own cgroup, if `BASE_CGROUP` asks for one and the machine
    /// allows it; else why not, in the starter's log.
    fn job_cgroup(&self) -> Option<JobCgroup> {
        let base = self.req.cgroup_base.as_deref()?;
        let name = super::cgroup_name(&self.req.slot, std::process::id());
        let home = match &self.req.cgroup_home {
            Some(h) => Ok(h.clone()),
            None => JobCgroup::own_home(),
        };
        match home.and_then(|h| JobCgroup::create(&h, base, &name)) {
            Ok(cg) => {
                self.debug(|| format!("the job runs in cgroup {}", cg.path.display()));
                Some(cg)
            }
            Err(e) => {
                log_line(&format!(
                    "no cgroup for the job ({e}): it is tracked by its process group"
                ));
                None
            }
        }
    }

    /// The execute host as the job event log names it.
    fn execute_host(&self) -> String {
        let reader = OldReader::default();
        for item in reader.read(self.req.machine.as_bytes()) {
            if let crate::classad::old::OldItem::Ad(a) = item
                && let Value::Str(m) = a.ad.eval_attr("Machine", &FixedEnv::new(0))
            {
                return format!("<{}>", m.to_string_lossy());
            }
        }
        "<localhost>".to_string()
    }

    /// Appends a record to the job event log the job ad names
    /// (`StarterUserLog`, relative to the Iwd; XML with
    /// `StarterUserLogUseXML`), as the job's user. A log that cannot be
    /// written is reported in the starter's log; the job goes on.
    /// The event is made only when there is a log to write it to (the
    /// execute host it may name comes from parsing the slot ad).
    fn user_log(&self, event: impl FnOnce() -> Event) {
        if !self.may_log {
            return;
        }
        let env = FixedEnv::new(0);
        let path = match self.job.eval_attr("StarterUserLog", &env) {
            Value::Str(s) if !s.is_empty() => under(&self.iwd(), &s.to_string_lossy()),
            _ => return,
        };
        let xml = matches!(
            self.job.eval_attr("StarterUserLogUseXML", &env),
            Value::Bool(true)
        );
        let id = match job_spec(&self.job) {
            Ok(s) => JobId {
                cluster: s.id.0,
                proc: s.id.1,
            },
            Err(_) => JobId {
                cluster: 1,
                proc: 0,
            },
        };
        let at = stamp_now();
        let event = event();
        let record = if xml {
            userlog::xml(id, at, &event)
        } else {
            userlog::text(id, at, &event)
        };
        if let Err(e) = self.append_as_user(Path::new(&path), record.as_bytes()) {
            log_line(&format!("the job event log: {e}"));
        }
    }

    /// Takes the job user's identity for file access until the guard is
    /// dropped (nothing to take when we are not root).
    fn as_job_user(&self) -> Result<Option<EffectiveUser>, SetupError> {
        self.user
            .as_ref()
            .map(|u| EffectiveUser::become_user(u.uid, u.gid))
            .transpose()
            .map_err(SetupError::Identity)
    }

    /// Appends bytes to a file with the job user's rights, in one write.
    fn append_as_user(&self, path: &Path, bytes: &[u8]) -> Result<(), SetupError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let guard = self.as_job_user()?;
        let write = |e| SetupError::Write(path.to_path_buf(), e);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o644)
            .open(path)
            .map_err(write)?;
        drop(guard);
        f.write_all(bytes).map_err(write)
    }

    /// How the job ended for JOB_EXIT: `exit` on its own; when it was
    /// killed, `evict`, or `remove` / `hold` if its fetcher withdrew it
    /// (with that withdrawal).
    fn how_it_ended(&self, killed: bool) -> (Option<Withdrawal>, &'static str) {
        let withdrawn = (self.withdrawn.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|_| killed);
        let how = match &withdrawn {
            Some(w) => w.how,
            None if killed => "evict",
            None => "exit",
        };
        (withdrawn, how)
    }

    fn cleanup(&self) {
        if let Err(e) = remove_sandbox(&self.sandbox) {
            log_line(&format!(
                "cannot remove sandbox {}: {e}",
                self.sandbox.display()
            ));
        }
    }
}

/// Makes the directory `sandbox` (mode 0700), and `EXECUTE` above it if
/// missing. One of that name already there was left by an earlier starter
/// with the same pid and not set aside: whatever is in it is not this
/// job's, so it is set aside now (returned) and a new one made.
fn new_sandbox_dir(sandbox: &Path) -> std::io::Result<Option<PathBuf>> {
    use std::io::ErrorKind;
    use std::os::unix::fs::DirBuilderExt;
    let make = || std::fs::DirBuilder::new().mode(0o700).create(sandbox);
    match make() {
        Ok(()) => Ok(None),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            (sandbox.parent().map_or(Ok(()), std::fs::create_dir_all))?;
            make().map(|()| None)
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            let aside = super::set_aside(sandbox)?;
            make().map(|()| Some(aside))
        }
        Err(e) => Err(e),
    }
}

/// Removes the sandbox. One that holds nothing but the ad files (the
/// common case) costs two unlinks and a rmdir; only one with more in it is
/// walked.
fn remove_sandbox(sandbox: &Path) -> std::io::Result<()> {
    for name in [".job.ad", ".machine.ad"] {
        let _ = std::fs::remove_file(sandbox.join(name));
    }
    match std::fs::remove_dir(sandbox) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => std::fs::remove_dir_all(sandbox),
    }
}

fn hook_report(
    hook: &str,
    args: Vec<String>,
    exit: Option<Exit>,
    timed_out: bool,
    outcome: &str,
    elapsed: f64,
) -> Report {
    Report::Hook {
        hook: hook.to_string(),
        args,
        exit,
        timed_out,
        outcome: outcome.to_string(),
        elapsed,
    }
}

/// A hook as HTCondor names it in messages: its file name.
fn hook_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Now, in the node's local time, for the job event log.
fn stamp_now() -> Stamp {
    Stamp::of(&jiff::Zoned::now().datetime())
}

fn log_stderr(hook: &str, out: &HookOutput) {
    for line in &out.stderr {
        log_line(&format!("{hook} stderr: {line}"));
    }
    if out.truncated {
        log_line(&format!("{hook}: stdout went past the limit and was cut"));
    }
}

/// Takes a user's identity for file access; gives it back when dropped.
struct EffectiveUser;

impl EffectiveUser {
    fn become_user(uid: u32, gid: u32) -> Result<EffectiveUser, nix::Error> {
        nix::unistd::setegid(Gid::from_raw(gid))?;
        if let Err(e) = nix::unistd::seteuid(Uid::from_raw(uid)) {
            let _ = nix::unistd::setegid(Gid::from_raw(0));
            return Err(e);
        }
        Ok(EffectiveUser)
    }
}

impl Drop for EffectiveUser {
    fn drop(&mut self) {
        let _ = nix::unistd::seteuid(Uid::from_raw(0));
        let _ = nix::unistd::setegid(Gid::from_raw(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("roost-sandbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_sandbox_is_made_new_and_a_leftover_one_is_set_aside() {
        use std::os::unix::fs::PermissionsExt;
        let execute = temp("new");
        let sandbox = execute.join("dir_4194301");
        // EXECUTE itself is made when missing.
        assert_eq!(new_sandbox_dir(&sandbox).expect("made"), None);
        let mode = std::fs::metadata(&sandbox)
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "no one else may enter: {mode:o}");
        // A leftover of an earlier starter with the same pid, holding a
        // link to a file outside, is not reused.
        std::fs::write(execute.join("outside"), "keep").expect("write");
        std::os::unix::fs::symlink(execute.join("outside"), sandbox.join(".job.ad"))
            .expect("symlink");
        let aside = new_sandbox_dir(&sandbox)
            .expect("made again")
            .expect("set aside");
        assert_eq!(aside, execute.join("dir_4194301.lost"));
        assert!(aside.join(".job.ad").is_symlink());
        assert_eq!(std::fs::read_dir(&sandbox).expect("list").count(), 0);
        let _ = std::fs::remove_dir_all(&execute);
    }

    #[test]
    fn a_sandbox_is_removed_with_whatever_the_job_left_and_not_what_it_links_to() {
        let execute = temp("remove");
        let sandbox = execute.join("dir_4194302");
        // Only the ad files: no listing needed.
        new_sandbox_dir(&sandbox).expect("made");
        std::fs::write(sandbox.join(".job.ad"), "Cmd = \"x\"\n").expect("write");
        std::fs::write(sandbox.join(".machine.ad"), "").expect("write");
        remove_sandbox(&sandbox).expect("removed");
        assert!(!sandbox.exists());
        // A tree, and an ad file replaced by a link to a file outside.
        new_sandbox_dir(&sandbox).expect("made");
        std::fs::create_dir_all(sandbox.join("a/b")).expect("mkdir");
        std::fs::write(sandbox.join("a/b/c"), "x").expect("write");
        std::fs::write(execute.join("outside"), "keep").expect("write");
        std::os::unix::fs::symlink(execute.join("outside"), sandbox.join(".machine.ad"))
            .expect("symlink");
        remove_sandbox(&sandbox).expect("removed");
        assert!(!sandbox.exists());
        assert_eq!(
            std::fs::read_to_string(execute.join("outside")).expect("outside"),
            "keep"
        );
        // Gone already: nothing to do.
        remove_sandbox(&sandbox).expect("nothing to remove");
        let _ = std::fs::remove_dir_all(&execute);
    }
}
