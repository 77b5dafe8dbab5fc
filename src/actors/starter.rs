//! A starter as an actor: runs one `roost starter` process for a claim,
//! hands it the job, forwards the slot's commands, records what it reports
//! in the event log, and tells the slot when it has gone.

use std::rc::Rc;

use actix::prelude::*;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tracing::{info, warn};

use super::hook::hook_timeout;
use super::messages::{SlotInput, StarterPids, deliver};
use super::shared::Shared;
use crate::classad::unparse::{OldOrder, ad_to_old};
use crate::classad::{ClassAd, FixedEnv, Value};
use crate::config::daemon_knobs::DaemonSettings;
use crate::events::{Event, StarterEvent};
use crate::hooks::{self, Exit};
use crate::policy::engine::Input;
use crate::spawn::Stdio;
use crate::starter::cgroup::JobCgroup;
use crate::starter::protocol::{Command, Lost, Report, Request, StarterHooks};

/// A command from the slot.
#[derive(Message)]
#[rtype(result = "()")]
pub enum StarterCmd {
    /// Pass this on to the starter.
    Send(Command),
    /// The starter did not go in time: kill it and the job.
    KillAll,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Line(Report);

#[derive(Message)]
#[rtype(result = "()")]
struct Gone(Exit);

/// Who a starter reports to: a slot, or the backfill manager.
pub struct StarterOwner {
    /// Hears [`Input::StarterExited`] when the starter has gone.
    pub exited: Recipient<SlotInput>,
    /// Hears the starter's and the job's pids.
    pub pids: Recipient<StarterPids>,
}

/// One starter process.
pub struct StarterActor {
    shared: Rc<Shared>,
    id: String,
    slot: StarterOwner,
    slot_id: String,
    claim: u64,
    job: String,
    request: Option<Request>,
    pid: u32,
    job_pid: Option<u32>,
    /// The starter reported that the job's process ended.
    job_ended: bool,
    /// The starter reported running JOB_EXIT: the fetcher has heard.
    job_exit_heard: bool,
    /// `BASE_CGROUP` and the name of the job's cgroup the starter makes
    /// there (`<slot>.<starter pid>`), when it makes one.
    cgroup: Option<(String, String)>,
    /// The `EXECUTE` directory, where the starter makes the job's sandbox.
    execute: std::path::PathBuf,
    /// The request again, kept when the job names a job event log: if the
    /// starter is lost, another starter records that there.
    note: Option<Request>,
    commands: Option<mpsc::UnboundedSender<String>>,
}

impl StarterActor {
    /// Starts a starter for `claim` of slot `slot_id`, reporting to `slot`.
    pub fn launch(
        shared: &Rc<Shared>,
        slot: StarterOwner,
        slot_id: &str,
        claim: u64,
        job_label: String,
        request: Request,
    ) -> Addr<StarterActor> {
        StarterActor {
            shared: Rc::clone(shared),
            id: format!("{slot_id}/starter/{}", shared.next_id()),
            slot,
            slot_id: slot_id.to_string(),
            claim,
            job: job_label,
            execute: request.execute.clone(),
            note: request.names_user_log().then(|| request.clone()),
            request: Some(request),
            pid: 0,
            job_pid: None,
            job_ended: false,
            job_exit_heard: false,
            cgroup: None,
            commands: None,
        }
        .start()
    }

    /// Removes the sandbox a lost starter left: set aside at once, deleted
    /// in the background.
    fn remove_sandbox(&self) {
        let sandbox = crate::starter::sandbox_dir(&self.execute, self.pid);
        if !sandbox.exists() {
            return;
        }
        match crate::starter::set_aside(&sandbox) {
            Ok(aside) => crate::starter::delete_in_background(vec![aside]),
            Err(e) => warn!(message = "Cannot remove a lost starter's sandbox.",
                slot = %self.slot_id, sandbox = %sandbox.display(), error = %e),
        }
    }

    /// Runs a starter that writes to the job event log that the job's
    /// starter was lost and the job is gone (the lost one cannot say so).
    fn note_in_user_log(&mut self, exit: &Exit) {
        let Some(mut request) = self.note.take() else {
            return;
        };
        let how = match exit {
            Exit::Signal(s) => format!("was killed by signal {s}"),
            Exit::Code(c) => format!("exited with status {c}"),
        };
        request.lost = Some(Lost {
            reason: format!(
                "The starter (pid {}) {how} before the job ended; the job was killed.",
                self.pid
            ),
            job_started: self.job_pid.is_some(),
        });
        let mut child = match self.shared.starters.command(Stdio::Null).spawn() {
            Ok(c) => c,
            Err(e) => {
                warn!(message = "Cannot start a starter to write the job event log.",
                    slot = %self.slot_id, error = %e);
                return;
            }
        };
        let mut line = serde_json::to_string(&request).unwrap_or_default();
        line.push('\n');
        let stdin = child.stdin.take();
        let stderr = child.stderr.take();
        let slot = self.slot_id.clone();
        actix::spawn(async move {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(line.as_bytes()).await;
            }
            if let Some(err) = stderr {
                log_lines(err, &slot).await;
            }
            let _ = child.wait().await;
        });
    }

    fn record(&self, e: StarterEvent) {
        if let Err(err) = self.shared.record(&self.id, vec![Event::Starter(e)]) {
            warn!(message = "Cannot record starter event.", starter = %self.id, error = %err);
        }
    }
}

impl Actor for StarterActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let Some(request) = self.request.take() else {
            return;
        };
        let spare = self.shared.starters.take_spare();
        let warm = spare.is_some();
        let spawned = match spare {
            Some(c) => Ok(c),
            None => self.shared.starters.command(Stdio::Piped).spawn(),
        };
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                warn!(message = "Cannot start the starter.", slot = %self.slot_id, error = %e);
                self.record(StarterEvent::JobNotStarted {
                    reason: format!(
                        "cannot start {}: {e}",
                        self.shared.starters.program.0.display()
                    ),
                });
                // No starter, no JOB_EXIT: EVICT_CLAIM tells the fetcher.
                deliver(
                    &self.slot.exited,
                    SlotInput(Input::StarterLost),
                    "the starter's end",
                );
                ctx.stop();
                return;
            }
        };
        self.pid = child.id();
        self.cgroup = request
            .cgroup_base
            .clone()
            .map(|base| (base, crate::starter::cgroup_name(&request.slot, self.pid)));
        self.slot.pids.do_send(StarterPids {
            starter: self.pid,
            job: None,
        });
        info!(message = "Starter spawned.", slot = %self.slot_id, claim = self.claim, pid = self.pid,
            spare = warm);
        self.record(StarterEvent::Spawned {
            slot: self.slot_id.clone(),
            claim: self.claim,
            pid: self.pid,
            job: self.job.clone(),
        });
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let mut first = serde_json::to_string(&request).unwrap_or_default();
        first.push('\n');
        // The request goes into the pipe at once (it fits the pipe's
        // buffer), so the starter does not wait for this thread's next
        // turn; whatever does not fit follows through the writer task.
        let written = child
            .stdin
            .as_ref()
            .and_then(|s| s.try_write(first.as_bytes()).ok())
            .unwrap_or(0);
        let rest = first.split_off(written.min(first.len()));
        self.commands = Some(tx);
        let pending = (!rest.is_empty()).then_some(rest);
        if let Some(mut stdin) = child.stdin.take() {
            actix::spawn(async move {
                if let Some(rest) = pending
                    && stdin.write_all(rest.as_bytes()).await.is_err()
                {
                    return;
                }
                while let Some(mut line) = rx.recv().await {
                    line.push('\n');
                    if stdin.write_all(line.as_bytes()).await.is_err() {
                        break;
                    }
                    let _ = stdin.flush().await;
                }
            });
        }
        let me = ctx.address();
        if let Some(err) = child.stderr.take() {
            let slot = self.slot_id.clone();
            actix::spawn(async move { log_lines(err, &slot).await });
        }
        // The reports and then the exit, in one task: every report the
        // starter wrote is handled before it is known to be gone (its exit
        // closes its stdout). Two tasks could hand over the exit first, and
        // the reports after it would be lost with the actor.
        let reports = child.stdout.take();
        let slot = self.slot_id.clone();
        actix::spawn(async move {
            if let Some(out) = reports {
                forward_reports(out, &me, &slot).await;
            }
            let exit = match child.wait().await {
                Ok(s) => hooks::exit_of(s),
                Err(_) => Exit::Code(-1),
            };
            let _ = me.send(Gone(exit)).await;
        });
    }
}

/// Hands each report line of a starter to its actor, until the starter's
/// stdout ends or the actor is gone.
async fn forward_reports(
    out: impl tokio::io::AsyncRead + Unpin,
    me: &Addr<StarterActor>,
    slot: &str,
) {
    let mut lines = BufReader::new(out).lines();
    while let Ok(Some(l)) = lines.next_line().await {
        match serde_json::from_str::<Report>(&l) {
            Ok(r) => {
                if me.send(Line(r)).await.is_err() {
                    return;
                }
            }
            Err(e) => warn!(message = "Starter said something unreadable.",
                slot = %slot, line = %l, error = %e),
        }
    }
}

impl Handler<Line> for StarterActor {
    type Result = ();

    fn handle(&mut self, Line(r): Line, _: &mut Context<Self>) {
        // The job has started (or will not): a good moment to start the
        // spare that the next job will use.
        let refill = matches!(r, Report::JobStarted { .. } | Report::NotStarted { .. });
        let e = match r {
            Report::JobStarted { pid } => {
                self.job_pid = Some(pid);
                self.slot.pids.do_send(StarterPids {
                    starter: self.pid,
                    job: Some(pid),
                });
                info!(message = "Job started.", slot = %self.slot_id, pid);
                StarterEvent::JobStarted { pid }
            }
            Report::NotStarted { reason } => {
                warn!(message = "Job not started.", slot = %self.slot_id, reason = %reason);
                StarterEvent::JobNotStarted { reason }
            }
            Report::Hook {
                hook,
                args,
                exit,
                timed_out,
                outcome,
            } => {
                self.job_exit_heard |= hook == "JOB_EXIT";
                StarterEvent::Hook {
                    hook,
                    args,
                    exit,
                    timed_out,
                    outcome,
                }
            }
            Report::Suspended { stopped } => StarterEvent::Suspended { stopped },
            Report::JobExited {
                exit,
                how,
                duration,
            } => {
                info!(message = "Job exited.", slot = %self.slot_id, exit = %exit, how = %how);
                self.job_ended = true;
                StarterEvent::JobExited {
                    exit,
                    how,
                    duration,
                }
            }
            Report::Warning { message } => {
                warn!(message = "Starter warning.", slot = %self.slot_id, warning = %message);
                StarterEvent::Warning { message }
            }
        };
        self.record(e);
        if refill {
            self.shared
                .starters
                .refill(self.shared.settings().spare_starters);
        }
    }
}

impl Handler<Gone> for StarterActor {
    type Result = ();

    fn handle(&mut self, Gone(exit): Gone, ctx: &mut Context<Self>) {
        // A starter that did not exit cleanly before running JOB_EXIT (it
        // was killed, ran out of memory, panicked) left its job unwatched
        // and the fetcher unaware: what is left of the job is killed, and
        // the slot ends the claim as lost (EVICT_CLAIM tells the fetcher).
        let lost = exit != Exit::Code(0) && !self.job_exit_heard;
        if lost {
            warn!(message = "Starter lost before JOB_EXIT.", slot = %self.slot_id,
                starter = self.pid, exit = %exit, job_pid = ?self.job_pid);
            if !self.job_ended
                && let Some(p) = self.job_pid.and_then(|p| i32::try_from(p).ok())
                && p > 0
            {
                let _ = killpg(Pid::from_raw(p), Signal::SIGKILL);
            }
            // What left the job's process group is still in its cgroup.
            if let Some(cg) = self
                .cgroup
                .as_ref()
                .zip(self.shared.cgroup_home.as_ref())
                .and_then(|((base, name), home)| JobCgroup::existing(home, base, name))
            {
                cg.kill_all();
                let slot = self.slot_id.clone();
                // Removing waits for the killed processes to go.
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = cg.remove() {
                        warn!(message = "Cannot remove a lost starter's cgroup.", slot = %slot,
                            error = %e);
                    }
                });
            }
            self.remove_sandbox();
            if !self.job_ended {
                self.note_in_user_log(&exit);
            }
        }
        self.record(StarterEvent::Exited { exit });
        let input = if lost {
            Input::StarterLost
        } else {
            Input::StarterExited
        };
        deliver(&self.slot.exited, SlotInput(input), "the starter's end");
        self.shared
            .starters
            .refill(self.shared.settings().spare_starters);
        ctx.stop();
    }
}

impl Handler<StarterCmd> for StarterActor {
    type Result = ();

    fn handle(&mut self, cmd: StarterCmd, _: &mut Context<Self>) {
        match cmd {
            StarterCmd::Send(c) => {
                if let Some(tx) = &self.commands {
                    let _ = tx.send(serde_json::to_string(&c).unwrap_or_default());
                }
            }
            StarterCmd::KillAll => {
                for pid in [self.job_pid, Some(self.pid)].into_iter().flatten() {
                    if let Ok(p) = i32::try_from(pid)
                        && p > 0
                    {
                        let _ = killpg(Pid::from_raw(p), Signal::SIGKILL);
                    }
                }
            }
        }
    }
}

/// Puts each line a starter writes on stderr (its log) in the daemon's.
async fn log_lines(err: impl tokio::io::AsyncRead + Unpin, slot: &str) {
    let mut lines = BufReader::new(err).lines();
    while let Ok(Some(l)) = lines.next_line().await {
        info!(target: "starter", slot = %slot, "{l}");
    }
}

/// What a starter is asked to do for `job`, with `hooks`, in slot `slot`,
/// whose ad is `machine`; `vacate_grace` is how long the job may take to
/// leave if the daemon goes away.
pub fn starter_request(
    shared: &Shared,
    settings: &DaemonSettings,
    slot: &str,
    job: &ClassAd,
    hooks: StarterHooks,
    machine: &ClassAd,
    vacate_grace: u64,
) -> Request {
    Request {
        slot: slot.to_string(),
        job: ad_to_old(job, OldOrder::Bytes),
        machine: ad_to_old(machine, OldOrder::Bytes),
        execute: shared.dirs.execute.clone(),
        hooks,
        update_intervals: settings.starter_update_intervals,
        hook_env: shared.hooks.env.clone(),
        stdout_limit: settings.pipe_buffer_max,
        vacate_grace,
        cgroup_base: settings.base_cgroup.clone(),
        cgroup_home: shared.cgroup_home.clone(),
        lost: None,
        owner: match job.eval_attr("Owner", &FixedEnv::new(0)) {
            Value::Str(o) if !o.is_empty() => shared.starters.account(
                &o.to_string_lossy(),
                shared.clock.now(),
                settings.passwd_cache_refresh,
            ),
            _ => None,
        },
        debug_log: tracing::enabled!(target: "starter", tracing::Level::DEBUG),
    }
}

fn defines_hooks(settings: &DaemonSettings, keyword: &str) -> bool {
    ["PREPARE_JOB", "UPDATE_JOB_INFO", "JOB_EXIT"]
        .iter()
        .any(|h| settings.hook_path(keyword, h).is_some())
}

/// The starter hooks for a job: `STARTER_JOB_HOOK_KEYWORD`, else the job's
/// `HookKeyword` when that keyword defines hooks, else
/// `STARTER_DEFAULT_JOB_HOOK_KEYWORD`. Paths that fail HTCondor's checks,
/// and arguments that do not split, are left out (and logged).
pub fn starter_hooks(settings: &DaemonSettings, job: &ClassAd) -> StarterHooks {
    let from_job = match job.eval_attr("HookKeyword", &FixedEnv::new(0)) {
        Value::Str(s) => Some(s.to_string_lossy()).filter(|k| defines_hooks(settings, k)),
        _ => None,
    };
    let keyword = (settings.starter_job_hook_keyword.clone())
        .or(from_job)
        .or_else(|| settings.starter_default_job_hook_keyword.clone());
    let Some(kw) = keyword else {
        return StarterHooks::default();
    };
    let checked = |hook: &str| {
        let p = settings.hook_path(&kw, hook)?.to_path_buf();
        match hooks::validate(&p) {
            Ok(()) => Some(p),
            Err(e) => {
                warn!(message = "Starter hook refused.", hook, error = %e);
                None
            }
        }
    };
    let args = settings.hook_args(&kw, "PREPARE_JOB").to_vec();
    let timeout = |hook: &str| hook_timeout(settings, &kw, hook);
    StarterHooks {
        prepare_job: checked("PREPARE_JOB"),
        prepare_job_args: args,
        update_job_info: checked("UPDATE_JOB_INFO"),
        job_exit: checked("JOB_EXIT"),
        timeouts: [
            timeout("PREPARE_JOB"),
            timeout("UPDATE_JOB_INFO"),
            timeout("JOB_EXIT"),
        ],
        keyword: Some(kw),
    }
}
