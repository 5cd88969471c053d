//! The sentences a reconcile pass writes into end records, findings and deletions, kept apart
//! from the decisions so `plan.rs` reads as rules, and beside the rest of the bot's text. One
//! sentence each, naming the evidence; no decisions and no IO here.

use crate::protocol::record::{ClaimView, DeathReason, EndRecord};

pub fn recovered_reason(host: &str, claim_id: &str, reason: DeathReason, evidence: &str) -> String {
    format!(
        "host {host} reports the Run of claim {claim_id} dead ({}): {evidence}",
        reason.as_str()
    )
}

pub fn superseded_reason(issue: u64, claim: &ClaimView, owner: &ClaimView) -> String {
    format!(
        "claim {} (comment {}) was taken while claim {} (comment {}) owned issue #{issue}: \
         superseded",
        claim.record.claim_id, claim.comment_id, owner.record.claim_id, owner.comment_id
    )
}

pub fn swept_reason(issue: u64, claim_id: &str) -> String {
    format!("issue #{issue} was closed while claim {claim_id} was still active: swept")
}

pub fn unowned_note(issue: u64, in_progress: &str) -> String {
    format!(
        "issue #{issue} carries {in_progress} but no active claim and no end record stating its \
         labels: left for people"
    )
}

pub fn finished_note(end: &EndRecord, list: &[String], in_progress: &str) -> String {
    let labels = if list.is_empty() {
        "no thirdshift label".to_string()
    } else {
        list.join(", ")
    };
    let keeps = list.iter().any(|l| l.eq_ignore_ascii_case(in_progress));
    let without = if keeps {
        String::new()
    } else {
        format!(", without {in_progress}")
    };
    format!(
        "claim {} ended {} but its labels were not all applied: now {labels}{without}",
        end.claim_id, end.outcome
    )
}

/// Why a Run shows `host silent`: its host's last report, its refresh interval, and what that
/// report said (`was`). Display only: nothing is decided on it.
pub fn host_silent_note(
    host: &str,
    last_report: Option<chrono::DateTime<chrono::Utc>>,
    refresh_secs: u64,
    was: &str,
) -> String {
    let since = last_report.map_or("ever".to_string(), |t| {
        format!("since {}", t.format("%Y-%m-%d %H:%M UTC"))
    });
    format!(
        "host {host} has not reported {since} though it refreshes its report every {} min: its \
         observe has probably stopped (the Claim is not ended for this: check the host); its last \
         report said: {was}",
        refresh_secs / 60
    )
}

/// A finding's note: `why`, then what the labels became ([`labels_clause`]).
pub fn with_labels_clause(why: &str, list: &[String], in_progress: &str) -> String {
    format!("{why}; {}", labels_clause(list, in_progress))
}

/// What an ended Claim's labels (`list`, listing `in_progress`: it stays) do to its issue, as a
/// clause: `the issue goes to ready-for-human`, `the issue keeps in-progress and gets
/// agent-failed`.
fn labels_clause(list: &[String], in_progress: &str) -> String {
    let (kept, added): (Vec<&String>, Vec<&String>) = list
        .iter()
        .partition(|l| l.eq_ignore_ascii_case(in_progress));
    let added: Vec<&str> = added.iter().map(|l| l.as_str()).collect();
    match (kept.is_empty(), added.is_empty()) {
        (true, true) => format!("the issue loses {in_progress}"),
        (true, false) => format!("the issue goes to {}", added.join(", ")),
        (false, true) => format!("the issue keeps {in_progress}"),
        (false, false) => format!(
            "the issue keeps {in_progress} and gets {}",
            added.join(", ")
        ),
    }
}

/// The finding on an issue whose labels a person changed after the end record stating them.
pub fn peoples_labels_note(end: &EndRecord, labels: &[String]) -> String {
    format!(
        "claim {} ended {}, and a person changed {} since: left as they set it",
        end.claim_id,
        end.outcome,
        labels.join(", ")
    )
}

pub fn duplicate_end_reason(claim_id: &str, first_comment_id: u64) -> String {
    format!("a later end record for claim {claim_id}; comment {first_comment_id} ended it first")
}

pub fn duplicate_report_reason() -> String {
    "a later copy of a host's report; the first one counts".to_string()
}

/// What a Run says when GitHub refused its end record for longer than its retries: its outcome
/// is kept on this host, and the Claim is ended with it later.
pub fn end_left_to_observe(
    claim_id: &str,
    outcome: crate::protocol::record::Outcome,
    error: &anyhow::Error,
) -> String {
    format!(
        "could not write the end of claim {claim_id} ({error:#}); the Run's outcome `{outcome}` is \
         kept in this host's state folder: this host's next `observe` reports it and reconcile \
         ends the Claim `{outcome}`"
    )
}

/// What a Run says on stderr once it holds its Claim.
pub fn run_holds(issue: u64, claim_id: &str, claim_url: &str) -> String {
    format!(
        "holding issue #{issue} as claim {claim_id} ({claim_url}); the Claim ends when the \
         command exits"
    )
}

/// What a Run says on stderr once its end record is written: the outcome, how its command
/// ended, and where the record is.
pub fn run_ended(
    issue: u64,
    claim_id: &str,
    outcome: crate::protocol::record::Outcome,
    exit_code: Option<i32>,
    signal: Option<i32>,
    end_url: &str,
) -> String {
    let how = match (exit_code, signal) {
        (Some(code), _) => format!(" (the command exited {code})"),
        (None, Some(sig)) => format!(" (the command was stopped by signal {sig})"),
        (None, None) => String::new(),
    };
    format!("claim {claim_id} on #{issue} ended `{outcome}`{how}: {end_url}")
}

/// What a Run says on stderr when someone else had already ended its Claim.
pub fn run_already_ended(
    issue: u64,
    claim_id: &str,
    outcome: crate::protocol::record::Outcome,
    by: &str,
) -> String {
    format!("claim {claim_id} on #{issue} was already ended `{outcome}` by {by}; nothing written")
}

/// What a Run says on stderr when its command could not be started; `reason` says why.
pub fn run_not_started(issue: u64, claim_id: &str, reason: &str) -> String {
    format!(
        "{reason}; claim {claim_id} on #{issue} ended failed, its labels back as the Claim found \
         them"
    )
}

/// The reason in the end record reconcile writes for a Run that ended by itself but whose own end
/// write GitHub refused; `reason` is the Run's own.
pub fn finished_for_run(host: &str, claim_id: &str, reason: &str) -> String {
    format!(
        "host {host} reports that the Run of claim {claim_id} ended by itself ({reason}) but could \
         not write its end record: ended for it with its own outcome"
    )
}

/// The reason of a Run's end when its command could not be started; `error` says why.
pub fn not_started_reason(error: &str) -> String {
    format!("the Run's command could not be started: {error}")
}

/// The evidence for a thirdshift Command whose process is gone while its Harness still runs.
pub fn adopted_writers(dead: &str, branch: &str, pids: &[u32]) -> String {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!(
        "{dead}, but {} process(es) carrying thirdshift's session marker still run in a worktree \
         on {branch} ({})",
        pids.len(),
        pids.join(", ")
    )
}

/// The reason in the end record of a thirdshift Command its host proved dead; `labels_after`
/// are the labels the issue carries once it ends.
pub fn adopted_recovered_reason(
    host: &str,
    record: &str,
    reason: DeathReason,
    evidence: &str,
    labels_after: &[String],
) -> String {
    format!(
        "host {host} reports thirdshift's Command {record} dead ({}): {evidence}; ended as \
         thirdshift's own failed run would be, the issue now labelled {}",
        reason.as_str(),
        labels_after.join(", ")
    )
}

/// Why a dead thirdshift Command's issue was handed back for thirdshift's own Continuation.
pub fn adopted_handed_back_reason(
    host: &str,
    record: &str,
    reason: DeathReason,
    evidence: &str,
    moved_to: &str,
    (in_progress, ready): (&str, &str),
) -> String {
    format!(
        "host {host} reports thirdshift's Command {record} dead ({}): {evidence}; its work is on \
         its Issue branch on origin and its worktree was moved aside to {moved_to}, so the issue \
         is handed back ({in_progress} off, then {ready} on) for thirdshift's Pickup to continue \
         that branch",
        reason.as_str(),
    )
}

/// How a Run asked to stop with signal `sig` stopped: its command's session within its grace,
/// or `killed` (SIGKILL) after it.
pub fn stopped_reason(sig: i32, killed: bool) -> String {
    let sig = super::signal_name(sig);
    if killed {
        format!(
            "the Run was stopped by signal {sig}; its command's session did not stop within the \
             grace period and was killed (SIGKILL)"
        )
    } else {
        format!(
            "the Run was stopped by signal {sig}; its command's session stopped within the grace \
             period"
        )
    }
}

/// The reason in the end record of a thirdshift Command its host stopped on cancel request
/// `request_id` through `thirdshift stop --requeue`; `outcome` is thirdshift's own.
pub fn adopted_stopped_reason(host: &str, request_id: &str, record: &str, outcome: &str) -> String {
    format!(
        "host {host} stopped thirdshift's Command {record} on cancel request {request_id} with \
         `thirdshift stop --requeue`; thirdshift recorded: {outcome}"
    )
}

/// The evidence the live view shows for a thirdshift Command its host reported.
pub fn adopted_evidence(host: &str, verdict: &crate::protocol::record::Verdict) -> String {
    match verdict {
        crate::protocol::record::Verdict::Alive => {
            format!("host {host} reports thirdshift's Command alive")
        }
        crate::protocol::record::Verdict::Dead { evidence, .. }
        | crate::protocol::record::Verdict::WritersAlive { evidence, .. } => format!(
            "host {host} reports thirdshift's Command {}: {evidence}",
            verdict.label()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::{Outcome, RawComment, Trust};
    use crate::text::ToComment;

    #[test]
    fn every_reconcile_sentence() {
        let claim = crate::protocol::record::claim::tests::sample_claim();
        let raw = RawComment {
            id: 5_000_000_007,
            author: "bot".into(),
            body: claim.to_comment(),
        };
        let own = crate::protocol::record::Ownership::of(claim.issue, &[raw], &Trust::new(["bot"]));
        let view = own.owner.expect("owner");
        let end = crate::protocol::record::end::tests::sample_end(Outcome::Recovered);
        let all = [
            recovered_reason("build-01", "c-1", DeathReason::PidGone, "pid 42 is gone"),
            superseded_reason(7, &view, &view),
            swept_reason(7, "c-1"),
            unowned_note(7, "in-progress"),
            finished_note(&end, &["ready-for-agent".to_string()], "in-progress"),
            finished_note(&end, &[], "in-progress"),
            duplicate_end_reason("c-1", 5_000_000_009),
            duplicate_report_reason(),
            peoples_labels_note(&end, &["in-progress".to_string()]),
            finished_note(
                &end,
                &["in-progress".to_string(), "agent-failed".to_string()],
                "in-progress",
            ),
            adopted_recovered_reason(
                "build-01",
                "acme/widgets/commands/issue/7-20261204T100000+0000~0123456789abcdef.command.json",
                DeathReason::PidGone,
                "pid 4242 is gone",
                &["in-progress".to_string(), "agent-failed".to_string()],
            ),
            adopted_handed_back_reason(
                "build-01",
                "acme/widgets/commands/issue/7-20261204T100000+0000~0123456789abcdef.command.json",
                DeathReason::PidGone,
                "pid 4242 is gone",
                "/src/widgets-issue-7.dead-ts-0123456789abcdef",
                ("in-progress", "ready-for-agent"),
            ),
            adopted_stopped_reason(
                "build-01",
                "cx-00000000000000aa",
                "acme/widgets/commands/issue/7-20261204T100000+0000~0123456789abcdef.command.json",
                "interrupted",
            ),
        ];
        insta::assert_snapshot!(all.join("\n"));
    }
}
