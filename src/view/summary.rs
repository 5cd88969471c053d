//! What `observe` and `reconcile` print on the terminal (stdout): a few lines a person reads after
//! a pass. Text posted to GitHub lives in `text.rs`, not here.

use std::fmt::Write as _;

use crate::protocol::record::Outcome;
use crate::protocol::record::{HostReport, Verdict};
use crate::reconcile::apply::Applied;
use crate::reconcile::{Action, Health, PassReport, Plan};

/// `observe`'s lines: the verdict on each Claim of this host and whether the report changed.
pub fn observed(report: &HostReport, written: bool) -> String {
    let mut out = format!(
        "observe {}: {} claim(s); report {}\n",
        report.host,
        report.claims.len(),
        if written { "written" } else { "unchanged" }
    );
    for c in &report.claims {
        let detail = match &c.verdict {
            Verdict::Alive => String::new(),
            Verdict::Dead { reason, evidence } => format!(" ({}): {evidence}", reason.as_str()),
            Verdict::WritersAlive { evidence, .. } => format!(": {evidence}"),
        };
        let _ = writeln!(
            out,
            "  #{} {} {}{detail}",
            c.issue,
            c.claim_id,
            c.verdict.label()
        );
    }
    out
}

/// `reconcile`'s lines: each finding, then what was written.
pub fn pass(plan: &Plan, applied: &Applied) -> String {
    let mut out = String::new();
    for f in &plan.findings {
        let _ = writeln!(out, "  #{} {}: {}", f.issue, health(&f.health), f.note);
    }
    let _ = writeln!(
        out,
        "reconcile: {} end record(s) posted, {} label change(s), {} duplicate(s) removed, {} error(s)",
        applied.ends_posted,
        applied.labels_changed,
        applied.comments_deleted,
        applied.errors.len()
    );
    out
}

/// `reconcile --dry-run`'s lines: each finding, then every write the pass would make, in order.
pub fn planned(plan: &Plan) -> String {
    let mut out = String::new();
    for f in &plan.findings {
        let _ = writeln!(out, "  #{} {}: {}", f.issue, health(&f.health), f.note);
    }
    let _ = writeln!(
        out,
        "reconcile --dry-run: {} write(s) planned, none made",
        plan.actions.len()
    );
    for a in &plan.actions {
        let line = match a {
            Action::PostEnd { issue, end } => format!(
                "#{issue}: post an end record, claim {} {}",
                end.claim_id, end.outcome
            ),
            Action::AddLabel { issue, label } => format!("#{issue}: add label {label}"),
            Action::RemoveLabel { issue, label } => format!("#{issue}: remove label {label}"),
            Action::DeleteComment {
                issue,
                comment_id,
                reason,
            } => format!("#{issue}: delete comment {comment_id} ({reason})"),
            Action::React {
                issue,
                comment_id,
                content,
            } => format!("#{issue}: react {content} to comment {comment_id}"),
            Action::PostCancel { issue, cancel } => {
                format!(
                    "#{issue}: post a cancel request for claim {}",
                    cancel.claim_id
                )
            }
            Action::PostReply { issue, reply, .. } => format!(
                "#{issue}: reply to command comment {}",
                reply.command_comment_id
            ),
        };
        let _ = writeln!(out, "  would {line}");
    }
    out
}

/// The Action's outputs of a reconcile pass: end records posted, Claims ended as recovered or
/// continued (their Run proven dead), commands answered, active Runs seen.
pub fn action_outputs(pass: &PassReport) -> Vec<(&'static str, String)> {
    let applied = &pass.applied;
    let recoveries = pass
        .plan
        .actions
        .iter()
        .filter(|a| match a {
            Action::PostEnd { end, .. } => {
                matches!(end.outcome, Outcome::Recovered | Outcome::Continued)
                    && applied.ended.iter().any(|e| e.claim_id == end.claim_id)
            }
            _ => false,
        })
        .count();
    let runs: usize = pass
        .snapshot
        .issues
        .iter()
        .map(|i| i.ownership.active().count())
        .sum();
    vec![
        ("claims-ended", applied.ends_posted.to_string()),
        ("recoveries", recoveries.to_string()),
        ("commands-answered", applied.replies_posted.to_string()),
        ("runs-seen", runs.to_string()),
    ]
}

/// The health of a finding in a word or two.
pub fn health(h: &Health) -> &'static str {
    match h {
        Health::Alive => "alive",
        Health::Starting => "starting",
        Health::WritersAlive { .. } => "writers alive",
        Health::AwaitingHost => "awaiting host",
        Health::HostMismatch => "host mismatch",
        Health::Superseded => "superseded",
        Health::Colliding => "colliding",
        Health::Unowned => "unowned",
        Health::Recovered => "recovered",
        Health::Continued => "continued",
        Health::Swept => "swept",
        Health::LabelsFinished => "labels finished",
        Health::Finished => "ended for its Run",
        Health::PeoplesLabels => "a person's labels",
    }
}

/// The rate budget left after a pass, and the reserve kept for Runs' own end records.
pub fn budget(remaining: Option<u64>, reserve: u64) -> String {
    match remaining {
        Some(n) => format!("rate budget: {n} request(s) left this hour, {reserve} kept in reserve"),
        None => format!("rate budget: not reported by GitHub, {reserve} kept in reserve"),
    }
}
