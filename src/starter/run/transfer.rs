//! The starter's file transfer (`transfer::plan`, `starter::transfer`):
//! when the job's files travel (`ShouldTransferFiles`), its inputs are
//! fetched into the sandbox before it runs and it runs there, the
//! executable and its stdin, stdout and stderr by their names in the
//! sandbox; after it exits, what it made or changed (or what it lists) goes
//! back before JOB_EXIT. A transfer that fails holds the job with
//! HTCondor's codes: 13 for its inputs, 12 for its outputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use super::{Starter, log_line};
use crate::classad::old::OldReader;
use crate::classad::{ClassAd, Expr, Value};
use crate::starter::job::JobSpec;
use crate::starter::protocol::Command;
use crate::starter::transfer::{TransferError, fetch_inputs, send_outputs};
use crate::transfer::plan::{InputPlan, OutputPlan, PlanError, base_name, string, wants_transfer};
use crate::transfer::{ADDRESS_ATTR, Hello};

/// The starter's own files in the sandbox, which never go back.
const OWN: [&str; 2] = [".job.ad", ".machine.ad"];

/// Why a job's files could not travel.
#[derive(Debug, thiserror::Error)]
enum TransferFailure {
    /// The queue did not say where the files are served.
    #[error("its queue serves no files (the job has no RoostTransferAddress)")]
    NoServer,
    /// The job's ad does not say what travels.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The transfer failed.
    #[error(transparent)]
    Transfer(#[from] TransferError),
    /// The transfer's thread failed.
    #[error("the transfer's thread failed: {0}")]
    Thread(#[from] tokio::task::JoinError),
    /// An output the job lists is not in the sandbox.
    #[error("the job did not make its output {0}")]
    NoOutput(String),
    /// The daemon vacated the job while its inputs moved.
    #[error("vacated while its input files were moving")]
    Vacated,
    /// A daemon ended the claim while the starter was away.
    #[error("a daemon ended the claim while the starter was away")]
    Abandoned,
}

/// A job whose files travel: where its server is, who it is to it, and
/// the sandbox's files as they were when the job started (size and
/// modification time).
pub(super) struct Transferring {
    address: String,
    hello: Hello,
    seen: BTreeMap<String, (u64, Option<SystemTime>)>,
}

/// The sandbox's top-level files, with their size and modification time.
fn snapshot(sandbox: &Path) -> BTreeMap<String, (u64, Option<SystemTime>)> {
    let mut out = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir(sandbox) {
        for e in dir.flatten() {
            if let (Ok(name), Ok(m)) = (e.file_name().into_string(), e.metadata()) {
                out.insert(name, (m.len(), m.modified().ok()));
            }
        }
    }
    out
}

impl Starter {
    /// The machine ad the daemon gave this starter.
    fn machine_ad(&self) -> ClassAd {
        let mut ad = ClassAd::new();
        for item in OldReader::default().read(self.req.machine.as_bytes()) {
            if let crate::classad::old::OldItem::Ad(a) = item {
                ad.update(&a.ad);
            }
        }
        ad
    }

    /// When the job's files travel: fetches its inputs into the sandbox
    /// and makes `spec` run there. `Err`: why the job is held.
    async fn fetch_inputs(&mut self, mut spec: JobSpec) -> Result<JobSpec, TransferFailure> {
        if !wants_transfer(&self.job, &self.machine_ad()) {
            return Ok(spec);
        }
        let address = string(&self.job, ADDRESS_ATTR).ok_or(TransferFailure::NoServer)?;
        let hello = Hello {
            job: format!("{}.{}", spec.id.0, spec.id.1),
            token: string(&self.job, "RoostQueueLease").unwrap_or_default(),
        };
        let plan = InputPlan::of(&self.job)?;
        let urls: Vec<(String, String)> = (plan.sources.iter())
            .filter(|s| s.url)
            .map(|s| (s.from.clone(), s.name.clone()))
            .collect();
        let (sandbox, user) = (self.sandbox.clone(), self.user_ids());
        let (addr, who) = (address.clone(), hello.clone());
        let cancel = Arc::new(AtomicBool::new(false));
        let cut = Arc::clone(&cancel);
        let mut fetching = tokio::task::spawn_blocking(move || {
            let _user = crate::spawn::FsUser::take(user);
            let entries = fetch_inputs((&addr, &who), &sandbox, &urls, &cut)?;
            Ok::<_, TransferError>((entries, snapshot(&sandbox)))
        });
        // The daemon's word is heard while the files move: a vacate cuts
        // the transfer short.
        let (mut kill_at, mut abandoned) = (None, false);
        let fetched = loop {
            tokio::select! {
                r = &mut fetching => break r,
                heard = self.link.heard() => {
                    if let Command::SoftKill | Command::HardKill =
                        self.command_of(heard, &mut kill_at, &mut abandoned)
                    {
                        cancel.store(true, Ordering::Relaxed);
                        let _ = fetching.await;
                        return Err(if abandoned {
                            TransferFailure::Abandoned
                        } else {
                            TransferFailure::Vacated
                        });
                    }
                }
            }
        };
        let (entries, seen) = fetched??;
        log_line(&format!(
            "fetched {} input(s) from {address}",
            entries.len()
        ));
        self.transfer = Some(Transferring {
            address,
            hello,
            seen,
        });
        spec.iwd = Some(self.sandbox.display().to_string());
        if !matches!(
            self.job.lookup("TransferExecutable"),
            Some(Expr::Lit(Value::Bool(false)))
        ) {
            spec.cmd = base_name(&spec.cmd).to_string();
        }
        for p in spec
            .stdio
            .iter_mut()
            .flatten()
            .filter(|p| p.as_str() != "/dev/null")
        {
            *p = base_name(p).to_string();
        }
        Ok(spec)
    }

    /// [`Starter::fetch_inputs`], and what a failure means: the job is
    /// vacated or held (with HTCondor's code 13) unrun; `Err` is the
    /// starter's exit code then.
    pub(super) async fn inputs_here(&mut self, spec: JobSpec) -> Result<JobSpec, i32> {
        match self.fetch_inputs(spec).await {
            Ok(s) => Ok(s),
            Err(TransferFailure::Abandoned) => {
                log_line("a daemon ended the claim while the job's files were moving");
                self.cleanup();
                Err(0)
            }
            Err(e @ TransferFailure::Vacated) => {
                Err(self.not_started(&e.to_string(), "evict").await)
            }
            Err(e) => {
                let reason = format!(
                    "Transfer input files failure at execution point {} while receiving files \
                     from the access point: {e}",
                    self.execute_host()
                );
                // HTCondor's hold code for it (TransferInputError).
                self.job.insert_value("HoldReasonCode", 13);
                Err(self.not_started(&reason, "hold").await)
            }
        }
    }

    fn user_ids(&self) -> Option<(u32, u32)> {
        self.user.as_ref().map(|u| (u.uid, u.gid))
    }

    /// The sandbox's files that go back, by name (`Err`: a listed output
    /// is missing).
    fn outputs(
        &self,
        plan: &OutputPlan,
        t: &Transferring,
    ) -> Result<Vec<(String, PathBuf)>, TransferFailure> {
        let mut out = Vec::new();
        let now = snapshot(&self.sandbox);
        for (name, (len, modified)) in &now {
            if OWN.contains(&name.as_str()) {
                continue;
            }
            let changed = t.seen.get(name) != Some(&(*len, *modified));
            let path = self.sandbox.join(name);
            if plan.sends(name, changed) {
                if path.is_dir() {
                    walk(&path, name, &mut out);
                } else {
                    out.push((name.clone(), path));
                }
            }
        }
        for listed in plan.listed.iter().flatten() {
            let l = listed.trim_end_matches('/');
            if !now.contains_key(l) {
                return Err(TransferFailure::NoOutput(l.to_string()));
            }
        }
        Ok(out)
    }

    /// After the job exited (`how`): sends its outputs when they go back
    /// (on its exit, or on an eviction too with `ON_EXIT_OR_EVICT`);
    /// returns the ad and the end JOB_EXIT is told (`hold` when the
    /// outputs could not be sent).
    pub(super) async fn send_outputs(
        &self,
        mut ad: ClassAd,
        how: &'static str,
    ) -> (ClassAd, &'static str) {
        let Some(t) = &self.transfer else {
            return (ad, how);
        };
        let on_evict = string(&self.job, "WhenToTransferOutput")
            .is_some_and(|w| w.eq_ignore_ascii_case("ON_EXIT_OR_EVICT"));
        if !(how == "exit" || (how == "evict" && on_evict)) {
            return (ad, how);
        }
        let host = self.execute_host();
        let sent = async {
            let files = self.outputs(&OutputPlan::of(&self.job)?, t)?;
            let (addr, who, user) = (t.address.clone(), t.hello.clone(), self.user_ids());
            let n = files.len();
            tokio::task::spawn_blocking(move || {
                let _user = crate::spawn::FsUser::take(user);
                send_outputs((&addr, &who), &files, &AtomicBool::new(false))
            })
            .await??;
            Ok::<_, TransferFailure>(n)
        }
        .await;
        match sent {
            Ok(n) => {
                log_line(&format!("sent {n} output(s) to {}", t.address));
                (ad, how)
            }
            Err(e) => {
                let reason = format!(
                    "Transfer output files failure at execution point {host} while sending files to the access point: {e}"
                );
                log_line(&reason);
                ad.insert_value("HoldReason", Value::from(reason.as_str()));
                ad.insert_value("HoldReasonCode", 12);
                (ad, "hold")
            }
        }
    }
}

/// Every file under directory `dir` (named `name` in the sandbox), by its
/// name in the sandbox.
fn walk(dir: &Path, name: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(n) = e.file_name().into_string() else {
            continue;
        };
        let (path, full) = (e.path(), format!("{name}/{n}"));
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&path, &full, out),
            Ok(t) if t.is_file() => out.push((full, path)),
            _ => {}
        }
    }
}
