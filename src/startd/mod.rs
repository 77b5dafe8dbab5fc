//! The startd's log domain, pure as the other daemons' (`schedd::event`,
//! `eventd::event`): its hook and starter events ([`event`]), replaying a
//! log to the state it left ([`replay`]), what a restart makes of that
//! state ([`restart`]) and the story of each claim ([`audit`]). The log
//! engine that stores them is `events`; the actors that write them are
//! `actors::startd`.

pub mod audit;
pub mod event;
pub mod replay;
pub mod restart;

pub use event::{HookEvent, StarterEvent};
pub use replay::{CheckpointEvery, Checkpointer, Replay};
pub use restart::{Kept, LostClaim, Unanswered};

use std::sync::Arc;

use crate::events::{Batch, Checkpoints, CutSummary, Envelope, Event, Retention, StoreError};

/// The startd's log writer checkpoints as its replay needs; the engine
/// sees it through [`Checkpoints`] (the pure `replay` does not name it).
impl Checkpoints<Event> for Checkpointer {
    fn observe(&mut self, base: u64, group: &[(i64, String, Event)]) {
        Checkpointer::observe(self, base, group);
    }
    fn due(&mut self) -> Option<Batch> {
        Checkpointer::due(self)
    }
    fn written(&mut self, at: u64, checkpoint: &[(i64, String, Event)]) {
        Checkpointer::written(self, at, checkpoint);
    }
    fn retention(&self) -> &Retention {
        Checkpointer::retention(self)
    }
    fn now(&self) -> i64 {
        Checkpointer::now(self)
    }
    fn cut_summary(&self) -> Option<Arc<dyn CutSummary>> {
        Some(Arc::new(ClaimsKept))
    }
}

/// What the startd keeps of the events retention cuts: the audit trail of
/// their claims, one [`audit::ClaimRecord`] a line, aged from when the
/// claim was accepted.
struct ClaimsKept;

impl CutSummary for ClaimsKept {
    fn summarize(
        &self,
        events: &mut dyn Iterator<Item = Result<Envelope, StoreError>>,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let mut audit = audit::Audit::default();
        for env in events {
            audit.apply(&env?);
        }
        audit
            .finish()
            .into_iter()
            .map(|c| {
                serde_json::to_string(&c)
                    .map(|line| (c.accepted_at, line))
                    .map_err(|e| StoreError::Summary(format!("a claim's audit record: {e}")))
            })
            .collect()
    }

    fn aged_from(&self, line: &str) -> Option<i64> {
        serde_json::from_str::<audit::ClaimRecord>(line)
            .ok()
            .map(|c| c.accepted_at)
    }
}
