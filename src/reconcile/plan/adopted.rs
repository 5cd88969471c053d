//! thirdshift's own Commands on an issue no claim of ours owns (docs/thirdshift.md). thirdshift
//! claims with the `in-progress` label alone, so its Claim is the label; the Command's host
//! reports its verdict (`thirdshift::here`). A Command its host proved dead, no writer left, is
//! ended the way thirdshift 0.19.0's own Failed run labels the issue (`src/claim.rs`:
//! `Claimed::end`, `release_if_nothing_on_origin`, `label_failed`): with nothing of it on origin
//! and nothing kept, the Claim is released (`ready-for-agent` back in place of `in-progress`);
//! otherwise the Claim stays and the issue is labelled `agent-failed`. Our end record carries the
//! evidence (host, record, PID, boot:ticks) and what the host kept.
//!
//! While any Command of the issue lives (or has writers alive), nothing is ended: labels are the
//! live one's. An issue no longer `in-progress` is left as it is, as thirdshift leaves it. Pure.

use crate::protocol::record::{AdoptedEvidence, ClaimVerdict, Outcome, Verdict};
use crate::protocol::rules::{end_labels, later_issue_branch, Ended, SECURITY_FIX};
use crate::snapshot::{IssueSnapshot, ReportView};
use crate::text::reasons::{adopted_evidence, adopted_recovered_reason};

use super::{Finding, Health, Planner, Steps};

/// One Command a host reports on the issue, not ended yet.
struct Named<'a> {
    report: &'a ReportView,
    verdict: &'a ClaimVerdict,
}

impl Planner<'_> {
    /// The decisions on the thirdshift Commands hosts report on `issue`, which has no active
    /// claim of ours; `None` when there is nothing of thirdshift's to decide (no Command
    /// reported and not ended yet, or the issue no longer `in-progress`).
    pub(super) fn adopted(&self, issue: &IssueSnapshot, s: &mut Steps) -> Option<Vec<Finding>> {
        let in_progress = &self.config.labels.in_progress;
        let named = self.named(issue);
        if named.is_empty() || !issue.has_label(in_progress) {
            return None;
        }
        if !named.iter().all(|n| n.verdict.verdict.is_dead()) {
            let live = named.iter().filter(|n| !n.verdict.verdict.is_dead());
            return Some(live.map(|n| alive_finding(issue, n)).collect());
        }
        let started = named.iter().any(|n| started(issue, n.verdict));
        let labels_after = end_labels(&self.config.labels, Ended::Thirdshift { started });
        let mut findings = Vec::new();
        for n in &named {
            findings.push(self.end_adopted(issue, n, &labels_after, s));
        }
        for label in &labels_after {
            s.add_missing(issue, label);
        }
        if !labels_after.contains(in_progress) {
            s.remove_present(issue, in_progress);
        }
        Some(findings)
    }

    /// The Commands hosts report on `issue` that no end record ended yet, in report order.
    fn named<'s>(&'s self, issue: &IssueSnapshot) -> Vec<Named<'s>> {
        let on = self.snapshot.adopted_on(issue).into_iter();
        on.map(|(report, verdict)| Named { report, verdict })
            .collect()
    }

    /// The end record of one dead Command, with the labels the issue gets.
    fn end_adopted(
        &self,
        issue: &IssueSnapshot,
        n: &Named<'_>,
        labels_after: &[String],
        s: &mut Steps,
    ) -> Finding {
        let (v, host) = (n.verdict, &n.report.report.host);
        let Some(facts) = v.run.thirdshift() else {
            unreachable!("named Commands carry their facts")
        };
        let Verdict::Dead { reason, evidence } = &v.verdict else {
            unreachable!("only dead Commands are ended")
        };
        let why = adopted_recovered_reason(host, &facts.record, *reason, evidence, labels_after);
        let end = crate::protocol::record::EndRecord {
            claim_id: v.claim_id.clone(),
            issue: issue.number,
            outcome: Outcome::Recovered,
            actor: self.input.actor.clone(),
            reason: crate::protocol::record::field::fit_text(&why),
            exit_code: None,
            signal: None,
            claim_comment_id: None,
            labels_after: Some(labels_after.to_vec()),
            kept: v.kept.clone(),
            pull_request: issue.origin.as_ref().and_then(|o| o.pull_request()),
            continuation: None,
            resume: facts
                .resume
                .clone()
                .filter(|r| crate::protocol::record::field::path("resume", r).is_ok()),
            session: None,
            run: crate::protocol::record::RunOf::thirdshift_of(AdoptedEvidence {
                host: host.clone(),
                machine_id: n.report.report.machine_id.clone(),
                record: facts.record.clone(),
                pid: facts.pid,
                process_start: facts.process_start.clone(),
            }),
            failures: Vec::new(),
            ended_at: self.input.now,
        };
        s.end(end);
        Finding {
            issue: issue.number,
            claim_id: Some(v.claim_id.clone()),
            host: Some(host.clone()),
            health: Health::Recovered,
            note: why,
        }
    }
}

/// Whether a dead Command's issue was started, as thirdshift's Failed run asks it (`branch.rs`
/// `started`: an Issue branch on origin or a pull request from one), with what its host kept:
/// its Issue branch or a pull request on origin, a later Issue branch (thirdshift takes one only
/// once earlier ones were used), a pull request in its record, or work its host kept; a Security
/// fix's Claim stays whatever (thirdshift's `Claimed::end`).
fn started(issue: &IssueSnapshot, v: &ClaimVerdict) -> bool {
    let Some(facts) = v.run.thirdshift() else {
        return false;
    };
    let on_origin = issue.origin.as_ref().is_some_and(|o| o.has_work());
    let later = facts
        .branch
        .as_deref()
        .is_some_and(|b| later_issue_branch(issue.number, b));
    let kept = v
        .kept
        .as_ref()
        .is_some_and(|k| k.pushed || !k.nothing_to_keep);
    let security_fix = issue.has_label(SECURITY_FIX);
    on_origin || later || facts.pull_request.is_some() || kept || security_fix
}

fn alive_finding(issue: &IssueSnapshot, n: &Named<'_>) -> Finding {
    let health = match &n.verdict.verdict {
        Verdict::WritersAlive { pids, .. } => Health::WritersAlive { pids: pids.clone() },
        _ => Health::Alive,
    };
    Finding {
        issue: issue.number,
        claim_id: Some(n.verdict.claim_id.clone()),
        host: Some(n.report.report.host.clone()),
        health,
        note: adopted_evidence(&n.report.report.host, &n.verdict.verdict),
    }
}
