//! `run` around real agent factories (issue #36), with real processes, real signals and real
//! git: the Issue branch is the one the worktree is on (thirdshift's `issue-N-branch-2`), a
//! command that stops its own children gets the stop signal alone and its full grace, a Run's
//! own end reads origin before choosing labels, and the label conventions follow the config
//! (`labels.preset: thirdshift` gives thirdshift's own).

use crate::harness;
use crate::support::origin;

use std::path::{Path, PathBuf};
use std::time::Duration;

use github_emulator::PullState;
use harness::*;
use origin::{git, Origin};
use thirdshift_reconciler::protocol::record::Outcome;

/// Given: an emulator reading branches from a real bare origin, a Ready issue, and the origin's
/// working clone (the Run's worktree) on `branch` (`{n}` in it is the issue number).
async fn setup(title: &str, branch: &str) -> (World, Origin, u64, String) {
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let issue = world.ready_issue(title);
    let branch = branch.replace("{n}", &issue.to_string());
    git(&origin.work, &["checkout", "--quiet", "-b", &branch]);
    (world, origin, issue, branch)
}

/// Given: the config file `yaml`, in the World's folder.
fn config(world: &World, yaml: &str) -> PathBuf {
    let path = world.dir.path().join("thirdshift.yml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// When: a Run on `issue` with its worktree `work`, the config `config` (if any), runs `script`.
async fn start(
    world: &World,
    issue: u64,
    work: &Path,
    config: Option<&Path>,
    script: &str,
) -> LiveRun {
    let w = work.display().to_string();
    let mut options = vec!["--worktree".to_string(), w];
    if let Some(c) = config {
        options.extend(["--config".to_string(), c.display().to_string()]);
    }
    let refs: Vec<&str> = options.iter().map(String::as_str).collect();
    start_run_with(world, "h1", issue, &refs, script).await
}

/// Waits for the Run process to exit by itself (at most `secs`); its exit code.
async fn exit_code(run: &mut LiveRun, secs: u64) -> Option<i32> {
    let status = tokio::time::timeout(Duration::from_secs(secs), run.child.wait())
        .await
        .expect("the Run ends in time")
        .expect("wait for the Run");
    status.code()
}

/// A command that, on TERM, stops its child with USR1 (a signal of its own choosing, as
/// thirdshift stops a Codex Harness with SIGINT) a second later, writes `cleanup.txt` into `work`
/// and takes `secs` more to finish; its child writes which signal reached it first (`usr1`, or
/// `term` when the stop reached it directly) into the returned file. The command creates
/// `<that file>.armed` once both its trap and its child's are set. (The second is no wait for
/// anything: a child the stop never reaches writes `usr1` however late it comes; it only keeps a
/// stop that reached the child directly from racing the command's USR1.)
fn stops_its_own_child(world: &World, work: &Path, secs: u32) -> (String, PathBuf) {
    let seen = world.dir.path().join("child-saw");
    let script = format!(
        "sh -c 'trap \"echo usr1 > {s}; exit 0\" USR1; trap \"echo term > {s}; exit 1\" TERM; \
         touch {s}.child; while :; do sleep 0.2; done' & child=$!; \
         trap 'sleep 1; kill -USR1 $child; wait $child; echo cleanup > {w}/cleanup.txt; sleep {secs}; \
         exit 0' TERM; while [ ! -f {s}.child ]; do sleep 0.05; done; touch {s}.armed; \
         while :; do sleep 1; done",
        s = seen.display(),
        w = work.display()
    );
    (script, seen)
}

/// Waits until the command of [`stops_its_own_child`] has set its traps.
async fn armed(seen: &Path) {
    let armed = seen.with_extension("armed");
    wait_until("the command to set its traps", STEP, || armed.exists()).await;
}

/// The binary, for a command that reports a stage from inside its Run.
fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_thirdshift-reconciler")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_on_a_later_issue_branch_has_its_work_pushed_to_that_branch_only() {
    // Given a Run whose worktree is on thirdshift's later Issue branch `issue-N-branch-2`,
    // with a file left uncommitted
    let (world, origin, issue, branch) = setup("later branch", "issue-{n}-branch-2").await;
    std::fs::write(origin.work.join("draft.txt"), "half-written").unwrap();
    let run = start(&world, issue, &origin.work, None, "sleep 600").await;
    let claimed = world.ownership(issue).owner.expect("claimed").record;
    assert_eq!(claimed.branch.as_deref(), Some(branch.as_str()));
    // When it is killed outright and its host passes
    run.kill_all().await;
    observe_reconcile(&world, "h1").await;
    // Then its work reached `issue-N-branch-2` on origin, and no `issue-N` branch was made
    let log = origin.log(&branch);
    assert_eq!(
        log.first().map(String::as_str),
        Some("thirdshift: failed run (killed)")
    );
    assert!(origin.log(&format!("issue-{issue}")).is_empty());
    let end = &ends(&world, issue)[0];
    let kept = end.kept.as_ref().expect("kept work");
    assert_eq!(kept.branch, branch);
    assert!(kept.pushed, "{kept:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_forwarded_stop_lets_the_command_stop_its_own_child_within_the_grace() {
    // Given Runs of this kind configured as thirdshift needs them: the stop signal to the
    // command alone, and a grace longer than its 20 s of cleanup
    let (world, origin, issue, branch) = setup("slow stop", "issue-{n}").await;
    let config = config(
        &world,
        "run:\n  kinds:\n    ticket:\n      forward: leader\n      kill_grace_secs: 60\n",
    );
    // And a command that, on TERM, stops its child with a signal of its own choosing (USR1),
    // writes a file and takes 20 s to finish; its child notes which signal reached it
    let (script, seen) = stops_its_own_child(&world, &origin.work, 20);
    let mut run = start(&world, issue, &origin.work, Some(&config), &script).await;
    armed(&seen).await;
    // When the Run is asked to stop
    let pid = run.child.id().expect("the Run runs");
    // SAFETY: kill(2) of the Run process this test started.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    // Then only the command got the signal: its child was stopped by the command itself
    assert_eq!(exit_code(&mut run, 90).await, Some(128 + libc::SIGTERM));
    let child_saw = std::fs::read_to_string(&seen).unwrap_or_default();
    assert_eq!(child_saw.trim(), "usr1");
    // And the command was not killed before it finished: the end is a hand-back, not a kill,
    // with the file its cleanup wrote pushed to the Issue branch
    let end = &ends(&world, issue)[0];
    assert_eq!(end.outcome, Outcome::HandedBack);
    assert!(!end.reason.contains("SIGKILL"), "{}", end.reason);
    let kept = end.kept.as_ref().expect("kept work");
    assert!(kept.pushed, "{kept:?}");
    let files = git(&origin.bare, &["ls-tree", "--name-only", &branch]);
    assert!(files.contains("cleanup.txt"), "{files}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_whose_worktree_is_gone_and_whose_branch_never_reached_origin_is_requeued() {
    // Given a Run that reported a stage of its own, whose factory then removed its worktree
    // (nothing pushed), and whose command failed
    let (world, origin, issue, branch) = setup("worktree gone", "issue-{n}").await;
    let script = format!(
        "'{bin}' stage implementing || exit 9; rm -rf '{w}'; exit 3",
        bin = bin(),
        w = origin.work.display()
    );
    let mut run = start(&world, issue, &origin.work, None, &script).await;
    assert_eq!(exit_code(&mut run, 60).await, Some(3));
    // Then its own end read origin, found nothing there, and put the issue back in the queue
    assert!(origin.log(&branch).is_empty());
    let end = &ends(&world, issue)[0];
    assert_eq!(end.outcome, Outcome::Failed);
    assert!(
        end.kept.as_ref().is_some_and(|k| k.worktree_missing),
        "{end:?}"
    );
    let labels = world.labels(issue);
    assert!(labels.contains(&READY.to_string()), "{labels:?}");
    assert!(!labels.contains(&IN_PROGRESS.to_string()), "{labels:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thirdshift_preset_keeps_the_claim_on_a_done_run_with_an_open_pull_request() {
    // Given thirdshift's label conventions, and a Run whose pull request is open
    let (world, origin, issue, branch) = setup("done with a PR", "issue-{n}").await;
    let config = config(&world, "labels:\n  preset: thirdshift\n");
    origin.push_commit(&branch, "the work");
    world
        .sim
        .create_pull(BOT, &branch, "Fix it", PullState::Open);
    // When its command finishes
    let mut run = start(
        &world,
        issue,
        &origin.work,
        Some(&config),
        "sleep 1; exit 0",
    )
    .await;
    assert_eq!(exit_code(&mut run, 60).await, Some(0));
    // Then the issue keeps `in-progress` while the pull request waits for review
    let end = &ends(&world, issue)[0];
    assert_eq!(end.outcome, Outcome::Done);
    assert_eq!(
        end.labels_after.as_deref(),
        Some(&[IN_PROGRESS.to_string()][..])
    );
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
    // And a reconcile pass leaves it so
    let out = world
        .cli("ci")
        .args(["--config", config.to_str().unwrap(), "reconcile"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thirdshift_preset_labels_a_failed_run_with_work_on_origin_agent_failed() {
    // Given thirdshift's label conventions, and a Run whose Issue branch is on origin
    let (world, origin, issue, branch) = setup("failed with work", "issue-{n}").await;
    let config = config(&world, "labels:\n  preset: thirdshift\n");
    origin.push_commit(&branch, "the work so far");
    // When its command fails
    let mut run = start(
        &world,
        issue,
        &origin.work,
        Some(&config),
        "sleep 1; exit 2",
    )
    .await;
    assert_eq!(exit_code(&mut run, 60).await, Some(2));
    // Then the issue keeps its Claim and is labelled `agent-failed`, as thirdshift's own
    // Failed run labels it
    let labels = world.labels(issue);
    assert!(labels.contains(&"agent-failed".to_string()), "{labels:?}");
    assert!(labels.contains(&IN_PROGRESS.to_string()), "{labels:?}");
    assert!(!labels.contains(&READY.to_string()), "{labels:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_carried_out_by_the_host_honours_a_leader_forwarded_stop() {
    // Given Runs whose stop goes to the command alone, and such a command at work
    let (world, origin, issue, _) = setup("cancelled slowly", "issue-{n}").await;
    let config = config(&world, "run:\n  forward: leader\n  kill_grace_secs: 30\n");
    let (script, seen) = stops_its_own_child(&world, &origin.work, 2);
    let mut run = start(&world, issue, &origin.work, Some(&config), &script).await;
    armed(&seen).await;
    // When a person cancels it and its host carries the cancel out
    cancel_and_observe(&world, issue, &config).await;
    // Then the stop reached the command alone, which stopped its child itself, unkilled
    exit_code(&mut run, 60).await;
    let child_saw = std::fs::read_to_string(&seen).unwrap_or_default();
    assert_eq!(child_saw.trim(), "usr1");
    let end = &ends(&world, issue)[0];
    assert_eq!(end.outcome, Outcome::Cancelled);
    assert!(!end.reason.contains("SIGKILL"), "{}", end.reason);
}
