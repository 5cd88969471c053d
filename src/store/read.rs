//! Comment lists a Claim can be decided from. GitHub may answer a list read from a replica that
//! has not seen the newest comments yet (DESIGN: "a list read right after a write can be stale
//! for a while"). A replica applies writes in order and comment ids increase, so a list that
//! shows one of our own comments shows every comment created before it: it is not stale for
//! anything older. The claim protocol (`run::claim`), fencing (`run::stage`) and `crate::ending`
//! therefore decide only from a list that shows their own claim comment, reading again with
//! back-off until it does, and decide nothing when it never does.
//!
//! `complete_comments` reads until the list holds as many comments as the issue's count, so it
//! hides nothing. Copies of a record are settled on these lists by `store::dedupe`: a record
//! posted again after a post with an unknown outcome (`store::post_record`), and the end records
//! of an issue about to leave every pass's view.
//!
//! No clock decides here: the wait ends on evidence (our comment listed) and is bounded only so
//! that a command does not hang.

use crate::context::Ctx;
use crate::github::{Comment, GithubError};
use crate::host::LocalClaim;

/// How many times an issue's comments are read, at most, waiting for our own comment.
pub const LIST_READS: u32 = 9;

/// What reading until our own comment is listed came to.
#[derive(Clone, Debug)]
pub enum Listing {
    /// The list shows our comment, so it shows every earlier comment too.
    Fresh(Vec<Comment>),
    /// Our comment no longer exists (a single read of it says 404): this is the issue's list
    /// without it, fresh or not, and it cannot make it ours.
    Gone(Vec<Comment>),
    /// After `LIST_READS` reads the list still does not show our comment: decide nothing.
    Stale,
}

/// Reads the comments of issue `n` until the list shows comment `own`, with back-off between
/// reads (the same as a failed request's).
pub async fn read_through(ctx: &Ctx, n: u64, own: u64) -> anyhow::Result<Listing> {
    let mut comments = ctx.client.list_issue_comments(n).await?;
    if comments.iter().any(|c| c.id == own) {
        return Ok(Listing::Fresh(comments));
    }
    match ctx.client.get_comment(own).await {
        Err(GithubError::NotFound { .. }) => return Ok(Listing::Gone(comments)),
        Err(e) => return Err(e.into()),
        Ok(_) => {}
    }
    for read in 1..LIST_READS {
        tracing::debug!(
            issue = n,
            comment = own,
            read,
            "list is stale: our comment is not in it yet"
        );
        ctx.client.back_off(read).await;
        comments = ctx.client.list_issue_comments(n).await?;
        if comments.iter().any(|c| c.id == own) {
            return Ok(Listing::Fresh(comments));
        }
    }
    tracing::warn!(
        issue = n,
        comment = own,
        "comment list still stale after {LIST_READS} reads"
    );
    Ok(Listing::Stale)
}

/// The comments of a local Claim's issue to decide its state from: read through its claim
/// comment (`read_through`); an error when the list never shows it, since a stale list could hide
/// an earlier claim. A Claim not known to be posted gets the list as it comes.
pub async fn claim_comments(ctx: &Ctx, local: &LocalClaim) -> anyhow::Result<Vec<Comment>> {
    let n = local.record.issue;
    let Some(own) = local.comment_id else {
        return Ok(ctx.client.list_issue_comments(n).await?);
    };
    match read_through(ctx, n, own).await? {
        Listing::Fresh(comments) | Listing::Gone(comments) => Ok(comments),
        Listing::Stale => anyhow::bail!(
            "cannot tell whether claim {} owns issue #{n}: GitHub's comment list has not shown \
             its comment {own} after {LIST_READS} reads, so it may hide an earlier claim; try again",
            local.record.claim_id
        ),
    }
}

/// Reads issue `n`'s comments (with back-off) until the list holds at least as many comments as
/// the issue's `comments` count, so a stale list hides nothing that was there when the count was
/// read. Fails when the list stays behind.
pub async fn complete_comments(ctx: &Ctx, n: u64) -> anyhow::Result<Vec<Comment>> {
    Ok(complete_comments_and_labels(ctx, n).await?.0)
}

/// [`complete_comments`], with the issue's labels as the same read of the issue showed them
/// (read before the list, so a label change made before the last comment is in them).
pub async fn complete_comments_and_labels(
    ctx: &Ctx,
    n: u64,
) -> anyhow::Result<(Vec<Comment>, Vec<String>)> {
    for read in 0..LIST_READS {
        if read > 0 {
            ctx.client.back_off(read).await;
        }
        let issue = ctx.client.get_issue(n).await?;
        let comments = ctx.client.list_issue_comments(n).await?;
        if comments.len() as u64 >= issue.comments {
            let labels = issue.labels.into_iter().map(|l| l.name).collect();
            return Ok((comments, labels));
        }
    }
    anyhow::bail!(
        "issue #{n}'s comment list stayed behind its comment count after {LIST_READS} reads"
    )
}
