//! What a router hook's result means for its routed job: each hook's
//! rules of success, failure, garbage and silence (HTCondor 23's, and
//! where Roost does better on purpose, said so).

use super::ads::{hook_ad, updated};
use super::{
    CLEANUP_RETRIED, Ctx, HookResult, Logged, RouteEvent, Router, RouterHook, Stage, exit_status,
};
use crate::classad::unparse::expr_to_string;
use crate::exit::Exit;
use crate::schedd::event::JobId;

/// Records what a hook's end meant.
type Note<'a> = dyn FnMut(&mut Vec<Logged>, &str) + 'a;

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
    /// What a hook's result means for routed job `src`.
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
        let mut out = Vec::new();
        let mut note = |out: &mut Vec<Logged>, outcome: &str| {
            out.push(ctx.hook_ran(src, hook, result, outcome));
        };
        match (hook, r.stage) {
            (RouterHook::Translate, Stage::Claimed) => {
                self.after_translate(src, code, result, ctx, &mut out, &mut note);
            }
            (RouterHook::UpdateJobInfo, Stage::Submitted) => {
                self.after_update(src, code, result, ctx, &mut out, &mut note);
            }
            (RouterHook::Finalize, Stage::Finished) => {
                self.after_finalize(src, code, result, ctx, &mut out, &mut note);
            }
            (RouterHook::Cleanup, Stage::Ending { .. }) => {
                let ok = matches!(result.exit, Some(Exit::Signal(_))) || code == Some(0);
                if ok {
                    note(&mut out, "done");
                    out.extend(self.finish_cleanup(src, ctx));
                } else if ctx.cfg.cleanup_tries > 0
                    && r.cleanup_failures + 1 >= ctx.cfg.cleanup_tries
                {
                    let tries = ctx.cfg.cleanup_tries;
                    note(
                        &mut out,
                        &format!("failed {tries} times: the cleanup is given up"),
                    );
                    out.extend(self.finish_cleanup(src, ctx));
                } else {
                    note(&mut out, CLEANUP_RETRIED);
                }
            }
            _ => note(&mut out, "ignored: the job moved on while it ran"),
        }
        // A hook's end is always recorded: the job waits for it until it is.
        let ended = |e: &Logged| matches!(e, Logged::Route(RouteEvent::HookRan { .. }));
        if !out.iter().any(ended) {
            out.insert(0, ctx.hook_ran(src, hook, result, "ended"));
        }
        out
    }

    fn after_translate(
        &self,
        src: JobId,
        code: Option<i32>,
        result: &HookResult,
        ctx: &Ctx<'_>,
        out: &mut Vec<Logged>,
        note: &mut Note<'_>,
    ) {
        match code {
            Some(0) if silent(result) => {
                note(out, "no output: tried again at the next poll");
            }
            Some(0) => match hook_ad(&result.stdout) {
                Ok(ad) => {
                    note(out, "the routed copy is the hook's ad");
                    out.extend(self.finish_submit(src, ad, ctx));
                }
                Err(e) => {
                    note(out, &format!("output refused ({e}): the job is given up"));
                    out.push(ctx.ending(src, false, format!("TRANSLATE_JOB output: {e}")));
                }
            },
            _ => {
                note(out, "failed: the job is given up");
                out.push(ctx.ending(src, false, "TRANSLATE_JOB failed"));
            }
        }
    }

    fn after_update(
        &self,
        src: JobId,
        code: Option<i32>,
        result: &HookResult,
        ctx: &Ctx<'_>,
        out: &mut Vec<Logged>,
        note: &mut Note<'_>,
    ) {
        match code {
            Some(0) if silent(result) => {
                note(out, "no output: the status check goes on");
                out.extend(self.finish_check(src, ctx));
            }
            Some(0) => match hook_ad(&result.stdout) {
                Ok(mut ad) => {
                    ad.remove("MyType");
                    ad.remove("TargetType");
                    note(out, "the routed copy updated");
                    if let Some(d) = self.jobs.get(&src).and_then(|r| r.dest) {
                        out.extend(updated(ctx.now, d, as_edits(&ad)));
                    }
                    out.extend(self.finish_check(src, ctx));
                }
                Err(e) => {
                    note(out, &format!("output refused ({e}): the job is given up"));
                    out.push(ctx.ending(src, false, format!("UPDATE_JOB_INFO output: {e}")));
                }
            },
            _ => {
                // HTCondor's router skips the status check too, and so
                // never follows the copy again while the hook fails: the
                // copy completes and nothing finalizes it.
                note(
                    out,
                    "failed: its output is not taken; the status check goes on",
                );
                out.extend(self.finish_check(src, ctx));
            }
        }
    }

    fn after_finalize(
        &self,
        src: JobId,
        code: Option<i32>,
        result: &HookResult,
        ctx: &Ctx<'_>,
        out: &mut Vec<Logged>,
        note: &mut Note<'_>,
    ) {
        let failed = match code {
            Some(0) if silent(result) => {
                note(out, "no output: the source job is finalized as it is");
                None
            }
            Some(0) => match hook_ad(&result.stdout) {
                Ok(ad) => {
                    note(out, "the source job updated");
                    out.extend(updated(ctx.now, src, as_edits(&ad)));
                    None
                }
                Err(e) => Some(format!("JOB_FINALIZE output: {e}")),
            },
            _ => Some("JOB_FINALIZE failed".to_string()),
        };
        match failed {
            None => out.extend(self.finish_finalize(src, ctx)),
            Some(why) => {
                // As HTCondor's router: the copy is aborted, and the
                // source, whose status mirrors the completed copy, leaves
                // the queue completed without the hook's update. It never
                // runs again.
                note(
                    out,
                    "refused: the routed copy is aborted; the source completes \
                     without the hook's update",
                );
                out.push(ctx.ending(src, false, why));
            }
        }
    }
}
