//! The words of remote cancel: the readable part of a cancel record, the answer `cancel --issue N`
//! prints (and `/thirdshift cancel` will reply), the end record's reason when a cancelled Run is
//! stopped, and the line `observe` prints for each request it carried out. No decisions here.

use super::{code, one_line, quote, time};
use crate::protocol::record::{AdoptedRun, CancelRecord, CancelView, ClaimView, EndView, Outcome};

/// The readable part of a cancel record comment.
pub fn cancel_comment(r: &CancelRecord) -> String {
    let mut out = format!(
        "🛑 **Cancel requested** for claim {} by {} at {}. The host running it stops the Run at \
         its next `observe` (SIGTERM, then SIGKILL after a grace period), commits and pushes what \
         its worktree holds to the Issue branch, ends the Claim as cancelled and {}",
        code(&r.claim_id),
        code(&r.requested_by),
        time(r.requested_at),
        after_cancel(r.requeue)
    );
    if let Some(reason) = r.reason.as_deref().filter(|t| !t.trim().is_empty()) {
        out.push_str("\n\n");
        out.push_str(&quote(reason));
    }
    out.push_str(&format!(
        "\n\n<sub>Request {}. Only a request by a trusted author is carried out.</sub>",
        code(&r.request_id)
    ));
    out
}

/// What becomes of the issue once a cancel has stopped its Run.
pub fn after_cancel(requeue: bool) -> &'static str {
    if requeue {
        "puts the issue straight back in the queue (`--requeue`)."
    } else {
        "holds the issue: no Run takes it again until a person puts the ready label back."
    }
}

/// `cancel`'s answer when it posted a request.
pub fn requested(claim: &ClaimView, request_id: &str, comment_id: u64) -> String {
    let c = &claim.record;
    format!(
        "issue #{}: cancel requested for claim {} (the Run on host {}, pid {}); request {} is \
         comment {comment_id}. Host {} stops the Run at its next observe.",
        c.issue, c.claim_id, c.host, c.pid, request_id, c.host
    )
}

/// `cancel`'s answer once a request to stop thirdshift Command `claim_id` on `host` is posted.
pub fn adopted_requested(
    issue: u64,
    host: &str,
    facts: &AdoptedRun,
    request_id: &str,
    comment_id: u64,
) -> String {
    format!(
        "issue #{issue}: cancel requested for thirdshift's Command {} (record {}, pid {}, on host \
         {host}); request {request_id} is comment {comment_id}. Host {host} runs `thirdshift \
         stop <its record> --requeue` at its next observe; thirdshift then ends its Claim and \
         puts the issue back in the queue itself.",
        facts.kind,
        one_line(&facts.record),
        facts.pid
    )
}

/// `cancel`'s answer when a request for thirdshift Command `claim_id` is already waiting.
pub fn adopted_already_pending(issue: u64, claim_id: &str, pending: &CancelView) -> String {
    let r = &pending.record;
    format!(
        "issue #{issue}: a cancel request for thirdshift's Command {claim_id} is already \
         pending: request {} (comment {}) by {} at {}; nothing posted.",
        r.request_id,
        pending.comment_id,
        one_line(&r.requested_by),
        time(r.requested_at)
    )
}

/// `cancel`'s answer when a request for the same Claim is already waiting: nothing is posted.
pub fn already_pending(claim: &ClaimView, pending: &CancelView) -> String {
    let (c, r) = (&claim.record, &pending.record);
    format!(
        "issue #{}: a cancel request for claim {} (the Run on host {}) is already pending: \
         request {} (comment {}) by {} at {}; nothing posted. Host {} stops the Run at its next \
         observe.",
        c.issue,
        c.claim_id,
        c.host,
        r.request_id,
        pending.comment_id,
        one_line(&r.requested_by),
        time(r.requested_at),
        c.host
    )
}

/// `cancel`'s answer when the issue has no active Run: nothing is written.
pub fn nothing_to_cancel(issue: u64, last: Option<&EndView>) -> String {
    let why = match last {
        Some(e) => {
            let r = &e.record;
            format!(
                "its last Claim ended: {}, claim {} by {} at {}",
                r.outcome,
                r.claim_id,
                one_line(&r.actor),
                time(r.ended_at)
            )
        }
        None => "it has never been claimed".to_string(),
    };
    format!("issue #{issue} has no active Run ({why}); nothing to cancel")
}

/// The reason of an end record for a Claim ended on `request`; `how` says how the Run stopped.
pub fn cancelled_reason(request: &CancelView, how: &str) -> String {
    let r = &request.record;
    let words = r
        .reason
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .map(|t| format!(", \"{}\"", one_line(t.trim())));
    format!(
        "cancelled on request {} by {} (comment {}{}): {how}",
        r.request_id,
        one_line(&r.requested_by),
        request.comment_id,
        words.unwrap_or_default()
    )
}

/// How the owning host stopped a cancelled Run.
pub fn stopped_how(host: &str, grace_secs: u64, killed: usize) -> String {
    if killed == 0 {
        format!(
            "host {host} sent SIGTERM to the Run and its session, and they stopped within the \
             {grace_secs} s grace period"
        )
    } else {
        format!(
            "host {host} sent SIGTERM to the Run and its session; {killed} process(es) still \
             running after the {grace_secs} s grace period were killed (SIGKILL)"
        )
    }
}

/// `observe`'s line for a request it carried out and whose Claim is now ended: `how` the Run
/// stopped, and whether this pass (`by` is `None`) or someone before it ended the Claim.
pub fn carried_out(
    issue: u64,
    claim_id: &str,
    how: &str,
    outcome: Outcome,
    by: Option<&str>,
) -> String {
    let ended = match by {
        None => format!("Claim ended {outcome}"),
        Some(login) => format!("its Claim was already ended ({outcome}, by @{login})"),
    };
    format!("  #{issue} {claim_id} cancelled: {how}; {ended}")
}

/// `observe`'s line for a request it could not finish: processes survived SIGKILL.
pub fn still_running(issue: u64, claim_id: &str, pids: &[u32]) -> String {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!(
        "  #{issue} {claim_id} cancel pending: {} process(es) survived SIGKILL ({}); the next \
         observe tries again",
        pids.len(),
        pids.join(", ")
    )
}

/// `observe`'s line for a request whose Run no longer runs here: recovery ends its Claim.
pub fn nothing_running(issue: u64, claim_id: &str) -> String {
    format!(
        "  #{issue} {claim_id} cancel pending: nothing this host can prove to be the Run's still \
         runs; its Claim ends the way a dead Run's does"
    )
}

pub fn not_recorded_here(issue: u64, claim_id: &str) -> String {
    format!(
        "  #{issue} {claim_id} cancel pending: this host has no local record of that Claim, and \
         it signals nothing on GitHub's copy alone; `/thirdshift recover --force` ends the Claim"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::cancel::tests::sample_cancel;
    use crate::protocol::record::claim::tests::sample_claim;
    use crate::protocol::record::end::tests::sample_end;
    use crate::protocol::record::CancelRecord;
    use crate::text::ToComment;

    fn claim_view() -> ClaimView {
        ClaimView {
            comment_id: 5_000_000_001,
            author: "bot".into(),
            record: sample_claim(),
        }
    }

    fn request(reason: Option<&str>) -> CancelView {
        CancelView {
            comment_id: 5_000_000_003,
            author: "bot".into(),
            record: CancelRecord {
                reason: reason.map(str::to_string),
                ..sample_cancel()
            },
        }
    }

    #[test]
    fn cancel_comment_with_and_without_a_reason() {
        insta::assert_snapshot!(sample_cancel().to_comment());
        let bare = CancelRecord {
            reason: None,
            ..sample_cancel()
        };
        insta::assert_snapshot!("cancel_comment_without_reason", cancel_comment(&bare));
    }

    #[test]
    fn every_answer_of_the_cancel_command() {
        let end = EndView {
            comment_id: 5_000_000_002,
            author: "bot".into(),
            record: sample_end(Outcome::Done),
        };
        let all = [
            requested(&claim_view(), "cx-00000000000000aa", 5_000_000_003),
            already_pending(&claim_view(), &request(None)),
            nothing_to_cancel(42, Some(&end)),
            nothing_to_cancel(42, None),
            adopted_requested(
                42,
                "build-01",
                &crate::protocol::record::report::tests::sample_adopted_run("issue-42"),
                "cx-00000000000000aa",
                5_000_000_003,
            ),
            adopted_already_pending(42, "ts-00000000000000a7", &request(None)),
        ];
        insta::assert_snapshot!(all.join("\n"));
    }

    #[test]
    fn every_sentence_of_carrying_a_cancel_out() {
        let all = [
            cancelled_reason(&request(None), &stopped_how("build-01", 10, 0)),
            cancelled_reason(
                &request(Some("wrong\napproach")),
                &stopped_how("build-01", 1, 2),
            ),
            cancelled_reason(&request(None), "the Run was stopped by signal 15"),
            carried_out(
                42,
                "c-1",
                &stopped_how("b", 10, 0),
                Outcome::Cancelled,
                None,
            ),
            carried_out(
                42,
                "c-1",
                &stopped_how("b", 1, 1),
                Outcome::Cancelled,
                Some("bot"),
            ),
            still_running(42, "c-1", &[7, 8]),
            nothing_running(42, "c-1"),
        ];
        insta::assert_snapshot!(all.join("\n"));
    }
}
