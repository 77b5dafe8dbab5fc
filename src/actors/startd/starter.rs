//! A starter as an actor: runs one `roost starter` process for a claim,
//! hands it the job, tells it to go once it is durably in the log,
//! forwards the slot's commands, records what it reports in the event log,
//! tells it it may leave once every report is durable, and tells the slot
//! when it has gone. After a restart, an actor of the same name waits for
//! a starter of the last run to call again ([`StarterActor::reattach`]).

use std::rc::Rc;
use std::time::Duration;

use actix::prelude::*;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tracing::{error, info, warn};

use super::messages::{Attach, SlotInput, StarterPids, deliver};
use super::shared::Shared;
use crate::events::Event;
use crate::hooks::{self, Exit};
use crate::policy::engine::Input;
use crate::spawn::Stdio;
use crate::spawn::process::Process;
use crate::startd::StarterEvent;
use crate::startd::replay::OpenStarter;
use crate::starter::cgroup::JobCgroup;
use crate::starter::gone::{self, Gone as Ending, Seen};
use crate::starter::link::read_leftover;
use crate::starter::protocol::{Attached, Command, Lost, Report, Request, leftover_file};

/// How long a starter of the last run, alive at the restart, has to call
/// the daemon again before it is taken for lost (it calls every second).
pub const REATTACH_WAIT: Duration = Duration::from_secs(30);

/// [`Command::Go`] as the line a starter reads.
const GO_LINE: &str = "\"Go\"";

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

/// A starter of the last run did not call in time, or its process ended.
#[derive(Message)]
#[rtype(result = "()")]
struct Missing;

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
    /// When the starter process started (clock ticks after boot; 0: not
    /// known).
    started_at: u64,
    job_pid: Option<u32>,
    /// The starter reported that the job's process ended.
    job_ended: bool,
    /// The starter reported running JOB_EXIT: the fetcher has heard.
    job_exit_heard: bool,
    /// The starter said it has nothing more to report.
    done: bool,
    /// `BASE_CGROUP` and the name of the job's cgroup the starter makes
    /// there (`<slot>.<starter pid>`), when it makes one.
    cgroup: Option<(String, String)>,
    /// The `EXECUTE` directory, where the starter makes the job's sandbox.
    execute: std::path::PathBuf,
    /// The request again, kept when the job names a job event log: if the
    /// starter is lost, another starter records that there.
    note: Option<Request>,
    commands: Option<mpsc::UnboundedSender<String>>,
    /// Commands held until the starter has been told to go (`None`: told).
    held: Option<Vec<Command>>,
    /// A starter of the last run: its process, the reports the log already
    /// holds, and whether it has called.
    old: Option<OldStarter>,
}

/// What an actor taking a starter of the last run knows of it.
struct OldStarter {
    process: Option<Rc<Process>>,
    /// Reports of it the log holds; a hello repeats them first.
    known: usize,
    attached: bool,
}

/// The event the daemon records for a starter's report (`None`:
/// [`Report::Done`], which is not recorded).
pub(super) fn recorded(report: Report) -> Option<StarterEvent> {
    Some(match report {
        Report::JobStarted { pid } => StarterEvent::JobStarted { pid },
        Report::NotStarted { reason } => StarterEvent::JobNotStarted { reason },
        Report::Hook {
            hook,
            args,
            exit,
            timed_out,
            outcome,
            elapsed,
        } => StarterEvent::Hook {
            hook,
            args,
            exit,
            timed_out,
            outcome,
            elapsed,
        },
        Report::Suspended { stopped } => StarterEvent::Suspended { stopped },
        Report::JobExited {
            exit,
            how,
            duration,
        } => StarterEvent::JobExited {
            exit,
            how,
            duration,
        },
        Report::Warning { message } => StarterEvent::Warning { message },
        Report::Withdrawn { how, reason } => StarterEvent::Withdrawn { how, reason },
        Report::Done => return None,
    })
}

impl StarterActor {
    /// Starts a starter for `claim` of slot `slot_id`, reporting to `slot`.
    pub fn launch(
        shared: &Rc<Shared>,
        slot: StarterOwner,
        slot_id: &str,
        claim: u64,
        job_label: String,
        mut request: Request,
    ) -> Addr<StarterActor> {
        let id = format!("{slot_id}/starter/{}", shared.next_id());
        request.actor.clone_from(&id);
        StarterActor {
            shared: Rc::clone(shared),
            id,
            slot,
            slot_id: slot_id.to_string(),
            claim,
            job: job_label,
            execute: request.execute.clone(),
            note: request.names_user_log().then(|| request.clone()),
            request: Some(request),
            pid: 0,
            started_at: 0,
            job_pid: None,
            job_ended: false,
            job_exit_heard: false,
            done: false,
            cgroup: None,
            commands: None,
            held: Some(Vec::new()),
            old: None,
        }
        .start()
    }

    /// Takes `open`, a starter of the last run still alive at the restart
    /// (actor `id` in that run), for its slot: it is expected to call
    /// within [`REATTACH_WAIT`]; if it does not, or its process ends
    /// first, it is lost.
    pub fn reattach(
        shared: &Rc<Shared>,
        slot: StarterOwner,
        id: &str,
        open: &OpenStarter,
    ) -> Addr<StarterActor> {
        let settings = shared.settings();
        StarterActor {
            shared: Rc::clone(shared),
            id: id.to_string(),
            slot,
            slot_id: open.slot.clone(),
            claim: open.claim,
            job: open.job.clone(),
            execute: shared.dirs.execute.clone(),
            note: None,
            request: None,
            pid: open.pid,
            started_at: open.started,
            job_pid: open.job_pid,
            job_ended: false,
            job_exit_heard: open.told,
            done: false,
            cgroup: settings
                .base_cgroup
                .clone()
                .map(|base| (base, crate::starter::cgroup_name(&open.slot, open.pid))),
            commands: None,
            // Until it has called.
            held: Some(Vec::new()),
            old: Some(OldStarter {
                process: None,
                known: usize::try_from(open.reports).unwrap_or(usize::MAX),
                attached: false,
            }),
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

    /// Writes a command line to the starter.
    fn send(&self, c: Command) {
        if let Some(tx) = &self.commands {
            let _ = tx.send(serde_json::to_string(&c).unwrap_or_default());
        }
    }

    /// Tells the starter to go, then the commands held until then.
    fn go(&mut self) {
        self.send(Command::Go);
        for c in self.held.take().unwrap_or_default() {
            self.send(c);
        }
    }

    /// Starts a task that writes each command line to `out`.
    fn writer(&mut self, mut out: impl tokio::io::AsyncWrite + Unpin + 'static) {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        self.commands = Some(tx);
        actix::spawn(async move {
            while let Some(mut line) = rx.recv().await {
                if line == GO_LINE {
                    // After the request and the durable `Spawned`.
                    crate::failpoint::hit("before-go");
                }
                line.push('\n');
                if out.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
                let _ = out.flush().await;
            }
        });
    }

    /// Spawns the starter process for the request and hands it the job.
    fn spawn_new(&mut self, request: Request, ctx: &mut Context<Self>) {
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
        self.started_at = crate::starter::process_started(self.pid).unwrap_or(0);
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
        // The starter waits for its go until it is durably in the log, so
        // a daemon restarted from the log knows every starter that may run
        // a job.
        // Recorded in its place among what the daemon does now (before
        // REPLY_FETCH's start), and made durable before the go.
        self.record(StarterEvent::Spawned {
            slot: self.slot_id.clone(),
            claim: self.claim,
            pid: self.pid,
            job: self.job.clone(),
            started: self.started_at,
        });
        let durable = self.shared.append_later(&self.id, Vec::new());
        ctx.spawn(durable.into_actor(self).map(|r, act, _| match r {
            Ok(_) => act.go(),
            // The daemon stops on a log that cannot be written; the
            // starter, never told to go, leaves without running the job.
            Err(e) => warn!(message = "Cannot record the starter; it is not told to go.",
                slot = %act.slot_id, error = %e),
        }));
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
        if let Some(stdin) = child.stdin.take() {
            self.writer(stdin);
            if !rest.is_empty()
                && let Some(tx) = &self.commands
            {
                // The writer adds the newline the rest already ends with.
                let _ = tx.send(rest.trim_end_matches('\n').to_string());
            }
        }
        crate::failpoint::hit("starter-spawned");
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

    /// Waits for the starter of the last run to call (the daemon's start
    /// batch recorded it as this run's): opens its process, and takes it
    /// for lost when it ends or does not call in time.
    fn await_call(&mut self, ctx: &mut Context<Self>) {
        let Some(old) = self.old.as_mut() else {
            return;
        };
        // Its `Starter.Reattached` is in the daemon's start batch.
        self.slot.pids.do_send(StarterPids {
            starter: self.pid,
            job: self.job_pid,
        });
        let process = match Process::open(self.pid, self.started_at) {
            Ok(p) => p.map(Rc::new),
            Err(e) => {
                warn!(message = "Cannot watch a starter of the last run.", pid = self.pid,
                    error = %e);
                None
            }
        };
        let me = ctx.address();
        match &process {
            Some(p) => {
                let p = Rc::clone(p);
                actix::spawn(async move {
                    tokio::select! {
                        () = p.exited() => {}
                        () = tokio::time::sleep(REATTACH_WAIT) => {}
                    }
                    me.do_send(Missing);
                });
                (self.shared.waiting).ready(self.pid, ctx.address().recipient());
                info!(message = "Waiting for a starter of the last run to call.",
                    slot = %self.slot_id, claim = self.claim, pid = self.pid);
            }
            None => me.do_send(Missing),
        }
        old.process = process;
    }

    /// Handles one report: records it as an event and follows the job.
    fn take_report(&mut self, r: Report, ctx: &mut Context<Self>) {
        // The job has started (or will not): a good moment to start the
        // spare that the next job will use.
        let refill = matches!(r, Report::JobStarted { .. } | Report::NotStarted { .. });
        match &r {
            Report::JobStarted { pid } => {
                self.job_pid = Some(*pid);
                self.slot.pids.do_send(StarterPids {
                    starter: self.pid,
                    job: Some(*pid),
                });
                info!(message = "Job started.", slot = %self.slot_id, pid);
            }
            Report::NotStarted { reason } => {
                warn!(message = "Job not started.", slot = %self.slot_id, reason = %reason);
            }
            Report::Hook { hook, .. } => self.job_exit_heard |= hook == "JOB_EXIT",
            Report::JobExited { exit, how, .. } => {
                info!(message = "Job exited.", slot = %self.slot_id, exit = %exit, how = %how);
                self.job_ended = true;
            }
            Report::Warning { message } => {
                warn!(message = "Starter warning.", slot = %self.slot_id, warning = %message);
            }
            Report::Suspended { .. } => {}
            Report::Withdrawn { how, reason } => {
                info!(message = "The fetcher withdrew the job; vacating it.",
                    slot = %self.slot_id, how = %how, reason = %reason);
                deliver(
                    &self.slot.exited,
                    SlotInput(Input::JobWithdrawn(reason.clone())),
                    "the fetcher's withdrawal",
                );
            }
            Report::Done => {
                // The starter leaves once all it reported is durable.
                self.done = true;
                let durable = self.shared.append_later(&self.id, Vec::new());
                ctx.spawn(durable.into_actor(self).map(|r, act, _| {
                    if r.is_ok() {
                        act.send(Command::Bye);
                    }
                }));
            }
        }
        let Some(e) = recorded(r) else {
            return;
        };
        self.record(e);
        if refill {
            self.shared
                .starters
                .refill(self.shared.settings().spare_starters);
        }
    }
}

impl Actor for StarterActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        match self.request.take() {
            Some(request) => self.spawn_new(request, ctx),
            None => self.await_call(ctx),
        }
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

    fn handle(&mut self, Line(r): Line, ctx: &mut Context<Self>) {
        self.take_report(r, ctx);
    }
}

impl Handler<Attach> for StarterActor {
    type Result = ();

    fn handle(&mut self, Attach { hello, stream }: Attach, ctx: &mut Context<Self>) {
        let Some(old) = self.old.as_mut().filter(|o| !o.attached) else {
            return;
        };
        let answer = hello.answer();
        let mut line = serde_json::to_string(&answer).unwrap_or_default();
        line.push('\n');
        let (read, mut write) = stream.into_split();
        if matches!(answer, Attached::Abandon { .. }) {
            warn!(message = "A starter of the last run speaks a protocol this daemon does not take.",
                slot = %self.slot_id, pid = self.pid, protocol = hello.protocol, build = %hello.build);
            actix::spawn(async move {
                let _ = write.write_all(line.as_bytes()).await;
            });
            // It kills its job and leaves; its end is seen as a loss.
            return;
        }
        old.attached = true;
        let known = old.known;
        let process = old.process.clone();
        info!(message = "A starter of the last run called: its job goes on.",
            slot = %self.slot_id, claim = self.claim, pid = self.pid, build = %hello.build,
            protocol = hello.protocol, reports = hello.reports.len());
        // The welcome goes first; commands follow it through the writer.
        self.writer(write);
        if let Some(tx) = &self.commands {
            let _ = tx.send(line.trim_end_matches('\n').to_string());
        }
        for r in hello.reports.into_iter().skip(known) {
            self.take_report(r, ctx);
        }
        if hello.go {
            for c in self.held.take().unwrap_or_default() {
                self.send(c);
            }
        } else {
            // Told nothing before its daemon went: its claim goes on.
            self.go();
        }
        let me = ctx.address();
        let slot = self.slot_id.clone();
        actix::spawn(async move {
            forward_reports(read, &me, &slot).await;
            if let Some(p) = process {
                p.exited().await;
            }
            // Not this daemon's child: its exit status is not known.
            let _ = me.send(Gone(Exit::Code(-1))).await;
        });
    }
}

impl Handler<Missing> for StarterActor {
    type Result = ();

    fn handle(&mut self, _: Missing, ctx: &mut Context<Self>) {
        let Some(old) = self.old.as_ref().filter(|o| !o.attached) else {
            return;
        };
        self.shared.waiting.forget(self.pid);
        let alive = old.process.clone();
        let known = old.known;
        // It may have left, its orphan timeout run out, with reports no
        // daemon heard (its job's end, JOB_EXIT told): they count.
        let dir = self.shared.dirs.starter_leftovers();
        if alive.is_none()
            && let Some(hello) = read_leftover(&dir, &self.id, self.pid, self.started_at)
        {
            info!(message = "A starter of the last run left what it reported with no daemon.",
                slot = %self.slot_id, claim = self.claim, pid = self.pid);
            for r in hello.reports.into_iter().skip(known) {
                self.take_report(r, ctx);
            }
            let _ = std::fs::remove_file(leftover_file(&dir, &self.id));
        }
        warn!(message = "A starter of the last run did not call again; its job is lost.",
            slot = %self.slot_id, claim = self.claim, pid = self.pid,
            running = alive.is_some());
        if let Some(p) = alive {
            let _ = p.signal(Signal::SIGKILL as i32);
        }
        ctx.notify(Gone(Exit::Code(-1)));
    }
}

impl Handler<Gone> for StarterActor {
    type Result = ();

    /// Decide (`starter::gone`), record `Starter.Exited` durably, then act:
    /// a lost starter's job is killed and cleaned up after, and the slot
    /// told. Nothing is acted on unrecorded: when the append fails, the
    /// log's writer stops the daemon, and its next run reconciles the
    /// starter from the log.
    fn handle(&mut self, Gone(exit): Gone, ctx: &mut Context<Self>) {
        let seen = Seen {
            done: self.done,
            job_exit_heard: self.job_exit_heard,
            job_ended: self.job_ended,
            job_pid: self.job_pid,
            user_log: self.note.is_some(),
        };
        let gone = gone::decide(&exit, &seen);
        if gone.lost {
            warn!(message = "Starter lost before JOB_EXIT.", slot = %self.slot_id,
                starter = self.pid, exit = %exit, job_pid = ?self.job_pid);
        }
        let event = Event::Starter(StarterEvent::Exited {
            exit: exit.clone(),
            lost: gone.lost,
        });
        let durable = self.shared.append_later(&self.id, vec![event]);
        ctx.wait(durable.into_actor(self).map(move |done, act, ctx| {
            if let Err(e) = done {
                error!(message = "Cannot record the starter's end; not acting on it.",
                    starter = %act.id, error = %e);
                ctx.stop();
                return;
            }
            act.after_gone(gone, &exit);
            ctx.stop();
        }));
    }
}

impl StarterActor {
    /// Carries out what the starter's recorded end calls for.
    fn after_gone(&mut self, gone: Ending, exit: &Exit) {
        if let Some(p) = gone.kill_job.and_then(|p| i32::try_from(p).ok()) {
            let _ = killpg(Pid::from_raw(p), Signal::SIGKILL);
        }
        // What left the job's process group is still in its cgroup.
        if gone.clean_cgroup
            && let Some(cg) = self
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
        if gone.remove_sandbox {
            self.remove_sandbox();
        }
        if gone.note_in_user_log {
            self.note_in_user_log(exit);
        }
        let input = if gone.lost {
            Input::StarterLost
        } else {
            Input::StarterExited
        };
        deliver(&self.slot.exited, SlotInput(input), "the starter's end");
        self.shared
            .starters
            .refill(self.shared.settings().spare_starters);
    }
}

impl Handler<StarterCmd> for StarterActor {
    type Result = ();

    fn handle(&mut self, cmd: StarterCmd, _: &mut Context<Self>) {
        match cmd {
            StarterCmd::Send(c) => match self.held.as_mut() {
                Some(held) => held.push(c),
                None => self.send(c),
            },
            StarterCmd::KillAll => {
                if let Some(p) = self.old.as_ref().and_then(|o| o.process.as_ref()) {
                    let _ = p.signal(Signal::SIGKILL as i32);
                }
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_go_line_is_how_the_go_command_is_written() {
        let go = serde_json::to_string(&super::Command::Go).expect("json");
        assert_eq!(go, super::GO_LINE);
    }
}
