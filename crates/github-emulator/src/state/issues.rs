//! Issue and comment mutations with GitHub's bookkeeping: numbers and ids (one increasing id
//! sequence for issues and comments), timestamps, comment counts, `updated_at` bumps, and the
//! `closed_at` / `closed_by` / `state_reason` trio.
//!
//! Nothing here checks permissions or validates input; routes do that first.

use std::time::Instant;

use super::{Comment, Issue, State, Target};

impl State {
    pub(crate) fn create_issue(
        &mut self,
        author: &str,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> u64 {
        let author = self.ensure_user(author);
        let mut names: Vec<String> = Vec::new();
        for l in labels {
            let name = self.label_for_use(l);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let (number, id, at) = (self.next_number, self.next_object_id(), self.now());
        self.next_number += 1;
        self.issues.insert(
            number,
            Issue {
                number,
                id,
                title: title.to_string(),
                body: body.to_string(),
                open: true,
                state_reason: None,
                labels: Vec::new(),
                author: author.clone(),
                created_at: at,
                updated_at: at,
                closed_at: None,
                closed_by: None,
                comments: 0,
                pull: None,
            },
        );
        // GitHub records the labels an issue is opened with as its author's `labeled` events.
        self.relabel(number, names, &author);
        if let Some(i) = self.issues.get_mut(&number) {
            i.updated_at = at;
        }
        number
    }

    /// Adds a comment and bumps the issue; `None` when the issue does not exist.
    pub(crate) fn add_comment(&mut self, issue: u64, author: &str, body: &str) -> Option<u64> {
        if !self.issues.contains_key(&issue) {
            return None;
        }
        let author = self.ensure_user(author);
        let (id, at) = (self.next_object_id(), self.now());
        let created = Instant::now();
        let listed_from = self.draw_listed_from();
        let listed_after = listed_from.map(|t| t.saturating_duration_since(created));
        let hidden_reads = self.script.hide_new_comment();
        self.comments.insert(
            id,
            Comment {
                id,
                issue,
                author,
                body: body.to_string(),
                created_at: at,
                updated_at: at,
                listed_from,
                listed_after,
                hidden_reads,
            },
        );
        let i = self.issues.get_mut(&issue)?;
        i.comments += 1;
        i.updated_at = at;
        Some(id)
    }

    /// When a comment created now is first listed, under `Faults::stale_list_reads`: after a
    /// random part of the window, and not before any earlier comment (a replica that has applied
    /// a write has applied every earlier one), so a list that shows a comment shows all earlier
    /// ones. `None` when lists are not stale.
    fn draw_listed_from(&mut self) -> Option<Instant> {
        let window = self.faults.stale_list_reads?;
        let own = Instant::now() + window.mul_f64(self.rng.next_f64());
        let at = self.list_horizon.map_or(own, |h| h.max(own));
        self.list_horizon = Some(at);
        Some(at)
    }

    /// Counts one comment list read against the comments the script hides from lists.
    /// Counts a list response that left out `hidden` comments it would show when fresh.
    pub(crate) fn count_hidden(&mut self, hidden: usize) {
        if hidden > 0 {
            self.fault_counts.stale_lists += 1;
            self.fault_counts.hidden_comments += hidden;
        }
    }

    pub(crate) fn list_read(&mut self) {
        if !self.script.hiding() {
            return;
        }
        self.script.list_read();
        for c in self.comments.values_mut() {
            c.hidden_reads = c.hidden_reads.saturating_sub(1);
        }
    }

    /// Edits a comment's body (the issue's `updated_at` does not move, as on GitHub).
    pub(crate) fn edit_comment(&mut self, id: u64, body: &str) -> bool {
        let at = self.now();
        match self.comments.get_mut(&id) {
            Some(c) => {
                c.body = body.to_string();
                c.updated_at = at;
                true
            }
            None => false,
        }
    }

    pub(crate) fn delete_comment(&mut self, id: u64) -> bool {
        let Some(c) = self.comments.remove(&id) else {
            return false;
        };
        self.reactions.retain(|r| r.target != Target::Comment(id));
        let at = self.now();
        if let Some(i) = self.issues.get_mut(&c.issue) {
            i.comments = i.comments.saturating_sub(1);
            i.updated_at = at;
        }
        true
    }

    /// Bumps an issue's `updated_at`.
    pub(crate) fn touch(&mut self, issue: u64) {
        let at = self.now();
        if let Some(i) = self.issues.get_mut(&issue) {
            i.updated_at = at;
        }
    }

    /// Opens or closes an issue, keeping `closed_at`, `closed_by` and `state_reason` right.
    pub(crate) fn set_state(&mut self, issue: u64, open: bool, reason: Option<&str>, by: &str) {
        let at = self.now();
        let Some(i) = self.issues.get_mut(&issue) else {
            return;
        };
        if i.open == open {
            if let (false, Some(r)) = (open, reason) {
                i.state_reason = Some(r.to_string());
            }
            return;
        }
        i.open = open;
        i.updated_at = at;
        if open {
            i.closed_at = None;
            i.closed_by = None;
            i.state_reason = Some("reopened".to_string());
        } else {
            i.closed_at = Some(at);
            i.closed_by = Some(by.to_string());
            i.state_reason = Some(reason.unwrap_or("completed").to_string());
        }
    }
}
