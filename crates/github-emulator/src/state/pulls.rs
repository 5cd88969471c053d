//! Pull requests as GitHub keeps them: a pull request is an issue with a `pull` part, so it takes
//! the next issue number and object id, shows up in issue lists, and carries comments and labels
//! like any issue. Closing sets `closed_at`/`closed_by`; merging also sets `merged_at`,
//! `merged_by` and a merge commit.
//!
//! Nothing here reads git or checks permissions: the caller resolves branch shas first (see
//! `crate::origin`), and no route creates pull requests (only `Sim::create_pull` seeds them).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use chrono::{DateTime, Utc};

use super::{now, State};
use crate::PullState;

/// The pull-request part of an issue.
#[derive(Clone, Debug)]
pub(crate) struct Pull {
    /// The head branch, in this repository.
    pub head_ref: String,
    /// The head's sha when the pull request was created (an open one follows its branch when
    /// rendered, as on GitHub; a closed one keeps this).
    pub head_sha: String,
    pub base_ref: String,
    pub base_sha: String,
    pub merged_at: Option<DateTime<Utc>>,
    pub merged_by: Option<String>,
    pub merge_commit_sha: Option<String>,
}

impl Pull {
    /// A pull request from `head_ref` at `head_sha` into `base_ref` at `base_sha`, not merged.
    pub(crate) fn new(head_ref: &str, head_sha: &str, base_ref: &str, base_sha: &str) -> Pull {
        Pull {
            head_ref: head_ref.to_string(),
            head_sha: head_sha.to_string(),
            base_ref: base_ref.to_string(),
            base_sha: base_sha.to_string(),
            merged_at: None,
            merged_by: None,
            merge_commit_sha: None,
        }
    }
}

impl State {
    /// Opens a pull request by `author` and puts it in `state` (closed and merged ones are
    /// closed by their author at once). Returns its number.
    pub(crate) fn create_pull(
        &mut self,
        author: &str,
        title: &str,
        mut pull: Pull,
        state: PullState,
    ) -> u64 {
        let number = self.create_issue(author, title, "", &[]);
        let at = now();
        if state == PullState::Merged {
            pull.merged_at = Some(at);
            pull.merged_by = Some(author.to_string());
            pull.merge_commit_sha = Some(fake_sha(&format!("merge:{number}")));
        }
        if let Some(i) = self.issues.get_mut(&number) {
            if state != PullState::Open {
                // GitHub leaves `state_reason` null on closed pull requests.
                i.open = false;
                i.closed_at = Some(at);
                i.closed_by = Some(i.author.clone());
            }
            i.pull = Some(pull);
        }
        number
    }
}

/// A stable 40-hex-digit "sha" derived from `seed`, for commits the emulator has to name but
/// no git repository holds (a deleted head branch, a merge commit, a seeded branch's tree).
pub(crate) fn fake_sha(seed: &str) -> String {
    (0u8..3)
        .map(|round| {
            let mut h = DefaultHasher::new();
            (round, seed).hash(&mut h);
            format!("{:016x}", h.finish())
        })
        .collect::<String>()[..40]
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_shas_are_stable_forty_hex_digits() {
        let a = fake_sha("head:issue-7");
        assert_eq!(a.len(), 40);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(a, fake_sha("head:issue-7"));
        assert_ne!(a, fake_sha("head:issue-8"));
    }
}
