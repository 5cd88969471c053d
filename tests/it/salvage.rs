//! Host-side salvage of a dead Run's worktree, against real git: a bare `origin.git`, a clone of
//! it and a linked worktree on the Issue branch `issue-7`, all in a temporary folder. Each test
//! kills nothing; it leaves the worktree the way a killed Run would and calls `salvage`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chrono::{TimeZone, Utc};
use tempfile::TempDir;
use thirdshift_reconciler::salvage::{salvage, Salvage, SalvageRequest};

const BRANCH: &str = "issue-7";
const FAILED_RUN: &str = "thirdshift: failed run (killed)";

/// Runs git in `dir` with the test's identity and no GIT_* from the environment.
fn git_output(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("git");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("LC_ALL", "C")
        .env("GIT_AUTHOR_NAME", "Test Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Test Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .args([
            "-c",
            "commit.gpgSign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs")
}

/// Runs git in `dir`, panicking on failure; trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_output(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// A bare origin, a clone (`main`) and the Issue branch's linked worktree (`wt-7`).
struct Checkouts {
    tmp: TempDir,
    origin: PathBuf,
    main: PathBuf,
    wt: PathBuf,
}

impl Checkouts {
    /// Given an Issue branch started from `main` with no work at all, never pushed.
    fn unstarted() -> Checkouts {
        let tmp = TempDir::new().unwrap();
        let (origin, main, wt) = (
            tmp.path().join("origin.git"),
            tmp.path().join("main"),
            tmp.path().join("wt-7"),
        );
        git(tmp.path(), &["init", "-q", "--bare", "origin.git"]);
        git(tmp.path(), &["clone", "-q", "origin.git", "main"]);
        git(&main, &["config", "user.name", "Test Dev"]);
        git(&main, &["config", "user.email", "dev@example.com"]);
        write(&main.join("README.md"), "hello\n");
        git(&main, &["add", "README.md"]);
        git(&main, &["commit", "-q", "-m", "initial"]);
        git(&main, &["push", "-q", "origin", "main"]);
        let wt_arg = wt.to_str().unwrap();
        git(
            &main,
            &["worktree", "add", "-q", "-b", BRANCH, wt_arg, "origin/main"],
        );
        Checkouts {
            tmp,
            origin,
            main,
            wt,
        }
    }

    /// Given an Issue branch with one commit ("start work", `src.txt`) pushed to origin.
    fn started() -> Checkouts {
        let world = Checkouts::unstarted();
        world.commit("src.txt", "v1\n", "start work");
        git(&world.wt, &["push", "-q", "origin", BRANCH]);
        world
    }

    fn commit(&self, file: &str, text: &str, subject: &str) -> String {
        write(&self.wt.join(file), text);
        git(&self.wt, &["add", file]);
        git(&self.wt, &["commit", "-q", "-m", subject]);
        self.head()
    }

    /// Three uncommitted files: a modified tracked one, a staged new one, an untracked one.
    fn make_dirty(&self) {
        write(&self.wt.join("src.txt"), "v1 edited by the Run\n");
        write(&self.wt.join("staged.txt"), "staged\n");
        git(&self.wt, &["add", "staged.txt"]);
        write(&self.wt.join("notes/todo.txt"), "untracked\n");
    }

    /// Pushes a commit to origin's `branch` from another clone, as someone else would.
    fn push_from_elsewhere(&self, branch: &str, file: &str, text: &str) -> String {
        let other = self.tmp.path().join("other");
        if !other.exists() {
            git(self.tmp.path(), &["clone", "-q", "origin.git", "other"]);
        }
        git(&other, &["fetch", "-q", "origin"]);
        git(
            &other,
            &["checkout", "-q", "-B", branch, &format!("origin/{branch}")],
        );
        write(&other.join(file), text);
        git(&other, &["add", file]);
        git(&other, &["commit", "-q", "-m", "someone else"]);
        git(&other, &["push", "-q", "origin", branch]);
        git(&other, &["rev-parse", "HEAD"])
    }

    /// Commits `file` on `main` in the clone and pushes it, to conflict with the Issue branch.
    fn push_main_change(&self, file: &str, text: &str) {
        write(&self.main.join(file), text);
        git(&self.main, &["add", file]);
        git(&self.main, &["commit", "-q", "-m", "main changes src"]);
        git(&self.main, &["push", "-q", "origin", "main"]);
    }

    fn salvage(&self) -> Salvage {
        salvage(&self.request(&self.wt))
    }

    fn request<'a>(&self, worktree: &'a Path) -> SalvageRequest<'a> {
        SalvageRequest {
            worktree,
            branch: BRANCH,
            remote: "origin",
            claim_id: "c-1",
            reason: "killed",
            host: "builder-1",
            now: Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap(),
        }
    }

    fn head(&self) -> String {
        git(&self.wt, &["rev-parse", "HEAD"])
    }

    /// Origin's sha for `branch`, if origin has it.
    fn origin_sha(&self, branch: &str) -> Option<String> {
        let refname = format!("refs/heads/{branch}");
        let out = git_output(&self.origin, &["rev-parse", "--verify", "-q", &refname]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Subjects on origin's Issue branch, newest first.
    fn origin_subjects(&self) -> Vec<String> {
        let log = git(&self.origin, &["log", "--format=%s", BRANCH]);
        log.lines().map(str::to_string).collect()
    }

    fn origin_file(&self, file: &str) -> Option<String> {
        let out = git_output(&self.origin, &["show", &format!("{BRANCH}:{file}")]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn in_progress(&self, name: &str) -> bool {
        let path = git(&self.wt, &["rev-parse", "--git-path", name]);
        self.wt.join(path).exists()
    }
}

#[test]
fn dirty_files_and_unpushed_commit_reach_origin_in_a_failed_run_commit() {
    // given a Run killed mid-edit: one unpushed commit and three uncommitted files
    let world = Checkouts::started();
    let unpushed = world.commit("step.txt", "step\n", "unpushed step");
    world.make_dirty();

    // when its work is salvaged
    let out = world.salvage();

    // then origin's Issue branch holds the commit, then the failed-run commit with the files
    assert_eq!(out.error, None);
    assert_eq!(
        world.origin_subjects(),
        [FAILED_RUN, "unpushed step", "start work", "initial"]
    );
    assert_eq!(
        world.origin_file("src.txt").unwrap(),
        "v1 edited by the Run\n"
    );
    assert_eq!(world.origin_file("staged.txt").unwrap(), "staged\n");
    assert_eq!(world.origin_file("notes/todo.txt").unwrap(), "untracked\n");
    let salvage_commit = out.salvage_commit.clone().expect("a salvage commit");
    assert_eq!(out.commits, [unpushed, salvage_commit.clone()]);
    assert_eq!(world.origin_sha(BRANCH), Some(salvage_commit.clone()));
    assert_eq!(out.head, Some(salvage_commit));
    assert!(out.pushed && !out.nothing_to_keep && !out.worktree_missing);
    assert_eq!((out.dirty_files, out.unpushed_commits), (3, 0));
    // and the body names the time, the host and the uncommitted work; the identity is the repo's
    let body = git(&world.origin, &["log", "-1", "--format=%B", BRANCH]);
    assert!(body.contains("Time: 2025-03-04T05:06:07Z"), "{body}");
    assert!(body.contains("Host: builder-1"), "{body}");
    assert!(body.contains("Uncommitted work at the time of the failure is included"));
    let author = git(&world.origin, &["log", "-1", "--format=%an <%ae>", BRANCH]);
    assert_eq!(author, "Test Dev <dev@example.com>");
}

#[test]
fn push_to_unreachable_origin_keeps_everything_and_reports_where() {
    // given a Run killed mid-edit, and origin unreachable
    let world = Checkouts::started();
    world.commit("step.txt", "step\n", "unpushed step");
    world.make_dirty();
    let gone = world.tmp.path().join("gone.git");
    git(
        &world.main,
        &["remote", "set-url", "origin", gone.to_str().unwrap()],
    );

    // when its work is salvaged
    let out = world.salvage();

    // then nothing is pushed or deleted, and the report says where the work is
    assert!(!out.pushed && !out.worktree_missing && !out.nothing_to_keep);
    assert_eq!(out.worktree, world.wt.display().to_string());
    assert_eq!(out.branch, BRANCH);
    assert_eq!(out.head, Some(world.head()));
    assert_eq!(out.head, out.salvage_commit);
    assert_eq!(git(&world.wt, &["rev-parse", BRANCH]), world.head());
    assert_eq!((out.unpushed_commits, out.commits.len()), (2, 2));
    assert_eq!(out.dirty_files, 3);
    let error = out.error.expect("an error");
    assert!(error.contains("push") && error.contains(&world.wt.display().to_string()));
    // and the files are untouched on disk, and the real origin is as it was
    assert_eq!(read(&world.wt.join("src.txt")), "v1 edited by the Run\n");
    assert_eq!(read(&world.wt.join("staged.txt")), "staged\n");
    assert_eq!(read(&world.wt.join("notes/todo.txt")), "untracked\n");
    assert_eq!(world.origin_subjects(), ["start work", "initial"]);
}

#[test]
fn clean_worktree_makes_no_commit_and_pushes_nothing() {
    // given a Run killed before any work: a fresh Issue branch, never pushed, nothing changed
    let world = Checkouts::unstarted();
    let before = world.head();

    // when it is salvaged
    let out = world.salvage();

    // then there is no commit, no Issue branch on origin, and nothing to keep
    assert_eq!(world.head(), before, "no empty commit");
    assert_eq!(world.origin_sha(BRANCH), None, "nothing pushed");
    assert!(out.nothing_to_keep && !out.pushed);
    assert_eq!(out.salvage_commit, None);
    assert!(out.commits.is_empty());
    assert_eq!((out.dirty_files, out.unpushed_commits), (0, 0));
    assert_eq!(out.head, Some(before));
    assert_eq!(out.error, None);
}

#[test]
fn unfinished_merge_is_aborted_before_staging() {
    // given a Run killed in the middle of a conflicting merge, with a draft beside it
    let world = Checkouts::started();
    world.push_main_change("src.txt", "main's version\n");
    world.commit("src.txt", "issue's version\n", "issue changes src");
    write(&world.wt.join("draft.txt"), "draft\n");
    git(&world.wt, &["fetch", "-q", "origin"]);
    assert!(!git_output(&world.wt, &["merge", "origin/main"])
        .status
        .success());
    assert!(world.in_progress("MERGE_HEAD"));

    // when it is salvaged
    let out = world.salvage();

    // then the merge is gone and origin has the pre-merge work plus the draft, no markers
    assert!(!world.in_progress("MERGE_HEAD"), "merge aborted");
    assert_eq!(out.error, None);
    assert_eq!(
        world.origin_subjects(),
        [FAILED_RUN, "issue changes src", "start work", "initial"]
    );
    assert_eq!(world.origin_file("src.txt").unwrap(), "issue's version\n");
    assert_eq!(world.origin_file("draft.txt").unwrap(), "draft\n");
    let parents = git(&world.origin, &["rev-list", "--parents", "-n1", BRANCH]);
    assert_eq!(
        parents.split(' ').count(),
        2,
        "not a merge commit: {parents}"
    );
    assert!(out.pushed);
}

#[test]
fn rebase_in_progress_is_left_alone_and_the_branch_not_the_half_rebased_head_is_pushed() {
    // given a Run killed in a conflicting rebase, with an unpushed commit
    let world = Checkouts::started();
    world.push_main_change("src.txt", "main's version\n");
    let unpushed = world.commit("src.txt", "issue's version\n", "issue changes src");
    git(&world.wt, &["fetch", "-q", "origin"]);
    assert!(!git_output(&world.wt, &["rebase", "origin/main"])
        .status
        .success());
    assert!(world.in_progress("rebase-merge"));

    // when it is salvaged
    let out = world.salvage();

    // then the rebase is still there, nothing was committed, the branch's own commit is pushed
    assert!(world.in_progress("rebase-merge"), "rebase left alone");
    assert_eq!(out.salvage_commit, None);
    assert!(out.error.is_some_and(|e| e.contains("rebase")));
    assert_eq!(world.origin_sha(BRANCH), Some(unpushed.clone()));
    assert_eq!(out.head, Some(unpushed));
    assert!(out.pushed && !out.nothing_to_keep);
    assert!(!world.origin_file("src.txt").unwrap().contains("<<<<<<<"));
}

#[test]
fn conflicted_files_without_a_merge_are_never_committed() {
    // given a Run killed with a conflicting `git stash pop` (unmerged paths, no MERGE_HEAD)
    let world = Checkouts::started();
    write(&world.wt.join("src.txt"), "stashed version\n");
    git(&world.wt, &["stash", "-q"]);
    let committed = world.commit("src.txt", "committed version\n", "issue changes src");
    assert!(!git_output(&world.wt, &["stash", "pop"]).status.success());
    assert!(!git(&world.wt, &["ls-files", "--unmerged"]).is_empty());

    // when it is salvaged
    let out = world.salvage();

    // then the conflict stays in the worktree, uncommitted; the clean commit is pushed
    assert_eq!(out.salvage_commit, None);
    assert!(out.error.is_some_and(|e| e.contains("unmerged")));
    assert!(!git(&world.wt, &["ls-files", "--unmerged"]).is_empty());
    assert!(read(&world.wt.join("src.txt")).contains("<<<<<<<"));
    assert_eq!(world.origin_sha(BRANCH), Some(committed));
    assert_eq!(world.origin_file("src.txt").unwrap(), "committed version\n");
    assert!(out.pushed && !out.nothing_to_keep);
}

#[test]
fn missing_worktree_is_reported_not_created() {
    // given a worktree folder that is gone, a plain folder, and a folder inside another checkout
    let world = Checkouts::started();
    let gone = world.tmp.path().join("wt-gone");
    let plain = world.tmp.path().join("plain");
    let inside = world.main.join("sub");
    write(&plain.join("file.txt"), "x\n");
    write(&inside.join("file.txt"), "x\n");
    let main_head = git(&world.main, &["rev-parse", "HEAD"]);

    for path in [&gone, &plain, &inside] {
        // when each is salvaged
        let out = salvage(&world.request(path));

        // then it is reported missing, and nothing is created, committed or pushed
        assert!(out.worktree_missing, "{}", path.display());
        assert!(out.error.is_some());
        assert!(!out.pushed && out.head.is_none() && out.commits.is_empty());
    }
    assert!(!gone.exists(), "not created");
    assert_eq!(git(&world.main, &["rev-parse", "HEAD"]), main_head);
    assert_eq!(git(&world.main, &["status", "--porcelain"]), "?? sub/");
    assert_eq!(world.origin_subjects(), ["start work", "initial"]);
}

#[test]
fn hooks_do_not_run() {
    // given hooks that fail and leave a mark, and that do run for an ordinary commit
    let world = Checkouts::started();
    let mark = world.tmp.path().join("hook-ran");
    let hooks = world.main.join(".git/hooks");
    for hook in ["pre-commit", "commit-msg", "post-commit", "pre-push"] {
        let script = format!("#!/bin/sh\ntouch '{}'\nexit 1\n", mark.display());
        write(&hooks.join(hook), &script);
        let executable = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(hooks.join(hook), executable).unwrap();
    }
    assert!(
        !git_output(&world.wt, &["commit", "--allow-empty", "-m", "x"])
            .status
            .success()
    );
    std::fs::remove_file(&mark).expect("the hook ran for an ordinary commit");
    world.make_dirty();

    // when the work is salvaged
    let out = world.salvage();

    // then the commit is made and pushed and no hook ran
    assert!(!mark.exists(), "a hook ran");
    assert!(
        out.salvage_commit.is_some() && out.pushed,
        "{:?}",
        out.error
    );
    assert_eq!(world.origin_subjects()[0], FAILED_RUN);
}

#[test]
fn nothing_is_force_pushed() {
    // given origin's Issue branch moved ahead by someone else, and a killed Run with work
    let world = Checkouts::started();
    world.commit("step.txt", "step\n", "unpushed step");
    world.make_dirty();
    let theirs = world.push_from_elsewhere(BRANCH, "theirs.txt", "theirs\n");

    // when the work is salvaged
    let out = world.salvage();

    // then the push is refused, origin is untouched, and the work is kept locally
    assert_eq!(world.origin_sha(BRANCH), Some(theirs));
    assert!(!out.pushed);
    assert!(out.error.is_some_and(|e| e.contains("[rejected]")));
    assert_eq!(out.head, Some(world.head()));
    assert_eq!(out.head, out.salvage_commit);
    assert_eq!(out.unpushed_commits, 2);
    assert_eq!(read(&world.wt.join("notes/todo.txt")), "untracked\n");
}

#[test]
fn repeated_salvage_makes_no_commit_and_reports_what_the_first_kept() {
    // given a killed Run's work salvaged once, and the pass that did it killed before it could
    // record the report
    let world = Checkouts::started();
    world.make_dirty();
    let first = world.salvage();
    assert!(first.pushed && first.salvage_commit.is_some());

    // when the next pass salvages it again
    let second = world.salvage();

    // then no commit is made, and the report is the first one's: its failed-run commit, the
    // commits it pushed and the dirty files it found, not "nothing to keep"
    assert_eq!(world.origin_sha(BRANCH), first.head);
    assert_eq!(second, first);
}

#[test]
fn salvage_killed_after_its_commit_is_finished_by_the_repeat_with_that_commit() {
    // given a salvage that committed the Run's work but was killed before it pushed or wrote
    // down what it did (simulated: origin unreachable, then its progress file removed)
    let world = Checkouts::started();
    world.make_dirty();
    let real = git(&world.main, &["remote", "get-url", "origin"]);
    let gone = world.tmp.path().join("gone.git");
    git(
        &world.main,
        &["remote", "set-url", "origin", gone.to_str().unwrap()],
    );
    let first = world.salvage();
    assert!(!first.pushed && first.salvage_commit.is_some());
    let progress = git(&world.wt, &["rev-parse", "--git-path", "thirdshift"]);
    std::fs::remove_dir_all(world.wt.join(progress)).expect("progress removed");
    git(&world.main, &["remote", "set-url", "origin", &real]);

    // when the next pass salvages it again
    let second = world.salvage();

    // then it makes no second commit, pushes the first one and reports it as the salvage commit
    assert!(second.pushed && !second.nothing_to_keep);
    assert_eq!(second.salvage_commit, first.salvage_commit);
    assert_eq!(second.commits, first.commits);
    assert_eq!(world.origin_sha(BRANCH), first.head);
}

#[test]
fn a_later_claim_in_the_same_worktree_does_not_inherit_an_earlier_salvage() {
    // given a worktree salvaged for one Claim
    let world = Checkouts::started();
    world.make_dirty();
    let first = world.salvage();
    assert!(first.pushed && first.salvage_commit.is_some());

    // when a later Claim's Run, which did nothing in it, is salvaged
    let mut later = world.request(&world.wt);
    later.claim_id = "c-2";
    let second = salvage(&later);

    // then no commit is made and nothing is reported kept
    assert_eq!(second.salvage_commit, None);
    assert!(second.commits.is_empty());
    assert!(second.pushed && second.nothing_to_keep);
    assert_eq!(second.head, first.head);
    assert_eq!((second.dirty_files, second.unpushed_commits), (0, 0));
    assert_eq!(second.error, None);
}

#[test]
fn work_already_on_origin_makes_no_commit() {
    // given uncommitted work whose content origin's Issue branch already has
    let world = Checkouts::started();
    let theirs = world.push_from_elsewhere(BRANCH, "src.txt", "same\n");
    write(&world.wt.join("src.txt"), "same\n");
    let before = world.head();

    // when it is salvaged
    let out = world.salvage();

    // then nothing is committed or pushed
    assert_eq!(out.salvage_commit, None);
    assert_eq!(world.head(), before);
    assert_eq!(world.origin_sha(BRANCH), Some(theirs));
    assert!(out.commits.is_empty() && out.nothing_to_keep);
    assert_eq!(out.dirty_files, 1);
}

#[test]
fn a_detached_head_is_committed_in_place_and_pushed_to_a_branch_of_its_own() {
    // given a Run killed on a detached HEAD with an unpushed commit and dirty files
    let world = Checkouts::started();
    git(&world.wt, &["checkout", "-q", "--detach"]);
    let branch_before = git(&world.wt, &["rev-parse", BRANCH]);
    let origin_before = world.origin_sha(BRANCH);
    world.commit("step.txt", "step\n", "unpushed step");
    world.make_dirty();

    // when it is salvaged
    let out = world.salvage();

    // then HEAD stays detached and the local branch is not moved; the work went to a branch
    // named after the Claim, which the report names, and the Issue branch on origin is untouched
    assert!(!git_output(&world.wt, &["symbolic-ref", "-q", "HEAD"])
        .status
        .success());
    assert_eq!(git(&world.wt, &["rev-parse", BRANCH]), branch_before);
    assert_eq!(out.branch, "thirdshift/salvage/c-1");
    assert_eq!(world.origin_sha(&out.branch), Some(world.head()));
    assert_eq!(world.origin_sha(BRANCH), origin_before);
    assert!(out.pushed);
}

#[test]
fn a_worktree_on_another_branch_is_never_pushed_onto_the_claims_branch() {
    // given a Run whose worktree moved to another Run's branch, with dirty files
    let world = Checkouts::started();
    git(&world.wt, &["checkout", "-q", "-b", "issue-8"]);
    let origin_before = world.origin_sha(BRANCH);
    world.make_dirty();

    // when it is salvaged as Claim c-1 on issue-7
    let out = world.salvage();

    // then neither issue-7 nor issue-8 on origin got the work: the salvage's own branch did
    assert_eq!(world.origin_sha(BRANCH), origin_before);
    assert_eq!(world.origin_sha("issue-8"), None);
    assert_eq!(out.branch, "thirdshift/salvage/c-1");
    assert_eq!(world.origin_sha(&out.branch), Some(world.head()));
}

/// Re-runs test `name` alone in a child process with `env` set; true when running as that child.
fn in_child(name: &str, env: &[(&str, &Path)]) -> bool {
    if std::env::var_os("SALVAGE_TEST_CHILD").is_some() {
        return true;
    }
    // The test's path as libtest names it: this module's path without the binary's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", &format!("{module}::{name}")])
        .env("SALVAGE_TEST_CHILD", "1");
    for (key, value) in env {
        cmd.env(key, value);
    }
    let child = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "the child test failed: {stdout}");
    assert!(
        stdout.contains("1 passed"),
        "the child test did not run: {stdout}"
    );
    false
}

#[test]
fn parent_git_environment_does_not_leak_in() {
    // given (in a child test process) GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE pointing elsewhere
    let decoy = TempDir::new().unwrap();
    let (dir, index) = (decoy.path().join("decoy.git"), decoy.path().join("index"));
    let env = [
        ("GIT_DIR", dir.as_path()),
        ("GIT_WORK_TREE", decoy.path()),
        ("GIT_INDEX_FILE", index.as_path()),
    ];
    if !in_child("parent_git_environment_does_not_leak_in", &env) {
        return;
    }
    let world = Checkouts::started();
    world.make_dirty();

    // when the work is salvaged
    let out = world.salvage();

    // then it is the worktree's work that reaches origin
    assert!(out.pushed, "{:?}", out.error);
    assert_eq!(world.origin_subjects()[0], FAILED_RUN);
}

#[test]
fn without_a_configured_identity_the_commit_is_made_as_thirdshift() {
    // given (in a child test process) an empty HOME, and a repository with no identity
    let home = TempDir::new().unwrap();
    let env = [("HOME", home.path()), ("XDG_CONFIG_HOME", home.path())];
    if !in_child(
        "without_a_configured_identity_the_commit_is_made_as_thirdshift",
        &env,
    ) {
        return;
    }
    let world = Checkouts::started();
    git(&world.main, &["config", "--unset", "user.name"]);
    git(&world.main, &["config", "--unset", "user.email"]);
    world.make_dirty();

    // when the work is salvaged
    let out = world.salvage();

    // then the salvage commit is authored and committed by the fallback identity
    assert!(out.pushed, "{:?}", out.error);
    let who = git(
        &world.origin,
        &["log", "-1", "--format=%an <%ae>|%cn <%ce>", BRANCH],
    );
    assert_eq!(
        who,
        "thirdshift <thirdshift@localhost>|thirdshift <thirdshift@localhost>"
    );
}
