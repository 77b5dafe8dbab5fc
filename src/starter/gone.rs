//! What a starter's end means, decided without I/O: from how the process
//! ended and what it had reported, whether the starter is *lost* (it left
//! before running JOB_EXIT, so its job is unwatched and the fetcher
//! unaware) and what must be cleaned up after it. The starter actor asks
//! [`decide`], records the decision (`Starter.Exited`, with `lost`), and
//! only then acts on it.

use crate::exit::Exit;

/// What the daemon knows of a starter when its process has ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// It said it has nothing more to report.
    pub done: bool,
    /// It reported running JOB_EXIT: the fetcher has heard.
    pub job_exit_heard: bool,
    /// It reported that the job's process ended.
    pub job_ended: bool,
    /// The job's process group, when it reported one.
    pub job_pid: Option<u32>,
    /// The job names a job event log.
    pub user_log: bool,
}

/// What follows from a starter's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gone {
    /// The starter is lost: the slot ends the claim as lost (EVICT_CLAIM
    /// tells the fetcher) instead of waiting for more work.
    pub lost: bool,
    /// The job's process group to kill (a lost starter's job still
    /// running).
    pub kill_job: Option<u32>,
    /// What is left in the job's cgroup is killed and the cgroup removed.
    pub clean_cgroup: bool,
    /// The job's sandbox is removed.
    pub remove_sandbox: bool,
    /// The loss is written in the job's event log (by another starter, as
    /// the job's user): the job had not ended.
    pub note_in_user_log: bool,
}

/// What the end of a starter that ended with `exit`, having reported what
/// `seen` says, means.
pub fn decide(exit: &Exit, seen: &Seen) -> Gone {
    let clean = *exit == Exit::Code(0) || seen.done;
    let lost = !clean && !seen.job_exit_heard;
    if !lost {
        return Gone::default();
    }
    Gone {
        lost,
        kill_job: seen.job_pid.filter(|p| *p > 0 && !seen.job_ended),
        clean_cgroup: true,
        remove_sandbox: true,
        note_in_user_log: !seen.job_ended && seen.user_log,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_starter_is_lost_only_when_it_left_before_job_exit_without_saying_it_was_done() {
        let running = Seen {
            job_pid: Some(42),
            user_log: true,
            ..Seen::default()
        };
        // Killed with its job running: everything is cleaned up.
        assert_eq!(
            decide(&Exit::Signal(9), &running),
            Gone {
                lost: true,
                kill_job: Some(42),
                clean_cgroup: true,
                remove_sandbox: true,
                note_in_user_log: true,
            }
        );
        // The job had ended: nothing to kill, nothing to note.
        let ended = Seen {
            job_ended: true,
            ..running
        };
        let g = decide(&Exit::Code(3), &ended);
        assert!(g.lost && g.kill_job.is_none() && !g.note_in_user_log);
        // A clean exit, a starter that said it was done, or one that ran
        // JOB_EXIT is not lost.
        for (exit, seen) in [
            (Exit::Code(0), running),
            (
                Exit::Signal(9),
                Seen {
                    done: true,
                    ..running
                },
            ),
            (
                Exit::Code(1),
                Seen {
                    job_exit_heard: true,
                    ..running
                },
            ),
        ] {
            assert_eq!(decide(&exit, &seen), Gone::default(), "{exit:?} {seen:?}");
        }
    }
}
