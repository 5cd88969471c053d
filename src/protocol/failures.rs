//! The failure limits, counted from end records and never from clocks, so a Run ending its own
//! Claim, a host carrying out a cancel and reconcile ending a dead Run agree: an issue whose last
//! `recovery.max_failures` Runs failed, died or were cancelled with nothing on origin goes to
//! people rather than back to the queue ([`at_limit`]); after such an end, or a cancel without
//! `--requeue`, pickup leaves the issue alone until a person puts the ready label back
//! ([`hold`]); and which open issues count toward a host's `pickup.failure_limit`
//! ([`handed_for_failing`]). No IO: the events that say who put a label back are read by pickup.

use crate::protocol::config::{LabelEnding, Labels};
use crate::protocol::record::Ownership;
use crate::protocol::record::{ClaimRecord, ClaimView, EndRecord, EndView, FailedRun, Outcome};

/// Whether an ended Run counts toward its issue's failure limit: it failed, died (recovered, or
/// continued after it died), or was cancelled with nothing of it on origin (no pull request, and
/// its host's salvage did not find its branch there). A done or handed-back Run breaks the run
/// of failures; a withdrawn, superseded or swept Claim had no Run and does not count.
pub fn counts(end: &EndRecord) -> bool {
    match end.outcome {
        Outcome::Failed | Outcome::Recovered | Outcome::Continued => true,
        Outcome::Cancelled => {
            end.pull_request.is_none() && !end.kept.as_ref().is_some_and(|k| k.pushed)
        }
        _ => false,
    }
}

/// Whether an end record is part of the Runs that count at all (a Claim that had a Run).
fn had_a_run(end: &EndRecord) -> bool {
    !matches!(
        end.outcome,
        Outcome::Withdrawn | Outcome::Superseded | Outcome::Swept
    )
}

/// The failed Runs in a row that `this` (the end about to be written for `claim`) completes,
/// oldest first, when they reach `limit`: `this` counts and so do the last `limit - 1` Runs ended
/// before it on the issue (`ended`, by claim comment id; Claims without a Run are passed over).
/// `None` below the limit.
pub fn at_limit(
    ended: &[(ClaimView, EndView)],
    claim: &ClaimRecord,
    this: &EndRecord,
    limit: u32,
) -> Option<Vec<FailedRun>> {
    if !counts(this) {
        return None;
    }
    let before = usize::try_from(limit.max(1) - 1).unwrap_or(usize::MAX);
    let mut runs: Vec<FailedRun> = ended
        .iter()
        .rev()
        .filter(|(c, e)| c.record.claim_id != claim.claim_id && had_a_run(&e.record))
        .take(before)
        .take_while(|(_, e)| counts(&e.record))
        .map(|(c, e)| failed_run(&c.record, &e.record))
        .collect();
    if runs.len() < before {
        return None;
    }
    runs.reverse();
    runs.push(failed_run(claim, this));
    Some(runs)
}

fn failed_run(claim: &ClaimRecord, end: &EndRecord) -> FailedRun {
    FailedRun {
        claim_id: claim.claim_id.clone(),
        host: claim.host.clone(),
        outcome: end.outcome,
        reason: end.reason.clone(),
    }
}

/// Settles the end `end` of `claim` at the failure limit: when it completes `limit` failed Runs
/// in a row, lists them in `end.failures` and returns the labels that hand the issue to people
/// (`labels.after.failed_with_work`: `ready-for-human`, or `in-progress` + `agent-failed` under
/// the thirdshift preset), never the ready label. `None` below the limit: the end is as it was.
pub fn hand_to_people(
    labels: &Labels,
    ended: &[(ClaimView, EndView)],
    claim: &ClaimRecord,
    end: &mut EndRecord,
    limit: u32,
) -> Option<Vec<String>> {
    let runs = at_limit(ended, claim, end, limit)?;
    end.failures = runs;
    let mut list = labels.after(LabelEnding::FailedWithWork);
    list.retain(|l| !l.eq_ignore_ascii_case(&labels.ready));
    Some(list)
}

/// The labels an end about to be written for `claim` gets, `list` being what the label
/// conventions say: the hand-off labels at the failure limit ([`hand_to_people`], which also
/// lists the failures in `end`); for a cancel, the ready label back only when the request asked
/// `--requeue` (and the Claim had taken it off), never otherwise, so the cancel holds.
pub fn settle(
    labels: &Labels,
    own: &Ownership,
    claim: &ClaimRecord,
    end: &mut EndRecord,
    mut list: Vec<String>,
    limit: u32,
) -> Vec<String> {
    if let Some(to_people) = hand_to_people(labels, &own.ended, claim, end, limit) {
        return to_people;
    }
    if end.outcome == Outcome::Cancelled {
        list.retain(|l| !l.eq_ignore_ascii_case(&labels.ready));
        if claim.removed_ready && requeue_asked(own, &claim.claim_id) {
            list.push(labels.ready.clone());
        }
    }
    list
}

/// Whether a trusted cancel request for `claim_id` asked `--requeue`.
fn requeue_asked(own: &Ownership, claim_id: &str) -> bool {
    own.cancels
        .iter()
        .any(|c| c.record.claim_id == claim_id && c.record.requeue)
}

/// Why pickup leaves an issue alone after its latest end until a person puts the ready label
/// back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// The end handed the issue to people at the failure limit.
    FailureLimit,
    /// The Run was cancelled without `--requeue`.
    Cancelled,
}

/// Whether the latest end holds it, and that end: handed to people at the failure limit,
/// or cancelled on a request that did not ask `--requeue`. Released only by a ready label put on
/// after that end was posted (pickup reads the events).
pub fn hold(own: &Ownership) -> Option<(Hold, &EndView)> {
    let (claim, end) = own.last_ended()?;
    if !end.record.failures.is_empty() {
        return Some((Hold::FailureLimit, end));
    }
    if end.record.outcome != Outcome::Cancelled {
        return None;
    }
    (!requeue_asked(own, &claim.record.claim_id)).then_some((Hold::Cancelled, end))
}

/// Whether the latest end handed it to people for failing, on a Claim of `host`: at the
/// failure limit, or a failed or dead Run whose end did not put the issue back in the queue. Such
/// an open issue counts toward the host's `pickup.failure_limit`.
pub fn handed_for_failing(labels: &Labels, own: &Ownership, host: &str) -> bool {
    let Some((claim, end)) = own.last_ended() else {
        return false;
    };
    let end = &end.record;
    let failed = matches!(end.outcome, Outcome::Failed | Outcome::Recovered);
    let to_people = end.labels_after.as_ref().is_some_and(|l| !labels.queues(l));
    claim.record.host == host && (!end.failures.is_empty() || (failed && to_people))
}

#[cfg(test)]
mod tests;
