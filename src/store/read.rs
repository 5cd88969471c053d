//! Comment lists a Claim can be decided from. GitHub may answer a list read from a replica that
//! has not seen the newest comments yet (DESIGN: "a list read right after a write can be stale
//! for a while"). A replica applies writes in order and comment ids increase, so a list that
//! shows one of our own comments shows every comment created before it: it is not stale for
//! anything older. The claim protocol (`run::claim`), fencing (`run::stage`) and `observe::ending`
//! therefore decide only from a list that shows their own claim comment, reading again with
//! back-off until it does, and decide nothing when it never does.
//!
//! A record posted again after a post with an unknown outcome (`claim::post_record`) is settled
//! the same way: the list read through the new copy shows the first copy if GitHub applied it,
//! and then the new copy is deleted, so a stale list cannot leave a duplicate record behind.
//!
//! An issue about to leave every pass's view (its `in-progress` label removed, so no later pass
//! reads it) is settled first (`settle_before_leaving`): its comments are read until the list
//! holds as many as the issue's count, so it hides nothing, and later copies of our own end
//! records (left by a writer killed between a repeated post and its clean-up) are deleted.
//!
//! No clock decides here: the wait ends on evidence (our comment listed) and is bounded only so
//! that a command does not hang.

use anyhow::Context as _;

use crate::context::Ctx;
use crate::github::{Comment, GithubError};
use crate::host::LocalClaim;
use crate::protocol::record::{decode, Decoded, Kind, Record};
use crate::store::copies;

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

/// After `posted` was posted again because an earlier post of the same record had an unknown
/// outcome: reads issue `n`'s comments through `posted`, so the list shows every earlier copy
/// GitHub applied, keeps the first copy (the record, everywhere) and deletes the others. When
/// the list cannot be read or never shows `posted`, `posted` is kept: a duplicate is left for
/// reconcile, never a record lost.
pub async fn keep_first(ctx: &Ctx, n: u64, posted: Comment, key: &str, kind: Kind) -> Comment {
    let comments = match read_through(ctx, n, posted.id).await {
        Ok(Listing::Fresh(comments)) => comments,
        Ok(_) | Err(_) => {
            tracing::warn!(
                issue = n,
                record = key,
                "could not check for an earlier copy"
            );
            return posted;
        }
    };
    let mut all = copies(ctx, &comments, key, kind);
    all.sort_by_key(|c| c.id);
    let Some((first, later)) = all.split_first() else {
        return posted;
    };
    for copy in later {
        match ctx.client.delete_comment(copy.id).await {
            Ok(()) => tracing::info!(
                issue = n,
                record = key,
                "an earlier post had landed after all; deleted the later copy {}",
                copy.id
            ),
            Err(e) => tracing::warn!(
                issue = n,
                record = key,
                "could not delete the later copy {} ({e}); reconcile removes it",
                copy.id
            ),
        }
    }
    (*first).clone()
}

/// Reads issue `n`'s comments (with back-off) until the list holds at least as many comments as
/// the issue's `comments` count, so a stale list hides nothing that was there when the count was
/// read. Fails when the list stays behind.
pub async fn complete_comments(ctx: &Ctx, n: u64) -> anyhow::Result<Vec<Comment>> {
    for read in 0..LIST_READS {
        if read > 0 {
            ctx.client.back_off(read).await;
        }
        let count = ctx.client.get_issue(n).await?.comments;
        let comments = ctx.client.list_issue_comments(n).await?;
        if comments.len() as u64 >= count {
            return Ok(comments);
        }
    }
    anyhow::bail!(
        "issue #{n}'s comment list stayed behind its comment count after {LIST_READS} reads"
    )
}

/// Before issue `n` leaves every pass's view: reads all its comments ([`complete_comments`]), so
/// a stale list hides no copy, then deletes every later copy of our own end records (the first
/// trusted end record of a claim stays). Fails when the list stays behind the count: the caller
/// keeps `in-progress` and the next pass comes back. Returns the complete list it read.
pub async fn settle_before_leaving(ctx: &Ctx, n: u64) -> anyhow::Result<Vec<Comment>> {
    let comments = complete_comments(ctx, n)
        .await
        .context("`in-progress` stays until a pass sees every comment")?;
    for copy in later_end_copies(ctx, &comments, None) {
        tracing::info!(
            issue = n,
            comment = copy,
            "deleting a later copy of an end record"
        );
        ctx.client.delete_comment(copy).await?;
    }
    Ok(comments)
}

/// Our own end records that repeat a claim's earlier trusted end record (of `only` that claim,
/// when given).
pub(crate) fn later_end_copies(ctx: &Ctx, comments: &[Comment], only: Option<&str>) -> Vec<u64> {
    let mut ended = std::collections::HashSet::new();
    let mut sorted: Vec<&Comment> = comments
        .iter()
        .filter(|c| ctx.trust.is_trusted(c.author()))
        .collect();
    sorted.sort_by_key(|c| c.id);
    let mut later = Vec::new();
    for c in sorted {
        let Decoded::Record(Record::End(end)) = decode(c.text()) else {
            continue;
        };
        if only.is_some_and(|id| id != end.claim_id) {
            continue;
        }
        if !ended.insert(end.claim_id) && c.author().eq_ignore_ascii_case(&ctx.me) {
            later.push(c.id);
        }
    }
    later
}
