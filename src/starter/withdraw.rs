//! The fetcher withdrawing a running job: what UPDATE_JOB_INFO's output
//! says when the job was removed or held in the queue it came from
//! (pure). HTCondor's starter ignores that hook's output; Roost reads
//! `JobStatus = 3` (removed, with `RemoveReason`) or `JobStatus = 5`
//! (held, with `HoldReason`), so that a queue reached only through its
//! hooks can stop a job it no longer wants the next time the node
//! speaks to it. Any other output, as before, means nothing.

use crate::classad::old::{OldItem, OldReader};
use crate::classad::{ClassAd, FixedEnv, Value};

/// A job its fetcher no longer wants run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Withdrawal {
    /// JOB_EXIT's argument once the job has left: `remove` or `hold`.
    pub how: &'static str,
    /// Why, as the queue said it.
    pub reason: String,
}

impl Withdrawal {
    /// The attribute JOB_EXIT's ad carries the reason in.
    pub fn reason_attr(&self) -> &'static str {
        if self.how == "hold" {
            "HoldReason"
        } else {
            "RemoveReason"
        }
    }
}

/// The withdrawal UPDATE_JOB_INFO's `stdout` says, if any.
pub fn read(stdout: &[u8]) -> Option<Withdrawal> {
    let mut ad = ClassAd::new();
    for item in OldReader::default().read(stdout) {
        if let OldItem::Ad(a) = item {
            ad.update(&a.ad);
        }
    }
    let env = FixedEnv::new(0);
    let text = |name: &str| match ad.eval_attr(name, &env) {
        Value::Str(s) => Some(s.to_string_lossy()),
        _ => None,
    };
    let (how, attr, default) = match ad.eval_attr("JobStatus", &env) {
        Value::Int(3) => ("remove", "RemoveReason", "removed from its queue"),
        Value::Int(5) => ("hold", "HoldReason", "held in its queue"),
        _ => return None,
    };
    Some(Withdrawal {
        how,
        reason: text(attr).unwrap_or_else(|| default.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_removed_or_held_status_withdraws_the_job() {
        let w = read(b"JobStatus = 3\nRemoveReason = \"via roost rm\"\n").expect("removed");
        assert_eq!((w.how, w.reason.as_str()), ("remove", "via roost rm"));
        let w = read(b"JobStatus = 5\n").expect("held");
        assert_eq!((w.how, w.reason.as_str()), ("hold", "held in its queue"));
        assert_eq!(w.reason_attr(), "HoldReason");
        for nothing in [&b""[..], b"JobStatus = 2\n", b"Foo = 1\n", b"garbage @@\n"] {
            assert_eq!(read(nothing), None);
        }
    }
}
