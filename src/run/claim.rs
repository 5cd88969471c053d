//! The claim protocol and its fencing, shared by `claim`, `run`, `stage` and `release`:
//! read the issue, stop if closed, not Ready or owned; write the local record; post the claim
//! comment; read the comments again until the list shows it (a stale list could hide an earlier
//! claim, `store::read`); withdraw if an earlier claim was active when ours was posted, or the issue
//! is no longer claimable; else set labels one at a time. Every stage change re-checks ownership first. Every write is safe to repeat:
//! a record whose post had an unknown outcome is looked up by its id before it is posted again.
//! It does not start or supervise processes (that is `run.rs`).

use anyhow::bail;
use chrono::Utc;

use crate::context::Ctx;
use crate::exit::Exit;
use crate::github::{Comment, Issue};
use crate::host::{LocalClaim, LocalStatus, ProcessIdentity};
use crate::protocol::record::{
    new_claim_id, ClaimRecord, ClaimState, Continuation, EndRecord, Kind, Outcome, Ownership,
    RawComment, RunKind, Trust,
};
use crate::store::dedupe::{drop_own_if_later, FirstOf};
use crate::store::read::{self, Listing};
use crate::store::{find_record, ownership, post_record, raw_comments};
use crate::text::ToComment;

pub use crate::protocol::rules::{STAGE_CLAIMED, STAGE_RUNNING};

/// What a Claim is asked for.
#[derive(Clone, Debug)]
pub struct ClaimRequest {
    pub issue: u64,
    pub kind: RunKind,
    pub harness: Option<String>,
    pub session: Option<String>,
    /// The Run's git worktree (absolute path), when known.
    pub worktree: Option<String>,
    /// The Issue branch given by hand (`--branch`); else the worktree's, else `issue-N`.
    pub branch: Option<String>,
    /// The process that owns the Claim (the Run, or the caller of `claim`).
    pub owner: ProcessIdentity,
    /// The Run's command (CMD after `--`), kept in the local record for a Continuation; empty
    /// for `claim`.
    pub command: Vec<String>,
}

/// A Claim this host holds.
#[derive(Clone, Debug)]
pub struct Held {
    pub comment_id: u64,
    /// The claim comment's address on GitHub, for people.
    pub comment_url: String,
    pub record: ClaimRecord,
    /// Set when the issue's latest end record is a Continuation: what this Run resumes.
    pub resume: Option<Continuation>,
}

/// Why an issue cannot be claimed now, if it cannot.
fn not_claimable(ctx: &Ctx, issue: &Issue) -> Option<String> {
    let labels = &ctx.config.labels;
    if !issue.is_open() {
        return Some(format!("issue #{} is closed", issue.number));
    }
    if !issue.has_label(&labels.ready) {
        return Some(format!(
            "issue #{} is not Ready: it has no `{}` label",
            issue.number, labels.ready
        ));
    }
    if issue.has_label(&labels.in_progress) {
        return Some(format!(
            "issue #{} is already `{}`",
            issue.number, labels.in_progress
        ));
    }
    None
}

/// Takes the Claim on an issue. `Err(Exit::lost)` when it is not ours to take.
pub async fn take(ctx: &Ctx, req: &ClaimRequest) -> anyhow::Result<Held> {
    let n = req.issue;
    let issue = ctx.client.get_issue(n).await?;
    if let Some(why) = not_claimable(ctx, &issue) {
        return Err(Exit::lost(why).into());
    }
    let comments = ctx.client.list_issue_comments(n).await?;
    if let Some(owner) = ownership(ctx, n, &comments).owner {
        return Err(Exit::lost(format!(
            "issue #{n} is already claimed by {} on host {} (comment {})",
            owner.record.claim_id, owner.record.host, owner.comment_id
        ))
        .into());
    }
    let record = new_record(ctx, req, issue.has_label(&ctx.config.labels.ready));
    if let Some(why) = record.write_refusal() {
        return Err(Exit::usage(format!(
            "issue #{n} is not claimed: {why}; nothing was written"
        ))
        .into());
    }
    let claim_id = record.claim_id.clone();
    ctx.state.save(&LocalClaim {
        repo: ctx.client.repo().to_string(),
        api_url: ctx.client.api_url().to_string(),
        comment_id: None,
        status: LocalStatus::Posting,
        record: record.clone(),
        salvage: None,
        finished: None,
        command: req.command.clone(),
    })?;
    let (posted, comments) = post_and_read(ctx, n, &record).await?;
    let resume = settle(ctx, n, &record, posted.id, &comments).await?;
    if let Some(why) = not_claimable(ctx, &ctx.client.get_issue(n).await?) {
        let why = format!("{why} by the time claim {claim_id} was posted; withdrawn");
        return withdraw(ctx, n, &record, why).await;
    }
    set_claim_labels(ctx, n, record.removed_ready).await?;
    ctx.state
        .update(&claim_id, |c| c.status = LocalStatus::Active)?;
    tracing::info!(issue = n, claim = %claim_id, comment = posted.id, "claim won");
    Ok(Held {
        comment_id: posted.id,
        comment_url: posted.html_url,
        record,
        resume,
    })
}

/// Posts the claim record, then reads the issue's comments until the list shows it (`store::read`):
/// only such a list shows every claim posted before ours. Withdraws when the list never shows
/// it; loses when someone deleted it. A copy of our record posted twice (a post whose outcome was
/// unknown, checked against a stale list) is deleted, keeping the first.
async fn post_and_read(
    ctx: &Ctx,
    n: u64,
    record: &ClaimRecord,
) -> anyhow::Result<(Comment, Vec<Comment>)> {
    let id = &record.claim_id;
    let posted = post_record(ctx, n, id, Kind::Claim, &record.to_comment()).await?;
    ctx.state.update(id, |c| c.comment_id = Some(posted.id))?;
    let comments = match read::read_through(ctx, n, posted.id).await? {
        Listing::Fresh(comments) => comments,
        Listing::Gone(_) => {
            ctx.state.update(id, |c| c.status = LocalStatus::Lost)?;
            return Err(Exit::lost(format!(
                "claim {id} on issue #{n}: its comment {} was deleted before it was settled",
                posted.id
            ))
            .into());
        }
        Listing::Stale => {
            let why = format!(
                "GitHub's comment list of issue #{n} did not show claim {id} (comment {}) after \
                 {} reads; withdrawn rather than decided from a stale list",
                posted.id,
                read::LIST_READS
            );
            return withdraw(ctx, n, record, why).await;
        }
    };
    let claim = (Kind::Claim, id.as_str());
    drop_own_if_later(ctx, n, &comments, claim, posted.id, FirstOf::Ours).await?;
    let first = find_record(ctx, &comments, id, Kind::Claim).cloned();
    match first {
        Some(first) if first.id != posted.id => {
            ctx.state.update(id, |c| c.comment_id = Some(first.id))?;
            Ok((first, comments))
        }
        _ => Ok((posted, comments)),
    }
}

/// Posts a withdrawn end record for our claim and loses, saying `why`.
async fn withdraw<T>(ctx: &Ctx, n: u64, record: &ClaimRecord, why: String) -> anyhow::Result<T> {
    let end = EndRecord::ending(record, Outcome::Withdrawn, &ctx.host.host, &why, Utc::now());
    post_record(ctx, n, &record.claim_id, Kind::End, &end.to_comment()).await?;
    ctx.state
        .update(&record.claim_id, |c| c.status = LocalStatus::Lost)?;
    Err(Exit::lost(why).into())
}

/// The Continuation this Claim takes over, if the issue's latest end record is one.
fn continuation(own: &Ownership) -> Option<Continuation> {
    let (_, latest) = own.last_ended()?;
    (latest.record.outcome == Outcome::Continued)
        .then(|| latest.record.continuation.clone())
        .flatten()
        .map(|c| *c)
}

/// Where a just-posted claim stands.
#[derive(Clone, Debug, PartialEq)]
enum Settled {
    /// It owns the issue; the Continuation it takes over, if any.
    Won(Option<Continuation>),
    /// It lost (the reason to withdraw with).
    Lost(String),
}

/// Decides a just-posted claim from `comments` read through its comment `posted` (pure): it won
/// if no earlier claim was active when it was posted and it has not been ended since. An earlier
/// claim that ended only after ours was posted still won the race: its Run may have done the
/// work, and a claimant reading late must not take a finished issue over.
fn race_result(
    n: u64,
    id: &str,
    posted: u64,
    comments: &[RawComment],
    trust: &Trust,
) -> anyhow::Result<Settled> {
    let before: Vec<RawComment> = comments
        .iter()
        .filter(|c| c.id <= posted)
        .cloned()
        .collect();
    let at_post = Ownership::of(n, &before, trust);
    let now = Ownership::of(n, comments, trust);
    Ok(Settled::Lost(match (now.state(id), at_post.state(id)) {
        (ClaimState::Ended { end, .. }, _) => format!(
            "claim {id} on issue #{n} was ended by @{} before it started",
            end.author
        ),
        (ClaimState::Unknown, _) | (_, ClaimState::Unknown | ClaimState::Ended { .. }) => bail!(
            "our claim {id} on issue #{n} is not readable as ours: is the token's login trusted?"
        ),
        (_, ClaimState::Owner(_)) => return Ok(Settled::Won(continuation(&at_post))),
        (_, ClaimState::Superseded { by, .. }) => format!(
            "lost the race for issue #{n}: claim {} on host {} was first (comment {})",
            by.record.claim_id, by.record.host, by.comment_id
        ),
    }))
}

/// After posting: keep the Claim if `decide` says it won, else withdraw and lose.
async fn settle(
    ctx: &Ctx,
    n: u64,
    record: &ClaimRecord,
    posted: u64,
    comments: &[Comment],
) -> anyhow::Result<Option<Continuation>> {
    ownership(ctx, n, comments); // reports ignored records
    match race_result(
        n,
        &record.claim_id,
        posted,
        &raw_comments(comments),
        &ctx.trust,
    )? {
        Settled::Won(resume) => Ok(resume),
        Settled::Lost(why) => withdraw(ctx, n, record, why).await,
    }
}

async fn set_claim_labels(ctx: &Ctx, n: u64, removed_ready: bool) -> anyhow::Result<()> {
    let labels = &ctx.config.labels;
    ctx.client.add_label(n, &labels.in_progress).await?;
    if removed_ready {
        ctx.client.remove_label(n, &labels.ready).await?;
    }
    Ok(())
}

fn new_record(ctx: &Ctx, req: &ClaimRequest, has_ready: bool) -> ClaimRecord {
    let now = Utc::now();
    ClaimRecord {
        claim_id: new_claim_id(),
        issue: req.issue,
        host: ctx.host.host.clone(),
        machine_id: ctx.host.machine_id.clone(),
        boot_id: ctx.host.boot_id.clone(),
        pid: req.owner.pid,
        start_ticks: req.owner.start_ticks,
        session_id: None,
        session_start_ticks: None,
        kind: req.kind,
        harness: req.harness.clone(),
        model: None,
        agent_session: req.session.clone(),
        branch: Some(branch_of(req)),
        worktree: req.worktree.clone(),
        logs: Vec::new(),
        stage: STAGE_CLAIMED.to_string(),
        stage_since: now,
        claimed_at: now,
        removed_ready: has_ready,
    }
}

/// The Issue branch a new Claim records: the one given, else the one its worktree has checked
/// out, else `issue-N`.
fn branch_of(req: &ClaimRequest) -> String {
    let checked_out = || {
        let w = req.worktree.as_deref()?;
        crate::salvage::issue_branch_of(std::path::Path::new(w))
    };
    req.branch
        .clone()
        .or_else(checked_out)
        .unwrap_or_else(|| format!("issue-{}", req.issue))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::claim::tests::sample_claim;
    use crate::protocol::record::end::tests::sample_end;

    const BOT: &str = "thirdshift-bot";
    const BASE: u64 = 5_000_000_000;

    fn claim(id: u64, claim_id: &str) -> RawComment {
        let record = ClaimRecord {
            claim_id: claim_id.into(),
            ..sample_claim()
        };
        raw(id, record.to_comment())
    }

    fn end(id: u64, claim_id: &str, outcome: Outcome) -> RawComment {
        let record = EndRecord {
            claim_id: claim_id.into(),
            ..sample_end(outcome)
        };
        raw(id, record.to_comment())
    }

    fn raw(id: u64, body: String) -> RawComment {
        RawComment {
            id: BASE + id,
            author: BOT.into(),
            body,
        }
    }

    fn race_result_ours(comments: &[RawComment]) -> Settled {
        race_result(42, "c-ours", BASE + 2, comments, &Trust::new([BOT])).expect("readable")
    }

    #[test]
    fn claim_without_an_earlier_active_one_wins() {
        // Given an earlier claim that had ended before ours was posted
        let comments = [
            claim(0, "c-early"),
            end(1, "c-early", Outcome::HandedBack),
            claim(2, "c-ours"),
        ];
        // When ours is decided
        // Then it wins
        assert_eq!(race_result_ours(&comments), Settled::Won(None));
    }

    #[test]
    fn earlier_claim_that_ended_after_ours_was_posted_still_won_the_race() {
        // Given an earlier claim, ours, then the earlier claim's Run finishing (done)
        let comments = [
            claim(1, "c-early"),
            claim(2, "c-ours"),
            end(3, "c-early", Outcome::Done),
        ];
        // When ours is decided from a list that shows all three
        let settled = race_result_ours(&comments);
        // Then ours lost to the earlier one, although it has ended by now
        let Settled::Lost(why) = settled else {
            panic!("{settled:?}");
        };
        assert!(
            why.contains("lost the race") && why.contains("c-early"),
            "{why}"
        );
    }

    #[test]
    fn claim_ended_by_someone_else_before_it_settled_loses() {
        // Given our claim, already ended (say superseded by a reconcile pass)
        let comments = [claim(2, "c-ours"), end(3, "c-ours", Outcome::Superseded)];
        // When ours is decided
        // Then it lost
        assert!(matches!(race_result_ours(&comments), Settled::Lost(w) if w.contains("was ended")));
    }
}
