//! `roost schedd`'s actor: the job queue. Each request is decided by the
//! pure queue (`schedd::queue`), its events applied at once (so the next
//! request sees them) and handed to the log's writer; the caller is
//! answered only once they are durable. A log that cannot be written
//! stops the daemon (its restart replays what was written), so no caller
//! is told of a change the log does not hold.
//!
//! The socket's server (`serve`) reads each caller's Unix credentials:
//! they name the user a request acts as.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use tracing::{info, warn};

use crate::actors::common::clock::Clock;
use crate::actors::common::cron::CronManager;
use crate::actors::common::cron_host::{ScheddCronSetup, ScheddHost};
use crate::actors::common::socket::{RequestError, answer, read_request, serve_log};
use crate::admin::Response;
use crate::classad::old::parse_ad_auto;
use crate::classad::unparse::ad_to_string;
use crate::classad::{ClassAd, FixedEnv, Limits, parse_ad};
use crate::events::{Appender, SledReader};
use crate::schedd::ad::Identity;
use crate::schedd::event::{JobEvent, JobId, ScheddEvent};
use crate::schedd::protocol::{Action, ScheddRequest};
use crate::schedd::queue::{Command, Job, Queue, QueueError, Reservations, SubmitCtx};
use crate::schedd::router::{Logged, Router, RouterConfig, RouterHook};

/// The longest request the schedd reads: a submission of about 30,000
/// jobs of condor_submit's size.
pub const MAX_SUBMIT: usize = 64 << 20;

/// What the queue's actor is configured with.
#[derive(Clone, Debug)]
pub struct ScheddSettings {
    /// `SCHEDD_NAME` (default the host's name): in `GlobalJobId`.
    pub name: String,
    /// `UID_DOMAIN`: `User` is `owner@domain`.
    pub domain: String,
    /// How long a handed-out job may wait for its node's REPLY_FETCH
    /// (`ROOST_QUEUE_FETCH_LEASE`, seconds).
    pub lease: i64,
    /// `QUEUE_SUPER_USERS`: who may act on any job and fetch work (with
    /// the daemon's own user and root).
    pub super_users: Vec<String>,
    /// `ROOST_SCHEDD_HISTORY_JOBS`: how many jobs that left the queue
    /// `roost history` shows (the log keeps them all).
    pub history_jobs: usize,
    /// `ROOST_QUEUE_MAX_START_FAILURES`: nodes failing to start a job
    /// this many times in a row put it on hold.
    pub max_start_failures: i64,
    /// `PERIODIC_EXPR_INTERVAL` (seconds, default 60): how often every
    /// job's `PeriodicHold`, `PeriodicRelease` and `PeriodicRemove` are
    /// evaluated (`schedd::policy`).
    pub periodic_interval: u64,
    /// The concurrency limits' maxima (`<NAME>_LIMIT`,
    /// `CONCURRENCY_LIMIT_DEFAULT[_<scope>]`): a job is handed out only
    /// while its `ConcurrencyLimits` have room.
    pub concurrency: crate::schedd::limits::Limits,
    /// `ROOST_SCHEDD_TRANSFER_ADDRESS`: where the file server listens
    /// (`None`: no file server; jobs whose files travel wait).
    pub transfer: Option<String>,
}

/// The router's configuration with what running its hooks needs.
#[derive(Clone, Debug)]
pub struct RouterSettings {
    /// What the pure router decides with.
    pub cfg: RouterConfig,
    /// `JOB_ROUTER_POLLING_PERIOD`.
    pub period: Duration,
    /// The hooks' paths, by (keyword in upper case, hook).
    pub paths: HashMap<(String, RouterHook), PathBuf>,
    /// A hook running longer is killed and counts as failed
    /// (`ROOST_ROUTER_HOOK_TIMEOUT`; HTCondor has none).
    pub hook_timeout: Duration,
    /// The hooks' environment (the daemon's).
    pub env: crate::spawn::Environment,
    /// Their working directory.
    pub cwd: PathBuf,
}

/// The queue's actor.
pub struct ScheddActor {
    pub(super) queue: Queue,
    appender: Appender<ScheddEvent>,
    pub(super) clock: Arc<dyn Clock>,
    /// The jobs the job router manages.
    pub(super) router: Router,
    /// The router's configuration; `None`: no routes, no routing.
    pub(super) routing: Option<Arc<RouterSettings>>,
    /// Routed jobs whose hook was asked for and has neither started nor
    /// ended yet (once started, the router's state says it runs).
    pub(super) hooks_asked: HashSet<JobId>,
    /// The routed jobs' actors, started when a job first needs a hook.
    pub(super) routed_jobs: HashMap<JobId, Addr<super::route_job::RoutedJobActor>>,
    settings: ScheddSettings,
    /// Where the file server is reached (`host:port`), told to the node of
    /// each job whose files travel.
    pub(super) transfer_address: Option<String>,
    /// Cluster numbers given to `new_cluster` and not yet submitted to.
    reserved: Reservations,
    /// Uid → user name, as looked up.
    users: HashMap<u32, String>,
    me: u32,
    /// Who the schedd is, for its ad.
    pub(super) identity: Identity,
    /// Schedd cron, until it starts.
    pub(super) cron_setup: Option<ScheddCronSetup>,
    /// Schedd cron's host and manager, once started.
    pub(super) cron: Option<(
        std::rc::Rc<ScheddHost>,
        crate::actors::common::latest::Publisher<crate::classad::ClassAd>,
        Addr<CronManager>,
    )>,
    /// The pool the schedd publishes its ad in (`ROOST_POOL_ETCD`).
    pub(super) pool: Option<crate::pool::PoolSettings>,
    /// The thread publishing it, once started.
    pub(super) publisher: Option<crate::pool::publish::Publisher>,
    /// The jobs' user logs' writer, and the submit host their records name.
    user_logs: Option<(super::userlog::UserLogs, String)>,
}

/// A request from the socket, with its caller's uid.
#[derive(Message)]
#[rtype(result = "Response")]
pub struct Call {
    /// What.
    pub request: ScheddRequest,
    /// Who.
    pub uid: u32,
}

impl ScheddActor {
    /// The actor over `queue` (replayed from the log).
    pub fn new(
        (queue, router): (Queue, Router),
        appender: Appender<ScheddEvent>,
        clock: Arc<dyn Clock>,
        (settings, identity): (ScheddSettings, Identity),
        routing: Option<RouterSettings>,
    ) -> ScheddActor {
        let mut queue = queue;
        queue.max_start_failures = settings.max_start_failures;
        ScheddActor {
            identity,
            cron_setup: None,
            cron: None,
            pool: None,
            publisher: None,
            queue,
            appender,
            clock,
            router,
            routing: routing.map(Arc::new),
            hooks_asked: HashSet::new(),
            routed_jobs: HashMap::new(),
            settings,
            transfer_address: None,
            user_logs: None,
            reserved: Reservations::default(),
            users: HashMap::new(),
            me: nix::unistd::geteuid().as_raw(),
        }
    }

    /// Tells the nodes of jobs whose files travel that they are served at
    /// `address`.
    #[must_use]
    pub fn with_transfer(mut self, address: Option<String>) -> ScheddActor {
        self.transfer_address = address;
        self
    }

    /// Writes the jobs' user logs with `logs`, their submit records naming
    /// `submit_host`.
    #[must_use]
    pub fn with_user_logs(
        mut self,
        logs: super::userlog::UserLogs,
        submit_host: String,
    ) -> ScheddActor {
        self.user_logs = Some((logs, submit_host));
        self
    }

    fn user(&mut self, uid: u32) -> String {
        self.users
            .entry(uid)
            .or_insert_with(
                || match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
                    Ok(Some(u)) => u.name,
                    _ => format!("uid{uid}"),
                },
            )
            .clone()
    }

    fn is_super(&mut self, uid: u32) -> bool {
        uid == 0 || uid == self.me || {
            let name = self.user(uid);
            self.settings.super_users.contains(&name)
        }
    }

    /// Applies `events` and answers `ok` once they are durable.
    pub(super) fn commit(
        &mut self,
        events: Vec<JobEvent>,
        ok: Response,
    ) -> ResponseFuture<Response> {
        self.commit_logged(events.into_iter().map(Logged::Job).collect(), ok)
    }

    /// [`ScheddActor::commit`] of the queue's and the router's events.
    pub(super) fn commit_logged(
        &mut self,
        events: Vec<Logged>,
        ok: Response,
    ) -> ResponseFuture<Response> {
        if events.is_empty() {
            return Box::pin(async move { ok });
        }
        let mut records = Vec::new();
        let batch: Vec<(i64, String, ScheddEvent)> = events
            .into_iter()
            .map(|e| match e {
                Logged::Job(e) => {
                    // A job's records are made from the job as it was,
                    // but a new job's from the job as submitted.
                    let submitted = matches!(e, JobEvent::Submitted { .. });
                    if let Some((_, host)) = &self.user_logs
                        && !submitted
                    {
                        let job = self.queue.jobs.get(&e.id());
                        records.extend(super::userlog::records(&e, job, None, host));
                    }
                    self.queue.apply(&e);
                    if let Some((_, host)) = &self.user_logs
                        && submitted
                    {
                        let ad = self.queue.jobs.get(&e.id()).map(|j| &j.ad);
                        records.extend(super::userlog::records(&e, None, ad, host));
                    }
                    (e.at(), e.id().actor(), ScheddEvent::Job(e))
                }
                Logged::Route(e) => {
                    self.router.apply_now(&e);
                    (e.at(), e.actor(), ScheddEvent::Route(e))
                }
            })
            .collect();
        let durable = self.appender.append_later(batch);
        let logged = self
            .user_logs
            .as_mut()
            .and_then(|(l, _)| l.pending(records));
        Box::pin(async move {
            match durable.await {
                Ok(_) => {
                    if let Some(logged) = logged {
                        logged.done();
                    }
                    ok
                }
                Err(e) => Response::refused(format!("the event log could not be written: {e}")),
            }
        })
    }

    fn submit(
        &mut self,
        uid: u32,
        ads: &[String],
        cluster: Option<i64>,
    ) -> ResponseFuture<Response> {
        let now = self.clock.now();
        let mut parsed = Vec::with_capacity(ads.len());
        for (i, text) in ads.iter().enumerate() {
            match parse_ad(text) {
                Ok(ad) => parsed.push(ad),
                Err(e) => return refuse(format!("job ad {i} does not parse: {e}")),
            }
        }
        let cluster = match self.reserved.cluster_for(&self.queue, uid, cluster) {
            Ok(c) => c,
            Err(e) => return refuse(e.to_string()),
        };
        let owner = self.user(uid);
        let ctx = SubmitCtx {
            at: now,
            owner: &owner,
            domain: &self.settings.domain,
            schedd: &self.settings.name,
        };
        match self.queue.submit(ctx, parsed, Some(cluster)) {
            Ok(events) => {
                self.reserved.used(cluster);
                let n = events.len();
                info!(message = "Jobs submitted.", cluster, jobs = n, owner = %owner);
                let mut ok = Response::done(format!("{n} job(s) submitted to cluster {cluster}."));
                ok.last_seq = Some(u64::try_from(cluster).unwrap_or(0));
                self.commit(events, ok)
            }
            Err(e) => refuse(e.to_string()),
        }
    }

    fn query(
        &self,
        targets: &crate::schedd::queue::Targets,
        history: bool,
        limit: Option<usize>,
    ) -> Response {
        let env = FixedEnv::new(self.clock.now());
        let c = match targets.compiled() {
            Ok(c) => c,
            Err(e) => return Response::refused(e.to_string()),
        };
        let limit = limit.unwrap_or(usize::MAX);
        let ads: Vec<String> = if history {
            self.queue
                .history
                .iter()
                .rev()
                .filter(|ad| targets.matches(ad, c.as_ref(), &env))
                .take(limit)
                .map(ad_to_string)
                .collect()
        } else {
            self.queue
                .jobs
                .values()
                .filter(|j| targets.matches(&j.ad, c.as_ref(), &env))
                .take(limit)
                .map(|j| ad_to_string(&j.ad))
                .collect()
        };
        Response {
            ads,
            ..Response::done("")
        }
    }

    fn act(
        &mut self,
        uid: u32,
        action: Action,
        targets: &crate::schedd::queue::Targets,
        reason: Option<String>,
    ) -> ResponseFuture<Response> {
        if targets.is_empty() {
            return refuse("name jobs, users, a constraint or -all".into());
        }
        let user = self.user(uid);
        let owner = (!self.is_super(uid)).then(|| user.clone());
        let reason = reason.unwrap_or_else(|| action.default_reason(&user));
        let cmd = match action {
            Action::Hold => Command::Hold,
            Action::Release => Command::Release,
            Action::Remove => Command::Remove,
        };
        let env = FixedEnv::new(self.clock.now());
        let now = self.clock.now();
        match self
            .queue
            .command(now, cmd, targets, &reason, owner.as_deref(), &env)
        {
            Ok(out) => {
                let mut lines: Vec<String> = out
                    .events
                    .iter()
                    .map(|e| format!("Job {} {}", e.id(), action.past()))
                    .collect();
                lines.extend(
                    out.skipped
                        .iter()
                        .map(|(id, why)| format!("Job {id} not {}: {why}", action.past())),
                );
                if lines.is_empty() {
                    return refuse("no job matches".into());
                }
                info!(message = "Jobs changed by command.", action = ?action, jobs = out.events.len(), user = %user);
                let ok = if out.events.is_empty() {
                    Response::refused(lines.join("\n"))
                } else {
                    Response::done(lines.join("\n"))
                };
                self.commit(out.events, ok)
            }
            Err(e) => refuse(e.to_string()),
        }
    }

    fn fetch(&mut self, uid: u32, slot: &str) -> ResponseFuture<Response> {
        if !self.is_super(uid) {
            return refuse(format!(
                "permission denied: {} may not fetch work (QUEUE_SUPER_USERS)",
                self.user(uid)
            ));
        }
        let slot = match parse_ad_auto(slot.as_bytes(), &Limits::default()) {
            Ok(ad) => ad,
            Err(e) => return refuse(format!("the slot ad does not parse: {e}")),
        };
        let token = match token() {
            Ok(t) => t,
            Err(e) => return refuse(format!("cannot make a lease token: {e}")),
        };
        let now = self.clock.now();
        let env = FixedEnv::new(now);
        match self.queue.fetch(
            now,
            (&slot, &token),
            self.settings.lease,
            &self.settings.concurrency,
            &env,
        ) {
            Some((leased, mut ad)) => {
                if let Some(a) = &self.transfer_address
                    && crate::transfer::plan::may_travel(&ad)
                {
                    ad.insert_value(crate::transfer::ADDRESS_ATTR, a.as_str());
                }
                info!(message = "Job handed out.", job = %leased.id(), slot = ?slot_name(&slot));
                let ok = Response {
                    ads: vec![ad_to_string(&ad)],
                    ..Response::done("")
                };
                self.commit(vec![leased], ok)
            }
            None => Box::pin(async { Response::done("no idle job matches") }),
        }
    }

    fn report(&mut self, request: &ScheddRequest) -> ResponseFuture<Response> {
        let now = self.clock.now();
        // UPDATE_JOB_INFO is the node's word while the job runs: a job
        // removed or held here since is withdrawn in the answer, and the
        // node vacates it (`starter::withdraw`).
        let mut withdrawn = None;
        let (job, decided) = match request {
            ScheddRequest::Reply { job, token, accept } => (
                job,
                job.parse::<JobId>()
                    .and_then(|id| self.queue.reply(now, id, token, *accept)),
            ),
            ScheddRequest::Exit {
                job,
                token,
                how,
                ad,
            } => (
                job,
                job.parse::<JobId>().and_then(|id| {
                    let last = reported_ad(ad)?;
                    self.queue.exited(now, id, token, *how, &last)
                }),
            ),
            ScheddRequest::Update { job, token, ad } => (
                job,
                job.parse::<JobId>().and_then(|id| {
                    let now_ad = reported_ad(ad)?;
                    let events = self.queue.update(now, id, token, &now_ad)?;
                    withdrawn = self.queue.jobs.get(&id).and_then(Job::withdrawal);
                    Ok(events)
                }),
            ),
            ScheddRequest::EvictClaim { job, token } => (
                job,
                job.parse::<JobId>()
                    .and_then(|id| self.queue.evict_claim(now, id, token)),
            ),
            _ => return refuse("not a report".into()),
        };
        match decided {
            Ok(events) => {
                info!(message = "Node report.", job = %job, events = events.len());
                let answer = Response {
                    ads: withdrawn.iter().map(ad_to_string).collect(),
                    ..Response::done("")
                };
                self.commit(events, answer)
            }
            Err(e) => {
                warn!(message = "Node report refused.", job = %job, error = %e);
                refuse(e.to_string())
            }
        }
    }
}

fn refuse(message: String) -> ResponseFuture<Response> {
    Box::pin(async move { Response::refused(message) })
}

/// The job ad a hook sent (any syntax HTCondor writes).
fn reported_ad(text: &str) -> Result<ClassAd, QueueError> {
    parse_ad_auto(text.as_bytes(), &Limits::default()).map_err(|e| QueueError::BadAd {
        index: 0,
        message: format!("the job ad does not parse: {e}"),
    })
}

fn slot_name(slot: &ClassAd) -> Option<String> {
    match slot.eval_attr("Name", &FixedEnv::new(0)) {
        crate::classad::Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    }
}

/// A lease token: 128 random bits, in hex.
fn token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Actor for ScheddActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.start_router(ctx);
        self.start_cron(ctx);
        self.start_pool(ctx);
        let every = Duration::from_secs(self.settings.periodic_interval);
        ctx.run_interval(every, |me, ctx| {
            let now = me.clock.now();
            let fired = me.queue.periodic(now, &FixedEnv::new(now));
            for e in &fired {
                info!(message = "A job's periodic policy fired.", job = %e.id());
            }
            if !fired.is_empty() {
                let done = me.commit(fired, Response::done(""));
                ctx.spawn(actix::fut::wrap_future(async move {
                    let _ = done.await;
                }));
            }
        });
        ctx.run_interval(Duration::from_secs(1), |me, ctx| {
            me.refresh_cron_ad();
            let now = me.clock.now();
            if me.queue.next_expiry().is_some_and(|t| t <= now) {
                let expired = me.queue.expired(now);
                for e in &expired {
                    info!(message = "A lease ran out: the job is idle again.", job = %e.id());
                }
                let done = me.commit(expired, Response::done(""));
                ctx.spawn(actix::fut::wrap_future(async move {
                    let _ = done.await;
                }));
            }
        });
    }
}

impl Handler<Call> for ScheddActor {
    type Result = ResponseFuture<Response>;

    fn handle(&mut self, call: Call, _: &mut Context<Self>) -> ResponseFuture<Response> {
        match &call.request {
            ScheddRequest::NewCluster => {
                let c = self.reserved.reserve(&mut self.queue, call.uid);
                let mut r = Response::done(c.to_string());
                r.last_seq = Some(u64::try_from(c).unwrap_or(0));
                Box::pin(async move { r })
            }
            ScheddRequest::Submit { ads, cluster } => self.submit(call.uid, ads, *cluster),
            ScheddRequest::Query {
                targets,
                history,
                limit,
            } => {
                let r = self.query(targets, *history, *limit);
                Box::pin(async move { r })
            }
            ScheddRequest::Act {
                action,
                targets,
                reason,
            } => self.act(call.uid, *action, targets, reason.clone()),
            ScheddRequest::Ad => {
                let r = Response {
                    ads: vec![ad_to_string(&self.full_ad())],
                    ..Response::done("")
                };
                Box::pin(async move { r })
            }
            ScheddRequest::Fetch { slot } => self.fetch(call.uid, slot),
            ScheddRequest::Reply { .. }
            | ScheddRequest::Exit { .. }
            | ScheddRequest::Update { .. }
            | ScheddRequest::EvictClaim { .. } => self.report(&call.request),
            ScheddRequest::Log { .. } => refuse("the log is read by the socket's server".into()),
        }
    }
}

/// Serves the schedd's socket until the actor system stops.
pub async fn serve(
    listener: std::os::unix::net::UnixListener,
    queue: Addr<ScheddActor>,
    log: SledReader,
) {
    let listener = match tokio::net::UnixListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            warn!(message = "Cannot serve the schedd socket.", error = %e);
            return;
        }
    };
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                actix::spawn(connection(stream, queue.clone(), log.clone()));
            }
            Err(e) => {
                warn!(message = "Schedd socket accept failed.", error = %e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn connection(mut stream: tokio::net::UnixStream, queue: Addr<ScheddActor>, log: SledReader) {
    let request: Result<Option<ScheddRequest>, RequestError> =
        read_request(&mut stream, MAX_SUBMIT).await;
    let response = match (stream.peer_cred(), request) {
        (_, Ok(None)) => return,
        (Err(e), _) => Response::refused(format!("cannot identify the caller: {e}")),
        (Ok(c), Err(e)) => {
            warn!(message = "Schedd request refused.", uid = c.uid(), error = %e);
            Response::refused(e.to_string())
        }
        (Ok(_), Ok(Some(ScheddRequest::Log { from, actor, limit }))) => {
            serve_log(log, from, actor, limit).await
        }
        (Ok(c), Ok(Some(request))) => match queue
            .send(Call {
                request,
                uid: c.uid(),
            })
            .await
        {
            Ok(r) => r,
            Err(_) => Response::refused("the schedd is stopping"),
        },
    };
    answer(stream, &response).await;
}

/// Where the schedd keeps its event log, under `SPOOL`.
pub fn events_dir(spool: &std::path::Path) -> PathBuf {
    spool.join("roost-schedd-events")
}
