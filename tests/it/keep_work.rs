//! A dead Run's work is kept the way a failed Run's is, with real git: a bare origin the emulator
//! reads branches from, and the Run's worktree. Salvage commits and pushes what the Run left
//! (never before its writers are gone, never with force), the end record says where the work is
//! and how to resume, and the continue policy re-queues an issue a bounded number of times.

use crate::harness;
#[allow(dead_code)]
use crate::support::keys;
#[allow(dead_code)]
use crate::support::origin;

use std::path::Path;
use std::time::Duration;

use github_emulator::{Permission, SimApp};
use harness::*;
use origin::{git, Origin};
use thirdshift_reconciler::host::signal_session;
use thirdshift_reconciler::protocol::record::Outcome;

const HUMAN: &str = "ready-for-human";

/// Given: an emulator reading branches from a real bare origin, and a Ready issue whose Issue
/// branch is checked out in the origin's working clone (the Run's worktree).
async fn setup(title: &str) -> (World, Origin, u64, String) {
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let issue = world.ready_issue(title);
    let branch = format!("issue-{issue}");
    git(&origin.work, &["checkout", "--quiet", "-b", &branch]);
    (world, origin, issue, branch)
}

/// A commit in the worktree that is not pushed, and dirty files next to it.
fn edit(work: &Path, step: &str) {
    std::fs::write(work.join(format!("{step}.txt")), step).unwrap();
    git(work, &["add", "."]);
    git(work, &["commit", "--quiet", "-m", step]);
    std::fs::write(work.join("draft.txt"), format!("half-written after {step}")).unwrap();
}

fn run_options(work: &Path) -> Vec<String> {
    let w = work.display().to_string();
    [
        "--worktree",
        &w,
        "--harness",
        "claude",
        "--session",
        "sess-1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

async fn start(world: &World, issue: u64, work: &Path, script: &str) -> LiveRun {
    let options = run_options(work);
    let refs: Vec<&str> = options.iter().map(String::as_str).collect();
    start_run_with(world, "h1", issue, &refs, script).await
}

fn origin_log(origin: &Origin, branch: &str) -> Vec<String> {
    origin.log(branch)
}

/// The `post-receive` hook of [`count_ends_at_each_push`]: PYTHON, URL, TOKEN and OUT replaced.
const COUNT_ENDS_HOOK: &str = r#"#!PYTHON
import json, urllib.request
req = urllib.request.Request("URL", headers={"Authorization": "token TOKEN"})
bodies = [c["body"] for c in json.load(urllib.request.urlopen(req))]
ends = sum(1 for b in bodies for line in b.splitlines() if line.startswith("<!-- thirdshift:v1:end "))
open("OUT", "a").write(f"{ends}\n")
"#;

/// Makes origin note, as each push lands (its `post-receive` hook, which git runs before the push
/// returns), how many end records the issue's comments held at that moment on the emulator;
/// returns the file the counts go to, one line per push.
fn count_ends_at_each_push(world: &World, origin: &Origin, issue: u64) -> std::path::PathBuf {
    let out = origin.bare.join("ends-at-push");
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let url = format!(
        "{}/repos/{}/issues/{issue}/comments?per_page=100",
        world.server.url,
        world.sim.repo_full_name()
    );
    let hook = COUNT_ENDS_HOOK
        .replace("PYTHON", String::from_utf8(python.stdout).unwrap().trim())
        .replace("URL", &url)
        .replace("TOKEN", BOT_TOKEN)
        .replace("OUT", &out.to_string_lossy());
    let path = origin.bare.join("hooks/post-receive");
    std::fs::write(&path, hook).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_killed_mid_edit_has_its_work_pushed_and_is_handed_to_people() {
    let (world, origin, issue, branch) = setup("killed mid-edit").await;
    // Given a Run killed with one unpushed commit and dirty files in its worktree
    edit(&origin.work, "first-step");
    let run = start(&world, issue, &origin.work, "sleep 600").await;
    run.kill_all().await;
    // When its host passes
    observe_reconcile(&world, "h1").await;
    // Then origin's Issue branch holds the commit and a failed-run commit with the dirty files
    let log = origin_log(&origin, &branch);
    assert_eq!(
        log[..2],
        ["thirdshift: failed run (killed)", "first-step"],
        "{log:?}"
    );
    let files = git(&origin.work, &["ls-tree", "--name-only", "HEAD"]);
    assert!(
        files.contains("draft.txt") && files.contains("first-step.txt"),
        "{files}"
    );
    // And the end record names both commits, and the issue goes to people with the resume command
    let end = &ends(&world, issue)[0];
    let kept = end.kept.as_ref().expect("kept work in the end record");
    assert!(kept.pushed);
    assert_eq!(kept.commits.len(), 2, "{kept:?}");
    let resume = format!("cd {} && claude --resume sess-1", origin.work.display());
    assert_eq!(end.resume.as_deref(), Some(resume.as_str()));
    assert_eq!(end.session.as_deref(), Some("sess-1"));
    let labels = world.labels(issue);
    assert!(labels.contains(&HUMAN.to_string()) && !labels.contains(&READY.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_origin_is_unreachable_keeps_everything_and_is_not_requeued() {
    let (world, origin, issue, _) = setup("no origin").await;
    // Given a Run with work whose origin cannot be reached, killed outright
    edit(&origin.work, "first-step");
    git(
        &origin.work,
        &["remote", "set-url", "origin", "/nonexistent/origin.git"],
    );
    let run = start(&world, issue, &origin.work, "sleep 600").await;
    run.kill_all().await;
    // When its host passes
    observe_reconcile(&world, "h1").await;
    // Then nothing is deleted, the end record says where the work is, and people get the issue
    assert!(origin.work.join("draft.txt").exists() && origin.work.join("first-step.txt").exists());
    let end = &ends(&world, issue)[0];
    let kept = end.kept.as_ref().expect("kept");
    assert!(!kept.pushed && kept.error.is_some(), "{kept:?}");
    assert_eq!(Path::new(&kept.worktree), origin.work.as_path());
    assert_eq!(
        kept.head.as_deref(),
        Some(git(&origin.work, &["rev-parse", "HEAD"]).as_str())
    );
    let labels = world.labels(issue);
    assert!(labels.contains(&HUMAN.to_string()) && !labels.contains(&READY.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_killed_before_any_work_is_requeued_without_an_empty_commit() {
    let (world, origin, issue, branch) = setup("no work").await;
    let before = git(&origin.work, &["rev-parse", "HEAD"]);
    // Given a Run killed before it changed anything
    let run = start(&world, issue, &origin.work, "sleep 600").await;
    run.kill_all().await;
    // When its host passes
    observe_reconcile(&world, "h1").await;
    // Then nothing was committed or pushed and the issue is Ready again
    assert_eq!(git(&origin.work, &["rev-parse", "HEAD"]), before);
    assert!(
        origin_log(&origin, &branch).is_empty(),
        "no branch on origin"
    );
    assert!(
        ends(&world, issue)[0]
            .kept
            .as_ref()
            .unwrap()
            .nothing_to_keep
    );
    assert!(world.labels(issue).contains(&READY.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn salvage_waits_until_no_writer_of_the_run_is_alive() {
    let (world, origin, issue, branch) = setup("writer alive").await;
    edit(&origin.work, "first-step");
    // Given a Run killed while its command still runs
    let mut run = start(&world, issue, &origin.work, "sleep 600").await;
    run.kill_run_only().await;
    // When its host passes
    observe_reconcile(&world, "h1").await;
    // Then nothing was committed or pushed: the writer may still be writing
    assert!(origin_log(&origin, &branch).is_empty());
    assert_eq!(
        git(&origin.work, &["log", "-1", "--format=%s"]),
        "first-step"
    );
    assert!(ends(&world, issue).is_empty());
    // When the writer is gone and the host passes again
    run.kill_all().await;
    observe_reconcile(&world, "h1").await;
    // Then the work is salvaged
    assert_eq!(
        origin_log(&origin, &branch)[0],
        "thirdshift: failed run (killed)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_policy_requeues_twice_with_the_session_then_hands_to_people() {
    let (world, origin, issue, _) = setup("continued").await;
    let config = world.dir.path().join("continue.yml");
    std::fs::write(
        &config,
        // (the failure limit raised past the deaths, so the continuation count decides)
        "recovery:\n  on_dead: continue\n  max_continuations: 2\n  max_failures: 4\n",
    )
    .unwrap();
    let mut seen = Vec::new();
    for round in 0..3 {
        // Given a Run that records its environment, does some work and is killed outright
        let env_file = world.dir.path().join(format!("env-{round}"));
        // (written aside and renamed, so it is read whole)
        let script = format!(
            "env | grep '^THIRDSHIFT_' > '{f}.tmp'; mv '{f}.tmp' '{f}'; sleep 600",
            f = env_file.display()
        );
        let mut options = run_options(&origin.work);
        options.splice(0..0, ["--config".to_string(), config.display().to_string()]);
        let refs: Vec<&str> = options.iter().map(String::as_str).collect();
        let run = start_run_with(&world, "h1", issue, &refs, &script).await;
        wait_until("the command to record its environment", STEP, || {
            env_file.exists()
        })
        .await;
        seen.push(std::fs::read_to_string(&env_file).unwrap());
        edit(&origin.work, &format!("step-{round}"));
        run.kill_all().await;
        // When its host passes (with the continue policy)
        let out = world
            .cli("h1")
            .arg("--config")
            .arg(&config)
            .args(["observe", "--reconcile"])
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // Then the first two deaths were continued and the third handed to people
    let outcomes: Vec<Outcome> = ends(&world, issue).iter().map(|e| e.outcome).collect();
    assert_eq!(
        outcomes,
        [Outcome::Continued, Outcome::Continued, Outcome::Recovered]
    );
    assert!(world.labels(issue).contains(&HUMAN.to_string()));
    // And the continued Runs were told what to resume
    assert!(
        !seen[0].contains("THIRDSHIFT_RESUME_SESSION"),
        "{}",
        seen[0]
    );
    for env in &seen[1..] {
        assert!(env.contains("THIRDSHIFT_RESUME_SESSION=sess-1"), "{env}");
        assert!(env.contains("THIRDSHIFT_RESUME_HARNESS=claude"), "{env}");
        assert!(
            env.contains(&format!("THIRDSHIFT_BRANCH=issue-{issue}")),
            "{env}"
        );
        let resume = format!(
            "THIRDSHIFT_RESUME_COMMAND=cd {} && claude --resume sess-1",
            origin.work.display()
        );
        assert!(env.contains(&resume), "{env}");
    }
    // And every Run's command could find this binary
    for env in &seen {
        assert!(env.contains("THIRDSHIFT_BIN=/"), "{env}");
    }
}

/// A script that waits until the returned file exists, then runs `then`; after 60 s without
/// it, exits 97 saying so.
fn gated(world: &World, name: &str, then: &str) -> (String, std::path::PathBuf) {
    let gate = world.dir.path().join(name);
    let script = format!(
        "i=0; while [ ! -e '{g}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; \
         [ -e '{g}' ] || {{ echo 'the gate never opened' >&2; exit 97; }}; {then}",
        g = gate.display()
    );
    (script, gate)
}

/// Waits for the Run process to exit by itself; its exit code.
async fn exit_code(run: &mut LiveRun) -> Option<i32> {
    let status = tokio::time::timeout(Duration::from_secs(60), run.child.wait())
        .await
        .expect("the Run ends within a minute")
        .expect("wait for the Run");
    status.code()
}

/// Makes the first push from `work` hang (its receive-pack sleeps) and later ones go through;
/// the future resolves to the hanging process's PID once that first push has started.
fn hang_first_push(world: &World, work: &Path) -> impl std::future::Future<Output = String> {
    let hang = world.dir.path().join("hang");
    let pid_file = world.dir.path().join("hung-pid");
    let wrapper = world.dir.path().join("receive-pack");
    let script = format!(
        "#!/bin/sh\nif mkdir '{}' 2>/dev/null; then echo $$ > '{}'; exec sleep 600; fi\n\
         exec git-receive-pack \"$@\"\n",
        hang.display(),
        pid_file.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let receive = wrapper.display().to_string();
    git(work, &["config", "remote.origin.receivepack", &receive]);
    async move {
        for _ in 0..1500 {
            if let Ok(pid) = std::fs::read_to_string(&pid_file) {
                if pid.ends_with('\n') {
                    return pid.trim().to_string();
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the first push never started");
    }
}

/// Starts a Run with work in its worktree whose command ends with `then` once let go; the Run's
/// exit code.
async fn run_ending_with(world: &World, issue: u64, work: &Path, then: &str) -> Option<i32> {
    let (script, gate) = gated(world, "end", then);
    let mut run = start(world, issue, work, &script).await;
    std::fs::write(&gate, "").unwrap();
    exit_code(&mut run).await
}

/// Nothing of the worktree was committed or pushed: no Issue branch on origin, the Run's own
/// commit still the last one, its draft still uncommitted.
fn assert_nothing_salvaged(origin: &Origin, branch: &str) {
    let log = origin_log(origin, branch);
    assert!(log.is_empty(), "no branch on origin: {log:?}");
    assert_eq!(
        git(&origin.work, &["log", "-1", "--format=%s"]),
        "first-step"
    );
    assert!(origin.work.join("draft.txt").exists());
}

/// Origin's Issue branch holds the unpushed commit under a failed-run commit with the dirty file,
/// and the single end record says so; the issue is with people.
fn assert_kept_on_origin(world: &World, origin: &Origin, issue: u64, subject: &str) {
    let branch = format!("issue-{issue}");
    let log = origin_log(origin, &branch);
    assert_eq!(log[..2], [subject, "first-step"], "{log:?}");
    let tree = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&origin.bare)
        .args(["ls-tree", "--name-only", &branch])
        .output()
        .unwrap();
    let files = String::from_utf8_lossy(&tree.stdout);
    assert!(files.contains("draft.txt"), "{files}");
    let ends = ends(world, issue);
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0].outcome, Outcome::Failed);
    let kept = ends[0].kept.as_ref().expect("kept work in the end record");
    assert!(kept.pushed && kept.salvage_commit.is_some(), "{kept:?}");
    assert_eq!(kept.commits.len(), 2, "{kept:?}");
    let labels = world.labels(issue);
    assert!(labels.contains(&HUMAN.to_string()), "{labels:?}");
    assert!(!labels.contains(&READY.to_string()) && !labels.contains(&IN_PROGRESS.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_fails_pushes_its_work_before_ending_failed() {
    let (world, origin, issue, _) = setup("command fails").await;
    // Given a Run with an unpushed commit and a dirty file whose command then exits 1
    edit(&origin.work, "first-step");
    // When the Run ends by itself
    assert_eq!(
        run_ending_with(&world, issue, &origin.work, "exit 1").await,
        Some(1)
    );
    // Then both reached origin in a failed-run commit, the end record says so, people have it
    assert_kept_on_origin(
        &world,
        &origin,
        issue,
        "thirdshift: failed run (exit status 1)",
    );
    // And nothing is left in the worktree uncommitted
    assert_eq!(git(&origin.work, &["status", "--porcelain"]), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_session_is_killed_pushes_its_work_once() {
    let (world, origin, issue, branch) = setup("session killed").await;
    // Given a Run with an unpushed commit and a dirty file
    edit(&origin.work, "first-step");
    let mut run = start(&world, issue, &origin.work, "sleep 600").await;
    // When its command's whole session is killed with SIGKILL (the Run survives)
    signal_session(run.sid, libc::SIGKILL);
    assert_eq!(exit_code(&mut run).await, Some(128 + libc::SIGKILL));
    // Then its work is on origin in a failed-run commit naming the signal
    assert_kept_on_origin(
        &world,
        &origin,
        issue,
        "thirdshift: failed run (killed by SIGKILL)",
    );
    // And a later pass of its host salvages nothing more and ends nothing more
    observe_reconcile(&world, "h1").await;
    let failed_runs = origin_log(&origin, &branch)
        .into_iter()
        .filter(|s| s.starts_with("thirdshift: failed run"))
        .count();
    assert_eq!(failed_runs, 1);
    assert_eq!(ends(&world, issue).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_that_finishes_delivers_its_own_work_and_nothing_is_salvaged() {
    let (world, origin, issue, branch) = setup("finishes").await;
    // Given a Run with an unpushed commit and a dirty file whose command exits 0
    edit(&origin.work, "first-step");
    // When the Run ends
    assert_eq!(
        run_ending_with(&world, issue, &origin.work, "exit 0").await,
        Some(0)
    );
    // Then nothing was committed or pushed for it, and the end record keeps nothing
    assert_nothing_salvaged(&origin, &branch);
    let end = &ends(&world, issue)[0];
    assert_eq!(end.outcome, Outcome::Done);
    assert!(end.kept.is_none(), "{:?}", end.kept);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_that_finished_is_not_salvaged_when_a_stale_list_hides_its_end_record() {
    let (world, origin, issue, branch) = setup("finished, end hidden").await;
    // Given a Run with an unpushed commit and a dirty file whose command exits 0, and comment
    // lists that keep its end record (the second comment it writes) hidden for 30 list reads
    edit(&origin.work, "first-step");
    world.sim.lag_next_comments(&[0, 30]);
    run_ending_with(&world, issue, &origin.work, "exit 0").await;
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Done);
    // When its host observes, the Run's PID gone, until a pass completes (one may fail while
    // the list is behind)
    let mut passes = 0;
    while passes < 10 && world.exec("h1", &["observe"]).await.status.code() != Some(0) {
        passes += 1;
    }
    assert!(passes < 10, "observe never completed");
    // (the lists did hide the end record from those reads)
    let lagged = world.sim.fault_counts();
    assert!(lagged.hidden_comments > 0, "{lagged:?}");
    // Then nothing of the finished Run's worktree was committed or pushed as a failed run
    assert_nothing_salvaged(&origin, &branch);
    assert_eq!(ends(&world, issue).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_killed_mid_salvage_is_salvaged_again_by_its_host_without_a_second_commit() {
    let (world, origin, issue, branch) = setup("killed mid-salvage").await;
    // Given a Run whose first push to origin hangs (its receive-pack waits), with work to keep
    let hung_pid = hang_first_push(&world, &origin.work);
    edit(&origin.work, "first-step");
    let (script, gate) = gated(&world, "fail", "exit 1");
    let mut run = start(&world, issue, &origin.work, &script).await;
    std::fs::write(&gate, "").unwrap();
    // When the Run is killed outright while it pushes its salvage commit
    let hung = hung_pid.await;
    run.kill_run_only().await;
    std::process::Command::new("kill")
        .args(["-9", &hung])
        .status()
        .unwrap();
    assert_eq!(
        git(&origin.work, &["log", "-1", "--format=%s"]),
        "thirdshift: failed run (exit status 1)"
    );
    // And its host proves it dead and passes
    observe_reconcile(&world, "h1").await;
    // Then origin holds the Run's salvage commit, and no second one was made
    let log = origin_log(&origin, &branch);
    assert_eq!(
        log[..2],
        ["thirdshift: failed run (exit status 1)", "first-step"],
        "{log:?}"
    );
    let end = &ends(&world, issue)[0];
    assert_eq!(end.outcome, Outcome::Recovered);
    // And the end record reports the Run's own salvage commit, which its host's repeat found
    let kept = end.kept.as_ref().expect("kept");
    let salvage_commit = git(&origin.work, &["rev-parse", "HEAD"]);
    assert!(kept.pushed && !kept.nothing_to_keep, "{kept:?}");
    assert_eq!(
        kept.salvage_commit.as_deref(),
        Some(salvage_commit.as_str())
    );
    assert_eq!(kept.commits.len(), 2, "{kept:?}");
    assert!(world.labels(issue).contains(&HUMAN.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_leaves_a_writer_behind_leaves_the_worktree_alone_and_says_where() {
    let (world, origin, issue, branch) = setup("writer left behind").await;
    let config = world.dir.path().join("grace.yml");
    std::fs::write(&config, "run:\n  kill_grace_secs: 1\n").unwrap();
    // Given a Run with work whose command fails but leaves a process of its session running
    edit(&origin.work, "first-step");
    let (script, gate) = gated(&world, "fail", "sleep 600 & exit 1");
    let mut options = run_options(&origin.work);
    options.splice(0..0, ["--config".to_string(), config.display().to_string()]);
    let refs: Vec<&str> = options.iter().map(String::as_str).collect();
    let mut run = start_run_with(&world, "h1", issue, &refs, &script).await;
    std::fs::write(&gate, "").unwrap();
    // When the Run ends
    assert_eq!(exit_code(&mut run).await, Some(1));
    signal_session(run.sid, libc::SIGKILL);
    // Then nothing was committed or pushed while that process might still write
    assert!(
        origin_log(&origin, &branch).is_empty(),
        "no branch on origin"
    );
    assert_eq!(
        git(&origin.work, &["log", "-1", "--format=%s"]),
        "first-step"
    );
    // And the end record says the worktree was left as it is and where, and people have it
    let end = &ends(&world, issue)[0];
    let kept = end.kept.as_ref().expect("kept");
    assert!(!kept.pushed && !kept.nothing_to_keep, "{kept:?}");
    assert_eq!(Path::new(&kept.worktree), origin.work.as_path());
    let why = kept.error.as_deref().unwrap_or_default();
    assert!(why.contains("salvage not attempted"), "{why}");
    assert!(world.labels(issue).contains(&HUMAN.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_stopped_by_sigterm_pushes_its_work_and_hands_the_issue_back() {
    let (world, origin, issue, branch) = setup("sigterm").await;
    // Given a Run with an unpushed commit and a dirty file
    edit(&origin.work, "first-step");
    let mut run = start(&world, issue, &origin.work, "sleep 600").await;
    // When the Run is sent SIGTERM (a host shutting down, a person pressing Ctrl-C)
    let pid = run.child.id().expect("the Run runs");
    std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert_eq!(exit_code(&mut run).await, Some(128 + libc::SIGTERM));
    // Then its work is on origin's Issue branch in a failed-run commit naming the signal
    let log = origin_log(&origin, &branch);
    assert_eq!(
        log[..2],
        ["thirdshift: failed run (stopped by SIGTERM)", "first-step"],
        "{log:?}"
    );
    // And the end record is a hand-back saying what was kept; the issue is Ready again
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].outcome, Outcome::HandedBack);
    let kept = ends[0].kept.as_ref().expect("kept");
    assert!(kept.pushed && kept.commits.len() == 2, "{kept:?}");
    let labels = world.labels(issue);
    assert!(labels.contains(&READY.to_string()), "{labels:?}");
    assert!(!labels.contains(&IN_PROGRESS.to_string()));
}

fn grace_config(world: &World) -> std::path::PathBuf {
    let config = world.dir.path().join("grace.yml");
    std::fs::write(&config, "run:\n  kill_grace_secs: 1\n").unwrap();
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_run_pushes_its_work_before_its_claim_ends() {
    let (world, origin, issue, branch) = setup("cancelled").await;
    // Given a Run with an unpushed commit and a dirty file, and an origin that notes the end
    // records on the issue as each push lands
    edit(&origin.work, "first-step");
    let ends_at_push = count_ends_at_each_push(&world, &origin, issue);
    let mut run = start(&world, issue, &origin.work, "sleep 600").await;
    // When another host cancels it and the Run's host observes
    cancel_and_observe(&world, issue, &grace_config(&world)).await;
    let _ = exit_code(&mut run).await;
    // Then its work is on origin's Issue branch in one failed-run commit
    let log = origin_log(&origin, &branch);
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(log[0].starts_with("thirdshift: failed run ("), "{log:?}");
    assert_eq!(log[1], "first-step");
    // And the one end record is cancelled, saying what was kept; the cancel holds the issue
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0].outcome, Outcome::Cancelled);
    // And the push landed while the issue held no end record: the work reached origin before
    // the Claim ended, and the end names the very commit origin holds as pushed
    let at_pushes = std::fs::read_to_string(&ends_at_push).expect("origin saw a push");
    assert_eq!(at_pushes, "0\n", "end records on the issue at each push");
    let kept = ends[0].kept.as_ref().expect("what was kept");
    let on_origin = git(&origin.bare, &["rev-parse", &branch]);
    assert!(kept.pushed, "{kept:?}");
    assert_eq!(kept.head.as_deref(), Some(on_origin.trim()), "{kept:?}");
    assert!(world.labels(issue).is_empty(), "{:?}", world.labels(issue));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_run_killed_while_it_keeps_its_work_has_it_kept_by_its_host() {
    let (world, origin, issue, branch) = setup("cancelled, killed mid-salvage").await;
    // Given a Run with work to keep whose first push hangs longer than the grace period
    let hung_pid = hang_first_push(&world, &origin.work);
    edit(&origin.work, "first-step");
    let mut run = start(&world, issue, &origin.work, "sleep 600").await;
    let hung_pid = tokio::spawn(hung_pid);
    // When another host cancels it and the Run's host observes (stopping it with SIGKILL)
    cancel_and_observe(&world, issue, &grace_config(&world)).await;
    let _ = exit_code(&mut run).await;
    let hung = hung_pid.await.unwrap();
    std::process::Command::new("kill")
        .args(["-9", &hung])
        .status()
        .unwrap();
    // Then the host pushed the Run's salvage commit, with no second one
    let log = origin_log(&origin, &branch);
    assert_eq!(
        log[..2],
        ["thirdshift: failed run (stopped by SIGTERM)", "first-step"],
        "{log:?}"
    );
    assert_eq!(log.len(), 3, "{log:?}");
    // And the Claim was ended cancelled by the host, saying the work is on origin
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0].outcome, Outcome::Cancelled);
    assert!(ends[0].actor.starts_with("observe@"), "{}", ends[0].actor);
    assert!(ends[0].kept.as_ref().is_some_and(|k| k.pushed));
}

/// A program that appends its environment to a file and passes its input through (as a clean
/// filter must), and that file.
fn spy(world: &World) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt as _;
    let (script, seen) = (
        world.dir.path().join("spy.sh"),
        world.dir.path().join("seen"),
    );
    let body = format!("#!/bin/sh\nenv >> '{}'\ncat\n", seen.display());
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, seen)
}

/// A Run's command that points its worktree's `core.fsmonitor` and a clean filter for every file
/// at `spy`, changes a file, then goes on with `then`.
fn planting(work: &Path, spy: &Path, then: &str) -> String {
    format!(
        "cd '{w}' && git config core.fsmonitor '{s}' && git config filter.spy.clean '{s}' && \
         echo '* filter=spy' > .gitattributes && echo more >> draft.txt && {then}",
        w = work.display(),
        s = spy.display()
    )
}

/// What the spy saw: it ran (git started it) and saw none of `secrets`.
fn assert_spy_saw_none_of(seen: &Path, secrets: &[&str]) {
    let seen = std::fs::read_to_string(seen).expect("git started the clean filter");
    assert!(seen.contains("PATH="), "{seen}");
    for secret in secrets {
        assert!(
            !seen.contains(secret),
            "a program git started saw {secret:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_the_worktree_has_git_start_while_a_failed_run_is_kept_see_no_app_key() {
    let (world, origin, issue, _) = setup("spied on").await;
    let keys = keys::key_pair(world.dir.path(), "spied-app", true);
    let app = SimApp {
        id: 4242,
        slug: "thirdshift-spied".into(),
        name: "Thirdshift Spied".into(),
        public_key_pem: keys.public_pem.clone(),
        permission: Permission::Write,
    };
    world.sim.add_app(app).expect("App installed");
    let (spy, seen) = spy(&world);
    edit(&origin.work, "first-step");
    // Given a Run as the App whose command plants a fsmonitor and a clean filter, then exits 1
    let script = planting(&origin.work, &spy, "exit 1");
    let out = world
        .cli("h1")
        .env_remove("GITHUB_TOKEN")
        .env("THIRDSHIFT_APP_ID", "4242")
        .env("THIRDSHIFT_APP_KEY", &keys.private_pem)
        .args(["run", "--issue", &issue.to_string()])
        .args(run_options(&origin.work))
        .args(["--", "sh", "-c", &script])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Then its work is kept on origin as ever
    let log = origin_log(&origin, &format!("issue-{issue}"));
    assert_eq!(
        log[..2],
        ["thirdshift: failed run (exit status 1)", "first-step"]
    );
    // And what git started saw no line of the App's key
    let key_lines: Vec<&str> = keys.private_pem.lines().filter(|l| l.len() > 20).collect();
    assert!(!key_lines.is_empty());
    let mut secrets = key_lines;
    secrets.push("THIRDSHIFT_APP_KEY");
    assert_spy_saw_none_of(&seen, &secrets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_the_worktree_has_git_start_while_observe_keeps_a_killed_run_see_no_token() {
    let (world, origin, issue, branch) = setup("spied on, killed").await;
    let (spy, seen) = spy(&world);
    edit(&origin.work, "first-step");
    // Given a Run whose command plants a fsmonitor and a clean filter, and is then killed
    let script = planting(&origin.work, &spy, "sleep 600");
    let run = start(&world, issue, &origin.work, &script).await;
    let planted = origin.work.join(".gitattributes");
    wait_until("the command to plant its filter", STEP, || planted.exists()).await;
    run.kill_all().await;
    // When its host passes with a token
    observe_reconcile(&world, "h1").await;
    // Then the work is kept, and what git started saw no token
    let log = origin_log(&origin, &branch);
    assert_eq!(log[0], "thirdshift: failed run (killed)", "{log:?}");
    assert_spy_saw_none_of(&seen, &[BOT_TOKEN, "GITHUB_TOKEN"]);
}
