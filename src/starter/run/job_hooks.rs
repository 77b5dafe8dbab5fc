//! The starter's hooks around the job: PREPARE_JOB before it (its edits
//! merged, its failure judged as HTCondor's starter judges it),
//! UPDATE_JOB_INFO while it runs (whose answer may withdraw the job), and
//! JOB_EXIT after it — the job's keyword's hooks, then its fetcher's.

use std::path::Path;
use std::sync::{Arc, PoisonError};

use super::{Starter, Tracking, hook_name, hook_report, log_stderr, now, publish_usage};
use crate::classad::old::OldReader;
use crate::classad::unparse::{OldOrder, ad_to_old};
use crate::classad::{ClassAd, FixedEnv, Value};
use crate::hooks::{self, Exit};
use crate::starter::link::report;
use crate::starter::protocol::Report;
use crate::starter::withdraw;

impl Starter {
    /// Runs PREPARE_JOB and merges its edits; a failure is (the reason
    /// JOB_EXIT hears, how the job ends, the starter error to log).
    pub(super) async fn prepare_job(&mut self) -> Result<(), (String, &'static str, String)> {
        let hooks = self.req.hooks.preparing();
        let Some(path) = hooks.prepare_job.clone() else {
            return Ok(());
        };
        let stdin = ad_to_old(&self.job, OldOrder::Bytes);
        let args = hooks.prepare_job_args.clone();
        let run = self.hook_run(&path, args.clone(), stdin, hooks.timeouts[0]);
        let out = match hooks::run(&run).await {
            Ok(o) => o,
            Err(e) => {
                let reason = format!("PREPARE_JOB ({}) failed: {e}", hook_name(&path));
                report(hook_report("PREPARE_JOB", args, None, false, &reason, 0.0));
                return Err((reason.clone(), "evict", reason));
            }
        };
        log_stderr("PREPARE_JOB", &out);
        // HTCondor keeps the lines before the first bad one.
        let mut edits = ClassAd::new();
        let reader = OldReader::default();
        'items: for item in reader.read(&out.stdout) {
            if let crate::classad::old::OldItem::Ad(a) = item {
                let bad_line = a.errors.first().map(|e| e.position.line);
                for (n, e) in a.ad.iter() {
                    edits.insert(n.clone(), e.clone());
                }
                if let Some(line) = bad_line {
                    report(Report::Warning {
                        message: format!(
                            "PREPARE_JOB output line {line} is not 'Name = expression'; \
                             it and what follows were ignored"
                        ),
                    });
                    break 'items;
                }
            }
        }
        let env = FixedEnv::new(now());
        let code = match edits.eval_attr("HookStatusCode", &env) {
            Value::Int(c) if c >= 0 => Some(c),
            _ => None,
        };
        let status = code.unwrap_or(match out.exit {
            Exit::Code(c) => i64::from(c),
            Exit::Signal(s) => -i64::from(s),
        });
        let message = match edits.eval_attr("HookStatusMessage", &env) {
            Value::Str(s) => Some(s.to_string_lossy()),
            _ => None,
        };
        let detail = match (&code, &message) {
            (Some(c), Some(m)) => format!("reported status {c:03}): {m}"),
            (Some(c), None) => format!("reported status {c:03}): <no message>"),
            (None, m) => format!(
                "{}): {}",
                if out.timed_out {
                    "timed out".to_string()
                } else {
                    match out.exit {
                        Exit::Code(c) => format!("exited with status {c}"),
                        Exit::Signal(s) => format!("died on signal {s}"),
                    }
                },
                m.as_deref().unwrap_or("<no message>")
            ),
        };
        let outcome = format!("PREPARE_JOB ({}) failed ({detail}", hook_name(&path));
        if status != 0 || out.timed_out {
            report(hook_report(
                "PREPARE_JOB",
                args,
                Some(out.exit),
                out.timed_out,
                &outcome,
                out.elapsed.as_secs_f64(),
            ));
            // Held only when the hook itself reported a status of 1 to
            // 299; a hook that merely exits non-zero (or times out) has
            // the job evicted, as HTCondor's starter does with fetched
            // work.
            let how = if code.is_some_and(|c| (1..300).contains(&c)) && !out.timed_out {
                "hold"
            } else {
                "evict"
            };
            let reason = if how == "hold" {
                message.unwrap_or_else(|| outcome.clone())
            } else {
                outcome.clone()
            };
            return Err((reason, how, outcome));
        }
        if let Some(m) = &message {
            report(Report::Warning {
                message: format!("PREPARE_JOB ({}) says: {m}", hook_name(&path)),
            });
        }
        report(hook_report(
            "PREPARE_JOB",
            args,
            Some(out.exit),
            false,
            &format!("{} attribute(s) merged into the job ad", edits.len()),
            out.elapsed.as_secs_f64(),
        ));
        self.job.update(&edits);
        Ok(())
    }

    /// Runs UPDATE_JOB_INFO (the job's keyword's and the fetcher's)
    /// without waiting for it.
    pub(super) fn update_job_info(&self, pid: u32, state: &str, track: &Tracking<'_>) {
        let hooks: Vec<_> = (self.req.hooks.each())
            .filter_map(|h| Some((h.update_job_info.clone()?, h.timeouts[1])))
            .collect();
        if hooks.is_empty() {
            return;
        }
        let mut ad = self.job.clone();
        publish_usage(&mut ad, pid, state, track);
        let stdin = ad_to_old(&ad, OldOrder::Bytes);
        for (path, timeout) in hooks {
            self.update_job_info_with(&path, stdin.clone(), timeout);
        }
    }

    fn update_job_info_with(&self, path: &Path, stdin: String, timeout: u64) {
        let run = self.hook_run(path, Vec::new(), stdin, timeout);
        let withdrawn = Arc::clone(&self.withdrawn);
        tokio::spawn(async move {
            let r = hooks::run(&run).await;
            let (exit, timed_out, outcome, elapsed) = match &r {
                Ok(o) => {
                    log_stderr("UPDATE_JOB_INFO", o);
                    let said = (o.exit == Exit::Code(0))
                        .then(|| withdraw::read(&o.stdout))
                        .flatten();
                    let mut slot = withdrawn.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(w) = said.filter(|_| slot.is_none()) {
                        report(Report::Withdrawn {
                            how: w.how.to_string(),
                            reason: w.reason.clone(),
                        });
                        *slot = Some(w);
                    }
                    let e = o.elapsed.as_secs_f64();
                    (Some(o.exit.clone()), o.timed_out, "ran".to_string(), e)
                }
                Err(e) => (None, false, e.to_string(), 0.0),
            };
            report(hook_report(
                "UPDATE_JOB_INFO",
                Vec::new(),
                exit,
                timed_out,
                &outcome,
                elapsed,
            ));
        });
    }

    /// Runs JOB_EXIT: the job's keyword's, then the fetcher's.
    pub(super) async fn job_exit(&self, ad: &ClassAd, how: &str) {
        let hooks: Vec<_> = (self.req.hooks.each())
            .filter_map(|h| Some((h.job_exit.clone()?, h.timeouts[2])))
            .collect();
        for (path, timeout) in hooks {
            self.job_exit_with(&path, timeout, ad, how).await;
        }
    }

    async fn job_exit_with(&self, path: &Path, timeout: u64, ad: &ClassAd, how: &str) {
        let args = vec![how.to_string()];
        let run = self.hook_run(path, args.clone(), ad_to_old(ad, OldOrder::Bytes), timeout);
        let (exit, timed_out, outcome, elapsed) = match hooks::run(&run).await {
            Ok(o) => {
                log_stderr("JOB_EXIT", &o);
                let what = if o.timed_out {
                    "killed at its timeout".to_string()
                } else {
                    "ran".to_string()
                };
                (Some(o.exit), o.timed_out, what, o.elapsed.as_secs_f64())
            }
            Err(e) => (None, false, e.to_string(), 0.0),
        };
        report(hook_report(
            "JOB_EXIT", args, exit, timed_out, &outcome, elapsed,
        ));
    }
}
