//! Work offered to a slot: when FETCH_WORK may run (`try_fetch`), whether
//! a fetched job or a claim request is accepted (its Requirements, the
//! slot's RANK against the running claim's), and carving a dynamic slot
//! out of a partitionable one for it (MODIFY_REQUEST_EXPR_*, the
//! resources it asks for).

use crate::classad::unparse::ad_to_string;
use crate::classad::{ClassAd, Evaluator, FixedEnv, Name, Value, parse_ad};

use super::super::slot::{Activity, Claim, Resources, SlotEvent, SlotKind, State};
use super::ad::requirements;
use super::work::{Work, int_of, truth};
use super::{Effect, Transition};

/// The answer to a job offered by FETCH_WORK or by a claim request.
fn reply(fetched: bool, accept: bool, job: String) -> Effect {
    if fetched {
        Effect::ReplyFetch { accept, job }
    } else {
        Effect::ReplyClaim { accept }
    }
}

impl Work<'_, '_> {
    /// FetchWorkDelay with the current job as TARGET (300 when not an
    /// integer).
    pub(super) fn fetch_delay(&self) -> i64 {
        int_of(&self.eval("FetchWorkDelay", self.job().as_ref())).unwrap_or(300)
    }

    pub(super) fn try_fetch(&mut self) {
        self.try_fetch_for(None);
    }

    /// [`Work::try_fetch`], for the work another slot found when
    /// `prompted_by` names it.
    pub(super) fn try_fetch_for(&mut self, prompted_by: Option<&str>) {
        if self.ctx.policy.keyword.as_deref().is_none_or(str::is_empty)
            || self.s.fetching
            || self.s.deleted
            || self.ctx.drain.is_some_and(|d| d.shutdown)
        {
            return;
        }
        let ok_state = match self.s.state {
            State::Owner | State::Drained => true,
            State::Unclaimed => self.s.activity != Activity::Benchmarking,
            State::Claimed => self.s.activity != Activity::Suspended,
            State::Backfill => self.s.activity != Activity::Killing,
            _ => false,
        };
        if !ok_state {
            return;
        }
        // Beyond HTCondor, which fetches here too and then must reject what
        // it got: a partitionable slot with no CPU left cannot carve a
        // dynamic slot for any job, so it does not ask for one. Its
        // children's fetches (claim reuse) and a returned child bring work.
        if self.s.kind == SlotKind::Partitionable && self.s.resources.cpus <= 0.0 {
            return;
        }
        if self.s.state == State::Claimed && !self.idle_fetch_claim() && !self.could_outrank() {
            return;
        }
        let delay = self.fetch_delay();
        // The first fetch is not throttled.
        if let Some(last) = self.s.last_fetch_completed
            && delay > 0
            && self.ctx.now - last < delay
        {
            return;
        }
        if self.knob("START", false) == Some(false) {
            return;
        }
        self.emit(SlotEvent::FetchStarted {
            at: self.ctx.now,
            prompted_by: prompted_by.map(str::to_string),
        });
        self.effect(Effect::FetchWork);
    }

    /// Claimed/Idle on a fetched claim that is not ending: the next
    /// fetched job reuses the claim.
    pub(super) fn idle_fetch_claim(&self) -> bool {
        self.s.state == State::Claimed
            && self.s.activity == Activity::Idle
            && !self.s.starter
            && self
                .s
                .claim
                .as_ref()
                .is_some_and(|c| c.fetched && c.ending.is_none())
    }

    /// Whether a fetched job could be accepted by this claimed slot, which
    /// takes one only to preempt by rank: not while a better claim already
    /// waits, nor when RANK refers to nothing of the job (its value for
    /// any job is its value now) and is no higher than the current claim's.
    /// Beyond HTCondor, whose busy slots fetch such jobs only to reject
    /// them.
    fn could_outrank(&self) -> bool {
        if self.s.preempting.is_some() {
            return false;
        }
        let Some(current) = self.s.claim.as_ref().map(|c| c.rank) else {
            return true;
        };
        let ad = self.ad();
        let env = FixedEnv::new(self.ctx.now);
        if ad
            .unresolved_names("Rank", &env)
            .is_none_or(|n| !n.is_empty())
        {
            return true;
        }
        let fixed = match self.eval("Rank", None) {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => i as f64,
            Value::Real(r) => r,
            _ => 0.0,
        };
        fixed > current
    }

    /// A new claim for a job (fetched or requested).
    /// An external claim gets a lease: the job's `JobLeaseDuration` when
    /// it is a positive integer, else the policy's default.
    fn fetch_claim(&self, job: String, rank: f64, fetched: bool) -> Claim {
        let lease = (!fetched).then(|| {
            let env = FixedEnv::new(self.ctx.now);
            match self
                .ctx
                .cache
                .job_ad(&job)
                .map(|j| j.eval_attr("JobLeaseDuration", &env))
            {
                Some(Value::Int(n)) if n > 0 => n,
                _ => self.ctx.policy.default_lease,
            }
        });
        let mut claim = Claim::new(self.s.next_claim, job, rank, fetched, self.ctx.now);
        claim.lease = lease;
        claim
    }

    /// The slot's RANK of a job (0.0 when not a number).
    fn rank_of(ad: &ClassAd, job: &ClassAd, env: &FixedEnv) -> f64 {
        match Evaluator::new(Some(ad), Some(job), env).eval_attr(&Name::new("Rank")) {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => i as f64,
            Value::Real(r) => r,
            _ => 0.0,
        }
    }

    /// A job for a partitionable slot: apply MODIFY_REQUEST_EXPR_*, check
    /// that a dynamic slot can really be carved, and only then accept.
    fn carve(&mut self, job: ClassAd, text: String, fetched: bool) {
        let env = FixedEnv::new(self.ctx.now);
        let ad = self.ad();
        let matches = |j: &ClassAd| {
            truth(&Evaluator::new(Some(&ad), Some(j), &env).eval_attr(&Name::new("Requirements")))
                == Some(true)
        };
        let mut edited = job.clone();
        for (attr, e) in &self.ctx.policy.modify_request {
            let v = crate::classad::eval_expr_in(e, Some(&job), Some(&ad), &env);
            if matches!(v, Value::Int(_) | Value::Real(_)) {
                edited.insert_value(attr.as_str(), v);
            }
        }
        let job = if matches(&edited) || self.ctx.policy.must_modify {
            edited
        } else {
            job
        };
        let reject = |w: &mut Self| w.effect(reply(fetched, false, text.clone()));
        if !matches(&job) {
            return reject(self);
        }
        let num = |attr: &str| match job.eval_attr(attr, &env) {
            Value::Int(i) => Some(i as f64),
            Value::Real(r) => Some(r),
            _ => None,
        };
        let (Some(memory), Some(disk)) = (num("RequestMemory"), num("RequestDisk")) else {
            // HTCondor cannot split a slot without memory and disk requests.
            return reject(self);
        };
        let mut want = Resources {
            cpus: num("RequestCpus").unwrap_or(1.0),
            #[allow(clippy::cast_possible_truncation)]
            memory_mb: memory.ceil() as i64,
            #[allow(clippy::cast_possible_truncation)]
            disk_kb: disk.ceil() as i64,
            custom: Default::default(),
            ids: Default::default(),
        };
        for k in self.s.resources.custom.keys() {
            let n = num(&format!("Request{k}")).unwrap_or(0.0);
            want.custom.insert(k.clone(), n);
            let ids = self.s.resources.first_ids(k, n);
            if !ids.is_empty() {
                want.ids.insert(k.clone(), ids);
            }
        }
        let have = &self.s.resources;
        let fits = want.cpus <= have.cpus
            && want.memory_mb <= have.memory_mb
            && want.disk_kb <= have.disk_kb
            && want
                .custom
                .iter()
                .all(|(k, v)| *v <= have.custom.get(k).copied().unwrap_or(0.0));
        if !fits || want.cpus <= 0.0 {
            return reject(self);
        }
        let rank = Self::rank_of(&ad, &job, &env);
        let job_text = ad_to_string(&job);
        self.effect(reply(fetched, true, text));
        let claim = self.fetch_claim(job_text, rank, fetched);
        let sub = self.s.free_child_id();
        self.emit(SlotEvent::DynamicSlotCreated {
            at: self.ctx.now,
            sub,
            resources: want,
            claim,
        });
    }

    /// A job offered to this slot: fetched by FETCH_WORK, or in an
    /// external claim request.
    pub(super) fn offered_job(&mut self, text: &str, fetched: bool) {
        let Ok(mut job) = parse_ad(text) else {
            return;
        };
        if let Some(kw) = self.ctx.policy.keyword.as_ref().filter(|_| fetched) {
            let env = FixedEnv::new(self.ctx.now);
            if !matches!(job.eval_attr("HookKeyword", &env), Value::Str(_)) {
                job.insert_value("HookKeyword", kw.as_str());
            }
        }
        let text = ad_to_string(&job);
        // A static slot matches a job without Request* as if it asked for
        // one of each; the defaults are for matching only, never added to
        // the ad the hooks and the starter see.
        if self.s.kind != SlotKind::Partitionable {
            for attr in ["RequestCpus", "RequestMemory", "RequestDisk"] {
                if !job.contains(attr) {
                    job.insert_value(attr, 1i64);
                }
            }
        }
        let reject = |w: &mut Self, text: String| w.effect(reply(fetched, false, text));
        // A Matched slot is promised to the matched claimant: work fetched
        // meanwhile is refused (the fetch began before the match).
        if self.s.state == State::Preempting
            || (self.s.state == State::Backfill && self.s.claim.is_some())
            || (self.s.state == State::Matched && fetched)
        {
            return reject(self, text);
        }
        if self.s.kind == SlotKind::Partitionable {
            return self.carve(job, text, fetched);
        }
        let ad = self.ad();
        let env = FixedEnv::new(self.ctx.now);
        // A Matched slot publishes Requirements = false so that it is not
        // matched again; its claimant is judged by the real ones.
        let willing = if self.s.state == State::Matched {
            truth(&crate::classad::eval_expr_in(
                requirements(self.ctx),
                Some(&ad),
                Some(&job),
                &env,
            ))
        } else {
            truth(
                &Evaluator::new(Some(&ad), Some(&job), &env).eval_attr(&Name::new("Requirements")),
            )
        };
        if willing != Some(true) {
            return reject(self, text);
        }
        let rank = Self::rank_of(&ad, &job, &env);
        // Let go of the slot ad before the events change the slot: a held
        // copy makes the next evaluation copy the policy's whole ad.
        drop(ad);
        let idle_fetch_claim = fetched && self.idle_fetch_claim();
        if self.s.state == State::Claimed && !idle_fetch_claim {
            let current = self.s.claim.as_ref().map_or(0.0, |c| c.rank);
            if rank <= current || self.s.preempting.is_some() {
                return reject(self, text);
            }
        }
        self.effect(reply(fetched, true, text.clone()));
        let claim = self.fetch_claim(text, rank, fetched);
        if idle_fetch_claim {
            let mut claim = claim;
            if let Some(old) = &self.s.claim {
                claim.created = old.created;
                claim.activations = old.activations;
            }
            self.emit(SlotEvent::ClaimCreated {
                at: self.ctx.now,
                claim,
            });
            self.spawn();
        } else if self.s.state == State::Claimed {
            self.emit(SlotEvent::PreemptingClaimQueued {
                at: self.ctx.now,
                claim,
            });
        } else {
            let was = self.s.state;
            self.emit(SlotEvent::ClaimCreated {
                at: self.ctx.now,
                claim,
            });
            let why = if fetched {
                "fetched job accepted"
            } else {
                "claim request granted"
            };
            let t = match was {
                // The claim waits for the backfill client to go (31).
                State::Backfill => return self.end_backfill(false, why),
                State::Unclaimed => Transition::UnclaimedToClaimed,
                State::Matched => Transition::MatchedToClaimed,
                _ => Transition::Unnumbered,
            };
            self.change(State::Claimed, Activity::Idle, t, why);
        }
    }
}
