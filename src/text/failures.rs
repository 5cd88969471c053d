//! What people read about the failure limits: the lines an end record at the limit adds to its
//! comment (the failed Runs, listed from the record), and pickup's lines for an issue it leaves
//! alone (held at the limit or by a cancel) and for a host at its Failure limit. It decides
//! nothing (`protocol::failures` does).

use crate::protocol::record::EndRecord;

use super::code;

/// The lines an end record at the failure limit adds to its comment: why the issue went to
/// people, and each failed Run, oldest first. Empty for any other end.
pub fn end_lines(e: &EndRecord) -> String {
    if e.failures.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n\n**Handed to people**: the last {} Runs of this issue failed, so no Run takes it \
         again until a person puts the ready label back (`recovery.max_failures`):",
        e.failures.len()
    );
    for f in &e.failures {
        out.push_str(&format!(
            "\n- Claim {} on host {}: {} ({})",
            code(&f.claim_id),
            code(&f.host),
            f.outcome,
            one_line(&f.reason)
        ));
    }
    out
}

/// A reason on one line, for a list item.
fn one_line(reason: &str) -> String {
    reason.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Pickup's line for issue `n` held at the failure limit by the end comment `end_comment`.
pub fn held_at_limit(n: u64, failed: usize, end_comment: u64, ready: &str) -> String {
    format!(
        "#{n}: skipped, its last {failed} Runs failed and it was handed to people (comment \
         {end_comment}); a person puts `{ready}` back to release it"
    )
}

/// Pickup's line for issue `n` held by the cancel that ended its last Run.
pub fn held_by_cancel(n: u64, end_comment: u64, ready: &str) -> String {
    format!(
        "#{n}: skipped, its last Run was cancelled (comment {end_comment}); a person puts \
         `{ready}` back to release it"
    )
}

/// Pickup's line for issue `n`, held by its last end but released by `by` putting the ready
/// label back after it.
pub fn released(n: u64, by: &str, ready: &str) -> String {
    format!("#{n}: released by {by}, who put `{ready}` back after its last end")
}

/// Pickup's line when this host is at its Failure limit: the open issues it handed to people.
pub fn host_at_limit(host: &str, limit: u32, issues: &[u64]) -> String {
    let list: Vec<String> = issues.iter().map(|n| format!("#{n}")).collect();
    format!(
        "host {host} is at its Failure limit: {} open issue(s) it handed to people for failing \
         ({}; pickup.failure_limit {limit}); pickup takes nothing until people close or relabel \
         them",
        issues.len(),
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::end::tests::sample_end;
    use crate::protocol::record::{FailedRun, Outcome};

    #[test]
    fn an_end_at_the_failure_limit_lists_the_failed_runs_oldest_first() {
        let mut end = sample_end(Outcome::Failed);
        end.failures = vec![
            FailedRun {
                claim_id: "c-1111111111111111".into(),
                host: "build-01".into(),
                outcome: Outcome::Recovered,
                reason: "PID 4242 gone\nafter reboot".into(),
            },
            FailedRun {
                claim_id: "c-0123456789abcdef".into(),
                host: "build-01".into(),
                outcome: Outcome::Failed,
                reason: "CMD exited with code 1".into(),
            },
        ];
        insta::assert_snapshot!(end_lines(&end));
        assert_eq!(end_lines(&sample_end(Outcome::Failed)), "");
    }

    #[test]
    fn pickup_says_why_it_leaves_an_issue_and_a_host_alone() {
        insta::assert_snapshot!([
            held_at_limit(1, 2, 901, "ready-for-agent"),
            held_by_cancel(3, 902, "ready-for-agent"),
            released(3, "alice", "ready-for-agent"),
            host_at_limit("build-01", 3, &[4, 7, 9]),
        ]
        .join("\n"));
    }
}
