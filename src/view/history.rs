//! `status --issue N`: one issue's Claim history as its comments tell it, oldest claim first:
//! each claim (host, stage, session, logs) with how it stands (owner with the pass's health,
//! superseded, or ended with the end record's outcome, actor, time and reason), the thirdshift
//! Commands placed on it (their adoption records, with their ends), cancel requests, and the
//! comments the ownership rule ignored. Pure: it renders what the snapshot read.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::model::comment_url;
use super::terminal::age;
use crate::protocol::record::{ClaimView, EndView};
use crate::reconcile::{Finding, Plan};
use crate::snapshot::IssueSnapshot;

/// The history of `issue`, as of `now`, with the plan's verdicts on its active claims.
pub fn render(issue: &IssueSnapshot, plan: &Plan, now: DateTime<Utc>) -> String {
    let own = &issue.ownership;
    let mut out = format!(
        "#{} {} ({})\n{}\n",
        issue.number,
        issue.title,
        if issue.open { "open" } else { "closed" },
        issue.html_url
    );
    let _ = writeln!(out, "labels: {}", issue.labels.join(", "));
    let mut claims: Vec<(&ClaimView, Option<&EndView>)> = own
        .active()
        .map(|c| (c, None))
        .chain(own.ended.iter().map(|(c, e)| (c, Some(e))))
        .collect();
    claims.sort_by_key(|(c, _)| c.comment_id);
    if claims.is_empty() {
        out.push_str("\nNo claim records.\n");
    }
    for (claim, end) in claims {
        out.push('\n');
        claim_lines(&mut out, issue, claim, now);
        let standing = match end {
            Some(e) => ended(issue, e),
            None => match finding(plan, issue.number, &claim.record.claim_id) {
                Some(f) => format!(
                    "active: {}: {}",
                    crate::view::summary::health(&f.health),
                    f.note
                ),
                None => "active".into(),
            },
        };
        let _ = writeln!(out, "  {standing}");
    }
    for a in &own.adoptions {
        let (r, c) = (&a.record, &a.record.command);
        let _ = writeln!(
            out,
            "\nthirdshift {} {} on {} (PID {}), first seen {}",
            r.kind,
            r.claim_id,
            c.host,
            c.pid,
            r.seen_at.format("%Y-%m-%d %H:%M UTC")
        );
        let standing = match own.adopted_end(&r.claim_id) {
            Some(e) => ended(issue, e),
            None => "not ended: its host's report says whether it works".into(),
        };
        let _ = writeln!(out, "  {standing}");
        let _ = writeln!(out, "  {}", comment_url(&issue.html_url, a.comment_id));
    }
    for c in &own.cancels {
        let _ = writeln!(
            out,
            "\ncancel {} for claim {} by {} at {}",
            c.record.request_id,
            c.record.claim_id,
            c.record.requested_by,
            c.record.requested_at.format("%Y-%m-%d %H:%M UTC")
        );
    }
    if !own.problems.is_empty() {
        out.push_str("\nignored:\n");
        for p in &own.problems {
            let _ = writeln!(out, "  {p}");
        }
    }
    out
}

fn claim_lines(out: &mut String, issue: &IssueSnapshot, claim: &ClaimView, now: DateTime<Utc>) {
    let r = &claim.record;
    let _ = writeln!(
        out,
        "claim {} on {} (PID {}), claimed {} ({} ago)",
        r.claim_id,
        r.host,
        r.pid,
        r.claimed_at.format("%Y-%m-%d %H:%M UTC"),
        age(now, r.claimed_at)
    );
    let _ = writeln!(
        out,
        "  stage {} since {} ({} ago)",
        r.stage,
        r.stage_since.format("%Y-%m-%d %H:%M UTC"),
        age(now, r.stage_since)
    );
    if r.harness.is_some() || r.agent_session.is_some() {
        let _ = writeln!(
            out,
            "  harness {}, session {}",
            r.harness.as_deref().unwrap_or("-"),
            r.agent_session.as_deref().unwrap_or("-")
        );
    }
    for log in &r.logs {
        let _ = writeln!(out, "  log {log}");
    }
    let _ = writeln!(out, "  {}", comment_url(&issue.html_url, claim.comment_id));
}

fn ended(issue: &IssueSnapshot, e: &EndView) -> String {
    let r = &e.record;
    format!(
        "ended {} by {} at {}: {}\n  {}",
        r.outcome.as_str(),
        r.actor,
        r.ended_at.format("%Y-%m-%d %H:%M UTC"),
        r.reason,
        comment_url(&issue.html_url, e.comment_id)
    )
}

fn finding<'a>(plan: &'a Plan, issue: u64, claim_id: &str) -> Option<&'a Finding> {
    plan.findings
        .iter()
        .find(|f| f.issue == issue && f.claim_id.as_deref() == Some(claim_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixture;

    #[test]
    fn history_shows_the_owner_and_the_superseded_claim_with_their_verdicts() {
        // given issue 12, owned by a live Run, with a later claim superseded
        let snapshot = fixture::snapshot();
        let plan = fixture::planned(&snapshot);
        // when its history is rendered
        let text = render(snapshot.issue(12).unwrap(), &plan, fixture::now());
        // then both claims are there in comment order, each with how it stands
        insta::assert_snapshot!(text);
    }
}
