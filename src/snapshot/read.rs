//! One read of GitHub into a `Snapshot`: the registry issue's host reports (trusted authors only,
//! the first per host), then every issue that has `in-progress` (open or closed), is named in a
//! host report, or is named by the caller (this host's local records), with its comments read into
//! the ownership rule. It decides nothing.

use std::collections::BTreeSet;

use crate::context::Ctx;
use crate::github::{Comment, Issue};
use crate::record::{decode, Decoded, Record, Verdict};

use super::{IssueSnapshot, Origin, Pull, RegistryPage, ReportView, Snapshot};

/// Reads the snapshot; `extra` names issues to include whatever their labels.
pub async fn read(ctx: &Ctx, extra: &[u64]) -> anyhow::Result<Snapshot> {
    let registry = crate::registry::find_issue(ctx).await?;
    let registry_issue = registry.as_ref().map(|i| i.number);
    let mut snapshot = Snapshot {
        registry_issue,
        registry_page: registry.map(|i| registry_page(&i)),
        ..Snapshot::default()
    };
    if let Some(n) = registry_issue {
        let comments = ctx.client.list_issue_comments(n).await?;
        (snapshot.reports, snapshot.duplicate_reports) = reports(ctx, &comments);
    }
    let labelled = ctx
        .client
        .list_issues("all", Some(&ctx.config.labels.in_progress))
        .await?;
    let mut wanted: BTreeSet<u64> = extra.iter().copied().collect();
    for r in &snapshot.reports {
        wanted.extend(r.report.claims.iter().map(|c| c.issue));
    }
    wanted.extend(labelled.iter().map(|i| i.number));
    if let Some(n) = registry_issue {
        wanted.remove(&n);
    }
    for n in wanted {
        let issue = match labelled.iter().find(|i| i.number == n) {
            Some(i) => i.clone(),
            None => match ctx.client.get_issue(n).await {
                Ok(i) => i,
                Err(e) if e.status() == Some(404) || e.status() == Some(410) => continue,
                Err(e) => return Err(e.into()),
            },
        };
        snapshot.issues.push(issue_snapshot(ctx, issue).await?);
    }
    fill_origin(ctx, &mut snapshot).await?;
    Ok(snapshot)
}

/// Reads what origin holds of the Issue branch of every owner its host reports dead: the one
/// decision that needs it, so live Claims cost no extra requests.
async fn fill_origin(ctx: &Ctx, snapshot: &mut Snapshot) -> anyhow::Result<()> {
    let mut wanted = Vec::new();
    for (k, issue) in snapshot.issues.iter().enumerate() {
        let Some(owner) = &issue.ownership.owner else {
            continue;
        };
        let c = &owner.record;
        let dead = snapshot
            .report_of(&c.host, &c.machine_id)
            .is_some_and(|r| matches!(r.report.verdict(&c.claim_id), Some(Verdict::Dead { .. })));
        if dead && issue.open {
            let branch = c
                .branch
                .clone()
                .unwrap_or_else(|| format!("issue-{}", c.issue));
            wanted.push((k, branch));
        }
    }
    for (k, branch) in wanted {
        let head = ctx.client.branch_head(&branch).await?;
        let pulls = ctx.client.pulls_for_branch(&branch).await?;
        let pulls = pulls
            .into_iter()
            .map(|p| Pull {
                number: p.number,
                state: p.state,
                merged: p.merged,
                html_url: p.html_url,
            })
            .collect();
        snapshot.issues[k].origin = Some(Origin {
            branch,
            head,
            pulls,
        });
    }
    Ok(())
}

async fn issue_snapshot(ctx: &Ctx, issue: Issue) -> anyhow::Result<IssueSnapshot> {
    let comments = ctx.client.list_issue_comments(issue.number).await?;
    let ownership = crate::claim::ownership(ctx, issue.number, &comments);
    Ok(IssueSnapshot {
        number: issue.number,
        open: issue.is_open(),
        labels: issue.labels.iter().map(|l| l.name.clone()).collect(),
        html_url: issue.html_url.clone(),
        title: issue.title,
        ownership,
        origin: None,
    })
}

/// The first trusted report of each host (name and machine), and the ids of later duplicates.
fn reports(ctx: &Ctx, comments: &[Comment]) -> (Vec<ReportView>, Vec<u64>) {
    let mut firsts: Vec<ReportView> = Vec::new();
    let mut duplicates = Vec::new();
    let mut sorted: Vec<&Comment> = comments.iter().collect();
    sorted.sort_by_key(|c| c.id);
    for c in sorted {
        let Decoded::Record(Record::HostReport(report)) = decode(c.text()) else {
            continue;
        };
        if !ctx.trust.is_trusted(c.author()) {
            tracing::warn!(
                comment = c.id,
                author = c.author(),
                "host report from an untrusted author, ignored"
            );
            continue;
        }
        let same = |r: &ReportView| {
            r.report.host == report.host && r.report.machine_id == report.machine_id
        };
        if firsts.iter().any(same) {
            duplicates.push(c.id);
            continue;
        }
        firsts.push(ReportView {
            comment_id: c.id,
            author: c.author().to_string(),
            updated_at: c.updated_at,
            report,
        });
    }
    (firsts, duplicates)
}

/// The registry issue's address and the JSON of the view record in its body, if it holds one.
fn registry_page(issue: &Issue) -> RegistryPage {
    let view = match decode(issue.body.as_deref().unwrap_or("")) {
        Decoded::Record(Record::Other {
            kind: crate::record::Kind::View,
            json,
        }) => Some(json),
        _ => None,
    };
    RegistryPage {
        html_url: issue.html_url.clone(),
        view,
    }
}
