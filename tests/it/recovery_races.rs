//! Recovery under churn and races: live Runs on two simulated hosts are never ended while other
//! Runs are killed around them, and passes that run at once or die half-way converge on the
//! state one clean pass leaves, with exactly one end record per Claim.

use crate::harness;

use std::time::Duration;

use harness::*;
use thirdshift_reconciler::protocol::record::Outcome;
use thirdshift_reconciler::text::ToComment;

const LABELS_ADD: (&str, &str) = ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels");
const LABELS_DEL: (&str, &str) = (
    "DELETE",
    "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
);

/// A small deterministic generator, so a failing run can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_runs_on_two_hosts_survive_fifty_passes_of_random_kills() {
    let world = World::new().await;
    // Given a live Run on h1 and one on h2
    let a = world.ready_issue("live on h1");
    let b = world.ready_issue("live on h2");
    let live_a = start_run(&world, "h1", a, "sleep 600").await;
    let live_b = start_run(&world, "h2", b, "sleep 600").await;
    let mut rng = Lcg(7);
    let mut killed = Vec::new();
    for pass in 0..50 {
        // When, between passes, other Runs on either host are started and killed outright
        if rng.next(2) == 0 {
            let host = if rng.next(2) == 0 { "h1" } else { "h2" };
            let issue = world.ready_issue(&format!("victim {pass}"));
            let victim = start_run(&world, host, issue, "sleep 600").await;
            victim.kill_all().await;
            killed.push(issue);
        }
        let host = if rng.next(2) == 0 { "h1" } else { "h2" };
        observe_reconcile(&world, host).await;
        // Then the live Runs' Claims are never ended
        for (issue, run) in [(a, &live_a), (b, &live_b)] {
            assert!(
                ends(&world, issue).is_empty(),
                "pass {pass}: live Run on #{issue} ended"
            );
            let owner = world.ownership(issue).owner.expect("still owned");
            assert_eq!(owner.record.claim_id, run.claim_id);
            assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
        }
    }
    // And every killed Run was recovered once both hosts passed
    observe_reconcile(&world, "h1").await;
    observe_reconcile(&world, "h2").await;
    assert!(
        killed.len() >= 10,
        "enough kills happened: {}",
        killed.len()
    );
    for issue in &killed {
        let e = ends(&world, *issue);
        assert_eq!(e.len(), 1, "#{issue}");
        assert_eq!(e[0].outcome, Outcome::Recovered);
    }
    live_a.kill_all().await;
    live_b.kill_all().await;
}

/// Given a killed Run whose host has reported it dead, but no reconcile yet.
async fn dead_and_reported(world: &World, title: &str) -> u64 {
    let issue = world.ready_issue(title);
    start_run(world, "h1", issue, "sleep 600")
        .await
        .kill_all()
        .await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    issue
}

/// A reconcile pass started while GitHub holds label writes, returned once it waits on one
/// (its end record posted, its labels not yet).
async fn pass_held_at_its_labels(world: &World) -> tokio::process::Child {
    world.sim.stall(LABELS_ADD.0, LABELS_ADD.1);
    world.sim.stall(LABELS_DEL.0, LABELS_DEL.1);
    let pass = world.cli("r1").arg("reconcile").spawn().unwrap();
    wait_until("the pass to wait on a label write", STEP, || {
        world.sim.stalled() > 0
    })
    .await;
    pass
}

/// The state one clean pass leaves: one recovered end record, Ready again, not in progress.
fn assert_clean_end(world: &World, issue: u64) {
    let e = ends(world, issue);
    assert_eq!(e.len(), 1, "exactly one end record on #{issue}");
    assert_eq!(e[0].outcome, Outcome::Recovered);
    let labels = world.labels(issue);
    assert!(labels.contains(&READY.to_string()), "{labels:?}");
    assert!(!labels.contains(&IN_PROGRESS.to_string()), "{labels:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_reconciles_at_once_leave_one_end_record() {
    let world = World::new().await;
    let issue = dead_and_reported(&world, "raced").await;
    // When two reconcile processes start at the same moment, five times over on fresh deaths
    let mut issues = vec![issue];
    for round in 1..5 {
        issues.push(dead_and_reported(&world, &format!("raced {round}")).await);
    }
    let first = world.cli("r1").arg("reconcile").output();
    let second = world.cli("r2").arg("reconcile").output();
    let (x, y) = tokio::join!(first, second);
    for out in [x.unwrap(), y.unwrap()] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // And one more pass runs
    let out = world.exec("r1", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then every issue is as one clean pass leaves it
    for issue in issues {
        assert_clean_end(&world, issue);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_killed_between_end_record_and_labels_is_finished_by_the_next_pass() {
    let world = World::new().await;
    let issue = dead_and_reported(&world, "interrupted pass").await;
    // Given GitHub holding label writes, so a pass stops after its end record
    let mut pass = pass_held_at_its_labels(&world).await;
    assert_eq!(
        ends(&world, issue).len(),
        1,
        "the end record was posted first"
    );
    // When that pass is killed with SIGKILL before its labels, and GitHub recovers
    pass.kill().await.unwrap();
    pass.wait().await.unwrap();
    world.sim.release_stalls();
    // Then the next pass finishes the labels, and writes no second end record
    let out = world.exec("r2", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_clean_end(&world, issue);
    // And a further pass writes nothing
    world.sim.clear_requests();
    let out = world.exec("r2", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(writes(&world), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_passes_racing_under_stale_lists_leave_one_end_record() {
    let world = World::new().await;
    // Given a dead Run's Claim its host has reported dead
    let issue = world.ready_issue("raced under stale lists");
    let run = start_run(&world, "h1", issue, "sleep 600").await;
    let claim_id = run.claim_id.clone();
    run.kill_all().await;
    let observed = world.exec("h1", &["observe"]).await;
    assert_eq!(observed.status.code(), Some(0), "{}", stderr(&observed));
    // And comment lists that stay stale for up to 1.5 s, and GitHub holding comment posts
    world.sim.set_faults(github_emulator::Faults {
        stale_list_reads: Some(Duration::from_millis(1500)),
        ..Default::default()
    });
    let posts = "/repos/{owner}/{repo}/issues/{issue_number}/comments";
    world.sim.stall("POST", posts);
    // When two reconcile passes both post its end record at the same moment
    let first = world.cli("r1").arg("reconcile").output();
    let second = world.cli("r2").arg("reconcile").output();
    let (first, second) = (tokio::spawn(first), tokio::spawn(second));
    wait_until("both end records to be held", STEP, || {
        world.sim.stalled() == 2
    })
    .await;
    world.sim.release_stalls();
    for pass in [first, second] {
        let out = pass.await.unwrap().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // Then exactly one end record remains, although both passes finished the labels and no
    // later pass reads the issue again
    let ends: Vec<_> = ends(&world, issue)
        .into_iter()
        .filter(|e| e.claim_id == claim_id)
        .collect();
    assert_eq!(ends.len(), 1, "{ends:#?}");
    assert!(!world.labels(issue).contains(&IN_PROGRESS.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_of_an_end_record_hidden_by_a_stale_list_is_deleted_before_the_issue_is_let_go() {
    let world = World::new().await;
    let issue = dead_and_reported(&world, "copy left behind").await;
    // Given a pass that posted the end record and was killed before its labels
    let mut pass = pass_held_at_its_labels(&world).await;
    pass.kill().await.unwrap();
    pass.wait().await.unwrap();
    world.sim.release_stalls();
    // And a second copy of that end record (a writer killed before deleting its repeated post),
    // which comment lists leave out of their next six reads
    let end = world
        .sim
        .comments(issue)
        .into_iter()
        .find(|c| c.body.contains("thirdshift:v1:end"))
        .expect("the end record was posted");
    world.sim.lag_next_comments(&[6]);
    world.sim.add_comment(issue, BOT, &end.body);
    // When the next pass finishes the issue
    let out = world.exec("r2", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the copy is gone before the issue left every pass's view
    assert_clean_end(&world, issue);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_read_before_a_new_claim_leaves_the_new_runs_labels_alone() {
    let world = World::new().await;
    let issue = dead_and_reported(&world, "taken again mid-pass").await;
    // Given a pass that read the issue with its dead owner, posted the end record, and is held
    // by a slow GitHub before its label changes
    world
        .sim
        .stall("GET", "/repos/{owner}/{repo}/issues/{issue_number}");
    let pass = world.cli("r1").arg("reconcile").output();
    let pass = tokio::spawn(pass);
    wait_until("the pass to be held", STEP, || world.sim.stalled() > 0).await;
    assert_eq!(world.sim.stalled(), 1, "the pass is held");
    assert_eq!(
        ends(&world, issue).len(),
        1,
        "the end record was posted first"
    );
    // When meanwhile another pass finished the labels and a Run on h2 took the issue again
    let me = thirdshift_reconciler::host::ProcessIdentity::current();
    let record = claim_record(issue, "h2", "m-h2", me, "boot-h2", "c-00000000000000b2");
    world.sim.add_comment(issue, BOT, &record.to_comment());
    world.sim.set_labels(issue, &[IN_PROGRESS]);
    world.sim.release_stalls();
    let out = pass.await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the held pass does not put the issue back in the queue nor take `in-progress` off the
    // new Run's issue
    let labels = world.labels(issue);
    assert_eq!(labels, vec![IN_PROGRESS.to_string()], "{labels:?}");
    let owner = world
        .ownership(issue)
        .owner
        .expect("the new Claim owns the issue");
    assert_eq!(owner.record.claim_id, "c-00000000000000b2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_read_before_a_new_run_came_and_finished_leaves_that_runs_labels_alone() {
    let world = World::new().await;
    let issue = dead_and_reported(&world, "taken and done mid-pass").await;
    // Given a pass that read the issue with its dead owner, posted the end record, and is held
    // by a slow GitHub before its label changes
    world
        .sim
        .stall("GET", "/repos/{owner}/{repo}/issues/{issue_number}");
    let pass = tokio::spawn(world.cli("r1").arg("reconcile").output());
    wait_until("the pass to be held", STEP, || world.sim.stalled() > 0).await;
    // When meanwhile a Run on h2 took the issue and finished it: done, no label left
    let me = thirdshift_reconciler::host::ProcessIdentity::current();
    let record = claim_record(issue, "h2", "m-h2", me, "boot-h2", "c-00000000000000b3");
    world.sim.add_comment(issue, BOT, &record.to_comment());
    let mut end = thirdshift_reconciler::protocol::record::EndRecord::ending(
        &record,
        thirdshift_reconciler::protocol::record::Outcome::Done,
        "run@h2",
        "the Run's command exited 0",
        chrono::Utc::now(),
    );
    end.labels_after = Some(vec![]);
    world.sim.add_comment(issue, BOT, &end.to_comment());
    world.sim.set_labels(issue, &[]);
    world.sim.release_stalls();
    let out = pass.await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the held pass does not put the finished issue back in the queue
    assert_eq!(world.labels(issue), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_whose_end_was_posted_first_by_another_writer_leaves_the_labels_to_it() {
    let world = World::new().await;
    let issue = dead_and_reported(&world, "ended by another writer first").await;
    let dead = world.ownership(issue).owner.expect("the dead Claim").record;
    // Given a pass that read the dead Claim and is held while posting its end record
    let comments = (
        "POST",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    );
    world.sim.stall(comments.0, comments.1);
    let pass = tokio::spawn(world.cli("r1").arg("reconcile").output());
    wait_until("the pass to post its end", STEP, || world.sim.stalled() > 0).await;
    // When another writer (a companion) ends the Claim first, its labels not set yet, and the
    // pass goes on, slowed at any label write it makes
    let mut theirs = thirdshift_reconciler::protocol::record::EndRecord::ending(
        &dead,
        Outcome::Recovered,
        "reconcile@h1",
        "ended by the Run's companion",
        chrono::Utc::now(),
    );
    theirs.labels_after = Some(vec![READY.to_string()]);
    world.sim.add_comment(issue, BOT, &theirs.to_comment());
    world.sim.release_stalls();
    world.sim.stall(LABELS_ADD.0, LABELS_ADD.1);
    world.sim.stall(LABELS_DEL.0, LABELS_DEL.1);
    let held = tokio::time::timeout(Duration::from_secs(5), async {
        while world.sim.stalled() == 0 && !pass.is_finished() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    let _ = held.await;
    // and meanwhile a Run on h2 takes the issue
    let me = thirdshift_reconciler::host::ProcessIdentity::current();
    let record = claim_record(issue, "h2", "m-h2", me, "boot-h2", "c-00000000000000b4");
    world.sim.add_comment(issue, BOT, &record.to_comment());
    world.sim.set_labels(issue, &[IN_PROGRESS]);
    world.sim.release_stalls();
    let out = pass.await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the pass wrote no label: the new Run's issue stays in progress, one end record stands
    assert_eq!(world.labels(issue), vec![IN_PROGRESS.to_string()]);
    assert_eq!(
        ends(&world, issue).len(),
        1,
        "the pass's later copy is gone"
    );
    let owner = world.ownership(issue).owner.expect("the new Claim owns it");
    assert_eq!(owner.record.claim_id, "c-00000000000000b4");
}
