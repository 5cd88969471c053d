//! Real git repositories for this folder's unit tests: a clone with a linked worktree, as
//! thirdshift's launch repository and a Command's worktree are. Test-only; it asserts nothing
//! about the code under test.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` with a fixed identity; panics when it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// A new clone at `launch` (one commit on `main`) whose origin is `url`, with a linked worktree
/// at `wt` on a new branch `branch`.
pub fn clone_with_worktree(launch: &Path, url: &str, wt: &Path, branch: &str) {
    std::fs::create_dir_all(launch).unwrap();
    git(launch, &["init", "-q", "-b", "main"]);
    git(launch, &["commit", "-q", "--allow-empty", "-m", "first"]);
    git(launch, &["remote", "add", "origin", url]);
    git(
        launch,
        &["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()],
    );
}
