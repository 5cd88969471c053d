//! The one pure ending of a Claim of ours: the end record, with the labels its issue gets when
//! the Claim owned them, for a Run that ended by itself (its command exited, it was handed back
//! or stopped by a signal, or its host stopped it on a cancel request) and for one proven dead.
//! Used alike by the Run's own end and observe's carried-out cancel (`crate::ending::end_claim`,
//! which reads and writes) and by a pass (`recover.rs`: a dead Run, or one whose end GitHub
//! refused). A thirdshift Command's end is an issue-wide decision as thirdshift's own Failed run
//! makes it (`adopted.rs`), on the same label rule (`protocol::rules::end_labels`). No IO, no
//! clock.

use chrono::{DateTime, Utc};

use crate::protocol::config::{Config, OnDead};
use crate::protocol::failures;
use crate::protocol::record::{CancelView, ClaimView, Continuation, EndRecord, Outcome};
use crate::protocol::record::{Ownership, RunEnding, Salvage};
use crate::protocol::resume::hand_off;
use crate::protocol::rules::{self, continuations, end_labels, Ended};
use crate::snapshot::Origin;

/// One Run's end to decide.
#[derive(Clone, Copy, Debug)]
pub struct RunEnd<'a> {
    /// The Claim, as its comment holds it.
    pub claim: &'a ClaimView,
    /// Whether the Claim owned the labels (it was the owner, not a superseded claim).
    pub owns_labels: bool,
    /// How the Run ended.
    pub how: HowEnded<'a>,
    /// What origin holds of its Issue branch, when read (`None`: not read, or not needed).
    pub origin: Option<&'a Origin>,
    /// Who ends it: `run@HOST`, `observe@HOST`, `reconcile@HOST`, or a person who forced it.
    pub actor: &'a str,
    pub now: DateTime<Utc>,
}

/// How a Run of ours ended.
#[derive(Clone, Copy, Debug)]
pub enum HowEnded<'a> {
    /// By itself: its command exited, it was handed back or stopped, as the Run kept it (the
    /// caller first turns a stop that met a pending cancel request into `cancelled`,
    /// [`as_cancelled`]).
    ByItself(&'a RunEnding),
    /// Proven dead by its host (or its end forced by a person): why, what its host kept, and
    /// whether a person asked for a Continuation (`recover --continue`).
    Dead {
        why: &'a str,
        kept: Option<&'a Salvage>,
        continue_asked: bool,
    },
}

/// The end record of `run` on an issue whose records read as `own`, under `config`, with the
/// labels its issue gets in `labels_after` when the Claim owned them, and, for an issue going
/// to people, how to resume the agent session. A Run that ended by itself ends with its own
/// outcome, status and what it kept, labelled by the one rule; a dead one is continued (asked,
/// or by the policy within `max_continuations` and below the failure limit), handed to people
/// at the failure limit, or ended as a failed run. Both are settled at the failure limit or for
/// a cancel (`protocol::failures`).
pub fn run_end(config: &Config, own: &Ownership, run: RunEnd<'_>) -> EndRecord {
    let record = &run.claim.record;
    let (outcome, reason) = match run.how {
        HowEnded::ByItself(e) => (e.outcome, e.reason.as_str()),
        HowEnded::Dead { why, .. } => (Outcome::Recovered, why),
    };
    let mut end = EndRecord::ending(record, outcome, run.actor, reason, run.now);
    end.claim_comment_id = Some(run.claim.comment_id);
    end.pull_request = run.origin.and_then(Origin::pull_request);
    let list = match run.how {
        HowEnded::ByItself(ending) => {
            end.exit_code = ending.exit_code;
            end.signal = ending.signal;
            end.kept.clone_from(&ending.kept);
            if run.owns_labels {
                owned_labels(config, own, run, ending, &mut end)
            } else {
                Vec::new()
            }
        }
        HowEnded::Dead {
            kept,
            continue_asked,
            ..
        } => {
            end.kept = kept.cloned();
            dead_labels(config, own, run, kept, continue_asked, &mut end)
        }
    };
    let started = match run.how {
        HowEnded::ByItself(e) => e.started,
        HowEnded::Dead { .. } => end.continuation.is_none(),
    };
    if end.outcome != Outcome::Done && started && !config.labels.queues(&list) {
        hand_off(&mut end, record);
    }
    end.labels_after =
        (run.owns_labels || matches!(run.how, HowEnded::Dead { .. })).then_some(list);
    end
}

/// The labels the issue of a dead Run of ours gets, written into `end` with its outcome,
/// Continuation and listed failures: a Continuation when asked, or by the policy within
/// `max_continuations` and below the failure limit; to people at the failure limit; else as a
/// failed run, by what reached origin and what its host kept.
fn dead_labels(
    config: &Config,
    own: &Ownership,
    run: RunEnd<'_>,
    kept: Option<&Salvage>,
    continue_asked: bool,
    end: &mut EndRecord,
) -> Vec<String> {
    let (labels, policy) = (&config.labels, &config.recovery);
    let claim = &run.claim.record;
    let to_people = if continue_asked {
        None
    } else {
        failures::hand_to_people(labels, &own.ended, claim, end, policy.max_failures)
    };
    let done = continuations(&own.ended);
    let by_policy = policy.on_dead == OnDead::Continue && done < policy.max_continuations;
    if continue_asked || (to_people.is_none() && by_policy) {
        end.outcome = Outcome::Continued;
        end.continuation = Some(Continuation {
            number: done + 1,
            branch: claim.branch.clone(),
            agent_session: claim.agent_session.clone(),
            harness: claim.harness.clone(),
            worktree: claim.worktree.clone(),
        });
        return end_labels(labels, Ended::Continued);
    }
    if let Some(list) = to_people {
        return list;
    }
    let ended = Ended::Ours {
        record: claim,
        outcome: Outcome::Recovered,
        started: true,
        on_origin: run.origin.map(Origin::facts),
        kept,
    };
    end_labels(labels, ended)
}

/// The labels the issue of a Claim that owned them gets: by the one rule, then settled at the
/// failure limit or for a cancel (which lists the failures in `end`).
fn owned_labels(
    config: &Config,
    own: &Ownership,
    run: RunEnd<'_>,
    ending: &RunEnding,
    end: &mut EndRecord,
) -> Vec<String> {
    let record = &run.claim.record;
    let ended = Ended::Ours {
        record,
        outcome: ending.outcome,
        started: ending.started,
        on_origin: run.origin.map(Origin::facts),
        kept: ending.kept.as_ref(),
    };
    let list = end_labels(&config.labels, ended);
    let limit = config.recovery.max_failures;
    failures::settle(&config.labels, own, record, end, list, limit)
}

/// The ending a Run writes instead of `ending` when it was stopped (handed back, or its command
/// killed by a stop signal) while a trusted cancel request for its Claim is pending:
/// `cancelled` (or `recovered` for `recover --kill`), naming the request, so the Run and the host
/// carrying the request out write the same end, whichever writes it.
pub fn as_cancelled(own: &Ownership, claim_id: &str, ending: &RunEnding) -> Option<RunEnding> {
    let stopped = match ending.outcome {
        Outcome::HandedBack => true,
        Outcome::Failed => ending
            .signal
            .is_some_and(|s| rules::STOP_SIGNALS.contains(&s)),
        _ => false,
    };
    if !stopped {
        return None;
    }
    let request: &CancelView = own.pending_cancel(claim_id)?;
    Some(RunEnding {
        outcome: rules::cancel_outcome(request),
        reason: crate::text::cancel::cancelled_reason(request, &ending.reason),
        ..ending.clone()
    })
}
