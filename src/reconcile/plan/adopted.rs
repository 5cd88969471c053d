//! thirdshift's own Commands on an issue no claim of ours owns (docs/thirdshift.md). thirdshift
//! claims with the `in-progress` label alone, so its Claim is the label; the Command's host
//! reports its verdict (`thirdshift::here`). A Command its host proved dead, no writer left, is
//! ended the way thirdshift 0.19.0's own Failed run labels the issue (`src/claim.rs`:
//! `Claimed::end`, `release_if_nothing_on_origin`, `label_failed`): with nothing of it on origin
//! and nothing kept, the Claim is released (`ready-for-agent` back in place of `in-progress`);
//! otherwise the Claim stays and the issue is labelled `agent-failed`. Each dead Command's end
//! record is the one Run ending's (`run_end.rs`, `RunEnd::Command`: the evidence — host, record,
//! PID, boot:ticks — and what its host kept); what is decided here is the issue-wide part: that
//! every Command is dead, and whether the issue was started.
//!
//! While any Command of the issue lives (or has writers alive), nothing is ended: labels are the
//! live one's. Of several live ones, those placed after the one that keeps the issue are found
//! colliding (`protocol::collision`); their own host stops them under `on_collision: stop`. An issue no longer `in-progress` is left as it is, as thirdshift leaves it. Pure.

use crate::protocol::collision::Collision;
use crate::protocol::record::{AdoptedRun, Cause, ClaimVerdict, DeathReason, Verdict};
use crate::protocol::rules::{later_issue_branch, SECURITY_FIX};
use crate::snapshot::{IssueSnapshot, ReportView};
use crate::text::reasons::adopted_evidence;

use super::run_end::{run_end, CommandEnd, RunEnd};
use super::steps::LabelsNow;
use super::{Finding, Health, Planner, Steps};

/// One Command a host reports on the issue, not ended yet, with its facts.
struct Named<'a> {
    report: &'a ReportView,
    verdict: &'a ClaimVerdict,
    facts: &'a AdoptedRun,
}

/// A Command its host proved dead: why, and the evidence.
struct Dead<'a> {
    named: &'a Named<'a>,
    reason: DeathReason,
    evidence: &'a str,
}

impl<'a> Dead<'a> {
    fn of(named: &'a Named<'a>) -> Option<Dead<'a>> {
        match &named.verdict.verdict {
            Verdict::Dead { reason, evidence } => Some(Dead {
                named,
                reason: *reason,
                evidence,
            }),
            _ => None,
        }
    }
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
        let dead: Vec<Dead<'_>> = named.iter().filter_map(Dead::of).collect();
        if dead.len() < named.len() {
            let own = &issue.ownership;
            let working = self.snapshot.runs_working_on(issue.number, own);
            let collision = crate::protocol::collision::among(own, working);
            let live = named.iter().filter(|n| !n.verdict.verdict.is_dead());
            return Some(
                live.map(|n| alive_finding(issue, n, collision.as_ref()))
                    .collect(),
            );
        }
        let started = named.iter().any(|n| started(issue, n));
        let ends = dead.iter().map(|d| self.end_adopted(issue, d, started, s));
        Some(ends.collect())
    }

    /// The Commands hosts report on `issue` that no end record ended yet, in report order.
    fn named<'s>(&'s self, issue: &IssueSnapshot) -> Vec<Named<'s>> {
        let on = self.snapshot.adopted_on(issue).into_iter();
        on.filter_map(|(report, verdict)| {
            let facts = verdict.run.thirdshift()?;
            Some(Named {
                report,
                verdict,
                facts,
            })
        })
        .collect()
    }

    /// One dead Command's end (the one Run ending, `run_end.rs`) and its labels, as steps.
    fn end_adopted(
        &self,
        issue: &IssueSnapshot,
        d: &Dead<'_>,
        started: bool,
        s: &mut Steps,
    ) -> Finding {
        let (n, reason, evidence) = (d.named, d.reason, d.evidence);
        let (v, report) = (n.verdict, &n.report.report);
        let cause = Cause::of_death(reason, report.booted_at);
        let end = run_end(
            self.config,
            &issue.ownership,
            RunEnd::Command(CommandEnd {
                issue: issue.number,
                id: &v.claim_id,
                host: &report.host,
                machine_id: &report.machine_id,
                facts: n.facts,
                reason,
                evidence,
                kept: v.kept.as_ref(),
                started,
                origin: issue.origin.as_ref(),
                held: self.config.keeps_agents_off(|l| issue.has_label(l)),
                cause: &cause,
                actor: &self.input.actor,
                now: self.input.now,
            }),
        );
        let note = end.reason.clone();
        s.ending(&self.config.labels, end, LabelsNow::Read(issue));
        Finding {
            issue: issue.number,
            claim_id: Some(v.claim_id.clone()),
            host: Some(report.host.clone()),
            health: Health::Recovered,
            note,
        }
    }
}

/// Whether a dead Command's issue was started, as thirdshift's Failed run asks it (`branch.rs`
/// `started`: an Issue branch on origin or a pull request from one), with what its host kept:
/// its Issue branch or a pull request on origin, a later Issue branch (thirdshift takes one only
/// once earlier ones were used), a pull request in its record, or work its host kept; a Security
/// fix's Claim stays whatever (thirdshift's `Claimed::end`).
fn started(issue: &IssueSnapshot, n: &Named<'_>) -> bool {
    let (v, facts) = (n.verdict, n.facts);
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

/// A live Command's finding: alive (or writers alive), or colliding when `collision` places it
/// after the Command that keeps the issue.
fn alive_finding(issue: &IssueSnapshot, n: &Named<'_>, collision: Option<&Collision>) -> Finding {
    let (id, host) = (&n.verdict.claim_id, &n.report.report.host);
    let (health, note) = match (&n.verdict.verdict, collision) {
        (_, Some(c)) if c.collides(id) => {
            let o = &c.owner;
            let note = crate::text::collision::colliding(host, &o.claim_id, &o.host);
            (Health::Colliding, note)
        }
        (Verdict::WritersAlive { pids, .. }, _) => (
            Health::WritersAlive { pids: pids.clone() },
            adopted_evidence(host, &n.verdict.verdict),
        ),
        _ => (Health::Alive, adopted_evidence(host, &n.verdict.verdict)),
    };
    Finding {
        issue: issue.number,
        claim_id: Some(id.clone()),
        host: Some(host.clone()),
        health,
        note,
    }
}
