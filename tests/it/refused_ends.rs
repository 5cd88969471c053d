//! What a Run did is recorded truthfully even when GitHub refuses the write, and a budget reserve
//! keeps the writes that matter possible: a Run that finished while every new comment got 502
//! keeps its outcome locally, its host reports it, and reconcile ends the Claim with it (`done`
//! stays done, `failed` keeps its status, never `recovered`, never re-queued); with the budget
//! within the reserve, a pass stops and says why, while a Run's own end is still written.

use crate::harness;

use std::path::Path;

use harness::*;
use thirdshift_reconciler::protocol::record::Outcome;

const COMMENTS: &str = "/repos/{owner}/{repo}/issues/{issue_number}/comments";

/// A command that waits (at most a minute) for `go` to exist, then exits `code`.
fn gated(go: &Path, code: i32) -> String {
    format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; exit {code}",
        go.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_finished_while_github_refused_its_end_ends_with_its_own_outcome() {
    for (code, outcome) in [(0, Outcome::Done), (1, Outcome::Failed)] {
        let world = World::new().await;
        let issue = world.ready_issue("finished behind refusals");
        let go = world.dir.path().join("go");
        let mut run = start_run(&world, "h1", issue, &gated(&go, code)).await;
        // Given GitHub answers every new comment with 502, for longer than the Run's retries
        world.sim.fail_next("POST", COMMENTS, 100_000, false);
        // When the Run's command exits
        std::fs::write(&go, "").unwrap();
        let status = run.child.wait().await.unwrap();
        // Then the Run exits with its command's status, its end record unwritten
        assert_eq!(status.code(), Some(code), "exit {code}");
        assert!(ends(&world, issue).is_empty(), "GitHub refused every post");
        let refused = world
            .sim
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.route == COMMENTS && r.status == 502)
            .count();
        assert!(
            refused >= 2,
            "the end was retried, then left: {refused} refusals"
        );
        // When GitHub is well again and the host passes twice
        world.sim.clear_failures();
        observe_reconcile(&world, "h1").await;
        observe_reconcile(&world, "h1").await;
        // Then the Claim is ended once, with the Run's own outcome and status, never recovered
        let ended = ends(&world, issue);
        assert_eq!(ended.len(), 1, "{ended:#?}");
        assert_eq!(ended[0].outcome, outcome, "{ended:#?}");
        assert_eq!(ended[0].exit_code, Some(code));
        assert!(world.ownership(issue).owner.is_none());
        let labels = world.labels(issue);
        assert!(!labels.contains(&IN_PROGRESS.to_string()), "{labels:?}");
        if outcome == Outcome::Done {
            assert!(
                labels.is_empty(),
                "a done Run is never re-queued: {labels:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_budget_within_the_reserve_a_pass_stops_and_a_runs_end_is_still_written() {
    let world = World::new().await;
    let issue = world.ready_issue("the budget runs low");
    let go = world.dir.path().join("go");
    let mut run = start_run(&world, "h1", issue, &gated(&go, 0)).await;
    // Given the token's budget is down to 60 requests, within the default reserve of 100
    let left = world.sim.rate_remaining(BOT_TOKEN);
    world.sim.spend(BOT_TOKEN, left - 60);
    // When a host passes
    world.sim.clear_requests();
    let out = world.exec("h2", &["observe", "--reconcile"]).await;
    // Then it stops after the one request that told it the budget, and says why
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("is down to 59 requests, within the reserve of 100"),
        "{said}"
    );
    assert_eq!(world.sim.requests().len(), 1, "{:#?}", world.sim.requests());
    // When the Run's command exits
    std::fs::write(&go, "").unwrap();
    let status = run.child.wait().await.unwrap();
    // Then the Run's own end is still written, from the reserve
    assert_eq!(status.code(), Some(0));
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].outcome, Outcome::Done);
    assert!(world.labels(issue).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pass_says_what_is_left_of_the_budget() {
    let world = World::new().await;
    let out = world.exec("h1", &["observe", "--reconcile"]).await;
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let left = world.sim.rate_remaining(BOT_TOKEN);
    assert!(
        said.contains(&format!(
            "rate budget: {left} request(s) left this hour, 100 kept in reserve"
        )),
        "{said}"
    );
}
