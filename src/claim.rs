//! The claim protocol and its fencing, shared by `claim`, `run`, `stage` and `release`:
//! read the issue, stop if closed, not Ready or owned; write the local record; post the claim
//! comment; read the comments again; withdraw if an earlier active claim exists, else set labels
//! one at a time. Every stage change re-checks ownership first. Every write is safe to repeat:
//! a record whose post had an unknown outcome is looked up by its id before it is posted again.
//! It does not start or supervise processes (that is `run.rs`).

use anyhow::{bail, Context as _};
use chrono::Utc;

use crate::context::Ctx;
use crate::exit::Exit;
use crate::github::{Comment, Issue};
use crate::host::{LocalClaim, LocalStatus, ProcessIdentity};
use crate::record::{
    decode, new_claim_id, ClaimRecord, ClaimState, Continuation, Decoded, EndRecord, Kind, Outcome,
    Ownership, RawComment, Record, RunKind,
};

pub use crate::policy::{STAGE_CLAIMED, STAGE_RUNNING};
/// How many times a record post with an unknown outcome is checked and repeated.
const POST_ATTEMPTS: u32 = 8;

/// What a Claim is asked for.
#[derive(Clone, Debug)]
pub struct ClaimRequest {
    pub issue: u64,
    pub kind: RunKind,
    pub harness: Option<String>,
    pub session: Option<String>,
    /// The Run's git worktree (absolute path), when known.
    pub worktree: Option<String>,
    /// The process that owns the Claim (the Run, or the caller of `claim`).
    pub owner: ProcessIdentity,
}

/// A Claim this host holds.
#[derive(Clone, Debug)]
pub struct Held {
    pub comment_id: u64,
    pub record: ClaimRecord,
    /// Set when the issue's latest end record is a Continuation: what this Run resumes.
    pub resume: Option<Continuation>,
}

/// Reads the ownership of an issue from its comments.
pub fn ownership(ctx: &Ctx, issue: u64, comments: &[Comment]) -> Ownership {
    let raw: Vec<RawComment> = comments
        .iter()
        .map(|c| RawComment {
            id: c.id,
            author: c.author().to_string(),
            body: c.text().to_string(),
        })
        .collect();
    let own = Ownership::of(issue, &raw, &ctx.trust);
    for problem in &own.problems {
        tracing::warn!(issue, "ignored record: {problem}");
    }
    own
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
    let claim_id = record.claim_id.clone();
    ctx.state.save(&LocalClaim {
        repo: ctx.client.repo().to_string(),
        api_url: ctx.client.api_url().to_string(),
        comment_id: None,
        status: LocalStatus::Posting,
        record: record.clone(),
        salvage: None,
    })?;
    let posted = post_record(ctx, n, &claim_id, Kind::Claim, &record.to_comment()).await?;
    ctx.state
        .update(&claim_id, |c| c.comment_id = Some(posted.id))?;
    let mut comments = ctx.client.list_issue_comments(n).await?;
    if !comments.iter().any(|c| c.id == posted.id) {
        comments.push(posted.clone());
    }
    let resume = settle(ctx, n, &record, &comments).await?;
    set_claim_labels(ctx, n, record.removed_ready).await?;
    ctx.state
        .update(&claim_id, |c| c.status = LocalStatus::Active)?;
    tracing::info!(issue = n, claim = %claim_id, comment = posted.id, "claim won");
    Ok(Held {
        comment_id: posted.id,
        record,
        resume,
    })
}

/// The Continuation this Claim takes over, if the issue's latest end record is one.
fn continuation(own: &Ownership) -> Option<Continuation> {
    let (_, latest) = own.ended.iter().max_by_key(|(_, e)| e.comment_id)?;
    (latest.record.outcome == Outcome::Continued)
        .then(|| latest.record.continuation.clone())
        .flatten()
}

/// After posting: keep the Claim if it owns the issue (returning the Continuation it takes
/// over, if any), else withdraw and lose.
async fn settle(
    ctx: &Ctx,
    n: u64,
    record: &ClaimRecord,
    comments: &[Comment],
) -> anyhow::Result<Option<Continuation>> {
    let own = ownership(ctx, n, comments);
    let why = match own.state(&record.claim_id) {
        ClaimState::Owner(_) => return Ok(continuation(&own)),
        ClaimState::Superseded { by, .. } => format!(
            "lost the race for issue #{n}: claim {} on host {} was first (comment {})",
            by.record.claim_id, by.record.host, by.comment_id
        ),
        ClaimState::Ended { end, .. } => format!(
            "claim {} on issue #{n} was ended by @{} before it started",
            record.claim_id, end.author
        ),
        ClaimState::Unknown => bail!(
            "our claim {} on issue #{n} is not readable as ours: is the token's login trusted?",
            record.claim_id
        ),
    };
    let end = end_record(record, Outcome::Withdrawn, &ctx.host.host, &why);
    post_record(ctx, n, &record.claim_id, Kind::End, &end.to_comment()).await?;
    ctx.state
        .update(&record.claim_id, |c| c.status = LocalStatus::Lost)?;
    Err(Exit::lost(why).into())
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
        kind: req.kind,
        harness: req.harness.clone(),
        model: None,
        agent_session: req.session.clone(),
        branch: Some(format!("issue-{}", req.issue)),
        worktree: req.worktree.clone(),
        logs: Vec::new(),
        stage: STAGE_CLAIMED.to_string(),
        stage_since: now,
        claimed_at: now,
        removed_ready: has_ready,
    }
}

/// An end record for `record` by `actor`.
pub fn end_record(record: &ClaimRecord, outcome: Outcome, actor: &str, reason: &str) -> EndRecord {
    EndRecord {
        claim_id: record.claim_id.clone(),
        issue: record.issue,
        outcome,
        actor: actor.to_string(),
        reason: reason.to_string(),
        exit_code: None,
        signal: None,
        claim_comment_id: None,
        labels_after: None,
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        ended_at: Utc::now(),
    }
}

/// Posts a record comment exactly once: when a post's outcome is unknown, the comments are read
/// again and the record is looked up by its key (the claim id of a claim or end record, the host
/// of a host report, the request id of a cancel record) before posting again.
pub async fn post_record(
    ctx: &Ctx,
    n: u64,
    key: &str,
    kind: Kind,
    body: &str,
) -> anyhow::Result<Comment> {
    for _ in 0..POST_ATTEMPTS {
        match ctx.client.create_comment(n, body).await {
            Ok(c) => return Ok(c),
            Err(e) if e.is_uncertain() => {
                tracing::warn!(
                    issue = n,
                    record = key,
                    "post outcome unknown ({e}); checking"
                );
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

/// Our own comment that carries the `kind` record of `key`, if GitHub has it.
pub fn find_record<'a>(
    ctx: &Ctx,
    comments: &'a [Comment],
    key: &str,
    kind: Kind,
) -> Option<&'a Comment> {
    comments.iter().find(|c| {
        c.author().eq_ignore_ascii_case(&ctx.me)
            && match decode(c.text()) {
                Decoded::Record(Record::Claim(r)) => kind == Kind::Claim && r.claim_id == key,
                Decoded::Record(Record::End(r)) => kind == Kind::End && r.claim_id == key,
                Decoded::Record(Record::HostReport(r)) => kind == Kind::HostReport && r.host == key,
                Decoded::Record(Record::Cancel(r)) => kind == Kind::Cancel && r.request_id == key,
                _ => false,
            }
    })
}
