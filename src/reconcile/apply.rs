//! The IO shell of reconcile: performs a plan's actions in order, issue by issue. An end record
//! is posted only if none for its claim exists yet, and when two passes raced to post one, the
//! later copy is deleted by its own writer; labels are added and removed one at a time. A failed
//! action stops the rest of its issue (never labels without their end record) and the pass goes
//! on with the next issue; the next pass finishes what is left. A command's cancel request and
//! reply are posted only if none with the same key is there (a reply racing another handler's is
//! deleted by whichever came second), and reactions are safe to repeat.
//!
//! It is the one writer of every ending: a pass's (`reconcile::pass`, a command's answer) and a
//! Run's own on its host (`crate::ending::end_claim`, a Run's release and observe's carried-out
//! cancel), so an end record and its labels are written, repeated and fenced one way.
//!
//! Labels follow the end record that stands: a writer whose end record was not the one that
//! stood (another writer's was there first, or was first of two racing copies) leaves that
//! issue's label changes to the other writer, which sets them after its own end record, or to
//! the next pass, which finishes an end's labels. So a writer holding a plan made from an older
//! read never writes an ending's labels late, over a Run that took the issue meanwhile.
//!
//! Labels are fenced: before an issue's first label change, the issue's complete comment list
//! is read (later copies of our end records deleted, as before `in-progress` comes off); if a
//! Claim newer than any the writer read is there, active or already ended, a Run took the issue
//! since the writer read it, and the label changes (made for an ended Claim) are dropped rather
//! than put `ready-for-agent` back on, or `in-progress` off, a Run's issue, or undo the labels
//! that Run's own ending set. A Claim the writer read was weighed when it decided (a pass ends
//! every Claim it read before it touches labels; a Run's own end leaves a losing racer's claim
//! to that racer). A pass finishing the labels of an end it read drops them too when people
//! changed labels since that end more often than it saw (one read of the issue's events): a
//! person who acted after the pass read the issue keeps their change, even in the same second as
//! the end.

use std::collections::{BTreeMap, BTreeSet};

use crate::context::Ctx;
use crate::github::Comment;
use crate::protocol::record::{decode, Decoded, EndRecord, Kind, Ownership, Record};
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
    /// Its address on GitHub.
    pub url: String,
}

/// What the writer read of each issue it decided for: the newest Claim (`None`: no Claim there)
/// and, when it read them, how many label changes people had made since the latest end record
/// stating labels (that end's comment id, and the count). The label fence compares the issue at
/// write time with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen(BTreeMap<u64, ReadOf>);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct ReadOf {
    newest_claim: Option<u64>,
    people: Option<(u64, usize)>,
    /// The issue's labels the writer planned from (`None`: it planned without reading them, as
    /// a Run's own end does).
    labels: Option<Vec<String>>,
}

impl Seen {
    /// What a pass read: every issue of its snapshot.
    pub fn of(snapshot: &Snapshot) -> Seen {
        let read = |i: &crate::snapshot::IssueSnapshot| ReadOf {
            labels: Some(i.labels.clone()),
            newest_claim: i.ownership.newest_claim(),
            people: i
                .ownership
                .latest_intent()
                .zip(i.since_end.as_ref())
                .map(|((end, _), since)| (end.comment_id, since.people.len())),
        };
        Seen(
            snapshot
                .issues
                .iter()
                .map(|i| (i.number, read(i)))
                .collect(),
        )
    }

    /// What a Run's own end read: issue `n`, whose records read as `own` (no label events).
    pub fn one(n: u64, own: &Ownership) -> Seen {
        let read = ReadOf {
            newest_claim: own.newest_claim(),
            people: None,
            labels: None,
        };
        Seen(BTreeMap::from([(n, read)]))
    }

    fn of_issue(&self, n: u64) -> ReadOf {
        self.0.get(&n).cloned().unwrap_or_default()
    }
}

/// Applies `actions` (in plan order), decided from what `seen` says the writer read.
pub async fn apply(ctx: &Ctx, actions: &[Action], seen: &Seen) -> Applied {
    let mut applied = Applied::default();
    let mut failed_issue: Option<u64> = None;
    let mut fenced: Option<(u64, bool)> = None;
    let mut theirs: BTreeSet<u64> = BTreeSet::new();
    for action in actions {
        let issue = action.issue();
        if failed_issue == Some(issue) {
            continue;
        }
        let labels = matches!(action, Action::AddLabel { .. } | Action::RemoveLabel { .. });
        if labels && theirs.contains(&issue) {
            continue;
        }
        let result = if labels && fenced.is_none_or(|(n, _)| n != issue) {
            labels_may_change(ctx, issue, &seen.of_issue(issue))
                .await
                .map(|go| fenced = Some((issue, go)))
        } else {
            Ok(())
        };
        let result = match result {
            Ok(()) if labels && fenced == Some((issue, false)) => continue,
            Ok(()) => match apply_one(ctx, action, &mut applied).await {
                Ok(Stood::Theirs) => {
                    tracing::info!(
                        issue,
                        "another writer's end record stands: its labels are theirs"
                    );
                    theirs.insert(issue);
                    Ok(())
                }
                other => other.map(|_| ()),
            },
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

/// `end` as it is posted: one that states labels names the newest label event of the issue read
/// just before (`events_seen`), so every later reader tells what came after it by event id.
async fn with_events_seen(ctx: &Ctx, n: u64, end: &EndRecord) -> anyhow::Result<EndRecord> {
    let mut end = end.clone();
    if end.labels_after.is_some() {
        end.events_seen = crate::snapshot::newest_label_event(ctx, n).await?;
    }
    Ok(end)
}

/// Whose end record stands after a write: this writer's (or no end was written), or another's,
/// whose writer then sets the labels it states.
enum Stood {
    Ours,
    Theirs,
}

async fn apply_one(ctx: &Ctx, action: &Action, applied: &mut Applied) -> anyhow::Result<Stood> {
    match action {
        Action::PostEnd { issue, end } => {
            let comments = ctx.client.list_issue_comments(*issue).await?;
            let (comment_id, url, stood) = match find_end(ctx, &comments, &end.claim_id) {
                Some(existing) => (existing.id, existing.html_url.clone(), Stood::Theirs),
                None => {
                    let text = with_events_seen(ctx, *issue, end).await?.to_comment();
                    let posted = post_record(ctx, *issue, &end.claim_id, Kind::End, &text).await?;
                    applied.ends_posted += 1;
                    let ours = posted.id;
                    let (id, url) = drop_if_second(ctx, *issue, &end.claim_id, posted).await?;
                    let stood = if id == ours {
                        Stood::Ours
                    } else {
                        Stood::Theirs
                    };
                    (id, url, stood)
                }
            };
            applied.ended.push(EndedClaim {
                issue: *issue,
                claim_id: end.claim_id.clone(),
                comment_id,
                url,
            });
            let theirs = matches!(stood, Stood::Theirs) && end.labels_after.is_some();
            return Ok(if theirs { Stood::Theirs } else { Stood::Ours });
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
                return Ok(Stood::Ours);
            }
            let key = command.to_string();
            post_record(ctx, n, &key, Kind::Reply, body).await?;
            applied.replies_posted += 1;
            let comments = ctx.client.list_issue_comments(n).await?;
            let later = later_copies(ctx, &comments, n, Kind::Reply, Some(&key), FirstOf::Trusted);
            dedupe::delete(ctx, n, &later, "another handler replied first").await?;
        }
    }
    Ok(Stood::Ours)
}

/// The fence before issue `n`'s label changes: reads its complete comment list and its labels
/// and deletes later copies of our end records (`store::dedupe::settle_before_leaving`); `false`
/// (the changes are dropped, and the next pass plans from what is there) when the labels are not
/// the ones the writer planned from (someone acted since it read them), when a Claim newer than
/// any the writer read (`seen`) is there, active or taken and ended since (a Run took the issue
/// after the writer read it: the labels are that Run's, or its ending's, now), or when the
/// label events since the end say a person acted ([`people_left_alone`]).
async fn labels_may_change(ctx: &Ctx, n: u64, read: &ReadOf) -> anyhow::Result<bool> {
    let (comments, labels) = crate::store::dedupe::settle_before_leaving(ctx, n).await?;
    let own = crate::store::ownership(ctx, n, &comments);
    let seen = read.newest_claim;
    if read
        .labels
        .as_ref()
        .is_some_and(|r| !same_labels(r, &labels))
    {
        tracing::info!(
            issue = n,
            "its labels changed after this was read; its label changes are dropped (the next \
             pass plans from them)"
        );
        return Ok(false);
    }
    if own.newest_claim() <= seen {
        return people_left_alone(ctx, n, &own, &comments, read).await;
    }
    let newer = |c: &&crate::protocol::record::ClaimView| Some(c.comment_id) > seen;
    let Some(active) = own.active().find(newer) else {
        tracing::info!(
            issue = n,
            "a Run took the issue and ended after this was read; its label changes are dropped"
        );
        return Ok(false);
    };
    tracing::info!(
        issue = n,
        claim = %active.record.claim_id,
        "claim {} on host {} took the issue after this was read; its label changes are dropped",
        active.record.claim_id,
        active.record.host
    );
    Ok(false)
}

/// Whether two label lists name the same labels, as GitHub compares names (case aside).
fn same_labels(a: &[String], b: &[String]) -> bool {
    let set = |l: &[String]| -> BTreeSet<String> { l.iter().map(|x| x.to_lowercase()).collect() };
    set(a) == set(b)
}

/// The second half of the fence, against what happened to the labels since the end whose labels
/// are written (`snapshot::since_end`, one read of the issue's events): `false` when the issue
/// was claimed again, or people changed labels since that end more often than the writer saw (a
/// person acted after it looked, even in the same second: their change stands, and the next pass
/// plans again from it). A pass finishing an end saw the people's changes it read with it; a
/// writer posting an end (a pass's new end, a Run's own) saw none after the events it read just
/// before posting (`events_seen`). An end record naming no event is left alone here unless the
/// writer read its events: its comment's second would hold changes made before it.
async fn people_left_alone(
    ctx: &Ctx,
    n: u64,
    own: &Ownership,
    comments: &[Comment],
    read: &ReadOf,
) -> anyhow::Result<bool> {
    let Some((end, _)) = own.latest_intent() else {
        return Ok(true);
    };
    let seen = match read.people {
        Some((id, seen)) if id == end.comment_id => seen,
        _ if end.record.events_seen.is_some() => 0,
        _ => return Ok(true),
    };
    let posted = comments.iter().find(|c| c.id == end.comment_id);
    let since = crate::snapshot::since_end(ctx, n, end, posted.map(|c| c.created_at)).await?;
    if since.claimed_again {
        tracing::info!(
            issue = n,
            "claimed again after this was read; its label changes are dropped"
        );
        return Ok(false);
    }
    if since.people.len() <= seen {
        return Ok(true);
    }
    tracing::info!(
        issue = n,
        "a person changed the labels after this was read; its label changes are dropped"
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
/// Returns the id and address of the one that remains.
async fn drop_if_second(
    ctx: &Ctx,
    issue: u64,
    claim_id: &str,
    posted: Comment,
) -> anyhow::Result<(u64, String)> {
    let ours = posted.id;
    let comments = match crate::store::read::read_through(ctx, issue, ours).await? {
        Listing::Fresh(comments) => comments,
        // Another writer, racing this one, deleted ours as the later copy of its own: the claim
        // is ended by that one, which the list shows.
        Listing::Gone(comments) => match find_end(ctx, &comments, claim_id) {
            Some(theirs) => return Ok((theirs.id, theirs.html_url.clone())),
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
    Ok(match find_end(ctx, &comments, claim_id) {
        Some(first) if first.id < ours => (first.id, first.html_url.clone()),
        _ => (ours, posted.html_url),
    })
}
