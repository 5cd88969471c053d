//! The IO shell of reconcile: performs a plan's actions in order, issue by issue. An end record
//! is posted only if none for its claim exists yet, and when two passes raced to post one, the
//! later copy is deleted by its own writer; labels are added and removed one at a time. A failed
//! action stops the rest of its issue (never labels without their end record) and the pass goes
//! on with the next issue; the next pass finishes what is left. A command's cancel request and
//! reply are posted only if none with the same key is there (a reply racing another handler's is
//! deleted by whichever came second), and reactions are safe to repeat.
//!
//! Labels are fenced: before an issue's first label change, the issue's complete comment list
//! is read (later copies of our end records deleted, as before `in-progress` comes off); if a
//! Claim is active there, a Run took the issue since the pass read it, and the pass's label
//! changes (made for an ended Claim) are dropped rather than put `ready-for-agent` back on, or
//! `in-progress` off, a Run's issue; so are they when a Claim newer than any the pass read was
//! taken and has ended meanwhile (its own ending set the labels; an older end's must not undo it).

use crate::context::Ctx;
use crate::github::Comment;
use crate::protocol::record::{decode, Decoded, Kind, Record};
use crate::snapshot::Snapshot;
use crate::store::dedupe::{self, later_copies, FirstOf};
use crate::store::read::Listing;
use crate::store::{find_end, find_record, post_record};

use super::plan::Action;
use crate::text::ToComment;

/// What a pass wrote, and what failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub ends_posted: usize,
    pub labels_changed: usize,
    pub comments_deleted: usize,
    pub replies_posted: usize,
    pub errors: Vec<String>,
    /// The end records this pass's actions stand on (posted now, or found already there), for
    /// the live view's links.
    pub ended: Vec<EndedClaim>,
}

/// Where the end record of a Claim this pass ended lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndedClaim {
    pub issue: u64,
    pub claim_id: String,
    pub comment_id: u64,
}

/// Applies `actions` (in plan order), planned from `snapshot` (what the pass read: the label
/// fence compares the issue's claims now with those).
pub async fn apply(ctx: &Ctx, actions: &[Action], snapshot: &Snapshot) -> Applied {
    let mut applied = Applied::default();
    let mut failed_issue: Option<u64> = None;
    let mut fenced: Option<(u64, bool)> = None;
    for action in actions {
        let issue = action.issue();
        if failed_issue == Some(issue) {
            continue;
        }
        let labels = matches!(action, Action::AddLabel { .. } | Action::RemoveLabel { .. });
        let result = if labels && fenced.is_none_or(|(n, _)| n != issue) {
            let seen = snapshot.issue(issue).map(|i| i.ownership.newest_claim());
            labels_may_change(ctx, issue, seen)
                .await
                .map(|go| fenced = Some((issue, go)))
        } else {
            Ok(())
        };
        let result = match result {
            Ok(()) if labels && fenced == Some((issue, false)) => continue,
            Ok(()) => apply_one(ctx, action, &mut applied).await,
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!(issue, "reconcile action failed: {e:#}");
            applied.errors.push(format!("#{issue}: {e:#}"));
            failed_issue = Some(issue);
        }
    }
    applied
}

async fn apply_one(ctx: &Ctx, action: &Action, applied: &mut Applied) -> anyhow::Result<()> {
    match action {
        Action::PostEnd { issue, end } => {
            let comments = ctx.client.list_issue_comments(*issue).await?;
            let comment_id = match find_end(ctx, &comments, &end.claim_id) {
                Some(existing) => existing.id,
                None => {
                    let posted =
                        post_record(ctx, *issue, &end.claim_id, Kind::End, &end.to_comment())
                            .await?;
                    applied.ends_posted += 1;
                    drop_if_second(ctx, *issue, &end.claim_id, posted.id).await?
                }
            };
            applied.ended.push(EndedClaim {
                issue: *issue,
                claim_id: end.claim_id.clone(),
                comment_id,
            });
        }
        Action::AddLabel { issue, label } => {
            ctx.client.add_label(*issue, label).await?;
            applied.labels_changed += 1;
        }
        Action::RemoveLabel { issue, label } => {
            ctx.client.remove_label(*issue, label).await?;
            applied.labels_changed += 1;
        }
        Action::DeleteComment {
            comment_id, reason, ..
        } => {
            tracing::info!(comment = comment_id, "deleting: {reason}");
            ctx.client.delete_comment(*comment_id).await?;
            applied.comments_deleted += 1;
        }
        Action::React {
            comment_id,
            content,
            ..
        } => ctx.client.react_to_comment(*comment_id, content).await?,
        Action::PostCancel { issue, cancel } => {
            let comments = ctx.client.list_issue_comments(*issue).await?;
            let id = &cancel.request_id;
            if find_record(ctx, &comments, id, Kind::Cancel).is_none() {
                post_record(ctx, *issue, id, Kind::Cancel, &cancel.to_comment()).await?;
            }
        }
        Action::PostReply { issue, reply, body } => {
            let (n, command) = (*issue, reply.command_comment_id);
            let comments = ctx.client.list_issue_comments(n).await?;
            if first_reply(ctx, &comments, n, command).is_some() {
                return Ok(());
            }
            let key = command.to_string();
            post_record(ctx, n, &key, Kind::Reply, body).await?;
            applied.replies_posted += 1;
            let comments = ctx.client.list_issue_comments(n).await?;
            let later = later_copies(ctx, &comments, n, Kind::Reply, Some(&key), FirstOf::Trusted);
            dedupe::delete(ctx, n, &later, "another handler replied first").await?;
        }
    }
    Ok(())
}

/// The fence before issue `n`'s label changes: reads its complete comment list and deletes later
/// copies of our end records (`store::dedupe::settle_before_leaving`); `false` when a Claim is active
/// there, or one newer than any the pass read (`seen`) was taken and ended since (a Run took the
/// issue after the pass read it: the labels are that Run's ending's now), so the changes are
/// dropped.
async fn labels_may_change(ctx: &Ctx, n: u64, seen: Option<Option<u64>>) -> anyhow::Result<bool> {
    let comments = crate::store::dedupe::settle_before_leaving(ctx, n).await?;
    let own = crate::store::ownership(ctx, n, &comments);
    let Some(active) = own.active().next() else {
        let newer = seen.is_some_and(|seen| own.newest_claim() > seen);
        if newer {
            tracing::info!(
                issue = n,
                "a Run took the issue and ended after this pass read it; its label changes are \
                 dropped"
            );
        }
        return Ok(!newer);
    };
    tracing::info!(
        issue = n,
        claim = %active.record.claim_id,
        "claim {} on host {} took the issue after this pass read it; its label changes are dropped",
        active.record.claim_id,
        active.record.host
    );
    Ok(false)
}

/// The id of the first trusted reply to command comment `command` on issue `n`, if any.
fn first_reply(ctx: &Ctx, comments: &[Comment], n: u64, command: u64) -> Option<u64> {
    let answers = |c: &&Comment| match decode(c.text()) {
        Decoded::Record(Record::Reply(r)) => r.command_comment_id == command && r.issue == n,
        _ => false,
    };
    comments
        .iter()
        .filter(|c| ctx.trust.is_trusted(c.author()))
        .filter(answers)
        .map(|c| c.id)
        .min()
}

/// After posting an end record: if another pass posted one for the same claim first, delete ours
/// so exactly one remains. Returns the id of the one that remains. The list is read through our
/// own copy (`store::read`): a stale list could hide the other pass's earlier copy, and both passes
/// would then keep theirs and go on to the labels, after which no pass reads the issue again.
/// When the list never shows ours, ours is kept and the action fails, so the labels wait and the
/// next pass (which still sees `in-progress`) removes the later copy. When ours is gone because a
/// racing pass deleted it as the later copy, that pass's end record is the one that remains.
async fn drop_if_second(ctx: &Ctx, issue: u64, claim_id: &str, ours: u64) -> anyhow::Result<u64> {
    let comments = match crate::store::read::read_through(ctx, issue, ours).await? {
        Listing::Fresh(comments) => comments,
        // Another pass, racing this one, deleted ours as the later copy of its own: the claim
        // is ended by that one, which the list shows.
        Listing::Gone(comments) => match find_end(ctx, &comments, claim_id) {
            Some(theirs) => return Ok(theirs.id),
            None => anyhow::bail!("our end record {ours} for claim {claim_id} is gone"),
        },
        Listing::Stale => anyhow::bail!(
            "cannot tell whether another pass ended claim {claim_id} first: the comment list \
             never showed our end record {ours}; the next pass settles it"
        ),
    };
    let later = later_copies(
        ctx,
        &comments,
        issue,
        Kind::End,
        Some(claim_id),
        FirstOf::Trusted,
    );
    dedupe::delete(ctx, issue, &later, "another pass ended it first").await?;
    Ok(find_end(ctx, &comments, claim_id).map_or(ours, |first| first.id.min(ours)))
}
