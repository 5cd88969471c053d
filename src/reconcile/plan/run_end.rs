//! The one pure ending of a Run, of either kind: the end record, with the labels its issue gets.
//! For a Claim of ours (when it owned the labels): a Run that ended by itself (its command
//! exited, it was handed back or stopped by a signal, or its host stopped it on a cancel
//! request) and one proven dead. For a thirdshift Command its host proved dead: the end
//! thirdshift 0.19.0's own Failed run would give it, with the evidence and the agent session
//! its Session log names. Used alike by a Run's
//! own end and observe's carried-out cancel (`crate::ending::end_claim`, which reads, and writes
//! through `reconcile::apply`) and by a pass (`recover.rs`: a dead Run, or one whose end GitHub
//! refused; `adopted.rs`: the dead Commands of an issue); `steps::end_actions` turns an end into
//! its writes. The labels come from the one rule (`protocol::rules::end_labels`). No IO, no
//! clock.

use chrono::{DateTime, Utc};

use crate::protocol::config::{Config, OnDead};
use crate::protocol::failures;
use crate::protocol::record::{field, AdoptedEvidence, AdoptedRun, DeathReason, RunOf};
use crate::protocol::record::{CancelView, Cause, ClaimView, Continuation, EndRecord, Outcome};
use crate::protocol::record::{Ownership, RunEnding, Salvage};
use crate::protocol::resume::{hand_off, resume_command};
use crate::protocol::rules::{self, continuations, end_labels, Ended};
use crate::snapshot::Origin;
use crate::text::reasons::{adopted_handed_back_reason, adopted_recovered_reason};

/// One Run's end to decide: a Claim of ours, or a thirdshift Command.
#[derive(Clone, Copy, Debug)]
pub enum RunEnd<'a> {
    Ours(OurEnd<'a>),
    Command(CommandEnd<'a>),
}

/// A thirdshift Command its host proved dead (no writer left), to end on `issue`.
#[derive(Clone, Copy, Debug)]
pub struct CommandEnd<'a> {
    pub issue: u64,
    /// The Command's id (`ts-…`), as its host reports it.
    pub id: &'a str,
    /// The host that reported it dead, and that host's machine id.
    pub host: &'a str,
    pub machine_id: &'a str,
    /// Its facts, as thirdshift recorded them.
    pub facts: &'a AdoptedRun,
    pub reason: DeathReason,
    pub evidence: &'a str,
    /// What its host kept of its worktree.
    pub kept: Option<&'a Salvage>,
    /// Whether the issue was started, as thirdshift's Failed run asks it, over every Command of
    /// the issue (`adopted.rs`).
    pub started: bool,
    /// What origin holds of the issue's branch, when read.
    pub origin: Option<&'a Origin>,
    /// The issue carries a label that keeps agents off it (a pickup skip label or the hand-off
    /// label): a person's say, so it is never handed back.
    pub held: bool,
    /// Why it died, as far as its host can tell.
    pub cause: &'a Cause,
    pub actor: &'a str,
    pub now: DateTime<Utc>,
}

/// A Claim of ours to end.
#[derive(Clone, Copy, Debug)]
pub struct OurEnd<'a> {
    /// The Claim, as its comment holds it.
    pub claim: &'a ClaimView,
    /// Whether the Claim owned the issue's labels (it was the owner, not a superseded claim).
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
        /// Why it died, as far as its host or the person forcing it could tell.
        cause: &'a Cause,
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
    match run {
        RunEnd::Ours(run) => our_end(config, own, run),
        RunEnd::Command(c) => command_end(config, own, c),
    }
}

/// The end of a thirdshift Command its host proved dead, with the evidence (host, record, PID,
/// boot:ticks), what its host kept, the pull request on origin and the agent session to resume:
/// handed back for thirdshift's own Pickup to continue (`continued`, [`hand_back`]), or
/// `recovered` as thirdshift's own Failed run labels the issue (`rules::end_labels`,
/// `Ended::Thirdshift`).
fn command_end(config: &Config, own: &Ownership, c: CommandEnd<'_>) -> EndRecord {
    let (facts, host) = (c.facts, c.host);
    let handed_back = hand_back(config, own, &c);
    let (outcome, labels_after, why) = match &handed_back {
        Some(k) => {
            let labels = end_labels(&config.labels, Ended::Continued);
            let names = (
                config.labels.in_progress.as_str(),
                config.labels.ready.as_str(),
            );
            let record = &facts.record;
            let why = adopted_handed_back_reason(host, record, c.reason, c.evidence, &k.1, names);
            (Outcome::Continued, labels, why)
        }
        None => {
            let ended = Ended::Thirdshift { started: c.started };
            let labels = end_labels(&config.labels, ended);
            let why = adopted_recovered_reason(host, &facts.record, c.reason, c.evidence, &labels);
            (Outcome::Recovered, labels, why)
        }
    };
    EndRecord {
        claim_id: c.id.to_string(),
        issue: c.issue,
        outcome,
        actor: c.actor.to_string(),
        reason: field::fit_text(&why),
        exit_code: None,
        signal: None,
        cause: Some(c.cause.clone()),
        claim_comment_id: None,
        events_seen: None,
        labels_after: Some(labels_after),
        kept: c.kept.cloned(),
        pull_request: c.origin.and_then(Origin::pull_request),
        continuation: handed_back.map(|(number, _)| {
            Box::new(Continuation {
                number,
                branch: facts.branch.clone(),
                agent_session: facts.session.clone(),
                harness: facts.harness.clone(),
                worktree: c.kept.map(|k| k.worktree.clone()),
                started: None,
            })
        }),
        resume: command_resume(facts, c.kept),
        session: facts.session.clone(),
        run: RunOf::thirdshift_of(AdoptedEvidence {
            host: host.to_string(),
            machine_id: c.machine_id.to_string(),
            record: facts.record.clone(),
            pid: facts.pid,
            process_start: facts.process_start.clone(),
        }),
        failures: Vec::new(),
        ended_at: c.now,
    }
}

/// Whether a dead Command's issue is handed back for thirdshift's Continuation (its number, and
/// where its worktree was moved): under `thirdshift.on_dead: continue`, when its host kept the
/// work on its Issue branch on origin, released a dead Pickup's reservation and moved the
/// worktree aside (`moved_to`, set only then), the issue is not held by a person's label, and
/// fewer than `recovery.max_continuations` of its Commands were handed back before.
fn hand_back(config: &Config, own: &Ownership, c: &CommandEnd<'_>) -> Option<(u32, String)> {
    let kept = c.kept?;
    let moved_to = kept.moved_to.as_ref()?;
    let on_branch = c.facts.branch.as_deref() == Some(kept.branch.as_str());
    let before = own
        .adopted_ends
        .iter()
        .filter(|e| e.record.outcome == Outcome::Continued)
        .count();
    let before = u32::try_from(before).unwrap_or(u32::MAX);
    let allowed = config.thirdshift.on_dead == OnDead::Continue
        && kept.pushed
        && on_branch
        && !c.held
        && before < config.recovery.max_continuations;
    allowed.then(|| (before + 1, moved_to.clone()))
}

/// The command a person runs to resume a dead Command's agent session: the one thirdshift
/// recorded, else its Harness's, from where its work is now (`protocol::resume`).
fn command_resume(facts: &AdoptedRun, kept: Option<&Salvage>) -> Option<String> {
    let at = kept.and_then(Salvage::work_is_at);
    let built = || resume_command(facts.harness.as_deref(), facts.session.as_deref(), at);
    let recorded = facts.resume.clone().or_else(built)?;
    field::path("resume", &recorded).is_ok().then_some(recorded)
}

fn our_end(config: &Config, own: &Ownership, run: OurEnd<'_>) -> EndRecord {
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
            end.cause.clone_from(&ending.cause);
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
            cause,
            ..
        } => {
            end.kept = kept.cloned();
            end.cause = Some(cause.clone());
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
    run: OurEnd<'_>,
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
        end.continuation = Some(Box::new(Continuation {
            number: done + 1,
            branch: claim.branch.clone(),
            agent_session: claim.agent_session.clone(),
            harness: claim.harness.clone(),
            worktree: claim.worktree.clone(),
            started: None,
        }));
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
    run: OurEnd<'_>,
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
        cause: Some(Cause::Cancel {
            by: request.record.requested_by.clone(),
        }),
        ..ending.clone()
    })
}
