//! Which branch a Run's work is on: the branch its worktree has checked out (so a Run on
//! thirdshift's `issue-7-branch-2` is recorded and salvaged there, not on `issue-7`), whether a
//! name given by hand is one git accepts, and the branch a salvage pushes to when the worktree
//! is not on the Claim's branch (a detached HEAD, or another branch): one of its own, named
//! after the Claim, never another Run's.
//!
//! It reads the worktree only; it never checks out, creates or moves a branch.

use std::path::Path;

use super::git::Git;

/// The branch checked out in `worktree` (`git symbolic-ref --short HEAD`), or `None` when
/// HEAD is detached, the folder is not a git work tree, or git fails.
pub fn of_worktree(worktree: &Path) -> Option<String> {
    if !worktree.is_dir() {
        return None;
    }
    let name = Git::new(worktree)
        .run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok()?;
    let name = name.trim();
    (valid(name).is_ok()).then(|| name.to_string())
}

/// The branch `worktree` has checked out, when it can be a Run's Issue branch: not the
/// repository's default branch (origin's `HEAD`, else `main` or `master`), which a salvage must
/// never push to.
pub fn issue_branch_of(worktree: &Path) -> Option<String> {
    let branch = of_worktree(worktree)?;
    let origin_head = Git::new(worktree)
        .run(&[
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ])
        .ok();
    let default = match origin_head.as_deref().map(str::trim) {
        Some(head) => head.strip_prefix("origin/").unwrap_or(head) == branch,
        None => branch == "main" || branch == "master",
    };
    (!default).then_some(branch)
}

/// The branch a salvage of Claim `claim_id` pushes to when its worktree is not on the Claim's
/// branch.
pub fn salvage_branch(claim_id: &str) -> String {
    format!("thirdshift/salvage/{claim_id}")
}

/// Whether `name` is a branch name git accepts (`git check-ref-format --branch`'s rules for a
/// plain name), with why not.
pub fn valid(name: &str) -> Result<(), String> {
    let refuse = |why: &str| Err(format!("`{name}` is not a branch name: {why}"));
    if name.is_empty() || name == "@" {
        return refuse("it is empty");
    }
    if name.starts_with('-') {
        return refuse("it starts with `-`");
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(*c))
    {
        return refuse(&format!("it holds {c:?}"));
    }
    if name.contains("..") || name.contains("@{") || name.contains("//") {
        return refuse("it holds `..`, `@{` or `//`");
    }
    if name.starts_with('/') || name.ends_with('/') || name.ends_with('.') {
        return refuse("it starts or ends with `/`, or ends with `.`");
    }
    if name
        .split('/')
        .any(|part| part.starts_with('.') || part.ends_with(".lock"))
    {
        return refuse("a part of it starts with `.` or ends with `.lock`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_follow_gits_rules() {
        for good in [
            "issue-7",
            "issue-7-branch-2",
            "team/feature",
            "thirdshift/salvage/c-1",
        ] {
            assert!(valid(good).is_ok(), "{good}");
        }
        for bad in [
            "", "-x", "a b", "a..b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "/a", "a/",
            "a.", "a//b", ".a", "a/.b", "a.lock", "@", "a@{1}", "a\nb",
        ] {
            assert!(valid(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_worktree_on_a_branch_names_it_and_a_detached_one_names_none() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(["-C", dir.path().to_str().unwrap()])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
        };
        git(&["init", "-q", "-b", "issue-7-branch-2"]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ]);
        assert_eq!(of_worktree(dir.path()).as_deref(), Some("issue-7-branch-2"));
        assert_eq!(
            issue_branch_of(dir.path()).as_deref(),
            Some("issue-7-branch-2")
        );
        git(&["checkout", "-q", "-b", "main"]);
        assert_eq!(of_worktree(dir.path()).as_deref(), Some("main"));
        assert_eq!(issue_branch_of(dir.path()), None);
        git(&["checkout", "-q", "--detach"]);
        assert_eq!(of_worktree(dir.path()), None);
        assert_eq!(of_worktree(Path::new("/nowhere")), None);
    }
}
