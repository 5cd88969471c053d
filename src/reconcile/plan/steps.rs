//! One issue's planned actions, kept apart by kind so they come out in the order `apply` must
//! write them. It decides nothing: the rules in `plan.rs`, `recover.rs` and `answers.rs` do.

use crate::protocol::config::Labels;
use crate::protocol::record::EndRecord;
use crate::snapshot::IssueSnapshot;

use super::Action;

/// The labels an issue carries, as the writer read them: a pass read them with the issue; a
/// Run's own end reads only the comments, so it adds every label its end lists and takes
/// `in-progress` off (each safe to repeat).
#[derive(Clone, Copy)]
pub enum LabelsNow<'a> {
    Read(&'a IssueSnapshot),
    Unread { issue: u64 },
}

impl LabelsNow<'_> {
    fn issue(&self) -> u64 {
        match self {
            LabelsNow::Read(i) => i.number,
            LabelsNow::Unread { issue } => *issue,
        }
    }

    /// Whether the issue carries `label`; `None` when not read.
    fn has(&self, label: &str) -> Option<bool> {
        match self {
            LabelsNow::Read(i) => Some(i.has_label(label)),
            LabelsNow::Unread { .. } => None,
        }
    }
}

/// The writes of one ending, in apply order: its end record, then the labels it lists that the
/// issue lacks, then `in-progress` off unless listed (none when the end states no labels: a
/// Claim that never owned them).
pub fn end_actions(labels: &Labels, end: EndRecord, now: LabelsNow<'_>) -> Vec<Action> {
    let mut s = Steps::default();
    s.ending(labels, end, now);
    s.into_actions().collect()
}

/// One issue's actions, kept apart by kind so they come out in apply order: commands
/// acknowledged, end records, cancel requests, labels added, labels removed, clean-up, then the
/// commands' replies (each followed by its final reaction), so a reply is posted only once what
/// it reports is done.
#[derive(Default)]
pub(super) struct Steps {
    pub(super) acks: Vec<Action>,
    pub(super) ends: Vec<Action>,
    pub(super) requests: Vec<Action>,
    pub(super) adds: Vec<Action>,
    pub(super) removes: Vec<Action>,
    pub(super) deletes: Vec<Action>,
    pub(super) answers: Vec<Action>,
    /// The issue is handed back to thirdshift: its labels come off before any goes on, so its
    /// timeline shows the hand-back thirdshift's Pickup looks for (`in-progress` removed, then
    /// `ready-for-agent` added; thirdshift 0.19.0 `src/github.rs` `ClaimHistory`).
    pub(super) hand_back: bool,
}

impl Steps {
    pub(super) fn end(&mut self, end: EndRecord) {
        self.ends.push(Action::PostEnd {
            issue: end.issue,
            end: Box::new(end),
        });
    }

    /// An ending: its end record, then the labels it lists (`end_actions`).
    pub(super) fn ending(&mut self, labels: &Labels, end: EndRecord, now: LabelsNow<'_>) {
        self.hand_back |= end.is_hand_back();
        let list = end.labels_after.clone();
        self.end(end);
        let Some(list) = list else { return };
        for label in &list {
            self.add(now, label);
        }
        if !labels.keeps_in_progress(&list) {
            self.remove(now, &labels.in_progress);
        }
    }

    /// Adds `label` unless the issue carries it or this pass already adds it.
    pub(super) fn add_missing(&mut self, issue: &IssueSnapshot, label: &str) {
        self.add(LabelsNow::Read(issue), label);
    }

    /// Removes `label` if the issue carries it.
    pub(super) fn remove_present(&mut self, issue: &IssueSnapshot, label: &str) {
        self.remove(LabelsNow::Read(issue), label);
    }

    fn add(&mut self, now: LabelsNow<'_>, label: &str) {
        if now.has(label) != Some(true) && !planned(&self.adds, label) {
            self.adds.push(Action::AddLabel {
                issue: now.issue(),
                label: label.to_string(),
            });
        }
    }

    fn remove(&mut self, now: LabelsNow<'_>, label: &str) {
        if now.has(label) != Some(false) && !planned(&self.removes, label) {
            self.removes.push(Action::RemoveLabel {
                issue: now.issue(),
                label: label.to_string(),
            });
        }
    }

    pub(super) fn delete(&mut self, issue: u64, comment_id: u64, reason: String) {
        self.deletes.push(Action::DeleteComment {
            issue,
            comment_id,
            reason,
        });
    }

    pub(super) fn into_actions(self) -> impl Iterator<Item = Action> {
        let Steps {
            acks,
            ends,
            requests,
            adds,
            removes,
            deletes,
            answers,
            hand_back,
        } = self;
        let (first, then) = if hand_back {
            (removes, adds)
        } else {
            (adds, removes)
        };
        acks.into_iter()
            .chain(ends)
            .chain(requests)
            .chain(first)
            .chain(then)
            .chain(deletes)
            .chain(answers)
    }
}

/// Whether `label` is among the label actions already planned.
fn planned(actions: &[Action], label: &str) -> bool {
    actions.iter().any(|a| match a {
        Action::AddLabel { label: l, .. } | Action::RemoveLabel { label: l, .. } => {
            l.eq_ignore_ascii_case(label)
        }
        _ => false,
    })
}
