//! A pass ending a Claim of ours: one its own host proved dead (or a person forced), and one
//! whose Run ended by itself but could not write its end. The end record and its labels are the
//! one pure Run ending (`run_end.rs`: a Continuation within the policy and the failure limit,
//! back to the queue when nothing of the Run is anywhere, else to people with the branch, pull
//! request, worktree and the command to resume the agent session); here they become the pass's
//! steps and finding. Pure, like the rest of `plan`.

use crate::protocol::record::Salvage;
use crate::protocol::record::{Cause, ClaimView, DeathReason, EndRecord, Outcome, RunEnding};
use crate::snapshot::IssueSnapshot;
use crate::text::reasons::{finished_for_run, recovered_reason, with_labels_clause};

use super::run_end::{run_end, HowEnded, OurEnd, RunEnd};
use super::steps::LabelsNow;
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
        let asked = Asked {
            cause: Some(self.cause_of_death(owner, reason)),
            ..Asked::default()
        };
        self.end_dead(issue, owner, why, kept, &asked, s)
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
        let cause = match (&asked.actor, &asked.cause) {
            (Some(by), _) => Cause::Forced { by: by.clone() },
            (None, Some(cause)) => cause.clone(),
            (None, None) => Cause::Unknown,
        };
        let how = HowEnded::Dead {
            why: &why,
            kept,
            continue_asked: asked.continue_,
            cause: &cause,
        };
        let actor = asked.actor.as_deref().unwrap_or(&self.input.actor);
        let end = self.end_of(issue, owner, how, actor);
        let health = match end.outcome {
            Outcome::Continued => Health::Continued,
            _ => Health::Recovered,
        };
        let list = end.labels_after.clone().unwrap_or_default();
        s.ending(&self.config.labels, end, LabelsNow::Read(issue));
        let note = with_labels_clause(&why, &list, &self.config.labels.in_progress);
        claim_finding(owner, health, note)
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
        let end = self.end_of(issue, owner, HowEnded::ByItself(&ending), &self.input.actor);
        s.ending(&self.config.labels, end, LabelsNow::Read(issue));
        claim_finding(owner, Health::Finished, why)
    }

    /// The end record of the owner of `issue`, ended `how` by `actor` now (`run_end.rs`).
    fn end_of(
        &self,
        issue: &IssueSnapshot,
        owner: &ClaimView,
        how: HowEnded<'_>,
        actor: &str,
    ) -> EndRecord {
        let run = RunEnd::Ours(OurEnd {
            claim: owner,
            owns_labels: true,
            how,
            origin: issue.origin.as_ref(),
            actor,
            now: self.input.now,
        });
        run_end(self.config, &issue.ownership, run)
    }
}

/// What a `/thirdshift recover` adds to ending a dead owner.
#[derive(Clone, Debug, Default)]
pub(super) struct Asked {
    /// `--continue`: re-queue as a Continuation whatever the policy and count say.
    pub continue_: bool,
    /// `--force`: the person who forced it, named as the end record's actor.
    pub actor: Option<String>,
    /// Why it died, when its host proved it dead (a force names the person instead).
    pub cause: Option<Cause>,
}

impl Planner<'_> {
    /// Why the Run of `owner`, proven dead by its host for `reason`, died, as far as the host
    /// can tell: a reboot (with the new boot's time, from the host's report), else unknown.
    pub(super) fn cause_of_death(&self, owner: &ClaimView, reason: DeathReason) -> Cause {
        let claim = &owner.record;
        let report = self.snapshot.report_of(&claim.host, &claim.machine_id);
        Cause::of_death(reason, report.and_then(|r| r.report.booted_at))
    }
}
