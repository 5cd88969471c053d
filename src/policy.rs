//! Pure rules shared by a Run ending its own Claim and reconcile ending a dead Run's Claim, so the
//! two can never disagree: whether a Run started work, and which label an issue gets when its
//! Claim ends. No IO.

use crate::config::Labels;
use crate::record::{ClaimRecord, ClaimView, EndView, Outcome, Salvage};

/// The stage a claim record starts in.
pub const STAGE_CLAIMED: &str = "claimed";
/// The stage a Run records when its command has started.
pub const STAGE_RUNNING: &str = "running";

/// Whether the Run did any work worth keeping: it reported a stage of its own (see
/// docs/adr/0001).
pub fn work_started(record: &ClaimRecord) -> bool {
    record.stage != STAGE_CLAIMED && record.stage != STAGE_RUNNING
}

/// Whether an ended Run left work anyone should look at: anything of it on origin (`on_origin`:
/// its Issue branch or a pull request, as read from GitHub; `None` when not read), or anything
/// its host kept (`kept`, the salvage report: commits or files it saved, or work it had to leave
/// in place; when origin was not read, a salvage that found the Issue branch on origin counts
/// too); without a salvage report (no worktree was recorded), whether the Run reported a stage of
/// its own. One rule for a Run ending its own Claim and for reconcile ending a dead one
/// (docs/adr/0001).
pub fn work_left(record: &ClaimRecord, on_origin: Option<bool>, kept: Option<&Salvage>) -> bool {
    if on_origin == Some(true) {
        return true;
    }
    match kept {
        Some(k) => !k.nothing_to_keep || (on_origin.is_none() && k.pushed),
        None => work_started(record),
    }
}

/// The label to add when the Claim of `record` ends with `outcome`, if any: failed and
/// recovered Claims go back to the queue only when the Run left no work ([`work_left`], with
/// `kept` what its host kept) and the Claim had removed `ready-for-agent`, else to people;
/// handed-back and cancelled Claims (both stopped on request) go back to the queue when the
/// Claim had removed `ready-for-agent`, whatever was kept (the end record says where it is).
pub fn label_after<'a>(
    labels: &'a Labels,
    record: &ClaimRecord,
    outcome: Outcome,
    kept: Option<&Salvage>,
) -> Option<&'a str> {
    match outcome {
        Outcome::HandedBack | Outcome::Cancelled if record.removed_ready => Some(&labels.ready),
        Outcome::Failed | Outcome::Recovered
            if !record.removed_ready || work_left(record, None, kept) =>
        {
            Some(&labels.hand_off)
        }
        Outcome::Failed | Outcome::Recovered => Some(&labels.ready),
        _ => None,
    }
}

/// The label to add when a Claim ends whose Run's command never started: `ready-for-agent`
/// back when the Claim had removed it, else none, so the issue is as the Claim found it.
pub fn label_unstarted<'a>(labels: &'a Labels, record: &ClaimRecord) -> Option<&'a str> {
    record.removed_ready.then_some(labels.ready.as_str())
}

/// The command a person runs to resume an agent session, for Harnesses that allow it.
/// The session id is shell-quoted unless it is made of characters no shell treats specially,
/// since a person pastes the command and the id comes from the agent's `stage --session`.
pub fn resume_command(harness: Option<&str>, session: Option<&str>) -> Option<String> {
    let session = shell_word(session.filter(|s| !s.trim().is_empty())?);
    match harness?.to_ascii_lowercase().as_str() {
        "claude" | "claude-code" => Some(format!("claude --resume {session}")),
        "codex" => Some(format!("codex resume {session}")),
        _ => None,
    }
}

/// `word` as one shell word: as it is when every character is safe, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_.:@/=+,%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The label thirdshift 0.19.0 puts on an issue whose failed run keeps its Claim (its
/// `claim::AGENT_FAILED`); thirdshift's Failure limit counts it and its next Claim takes it off.
pub const AGENT_FAILED: &str = "agent-failed";

/// thirdshift 0.19.0's label of a Security fix Ticket (`security::fixing::SECURITY_FIX`), whose
/// failed run keeps its Claim even with nothing on origin.
pub const SECURITY_FIX: &str = "security-fix";

/// The labels a dead thirdshift Command's issue carries once its Claim ends, as thirdshift's own
/// Failed run labels it (docs/thirdshift.md): with work `started` (anything on origin, or kept
/// on its host) the Claim stays and the issue is labelled `agent-failed`; with none it is
/// released, `ready-for-agent` back in place of `in-progress`.
pub fn adopted_labels_after(labels: &Labels, started: bool) -> Vec<String> {
    if started {
        vec![labels.in_progress.clone(), AGENT_FAILED.to_string()]
    } else {
        vec![labels.ready.clone()]
    }
}

/// Whether `branch` is a later Issue branch of `issue` as thirdshift names them
/// (`issue-N-branch-K`, K ≥ 2): thirdshift takes one only once the earlier ones were used on
/// origin (`src/branch.rs`, `select`), so the issue was started there.
pub fn later_issue_branch(issue: u64, branch: &str) -> bool {
    branch
        .strip_prefix(&format!("issue-{issue}-branch-"))
        .and_then(|k| k.parse::<u64>().ok())
        .is_some_and(|k| k >= 2)
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
    fn a_session_id_with_shell_metacharacters_is_quoted_in_the_resume_command() {
        let plain = resume_command(Some("claude"), Some("sess-1_a.b"));
        assert_eq!(plain.as_deref(), Some("claude --resume sess-1_a.b"));
        let hostile = resume_command(Some("claude"), Some("x; rm -rf ~ `id` $(id)"));
        assert_eq!(
            hostile.as_deref(),
            Some("claude --resume 'x; rm -rf ~ `id` $(id)'")
        );
        // A person pasting the quoted word gets exactly the id back, quotes included
        let id = "a'b $(id) `id`";
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf %s {}", shell_word(id))])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), id);
    }

    #[test]
    fn cancelled_claims_are_handed_back_like_handed_back_ones() {
        let labels = Labels::default();
        let mut record = crate::record::claim::tests::sample_claim();
        for outcome in [Outcome::HandedBack, Outcome::Cancelled] {
            record.removed_ready = true;
            assert_eq!(
                label_after(&labels, &record, outcome, None),
                Some("ready-for-agent")
            );
            record.removed_ready = false;
            assert_eq!(label_after(&labels, &record, outcome, None), None);
        }
    }

    fn kept(nothing_to_keep: bool, pushed: bool) -> Salvage {
        Salvage {
            pushed,
            nothing_to_keep,
            ..Salvage::untouched("/w".into(), "issue-42".into())
        }
    }

    #[test]
    fn a_failed_run_whose_host_kept_work_goes_to_people_even_without_a_stage() {
        // given a Claim that removed the ready label and never reported a stage of its own
        let labels = Labels::default();
        let record = crate::record::claim::tests::sample_claim();
        let record = ClaimRecord {
            stage: STAGE_RUNNING.into(),
            removed_ready: true,
            ..record
        };
        for outcome in [Outcome::Failed, Outcome::Recovered] {
            // when its host kept commits or files, or found its Issue branch on origin
            for k in [kept(false, false), kept(false, true), kept(true, true)] {
                // then the issue goes to people
                assert_eq!(
                    label_after(&labels, &record, outcome, Some(&k)),
                    Some("ready-for-human"),
                    "{outcome:?} {k:?}"
                );
            }
            // and when salvage found nothing at all, or nothing was known, back to the queue
            for k in [Some(&kept(true, false)), None] {
                assert_eq!(
                    label_after(&labels, &record, outcome, k),
                    Some("ready-for-agent")
                );
            }
        }
    }

    #[test]
    fn work_on_origin_counts_whatever_salvage_found() {
        let record = crate::record::claim::tests::sample_claim();
        assert!(work_left(&record, Some(true), Some(&kept(true, false))));
        // a salvage that found the branch on origin counts only when origin was not read
        assert!(work_left(&record, None, Some(&kept(true, true))));
        assert!(!work_left(&record, Some(false), Some(&kept(true, true))));
        let quiet = ClaimRecord {
            stage: STAGE_RUNNING.into(),
            ..record
        };
        assert!(!work_left(&quiet, None, Some(&kept(true, false))));
        let staged = ClaimRecord {
            stage: "implementing".into(),
            ..quiet
        };
        // a stage of its own counts only when no salvage report says what is there
        assert!(work_left(&staged, None, None));
        assert!(!work_left(&staged, None, Some(&kept(true, false))));
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
