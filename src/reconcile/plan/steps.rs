//! One issue's planned actions, kept apart by kind so they come out in the order `apply` must
//! write them. It decides nothing: the rules in `plan.rs`, `recover.rs` and `answers.rs` do.

use crate::protocol::record::EndRecord;
use crate::snapshot::IssueSnapshot;

use super::Action;

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
}

impl Steps {
    pub(super) fn end(&mut self, end: EndRecord) {
        self.ends.push(Action::PostEnd {
            issue: end.issue,
            end: Box::new(end),
        });
    }

    /// Adds `label` unless the issue carries it or this pass already adds it.
    pub(super) fn add_missing(&mut self, issue: &IssueSnapshot, label: &str) {
        let planned = self.adds.iter().any(
            |a| matches!(a, Action::AddLabel { label: l, .. } if l.eq_ignore_ascii_case(label)),
        );
        if !issue.has_label(label) && !planned {
            self.adds.push(Action::AddLabel {
                issue: issue.number,
                label: label.to_string(),
            });
        }
    }

    /// Removes `label` if the issue carries it.
    pub(super) fn remove_present(&mut self, issue: &IssueSnapshot, label: &str) {
        if issue.has_label(label) {
            self.removes.push(Action::RemoveLabel {
                issue: issue.number,
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
        } = self;
        acks.into_iter()
            .chain(ends)
            .chain(requests)
            .chain(adds)
            .chain(removes)
            .chain(deletes)
            .chain(answers)
    }
}
