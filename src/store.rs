//! IO on our records in GitHub: the one place that posts a record, reads an issue's comments
//! until GitHub's lists settle (`read`), keeps the first copy of a record and deletes our later
//! ones, and finds the registry issue (`registry`). It decides nothing about Claims.

pub mod dedupe;
pub mod read;
pub mod registry;

use anyhow::{bail, Context as _};

use crate::context::Ctx;
use crate::github::Comment;
use crate::protocol::record::{decode, Decoded, Kind, Ownership, RawComment, Record};

/// How many times a record post with an unknown outcome is checked and repeated.
const POST_ATTEMPTS: u32 = 8;

/// Reads the ownership of an issue from its comments.
pub fn ownership(ctx: &Ctx, issue: u64, comments: &[Comment]) -> Ownership {
    let own = Ownership::of(issue, &raw_comments(comments), &ctx.trust);
    for problem in &own.problems {
        // also told once per pass by login, with the line that trusts it (`warn_untrusted`)
        tracing::warn!(issue, "ignored record: {problem}");
    }
    own
}

/// What the ownership rule reads of each comment.
pub fn raw_comments(comments: &[Comment]) -> Vec<RawComment> {
    comments
        .iter()
        .map(|c| RawComment {
            id: c.id,
            author: c.author().to_string(),
            body: c.text().to_string(),
        })
        .collect()
}

/// Posts a record comment exactly once: when a post's outcome is unknown, the comments are read
/// again and the record is looked up by its key (the claim id of a claim or end record, the host
/// of a host report, the request id of a cancel record, the command comment id of a reply)
/// before posting again; that list may be stale, so a copy posted again is settled by
/// `read::keep_first` (the first copy stays).
///
/// The look-up is trusted only after the first unknown outcome: then at most one copy can exist,
/// so a list showing it shows the record. After two unknown outcomes a list can show the first
/// copy and not yet the second (GitHub lists lag behind writes), so the record is posted until a
/// post's comment id is known and read through that comment, which shows every earlier copy.
pub async fn post_record(
    ctx: &Ctx,
    n: u64,
    key: &str,
    kind: Kind,
    body: &str,
) -> anyhow::Result<Comment> {
    if let Some(why) = crate::protocol::record::write_refusal(body) {
        anyhow::bail!("not posting a {kind:?} record on #{n}: {why}");
    }
    let mut unknown = 0;
    for _ in 0..POST_ATTEMPTS {
        match ctx.client.create_comment(n, body).await {
            Ok(c) if unknown > 0 => return Ok(dedupe::keep_first(ctx, n, c, key, kind).await),
            Ok(c) => return Ok(c),
            Err(e) if e.is_uncertain() => {
                unknown += 1;
                tracing::warn!(
                    issue = n,
                    record = key,
                    "post outcome unknown ({e}); checking"
                );
                if unknown > 1 {
                    continue;
                }
                let comments = ctx.client.list_issue_comments(n).await?;
                if let Some(found) = find_record(ctx, &comments, key, kind) {
                    return Ok(found.clone());
                }
            }
            Err(e) => return Err(e).with_context(|| format!("posting a {kind:?} record on #{n}")),
        }
    }
    bail!("could not post the {kind:?} record {key} on issue #{n}: GitHub kept failing")
}

/// The first end record of `claim_id` by any trusted author, if GitHub has one.
pub fn find_end<'a>(ctx: &Ctx, comments: &'a [Comment], claim_id: &str) -> Option<&'a Comment> {
    comments
        .iter()
        .filter(|c| ctx.trust.is_trusted(c.author()))
        .filter(|c| {
            matches!(decode(c.text()), Decoded::Record(Record::End(r)) if r.claim_id == claim_id)
        })
        .min_by_key(|c| c.id)
}

/// Our own first comment that carries the `kind` record of `key`, if GitHub has it.
pub fn find_record<'a>(
    ctx: &Ctx,
    comments: &'a [Comment],
    key: &str,
    kind: Kind,
) -> Option<&'a Comment> {
    copies(ctx, comments, key, kind)
        .into_iter()
        .min_by_key(|c| c.id)
}

/// Every comment of ours that carries the `kind` record of `key` (more than one only when a post
/// with an unknown outcome had landed after all).
fn copies<'a>(ctx: &Ctx, comments: &'a [Comment], key: &str, kind: Kind) -> Vec<&'a Comment> {
    comments
        .iter()
        .filter(|c| c.author().eq_ignore_ascii_case(&ctx.me))
        .filter(|c| match decode(c.text()) {
            Decoded::Record(r) => r
                .identity()
                .is_some_and(|id| id.kind == kind && id.key == key),
            _ => false,
        })
        .collect()
}
