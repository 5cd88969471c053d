//! The GitHub client against the emulator over real HTTP: pagination, retry rules (reads are
//! retried, a comment post with an unknown outcome is not), and errors a person can act on.

use crate::harness;

use github_emulator::Faults;
use harness::*;
use thirdshift_reconciler::github::{Client, GithubError, Repo, RetryPolicy};

const COMMENTS_ROUTE: &str = "/repos/{owner}/{repo}/issues/{issue_number}/comments";

fn client(world: &World, token: &str) -> Client {
    let retry = RetryPolicy {
        max_attempts: 12,
        base_delay: std::time::Duration::from_millis(2),
        max_delay: std::time::Duration::from_millis(50),
    };
    let repo: Repo = world.sim.repo_full_name().parse().unwrap();
    Client::new(&world.server.url, Some(token.to_string()), repo)
        .unwrap()
        .with_retry(retry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_comment_is_read_across_pages_in_order() {
    let world = World::new().await;
    // Given an issue with 250 comments (three pages of 100)
    let issue = world.ready_issue("long");
    let ids: Vec<u64> = (0..250)
        .map(|i| world.sim.add_comment(issue, BOT, &format!("c{i}")))
        .collect();
    // When the client lists them
    let comments = client(&world, BOT_TOKEN)
        .list_issue_comments(issue)
        .await
        .unwrap();
    // Then all arrive, oldest first, in three requests
    assert_eq!(comments.iter().map(|c| c.id).collect::<Vec<_>>(), ids);
    assert_eq!(world.sim.count("GET", COMMENTS_ROUTE), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_retried_through_502s() {
    let world = World::new().await;
    let issue = world.ready_issue("flaky read");
    // Given GitHub failing half of all requests
    world.sim.set_faults(Faults {
        server_error_rate: 0.5,
        ..Faults::default()
    });
    // When the client reads the issue twenty times
    let client = client(&world, BOT_TOKEN);
    for _ in 0..20 {
        assert_eq!(client.get_issue(issue).await.unwrap().number, issue);
    }
    // Then every read succeeded although many requests failed
    let failed = world
        .sim
        .requests()
        .iter()
        .filter(|r| r.status == 502)
        .count();
    assert!(failed >= 5, "faults injected: {failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comment_post_answered_502_is_reported_uncertain_and_not_repeated() {
    let world = World::new().await;
    let issue = world.ready_issue("uncertain");
    // Given GitHub answering every request 502, after applying every write
    world.sim.set_faults(Faults {
        server_error_rate: 1.0,
        applied_before_error: 1.0,
        ..Faults::default()
    });
    // When the client posts a comment
    let err = client(&world, BOT_TOKEN)
        .create_comment(issue, "hello")
        .await
        .unwrap_err();
    // Then it says the outcome is unknown, and sent the post only once
    assert!(err.is_uncertain(), "{err}");
    assert_eq!(world.sim.count("POST", COMMENTS_ROUTE), 1);
    assert_eq!(world.sim.comments(issue).len(), 1, "GitHub applied it once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_token_is_named_in_the_error() {
    let world = World::new().await;
    let issue = world.ready_issue("x");
    let err = client(&world, "not-a-token")
        .get_issue(issue)
        .await
        .unwrap_err();
    assert!(matches!(err, GithubError::Unauthorized { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("acme/widgets") && msg.contains("GITHUB_TOKEN"),
        "{msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_issue_error_names_repo_and_permission() {
    let world = World::new().await;
    let err = client(&world, BOT_TOKEN).get_issue(999).await.unwrap_err();
    assert!(matches!(err, GithubError::NotFound { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("acme/widgets") && msg.contains("Issues: read"),
        "{msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_with_a_read_only_token_fails_naming_the_missing_permission() {
    let world = World::new().await;
    let issue = world.ready_issue("no rights");
    // When a host whose token can only read tries to claim
    let out = world
        .cli("reader")
        .env("GITHUB_TOKEN", STRANGER_TOKEN)
        .args(["claim", "--issue", &issue.to_string()])
        .output()
        .await
        .unwrap();
    // Then it fails with exit 1 and says which permission the token lacks
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("403") && err.contains("Issues: write"),
        "{err}"
    );
    assert!(
        !err.contains(STRANGER_TOKEN),
        "the token never appears in output"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_connections_are_retried_for_reads_and_uncertain_for_a_comment_post() {
    let world = World::new().await;
    let issue = world.ready_issue("dropped");
    // Given GitHub dropping the connection on a third of the requests (after applying writes)
    world.sim.set_faults(Faults {
        dropped_rate: 0.3,
        applied_before_error: 1.0,
        ..Faults::default()
    });
    // When the client reads the issue twenty times
    let client = client(&world, BOT_TOKEN);
    for _ in 0..20 {
        assert_eq!(client.get_issue(issue).await.unwrap().number, issue);
    }
    // And posts a comment while every connection drops
    world.sim.set_faults(Faults {
        dropped_rate: 1.0,
        applied_before_error: 1.0,
        ..Faults::default()
    });
    let err = client.create_comment(issue, "hello").await.unwrap_err();
    // Then the reads all succeeded through the drops, and the post is reported uncertain, sent
    // once, and applied
    assert!(err.is_uncertain(), "{err}");
    assert_eq!(world.sim.count("POST", COMMENTS_ROUTE), 1);
    assert_eq!(world.sim.comments(issue).len(), 1);
    let dropped = world
        .sim
        .requests()
        .iter()
        .filter(|r| r.status == 0)
        .count();
    assert!(dropped >= 5, "dropped connections: {dropped}");
}
