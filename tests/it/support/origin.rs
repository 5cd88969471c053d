//! A real bare git repository standing in for origin, and a clone that pushes to it as a Run
//! would, for tests that point the emulator at it (`Sim::set_git_origin`).
//!
//! git runs with a fixed identity, without user or system config and without any inherited
//! `GIT_*` variable, so the tests behave the same on every machine. It asserts nothing about
//! the emulator.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A bare repository (`bare`) and a working clone of it (`work`), removed when dropped.
pub struct Origin {
    _dir: tempfile::TempDir,
    pub bare: PathBuf,
    pub work: PathBuf,
}

impl Origin {
    /// A bare repository whose `main` holds one commit.
    pub fn new() -> Origin {
        let dir = tempfile::tempdir().expect("temp dir");
        let (bare, work) = (dir.path().join("origin.git"), dir.path().join("work"));
        git(dir.path(), &["init", "--quiet", "--bare", "origin.git"]);
        git(dir.path(), &["clone", "--quiet", "origin.git", "work"]);
        let origin = Origin {
            _dir: dir,
            bare,
            work,
        };
        origin.push_commit("main", "initial");
        origin
    }

    /// Commits (empty) in the clone and pushes HEAD to `branch`; returns the commit's sha.
    pub fn push_commit(&self, branch: &str, message: &str) -> String {
        git(
            &self.work,
            &["commit", "--quiet", "--allow-empty", "-m", message],
        );
        let refspec = format!("HEAD:refs/heads/{branch}");
        git(&self.work, &["push", "--quiet", "origin", &refspec]);
        git(&self.work, &["rev-parse", "HEAD"])
    }

    /// The subjects of the commits on origin's `branch`, newest first; none when it is not there.
    pub fn log(&self, branch: &str) -> Vec<String> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&self.bare)
            .args(["log", "--format=%s", branch])
            .output()
            .expect("git runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Deletes `branch` on origin.
    pub fn delete(&self, branch: &str) {
        let refspec = format!(":refs/heads/{branch}");
        git(&self.work, &["push", "--quiet", "origin", &refspec]);
    }
}

/// Runs git in `dir` with a fixed identity, no user or system config and no inherited `GIT_*`;
/// returns its trimmed stdout and panics when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .current_dir(dir)
        .args(["-c", "user.name=Run", "-c", "user.email=run@example.org"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
