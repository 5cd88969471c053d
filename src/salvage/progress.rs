//! What a salvage kept, written in the worktree's git folder before it pushes (one small JSON file
//! per Claim: `thirdshift/salvage-<claim id>.json`), so that a salvage killed half-way and then
//! repeated — by the next `observe`, or by `observe` after a Run killed while salvaging — reports
//! what the first one kept (its `failed run` commit, the commits origin lacked, the dirty files it
//! found) rather than "nothing to keep": the repeat then finds a clean worktree and an origin that
//! already has everything. Keyed by Claim, so a later Run in the same worktree never inherits an
//! earlier Run's report. It decides nothing about the work itself (`salvage.rs` does) and never
//! fails a salvage: a file it cannot read or write only costs the repeat's report its memory.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::git::Git;

/// What one Claim's salvage kept so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Progress {
    pub salvage_commit: Option<String>,
    /// Commits origin lacked, oldest first (the salvage commit included).
    pub commits: Vec<String>,
    pub dirty_files: usize,
}

impl Progress {
    /// This salvage's findings added to an earlier attempt's: the earlier commit and dirty count
    /// stand unless this attempt made its own; commits are the union, earlier ones first.
    pub fn merged(
        &self,
        salvage_commit: Option<&String>,
        commits: &[String],
        dirty: usize,
    ) -> Self {
        let mut all = self.commits.clone();
        all.extend(
            commits
                .iter()
                .filter(|c| !self.commits.contains(c))
                .cloned(),
        );
        Progress {
            salvage_commit: salvage_commit.or(self.salvage_commit.as_ref()).cloned(),
            commits: all,
            dirty_files: if dirty == 0 { self.dirty_files } else { dirty },
        }
    }
}

/// The progress file of `claim_id` in the worktree's git folder; `None` for a claim id that is
/// not a plain file name or a worktree whose git folder git cannot name.
fn file(git: &Git, worktree: &Path, claim_id: &str) -> Option<PathBuf> {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if claim_id.is_empty() || !claim_id.chars().all(plain) {
        return None;
    }
    let name = format!("thirdshift/salvage-{claim_id}.json");
    let path = git.run(&["rev-parse", "--git-path", &name]).ok()?;
    Some(worktree.join(path.trim()))
}

/// What an earlier salvage of `claim_id` in this worktree kept (nothing when there was none).
pub(super) fn load(git: &Git, worktree: &Path, claim_id: &str) -> Progress {
    file(git, worktree, claim_id)
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Writes `progress` for `claim_id`, atomically; the error in words when it could not.
pub(super) fn save(
    git: &Git,
    worktree: &Path,
    claim_id: &str,
    progress: &Progress,
) -> Result<(), String> {
    let Some(path) = file(git, worktree, claim_id) else {
        return Err(format!("no progress file for claim {claim_id:?}"));
    };
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec(progress)?)?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| format!("could not write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_repeat_that_finds_nothing_new_keeps_what_the_first_attempt_kept() {
        let first = Progress {
            salvage_commit: Some("s".into()),
            commits: ids(&["a", "s"]),
            dirty_files: 2,
        };
        assert_eq!(first.merged(None, &[], 0), first);
    }

    #[test]
    fn a_repeat_that_commits_again_adds_its_commit_after_the_earlier_ones() {
        let first = Progress {
            salvage_commit: Some("s".into()),
            commits: ids(&["a", "s"]),
            dirty_files: 2,
        };
        let again = first.merged(Some(&"t".to_string()), &ids(&["s", "t"]), 1);
        assert_eq!(again.salvage_commit.as_deref(), Some("t"));
        assert_eq!(again.commits, ids(&["a", "s", "t"]));
        assert_eq!(again.dirty_files, 1);
    }

    #[test]
    fn claim_ids_that_are_not_plain_file_names_get_no_file() {
        let git = Git::new(Path::new("/nowhere"));
        for id in ["", "../x", "a/b", "c d"] {
            assert_eq!(file(&git, Path::new("/nowhere"), id), None, "{id}");
        }
    }
}
