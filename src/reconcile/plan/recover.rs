//! Ending a Claim its own host proved dead, as a failed Run ends: with what the host kept of the
//! work and what reached origin, either re-queued as a Continuation (policy `continue`, within
//! `max_continuations` counted from end records), put back in the queue (nothing reached origin,
//! nothing was kept, and the Claim had removed the ready label), or handed to people (also, with
//! the failures listed, once the issue's last `max_failures` Runs failed: `protocol::failures`) with the
//! branch, pull request, worktree and the command to resume the agent session. Pure, like the
//! rest of `plan`.

use crate::protocol::config::OnDead;
use crate::protocol::failures;
use crate::protocol::record::{ClaimRecord, ClaimView, Continuation, DeathReason, EndRecord};
use crate::protocol::record::{Outcome, RunEnding, Salvage};
use crate::protocol::resume::hand_off;
use crate::protocol::rules::{continuations, end_labels, Ended};
use crate::snapshot::IssueSnapshot;
use crate::text::reasons::{finished_for_run, recovered_reason, with_labels_clause};

use super::run_end::{run_end, RunEnd};
use super::{claim_finding, Finding, Health, Planner, Steps};

impl Planner<'_> {
    /// Ends the dead owner of `issue`; `kept` is what its host's salvage reported.
    pub(super) fn recover(
        &self,
        issue: &IssueSnapshot,
        owner: &ClaimView,
        reason: DeathReason,
        evidence: &str,
        kept: Option<&Salvage>,
        s: &mut Steps,
    ) -> Finding {
        let claim = &owner.record;
        let why = recovered_reason(&claim.host, &claim.claim_id, reason, evidence);
        self.end_dead(issue, owner, why, kept, &Asked::default(), s)
    }

    /// Ends `owner` the way a dead Run's Claim ends, for `why`; `asked` is what a command added
    /// (a Continuation whatever the policy, a person's name as the actor).
    pub(super) fn end_dead(
        &self,
        issue: &IssueSnapshot,
        owner: &ClaimView,
        why: String,
        kept: Option<&Salvage>,
        asked: &Asked,
        s: &mut Steps,
    ) -> Finding {
        let labels = &self.config.labels;
        let mut end = self.end_record(owner, Outcome::Recovered, why.clone());
        if let Some(actor) = &asked.actor {
            end.actor.clone_from(actor);
        }
        end.kept = kept.cloned();
        end.pull_request = issue.origin.as_ref().and_then(|o| o.pull_request());
        let (list, health) = self.dead_ending(issue, &owner.record, kept, asked, &mut end);
        end.labels_after = Some(list.clone());
        if end.continuation.is_none() && !labels.queues(&list) {
            hand_off(&mut end, &owner.record);
        }
        s.end(end);
        self.apply_labels(issue, &list, s);
        let note = with_labels_clause(&why, &list, &labels.in_progress);
        claim_finding(owner, health, note)
    }

    /// How the dead Run of `claim` ends, written into `end` (its outcome, Continuation and listed
    /// failures), and the labels its issue gets: a Continuation when asked, or by the policy
    /// within `max_continuations` and below the failure limit; to people at the failure limit;
    /// else as a failed run, by what reached origin and what its host kept.
    fn dead_ending(
        &self,
        issue: &IssueSnapshot,
        claim: &ClaimRecord,
        kept: Option<&Salvage>,
        asked: &Asked,
        end: &mut EndRecord,
    ) -> (Vec<String>, Health) {
        let (labels, policy) = (&self.config.labels, &self.config.recovery);
        let ended = &issue.ownership.ended;
        let to_people = if asked.continue_ {
            None
        } else {
            failures::hand_to_people(labels, ended, claim, end, policy.max_failures)
        };
        let done = continuations(ended);
        let by_policy = policy.on_dead == OnDead::Continue && done < policy.max_continuations;
        if asked.continue_ || (to_people.is_none() && by_policy) {
            end.outcome = Outcome::Continued;
            end.continuation = Some(Continuation {
                number: done + 1,
                branch: claim.branch.clone(),
                agent_session: claim.agent_session.clone(),
                harness: claim.harness.clone(),
                worktree: claim.worktree.clone(),
            });
            return (end_labels(labels, Ended::Continued), Health::Continued);
        }
        if let Some(list) = to_people {
            return (list, Health::Recovered);
        }
        let ended = Ended::Ours {
            record: claim,
            outcome: Outcome::Recovered,
            started: true,
            on_origin: issue.origin.as_ref().map(|o| o.facts()),
            kept,
        };
        (end_labels(labels, ended), Health::Recovered)
    }
}

impl Planner<'_> {
    /// Ends `owner`, whose Run ended by itself as `finished` says but could not write its end
    /// record (its host reports the outcome it kept): the one Run ending (`run_end.rs`), as the
    /// Run itself would have ended it, never as a recovery.
    pub(super) fn end_finished(
        &self,
        issue: &IssueSnapshot,
        owner: &ClaimView,
        finished: &RunEnding,
        s: &mut Steps,
    ) -> Finding {
        let claim = &owner.record;
        let why = finished_for_run(&claim.host, &claim.claim_id, &finished.reason);
        let ending = RunEnding {
            reason: why.clone(),
            ..finished.clone()
        };
        let run = RunEnd {
            claim: owner,
            owns_labels: true,
            ending: &ending,
            origin: issue.origin.as_ref(),
            actor: &self.input.actor,
            now: self.input.now,
        };
        let end = run_end(self.config, &issue.ownership, run);
        let list = end.labels_after.clone().unwrap_or_default();
        s.end(end);
        self.apply_labels(issue, &list, s);
        claim_finding(owner, Health::Finished, why)
    }

    /// Puts on the labels of `list` the issue lacks; takes `in-progress` off unless listed.
    fn apply_labels(&self, issue: &IssueSnapshot, list: &[String], s: &mut Steps) {
        for label in list {
            s.add_missing(issue, label);
        }
        let labels = &self.config.labels;
        if !labels.keeps_in_progress(list) {
            s.remove_present(issue, &labels.in_progress);
        }
    }
}

/// What a `/thirdshift recover` adds to ending a dead owner.
#[derive(Clone, Debug, Default)]
pub(super) struct Asked {
    /// `--continue`: re-queue as a Continuation whatever the policy and count say.
    pub continue_: bool,
    /// `--force`: the person who forced it, named as the end record's actor.
    pub actor: Option<String>,
}
