//! What a router hook's result means for its routed job: each hook's
//! rules of success, failure, garbage and silence (HTCondor 23's, and
//! where Roost does better on purpose, said so).

use super::ads::{hook_ad, updated};
use super::{CLEANUP_RETRIED, Ctx, HookResult, Logged, Router, RouterHook, Stage, exit_status};
use crate::classad::unparse::expr_to_string;
use crate::exit::Exit;
use crate::schedd::event::JobId;

/// What a hook's end meant (its `HookRan` outcome), and what follows.
type Judged = (String, Vec<Logged>);

/// Whether a hook printed nothing but blanks.
fn silent(result: &HookResult) -> bool {
    result.stdout.iter().all(u8::is_ascii_whitespace)
}

/// A hook ad's attributes as the queue's edits take them.
fn as_edits(ad: &crate::classad::ClassAd) -> Vec<(String, String)> {
    ad.iter()
        .map(|(n, e)| (n.as_str().to_string(), expr_to_string(e)))
        .collect()
}

impl Router {
    /// What a hook's result means for routed job `src`: its `HookRan`
    /// (always, first: the job waits for its hook until the end is
    /// recorded), then what the result causes.
    pub fn after_hook(
        &self,
        src: JobId,
        hook: RouterHook,
        result: &HookResult,
        ctx: &Ctx<'_>,
    ) -> Vec<Logged> {
        let Some(r) = self.jobs.get(&src) else {
            return Vec::new();
        };
        let code = result.exit.as_ref().map(exit_status);
        let (outcome, then) = match (hook, r.stage) {
            (RouterHook::Translate, Stage::Claimed) => self.after_translate(src, code, result, ctx),
            (RouterHook::UpdateJobInfo, Stage::Submitted) => {
                self.after_update(src, code, result, ctx)
            }
            (RouterHook::Finalize, Stage::Finished) => self.after_finalize(src, code, result, ctx),
            (RouterHook::Cleanup, Stage::Ending { .. }) => {
                let ok = matches!(result.exit, Some(Exit::Signal(_))) || code == Some(0);
                let tries = ctx.cfg.cleanup_tries;
                if ok {
                    ("done".into(), self.finish_cleanup(src, ctx))
                } else if tries > 0 && r.cleanup_failures + 1 >= tries {
                    let why = format!("failed {tries} times: the cleanup is given up");
                    (why, self.finish_cleanup(src, ctx))
                } else {
                    (CLEANUP_RETRIED.into(), Vec::new())
                }
            }
            _ => ("ignored: the job moved on while it ran".into(), Vec::new()),
        };
        let mut out = vec![ctx.hook_ran(src, hook, result, &outcome)];
        out.extend(then);
        out
    }

    fn after_translate(
        &self,
        src: JobId,
        code: Option<i32>,
        result: &HookResult,
        ctx: &Ctx<'_>,
    ) -> Judged {
        match code {
            Some(0) if silent(result) => {
                ("no output: tried again at the next poll".into(), Vec::new())
            }
            Some(0) => match hook_ad(&result.stdout) {
                Ok(ad) => (
                    "the routed copy is the hook's ad".into(),
                    self.finish_submit(src, ad, ctx),
                ),
                Err(e) => (
                    format!("output refused ({e}): the job is given up"),
                    vec![ctx.ending(src, false, format!("TRANSLATE_JOB output: {e}"))],
                ),
            },
            _ => (
                "failed: the job is given up".into(),
                vec![ctx.ending(src, false, "TRANSLATE_JOB failed")],
            ),
        }
    }

    fn after_update(
        &self,
        src: JobId,
        code: Option<i32>,
        result: &HookResult,
        ctx: &Ctx<'_>,
    ) -> Judged {
        match code {
            Some(0) if silent(result) => (
                "no output: the status check goes on".into(),
                self.finish_check(src, ctx),
            ),
            Some(0) => match hook_ad(&result.stdout) {
                Ok(mut ad) => {
                    ad.remove("MyType");
                    ad.remove("TargetType");
                    let mut then = Vec::new();
                    if let Some(d) = self.jobs.get(&src).and_then(|r| r.dest) {
                        then.extend(updated(ctx.now, d, as_edits(&ad)));
                    }
                    then.extend(self.finish_check(src, ctx));
                    ("the routed copy updated".into(), then)
                }
                Err(e) => (
                    format!("output refused ({e}): the job is given up"),
                    vec![ctx.ending(src, false, format!("UPDATE_JOB_INFO output: {e}"))],
                ),
            },
            // HTCondor's router skips the status check too, and so never
            // follows the copy again while the hook fails: the copy
            // completes and nothing finalizes it.
            _ => (
                "failed: its output is not taken; the status check goes on".into(),
                self.finish_check(src, ctx),
            ),
        }
    }

    fn after_finalize(
        &self,
        src: JobId,
        code: Option<i32>,
        result: &HookResult,
        ctx: &Ctx<'_>,
    ) -> Judged {
        let refused = |why: String| {
            // As HTCondor's router: the copy is aborted, and the source,
            // whose status mirrors the completed copy, leaves the queue
            // completed without the hook's update. It never runs again.
            (
                "refused: the routed copy is aborted; the source completes without the hook's \
                 update"
                    .to_string(),
                vec![ctx.ending(src, false, why)],
            )
        };
        match code {
            Some(0) if silent(result) => (
                "no output: the source job is finalized as it is".into(),
                self.finish_finalize(src, ctx),
            ),
            Some(0) => match hook_ad(&result.stdout) {
                Ok(ad) => {
                    let mut then = updated(ctx.now, src, as_edits(&ad))
                        .into_iter()
                        .collect::<Vec<_>>();
                    then.extend(self.finish_finalize(src, ctx));
                    ("the source job updated".into(), then)
                }
                Err(e) => refused(format!("JOB_FINALIZE output: {e}")),
            },
            _ => refused("JOB_FINALIZE failed".to_string()),
        }
    }
}
