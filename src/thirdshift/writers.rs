//! The writers of a thirdshift Command whose own process is gone: thirdshift 0.19.0 starts each
//! Harness as its child in a process group of its own, with `THIRDSHIFT_SESSION=<32 hex>` in its
//! environment (inherited by everything it starts; `src/process/session.rs` `mark`) and the
//! Command's worktree as its working directory. A kill -9 of thirdshift's group leaves the
//! Harness running, reparented to PID 1, still writing. The record does not carry the marker, so
//! a writer is a live process carrying a `THIRDSHIFT_SESSION`, started no earlier than the
//! Command, and working where the Command works:
//! - when the Command's worktree is known (`worktree::from_log` believed it), inside that
//!   worktree, whatever branch is checked out there now: agents switch branches
//!   (`git switch -c scratch`) and still write;
//! - when it is not, in a git worktree on the Command's Issue branch of a clone whose `origin` is
//!   the Command's repository on its web host (a host serving two repositories has an `issue-1`
//!   in each, and one's Harness is no writer of the other's Command).
//!
//! It reads `/proc` and the worktree's git files; it signals nothing.

use std::path::{Path, PathBuf};

use crate::host::Stat;
use crate::protocol::remote::RemoteRepo;

/// The marker thirdshift puts in each Harness's environment.
pub const SESSION_MARKER: &str = "THIRDSHIFT_SESSION";

/// The live processes that may still write for a Command of repository `repo` started at
/// `start_ticks` on `branch`, in `worktree` when it is known.
pub fn writers(
    repo: &RemoteRepo,
    branch: &str,
    start_ticks: u64,
    worktree: Option<&Path>,
) -> Vec<u32> {
    let worktree = worktree.map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()));
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
            let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")) else {
                return false;
            };
            if let Some(w) = &worktree {
                return cwd.starts_with(w);
            }
            git_dir_of(&cwd)
                .is_some_and(|g| head_branch(&g).as_deref() == Some(branch) && of_repo(&g, repo))
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

/// The git folder of the work tree holding `dir`: its `.git`, or a linked worktree's own folder.
pub(super) fn git_dir_of(dir: &Path) -> Option<PathBuf> {
    let git = dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.exists())?;
    if !git.is_file() {
        return Some(git);
    }
    let text = std::fs::read_to_string(&git).ok()?;
    let linked = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    Some(if linked.is_absolute() {
        linked
    } else {
        git.parent()?.join(linked)
    })
}

fn head_branch(git_dir: &Path) -> Option<String> {
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
}

/// Whether the clone `git_dir` belongs to (a linked worktree's `commondir`) has an `origin` whose
/// configured URL names repository `repo` on its web host.
pub(super) fn of_repo(git_dir: &Path, repo: &RemoteRepo) -> bool {
    origin_of(&common_dir(git_dir)).is_some_and(|url| repo.named_by(&url))
}

/// The clone's own git folder for `git_dir`: a linked worktree's `commondir`, else itself.
pub(super) fn common_dir(git_dir: &Path) -> PathBuf {
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map_or_else(|| git_dir.to_path_buf(), |c| git_dir.join(c.trim()));
    std::fs::canonicalize(&common).unwrap_or(common)
}

/// The configured `origin` URL of the clone whose git folder is `common`.
pub(super) fn origin_of(common: &Path) -> Option<String> {
    origin_url(&std::fs::read_to_string(common.join("config")).ok()?)
}

/// The `url` of `[remote "origin"]` in a git config file's text.
fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line.replace(' ', "") == "[remote\"origin\"]";
        } else if let (true, Some((key, value))) = (in_origin, line.split_once('=')) {
            if key.trim() == "url" {
                return Some(value.trim().trim_matches('"').to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thirdshift::testing::{clone_with_worktree, git};
    use std::process::Command;

    #[test]
    fn a_process_with_the_marker_in_a_worktree_on_the_branch_is_a_writer_and_no_other_is() {
        // given a repository with a linked worktree on issue-7
        let tmp = tempfile::tempdir().unwrap();
        let (main, wt) = (tmp.path().join("main"), tmp.path().join("wt"));
        let url = "https://github.com/acme/widgets.git";
        clone_with_worktree(&main, url, &wt, "issue-7");
        let branch_of = |dir: &Path| head_branch(&git_dir_of(dir).unwrap());
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
        // then only the first is a writer of a Command on issue-7 of that repository
        let repo = |r: &str| RemoteRepo::new("https://api.github.com", r);
        let w = |r: &str, worktree: Option<&Path>| writers(&repo(r), "issue-7", since, worktree);
        assert_eq!(w("acme/widgets", None), vec![harness.id()]);
        assert_eq!(w("acme/widgets", Some(&wt)), vec![harness.id()]);
        assert!(w("acme/gadgets", None).is_empty());
        // and not of the same repository on another web host
        let elsewhere_host = RemoteRepo::new("https://ghe.example/api/v3", "acme/widgets");
        assert!(writers(&elsewhere_host, "issue-7", since, None).is_empty());
        // and not of a Command whose log names another worktree on a branch of that name
        let other = tmp.path().join("other-clone-issue-7");
        assert!(w("acme/widgets", Some(&other)).is_empty());
        // when the Harness switches its worktree to a branch of its own
        git(&wt, &["switch", "-q", "-c", "scratch"]);
        // then it is still the writer of the Command whose worktree is known, and only of it
        assert_eq!(w("acme/widgets", Some(&wt)), vec![harness.id()]);
        assert!(w("acme/widgets", None).is_empty());
        for child in [&mut harness, &mut plain, &mut elsewhere] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        assert!(w("acme/widgets", Some(&wt)).is_empty());
    }

    #[test]
    fn the_origin_url_is_read_from_the_remote_origin_section() {
        let config = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = x\n[remote \"origin\"]\n\turl = https://github.com/acme/widgets.git\n";
        assert_eq!(
            origin_url(config).as_deref(),
            Some("https://github.com/acme/widgets.git")
        );
    }
}
