//! Ending a Claim the way its Run ended: an end record first (posted exactly once, whoever
//! repeats it), then the labels, one at a time. Safe to repeat: a Claim already ended is left as
//! it is. Labels are touched only when the Claim owned the issue.

use chrono::Utc;

use crate::claim::{end_record, post_record};
use crate::context::Ctx;
use crate::host::LocalStatus;
use crate::policy::label_after;
use crate::record::{ClaimState, Kind, Outcome};

/// How a Claim ends.
#[derive(Clone, Debug)]
pub struct Ending {
    pub outcome: Outcome,
    pub reason: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

/// What `release` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// We posted the end record (and set labels if we owned the issue).
    Ended,
    /// Someone had already ended it: nothing done.
    AlreadyEnded { outcome: Outcome, by: String },
}

/// Ends the Claim `claim_id` of this host.
pub async fn release(ctx: &Ctx, claim_id: &str, ending: &Ending) -> anyhow::Result<Released> {
    let local = ctx.state.load(claim_id)?;
    let n = local.record.issue;
    let comments = ctx.client.list_issue_comments(n).await?;
    let own = crate::claim::ownership(ctx, n, &comments);
    let (view, owner) = match own.state(claim_id) {
        ClaimState::Ended { end, .. } => {
            ctx.state
                .update(claim_id, |c| c.status = LocalStatus::Ended)?;
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
    let record = &view.record;
    let mut end = end_record(
        record,
        ending.outcome,
        &format!("run@{}", ctx.host.host),
        &ending.reason,
    );
    end.exit_code = ending.exit_code;
    end.signal = ending.signal;
    end.claim_comment_id = Some(view.comment_id);
    let add = if owner {
        label_after(&ctx.config.labels, record, ending.outcome)
    } else {
        None
    };
    end.labels_after = owner.then(|| add.map(str::to_string).into_iter().collect());
    end.ended_at = Utc::now();
    post_record(ctx, n, claim_id, Kind::End, &end.to_comment()).await?;
    if owner {
        if let Some(label) = add {
            ctx.client.add_label(n, label).await?;
        }
        ctx.client
            .remove_label(n, &ctx.config.labels.in_progress)
            .await?;
    }
    ctx.state
        .update(claim_id, |c| c.status = LocalStatus::Ended)?;
    tracing::info!(
        issue = n,
        claim = claim_id,
        outcome = ending.outcome.as_str(),
        "claim ended"
    );
    Ok(Released::Ended)
}
