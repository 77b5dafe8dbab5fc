//! Golden bytes: one committed encoding of every event kind, as schema
//! version 1 writes it (new kinds go at the end of `samples`: each sample's
//! sequence number is its place). Each must keep decoding to the same event forever,
//! and today's encoder must still produce it (a change to an event's shape
//! needs a new schema version and an upcaster, not an edited fixture: see
//! "Changing a logged event" in ARCHITECTURE.md).
//! `ROOST_BLESS=1 cargo test events_golden` writes fixtures that are
//! missing; it never overwrites one.

use std::collections::BTreeMap;
use std::path::PathBuf;

use roost::cron::event::{CronEvent, CronJobState, PublishedAd};
use roost::cron::metrics::SlotUsage;
use roost::eventd::core::Ask;
use roost::eventd::event::EventdEvent;
use roost::events::{DaemonEvent, Envelope, Event, SCHEMA, decode, encode};
use roost::hooks::Exit;
use roost::policy::drain::{DrainHow, OnCompletion};
use roost::policy::node::{DrainEnd, DrainRecord, NodeEvent, NodeSnapshot, ShutdownCause};
use roost::policy::slot::{Activity, Claim, EndCause, Resources, Slot, SlotEvent, SlotKind, State};
use roost::startd::LostClaim;
use roost::startd::replay::{Handout, OpenHook, OpenStarter};
use roost::startd::{HookEvent, StarterEvent};

fn samples() -> Vec<(&'static str, Event)> {
    let claim = Claim::new(
        3,
        "[ ClusterId = 12; ProcId = 0; Owner = \"alice\" ]".into(),
        10.0,
        true,
        1_700_000_000,
    );
    let res = Resources {
        cpus: 1.0,
        memory_mb: 1024,
        disk_kb: 4096,
        custom: BTreeMap::from([("GPUs".to_string(), 1.0)]),
        ..Default::default()
    };
    let at = 1_700_000_100;
    let mut slot = Slot::with(
        "slot1",
        "node.example",
        at,
        SlotKind::Partitionable,
        res.clone(),
    );
    slot.children.insert(2);
    slot.total_time.insert("UnclaimedIdle".into(), 30);
    let mut leased = Claim::new(
        4,
        "[ Owner = \"bob\"; JobLeaseDuration = 120 ]".into(),
        0.0,
        false,
        1_700_000_000,
    );
    leased.lease = Some(120);
    leased.alive_at = Some(1_700_000_040);
    let mut in_backfill = Slot::new("slot2", "node.example", at);
    in_backfill.state = State::Backfill;
    in_backfill.activity = Activity::Killing;
    in_backfill.backfill = true;
    in_backfill.backfill_ending = true;
    in_backfill.matched_at = Some(at);
    let mut v = vec![
        (
            "slot-activity-changed",
            Event::Slot(SlotEvent::ActivityChanged {
                at,
                state: State::Claimed,
                activity: Activity::Busy,
                transition: roost::policy::slot::Transition::IdleToBusy,
                why: "starter spawned".into(),
            }),
        ),
        (
            "slot-fetch-started",
            Event::Slot(SlotEvent::FetchStarted {
                at,
                prompted_by: None,
            }),
        ),
        (
            "slot-fetch-completed",
            Event::Slot(SlotEvent::FetchCompleted { at }),
        ),
        (
            "slot-claim-created",
            Event::Slot(SlotEvent::ClaimCreated {
                at,
                claim: claim.clone(),
            }),
        ),
        (
            "slot-preempting-claim-queued",
            Event::Slot(SlotEvent::PreemptingClaimQueued {
                at,
                claim: claim.clone(),
            }),
        ),
        (
            "slot-claim-ending",
            Event::Slot(SlotEvent::ClaimEnding {
                at,
                cause: EndCause::BetterClaim,
            }),
        ),
        (
            "slot-claim-ending-cancelled",
            Event::Slot(SlotEvent::ClaimEndingCancelled { at }),
        ),
        (
            "slot-claim-ended",
            Event::Slot(SlotEvent::ClaimEnded {
                at,
                cause: EndCause::Restart,
            }),
        ),
        (
            "slot-job-started",
            Event::Slot(SlotEvent::JobStarted {
                at,
                pledged_vacate: 600,
            }),
        ),
        (
            "slot-job-suspended",
            Event::Slot(SlotEvent::JobSuspended { at }),
        ),
        (
            "slot-job-continued",
            Event::Slot(SlotEvent::JobContinued { at }),
        ),
        (
            "slot-starter-exited",
            Event::Slot(SlotEvent::StarterExited { at }),
        ),
        (
            "slot-dynamic-slot-created",
            Event::Slot(SlotEvent::DynamicSlotCreated {
                at,
                sub: 2,
                resources: res.clone(),
                claim,
            }),
        ),
        (
            "slot-dynamic-slot-returned",
            Event::Slot(SlotEvent::DynamicSlotReturned {
                at,
                sub: 2,
                resources: res,
            }),
        ),
        (
            "slot-slot-deleted",
            Event::Slot(SlotEvent::SlotDeleted { at }),
        ),
        ("slot-snapshot", Event::Slot(SlotEvent::snapshot(at, &slot))),
        (
            "hook-started",
            Event::Hook(HookEvent::Started {
                hook: "REPLY_FETCH".into(),
                slot: "slot1".into(),
                path: "/usr/libexec/hooks/reply".into(),
                args: vec!["accept".into()],
                pid: 4242,
                claim: Some(3),
            }),
        ),
        (
            "hook-finished",
            Event::Hook(HookEvent::Finished {
                exit: Exit::Code(0),
                timed_out: false,
                truncated: true,
                stdout_bytes: 10240,
                outcome: "job".into(),
                elapsed: 0.25,
                handout: None,
            }),
        ),
        (
            "hook-refused",
            Event::Hook(HookEvent::Refused {
                hook: "FETCH_WORK".into(),
                slot: "slot1".into(),
                path: "/tmp/fetch".into(),
                reason: "world-writable".into(),
            }),
        ),
        (
            "starter-spawned",
            Event::Starter(StarterEvent::Spawned {
                slot: "slot1_2".into(),
                claim: 3,
                pid: 5000,
                job: "12.0 alice".into(),
                started: 0,
            }),
        ),
        (
            "starter-job-started",
            Event::Starter(StarterEvent::JobStarted { pid: 5001 }),
        ),
        (
            "starter-job-not-started",
            Event::Starter(StarterEvent::JobNotStarted {
                reason: "no such user".into(),
            }),
        ),
        (
            "starter-hook",
            Event::Starter(StarterEvent::Hook {
                hook: "JOB_EXIT".into(),
                args: vec!["exit".into()],
                exit: Some(Exit::Signal(9)),
                timed_out: true,
                outcome: "killed at its timeout".into(),
                // Left out at 0: the schema-1 encoding.
                elapsed: 0.0,
            }),
        ),
        (
            "starter-suspended",
            Event::Starter(StarterEvent::Suspended { stopped: true }),
        ),
        (
            "starter-job-exited",
            Event::Starter(StarterEvent::JobExited {
                exit: Exit::Code(3),
                how: "exit".into(),
                duration: 12.5,
            }),
        ),
        (
            "starter-exited",
            Event::Starter(StarterEvent::Exited {
                exit: Exit::Code(0),
                lost: false,
            }),
        ),

        (
            "starter-warning",
            Event::Starter(StarterEvent::Warning {
                message: "PREPARE_JOB says: hi".into(),
            }),
        ),
        (
            "daemon-started",
            Event::Daemon(DaemonEvent::Started {
                version: "0.1.0".into(),
                pid: 77,
                host: "node.example".into(),
                slots: vec!["slot1@node.example".into()],
                boot: String::new(),
            }),
        ),
        (
            "daemon-reconciled",
            Event::Daemon(DaemonEvent::Reconciled {
                slot: "slot1".into(),
                what: "starter gone".into(),
            }),
        ),
        (
            "daemon-reconfigured",
            Event::Daemon(DaemonEvent::Reconfigured {
                ok: false,
                message: "line 3: bad".into(),
            }),
        ),
        (
            "daemon-command",
            Event::Daemon(DaemonEvent::Command {
                command: "drain graceful".into(),
            }),
        ),
        (
            "daemon-stopped",
            Event::Daemon(DaemonEvent::Stopped {
                why: "SIGTERM".into(),
            }),
        ),
        (
            "daemon-checkpoint",
            Event::Daemon(DaemonEvent::Checkpoint {
                run: Some((1_700_000_000, "node.example".into())),
                starters: BTreeMap::from([(
                    "starter:slot1:3".to_string(),
                    OpenStarter {
                        slot: "slot1".into(),
                        claim: 3,
                        pid: 4242,
                        job_pid: Some(4243),
                        job: "12.0 alice".into(),
                        since: 990,
                        started: 0,
                        reports: 0,
                        told: false,
                    },
                )]),
                hooks: BTreeMap::from([(
                    "hook:slot1:7".to_string(),
                    OpenHook {
                        hook: "FETCH_WORK".into(),
                        slot: "slot1".into(),
                        pid: 4300,
                        since: 995,
                    },
                )]),
                handouts: BTreeMap::new(),
                boot: String::new(),
                owed: BTreeMap::new(),
            }),
        ),
        (
            "slot-claim-created-with-lease",
            Event::Slot(SlotEvent::ClaimCreated { at, claim: leased }),
        ),
        (
            "slot-claim-ending-lease-expired",
            Event::Slot(SlotEvent::ClaimEnding {
                at,
                cause: EndCause::LeaseExpired,
            }),
        ),
        (
            "slot-match-received",
            Event::Slot(SlotEvent::MatchReceived { at }),
        ),
        (
            "slot-claim-alive",
            Event::Slot(SlotEvent::ClaimAlive { at }),
        ),
        (
            "slot-backfill-started",
            Event::Slot(SlotEvent::BackfillStarted { at }),
        ),
        (
            "slot-backfill-ending",
            Event::Slot(SlotEvent::BackfillEnding { at }),
        ),
        (
            "slot-backfill-exited",
            Event::Slot(SlotEvent::BackfillExited { at }),
        ),
        (
            "slot-snapshot-in-backfill",
            Event::Slot(SlotEvent::snapshot(at, &in_backfill)),
        ),
        (
            "daemon-backfill",
            Event::Daemon(DaemonEvent::Backfill {
                what: "client started (pid 4400)".into(),
            }),
        ),
        (
            "slot-preempting-claim-dropped",
            Event::Slot(SlotEvent::PreemptingClaimDropped { at }),
        ),
        (
            "slot-claim-ending-starter-lost",
            Event::Slot(SlotEvent::ClaimEnding {
                at,
                cause: EndCause::StarterLost,
            }),
        ),
        (
            "node-drain-started",
            Event::Node(NodeEvent::DrainStarted {
                at,
                request_id: 2,
                how: DrainHow::Graceful,
                reason: "kernel update".into(),
                start: Some("TARGET.Short =?= true".into()),
                on_completion: OnCompletion::Resume,
            }),
        ),
        (
            "node-drain-progress",
            Event::Node(NodeEvent::DrainProgress {
                at,
                request_id: 2,
                all_drained: true,
            }),
        ),
        (
            "node-drain-completed",
            Event::Node(NodeEvent::DrainCompleted {
                at,
                request_id: 2,
                then: OnCompletion::Restart,
            }),
        ),
        (
            "node-drain-ended",
            Event::Node(NodeEvent::DrainEnded {
                at,
                request_id: 2,
                why: DrainEnd::Cancelled,
            }),
        ),
        (
            "node-shutdown-began",
            Event::Node(NodeEvent::ShutdownBegan {
                at,
                how: DrainHow::Peaceful,
                restart: true,
                cause: ShutdownCause::DrainCompleted,
            }),
        ),
        (
            "node-shutdown-completed",
            Event::Node(NodeEvent::ShutdownCompleted { at, restart: false }),
        ),
        (
            "node-vacate-asked",
            Event::Node(NodeEvent::VacateAsked {
                at,
                slots: vec!["slot1".into(), "slot2".into()],
                fast: true,
            }),
        ),
        (
            "node-slot-created",
            Event::Node(NodeEvent::SlotCreated {
                at,
                slot: "slot1_2".into(),
                parent: "slot1".into(),
            }),
        ),
        (
            "node-slot-deleted",
            Event::Node(NodeEvent::SlotDeleted {
                at,
                slot: "slot1_2".into(),
            }),
        ),
        (
            "node-snapshot",
            Event::Node(NodeEvent::Snapshot {
                at,
                node: NodeSnapshot {
                    drain: Some(DrainRecord {
                        how: DrainHow::Quick,
                        shutdown: false,
                        reason: "by command".into(),
                        start: None,
                        request_id: 3,
                        started: at - 60,
                        on_completion: OnCompletion::Exit,
                        all_drained: true,
                        completed: false,
                        restart: false,
                    }),
                    last_request: 3,
                    drain_times: (at - 60, at - 600),
                },
            }),
        ),
        (
            "starter-spawned-with-start-time",
            Event::Starter(StarterEvent::Spawned {
                slot: "slot1".into(),
                claim: 4,
                pid: 5002,
                job: "13.0 alice".into(),
                started: 123_456,
            }),
        ),
        (
            "starter-reattached",
            Event::Starter(StarterEvent::Reattached {
                slot: "slot1".into(),
                claim: 4,
                pid: 5002,
                started: 123_456,
                job: "13.0 alice".into(),
                job_pid: Some(5003),
                reports: 2,
                told: false,
            }),
        ),
        (
            "hook-finished-with-a-handout",
            Event::Hook(HookEvent::Finished {
                exit: Exit::Code(0),
                timed_out: false,
                truncated: false,
                stdout_bytes: 40,
                outcome: "job ad with 2 attributes".into(),
                elapsed: 0.01,
                handout: Some("[ ClusterId = 13; ProcId = 0 ]".into()),
            }),
        ),
        (
            "daemon-checkpoint-with-handouts",
            Event::Daemon(DaemonEvent::Checkpoint {
                run: Some((1_700_000_000, "node.example".into())),
                starters: BTreeMap::from([(
                    "slot1/starter/3".to_string(),
                    OpenStarter {
                        slot: "slot1".into(),
                        claim: 3,
                        pid: 4242,
                        job_pid: Some(4243),
                        job: "12.0 alice".into(),
                        since: 990,
                        started: 123_456,
                        reports: 3,
                        told: true,
                    },
                )]),
                hooks: BTreeMap::new(),
                handouts: BTreeMap::from([(
                    "slot2".to_string(),
                    Handout {
                        job: "[ ClusterId = 14; ProcId = 0 ]".into(),
                        since: 996,
                        claim: Some(("slot2_1".into(), 5)),
                    },
                )]),
                boot: String::new(),
                owed: BTreeMap::new(),
            }),
        ),
        (
            "daemon-started-in-a-boot",
            Event::Daemon(DaemonEvent::Started {
                version: "0.1.0".into(),
                pid: 78,
                host: "node.example".into(),
                slots: vec!["slot1@node.example".into()],
                boot: "0b1c6f4e-3d2a-4a51-9c1e-5f0e8e2d7a10".into(),
            }),
        ),
        (
            "daemon-checkpoint-in-a-boot",
            Event::Daemon(DaemonEvent::Checkpoint {
                run: Some((1_700_000_000, "node.example".into())),
                starters: BTreeMap::new(),
                hooks: BTreeMap::new(),
                handouts: BTreeMap::new(),
                boot: "0b1c6f4e-3d2a-4a51-9c1e-5f0e8e2d7a10".into(),
                owed: BTreeMap::new(),
            }),
        ),
        (
            "daemon-loss-owed",
            Event::Daemon(DaemonEvent::LossOwed { lost: lost_claim() }),
        ),
        (
            "daemon-loss-untold",
            Event::Daemon(DaemonEvent::LossUntold {
                teller: "slot1".into(),
                claim: 4,
                why: "the slot has no EVICT_CLAIM hook".into(),
            }),
        ),
        (
            "daemon-checkpoint-with-owed",
            Event::Daemon(DaemonEvent::Checkpoint {
                run: Some((1_700_000_000, "node.example".into())),
                starters: BTreeMap::new(),
                hooks: BTreeMap::new(),
                handouts: BTreeMap::new(),
                boot: String::new(),
                owed: BTreeMap::from([("slot1_1#4".to_string(), lost_claim())]),
            }),
        ),
        (
            "cron-started",
            Event::Cron(CronEvent::Started {
                path: "/usr/libexec/health".into(),
                args: vec!["--quick".into()],
                pid: 4242,
                started: 0,
            }),
        ),
        (
            "cron-published",
            Event::Cron(CronEvent::Published {
                ads: vec![PublishedAd {
                    name: "health.gpu".into(),
                    ad: "[ NodeHealthy = true; SlotId = 2 ]".into(),
                }],
                problems: vec!["line 3: cannot read it".into()],
                usage: Vec::new(),
            }),
        ),
        (
            "cron-ended",
            Event::Cron(CronEvent::Ended {
                exit: Exit::Signal(15),
                killed: Some("timeout".into()),
                elapsed: 2.5,
                stdout_bytes: 120,
            }),
        ),
        (
            "cron-refused",
            Event::Cron(CronEvent::Refused {
                path: "/nowhere".into(),
                reason: "cannot run it".into(),
            }),
        ),
        (
            "cron-snapshot",
            Event::Cron(CronEvent::Snapshot {
                state: CronJobState {
                    ads: vec![PublishedAd {
                        name: "health".into(),
                        ad: "[ NodeHealthy = false ]".into(),
                    }],
                    last_start: Some(1_700_000_000),
                    last_end: Some(1_700_000_001),
                    running: None,
                    runs: 3,
                    ..Default::default()
                },
            }),
        ),
        (
            "slot-dynamic-slot-created-with-devices",
            Event::Slot(SlotEvent::DynamicSlotCreated {
                at,
                sub: 3,
                resources: Resources {
                    cpus: 1.0,
                    memory_mb: 1024,
                    disk_kb: 4096,
                    custom: BTreeMap::from([("GPUs".to_string(), 1.0)]),
                    ids: BTreeMap::from([("GPUs".to_string(), vec!["CUDA1".to_string()])]),
                },
                claim: Claim::new(4, "[ ClusterId = 13 ]".into(), 0.0, true, 1_700_000_000),
            }),
        ),
        (
            "cron-published-usage",
            Event::Cron(CronEvent::Published {
                ads: vec![PublishedAd {
                    name: "gpus_monitor.CUDA0".into(),
                    ad: "[ SlotMergeConstraint = StringListMember(\"CUDA0\",AssignedGPUs); UptimeGPUsSeconds = 4.5 ]".into(),
                }],
                problems: Vec::new(),
                usage: vec![SlotUsage {
                    slot: "slot1".into(),
                    job_start: Some(1_700_000_050),
                    sums: vec![("GPUs".into(), 4.5)],
                    peaks: vec![("GPUsMemory".into(), 1024.0)],
                }],
            }),
        ),
    ];
    v.extend(job_samples());
    v.extend(route_samples());
    // A run of empty polls (the quiet idle node).
    v.push((
        "slot-fetches-empty",
        Event::Slot(SlotEvent::FetchesEmpty {
            at: at + 299,
            first: at,
            last_started: at + 298,
            count: 150,
            hook_seconds: 1.5,
        }),
    ));
    v.extend(eventd_samples());
    v.push((
        "starter-exited-lost",
        Event::Starter(StarterEvent::Exited {
            exit: Exit::Signal(9),
            lost: true,
        }),
    ));
    v.push((
        "route-hook-started",
        Event::Route(roost::schedd::router::RouteEvent::HookStarted {
            at: 1_700_000_300,
            src: roost::schedd::event::JobId {
                cluster: 12,
                proc: 0,
            },
            hook: roost::schedd::router::RouterHook::Finalize,
            pid: 4242,
            started: 987_654,
        }),
    ));
    v.push((
        "starter-withdrawn",
        Event::Starter(StarterEvent::Withdrawn {
            how: "remove".into(),
            reason: "via roost rm (by user alice)".into(),
        }),
    ));
    v.push((
        "slot-claim-ended-withdrawn",
        Event::Slot(SlotEvent::ClaimEnded {
            at: 1_700_000_400,
            cause: EndCause::Withdrawn,
        }),
    ));
    v.push((
        "job-exited-requeued",
        Event::Job(roost::schedd::event::JobEvent::Exited {
            at: 1_700_000_500,
            id: roost::schedd::event::JobId {
                cluster: 12,
                proc: 0,
            },
            code: Some(1),
            signal: None,
            reason: None,
            duration: Some(5),
            on_exit: Some(roost::schedd::event::OnExit::Requeued),
        }),
    ));
    v.push((
        "job-exited-held",
        Event::Job(roost::schedd::event::JobEvent::Exited {
            at: 1_700_000_500,
            id: roost::schedd::event::JobId {
                cluster: 12,
                proc: 1,
            },
            code: Some(2),
            signal: None,
            reason: None,
            duration: Some(5),
            on_exit: Some(roost::schedd::event::OnExit::Held {
                reason: "The job attribute OnExitHold expression 'ExitCode != 0' evaluated to TRUE"
                    .into(),
            }),
        }),
    ));
    v.push((
        "job-transferred",
        Event::Job(roost::schedd::event::JobEvent::Transferred {
            at: 1_700_000_450,
            id: roost::schedd::event::JobId {
                cluster: 12,
                proc: 0,
            },
            stage: roost::userlog::Stage::InputFinished,
        }),
    ));
    v
}

/// The schedd's job router events.
fn route_samples() -> Vec<(&'static str, Event)> {
    use roost::schedd::event::JobId;
    use roost::schedd::router::{RouteEvent, RouterHook};
    let src = JobId {
        cluster: 12,
        proc: 3,
    };
    let at = 1_700_000_300;
    vec![
        (
            "route-claimed",
            Event::Route(RouteEvent::Claimed {
                at,
                src,
                route: "Local".into(),
            }),
        ),
        (
            "route-hook-ran",
            Event::Route(RouteEvent::HookRan {
                at,
                src,
                hook: RouterHook::Translate,
                exit: "exit code 0".into(),
                outcome: "the routed copy is the hook's ad".into(),
            }),
        ),
        (
            "route-submitted",
            Event::Route(RouteEvent::Submitted {
                at,
                src,
                dest: JobId {
                    cluster: 13,
                    proc: 0,
                },
            }),
        ),
        (
            "route-finished",
            Event::Route(RouteEvent::Finished { at, src }),
        ),
        (
            "route-ending",
            Event::Route(RouteEvent::Ending {
                at,
                src,
                done: true,
                why: "finalized".into(),
            }),
        ),
        (
            "route-retired",
            Event::Route(RouteEvent::Retired { at, src }),
        ),
    ]
}

/// The schedd's queue events.
fn job_samples() -> Vec<(&'static str, Event)> {
    use roost::schedd::event::{JobEvent, JobId, LeaseEnd};
    let id = JobId {
        cluster: 12,
        proc: 3,
    };
    let at = 1_700_000_200;
    vec![
        (
            "job-submitted",
            Event::Job(JobEvent::Submitted {
                at,
                id,
                ad: "[ ClusterId = 12; ProcId = 3; JobStatus = 1; Cmd = \"/bin/true\" ]".into(),
            }),
        ),
        (
            "job-leased",
            Event::Job(JobEvent::Leased {
                at,
                id,
                slot: "slot1@node.example".into(),
                token: "00112233445566778899aabbccddeeff".into(),
                until: at + 300,
            }),
        ),
        (
            "job-lease-ended",
            Event::Job(JobEvent::LeaseEnded {
                at,
                id,
                why: LeaseEnd::Expired,
            }),
        ),
        (
            "job-started",
            Event::Job(JobEvent::Started {
                at,
                id,
                slot: "slot1@node.example".into(),
            }),
        ),
        (
            "job-exited",
            Event::Job(JobEvent::Exited {
                at,
                id,
                code: Some(3),
                signal: None,
                reason: Some("exited normally with status 3".into()),
                duration: Some(42),
                on_exit: None,
            }),
        ),
        (
            "job-evicted-not-started",
            Event::Job(JobEvent::Evicted {
                at,
                id,
                duration: None,
                not_started: Some("Owner \"root\" is root".into()),
            }),
        ),
        (
            "job-held",
            Event::Job(JobEvent::Held {
                at,
                id,
                reason: "via roost hold (by user alice)".into(),
                code: 1,
                subcode: 0,
            }),
        ),
        (
            "job-released",
            Event::Job(JobEvent::Released {
                at,
                id,
                reason: "via roost release (by user alice)".into(),
            }),
        ),
        (
            "job-removed",
            Event::Job(JobEvent::Removed {
                at,
                id,
                reason: "via roost rm (by user alice)".into(),
            }),
        ),
        (
            "job-updated",
            Event::Job(JobEvent::Updated {
                at,
                id,
                attrs: vec![("JobPrio".into(), "5".into())],
            }),
        ),
    ]
}

/// The eventd's events: those a log written before requests were
/// recorded holds, and today's.
fn eventd_samples() -> Vec<(&'static str, Event)> {
    let e = |x: EventdEvent| Event::Eventd(x);
    let event = || "Nightly".to_string();
    vec![
        (
            "eventd-activated",
            e(EventdEvent::Activated {
                event: event(),
                start: 1_700_003_600,
                end: 1_700_007_200,
                needed: 30,
            }),
        ),
        (
            "eventd-configured",
            e(EventdEvent::Configured {
                event: event(),
                machine: "n1@pool".into(),
                until: 1_700_007_200,
                answer: "configuration re-read".into(),
                ok: true,
            }),
        ),
        (
            "eventd-vacated",
            e(EventdEvent::Vacated {
                event: event(),
                slot: "slot1@n1@pool".into(),
                answer: "vacating 1 slot(s)".into(),
                ok: true,
            }),
        ),
        (
            "eventd-cleaned",
            e(EventdEvent::Cleaned {
                machine: "n1@pool".into(),
                answer: "configuration re-read".into(),
                ok: false,
            }),
        ),
        ("eventd-ended", e(EventdEvent::Ended { event: event() })),
        (
            "eventd-asked-configure",
            e(EventdEvent::Asked {
                id: "18c0a2b3c4d-0".into(),
                machine: "n1@pool".into(),
                ask: Ask::Configure {
                    event: event(),
                    until: 1_700_007_200,
                },
            }),
        ),
        (
            "eventd-asked-vacate",
            e(EventdEvent::Asked {
                id: "18c0a2b3c4d-1".into(),
                machine: "n1@pool".into(),
                ask: Ask::Vacate {
                    event: event(),
                    slot: "slot1@n1@pool".into(),
                    then_wait: 15,
                },
            }),
        ),
        (
            "eventd-asked-clean",
            e(EventdEvent::Asked {
                id: "18c0a2b3c4d-2".into(),
                machine: "n1@pool".into(),
                ask: Ask::Clean {
                    until: 1_700_007_200,
                },
            }),
        ),
        (
            "eventd-answered",
            e(EventdEvent::Answered {
                id: "18c0a2b3c4d-1".into(),
                ok: true,
                answer: "vacating 1 slot(s)".into(),
            }),
        ),
        (
            "eventd-round",
            e(EventdEvent::Round {
                event: event(),
                waits: true,
            }),
        ),
        (
            "eventd-paced",
            e(EventdEvent::Paced {
                event: event(),
                next_round: 1_700_000_115_500,
            }),
        ),
        (
            "eventd-withdrawn",
            e(EventdEvent::Withdrawn { event: event() }),
        ),
    ]
}

fn lost_claim() -> LostClaim {
    LostClaim {
        slot: "slot1_1".into(),
        teller: "slot1".into(),
        claim: 4,
        job: "[ ClusterId = 15; ProcId = 0 ]".into(),
        fetched: true,
        claim_id: "<node.example>#1700000000#4#slot1_1".into(),
        told: false,
        node_restarted: false,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    let t = text.trim();
    (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn every_event_kind_has_golden_bytes_that_still_decode_and_encode_the_same() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/events/v1");
    let bless = std::env::var_os("ROOST_BLESS").is_some();
    let mut missing = Vec::new();
    for (i, (name, event)) in samples().into_iter().enumerate() {
        let seq = 1000 + i as u64;
        let env = Envelope {
            seq,
            time: 1_700_000_100,
            actor: "slot1".into(),
            schema: SCHEMA,
            event,
        };
        let path = dir.join(format!("{name}.hex"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            if bless {
                std::fs::create_dir_all(&dir).expect("mkdir");
                std::fs::write(&path, hex(&encode(&env).expect("encodes")) + "\n").expect("write");
            } else {
                missing.push(name);
            }
            continue;
        };
        let bytes = unhex(&text);
        let decoded = decode(seq, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded, env, "{name} decodes to what it was");
        assert_eq!(
            hex(&encode(&env).expect("encodes")),
            text.trim(),
            "{name}: today's encoding differs from the committed one"
        );
    }
    assert!(
        missing.is_empty(),
        "fixtures missing (ROOST_BLESS=1 writes them): {missing:?}"
    );
}

/// The schedd and the eventd log their own event enums; the committed
/// bytes of every kind they log are what each writes, and decode as
/// their own type — so their logs read both as their own and as the
/// union `Event` (`roost-log`, the keeper), from the same records.
#[test]
fn each_daemons_own_events_have_the_unions_golden_bytes() {
    use roost::eventd::event::EventdLogged;
    use roost::events::decode_as;
    use roost::schedd::event::ScheddEvent;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/events/v1");
    let mut schedd_kinds = 0;
    let mut eventd_kinds = 0;
    for (i, (name, event)) in samples().into_iter().enumerate() {
        let seq = 1000 + i as u64;
        fn envelope<E>(seq: u64, event: E) -> Envelope<E> {
            Envelope {
                seq,
                time: 1_700_000_100,
                actor: "slot1".into(),
                schema: SCHEMA,
                event,
            }
        }
        let schedd = match &event {
            Event::Job(e) => Some(ScheddEvent::Job(e.clone())),
            Event::Route(e) => Some(ScheddEvent::Route(e.clone())),
            Event::Cron(e) => Some(ScheddEvent::Cron(e.clone())),
            Event::Daemon(e) => Some(ScheddEvent::Daemon(e.clone())),
            _ => None,
        };
        let eventd = match &event {
            Event::Eventd(e) => Some(EventdLogged::Eventd(e.clone())),
            Event::Daemon(e) => Some(EventdLogged::Daemon(e.clone())),
            _ => None,
        };
        let text = std::fs::read_to_string(dir.join(format!("{name}.hex"))).expect("fixture");
        let bytes = unhex(&text);
        if let Some(own) = schedd {
            schedd_kinds += 1;
            let env = envelope(seq, own);
            assert_eq!(hex(&encode(&env).expect("encodes")), text.trim(), "{name}");
            let read = decode_as::<ScheddEvent>(seq, &bytes).expect("decodes");
            assert_eq!(read, env, "{name}");
        }
        if let Some(own) = eventd {
            eventd_kinds += 1;
            let env = envelope(seq, own);
            assert_eq!(hex(&encode(&env).expect("encodes")), text.trim(), "{name}");
            let read = decode_as::<EventdLogged>(seq, &bytes).expect("decodes");
            assert_eq!(read, env, "{name}");
        }
    }
    assert!(
        schedd_kinds > 10 && eventd_kinds > 5,
        "{schedd_kinds} {eventd_kinds}"
    );
}
