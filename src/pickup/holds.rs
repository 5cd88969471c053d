//! What keeps pickup off an issue or off every issue beyond capacity, read from GitHub: an
//! issue whose latest end holds it (handed to people at the failure limit, or cancelled without
//! `--requeue`) until a ready label put on after that end says a person released it; and this
//! host's Failure limit, the open issues whose last Run was this host's and were handed to people
//! for failing. The rules are `protocol::failures`; the words `text::failures`.

use crate::context::Ctx;
use crate::github::Comment;
use crate::protocol::config::LabelEnding;
use crate::protocol::failures::{self, Hold};
use crate::protocol::record::Ownership;
use crate::text::failures as text;

/// Why issue `n` (its ownership `own`, read from `comments`) is left alone this pass, if it is:
/// its latest end holds it and no ready label was put on after that end. When one was, the line
/// naming who released it is printed and the issue may be taken. One events request, only for a
/// held issue.
pub async fn held(
    ctx: &Ctx,
    n: u64,
    own: &Ownership,
    comments: &[Comment],
) -> anyhow::Result<Option<String>> {
    let Some((hold, end)) = failures::hold(own) else {
        return Ok(None);
    };
    let ready = &ctx.config.labels.ready;
    let posted = comments.iter().find(|c| c.id == end.comment_id);
    let changes = match posted {
        Some(c) => crate::snapshot::label_changes_since(ctx, n, c.created_at).await?,
        None => Vec::new(),
    };
    let released = changes
        .iter()
        .rfind(|c| c.added && c.label.eq_ignore_ascii_case(ready));
    if let Some(c) = released {
        let by = if c.by.is_empty() {
            "a deleted account"
        } else {
            &c.by
        };
        println!(
            "{}",
            crate::text::for_terminal(&text::released(n, by, ready))
        );
        return Ok(None);
    }
    Ok(Some(match hold {
        Hold::FailureLimit => {
            text::held_at_limit(n, end.record.failures.len(), end.comment_id, ready)
        }
        Hold::Cancelled => text::held_by_cancel(n, end.comment_id, ready),
    }))
}

/// At most this many issues carrying the hand-off label are read per pass, the most recently
/// updated first (a hand-off updates its issue), so a repository where people keep many such
/// issues costs a pass a bounded number of requests.
const HANDED_OFF_READ_MAX: usize = 50;

/// The open issues this host handed to people for failing, at most `pickup.failure_limit` of
/// them (enough to know the limit is reached), lowest first: those carrying the label a failed
/// Run's issue goes to people with whose latest end is such a hand-off on a Claim of this host.
/// One list request, and one comments request per such issue read (at most
/// [`HANDED_OFF_READ_MAX`]).
pub async fn failing_here(ctx: &Ctx) -> anyhow::Result<Vec<u64>> {
    let labels = &ctx.config.labels;
    let limit = ctx.config.pickup.failure_limit as usize;
    let to_people = labels.after(LabelEnding::FailedWithWork);
    let Some(mark) = to_people
        .iter()
        .find(|l| !l.eq_ignore_ascii_case(&labels.in_progress))
    else {
        return Ok(Vec::new());
    };
    let mut issues = ctx.client.list_issues("open", Some(mark)).await?;
    issues.retain(|i| i.is_open());
    issues.sort_by_key(|i| std::cmp::Reverse(i.updated_at));
    let mut found = Vec::new();
    for issue in issues.iter().take(HANDED_OFF_READ_MAX) {
        let comments = ctx.client.list_issue_comments(issue.number).await?;
        let own = crate::store::ownership(ctx, issue.number, &comments);
        if failures::handed_for_failing(labels, &own, &ctx.host.host) {
            found.push(issue.number);
            if found.len() >= limit {
                break;
            }
        }
    }
    found.sort_unstable();
    Ok(found)
}
