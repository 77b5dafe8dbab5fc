//! The thread that keeps a daemon's ads in the pool: the daemon offers
//! its ads (every second; cheap, nothing blocks), and the thread writes
//! them to etcd under the daemon's lease at once when a slot's `State` or
//! `Activity` changed, an ad came or went, or the lease was lost, and at
//! least every `UPDATE_INTERVAL` otherwise; it keeps the lease alive
//! (every third of `CLASSAD_LIFETIME`), so a daemon that vanishes has its
//! ads gone when the lifetime runs out. etcd out of reach stops nothing:
//! the daemon runs on, the thread says so once in the daemon log, tries
//! again (backing off to 30 s), and says when it published again. A
//! daemon that stops revokes its lease: its ads go at once.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::PoolSettings;
use super::etcd::{Etcd, EtcdError};
use crate::classad::{ClassAd, FixedEnv, Value, parse_ad};

enum Msg {
    Ads(Vec<String>),
    Stop,
}

/// A daemon's publisher: its thread and the way to it.
pub struct Publisher {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl Publisher {
    /// Starts the thread that publishes the ads of daemon `daemon` (for
    /// the log) in `settings`' pool.
    pub fn start(settings: PoolSettings, daemon: String) -> std::io::Result<Publisher> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("roost-pool".into())
            .spawn(move || Thread::new(settings, daemon).run(&rx))?;
        Ok(Publisher {
            tx,
            thread: Some(thread),
        })
    }

    /// The daemon's ads now (new ClassAd syntax), to publish when due.
    pub fn offer(&self, ads: Vec<String>) {
        let _ = self.tx.send(Msg::Ads(ads));
    }
}

impl Drop for Publisher {
    /// Withdraws the ads (the lease revoked) and ends the thread: a daemon
    /// that stops leaves no ad behind.
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// An ad to publish: its key, text and what makes a change urgent.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    key: String,
    text: String,
    summary: String,
}

/// The ads' entries: each keyed by its `MyType` and `Name`, summarized by
/// `State` and `Activity`; an ad that does not parse or has no `Name` is
/// left out (and said).
fn entries(settings: &PoolSettings, ads: &[String]) -> Vec<Entry> {
    let env = FixedEnv::new(0);
    let text = |ad: &ClassAd, attr: &str| match ad.eval_attr(attr, &env) {
        Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    };
    let mut out = Vec::with_capacity(ads.len());
    for a in ads {
        let ad = match parse_ad(a) {
            Ok(ad) => ad,
            Err(e) => {
                warn!(message = "An ad does not parse; not published.", error = %e);
                continue;
            }
        };
        let Some(name) = text(&ad, "Name") else {
            warn!(message = "An ad has no Name; not published.");
            continue;
        };
        let my_type = text(&ad, "MyType").unwrap_or_else(|| "Machine".into());
        let summary = format!(
            "{}/{}",
            text(&ad, "State").unwrap_or_default(),
            text(&ad, "Activity").unwrap_or_default()
        );
        out.push(Entry {
            key: settings.ad_key(&my_type, &name),
            text: a.clone(),
            summary,
        });
    }
    out
}

struct Thread {
    settings: PoolSettings,
    daemon: String,
    client: Etcd,
    lease: Option<i64>,
    /// What etcd holds of ours, by key: the summary written.
    written: BTreeMap<String, String>,
    last_write: Option<Instant>,
    last_keepalive: Instant,
    latest: Option<Vec<Entry>>,
    /// Whether the last call reached etcd (`None`: none made yet).
    up: Option<bool>,
    failures: u32,
    retry_at: Option<Instant>,
}

impl Thread {
    fn new(settings: PoolSettings, daemon: String) -> Thread {
        Thread {
            client: settings.client(),
            settings,
            daemon,
            lease: None,
            written: BTreeMap::new(),
            last_write: None,
            last_keepalive: Instant::now(),
            latest: None,
            up: None,
            failures: 0,
            retry_at: None,
        }
    }

    fn run(mut self, rx: &Receiver<Msg>) {
        loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(Msg::Ads(ads)) => self.latest = Some(entries(&self.settings, &ads)),
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            self.tick(Instant::now());
        }
        if let Some(lease) = self.lease.take() {
            match self.client.revoke(lease) {
                Ok(()) => info!(message = "Ads withdrawn from the pool.", daemon = %self.daemon),
                Err(e) => {
                    warn!(message = "Cannot withdraw the ads from the pool; they expire with their lease.",
                    error = %e)
                }
            }
        }
    }

    fn tick(&mut self, now: Instant) {
        if self.retry_at.is_some_and(|t| now < t) {
            return;
        }
        let Some(latest) = &self.latest else {
            return;
        };
        let changed = latest.len() != self.written.len()
            || latest
                .iter()
                .any(|e| self.written.get(&e.key) != Some(&e.summary));
        let due = self.lease.is_none()
            || changed
            || self
                .last_write
                .is_none_or(|t| now.duration_since(t) >= self.settings.update_interval);
        let keepalive_due = now.duration_since(self.last_keepalive)
            >= Duration::from_secs(
                u64::try_from(self.settings.lifetime / 3)
                    .unwrap_or(1)
                    .max(1),
            );
        let result = if due {
            self.write(now)
        } else if keepalive_due {
            self.keepalive(now)
        } else {
            return;
        };
        match result {
            Ok(()) => {
                if self.up != Some(true) {
                    info!(message = "Ads published in the pool.", daemon = %self.daemon,
                        endpoints = %self.settings.endpoints.join(","), ads = self.written.len());
                }
                self.up = Some(true);
                self.failures = 0;
                self.retry_at = None;
            }
            Err(e) => {
                if self.up != Some(false) {
                    warn!(message = "Cannot publish in the pool; the daemon runs on and publishes again when it can.",
                        daemon = %self.daemon, error = %e);
                } else {
                    debug!(message = "The pool's etcd still fails.", error = %e);
                }
                self.up = Some(false);
                self.failures = self.failures.saturating_add(1);
                let wait = 1u64 << self.failures.min(5);
                self.retry_at = Some(now + Duration::from_secs(wait.min(30)));
            }
        }
    }

    fn keepalive(&mut self, now: Instant) -> Result<(), EtcdError> {
        let Some(lease) = self.lease else {
            return Ok(());
        };
        if self.client.keepalive(lease)? {
            self.last_keepalive = now;
            Ok(())
        } else {
            // Expired (etcd was away too long): everything again.
            info!(message = "The pool lease expired; publishing again.", daemon = %self.daemon);
            self.lease = None;
            self.written.clear();
            self.write(now)
        }
    }

    fn write(&mut self, now: Instant) -> Result<(), EtcdError> {
        let Some(latest) = &self.latest else {
            return Ok(());
        };
        let lease = match self.lease {
            Some(l) => l,
            None => {
                let l = self.client.grant(self.settings.lifetime)?;
                self.lease = Some(l);
                self.written.clear();
                self.last_keepalive = now;
                l
            }
        };
        let puts: Vec<(String, Vec<u8>)> = latest
            .iter()
            .map(|e| (e.key.clone(), e.text.clone().into_bytes()))
            .collect();
        let gone: Vec<String> = (self.written.keys())
            .filter(|k| !latest.iter().any(|e| &e.key == *k))
            .cloned()
            .collect();
        match self.client.write(&puts, &gone, Some(lease)) {
            Err(EtcdError::Refused { message, .. }) if message.contains("lease not found") => {
                self.lease = None;
                self.written.clear();
                Err(EtcdError::Refused {
                    call: "kv/txn".into(),
                    message,
                })
            }
            Err(e) => Err(e),
            Ok(()) => {
                self.written = latest
                    .iter()
                    .map(|e| (e.key.clone(), e.summary.clone()))
                    .collect();
                self.last_write = Some(now);
                Ok(())
            }
        }
    }
}
