//! Remote cancel. `cancel --issue N` asks the host that owns an issue's Claim to stop its Run by
//! posting a cancel record on the issue (once: a request already pending is not repeated, and a
//! post whose outcome is unknown is looked up by its request id). An issue with no active Run is
//! answered and nothing is written.
//!
//! The owning host's next `observe` carries pending requests out (`carry_out`): it stops the Run
//! (`host::stop`: TERM, grace, KILL), keeps its worktree's work once nothing of it runs
//! (`crate::ending::keep`), and ends the Claim as `cancelled` through `crate::ending`, end record first,
//! labels second. The Run, TERMed, hands the issue back itself; `crate::ending` asks
//! `as_cancelled` and so writes `cancelled` too, and whichever of the two comes second finds the
//! end record there and writes nothing. Only trusted authors' requests count (`Ownership`).

use anyhow::Context as _;
use chrono::Utc;

use crate::context::Ctx;
use crate::ending::{end_claim, Ending, Released};
use crate::host::stop;
use crate::protocol::record::{
    new_request_id, CancelRecord, CancelView, Cause, ClaimRecord, ClaimView, EndView, Kind,
    Outcome, Ownership,
};
use crate::protocol::rules;
use crate::snapshot::Snapshot;
use crate::store::{ownership, post_record};
use crate::text::cancel as text;
use crate::text::ToComment;

/// What `cancel --issue N` does, decided from the issue's records alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelTarget<'a> {
    /// No active Run: answer with how the last Claim ended, write nothing.
    NothingToCancel { last: Option<&'a EndView> },
    /// A request for the owner's Claim is already waiting: answer, write nothing.
    AlreadyPending {
        claim: &'a ClaimView,
        pending: &'a CancelView,
    },
    /// Post a request for the owner's Claim.
    Request { claim: &'a ClaimView },
}

/// Decides what `cancel` does about an issue with ownership `own`.
pub fn target(own: &Ownership) -> CancelTarget<'_> {
    let Some(claim) = &own.owner else {
        let last = own.last_ended().map(|(_, e)| e);
        return CancelTarget::NothingToCancel { last };
    };
    match own.pending_cancel(&claim.record.claim_id) {
        Some(pending) => CancelTarget::AlreadyPending { claim, pending },
        None => CancelTarget::Request { claim },
    }
}

/// What `cancel --issue N` asks besides stopping the Run.
#[derive(Clone, Debug, Default)]
pub struct Asked {
    /// Why, in the asker's words.
    pub reason: Option<String>,
    /// `--requeue`: the issue goes straight back to the queue; else the cancel holds it.
    pub requeue: bool,
}

/// `cancel --issue N`: posts a cancel request for the Run that owns issue `n`, unless one is
/// pending or no Run is active; returns the answer to print. Exit 0 in every one of these cases.
pub async fn cancel(ctx: &Ctx, n: u64, asked: Asked) -> anyhow::Result<String> {
    let Asked { reason, requeue } = asked;
    ctx.client
        .get_issue(n)
        .await
        .with_context(|| format!("reading issue #{n}"))?;
    let comments = ctx.client.list_issue_comments(n).await?;
    let own = ownership(ctx, n, &comments);
    let claim = match target(&own) {
        CancelTarget::NothingToCancel { last } => {
            if let Some(answer) = cancel_adopted(ctx, n, reason).await? {
                return Ok(answer);
            }
            return Ok(text::nothing_to_cancel(n, last));
        }
        CancelTarget::AlreadyPending { claim, pending } => {
            return Ok(text::already_pending(claim, pending))
        }
        CancelTarget::Request { claim } => claim,
    };
    let record = CancelRecord {
        request_id: new_request_id(),
        claim_id: claim.record.claim_id.clone(),
        issue: n,
        requested_by: format!("cancel@{}", ctx.host.host),
        reason: reason.filter(|r| !r.trim().is_empty()),
        requested_at: Utc::now(),
        recover: false,
        requeue,
    };
    let posted = post_record(
        ctx,
        n,
        &record.request_id,
        Kind::Cancel,
        &record.to_comment(),
    )
    .await
    .context("posting the cancel request")?;
    tracing::info!(issue = n, request = %record.request_id, claim = %record.claim_id, "cancel requested");
    Ok(text::requested(claim, &record.request_id, posted.id))
}

/// `cancel --issue N` on an issue no claim of ours owns: a request to stop the live thirdshift
/// Command a host reports there (`crate::observe::stop_adopted` carries it out); `None` when there is none.
async fn cancel_adopted(
    ctx: &Ctx,
    n: u64,
    reason: Option<String>,
) -> anyhow::Result<Option<String>> {
    let snapshot = crate::snapshot::read_issue(ctx, n).await?;
    let Some(issue) = snapshot.issue(n) else {
        return Ok(None);
    };
    let Some((report, verdict)) = snapshot.live_adopted_on(issue) else {
        return Ok(None);
    };
    let Some(facts) = verdict.run.thirdshift() else {
        return Ok(None);
    };
    let id = &verdict.claim_id;
    if let Some(pending) = issue.ownership.pending_adopted_cancel(id) {
        return Ok(Some(text::adopted_already_pending(n, id, pending)));
    }
    let record = CancelRecord {
        request_id: new_request_id(),
        claim_id: id.clone(),
        issue: n,
        requested_by: format!("cancel@{}", ctx.host.host),
        reason: reason.filter(|r| !r.trim().is_empty()),
        requested_at: Utc::now(),
        recover: false,
        requeue: false,
    };
    let body = record.to_comment();
    let posted = post_record(ctx, n, &record.request_id, Kind::Cancel, &body)
        .await
        .context("posting the cancel request")?;
    let host = &report.report.host;
    let answer = text::adopted_requested(n, host, facts, &record.request_id, posted.id);
    Ok(Some(answer))
}

/// A cancel request this host acted on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Carried {
    pub issue: u64,
    pub claim_id: String,
    pub request_id: String,
    pub result: CarryResult,
}

/// What became of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CarryResult {
    /// The Run was stopped (`how`) and its Claim ended: by this pass (`by` is `None`), or already
    /// by someone else, normally the Run handing back itself (`by` names the author).
    Ended {
        how: String,
        outcome: Outcome,
        by: Option<String>,
    },
    /// Processes of the Run survived SIGKILL: the request stays pending for the next pass.
    StillRunning { pids: Vec<u32> },
    /// Nothing provably the Run's runs: the Claim ends the way a dead Run's does (its work kept).
    NothingRunning,
    /// This host has no local record of the Claim: it acts only on what it recorded itself, so
    /// it signals nothing and the request stays pending.
    NotRecordedHere,
}

impl Carried {
    /// The line `observe` prints about it.
    pub fn line(&self) -> String {
        match &self.result {
            CarryResult::Ended { how, outcome, by } => {
                text::carried_out(self.issue, &self.claim_id, how, *outcome, by.as_deref())
            }
            CarryResult::StillRunning { pids } => {
                text::still_running(self.issue, &self.claim_id, pids)
            }
            CarryResult::NothingRunning => text::nothing_running(self.issue, &self.claim_id),
            CarryResult::NotRecordedHere => text::not_recorded_here(self.issue, &self.claim_id),
        }
    }
}

/// Carries out the pending cancel requests for `claims` (this host's active Claims, as
/// `snapshot` shows them). Returns the Claims still active, to be judged, and what was done.
pub async fn carry_out(
    ctx: &Ctx,
    snapshot: &Snapshot,
    claims: Vec<ClaimRecord>,
) -> anyhow::Result<(Vec<ClaimRecord>, Vec<Carried>)> {
    let mut active = Vec::new();
    let mut carried = Vec::new();
    for claim in claims {
        let pending = snapshot
            .issue(claim.issue)
            .and_then(|i| i.ownership.pending_cancel(&claim.claim_id));
        let Some(request) = pending else {
            active.push(claim);
            continue;
        };
        let result = carry_out_one(ctx, &claim, request)
            .await
            .with_context(|| format!("cancelling claim {} on #{}", claim.claim_id, claim.issue))?;
        carried.push(Carried {
            issue: claim.issue,
            claim_id: claim.claim_id.clone(),
            request_id: request.record.request_id.clone(),
            result: result.clone(),
        });
        if !matches!(result, CarryResult::Ended { .. }) {
            active.push(claim);
        }
    }
    Ok((active, carried))
}

/// Stops one Run, keeps its worktree's work (`crate::ending::keep`) and ends its Claim as `cancelled` as
/// `observe@HOST`, unless it ended already.
async fn carry_out_one(
    ctx: &Ctx,
    claim: &ClaimRecord,
    request: &CancelView,
) -> anyhow::Result<CarryResult> {
    // Signals go to the processes this host recorded, never to those GitHub's copy names: any
    // write collaborator can edit a comment.
    let Ok(local) = ctx.state.load(&claim.claim_id) else {
        return Ok(CarryResult::NotRecordedHere);
    };
    let claim = &local.record;
    let policy = ctx.config.run.for_kind(claim.kind);
    let grace = policy.kill_grace_secs;
    let stopped = stop(claim, policy).await?;
    if stopped.nothing_ran {
        return Ok(CarryResult::NothingRunning);
    }
    if !stopped.left.is_empty() {
        return Ok(CarryResult::StillRunning { pids: stopped.left });
    }
    let how = text::stopped_how(&ctx.host.host, grace, stopped.killed);
    let signal = if stopped.killed > 0 {
        libc::SIGKILL
    } else {
        libc::SIGTERM
    };
    // Nothing of the Run runs any more: keep its work (stored already when the Run kept it
    // before handing back; salvaged again, committing nothing twice, when it was killed first).
    let why = crate::text::salvage::reason_cancelled(request.record.recover);
    let kept = crate::ending::stopped_run(ctx, claim, why).await?;
    let ending = Ending {
        outcome: rules::cancel_outcome(request),
        reason: text::cancelled_reason(request, &how),
        exit_code: None,
        signal: Some(signal),
        cause: Some(Cause::Cancel {
            by: request.record.requested_by.clone(),
        }),
        kept,
        started: true,
    };
    let actor = format!("observe@{}", ctx.host.host);
    let (n, id) = (claim.issue, claim.claim_id.as_str());
    Ok(match end_claim(ctx, n, id, &actor, &ending).await? {
        Released::Ended { .. } => CarryResult::Ended {
            how,
            outcome: ending.outcome,
            by: None,
        },
        Released::AlreadyEnded { outcome, by } => {
            finish_labels(ctx, n, id).await?;
            CarryResult::Ended {
                how,
                outcome,
                by: Some(by),
            }
        }
    })
}

/// When the Claim was already ended (the Run handed back, perhaps killed before its labels were
/// set): applies that end record's labels, as reconcile would, if no newer Claim owns the issue
/// and it still carries `in-progress` — and, as reconcile, leaves every label a person changed
/// since that end record as they set it.
async fn finish_labels(ctx: &Ctx, n: u64, claim_id: &str) -> anyhow::Result<()> {
    let comments = ctx.client.list_issue_comments(n).await?;
    let own = ownership(ctx, n, &comments);
    if own.owner.is_some() {
        return Ok(());
    }
    let latest = own
        .ended
        .iter()
        .filter(|(_, e)| e.record.labels_after.is_some())
        .max_by_key(|(_, e)| e.comment_id);
    let Some((_, end)) = latest.filter(|(c, _)| c.record.claim_id == claim_id) else {
        return Ok(());
    };
    let issue = ctx.client.get_issue(n).await?;
    let in_progress = &ctx.config.labels.in_progress;
    if !issue.has_label(in_progress) {
        return Ok(());
    }
    // A label a person changed since that end record is theirs: never undone (as in reconcile).
    let since = crate::snapshot::since_end(ctx, n, end, None).await?;
    // Claimed again since (`in-progress` off, then on): the labels are the new Claim's.
    if since.claimed_again {
        return Ok(());
    }
    let theirs = since.people;
    let changed = |label: &str, added: bool| {
        theirs
            .iter()
            .any(|c| c.added == added && c.label.eq_ignore_ascii_case(label))
    };
    let list = end.record.labels_after.clone().unwrap_or_default();
    for label in &list {
        if !issue.has_label(label) && !changed(label, false) {
            ctx.client.add_label(n, label).await?;
        }
    }
    if !ctx.config.labels.keeps_in_progress(&list) && !changed(in_progress, true) {
        ctx.client.remove_label(n, in_progress).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ending::as_cancelled;
    use crate::protocol::record::cancel::tests::sample_cancel;
    use crate::protocol::record::claim::tests::sample_claim;
    use crate::protocol::record::end::tests::sample_end;
    use crate::protocol::record::{ClaimRecord, EndRecord, RawComment, Trust};

    const BASE: u64 = 5_000_000_000;

    fn bot(id: u64, body: String) -> RawComment {
        RawComment {
            id: BASE + id,
            author: "bot".into(),
            body,
        }
    }

    fn own(comments: &[RawComment]) -> Ownership {
        Ownership::of(42, comments, &Trust::new(["bot"]))
    }

    fn claim(id: &str) -> ClaimRecord {
        ClaimRecord {
            claim_id: id.into(),
            ..sample_claim()
        }
    }

    fn cancel_for(id: &str) -> CancelRecord {
        CancelRecord {
            claim_id: id.into(),
            ..sample_cancel()
        }
    }

    fn end_of(id: &str, outcome: Outcome) -> EndRecord {
        EndRecord {
            claim_id: id.into(),
            ..sample_end(outcome)
        }
    }

    fn ending(outcome: Outcome, signal: Option<i32>) -> Ending {
        Ending {
            outcome,
            reason: "the Run was stopped by signal 15".into(),
            exit_code: None,
            signal,
            cause: None,
            kept: None,
            started: true,
        }
    }

    #[test]
    fn finished_run_is_answered_with_its_last_end() {
        // given two Claims that both ended, the later one done
        let o = own(&[
            bot(1, claim("c-a").to_comment()),
            bot(2, end_of("c-a", Outcome::Failed).to_comment()),
            bot(3, claim("c-b").to_comment()),
            bot(4, end_of("c-b", Outcome::Done).to_comment()),
        ]);
        // then there is nothing to cancel, and the answer names the latest end
        let CancelTarget::NothingToCancel { last: Some(last) } = target(&o) else {
            panic!("{:?}", target(&o));
        };
        assert_eq!(last.record.outcome, Outcome::Done);
        assert_eq!(
            target(&own(&[])),
            CancelTarget::NothingToCancel { last: None }
        );
    }

    #[test]
    fn active_owner_is_requested_once_while_a_request_is_pending() {
        let claim_only = [bot(1, claim("c-a").to_comment())];
        assert!(matches!(
            target(&own(&claim_only)),
            CancelTarget::Request { claim } if claim.record.claim_id == "c-a"
        ));
        let pending = [
            bot(1, claim("c-a").to_comment()),
            bot(2, cancel_for("c-a").to_comment()),
        ];
        assert!(matches!(
            target(&own(&pending)),
            CancelTarget::AlreadyPending { pending, .. } if pending.comment_id == BASE + 2
        ));
    }

    #[test]
    fn stopped_run_with_a_pending_request_ends_cancelled_naming_it() {
        // given an active Claim with a pending request
        let o = own(&[
            bot(1, claim("c-a").to_comment()),
            bot(2, cancel_for("c-a").to_comment()),
        ]);
        // when its Run hands back, or its command is killed by SIGTERM
        for e in [
            ending(Outcome::HandedBack, Some(15)),
            ending(Outcome::Failed, Some(15)),
        ] {
            // then it ends cancelled, keeping its signal, with a reason naming the request
            let got = as_cancelled(&o, "c-a", &e).expect("cancelled");
            assert_eq!(got.outcome, Outcome::Cancelled);
            assert_eq!(got.signal, Some(15));
            assert!(got.reason.contains("cx-00000000000000aa"), "{}", got.reason);
            assert!(got.reason.ends_with(&e.reason), "{}", got.reason);
        }
    }

    #[test]
    fn other_endings_or_no_pending_request_are_left_as_they_are() {
        let with_request = own(&[
            bot(1, claim("c-a").to_comment()),
            bot(2, cancel_for("c-a").to_comment()),
        ]);
        // a Run that finished, or failed by itself, is not turned into a cancel
        for e in [
            ending(Outcome::Done, None),
            ending(Outcome::Failed, None),
            ending(Outcome::Failed, Some(libc::SIGSEGV)),
        ] {
            assert!(as_cancelled(&with_request, "c-a", &e).is_none());
        }
        // and a hand-back with no request for its Claim stays a hand-back
        let without = own(&[bot(1, claim("c-a").to_comment())]);
        let e = ending(Outcome::HandedBack, Some(15));
        assert!(as_cancelled(&without, "c-a", &e).is_none());
    }
}
