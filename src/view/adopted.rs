//! The live view's rows for thirdshift's own Commands (docs/thirdshift.md): an issue that is
//! `in-progress` with no claim comment of ours, but whose host reports a thirdshift Command on
//! it, shows that Command like one of our Runs (host, stage and since when, harness, model,
//! branch, health from the host's verdict), marked with its thirdshift record, until an end
//! record ends it.
//!
//! Pure: the snapshot in, rows out. It decides nothing about the Claim.

use super::row::{RunHealth, RunRow};
use crate::protocol::record::Verdict;
use crate::snapshot::{IssueSnapshot, Snapshot};

/// The rows of the thirdshift Commands host reports name on `issue`, in report order.
pub fn rows(issue: &IssueSnapshot, snapshot: &Snapshot) -> Vec<RunRow> {
    let mut rows = Vec::new();
    for view in &snapshot.reports {
        let report = &view.report;
        let open = |id: &str| issue.ownership.adopted_end(id).is_none();
        for v in report.claims.iter().filter(|v| v.issue == issue.number) {
            if !open(&v.claim_id) {
                continue;
            }
            let Some(facts) = v.run.thirdshift() else {
                continue;
            };
            let health = match v.verdict {
                Verdict::Alive => RunHealth::Alive,
                Verdict::WritersAlive { .. } => RunHealth::WritersAlive,
                Verdict::Dead { .. } => RunHealth::Dead,
            };
            rows.push(RunRow {
                issue: issue.number,
                title: issue.title.clone(),
                issue_url: issue.html_url.clone(),
                claim_id: Some(v.claim_id.clone()),
                claim_url: None,
                host: Some(report.host.clone()),
                kind: match facts.kind.as_str() {
                    "Ticket" => Some("ticket".to_string()),
                    "Spec" => Some("spec".to_string()),
                    _ => None,
                },
                harness: facts.harness.clone(),
                model: facts.model.clone(),
                session: None,
                stage: facts.stage.clone(),
                stage_since: facts
                    .stage_since
                    .as_deref()
                    .and_then(crate::protocol::thirdshift::utc),
                claimed_at: None,
                branch: facts.branch.clone(),
                health,
                evidence: crate::text::reasons::adopted_evidence(&report.host, &v.verdict),
                logs: facts.session_log.iter().cloned().collect(),
                thirdshift_record: Some(facts.record.clone()),
                resume: facts.resume.clone(),
                continues: None,
                watched: v.watched,
                collides_with: None,
            });
        }
    }
    rows
}
