//! The live view's model: what every renderer (the dashboard's Markdown, the terminal table, the
//! JSON and the HTML page) shows, built purely from one snapshot, the plan's verdicts on it and
//! the end records the pass stands on. No IO and no clock of its own: the caller gives `now`,
//! which only tells a silent host (`hosts.rs`), and renderers that show ages are given it too. It decides nothing about Claims; the health of each Run is the plan's finding, in the
//! view's words.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::protocol::record::{Cause, ClaimView, EndRecord, Outcome};
use crate::reconcile::apply::EndedClaim;
use crate::reconcile::{Action, Finding, Plan};
use crate::snapshot::{IssueSnapshot, Snapshot};

pub use super::hosts::HostRow;
pub use super::next_step::Attention;
pub use super::row::{comment_url, Continues, RunHealth, RunRow};

/// How many recoveries the view keeps (newest first).
pub const RECOVERIES_KEPT: usize = 10;

/// Everything the live view shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct View {
    /// `OWNER/NAME`.
    pub repository: String,
    pub registry_issue: Option<u64>,
    pub registry_url: Option<String>,
    /// Active Runs (and issues `in-progress` without one), by issue, then claim comment.
    pub runs: Vec<RunRow>,
    /// Hosts that reported, and hosts named by a Run that never did, by name.
    pub hosts: Vec<HostRow>,
    /// The last Claims ended because their Run was proven dead, newest first.
    pub recoveries: Vec<Recovery>,
    /// Logins whose records the read ignored (not trusted), by login.
    pub untrusted: Vec<UntrustedAuthor>,
}

/// A login whose records the read ignored because it is not trusted: a host or workflow writing
/// as another identity (trust it with `trust_line`), or a stranger forging records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UntrustedAuthor {
    pub login: String,
    /// How many of its records were ignored.
    pub records: usize,
    /// The line of `.github/thirdshift.yml` that would trust it.
    pub trust_line: String,
}

/// A Claim ended because its Run was proven dead, or because a person forced it (`recovered` or
/// `continued`), or because its command was killed (`failed`, by a signal or the OOM killer),
/// with the cause its end record names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    pub issue: u64,
    pub title: String,
    pub claim_id: String,
    pub host: Option<String>,
    pub outcome: Outcome,
    pub ended_at: DateTime<Utc>,
    pub end_url: String,
    /// The person who forced it (`/thirdshift recover --force`): no host proved anything.
    #[serde(default)]
    pub forced_by: Option<String>,
    /// Why the Run died, as its end record says (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

/// What the view is built from.
pub struct Inputs<'a> {
    pub repository: &'a str,
    pub snapshot: &'a Snapshot,
    pub plan: &'a Plan,
    /// End records the pass stands on (empty when nothing was applied, as in `status`).
    pub ended: &'a [EndedClaim],
    /// The time the view is built at: a host is shown silent by it (display only).
    pub now: DateTime<Utc>,
}

/// Builds the view: the snapshot's active Claims with the plan's verdicts, minus those the pass
/// ended (they move to the recoveries), the hosts, and the recoveries kept so far.
pub fn build(input: &Inputs<'_>) -> View {
    let snapshot = input.snapshot;
    let mut issues: Vec<&IssueSnapshot> = snapshot.issues.iter().collect();
    issues.sort_by_key(|i| i.number);
    let mut runs: Vec<RunRow> = issues.iter().flat_map(|i| runs_of(i, input)).collect();
    let hosts = super::hosts::rows(snapshot, &runs, input.now);
    super::hosts::mark_silent(&mut runs, &hosts);
    // Runs that need a person first, then those being recovered, each group in issue order
    // (the sort is stable)
    runs.sort_by_key(|r| r.health.attention());
    let page = snapshot.registry_page.as_ref();
    View {
        repository: input.repository.to_string(),
        registry_issue: snapshot.registry_issue,
        registry_url: page.map(|p| p.html_url.clone()),
        hosts,
        recoveries: recoveries(input),
        runs,
        untrusted: (snapshot.untrusted().into_iter())
            .map(|(login, records)| UntrustedAuthor {
                trust_line: crate::text::trust::trust_line(&login),
                login,
                records,
            })
            .collect(),
    }
}

/// The rows of one issue: its owner and superseded claims not ended by the pass, or the issue
/// itself when it is `in-progress` without a Claim, and the thirdshift Commands hosts report on
/// it; a later Run of several working on it is marked colliding (`collision.rs`).
fn runs_of(issue: &IssueSnapshot, input: &Inputs<'_>) -> Vec<RunRow> {
    let ended_now = |id: &str| {
        input
            .ended
            .iter()
            .any(|e| e.claim_id == id && e.issue == issue.number)
    };
    let mut adopted = super::adopted::rows(issue, input.snapshot);
    adopted.retain(|r| !r.claim_id.as_deref().is_some_and(ended_now));
    if issue.ownership.active().next().is_none() && !adopted.is_empty() {
        super::collision::mark(issue, input.snapshot, &mut adopted);
        return adopted;
    }
    let ended = |c: &ClaimView| ended_now(&c.record.claim_id);
    let mut rows: Vec<RunRow> = issue
        .ownership
        .active()
        .filter(|c| !ended(c))
        .filter_map(|c| {
            let finding = finding_of(input.plan, issue.number, Some(&c.record.claim_id))?;
            let watched = watched(input.snapshot, &c.record.claim_id);
            Some(claim_row(issue, c, finding, watched))
        })
        .collect();
    if let Some(f) = finding_of(input.plan, issue.number, None) {
        if let Some(health) = RunHealth::of(&f.health) {
            rows.push(RunRow {
                issue: issue.number,
                title: issue.title.clone(),
                issue_url: issue.html_url.clone(),
                claim_id: None,
                claim_url: None,
                host: None,
                kind: None,
                harness: None,
                model: None,
                session: None,
                stage: None,
                stage_since: None,
                claimed_at: None,
                branch: None,
                health,
                evidence: f.note.clone(),
                logs: vec![],
                thirdshift_record: None,
                resume: None,
                continues: None,
                watched: false,
                collides_with: None,
            });
        }
    }
    // thirdshift Commands beside a claim of ours: Runs on the issue too, one of them colliding.
    rows.extend(adopted);
    super::collision::mark(issue, input.snapshot, &mut rows);
    rows
}

fn finding_of<'a>(plan: &'a Plan, issue: u64, claim_id: Option<&str>) -> Option<&'a Finding> {
    plan.findings
        .iter()
        .find(|f| f.issue == issue && f.claim_id.as_deref() == claim_id)
}

/// Whether a host reports a companion watching the Run of `claim_id`.
fn watched(snapshot: &Snapshot, claim_id: &str) -> bool {
    let verdicts = snapshot.reports.iter().flat_map(|r| &r.report.claims);
    verdicts
        .filter(|v| v.claim_id == claim_id)
        .any(|v| v.watched)
}

fn claim_row(issue: &IssueSnapshot, c: &ClaimView, finding: &Finding, watched: bool) -> RunRow {
    let r = &c.record;
    RunRow {
        issue: issue.number,
        title: issue.title.clone(),
        issue_url: issue.html_url.clone(),
        claim_id: Some(r.claim_id.clone()),
        claim_url: Some(comment_url(&issue.html_url, c.comment_id)),
        host: Some(r.host.clone()),
        kind: Some(r.kind.as_str().to_string()),
        harness: r.harness.clone(),
        model: r.model.clone(),
        session: r.agent_session.clone(),
        stage: Some(r.stage.clone()),
        stage_since: Some(r.stage_since),
        claimed_at: Some(r.claimed_at),
        branch: r.branch.clone(),
        health: RunHealth::of(&finding.health).unwrap_or(RunHealth::AwaitingHost),
        evidence: finding.note.clone(),
        logs: r.logs.clone(),
        thirdshift_record: None,
        resume: crate::protocol::resume::resume_command(
            r.harness.as_deref(),
            r.agent_session.as_deref(),
            r.worktree.as_deref(),
        ),
        continues: continues(issue, c),
        watched,
        collides_with: None,
    }
}

/// What claim `c` carries on, when the issue's latest end before it is a Continuation (the one
/// its Run took over).
fn continues(issue: &IssueSnapshot, c: &ClaimView) -> Option<Continues> {
    let ended = issue.ownership.ended.iter().map(|(_, e)| e);
    let before = ended.filter(|e| e.comment_id < c.comment_id);
    let end = before.max_by_key(|e| e.comment_id)?;
    let k = end.record.continuation.as_ref()?;
    let started = k
        .started
        .as_ref()
        .filter(|s| s.claim_id == c.record.claim_id);
    (end.record.outcome == Outcome::Continued).then(|| Continues {
        number: k.number,
        claim_id: end.record.claim_id.clone(),
        started_by: started.map(|s| s.by),
    })
}

fn is_recovery(end: &EndRecord) -> bool {
    let killed = Cause::killed_the_command(end.outcome, end.cause.as_ref());
    killed || matches!(end.outcome, Outcome::Recovered | Outcome::Continued)
}

/// The recoveries kept in the last view, then those the snapshot shows, then those this pass
/// ended; the first entry for a claim wins, so an unchanged world gives the same list.
fn recoveries(input: &Inputs<'_>) -> Vec<Recovery> {
    let snapshot = input.snapshot;
    let mut all: Vec<Recovery> = snapshot
        .registry_page
        .as_ref()
        .and_then(|p| p.view.as_ref())
        .and_then(|v| v.get("recoveries"))
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default();
    for issue in &snapshot.issues {
        let own = &issue.ownership;
        let ours = own
            .ended
            .iter()
            .map(|(c, e)| (Some(c.record.host.clone()), e));
        let adopted = own
            .adopted_ends
            .iter()
            .map(|e| (e.record.run.thirdshift().map(|a| a.host.clone()), e));
        for (host, end) in ours.chain(adopted) {
            if is_recovery(&end.record) {
                all.push(Recovery {
                    issue: issue.number,
                    title: issue.title.clone(),
                    claim_id: end.record.claim_id.clone(),
                    host,
                    outcome: end.record.outcome,
                    ended_at: end.record.ended_at,
                    end_url: comment_url(&issue.html_url, end.comment_id),
                    forced_by: end.record.forced_by().map(str::to_string),
                    cause: end.record.cause.clone(),
                });
            }
        }
    }
    all.extend(
        input
            .ended
            .iter()
            .filter_map(|e| applied_recovery(input, e)),
    );
    let mut kept: Vec<Recovery> = Vec::new();
    for r in all {
        if !kept.iter().any(|k| k.claim_id == r.claim_id) {
            kept.push(r);
        }
    }
    kept.sort_by(|a, b| (b.ended_at, &a.claim_id).cmp(&(a.ended_at, &b.claim_id)));
    kept.truncate(RECOVERIES_KEPT);
    kept
}

/// A recovery this pass ended, from its planned end record and where apply found it.
fn applied_recovery(input: &Inputs<'_>, e: &EndedClaim) -> Option<Recovery> {
    let end = input.plan.actions.iter().find_map(|a| match a {
        Action::PostEnd { end, .. } if end.claim_id == e.claim_id => Some(end),
        _ => None,
    })?;
    if !is_recovery(end) {
        return None;
    }
    let issue = input.snapshot.issue(e.issue)?;
    let own = &issue.ownership;
    let claims = own.active().chain(own.ended.iter().map(|(c, _)| c));
    let host = claims
        .filter(|c| c.record.claim_id == e.claim_id)
        .map(|c| c.record.host.clone())
        .next()
        .or_else(|| end.run.thirdshift().map(|a| a.host.clone()));
    Some(Recovery {
        issue: e.issue,
        title: issue.title.clone(),
        claim_id: e.claim_id.clone(),
        host,
        outcome: end.outcome,
        ended_at: end.ended_at,
        end_url: comment_url(&issue.html_url, e.comment_id),
        forced_by: end.forced_by().map(str::to_string),
        cause: end.cause.clone(),
    })
}
