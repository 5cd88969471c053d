//! The writers of a thirdshift Command whose own process is gone: thirdshift 0.19.0 starts each
//! Harness as its child in a process group of its own, with `THIRDSHIFT_SESSION=<32 hex>` in its
//! environment (inherited by everything it starts; `src/process/session.rs` `mark`) and the
//! Command's worktree as its working directory. A kill -9 of thirdshift's group leaves the
//! Harness running, reparented to PID 1, still writing. The record does not carry the marker, so
//! a writer is a live process carrying a `THIRDSHIFT_SESSION`, started no earlier than the
//! Command, whose working directory is a git worktree on the Command's Issue branch.
//!
//! It reads `/proc` and the worktree's git files; it signals nothing.

use std::path::{Path, PathBuf};

use crate::host::process::Stat;

/// The marker thirdshift puts in each Harness's environment.
pub const SESSION_MARKER: &str = "THIRDSHIFT_SESSION";

/// The live processes that may still write for a Command started at `start_ticks` on `branch`.
pub fn writers(branch: &str, start_ticks: u64) -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            Stat::read(*pid).is_some_and(|s| {
                s.start_ticks >= start_ticks && !matches!(s.state, 'Z' | 'X' | 'x')
            })
        })
        .filter(|pid| carries_marker(*pid))
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd"))
                .ok()
                .and_then(|cwd| branch_of(&cwd))
                .is_some_and(|b| b == branch)
        })
        .collect();
    pids.sort_unstable();
    pids
}

fn carries_marker(pid: u32) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let prefix = format!("{SESSION_MARKER}=");
    environ.split(|b| *b == 0).any(|kv| {
        kv.strip_prefix(prefix.as_bytes())
            .is_some_and(|v| !v.is_empty())
    })
}

/// The branch checked out in the git work tree holding `dir` (walking up to its `.git`), if any.
pub fn branch_of(dir: &Path) -> Option<String> {
    let git = dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.exists())?;
    let git_dir = if git.is_file() {
        let text = std::fs::read_to_string(&git).ok()?;
        let linked = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
        if linked.is_absolute() {
            linked
        } else {
            git.parent()?.join(linked)
        }
    } else {
        git
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
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

    #[test]
    fn a_process_with_the_marker_in_a_worktree_on_the_branch_is_a_writer_and_no_other_is() {
        // given a repository with a linked worktree on issue-7
        let tmp = tempfile::tempdir().unwrap();
        let (main, wt) = (tmp.path().join("main"), tmp.path().join("wt"));
        std::fs::create_dir(&main).unwrap();
        git(&main, &["init", "-q", "-b", "main"]);
        git(&main, &["commit", "-q", "--allow-empty", "-m", "first"]);
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "issue-7",
                wt.to_str().unwrap(),
            ],
        );
        assert_eq!(branch_of(&wt).as_deref(), Some("issue-7"));
        assert_eq!(branch_of(&main).as_deref(), Some("main"));
        let since = Stat::read(std::process::id()).unwrap().start_ticks;
        // when one process carries the marker there, one carries none, one runs in main
        let spawn = |dir: &Path, marked: bool| {
            let mut c = Command::new("sleep");
            c.arg("30").current_dir(dir);
            if marked {
                c.env(SESSION_MARKER, "0123456789abcdef0123456789abcdef");
            }
            c.spawn().unwrap()
        };
        let mut harness = spawn(&wt, true);
        let mut plain = spawn(&wt, false);
        let mut elsewhere = spawn(&main, true);
        // (spawn can return before the kernel shows the new environment: wait for it)
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !carries_marker(harness.id()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // then only the first is a writer of a Command on issue-7
        assert_eq!(writers("issue-7", since), vec![harness.id()]);
        for child in [&mut harness, &mut plain, &mut elsewhere] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        assert!(writers("issue-7", since).is_empty());
    }
}
