//! Pure rules shared by a Run ending its own Claim and reconcile ending a dead Run's Claim, so the
//! two can never disagree: whether a Run started work, and which label an issue gets when its
//! Claim ends. No IO.

use crate::config::Labels;
use crate::record::{ClaimRecord, Outcome};

/// The stage a claim record starts in.
pub const STAGE_CLAIMED: &str = "claimed";
/// The stage a Run records when its command has started.
pub const STAGE_RUNNING: &str = "running";

/// Whether the Run did any work worth keeping: it reported a stage of its own (see
/// docs/adr/0001).
pub fn work_started(record: &ClaimRecord) -> bool {
    record.stage != STAGE_CLAIMED && record.stage != STAGE_RUNNING
}

/// The label to add when the Claim of `record` ends with `outcome`, if any: failed and
/// recovered Claims go back to the queue only when nothing was started and the Claim had removed
/// `ready-for-agent`, else to people; handed-back Claims go back to the queue.
pub fn label_after<'a>(
    labels: &'a Labels,
    record: &ClaimRecord,
    outcome: Outcome,
) -> Option<&'a str> {
    match outcome {
        Outcome::HandedBack if record.removed_ready => Some(&labels.ready),
        Outcome::Failed | Outcome::Recovered if !record.removed_ready => Some(&labels.hand_off),
        Outcome::Failed | Outcome::Recovered if work_started(record) => Some(&labels.hand_off),
        Outcome::Failed | Outcome::Recovered => Some(&labels.ready),
        _ => None,
    }
}
