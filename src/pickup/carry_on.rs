//! Carrying a Continuation on at once: pickup's rules for one issue, asked by the companion of a
//! Run whose Claim a pass just ended as a Continuation, so a killed Run carries on in seconds
//! rather than at the next pickup cron line. It starts the Continuation only as a pickup pass
//! would take the issue: a free slot on this host (taking pickup's turn, so a pickup running now
//! cannot count the same slot), the issue still Ready and takeable (a person who changed its
//! labels after the end keeps it), no active claim, not held by its latest end, the host below
//! its Failure limit. The new Run claims through the normal protocol, so a race with another
//! host's pickup is settled like any claim race. With no free slot it starts nothing: any
//! host's pickup takes the issue as before. It decides nothing about the dead Run (the pass did).
//!
//! Whoever starts a Continuation (this, or a pickup pass) notes in its end record, once the new
//! Run won its Claim, where and by whom it was started (`note_started`): the end record is ours,
//! edited once, and the live view and the issue show the chain from it.

use crate::context::Ctx;
use crate::protocol::record::{ContinuationStart, EndView, Outcome, Ownership, StartedBy};
use crate::text::ToComment;

use super::{at_failure_limit, candidates, take_one, Attempt, Launch, OneIssue, Slots, Tried};

/// What carrying one issue on did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CarriedOn {
    /// A Run was started on the issue; how its claim went.
    Started(Tried),
    /// Nothing was started, and why (pickup's passes take the issue as before).
    Left(String),
}

/// Starts `launch` on issue `n` if a pickup pass on this host would take it now.
pub async fn carry_on(ctx: &Ctx, n: u64, launch: &Launch) -> anyhow::Result<CarriedOn> {
    let _turn = crate::host::Turn::take(&ctx.state, "pickup").await?;
    let slots = Slots::read(&ctx.config, &ctx.host, &ctx.state)?;
    if let Some(why) = slots.skip_reason(None) {
        return Ok(CarriedOn::Left(why));
    }
    let issue = ctx.client.get_issue(n).await?;
    let takeable = candidates(&ctx.config, vec![issue]);
    if takeable.is_empty() {
        return Ok(CarriedOn::Left(format!(
            "#{n} is not Ready to take (its labels changed since the end)"
        )));
    }
    if let Some(why) = at_failure_limit(ctx, &slots, &takeable).await? {
        return Ok(CarriedOn::Left(why));
    }
    Ok(
        match take_one(ctx, n, launch, StartedBy::Companion).await? {
            OneIssue::Owned { host } => CarriedOn::Left(format!("#{n} is claimed by host {host}")),
            OneIssue::Held(why) => CarriedOn::Left(why),
            OneIssue::Tried(tried) => CarriedOn::Started(tried),
        },
    )
}

/// When `tried` won the Claim of an issue whose latest end (in `own`, read before the attempt)
/// is a Continuation not yet started, notes in that end record where and by whom it was started.
/// Only our own end record is edited; a failure is only logged (the note is for people).
pub(super) async fn note_started(ctx: &Ctx, own: &Ownership, tried: &Tried, by: StartedBy) {
    let Attempt::Won { claim_id, .. } = &tried.attempt else {
        return;
    };
    let Some(end) = waiting_continuation(ctx, own) else {
        return;
    };
    let mut record = end.record.clone();
    if let Some(c) = record.continuation.as_mut() {
        c.started = Some(Box::new(ContinuationStart {
            claim_id: claim_id.clone(),
            host: ctx.host.host.clone(),
            by,
        }));
    }
    if let Some(why) = record.write_refusal() {
        return tracing::warn!(issue = tried.issue, "Continuation start not noted: {why}");
    }
    let body = record.to_comment();
    if let Err(e) = ctx.client.update_comment(end.comment_id, &body).await {
        tracing::warn!(issue = tried.issue, "Continuation start not noted: {e}");
    }
}

/// The issue's latest end, when it is a Continuation of ours not yet noted as started.
fn waiting_continuation<'a>(ctx: &Ctx, own: &'a Ownership) -> Option<&'a EndView> {
    let (_, end) = own.last_ended()?;
    let c = end.record.continuation.as_ref()?;
    let ours = end.author.eq_ignore_ascii_case(&ctx.me);
    (end.record.outcome == Outcome::Continued && c.started.is_none() && ours).then_some(end)
}
