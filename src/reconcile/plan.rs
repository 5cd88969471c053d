//! The decisions of a reconcile pass, as a pure function of what one read of GitHub saw. No IO,
//! no clock (the time to stamp on records is an input). `/thirdshift` commands waiting in the
//! snapshot are one more input to the same function (`plan/answers.rs`), so a command and a
//! scheduled pass can never decide differently.
//!
//! A Claim is ended only on evidence: its own host (same name *and* machine id) reporting its Run
//! dead, a later claim superseded by an earlier active one, or the issue being closed. A silent
//! host, an old claim or a slow Run ends nothing here: there is no clock to ask. Labels are only
//! added from the end-label policy (`crate::protocol::rules`) or an end record's `labels_after`, and the
//! only label ever removed is `in-progress`. Records by untrusted authors never reach this code
//! (`Ownership` leaves them out), and of the problems it reports only duplicate end records are
//! acted on. Applying the actions, and checking again before each write, belongs to `apply`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::protocol::config::Config;
use crate::protocol::record::{
    CancelRecord, ClaimView, EndRecord, Outcome, ProblemKind, ReplyRecord, Verdict,
};
use crate::snapshot::{IssueSnapshot, Snapshot};

use crate::text::evidence;
use crate::text::reasons::{
    duplicate_end_reason, duplicate_report_reason, finished_note, peoples_labels_note,
    superseded_reason, swept_reason, unowned_note,
};

/// One write to GitHub. Within an issue, actions come in the order they must be applied: end
/// records, then labels added, then labels removed, then clean-up.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Post an end record (skipped by apply if one for the claim is already there).
    PostEnd {
        issue: u64,
        end: Box<EndRecord>,
    },
    AddLabel {
        issue: u64,
        label: String,
    },
    RemoveLabel {
        issue: u64,
        label: String,
    },
    /// Delete a later duplicate of a record written by a trusted identity.
    DeleteComment {
        issue: u64,
        comment_id: u64,
        reason: String,
    },
    /// React to a command comment: `eyes` on receipt, `+1` or `-1` with the answer.
    React {
        issue: u64,
        comment_id: u64,
        content: &'static str,
    },
    /// Post a cancel record (skipped by apply if one with its request id is there).
    PostCancel {
        issue: u64,
        cancel: Box<CancelRecord>,
    },
    /// Post the reply to a command comment (skipped by apply if a trusted reply names it).
    PostReply {
        issue: u64,
        reply: Box<ReplyRecord>,
        body: String,
    },
}

impl Action {
    /// The issue the action writes to.
    pub fn issue(&self) -> u64 {
        match self {
            Action::PostEnd { issue, .. }
            | Action::AddLabel { issue, .. }
            | Action::RemoveLabel { issue, .. }
            | Action::DeleteComment { issue, .. }
            | Action::React { issue, .. }
            | Action::PostCancel { issue, .. }
            | Action::PostReply { issue, .. } => *issue,
        }
    }
}

/// The health of a Claim (or an issue without one) as the pass saw it, for people and the view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// The owning host says the Run lives.
    Alive,
    /// The Run's first process died but these processes of it still run.
    WritersAlive { pids: Vec<u32> },
    /// The Claim was taken after its host's last report, within one of its refresh intervals:
    /// the host has not had its turn to report on it yet. Nothing is awaited of a person.
    Starting,
    /// The owning host has reported since the Claim was taken without naming it, or has not
    /// reported for a refresh interval since.
    AwaitingHost,
    /// A host report with the Claim's host name comes from another machine: not evidence.
    HostMismatch,
    /// A later claim while an earlier one owns the issue: ended by this pass.
    Superseded,
    /// A thirdshift Command working on an issue another Run, recorded first, keeps
    /// (`protocol::collision`): shown; its own host stops it under `on_collision: stop`.
    Colliding,
    /// `in-progress` without any claim record: left for people.
    Unowned,
    /// Proven dead by its host: ended by this pass (to the queue or to people).
    Recovered,
    /// Proven dead by its host and re-queued as a Continuation by this pass.
    Continued,
    /// Active claim on a closed issue: ended by this pass.
    Swept,
    /// An end record whose labels were not all applied: finished by this pass.
    LabelsFinished,
    /// A person changed the labels an end record states after it was posted: theirs, left as
    /// they set them.
    PeoplesLabels,
    /// The Run ended by itself but could not write its end record: ended by this pass with the
    /// outcome its host reports it kept.
    Finished,
}

/// What the pass noticed about one issue or Claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub issue: u64,
    pub claim_id: Option<String>,
    pub host: Option<String>,
    pub health: Health,
    /// One sentence of evidence for people.
    pub note: String,
}

/// The decisions of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub actions: Vec<Action>,
    pub findings: Vec<Finding>,
}

/// What `plan` needs besides the snapshot and config.
#[derive(Clone, Debug)]
pub struct PlanInput {
    /// Who ends Claims in this pass, for end records (e.g. `reconcile@HOST`).
    pub actor: String,
    /// The time stamped on end records written by this pass.
    pub now: DateTime<Utc>,
}

/// Decides what one pass does: per issue in number order, the end records to post, the labels
/// to add and remove and the duplicate records to delete, in that order; and what it saw.
pub fn plan(snapshot: &Snapshot, config: &Config, input: &PlanInput) -> Plan {
    let cx = Planner {
        snapshot,
        config,
        input,
    };
    let mut steps: BTreeMap<u64, Steps> = BTreeMap::new();
    let mut findings = Vec::new();
    let mut issues: Vec<&IssueSnapshot> = snapshot.issues.iter().collect();
    issues.sort_by_key(|i| i.number);
    for issue in issues {
        let s = steps.entry(issue.number).or_default();
        findings.extend(cx.plan_issue(issue, s));
    }
    if let Some(registry) = snapshot.registry_issue {
        let s = steps.entry(registry).or_default();
        let mut ids = snapshot.duplicate_reports.clone();
        ids.sort_unstable();
        ids.dedup();
        for comment_id in ids {
            s.delete(registry, comment_id, duplicate_report_reason());
        }
    }
    Plan {
        actions: steps.into_values().flat_map(Steps::into_actions).collect(),
        findings,
    }
}

/// What every decision reads.
struct Planner<'a> {
    snapshot: &'a Snapshot,
    config: &'a Config,
    input: &'a PlanInput,
}

impl Planner<'_> {
    /// Everything decided about one issue; its actions go to `s`.
    fn plan_issue(&self, issue: &IssueSnapshot, s: &mut Steps) -> Vec<Finding> {
        let own = &issue.ownership;
        let mut findings = Vec::new();
        let (owner_ended, answered) = self.commands(issue, s, &mut findings);
        let judged = findings.len();
        match &own.owner {
            Some(_) if owner_ended => {}
            Some(owner) if issue.open => findings.push(self.judge_owner(issue, owner, s)),
            Some(owner) => findings.push(self.sweep(issue, owner, s)),
            None => match self.adopted(issue, s) {
                Some(adopted) => findings.extend(adopted),
                None => findings.extend(self.finish_labels(issue, s)),
            },
        }
        // A reply says what the pass itself did on the issue: a mistyped `/thirdshift recvoer`
        // on a dead Run's issue is told that the Claim was ended all the same
        let ended = |f: &&Finding| {
            matches!(
                f.health,
                Health::Recovered | Health::Continued | Health::Swept
            )
        };
        self.reply(answered, findings[judged..].iter().find(ended), s);
        if let Some(owner) = &own.owner {
            for claim in &own.superseded {
                findings.push(self.supersede(issue, claim, owner, s));
            }
        }
        for p in &own.problems {
            if let ProblemKind::DuplicateEnd {
                claim_id,
                first_comment_id,
            } = &p.kind
            {
                let reason = duplicate_end_reason(claim_id, *first_comment_id);
                s.delete(issue.number, p.comment_id, reason);
            }
        }
        findings
    }

    /// Rule 1: the owner of an open issue is ended only on a dead verdict from its own host.
    fn judge_owner(&self, issue: &IssueSnapshot, owner: &ClaimView, s: &mut Steps) -> Finding {
        let claim = &owner.record;
        let (host, id) = (&claim.host, &claim.claim_id);
        let (health, note) = match self.evidence(owner) {
            Evidence::Missing if self.starting(claim) => {
                (Health::Starting, evidence::starting(host, id))
            }
            Evidence::Missing => (Health::AwaitingHost, evidence::not_reported(host, id)),
            Evidence::OtherMachine { machine_id } => (
                Health::HostMismatch,
                evidence::other_machine(host, machine_id, id, &claim.machine_id),
            ),
            Evidence::Verdict(cv) => match &cv.verdict {
                Verdict::Alive => (Health::Alive, evidence::reported_alive(host, id)),
                Verdict::WritersAlive { pids, evidence } => (
                    Health::WritersAlive { pids: pids.clone() },
                    evidence::reported_writers_alive(host, id, evidence),
                ),
                Verdict::Dead { .. } if cv.finished.is_some() => {
                    let finished = cv.finished.as_deref().expect("checked");
                    return self.end_finished(issue, owner, finished, s);
                }
                Verdict::Dead { reason, evidence } => {
                    return self.recover(issue, owner, *reason, evidence, cv.kept.as_ref(), s);
                }
            },
        };
        claim_finding(owner, health, note)
    }

    /// Rule 2: a later active claim while an earlier one owns the issue is ended, labels untouched.
    fn supersede(
        &self,
        issue: &IssueSnapshot,
        claim: &ClaimView,
        owner: &ClaimView,
        s: &mut Steps,
    ) -> Finding {
        let why = superseded_reason(issue.number, claim, owner);
        s.end(self.end_record(claim, Outcome::Superseded, why.clone()));
        claim_finding(claim, Health::Superseded, why)
    }

    /// Rule 3: the owner of a closed issue is swept; `in-progress` comes off.
    fn sweep(&self, issue: &IssueSnapshot, owner: &ClaimView, s: &mut Steps) -> Finding {
        let why = swept_reason(issue.number, &owner.record.claim_id);
        let mut end = self.end_record(owner, Outcome::Swept, why.clone());
        end.labels_after = Some(vec![]);
        s.ending(&self.config.labels, end, LabelsNow::Read(issue));
        claim_finding(owner, Health::Swept, why)
    }

    /// Rule 4: an issue with `in-progress` and no active claim. The latest end record that
    /// states its labels (`labels_after`) is finished; without one the issue is left to people.
    fn finish_labels(&self, issue: &IssueSnapshot, s: &mut Steps) -> Option<Finding> {
        let in_progress = &self.config.labels.in_progress;
        let latest = issue.ownership.latest_intent();
        let handing_back = latest.is_some_and(|(end, _)| end.record.is_hand_back());
        if !issue.has_label(in_progress) && !handing_back {
            return None;
        }
        let Some((end, list)) = latest else {
            if !issue.open {
                return None;
            }
            return Some(Finding {
                issue: issue.number,
                claim_id: None,
                host: None,
                health: Health::Unowned,
                note: unowned_note(issue.number, in_progress),
            });
        };
        // Claimed again since the end record: every label is the new Claim's.
        if issue.claimed_again() {
            let note = peoples_labels_note(&end.record, std::slice::from_ref(in_progress));
            return Some(Finding {
                issue: issue.number,
                claim_id: Some(end.record.claim_id.clone()),
                host: None,
                health: Health::PeoplesLabels,
                note,
            });
        }
        if !issue.has_label(in_progress) && !issue.label_work_left(in_progress) {
            return None;
        }
        // A label a person removed or added since the end record is theirs: never undone.
        let mut theirs = Vec::new();
        for label in list {
            if issue.changed_by_people(label, false) {
                theirs.push(label.clone());
            } else {
                s.add_missing(issue, label);
            }
        }
        // A thirdshift Command's failed run keeps its Claim: `in-progress` stays when listed.
        if !list.iter().any(|l| l.eq_ignore_ascii_case(in_progress)) {
            if issue.changed_by_people(in_progress, true) {
                theirs.push(in_progress.clone());
            } else {
                s.remove_present(issue, in_progress);
            }
        }
        let host = issue
            .ownership
            .ended
            .iter()
            .find(|(_, e)| e.comment_id == end.comment_id)
            .map(|(c, _)| c.record.host.clone())
            .or_else(|| end.record.run.thirdshift().map(|a| a.host.clone()));
        let (health, note) = if theirs.is_empty() {
            let note = finished_note(&end.record, list, in_progress);
            (Health::LabelsFinished, note)
        } else {
            (
                Health::PeoplesLabels,
                peoples_labels_note(&end.record, &theirs),
            )
        };
        Some(Finding {
            issue: issue.number,
            claim_id: Some(end.record.claim_id.clone()),
            host,
            health,
            note,
        })
    }

    /// An end record for `claim` by this pass; labels stated by the caller.
    fn end_record(&self, claim: &ClaimView, outcome: Outcome, reason: String) -> EndRecord {
        EndRecord {
            claim_comment_id: Some(claim.comment_id),
            events_seen: None,
            ..EndRecord::ending(
                &claim.record,
                outcome,
                &self.input.actor,
                &reason,
                self.input.now,
            )
        }
    }
}

fn claim_finding(claim: &ClaimView, health: Health, note: String) -> Finding {
    Finding {
        issue: claim.record.issue,
        claim_id: Some(claim.record.claim_id.clone()),
        host: Some(claim.record.host.clone()),
        health,
        note,
    }
}

mod adopted;
mod answers;
mod owner_evidence;
mod recover;
mod run_end;
mod steps;

use owner_evidence::Evidence;
pub use run_end::{as_cancelled, run_end, CommandEnd, HowEnded, OurEnd, RunEnd};
use steps::Steps;
pub use steps::{end_actions, LabelsNow};
#[cfg(test)]
mod tests;
