//! Host-side salvage of a stopped Run's work, on the Run's own host, once no writer of the Run
//! survives: what `observe` does for a Claim it has proven dead, and what a Run whose command
//! failed does before ending its Claim (both through `crate::ending::keep`). In the Claim's worktree it aborts an unfinished merge, stages everything,
//! commits it as `thirdshift: failed run (<reason>)` when that differs from both HEAD and what
//! origin has, and pushes to the Issue branch. Whatever cannot be pushed stays where it is and the
//! [`Salvage`] report says where (path, branch, head, dirty files, unpushed commits).
//!
//! What it never does: reset, clean, check out files, drop a stash, delete a branch or worktree,
//! switch branches, or force-push. A non-fast-forward push is refused by git and reported. It does
//! not decide that a Run is dead (that is `crate::host::liveness`), does not talk to GitHub, and does
//! not remove a stale `index.lock` (git then fails and the error says so).
//!
//! Unfinished operations: a merge (MERGE_HEAD) is aborted with `git merge --abort`, which keeps
//! local changes that were not part of the merge. A rebase, `git am`, cherry-pick or revert in
//! progress, or conflicted (unmerged) paths without one, are left exactly as they are: nothing is
//! staged or committed (so conflict markers never reach a commit) and the report's `error` names
//! the operation. During a rebase the pushed ref is the local Issue branch (git moves it only when
//! the rebase ends), not the half-rebased HEAD.
//! When nothing is committed because the staged tree already equals HEAD's or origin's, what
//! `git add -A` staged stays staged: the index is the only thing salvage changes besides commits.
//!
//! "What origin has" is read from the remote-tracking refs after one `git fetch` of the Issue
//! branch, which may fail (then the last known state is used). The fetch updates only
//! `refs/remotes/<remote>/<branch>`, as a plain `git fetch` would.
//!
//! A salvage killed half-way (after its commit or push, before its report was recorded) is
//! repeated by the next pass, which finds nothing left to commit or push: what the first attempt
//! kept is written before pushing, per Claim, so the repeat reports the same (`progress.rs`).
//!
//! `commit.rs` makes the salvage commit; `git.rs` runs git (scrubbed environment, deadlines).

mod aside;
mod branch;
mod commit;
mod git;
mod progress;

pub use aside::move_aside;
pub use branch::{issue_branch_of, salvage_branch, valid};
pub(crate) use git::{Git, LOCAL_TIMEOUT, NETWORK_TIMEOUT};

use std::path::Path;

use chrono::{DateTime, Utc};

use git::count_status_entries;

/// What to salvage, and the facts that go into the salvage commit.
pub struct SalvageRequest<'a> {
    /// The Claim's worktree (may not exist any more).
    pub worktree: &'a Path,
    /// The Issue branch, e.g. `issue-7`.
    pub branch: &'a str,
    /// The remote to push to, e.g. `origin`.
    pub remote: &'a str,
    /// The Claim whose Run's work this is: a repeated salvage of it reports what the first kept.
    pub claim_id: &'a str,
    /// Why the Run died; goes in the subject: `killed` or `rebooted`.
    pub reason: &'a str,
    pub host: &'a str,
    pub now: DateTime<Utc>,
}

/// What salvage did and where the work is: the record protocol's type, since it goes into the
/// host report and the end record.
pub use crate::protocol::record::Salvage;

/// Salvages the work in `req.worktree`. Blocking (runs `git`); never panics: every failure ends
/// up in [`Salvage::error`] with the work left in place.
pub fn salvage(req: &SalvageRequest) -> Salvage {
    let mut out = Salvage::untouched(req.worktree.display().to_string(), req.branch.to_string());
    match open_worktree(req.worktree) {
        Ok(git) => Salvager::new(&git, req, &mut out).run(),
        Err(why) => {
            out.worktree_missing = true;
            out.error = Some(why);
        }
    }
    out
}

/// The worktree as a git work tree of its own (not merely a folder inside another one).
fn open_worktree(path: &Path) -> Result<Git, String> {
    let shown = path.display();
    if !path.is_dir() {
        return Err(format!("worktree {shown} is missing; nothing was done"));
    }
    let git = Git::new(path);
    let top = git
        .run(&["rev-parse", "--show-toplevel"])
        .map_err(|e| format!("{shown} is not a git work tree ({e}); nothing was done"))?;
    let top = top.trim();
    let same = match (std::fs::canonicalize(path), std::fs::canonicalize(top)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same {
        return Err(format!(
            "{shown} is not a git work tree (it lies inside {top}); nothing was done"
        ));
    }
    Ok(git)
}

/// What origin has of the Issue branch, as far as this worktree knows.
struct Origin {
    /// The branch's sha on origin (None: origin has no such branch, or it was never fetched).
    sha: Option<String>,
    /// The fetch succeeded, so `sha` is origin's state now rather than the last known one.
    fresh: bool,
}

/// What became of the uncommitted work.
enum Uncommitted {
    /// Committed as the salvage commit.
    Committed(String),
    /// Nothing to commit: the staged tree equals HEAD's or origin's.
    Nothing,
    /// Left uncommitted in the worktree (an operation in progress, or git failed).
    Kept,
}

/// One salvage in progress: the worktree, the request, the report being filled, and the branch
/// it pushes to (the Claim's, or one of the salvage's own: [`Salvager::target`]).
struct Salvager<'a> {
    git: &'a Git,
    req: &'a SalvageRequest<'a>,
    out: &'a mut Salvage,
    errors: Vec<String>,
    branch: String,
}

impl<'a> Salvager<'a> {
    fn new(git: &'a Git, req: &'a SalvageRequest<'a>, out: &'a mut Salvage) -> Self {
        Salvager {
            git,
            req,
            out,
            errors: Vec::new(),
            branch: req.branch.to_string(),
        }
    }

    fn run(mut self) {
        if let Err(e) = self.check_names() {
            self.out.error = Some(e);
            return;
        }
        self.branch = self.target();
        self.out.branch.clone_from(&self.branch);
        self.out.dirty_files = self.count_dirty();
        if self.out.dirty_files > 0 {
            // Before anything is committed: a repeat after a kill still knows what was dirty.
            self.remember(None, &[]);
        }
        let origin = self.fetch_origin();
        let (tip, uncommitted) = self.preserve_uncommitted(&origin);
        let committed = match &uncommitted {
            Uncommitted::Committed(sha) => Some(sha.clone()),
            _ => None,
        };
        let head = self.git.sha(&format!("{tip}^{{commit}}"));
        let commits = head
            .as_deref()
            .map_or_else(Vec::new, |h| self.new_commits(h));
        let kept = self.remember(committed.as_ref(), &commits);
        let pushed = match head.as_deref() {
            Some(h) if !commits.is_empty() => self.push(h),
            _ => origin.fresh && origin.sha.is_some() && origin.sha == head,
        };
        self.out.unpushed_commits = if pushed { 0 } else { commits.len() };
        self.out.nothing_to_keep =
            kept.commits.is_empty() && !matches!(uncommitted, Uncommitted::Kept);
        self.out.pushed = pushed;
        self.out.head = head;
        self.out.salvage_commit = kept.salvage_commit;
        self.out.commits = kept.commits;
        self.out.dirty_files = kept.dirty_files;
        if !self.errors.is_empty() {
            self.out.error = Some(self.errors.join("; "));
        }
    }

    /// Adds this attempt's findings to what an earlier attempt for the same Claim kept, and
    /// writes the result before anything is pushed (a failure to write is only reported).
    fn remember(&mut self, committed: Option<&String>, commits: &[String]) -> progress::Progress {
        let (git, wt, claim) = (self.git, self.req.worktree, self.req.claim_id);
        let earlier = progress::load(git, wt, claim);
        let own = match (committed, &earlier.salvage_commit) {
            (None, None) => self.own_commit(commits),
            _ => None,
        };
        let committed = committed.or(own.as_ref());
        let kept = earlier.merged(committed, commits, self.out.dirty_files);
        if let Err(e) = progress::save(git, wt, claim, &kept) {
            tracing::warn!("salvage of claim {claim}: {e}");
        }
        kept
    }

    /// Among `commits` (not on origin yet), the salvage commit an earlier attempt for this Claim
    /// made before it was killed, by its trailer.
    fn own_commit(&self, commits: &[String]) -> Option<String> {
        let trailer = format!("{}: {}", commit::CLAIM_TRAILER, self.req.claim_id);
        commits.iter().rev().find_map(|c| {
            let message = self.git.run(&["log", "-1", "--format=%B", c]).ok()?;
            message
                .lines()
                .any(|l| l.trim() == trailer)
                .then(|| c.clone())
        })
    }

    /// The branch to push: the Claim's when the worktree has it checked out (or is rebasing
    /// it: HEAD is detached then, and the branch ref is what is pushed); else (a detached HEAD,
    /// another branch checked out) a branch of this salvage's own, named after the Claim, so
    /// the work never lands on a branch another Run may own.
    fn target(&self) -> String {
        let checked_out = self
            .git
            .run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
            .ok();
        if self.rebasing() || checked_out.as_deref().map(str::trim) == Some(self.req.branch) {
            return self.req.branch.to_string();
        }
        let own = branch::salvage_branch(self.req.claim_id);
        tracing::info!(
            claim = self.req.claim_id,
            on = ?checked_out,
            "the worktree is not on {}: salvaging to {own}",
            self.req.branch
        );
        own
    }

    fn rebasing(&self) -> bool {
        let exists = |name: &str| {
            self.git
                .run(&["rev-parse", "--git-path", name])
                .is_ok_and(|p| self.req.worktree.join(p.trim()).exists())
        };
        exists("rebase-merge") || exists("rebase-apply")
    }

    /// Refuses names git could read as options or that are not valid refs.
    fn check_names(&self) -> Result<(), String> {
        let (branch, remote) = (self.req.branch, self.req.remote);
        let valid = !branch.starts_with('-')
            && self
                .git
                .run(&["check-ref-format", &format!("refs/heads/{branch}")])
                .is_ok();
        if !valid {
            return Err(format!(
                "{branch:?} is not a valid branch name; nothing was done"
            ));
        }
        if remote.is_empty() || remote.starts_with('-') {
            return Err(format!(
                "{remote:?} is not a valid remote; nothing was done"
            ));
        }
        Ok(())
    }

    /// Files that are staged, unstaged or untracked (ignored files are not counted).
    fn count_dirty(&mut self) -> usize {
        let status = ["status", "--porcelain=v1", "-z", "--untracked-files=all"];
        match self.git.run(&status) {
            Ok(text) => count_status_entries(&text),
            Err(e) => {
                self.errors.push(e);
                0
            }
        }
    }

    /// Fetches the Issue branch into its remote-tracking ref; tolerates failure.
    fn fetch_origin(&mut self) -> Origin {
        let tracking = format!("refs/remotes/{}/{}", self.req.remote, self.branch);
        let spec = format!("+refs/heads/{}:{tracking}", self.branch);
        let fetch = ["fetch", "--no-tags", "--quiet", self.req.remote, &spec];
        match self.git.run_within(&fetch, NETWORK_TIMEOUT) {
            Ok(_) => Origin {
                sha: self.git.sha(&format!("{tracking}^{{commit}}")),
                fresh: true,
            },
            Err(e) if e.contains("couldn't find remote ref") => Origin {
                sha: None,
                fresh: true,
            },
            Err(e) => {
                self.errors.push(format!(
                    "could not fetch {} from {} (using the last known state): {e}",
                    self.branch, self.req.remote
                ));
                Origin {
                    sha: self.git.sha(&format!("{tracking}^{{commit}}")),
                    fresh: false,
                }
            }
        }
    }

    /// Aborts a merge, then commits the uncommitted work unless an operation in progress makes
    /// that unsafe. Returns the ref to push (`HEAD`, or the Issue branch during a rebase).
    fn preserve_uncommitted(&mut self, origin: &Origin) -> (String, Uncommitted) {
        let branch_ref = format!("refs/heads/{}", self.branch);
        if self.git.sha("MERGE_HEAD").is_some() {
            if let Err(e) = self.git.run(&["merge", "--abort"]) {
                self.errors
                    .push(format!("could not abort the unfinished merge: {e}"));
            }
        }
        let (tip, blocker) = match self.unfinished_operation() {
            Some(op) if op.contains("rebase") => (branch_ref, Some(op)),
            Some(op) => ("HEAD".to_string(), Some(op)),
            None => ("HEAD".to_string(), self.conflicts()),
        };
        let uncommitted = match blocker {
            Some(what) => {
                self.errors.push(format!(
                    "{what} is in progress in {}: left as it is, uncommitted work not committed",
                    self.out.worktree
                ));
                Uncommitted::Kept
            }
            None => self.commit_uncommitted(origin),
        };
        (tip, uncommitted)
    }

    /// A rebase, `git am`, cherry-pick, revert or merge that is still in progress.
    fn unfinished_operation(&self) -> Option<String> {
        let op = if self.rebasing() {
            "a rebase (or git am)"
        } else if self.git.sha("CHERRY_PICK_HEAD").is_some() {
            "a cherry-pick"
        } else if self.git.sha("REVERT_HEAD").is_some() {
            "a revert"
        } else if self.git.sha("MERGE_HEAD").is_some() {
            "a merge that could not be aborted"
        } else {
            return None;
        };
        Some(op.to_string())
    }

    /// Conflicted (unmerged) paths in the index, which `git add -A` would commit with markers.
    fn conflicts(&self) -> Option<String> {
        match self.git.run(&["ls-files", "--unmerged"]) {
            Ok(list) if list.trim().is_empty() => None,
            Ok(_) => Some("conflict resolution (unmerged paths)".to_string()),
            Err(e) => Some(format!("an unknown index state ({e})")),
        }
    }

    /// Commits of `head` that no remote-tracking ref of the remote holds, oldest first.
    fn new_commits(&mut self, head: &str) -> Vec<String> {
        let remotes = format!("--remotes={}", self.req.remote);
        let list = ["rev-list", "--reverse", head, "--not", &remotes];
        match self.git.run(&list) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(e) => {
                self.errors.push(e);
                Vec::new()
            }
        }
    }

    /// Pushes `head` to the Issue branch, fast-forward only; true when origin took it.
    fn push(&mut self, head: &str) -> bool {
        let (remote, branch) = (self.req.remote, self.branch.as_str());
        let spec = format!("{head}:refs/heads/{branch}");
        let push = [
            "push",
            "--no-verify",
            "--no-signed",
            "--recurse-submodules=no",
            remote,
            &spec,
        ];
        match self.git.run_within(&push, NETWORK_TIMEOUT) {
            Ok(_) => true,
            Err(e) => {
                self.errors.push(format!(
                    "push of {branch} to {remote} failed; work kept in {} at {head}: {e}",
                    self.out.worktree
                ));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_folder_is_reported_without_running_anything() {
        let out = salvage(&SalvageRequest {
            worktree: Path::new("/nowhere"),
            branch: "issue-7",
            remote: "origin",
            claim_id: "c-1",
            reason: "killed",
            host: "h",
            now: Utc::now(),
        });
        assert!(out.worktree_missing);
        assert!(out.error.is_some_and(|e| e.contains("/nowhere is missing")));
        assert!(!out.pushed && out.head.is_none() && out.commits.is_empty());
    }
}
