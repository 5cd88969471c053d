//! Ending a Claim its own host proved dead, as a failed Run ends: with what the host kept of the
//! work and what reached origin, either re-queued as a Continuation (policy `continue`, within
//! `max_continuations` counted from end records), put back in the queue (nothing reached origin,
//! nothing was kept, and the Claim had removed the ready label), or handed to people with the
//! branch, pull request, worktree and the command to resume the agent session. Pure, like the
//! rest of `plan`.

use crate::config::OnDead;
use crate::policy::{continuations, label_after, label_unstarted, resume_command, work_left};
use crate::record::{ClaimView, Continuation, DeathReason, Outcome, RunEnding, Salvage};
use crate::snapshot::IssueSnapshot;
use crate::text::reasons::{finished_for_run, recovered_reason};

use super::{claim_finding, Cx, Finding, Health, Steps};

impl Cx<'_> {
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
        let claim = &owner.record;
        let done = continuations(&issue.ownership.ended);
        let policy = &self.config.recovery;
        let continue_it = asked.continue_
            || (policy.on_dead == OnDead::Continue && done < policy.max_continuations);
        let (outcome, target, health) = if continue_it {
            (Outcome::Continued, &labels.ready, Health::Continued)
        } else if !started(issue, owner, kept) && claim.removed_ready {
            (Outcome::Recovered, &labels.ready, Health::Recovered)
        } else {
            (Outcome::Recovered, &labels.hand_off, Health::Recovered)
        };
        let mut end = self.end_record(owner, outcome, why.clone());
        if let Some(actor) = &asked.actor {
            end.actor.clone_from(actor);
        }
        end.labels_after = Some(vec![target.clone()]);
        end.kept = kept.cloned();
        end.pull_request = issue.origin.as_ref().and_then(|o| o.pull_request());
        if continue_it {
            end.continuation = Some(Continuation {
                number: done + 1,
                branch: claim.branch.clone(),
                agent_session: claim.agent_session.clone(),
                harness: claim.harness.clone(),
            });
        } else if target == &labels.hand_off {
            end.resume = resume_command(claim.harness.as_deref(), claim.agent_session.as_deref());
        }
        s.end(end);
        s.add_missing(issue, target);
        s.remove_present(issue, &labels.in_progress);
        claim_finding(owner, health, format!("{why}; the issue goes to {target}"))
    }
}

impl Cx<'_> {
    /// Ends `owner`, whose Run ended by itself as `finished` says but could not write its end
    /// record (its host reports the outcome it kept): with that outcome, its status and what it
    /// kept, labelled as the Run itself would have (`crate::release`), never as a recovery.
    pub(super) fn end_finished(
        &self,
        issue: &IssueSnapshot,
        owner: &ClaimView,
        finished: &RunEnding,
        s: &mut Steps,
    ) -> Finding {
        let labels = &self.config.labels;
        let claim = &owner.record;
        let why = finished_for_run(&claim.host, &claim.claim_id, &finished.reason);
        let mut end = self.end_record(owner, finished.outcome, why.clone());
        end.exit_code = finished.exit_code;
        end.signal = finished.signal;
        end.kept.clone_from(&finished.kept);
        let add = if finished.started {
            label_after(labels, claim, finished.outcome, finished.kept.as_ref())
        } else {
            label_unstarted(labels, claim)
        };
        end.labels_after = Some(add.map(str::to_string).into_iter().collect());
        s.end(end);
        if let Some(label) = add {
            s.add_missing(issue, label);
        }
        s.remove_present(issue, &labels.in_progress);
        claim_finding(owner, Health::Finished, why)
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

/// Whether the dead Run left work anyone should look at: anything on origin (its branch, a pull
/// request in any state), or anything its host kept; without either report, whether it reported
/// a stage of its own.
fn started(issue: &IssueSnapshot, owner: &ClaimView, kept: Option<&Salvage>) -> bool {
    let on_origin = issue.origin.as_ref().map(|o| o.has_work());
    work_left(&owner.record, on_origin, kept)
}
