//! The messages the daemon's actors send each other, apart from the
//! actors themselves, so no actor's file needs another's that needs it
//! back: a slot reaches the node through a [`NodeLink`] and the backfill
//! client's manager through a [`BackfillLink`], each a set of
//! recipients, and the node, the backfill manager and a starter reach a
//! slot through its `Recipient<SlotInput>`. Messages that must arrive go
//! through [`deliver`], which says so in the daemon's log when one could
//! not be (its receiver gone), rather than dropping it in silence.

use actix::prelude::*;
use tracing::error;

use crate::policy::engine::{Input, Policy};
use crate::policy::node::SlotView;
use crate::policy::slot::{Claim, Resources};

/// A starter of the daemon's last run called the admin socket: its hello
/// and the connection, for the starter actor waiting for it.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Attach {
    /// What it said.
    pub hello: crate::starter::protocol::Hello,
    /// The connection, which carries its reports and the daemon's commands.
    pub stream: tokio::net::UnixStream,
}

/// The starters of the last run the daemon waits for, by pid, and the
/// actor that takes each once it has started: the hand-off between the
/// admin socket's server, which a starter calls, and that actor.
#[derive(Clone, Default)]
pub struct Waiting {
    by_pid:
        std::rc::Rc<std::cell::RefCell<std::collections::HashMap<u32, Option<Recipient<Attach>>>>>,
}

/// What the admin socket's server finds for a starter that called.
pub enum Called {
    /// Its actor, which now takes it (no longer waited for).
    Taken(Recipient<Attach>),
    /// Expected, its actor not started yet: ask again shortly.
    Early,
    /// Not waited for.
    Unknown,
}

impl Waiting {
    /// The daemon expects starter `pid` of the last run to call.
    pub fn expect(&self, pid: u32) {
        self.by_pid.borrow_mut().insert(pid, None);
    }

    /// The actor that takes starter `pid` has started.
    pub fn ready(&self, pid: u32, actor: Recipient<Attach>) {
        self.by_pid.borrow_mut().insert(pid, Some(actor));
    }

    /// Starter `pid` is no longer waited for (it did not call in time).
    pub fn forget(&self, pid: u32) {
        self.by_pid.borrow_mut().remove(&pid);
    }

    /// Starter `pid` called.
    pub fn called(&self, pid: u32) -> Called {
        let mut by_pid = self.by_pid.borrow_mut();
        match by_pid.get(&pid) {
            Some(Some(_)) => match by_pid.remove(&pid) {
                Some(Some(actor)) => Called::Taken(actor),
                _ => Called::Unknown,
            },
            Some(None) => Called::Early,
            None => Called::Unknown,
        }
    }
}

/// The daemon is stopping: the slot records what it holds back from the
/// log (`policy::quiet`).
#[derive(Message)]
#[rtype(result = "()")]
pub struct WriteHeld;

/// An input for the slot's state machine.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SlotInput(pub Input);

/// The starter's and the job's process ids, published as `StarterPid`
/// and `JobPid`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StarterPids {
    /// The starter.
    pub starter: u32,
    /// The job, once it runs.
    pub job: Option<u32>,
}

/// Asks for the slot's public ad.
#[derive(Message)]
#[rtype(result = "String")]
pub struct PublicAd;

/// A reconfiguration: the slot's policy and published attributes as the
/// new configuration makes them (already checked by the supervisor).
#[derive(Message)]
#[rtype(result = "()")]
pub struct NewPolicy(pub Policy);

/// A slot's state after one of its steps, for the supervisor.
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub struct SlotStatus {
    /// Slot id.
    pub id: String,
    /// What the node sees of it.
    pub view: SlotView,
}

/// A partitionable slot carved a dynamic slot.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SlotBorn {
    /// The partitionable slot's id.
    pub parent: String,
    /// The new slot's sub-id.
    pub sub: u32,
    /// Its resources.
    pub resources: Resources,
    /// The claim it was carved for.
    pub claim: Claim,
}

/// A dynamic slot was deleted.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SlotGone {
    /// Its id.
    pub id: String,
    /// What it gives back.
    pub resources: Resources,
}

/// A slot entered Unclaimed/Benchmarking: run the benchmarks (once for
/// every slot asking while they run) and tell it when they are done.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RunBenchmarks(pub Recipient<SlotInput>);

/// A slot's FETCH_WORK has just printed a job. Sent by the slot to the
/// node, which passes it on to the other slots that wait for work (Owner,
/// Unclaimed, Backfill); each fetches early if its keyword is the same
/// and a fetch is allowed now (see [`Input::WorkFound`]). Claimed slots
/// are not: they fetch on their own when their job ends, and a node of
/// many busy slots should not spend a decision per slot on every job
/// fetched.
#[derive(Message)]
#[rtype(result = "()")]
pub struct WorkFound {
    /// The slot's id (`slot1`, `slot1_2`).
    pub by: String,
    /// Its hook keyword.
    pub keyword: String,
}

/// A slot entered Backfill and wants the client.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Want {
    /// The slot's id.
    pub slot: String,
    /// Where to say the client runs ([`Input::BackfillStarted`]).
    pub addr: Recipient<SlotInput>,
}

/// A slot leaves Backfill.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Release {
    /// The slot's id.
    pub slot: String,
}

/// How a slot reaches the node: one recipient per message it sends.
#[derive(Clone)]
pub struct NodeLink {
    /// Its state after each step.
    pub status: Recipient<SlotStatus>,
    /// A dynamic slot it carved.
    pub born: Recipient<SlotBorn>,
    /// Its deletion (a dynamic slot's).
    pub gone: Recipient<SlotGone>,
    /// Work its FETCH_WORK found.
    pub work: Recipient<WorkFound>,
    /// Its wish for benchmarks.
    pub benchmarks: Recipient<RunBenchmarks>,
    /// The daemon's one backfill client's manager (started with the node).
    pub backfill: BackfillLink,
}

/// How a slot reaches the backfill client's manager.
#[derive(Clone)]
pub struct BackfillLink {
    /// The slot entered Backfill.
    pub want: Recipient<Want>,
    /// The slot leaves Backfill.
    pub release: Recipient<Release>,
}

/// Sends `msg` to `to`, in order with what the sender sent before and
/// whatever its receiver's queue holds, and logs an error naming `what`
/// when it cannot arrive (its receiver has stopped): for news the
/// receiver's state depends on, which must not vanish without a word.
/// (The actors share one thread, so a receiver seen alive here takes the
/// message.)
pub fn deliver<M, T: Mailbox<M>>(to: &T, msg: M, what: &'static str) {
    if to.alive() {
        to.put(msg);
    } else {
        error!(
            message = "A message could not be delivered: its receiver has stopped.",
            what
        );
    }
}

/// Where [`deliver`] puts a message: an actor's address or a recipient.
pub trait Mailbox<M> {
    /// Whether the receiver still runs.
    fn alive(&self) -> bool;
    /// Queues `msg`.
    fn put(&self, msg: M);
}

impl<M> Mailbox<M> for Recipient<M>
where
    M: Message + Send + 'static,
    M::Result: Send,
{
    fn alive(&self) -> bool {
        self.connected()
    }
    fn put(&self, msg: M) {
        self.do_send(msg);
    }
}

impl<A, M> Mailbox<M> for Addr<A>
where
    A: Handler<M>,
    A::Context: actix::dev::ToEnvelope<A, M>,
    M: Message + Send + 'static,
    M::Result: Send,
{
    fn alive(&self) -> bool {
        self.connected()
    }
    fn put(&self, msg: M) {
        self.do_send(msg);
    }
}
