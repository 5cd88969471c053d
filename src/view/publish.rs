//! Writing the live view after a pass (IO): the dashboard goes into the registry issue's body
//! with one `PATCH`, only when its text changed (the hash in the view record says so), and to
//! `$GITHUB_STEP_SUMMARY` when that is set; also when only the last hour's refusals it keeps
//! changed. With no registry issue yet (no host has observed) there is nowhere to write and
//! nothing is created. A failed write is retried by the next pass.

use std::io::Write as _;

use anyhow::Context as _;

use super::model::{build, Inputs};
use super::{markdown, record};
use crate::context::Ctx;
use crate::reconcile::apply::EndedClaim;
use crate::reconcile::Plan;
use crate::snapshot::Snapshot;

/// What happened to the dashboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Published {
    /// No registry issue yet: nothing written.
    NoRegistry,
    Unchanged {
        issue: u64,
    },
    Written {
        issue: u64,
    },
}

impl Published {
    /// One line for the terminal.
    pub fn line(self) -> String {
        match self {
            Published::NoRegistry => "view: no registry issue yet; dashboard not written".into(),
            Published::Unchanged { issue } => format!("view: dashboard on #{issue} unchanged"),
            Published::Written { issue } => format!("view: dashboard on #{issue} written"),
        }
    }
}

/// Renders the view of `snapshot` and `plan` (after `ended` was applied) and writes it where it
/// belongs.
pub async fn publish(
    ctx: &Ctx,
    snapshot: &Snapshot,
    plan: &Plan,
    ended: &[EndedClaim],
) -> anyhow::Result<Published> {
    let repository = ctx.client.repo().to_string();
    let view = build(&Inputs {
        repository: &repository,
        snapshot,
        plan,
        ended,
        now: chrono::Utc::now(),
    });
    let text = markdown::render(&view);
    step_summary(&text)?;
    let Some(issue) = snapshot.registry_issue else {
        return Ok(Published::NoRegistry);
    };
    let last = snapshot
        .registry_page
        .as_ref()
        .and_then(|p| p.view.as_ref());
    let refusals = refusals(snapshot, plan, chrono::Utc::now());
    let kept = snapshot.registry_page.as_ref().map(|p| p.kept_refusals());
    if record::last_hash(last) == Some(record::content_hash(&text).as_str())
        && kept.unwrap_or_default() == refusals
    {
        return Ok(Published::Unchanged { issue });
    }
    // A full read lists nothing: the mark the last view holds stays as true as it was
    let kept = snapshot.registry_page.as_ref();
    let listing =
        (snapshot.listing.clone()).or_else(|| kept.and_then(|p| p.listing(chrono::Utc::now())));
    let body = record::body(&text, &view.recoveries, listing.as_ref(), &refusals);
    if let Some(why) = crate::protocol::record::write_refusal(&body) {
        anyhow::bail!("the dashboard is not written into registry issue #{issue}: {why}");
    }
    ctx.client
        .update_issue_body(issue, &body)
        .await
        .with_context(|| format!("writing the dashboard into registry issue #{issue}"))?;
    tracing::info!(issue, runs = view.runs.len(), "dashboard written");
    Ok(Published::Written { issue })
}

/// The refusals the view record keeps: the snapshot's (read, and kept by the last view) and the
/// replies refusing a command for want of the role this pass's plan posted, within the hour.
fn refusals(
    snapshot: &Snapshot,
    plan: &Plan,
    now: chrono::DateTime<chrono::Utc>,
) -> crate::protocol::rules::Refusals {
    let posted = plan.actions.iter().filter_map(|a| match a {
        crate::reconcile::Action::PostReply { reply, .. }
            if reply.answer == crate::protocol::record::Answer::NotPermitted =>
        {
            Some((reply.author.clone(), reply.replied_at))
        }
        _ => None,
    });
    let read = snapshot.refusals.iter().map(|(a, at)| (a.clone(), *at));
    crate::protocol::rules::recent_refusals(read.chain(posted), now)
}

/// Appends the dashboard to the Action's step summary, when running in one.
fn step_summary(text: &str) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening the step summary {}", path.to_string_lossy()))?;
    writeln!(file, "{text}").context("writing the step summary")
}
