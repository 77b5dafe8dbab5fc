//! What crosses `roost schedd`'s socket: one JSON request line, one JSON
//! answer line ([`crate::admin::Response`], as the startd's socket
//! answers), through [`crate::admin::call_with`]. Who asks is the caller's
//! Unix user, read from the socket (`SO_PEERCRED`): the owner of what it
//! submits; only the owner of a job, the daemon's user or root may change
//! it; only the daemon's user or root may fetch work; a node's reports on a
//! job are taken from anyone holding the job's lease token.
//!
//! The `log` request has the startd's shape, so `roost-log` reads the
//! schedd's log through its socket the same way.

use serde::{Deserialize, Serialize};

use super::event::ExitHow;
use super::queue::Targets;

/// The knob naming the socket; by default `$(LOCK)/roost_schedd.sock`.
pub const SOCKET_KNOB: &str = "ROOST_SCHEDD_SOCKET";

/// What a client asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum ScheddRequest {
    /// A cluster number for a submission to come (`roost submit` needs it
    /// to expand `$(Cluster)`).
    NewCluster,
    /// Jobs into the queue (new-syntax ads), in cluster `cluster` (one
    /// `new_cluster` gave) or a new one.
    Submit {
        /// The job ads.
        ads: Vec<String>,
        /// The cluster, when one was reserved.
        #[serde(default)]
        cluster: Option<i64>,
    },
    /// The jobs in the queue, or in the history, that `targets` name.
    Query {
        /// Which.
        #[serde(default)]
        targets: Targets,
        /// The history instead of the queue (newest first).
        #[serde(default)]
        history: bool,
        /// At most this many.
        #[serde(default)]
        limit: Option<usize>,
    },
    /// Hold, release or remove jobs.
    Act {
        /// What.
        action: Action,
        /// Which.
        targets: Targets,
        /// Why (default: "via roost <action> (by user U)").
        #[serde(default)]
        reason: Option<String>,
    },
    /// FETCH_WORK: the first idle job that matches this slot ad, under a
    /// lease.
    Fetch {
        /// The slot ad the hook was given (any syntax HTCondor writes).
        slot: String,
    },
    /// REPLY_FETCH.
    Reply {
        /// `cluster.proc`.
        job: String,
        /// The lease's token.
        token: String,
        /// `accept` or not.
        accept: bool,
    },
    /// JOB_EXIT.
    Exit {
        /// `cluster.proc`.
        job: String,
        /// The lease's token.
        token: String,
        /// The hook's argument.
        how: ExitHow,
        /// The job ad the hook was given.
        ad: String,
    },
    /// UPDATE_JOB_INFO.
    Update {
        /// `cluster.proc`.
        job: String,
        /// The lease's token.
        token: String,
        /// The job ad the hook was given.
        ad: String,
    },
    /// EVICT_CLAIM.
    EvictClaim {
        /// `cluster.proc`.
        job: String,
        /// The lease's token.
        token: String,
    },
    /// The schedd's own ad (`MyType = "Scheduler"`), with what its cron
    /// jobs published.
    Ad,
    /// The log's events, as the startd's socket serves them.
    Log {
        /// The first sequence number wanted.
        from: u64,
        /// Only this actor's events.
        #[serde(default)]
        actor: Option<String>,
        /// At most this many.
        #[serde(default)]
        limit: Option<usize>,
    },
}

/// A command on jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `roost hold`.
    Hold,
    /// `roost release`.
    Release,
    /// `roost rm`.
    Remove,
}

impl Action {
    /// The command's name, as users type it.
    pub fn command(self) -> &'static str {
        match self {
            Action::Hold => "hold",
            Action::Release => "release",
            Action::Remove => "rm",
        }
    }

    /// The reason recorded when the user gives none.
    pub fn default_reason(self, user: &str) -> String {
        format!("via roost {} (by user {user})", self.command())
    }

    /// How the command's answer says a job was changed.
    pub fn past(self) -> &'static str {
        match self {
            Action::Hold => "held",
            Action::Release => "released",
            Action::Remove => "marked for removal",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_tagged_json_with_defaults() {
        let r: ScheddRequest =
            serde_json::from_str(r#"{"command":"act","action":"remove","targets":{"ids":["3"]}}"#)
                .expect("reads");
        assert_eq!(
            r,
            ScheddRequest::Act {
                action: Action::Remove,
                targets: Targets {
                    ids: vec!["3".into()],
                    ..Targets::default()
                },
                reason: None
            }
        );
        let log = serde_json::to_string(&crate::admin::Request::Log {
            from: 4,
            actor: None,
            limit: Some(2),
        })
        .expect("writes");
        assert_eq!(
            serde_json::from_str::<ScheddRequest>(&log).expect("reads"),
            ScheddRequest::Log {
                from: 4,
                actor: None,
                limit: Some(2)
            }
        );
        let exit = r#"{"command":"exit","job":"1.0","token":"t","how":"evict","ad":"[]"}"#;
        assert!(matches!(
            serde_json::from_str::<ScheddRequest>(exit),
            Ok(ScheddRequest::Exit {
                how: ExitHow::Evict,
                ..
            })
        ));
    }
}
