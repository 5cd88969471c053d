//! A failing agent never loops on one issue: real `pickup` passes start real detached Runs of a
//! command that exits 1, over real HTTP. An issue whose last `recovery.max_failures` Runs failed
//! goes to people with its failures listed and the next Ready issue is taken; a host whose
//! failures handed to people reach `pickup.failure_limit` takes nothing until people see to
//! them; a cancel holds its issue until a person puts the ready label back.

use crate::harness;

use std::time::{Duration, Instant};

use harness::*;
use thirdshift_reconciler::protocol::record::{Outcome, Record};

const HUMAN: &str = "ready-for-human";

/// Claims posted on the issue.
fn claims(world: &World, issue: u64) -> usize {
    world
        .records(issue)
        .iter()
        .filter(|r| matches!(r, Record::Claim(_)))
        .count()
}

/// Waits until every claim on `issues` has ended and its labels are settled (no
/// `in-progress`): the failing Runs pickup started have finished.
async fn settled(world: &World, issues: &[u64]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let busy = issues.iter().any(|n| {
            world.ownership(*n).owner.is_some() || world.labels(*n).iter().any(|l| l == IN_PROGRESS)
        });
        if !busy {
            return;
        }
        assert!(Instant::now() < deadline, "Runs still going after 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `pickup` on h1 with the failing command, once; its output.
async fn failing_pass(world: &World, config: &std::path::Path) -> String {
    let out = pickup(world, "h1", config, &[], "echo agent broke >&2; exit 1")
        .output()
        .await
        .expect("pickup runs");
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    stdout(&out)
}

/// Given: a config with one slot on h1 and `extra` appended.
fn config_with(world: &World, extra: &str) -> std::path::PathBuf {
    let path = config(world, &[("h1", 1)]);
    let text = std::fs::read_to_string(&path).unwrap() + extra;
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_agent_is_handed_to_people_after_two_runs_and_the_next_issue_is_taken() {
    let world = World::new().await;
    // Given two Ready issues and a host with one slot whose agent fails at once
    let first = world.ready_issue("first");
    let second = world.ready_issue("second");
    let config = config(&world, &[("h1", 1)]);
    // When pickup runs six passes, each Run ending before the next pass
    let mut said = String::new();
    for _ in 0..6 {
        said.push_str(&failing_pass(&world, &config).await);
        settled(&world, &[first, second]).await;
    }
    // Then the first issue was claimed twice (the default limit), not six times
    assert_eq!(claims(&world, first), 2, "{said}");
    // and its last end handed it to people, listing both failed Runs
    let ends = ends(&world, first);
    let last = ends.last().expect("an end");
    assert_eq!(last.outcome, Outcome::Failed);
    assert_eq!(last.failures.len(), 2, "{last:?}");
    assert!(last.failures.iter().all(|f| f.host == "h1"));
    assert_eq!(last.failures[0].claim_id, ends[0].claim_id);
    assert_eq!(world.labels(first), [HUMAN]);
    let comment = world.sim.comments(first).last().unwrap().body.clone();
    assert!(comment.contains("**Handed to people**"), "{comment}");
    assert!(comment.contains(&ends[0].claim_id), "{comment}");
    // and the second issue was taken, and went the same way
    assert!(said.contains(&format!("#{second}: taken")), "{said}");
    assert_eq!(claims(&world, second), 2, "{said}");
    assert_eq!(world.labels(second), [HUMAN]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_at_its_failure_limit_takes_nothing_until_people_see_to_its_failures() {
    let world = World::new().await;
    // Given a host whose Failure limit is one issue, an issue limit of one failure, two Ready
    // issues and an agent that fails at once
    let config = config_with(
        &world,
        "pickup:\n  failure_limit: 1\nrecovery:\n  max_failures: 1\n",
    );
    let first = world.ready_issue("first");
    let second = world.ready_issue("second");
    failing_pass(&world, &config).await;
    settled(&world, &[first, second]).await;
    assert_eq!(world.labels(first), [HUMAN]);
    // When pickup runs again
    let said = failing_pass(&world, &config).await;
    // Then it says the host is at its Failure limit, naming the issue, and takes nothing
    assert!(
        said.contains(&format!(
            "host h1 is at its Failure limit: 1 open issue(s) it handed to people for failing \
             (#{first}"
        )),
        "{said}"
    );
    assert_eq!(claims(&world, second), 0, "{said}");
    assert_eq!(world.labels(second), [READY]);
    // When a person closes the failed issue, the next pass takes the second one
    world.sim.close_issue(first);
    let said = failing_pass(&world, &config).await;
    assert!(said.contains(&format!("#{second}: taken")), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_issue_waits_for_a_person_to_put_the_ready_label_back() {
    let world = World::new().await;
    let config = config(&world, &[("h1", 1)]);
    // Given a Run on h2 that a person, by mistake, also marked ready again while it ran
    let issue = world.ready_issue("cancel me");
    let run = start_run(&world, "h2", issue, "sleep 600").await;
    world
        .sim
        .set_labels_as(issue, &[IN_PROGRESS, READY], "alice");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // When it is cancelled and h2 carries the cancel out
    let out = world
        .exec("h1", &["cancel", "--issue", &issue.to_string()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = world.exec("h2", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last = ends(&world, issue).pop().expect("the Claim ended");
    assert_eq!(last.claim_id, run.claim_id);
    assert_eq!(last.outcome, Outcome::Cancelled);
    // Then the next pickup leaves it alone, saying why
    let said = failing_pass(&world, &config).await;
    assert!(
        said.contains(&format!("#{issue}: skipped, its last Run was cancelled")),
        "{said}"
    );
    assert_eq!(claims(&world, issue), 1);
    // When the person puts the ready label back after the cancel
    world.sim.set_labels_as(issue, &[], "alice");
    world.sim.set_labels_as(issue, &[READY], "alice");
    // Then pickup takes it, naming who released it
    let said = failing_pass(&world, &config).await;
    assert!(
        said.contains(&format!("#{issue}: released by alice")),
        "{said}"
    );
    assert!(said.contains(&format!("#{issue}: taken")), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_with_requeue_hands_the_issue_straight_back() {
    let world = World::new().await;
    // Given a Run on h2
    let issue = world.ready_issue("requeue me");
    start_run(&world, "h2", issue, "sleep 600").await;
    // When it is cancelled with --requeue and h2 carries the cancel out
    let args = ["cancel", "--issue", &issue.to_string(), "--requeue"];
    let out = world.exec("h1", &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = world.exec("h2", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the Claim ended cancelled and the issue is Ready again
    assert_eq!(
        ends(&world, issue).pop().unwrap().outcome,
        Outcome::Cancelled
    );
    assert_eq!(world.labels(issue), [READY]);
}
