//! Ending a Claim the way its Run ended, shared by the use cases that end one on their own host
//! (a Run's own `release`, observe carrying out a cancel, the command line's `end`): it reads the
//! issue's records and what reached origin (its Issue branch and pull requests, read as
//! reconcile reads them), decides with the one pure Run ending (`reconcile::plan::run_end`: the
//! end record, its labels by the label conventions, settled at the failure limit or for a
//! cancel) and writes with the one apply (`reconcile::apply`: the end record posted exactly
//! once, whoever repeats it, then the labels behind the same fence a pass uses). What the Run's
//! host kept comes from `keep.rs`, which keeps a stopped Run's work first. Safe to repeat: a
//! Claim already ended is left as it is. Labels are touched only when the Claim owned the issue,
//! as read from a comment list that shows the claim's own comment when this host knows it
//! (`store::read`). A Run
//! stopped by a signal while a trusted cancel request for its Claim is pending ends `cancelled`
//! (`as_cancelled`), so the Run and the host carrying the request out write the same end,
//! whichever writes it. Reconcile's ending of a dead Run is planned in `reconcile`, on the same
//! rules.

mod keep;

pub use crate::reconcile::plan::as_cancelled;
pub use keep::{adopted_run, move_aside, own_run, stopped_run};

use chrono::Utc;

use crate::context::Ctx;
use crate::host::LocalStatus;
use crate::protocol::record::{ClaimRecord, ClaimState, Outcome};
use crate::reconcile::apply::{apply, Seen};
use crate::reconcile::plan::{end_actions, run_end, HowEnded, LabelsNow, OurEnd, RunEnd};
use crate::snapshot::Origin;

/// How a Claim ends: the record a Run keeps locally before posting it
/// ([`crate::protocol::record::RunEnding`]), so a refused write loses nothing.
pub type Ending = crate::protocol::record::RunEnding;

/// What `release` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// We posted the end record (and set labels if we owned the issue); its address.
    Ended { url: String },
    /// Someone had already ended it: nothing done.
    AlreadyEnded { outcome: Outcome, by: String },
}

/// Ends the Claim `claim_id` on issue `n` as `actor`, and marks this host's local record of it
/// (if any) ended. With a local record the comments are read through its claim comment, so a
/// stale list never decides whether the Claim owned the issue.
pub async fn end_claim(
    ctx: &Ctx,
    n: u64,
    claim_id: &str,
    actor: &str,
    ending: &Ending,
) -> anyhow::Result<Released> {
    let comments = match ctx.state.load(claim_id) {
        Ok(local) => crate::store::read::claim_comments(ctx, &local).await?,
        Err(_) => ctx.client.list_issue_comments(n).await?,
    };
    let own = crate::store::ownership(ctx, n, &comments);
    let (view, owner) = match own.state(claim_id) {
        ClaimState::Ended { end, .. } => {
            mark_ended(ctx, claim_id)?;
            return Ok(Released::AlreadyEnded {
                outcome: end.record.outcome,
                by: end.author.clone(),
            });
        }
        ClaimState::Owner(v) => (v.clone(), true),
        ClaimState::Superseded { claim, .. } => (claim.clone(), false),
        ClaimState::Unknown => anyhow::bail!(
            "claim {claim_id} is not on issue #{n}: nothing to end (its comment is gone or not \
             trusted)"
        ),
    };
    let cancelled = as_cancelled(&own, claim_id, ending);
    let ending = cancelled.as_ref().unwrap_or(ending);
    let origin = if owner && ending.started {
        origin_of(ctx, &view.record, ending.outcome).await
    } else {
        None
    };
    let run = RunEnd::Ours(OurEnd {
        claim: &view,
        owns_labels: owner,
        how: HowEnded::ByItself(ending),
        origin: origin.as_ref(),
        actor,
        now: Utc::now(),
    });
    let end = run_end(&ctx.config, &own, run);
    let actions = end_actions(&ctx.config.labels, end, LabelsNow::Unread { issue: n });
    let applied = apply(ctx, &actions, &Seen::one(n, &own)).await;
    if let Some(e) = applied.errors.first() {
        anyhow::bail!("ending claim {claim_id}: {e}");
    }
    mark_ended(ctx, claim_id)?;
    tracing::info!(
        issue = n,
        claim = claim_id,
        outcome = ending.outcome.as_str(),
        "claim ended"
    );
    match applied.ended.into_iter().next() {
        Some(end) => Ok(Released::Ended { url: end.url }),
        None => anyhow::bail!("ending claim {claim_id}: no end record was posted"),
    }
}

/// What origin holds of the Run's Issue branch, read the way reconcile reads it before choosing
/// labels, when the outcome's labels depend on it (done: an open pull request; failed: any work
/// there). `None` when not needed, or when GitHub could not say (the labels are then chosen from
/// what the Run's host kept, as before).
async fn origin_of(ctx: &Ctx, record: &ClaimRecord, outcome: Outcome) -> Option<Origin> {
    if !matches!(outcome, Outcome::Done | Outcome::Failed) {
        return None;
    }
    let branch = record.issue_branch();
    match Origin::read(ctx, &branch).await {
        Ok(origin) => Some(origin),
        Err(e) => {
            tracing::warn!(
                branch,
                "origin not read; labels chosen from what was kept: {e:#}"
            );
            None
        }
    }
}

/// Marks this host's local record of `claim_id` ended, when there is one.
pub(crate) fn mark_ended(ctx: &Ctx, claim_id: &str) -> anyhow::Result<()> {
    if ctx.state.load(claim_id).is_ok() {
        ctx.state
            .update(claim_id, |c| c.status = LocalStatus::Ended)?;
    }
    Ok(())
}
