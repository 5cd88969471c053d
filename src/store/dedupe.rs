//! The one rule for copies of a record: the first copy (lowest comment id) stays, and our own
//! later copies are deleted. Copies exist when a post's outcome was unknown and it landed after
//! all, or when two writers (a Run and a pass, two passes) wrote the same record at once.
//! `later_copies` finds them (pure, on a comment list the caller read through whatever it
//! needs to trust); `delete` deletes them. Records naming another issue than the one they are
//! read on are no copies (as for the ownership rule), and only our own copies are ever deleted.
//! Every writer that can leave a copy goes through here: `keep_first` after a repeated post,
//! `drop_own_if_later` for writers racing on one record (the claim protocol, reconcile's ends
//! and replies: each deletes only its own later copy, never one another writer is settling), a
//! carried-out cancel, and `settle_before_leaving` before an issue leaves every pass's view.

use anyhow::Context as _;

use crate::context::Ctx;
use crate::github::Comment;
use crate::protocol::record::{decode, Decoded, Kind, Trust};
use crate::store::find_record;
use crate::store::read::{complete_comments_and_labels, read_through, Listing};

/// Whose copy counts as the first one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstOf {
    /// Any trusted author's (end records and replies: another pass may have written the first).
    Trusted,
    /// Only ours (a record only we write, posted again after an unknown outcome).
    Ours,
}

/// Our copies of the `kind` records on issue `n` that come after the first copy of the same
/// record (of the record `key` only, when given), oldest first.
pub fn later_copies(
    ctx: &Ctx,
    comments: &[Comment],
    n: u64,
    kind: Kind,
    key: Option<&str>,
    first_of: FirstOf,
) -> Vec<u64> {
    let authors = Authors {
        trust: &ctx.trust,
        me: &ctx.me,
    };
    later_copies_by(authors, comments, n, (kind, key), first_of)
}

/// Whose comments these are to us: the trusted authors, and which login is ours.
#[derive(Clone, Copy)]
pub struct Authors<'a> {
    pub trust: &'a Trust,
    pub me: &'a str,
}

/// [`later_copies`] for `authors`, of the records `wanted` (a kind, and a key when given).
pub fn later_copies_by(
    authors: Authors<'_>,
    comments: &[Comment],
    n: u64,
    wanted: (Kind, Option<&str>),
    first_of: FirstOf,
) -> Vec<u64> {
    let (kind, key) = wanted;
    let ours = |c: &Comment| c.author().eq_ignore_ascii_case(authors.me);
    let counted = |c: &&Comment| match first_of {
        FirstOf::Trusted => authors.trust.is_trusted(c.author()),
        FirstOf::Ours => ours(c),
    };
    let mut sorted: Vec<&Comment> = comments.iter().filter(counted).collect();
    sorted.sort_by_key(|c| c.id);
    let mut seen = std::collections::HashSet::new();
    let mut later = Vec::new();
    for c in sorted {
        let Decoded::Record(record) = decode(c.text()) else {
            continue;
        };
        let Some(id) = record.identity() else {
            continue;
        };
        if id.kind != kind || id.issue.is_some_and(|i| i != n) {
            continue;
        }
        if key.is_some_and(|k| k != id.key) {
            continue;
        }
        if !seen.insert(id.key) && ours(c) {
            later.push(c.id);
        }
    }
    later
}

/// Settles a race between writers of one record (a Run and a pass, two passes, two handlers,
/// all writing as us): deletes `own`, the copy this writer posted, when it is a later copy, and
/// nothing else, since another writer's later copy is that writer's to settle. True when `own`
/// was deleted.
pub async fn drop_own_if_later(
    ctx: &Ctx,
    n: u64,
    comments: &[Comment],
    record: (Kind, &str),
    own: u64,
    first_of: FirstOf,
) -> anyhow::Result<bool> {
    let (kind, key) = record;
    let later = later_copies(ctx, comments, n, kind, Some(key), first_of);
    if !later.contains(&own) {
        return Ok(false);
    }
    delete(ctx, n, &[own], "another writer's copy came first").await?;
    Ok(true)
}

/// Deletes each of `copies` on issue `n`, logging `why`; tries every one and fails with the
/// first error, so a copy left behind is removed by the next pass.
pub async fn delete(ctx: &Ctx, n: u64, copies: &[u64], why: &str) -> anyhow::Result<()> {
    let mut first_error = None;
    for &copy in copies {
        tracing::info!(issue = n, comment = copy, "deleting a later copy: {why}");
        if let Err(e) = ctx.client.delete_comment(copy).await {
            tracing::warn!(
                issue = n,
                comment = copy,
                "could not delete it ({e}); the next pass does"
            );
            first_error.get_or_insert(e);
        }
    }
    match first_error {
        Some(e) => Err(e.into()),
        None => Ok(()),
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
    let later = later_copies(ctx, &comments, n, kind, Some(key), FirstOf::Ours);
    if let Err(e) = delete(ctx, n, &later, "an earlier post had landed after all").await {
        tracing::warn!(
            issue = n,
            record = key,
            "{e:#}; reconcile removes what is left"
        );
    }
    find_record(ctx, &comments, key, kind)
        .cloned()
        .unwrap_or(posted)
}

/// Before issue `n` leaves every pass's view: reads all its comments (`read::complete_comments`), so
/// a stale list hides no copy, then deletes every later copy of our own end records (the first
/// trusted end record of a claim stays). Fails when the list stays behind the count: the caller
/// keeps `in-progress` and the next pass comes back. Returns the complete list it read, and the
/// issue's labels as that read showed them.
pub async fn settle_before_leaving(
    ctx: &Ctx,
    n: u64,
) -> anyhow::Result<(Vec<Comment>, Vec<String>)> {
    let (comments, labels) = complete_comments_and_labels(ctx, n)
        .await
        .context("`in-progress` stays until a pass sees every comment")?;
    let later = later_copies(ctx, &comments, n, Kind::End, None, FirstOf::Trusted);
    delete(ctx, n, &later, "a later copy of an end record").await?;
    Ok((comments, labels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::User;
    use crate::protocol::record::claim::tests::sample_claim;
    use crate::protocol::record::{ClaimRecord, EndRecord, Outcome};
    use crate::text::ToComment;

    const ME: &str = "thirdshift-bot";
    const OTHER_BOT: &str = "other-bot";

    fn comment(id: u64, login: &str, body: String) -> Comment {
        let now = chrono::Utc::now();
        Comment {
            id,
            user: Some(User {
                login: login.into(),
                id: 1,
                kind: None,
            }),
            body: Some(body),
            html_url: String::new(),
            issue_url: String::new(),
            created_at: now,
            updated_at: now,
            reactions: None,
        }
    }

    /// The end record of claim `claim_id` on `issue`, as a comment body.
    fn end(claim_id: &str, issue: u64) -> String {
        let claim = ClaimRecord {
            claim_id: claim_id.into(),
            issue,
            ..sample_claim()
        };
        EndRecord::ending(
            &claim,
            Outcome::Failed,
            "run@h1",
            "exited 1",
            chrono::Utc::now(),
        )
        .to_comment()
    }

    fn later(comments: &[Comment], key: Option<&str>, first_of: FirstOf) -> Vec<u64> {
        let trust = Trust::new([ME, OTHER_BOT]);
        let authors = Authors {
            trust: &trust,
            me: ME,
        };
        later_copies_by(authors, comments, 7, (Kind::End, key), first_of)
    }

    #[test]
    fn only_our_copies_after_the_first_counted_one_are_later_copies() {
        // Given end records of claim c-a: a stranger's (1), another trusted bot's (2), ours (3, 5),
        // ours naming another issue (4), and ours of claim c-b (6)
        let comments = [
            comment(6, ME, end("c-b", 7)),
            comment(5, ME, end("c-a", 7)),
            comment(4, ME, end("c-a", 9)),
            comment(3, ME, end("c-a", 7)),
            comment(2, OTHER_BOT, end("c-a", 7)),
            comment(1, "mallory", end("c-a", 7)),
        ];
        // When the later copies are found with any trusted author's copy first, then both of
        // ours after the other bot's are later; the stranger's and the other issue's count for
        // nothing, and c-b's only copy is no later copy
        assert_eq!(later(&comments, Some("c-a"), FirstOf::Trusted), [3, 5]);
        assert_eq!(later(&comments, None, FirstOf::Trusted), [3, 5]);
        // When only our own copies count, then ours after our first are later
        assert_eq!(later(&comments, Some("c-a"), FirstOf::Ours), [5]);
        // And another trusted author's later copy is never ours to delete
        let theirs_later = [
            comment(1, ME, end("c-a", 7)),
            comment(2, OTHER_BOT, end("c-a", 7)),
        ];
        assert!(later(&theirs_later, None, FirstOf::Trusted).is_empty());
    }
}
