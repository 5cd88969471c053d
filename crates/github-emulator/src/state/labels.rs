//! Labels and reactions: repository labels (case-insensitive names, created on first use with
//! GitHub's default colour), the labels of an issue (add, replace, remove one), and reactions
//! (one per user, content and target).
//!
//! Nothing here checks permissions or validates input; routes do that first.

use super::{now, Label, LabelEvent, Reaction, State, Target, DEFAULT_LABEL_COLOR};

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

    /// Adds labels to an issue (creating them on first use) as `actor`; bumps it if anything
    /// changed, with a `labeled` event per label added.
    pub(crate) fn add_labels(&mut self, issue: u64, names: &[String], actor: &str) {
        let canon: Vec<String> = names.iter().map(|n| self.label_for_use(n)).collect();
        let Some(i) = self.issues.get(&issue) else {
            return;
        };
        let mut labels = i.labels.clone();
        for name in canon {
            if !labels.contains(&name) {
                labels.push(name);
            }
        }
        self.relabel(issue, labels, actor);
    }

    /// Replaces an issue's labels as `actor`; bumps it if the set changed, with an event per
    /// label added or removed.
    pub(crate) fn set_labels(&mut self, issue: u64, names: &[String], actor: &str) {
        let mut canon: Vec<String> = Vec::new();
        for n in names {
            let name = self.label_for_use(n);
            if !canon.contains(&name) {
                canon.push(name);
            }
        }
        self.relabel(issue, canon, actor);
    }

    /// Removes one label from an issue as `actor`; `false` when it was not on the issue.
    pub(crate) fn remove_label(&mut self, issue: u64, name: &str, actor: &str) -> bool {
        let Some(i) = self.issues.get(&issue) else {
            return false;
        };
        let mut labels = i.labels.clone();
        labels.retain(|l| !l.eq_ignore_ascii_case(name));
        let removed = labels.len() != i.labels.len();
        self.relabel(issue, labels, actor);
        removed
    }

    /// Gives `issue` the labels `after`, recording GitHub's `unlabeled` events for those gone and
    /// `labeled` events for those new, by `actor`.
    pub(crate) fn relabel(&mut self, issue: u64, after: Vec<String>, actor: &str) {
        let Some(i) = self.issues.get(&issue) else {
            return;
        };
        let before = i.labels.clone();
        if before == after {
            return;
        }
        let at = self.now();
        let gone = before
            .iter()
            .filter(|l| !after.contains(l))
            .map(|l| ("unlabeled", l));
        let new = after
            .iter()
            .filter(|l| !before.contains(l))
            .map(|l| ("labeled", l));
        let changes: Vec<(&'static str, String)> =
            gone.chain(new).map(|(e, l)| (e, l.clone())).collect();
        for (event, label) in changes {
            let id = self.next_object_id();
            self.events.push(LabelEvent {
                id,
                issue,
                event,
                actor: actor.to_string(),
                label,
                created_at: at,
            });
        }
        if let Some(i) = self.issues.get_mut(&issue) {
            i.labels = after;
            i.updated_at = at;
        }
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
