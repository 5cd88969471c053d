//! Pure rules shared by a Run ending its own Claim and reconcile ending a dead Run's Claim, so the
//! two can never disagree: whether a Run started work, and which label an issue gets when its
//! Claim ends. No IO.

use crate::config::Labels;
use crate::record::{ClaimRecord, ClaimView, EndView, Outcome};

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
/// `ready-for-agent`, else to people; handed-back and cancelled Claims (both stopped on
/// request) go back to the queue when the Claim had removed `ready-for-agent`.
pub fn label_after<'a>(
    labels: &'a Labels,
    record: &ClaimRecord,
    outcome: Outcome,
) -> Option<&'a str> {
    match outcome {
        Outcome::HandedBack | Outcome::Cancelled if record.removed_ready => Some(&labels.ready),
        Outcome::Failed | Outcome::Recovered if !record.removed_ready => Some(&labels.hand_off),
        Outcome::Failed | Outcome::Recovered if work_started(record) => Some(&labels.hand_off),
        Outcome::Failed | Outcome::Recovered => Some(&labels.ready),
        _ => None,
    }
}

/// The command a person runs to resume an agent session, for Harnesses that allow it.
pub fn resume_command(harness: Option<&str>, session: Option<&str>) -> Option<String> {
    let session = session.filter(|s| !s.trim().is_empty())?;
    match harness?.to_ascii_lowercase().as_str() {
        "claude" | "claude-code" => Some(format!("claude --resume {session}")),
        "codex" => Some(format!("codex resume {session}")),
        _ => None,
    }
}

/// How many times an issue was already continued, counted from its end records.
pub fn continuations(ended: &[(ClaimView, EndView)]) -> u32 {
    let n = ended
        .iter()
        .filter(|(_, e)| e.record.outcome == Outcome::Continued)
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelled_claims_are_handed_back_like_handed_back_ones() {
        let labels = Labels::default();
        let mut record = crate::record::claim::tests::sample_claim();
        for outcome in [Outcome::HandedBack, Outcome::Cancelled] {
            record.removed_ready = true;
            assert_eq!(
                label_after(&labels, &record, outcome),
                Some("ready-for-agent")
            );
            record.removed_ready = false;
            assert_eq!(label_after(&labels, &record, outcome), None);
        }
    }

    #[test]
    fn resume_command_is_known_for_claude_and_codex_only() {
        assert_eq!(
            resume_command(Some("claude"), Some("s-1")).as_deref(),
            Some("claude --resume s-1")
        );
        assert_eq!(
            resume_command(Some("Codex"), Some("s-2")).as_deref(),
            Some("codex resume s-2")
        );
        assert_eq!(resume_command(Some("aider"), Some("s-3")), None);
        assert_eq!(resume_command(Some("claude"), None), None);
        assert_eq!(resume_command(None, Some("s-4")), None);
    }
}
