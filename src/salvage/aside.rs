//! A dead thirdshift Command's worktree moved aside, so thirdshift's own Continuation can take
//! its path and its Issue branch (`thirdshift.on_dead: continue`). thirdshift 0.19.0 makes a
//! Continuation's worktree at `<launch parent>/<repo>-<branch>` and refuses while that path is
//! occupied or the branch is checked out in another worktree (`src/worktree.rs`
//! `continue_existing`, `acquisition::add`). So, once the work is kept on origin, the worktree is
//! moved with `git worktree move` to `<worktree>.dead-<claim id>` (git keeps it registered) and
//! its HEAD detached at the same commit: every file, staged or not, ignored or not, stays; the
//! local Issue branch stays where salvage pushed it, equal to origin's, as thirdshift requires.
//!
//! Never deletes, resets or cleans anything. Repeatable: a move done by an attempt killed before
//! its result was recorded is found in its new place and finished. Blocking (runs `git`).

use std::path::{Path, PathBuf};

/// Where the worktree at `worktree` of the Command `claim_id` is moved.
pub fn aside_path(worktree: &Path, claim_id: &str) -> PathBuf {
    let mut name = worktree.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".dead-{claim_id}"));
    worktree.with_file_name(name)
}

/// Moves the worktree at `worktree` aside and detaches its HEAD; its new place, or why not (the
/// worktree is then left where it was).
pub fn move_aside(worktree: &Path, claim_id: &str) -> Result<PathBuf, String> {
    let to = aside_path(worktree, claim_id);
    let moved_before = !worktree.exists() && to.is_dir();
    if !moved_before {
        let git = super::open_worktree(worktree)?;
        let (from, dest) = (worktree.display().to_string(), to.display().to_string());
        git.run(&["worktree", "move", &from, &dest])
            .map_err(|e| format!("git worktree move {from} {dest}: {e}"))?;
    }
    let git = super::open_worktree(&to)?;
    git.run(&["checkout", "--quiet", "--detach"])
        .map_err(|e| format!("git checkout --detach in {}: {e}", to.display()))?;
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A clone with a linked worktree `repo-issue-7` on branch `issue-7`, with one dirty and one
    /// untracked file in it.
    fn linked_worktree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "--quiet", "--initial-branch=main"]);
        git(
            &repo,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                "init",
            ],
        );
        let wt = dir.path().join("repo-issue-7");
        git(
            &repo,
            &[
                "worktree",
                "add",
                "--quiet",
                "-b",
                "issue-7",
                wt.to_str().unwrap(),
            ],
        );
        std::fs::write(wt.join("half-done.txt"), "half").unwrap();
        (dir, repo, wt)
    }

    #[test]
    fn the_worktree_moves_aside_with_everything_in_it_and_its_branch_is_free_again() {
        // given a dead Command's worktree on its Issue branch, with work in it
        let (_dir, repo, wt) = linked_worktree();
        // when it is moved aside
        let to = move_aside(&wt, "ts-0123456789abcdef").unwrap();
        // then its old path is free, its work is in the new place, detached at the same commit
        assert_eq!(
            to,
            wt.with_file_name("repo-issue-7.dead-ts-0123456789abcdef")
        );
        assert!(!wt.exists());
        assert_eq!(
            std::fs::read_to_string(to.join("half-done.txt")).unwrap(),
            "half"
        );
        assert_eq!(
            git(&to, &["rev-parse", "HEAD"]),
            git(&repo, &["rev-parse", "issue-7"])
        );
        // and a new worktree of the Issue branch can be made at the old path, as thirdshift does
        git(
            &repo,
            &[
                "worktree",
                "add",
                "--quiet",
                wt.to_str().unwrap(),
                "issue-7",
            ],
        );
        assert_eq!(git(&wt, &["branch", "--show-current"]), "issue-7");
    }

    #[test]
    fn a_move_done_by_an_attempt_killed_before_its_record_is_found_and_finished() {
        let (_dir, _repo, wt) = linked_worktree();
        let to = aside_path(&wt, "ts-1");
        git(
            &wt,
            &[
                "worktree",
                "move",
                wt.to_str().unwrap(),
                to.to_str().unwrap(),
            ],
        );
        assert_eq!(move_aside(&wt, "ts-1").unwrap(), to);
        assert_eq!(git(&to, &["branch", "--show-current"]), "");
    }

    #[test]
    fn a_path_that_is_not_a_worktree_is_left_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let err = move_aside(&dir.path().join("gone"), "ts-2").unwrap_err();
        assert!(err.contains("missing"), "{err}");
    }
}
