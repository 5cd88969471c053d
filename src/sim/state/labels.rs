//! Labels and reactions: repository labels (case-insensitive names, created on first use with
//! GitHub's default colour), the labels of an issue (add, replace, remove one), and reactions
//! (one per user, content and target).
//!
//! Nothing here checks permissions or validates input; routes do that first.

use super::{now, Label, Reaction, State, Target, DEFAULT_LABEL_COLOR};

impl State {
    /// The repository label with this name (case-insensitive).
    pub(crate) fn label(&self, name: &str) -> Option<&Label> {
        self.labels
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    /// Creates a repository label; `None` when one with that name exists.
    pub(crate) fn create_label(
        &mut self,
        name: &str,
        color: &str,
        description: Option<String>,
    ) -> Option<u64> {
        if self.label(name).is_some() {
            return None;
        }
        let id = self.next_label_id;
        self.next_label_id += 1;
        self.labels.push(Label {
            id,
            name: name.to_string(),
            color: color.to_string(),
            description,
        });
        Some(id)
    }

    /// The canonical name of a label, creating it with the default colour on first use.
    pub(crate) fn label_for_use(&mut self, name: &str) -> String {
        if let Some(l) = self.label(name) {
            return l.name.clone();
        }
        self.create_label(name, DEFAULT_LABEL_COLOR, None);
        name.to_string()
    }

    /// Adds labels to an issue (creating them on first use); bumps it if anything changed.
    pub(crate) fn add_labels(&mut self, issue: u64, names: &[String]) {
        let canon: Vec<String> = names.iter().map(|n| self.label_for_use(n)).collect();
        let Some(i) = self.issues.get_mut(&issue) else {
            return;
        };
        let before = i.labels.len();
        for name in canon {
            if !i.labels.contains(&name) {
                i.labels.push(name);
            }
        }
        if i.labels.len() != before {
            i.updated_at = now();
        }
    }

    /// Replaces an issue's labels; bumps it if the set changed.
    pub(crate) fn set_labels(&mut self, issue: u64, names: &[String]) {
        let mut canon: Vec<String> = Vec::new();
        for n in names {
            let name = self.label_for_use(n);
            if !canon.contains(&name) {
                canon.push(name);
            }
        }
        if let Some(i) = self.issues.get_mut(&issue) {
            if i.labels != canon {
                i.labels = canon;
                i.updated_at = now();
            }
        }
    }

    /// Removes one label from an issue; `false` when it was not on the issue.
    pub(crate) fn remove_label(&mut self, issue: u64, name: &str) -> bool {
        let Some(i) = self.issues.get_mut(&issue) else {
            return false;
        };
        let before = i.labels.len();
        i.labels.retain(|l| !l.eq_ignore_ascii_case(name));
        let removed = i.labels.len() != before;
        if removed {
            i.updated_at = now();
        }
        removed
    }

    /// Adds `user`'s reaction; returns its id and whether it is new.
    pub(crate) fn react(&mut self, target: Target, user: &str, content: &str) -> (u64, bool) {
        if let Some(r) = self
            .reactions
            .iter()
            .find(|r| r.target == target && r.user == user && r.content == content)
        {
            return (r.id, false);
        }
        let id = self.next_reaction_id;
        self.next_reaction_id += 1;
        self.reactions.push(Reaction {
            id,
            target,
            user: user.to_string(),
            content: content.to_string(),
            created_at: now(),
        });
        (id, true)
    }
}
