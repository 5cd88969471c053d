//! Remote cancel with real processes, real signals and real HTTP: `cancel --issue N` on one host
//! posts a request; the owning host's next `observe` stops the Run (TERM, grace, KILL) and the
//! Claim ends `cancelled` with the issue held for a person (`tests/it/failure_limits.rs` shows
//! pickup leaving it, and `--requeue`). A finished Run is answered without a write,
//! a stranger's request is ignored, and a request is posted once however often it is asked for.
//!
//! Which end record wins: a Run that takes SIGTERM hands its issue back itself, and because a
//! trusted cancel request for its Claim is pending it writes `cancelled` (not `handed-back`);
//! `observe` waits for it and, finding the end record there, writes none. Only a Run that is
//! gone or has to be killed is ended by `observe@HOST`. Either way: one end record, `cancelled`.

use crate::harness;

use std::time::{Duration, Instant};

use github_emulator::Faults;
use harness::*;
use thirdshift_reconciler::host::session_members;
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::{
    decode, CancelRecord, Decoded, HostReport, Outcome, Record,
};
use thirdshift_reconciler::text::ToComment;

fn cancels(world: &World, issue: u64) -> Vec<CancelRecord> {
    world
        .sim
        .comments(issue)
        .into_iter()
        .filter_map(|c| match decode(&c.body) {
            Decoded::Record(Record::Cancel(r)) => Some(r),
            _ => None,
        })
        .collect()
}

/// The report `host` last wrote on the registry issue.
fn report_of(world: &World, host: &str) -> HostReport {
    (1..=20)
        .flat_map(|n| world.sim.comments(n))
        .find_map(|c| match decode(&c.body) {
            Decoded::Record(Record::HostReport(r)) if r.host == host => Some(r),
            _ => None,
        })
        .expect("the host has reported")
}

async fn cancel(world: &World, host: &str, issue: u64) -> std::process::Output {
    let out = world
        .exec(host, &["cancel", "--issue", &issue.to_string()])
        .await;
    assert_eq!(out.status.code(), Some(0), "cancel: {}", stderr(&out));
    out
}

async fn observe(world: &World, host: &str, config: Option<&std::path::Path>) -> String {
    let mut cmd = world.cli(host);
    if let Some(path) = config {
        cmd.arg("--config").arg(path);
    }
    let out = cmd.arg("observe").output().await.expect("observe runs");
    assert_eq!(out.status.code(), Some(0), "observe: {}", stderr(&out));
    format!("{}\n{}", stdout(&out), stderr(&out))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_from_another_host_stops_the_run_in_one_observe_and_holds_the_issue() {
    let world = World::new().await;
    // Given a Run on host h2 whose command would run for ten minutes
    let issue = world.ready_issue("cancel me");
    let mut run = start_run(&world, "h2", issue, "sleep 600").await;
    // When host h1 asks for it to be cancelled
    let asked = cancel(&world, "h1", issue).await;
    // Then one request is posted, naming the Claim, and nothing is stopped yet
    assert!(
        stdout(&asked).contains("cancel requested"),
        "{}",
        stdout(&asked)
    );
    let requests = cancels(&world, issue);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].claim_id, run.claim_id);
    assert_eq!(requests[0].requested_by, "cancel@h1");
    assert!(
        run.child.try_wait().unwrap().is_none(),
        "cancel alone stops nothing"
    );
    // When h2 observes once
    let seen = observe(&world, "h2", None).await;
    // Then the Run and its whole session are gone; the Run stopped on SIGTERM (exit 143)
    let status = run.child.try_wait().unwrap().expect("the Run has exited");
    assert_eq!(status.code(), Some(143), "{seen}");
    assert!(session_members(run.sid).is_empty(), "CMD's session is gone");
    // And the Claim has exactly one end record: cancelled, written by the Run itself, naming
    // the request; the issue is no longer in progress, and not Ready either: the cancel holds it
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1, "{seen}");
    assert_eq!(ends[0].outcome, Outcome::Cancelled);
    assert_eq!(ends[0].actor, "run@h2");
    assert!(
        ends[0].reason.contains(&requests[0].request_id),
        "{}",
        ends[0].reason
    );
    assert!(
        ends[0].reason.contains("stopped within the grace period"),
        "{}",
        ends[0].reason
    );
    let labels = world.labels(issue);
    assert!(labels.is_empty(), "{labels:?}");
    assert!(
        seen.contains(&format!("#{issue} {} cancelled", run.claim_id)),
        "{seen}"
    );
    // And h2's report no longer carries the Claim, so the next pass writes nothing
    assert!(report_of(&world, "h2").claims.is_empty());
    world.sim.clear_requests();
    observe(&world, "h2", None).await;
    assert_eq!(writes(&world), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_ignores_term_is_killed_after_the_grace_and_its_claim_ended() {
    let world = World::new().await;
    // Given a Run (default 10 s grace of its own) whose whole session ignores SIGTERM, and
    // observe configured with a 1 s grace
    let config = world.dir.path().join("grace.yml");
    std::fs::write(&config, "run:\n  kill_grace_secs: 1\n").unwrap();
    let issue = world.ready_issue("stubborn");
    let mut run = start_run(&world, "h2", issue, "trap '' TERM INT HUP; sleep 600").await;
    let cmd_members = session_members(run.sid);
    assert!(!cmd_members.is_empty());
    cancel(&world, "h1", issue).await;
    // When h2 observes once
    let started = Instant::now();
    let seen = observe(&world, "h2", Some(&config)).await;
    // Then the session survived SIGTERM for the grace and was killed after it, long before the
    // Run's own 10 s grace would have
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(1), "grace respected: {took:?}");
    assert!(
        took < Duration::from_secs(9),
        "observe's grace decided: {took:?}"
    );
    assert!(seen.contains("killed (SIGKILL)"), "{seen}");
    assert!(session_members(run.sid).is_empty(), "the session is gone");
    for pid in cmd_members {
        assert!(
            ProcessIdentity::of(pid).is_none() || is_zombie(pid),
            "{pid} is gone"
        );
    }
    assert!(
        run.child.try_wait().unwrap().is_some(),
        "the Run has exited"
    );
    // And the Claim ended once, cancelled, with the issue held for a person
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1, "{seen}");
    assert_eq!(ends[0].outcome, Outcome::Cancelled);
    let reason = &ends[0].reason;
    assert!(
        reason.contains("did not stop within the grace period and was killed (SIGKILL)"),
        "{reason}"
    );
    assert!(world.labels(issue).is_empty(), "{:?}", world.labels(issue));
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_for_a_finished_run_is_answered_and_writes_nothing() {
    let world = World::new().await;
    // Given an issue whose Run already finished, and one that was never claimed
    let issue = world.ready_issue("done already");
    let out = world
        .exec("h2", &["run", "--issue", &issue.to_string(), "--", "true"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let never = world.ready_issue("never claimed");
    world.sim.clear_requests();
    // When a cancel is asked for each
    let finished = cancel(&world, "h1", issue).await;
    let unclaimed = cancel(&world, "h1", never).await;
    // Then each is answered with why there is nothing to cancel, and nothing is written
    let answer = stdout(&finished);
    let expected = format!("issue #{issue} has no active Run (its last Claim ended: done, claim ");
    assert!(answer.starts_with(&expected), "{answer}");
    assert!(answer.contains("by run@h2"), "{answer}");
    assert!(answer.ends_with("); nothing to cancel"), "{answer}");
    assert_eq!(
        stdout(&unclaimed),
        format!("issue #{never} has no active Run (it has never been claimed); nothing to cancel")
    );
    assert_eq!(writes(&world), Vec::<String>::new());
    assert!(cancels(&world, issue).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_by_a_stranger_is_ignored_and_reported() {
    let world = World::new().await;
    // Given a Run on h2, and a well-formed cancel request for its Claim posted by a stranger
    let issue = world.ready_issue("not yours to cancel");
    let mut run = start_run(&world, "h2", issue, "sleep 600").await;
    let forged = CancelRecord {
        request_id: "cx-00000000000000ee".into(),
        claim_id: run.claim_id.clone(),
        issue,
        requested_by: STRANGER.into(),
        reason: None,
        requested_at: chrono::Utc::now(),
        recover: false,
        requeue: false,
    };
    world.sim.add_comment(issue, STRANGER, &forged.to_comment());
    // When h2 observes
    let seen = observe(&world, "h2", None).await;
    // Then the Run keeps running, its Claim is not ended, and the stranger's record is reported
    assert!(
        run.child.try_wait().unwrap().is_none(),
        "the Run still runs: {seen}"
    );
    assert!(!session_members(run.sid).is_empty());
    assert!(ends(&world, issue).is_empty());
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
    assert!(
        seen.contains(STRANGER) && seen.contains("cancel record from an untrusted author"),
        "{seen}"
    );
    let report = report_of(&world, "h2");
    assert_eq!(report.claims.len(), 1);
    assert_eq!(report.claims[0].verdict.label(), "alive");
    // And cancel on the command line does not count the stranger's request as pending
    let asked = cancel(&world, "h1", issue).await;
    assert!(
        stdout(&asked).contains("cancel requested"),
        "{}",
        stdout(&asked)
    );
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_cancel_posts_one_request_even_when_github_answers_502() {
    let world = World::new().await;
    // Given claims by a host that is away, and GitHub failing half of all requests, with every
    // failed write applied before the 502
    let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
    let away = ProcessIdentity {
        pid: u32::MAX - 9,
        start_ticks: 1,
    };
    let issues: Vec<u64> = (0..6)
        .map(|k| {
            let issue = world.ready_issue(&format!("flaky {k}"));
            posted_claim(&world, issue, "away", away, &boot);
            issue
        })
        .collect();
    world.sim.set_faults(Faults {
        server_error_rate: 0.5,
        applied_before_error: 1.0,
        ..Faults::default()
    });
    for &issue in &issues {
        // When cancel is asked for twice
        let first = cancel(&world, "h1", issue).await;
        let second = cancel(&world, "h1", issue).await;
        // Then exactly one request is on the issue, and the second ask says it is pending
        assert_eq!(cancels(&world, issue).len(), 1, "{}", stderr(&first));
        assert!(
            stdout(&first).contains("cancel requested"),
            "{}",
            stdout(&first)
        );
        assert!(
            stdout(&second).contains("already pending"),
            "{}",
            stdout(&second)
        );
    }
    let faulted_posts = world
        .sim
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.status == 502 && r.path.ends_with("/comments"))
        .count();
    assert!(faulted_posts > 0, "a request post was answered 502");
}

/// A git repository with one commit and an uncommitted file: work that is no Run's.
fn someone_elses_repository(dir: &std::path::Path) -> std::path::PathBuf {
    let repo = dir.join("someone-elses");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["-c", "user.name=o", "-c", "user.email=o@o"])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "theirs"]);
    std::fs::write(repo.join("draft.txt"), "not yours").unwrap();
    repo
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_edited_by_a_collaborator_makes_its_host_stop_and_keep_only_the_run_it_recorded() {
    let world = World::new().await;
    world
        .sim
        .add_user("collab", "collab-token", github_emulator::Permission::Write);
    // Given a Run on h2, and on that machine a process of another session and a repository with
    // uncommitted work, neither of them the Run's
    let issue = world.ready_issue("edited claim");
    let mut run = start_run(&world, "h2", issue, "sleep 600").await;
    let mut other = tokio::process::Command::new("setsid")
        .args(["sleep", "600"])
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = other.id().unwrap();
    let them = ProcessIdentity::of(pid).expect("the other process runs");
    let repo = someone_elses_repository(world.dir.path());
    // When a write collaborator edits the trusted claim comment to name them
    let owner = world
        .ownership(issue)
        .owner
        .expect("the Run owns the issue");
    let mut forged = owner.record.clone();
    forged.pid = pid;
    forged.start_ticks = them.start_ticks;
    forged.session_id = Some(pid);
    forged.session_start_ticks = Some(them.start_ticks);
    forged.worktree = Some(repo.display().to_string());
    let repo_name: thirdshift_reconciler::github::Repo =
        world.sim.repo_full_name().parse().unwrap();
    let collab = thirdshift_reconciler::github::Client::new(
        &world.server.url,
        Some("collab-token".into()),
        repo_name,
    )
    .unwrap();
    collab
        .update_comment(owner.comment_id, &forged.to_comment())
        .await
        .expect("a write collaborator may edit any comment");
    // And the Run is cancelled and its host observes
    cancel(&world, "h1", issue).await;
    observe(&world, "h2", None).await;
    // Then the Run the host recorded was stopped and its Claim ended cancelled
    let status = tokio::time::timeout(Duration::from_secs(30), run.child.wait())
        .await
        .expect("the Run stops")
        .unwrap();
    assert!(!status.success());
    let ends: Vec<Outcome> = world
        .records(issue)
        .into_iter()
        .filter_map(|r| match r {
            Record::End(e) => Some(e.outcome),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [Outcome::Cancelled]);
    // And the process the edit named still runs, and the repository it named is untouched
    assert!(
        other.try_wait().unwrap().is_none(),
        "the other process was signalled"
    );
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(git(&["log", "--format=%s"]), "theirs");
    assert_eq!(git(&["status", "--porcelain"]), "?? draft.txt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_runs_claim_edited_to_name_another_worktree_leaves_that_worktree_alone() {
    let world = World::new().await;
    // Given a killed Run on h2 whose trusted claim comment an edit made name someone's repository
    let issue = world.ready_issue("edited, then killed");
    let run = start_run(&world, "h2", issue, "sleep 600").await;
    let repo = someone_elses_repository(world.dir.path());
    let owner = world
        .ownership(issue)
        .owner
        .expect("the Run owns the issue");
    let mut forged = owner.record.clone();
    forged.worktree = Some(repo.display().to_string());
    assert!(world
        .sim
        .edit_comment(owner.comment_id, &forged.to_comment()));
    run.kill_all().await;
    // When its host observes and reconciles
    observe_reconcile(&world, "h2").await;
    // Then the Claim is recovered, and the repository the edit named was not committed to
    assert!(world.ownership(issue).owner.is_none());
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["log", "--format=%s"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "theirs");
    assert!(repo.join("draft.txt").exists());
}
