//! The one pure ending of a Claim of ours whose Run ended by itself (its command exited, it was
//! handed back or stopped by a signal, or its host stopped it on a cancel request): the end
//! record, with the labels its issue gets when the Claim owned them. Used alike by the Run's own
//! end and observe's carried-out cancel (`crate::ending::end_claim`, which reads and writes) and
//! by a pass ending it for a Run whose end GitHub refused (`Planner::end_finished`). A Run proven
//! dead is planned by `recover.rs`, and a thirdshift Command by `adopted.rs`, on the same label
//! rule (`protocol::rules::end_labels`) and the same settlement (`protocol::failures::settle`).
//! No IO, no clock.

use chrono::{DateTime, Utc};

use crate::protocol::config::Config;
use crate::protocol::failures;
use crate::protocol::record::{CancelView, ClaimView, EndRecord, Outcome, Ownership, RunEnding};
use crate::protocol::resume::hand_off;
use crate::protocol::rules::{self, end_labels, Ended};
use crate::snapshot::Origin;

/// One Run's end to decide.
#[derive(Clone, Copy, Debug)]
pub struct RunEnd<'a> {
    /// The Claim, as its comment holds it.
    pub claim: &'a ClaimView,
    /// Whether the Claim owned the labels (it was the owner, not a superseded claim).
    pub owns_labels: bool,
    /// How the Run ended, as it kept it.
    pub ending: &'a RunEnding,
    /// What origin holds of its Issue branch, when read (`None`: not read, or not needed).
    pub origin: Option<&'a Origin>,
    /// Who ends it: `run@HOST`, `observe@HOST`, `reconcile@HOST`.
    pub actor: &'a str,
    pub now: DateTime<Utc>,
}

/// The end record of `run` on an issue whose records read as `own`, under `config`: with the
/// Run's own outcome (the caller first turns a stop that met a pending cancel request into
/// `cancelled`, [`as_cancelled`]), status and what it kept; when the Claim owned the labels, the labels by
/// the one rule, settled at the failure limit or for a cancel, in `labels_after`; and, for an
/// issue going to people, how to resume the agent session.
pub fn run_end(config: &Config, own: &Ownership, run: RunEnd<'_>) -> EndRecord {
    let (record, ending) = (&run.claim.record, run.ending);
    let mut end = EndRecord::ending(record, ending.outcome, run.actor, &ending.reason, run.now);
    end.exit_code = ending.exit_code;
    end.signal = ending.signal;
    end.kept.clone_from(&ending.kept);
    end.claim_comment_id = Some(run.claim.comment_id);
    end.pull_request = run.origin.and_then(Origin::pull_request);
    let list = if run.owns_labels {
        owned_labels(config, own, run, ending, &mut end)
    } else {
        Vec::new()
    };
    if ending.outcome != Outcome::Done && ending.started && !config.labels.queues(&list) {
        hand_off(&mut end, record);
    }
    end.labels_after = run.owns_labels.then_some(list);
    end
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
