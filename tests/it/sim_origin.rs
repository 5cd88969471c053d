//! What reconcile asks GitHub about origin ("did anything of this Run get there: an Issue branch,
//! a pull request in any state?"), answered by the emulator over real HTTP from a REAL bare git
//! repository that a clone pushes to, and read by our client (`branch_head`,
//! `pulls_for_branch`) and by octocrab's typed API.
//!
//! The shapes against GitHub's OpenAPI description are checked in `conformance.rs`; this file
//! checks behaviour: live reads of the origin, pull-request filters and pages, pull requests
//! being issues, and the shared middleware (budgets, ETags) on the new routes.

use crate::harness;
#[allow(dead_code)]
use crate::support::origin;

use github_emulator::PullState;
use harness::*;
use http::header::IF_NONE_MATCH;
use octocrab::Octocrab;
use origin::Origin;
use serde_json::Value;
use thirdshift_reconciler::github::{Client, PullSummary, Repo, RetryPolicy};

const BRANCHES_ROUTE: &str = "/repos/{owner}/{repo}/branches";
const PULLS_ROUTE: &str = "/repos/{owner}/{repo}/pulls";

fn client(world: &World) -> Client {
    let retry = RetryPolicy {
        max_attempts: 3,
        base_delay: std::time::Duration::from_millis(2),
        max_delay: std::time::Duration::from_millis(20),
    };
    let repo: Repo = world.sim.repo_full_name().parse().unwrap();
    Client::new(&world.server.url, Some(BOT_TOKEN.to_string()), repo)
        .unwrap()
        .with_retry(retry)
}

fn octo(world: &World) -> Octocrab {
    Octocrab::builder()
        .base_uri(world.server.url.as_str())
        .unwrap()
        .personal_token(BOT_TOKEN.to_string())
        .build()
        .unwrap()
}

/// A raw GET through octocrab: status, ETag and JSON body.
async fn get(octo: &Octocrab, path: &str, etag: Option<&str>) -> (u16, Option<String>, Value) {
    let mut req = http::Request::builder().uri(path);
    if let Some(tag) = etag {
        req = req.header(IF_NONE_MATCH, tag);
    }
    let resp = octo
        .execute(req.body(String::new()).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let tag = resp
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_string());
    let text = octo.body_to_string(resp).await.unwrap();
    (
        status,
        tag,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

fn numbers(pulls: &[PullSummary]) -> Vec<u64> {
    pulls.iter().map(|p| p.number).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_pushed_to_the_git_origin_is_seen_at_once_and_a_deleted_one_is_none() {
    // Given an emulator whose origin is a real bare repository
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let client = client(&world);
    // And no Issue branch pushed yet
    assert_eq!(client.branch_head("issue-7").await.unwrap(), None);

    // When a Run pushes its Issue branch
    let first = origin.push_commit("issue-7", "work in progress");
    // Then branch_head sees the pushed sha
    assert_eq!(client.branch_head("issue-7").await.unwrap(), Some(first));
    // And a later push moves it
    let second = origin.push_commit("issue-7", "thirdshift: failed run (pid gone)");
    assert_eq!(
        client.branch_head("issue-7").await.unwrap(),
        Some(second.clone())
    );
    // And octocrab's typed API lists the branches in name order
    let listed = octo(&world)
        .repos("acme", "widgets")
        .list_branches()
        .send()
        .await
        .expect("list_branches");
    let names: Vec<&str> = listed.items.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["issue-7", "main"]);
    assert_eq!(listed.items[0].commit.sha, second);

    // When the branch is deleted on origin, Then it is gone
    origin.delete("issue-7");
    assert_eq!(client.branch_head("issue-7").await.unwrap(), None);
}

#[tokio::test]
async fn a_missing_branch_is_githubs_404_branch_not_found() {
    let world = World::new().await;
    world.sim.add_branch("main", &"a".repeat(40));
    let (status, _, body) = get(&octo(&world), "/repos/acme/widgets/branches/issue-3", None).await;
    assert_eq!(status, 404);
    assert_eq!(body["message"], "Branch not found");
    assert_eq!(body["status"], "404");
    assert_eq!(client(&world).branch_head("issue-3").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_branches_win_over_seeded_ones_and_the_commit_comes_from_git() {
    // Given a seeded branch and the same name pushed to the git origin
    let world = World::new().await;
    let origin = Origin::new();
    let pushed = origin.push_commit("issue-4", "salvaged work");
    world.sim.add_branch("issue-4", &"b".repeat(40));
    world.sim.add_branch("seeded-only", &"c".repeat(40));
    world.sim.set_git_origin(origin.bare.clone());
    // When the branch is read
    let (status, _, body) = get(&octo(&world), "/repos/acme/widgets/branches/issue-4", None).await;
    // Then git's sha and commit are served
    assert_eq!(status, 200);
    assert_eq!(body["commit"]["sha"], pushed.as_str());
    assert_eq!(body["commit"]["commit"]["message"], "salvaged work");
    assert_eq!(
        body["commit"]["commit"]["author"]["email"],
        "run@example.org"
    );
    assert_eq!(body["commit"]["parents"].as_array().unwrap().len(), 1);
    // And the seeded-only branch is still there
    let c = client(&world);
    assert_eq!(
        c.branch_head("seeded-only").await.unwrap(),
        Some("c".repeat(40))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_created_closed_is_found_by_pulls_for_branch() {
    // Given a closed (unmerged) PR for issue-7, an open one for another branch
    let world = World::new().await;
    let origin = Origin::new();
    origin.push_commit("issue-7", "work");
    world.sim.set_git_origin(origin.bare.clone());
    let closed = world
        .sim
        .create_pull(BOT, "issue-7", "Fix #7", PullState::Closed);
    world
        .sim
        .create_pull(BOT, "issue-8", "Fix #8", PullState::Open);
    // When reconcile asks for issue-7's pull requests
    let pulls = client(&world).pulls_for_branch("issue-7").await.unwrap();
    // Then exactly the closed one is found, not merged
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    assert_eq!(pulls[0].number, closed);
    assert_eq!(pulls[0].state, "closed");
    assert!(!pulls[0].merged);
    assert!(pulls[0]
        .html_url
        .ends_with(&format!("/acme/widgets/pull/{closed}")));
    // And a branch without pull requests has none
    assert!(client(&world)
        .pulls_for_branch("issue-9")
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn pulls_for_branch_reads_every_page_and_tells_merged_from_closed() {
    // Given 101 closed PRs and one merged PR on issue-5 (more than one page of 100)
    let world = World::new().await;
    let mut expected: Vec<u64> = (0..101)
        .map(|i| {
            world
                .sim
                .create_pull(BOT, "issue-5", &format!("try {i}"), PullState::Closed)
        })
        .collect();
    let merged = world
        .sim
        .create_pull(BOT, "issue-5", "Fix #5", PullState::Merged);
    expected.push(merged);
    // When the client lists them
    let pulls = client(&world).pulls_for_branch("issue-5").await.unwrap();
    // Then all arrive in number order, over two requests
    assert_eq!(numbers(&pulls), expected);
    assert_eq!(world.sim.count("GET", PULLS_ROUTE), 2);
    let merged: Vec<u64> = pulls
        .iter()
        .filter(|p| p.merged)
        .map(|p| p.number)
        .collect();
    assert_eq!(merged, [*expected.last().unwrap()]);
    assert!(pulls.iter().all(|p| p.state == "closed"));
}

#[tokio::test]
async fn a_head_without_its_owner_is_ignored_as_on_github() {
    let world = World::new().await;
    let a = world.sim.create_pull(BOT, "issue-1", "a", PullState::Open);
    let b = world
        .sim
        .create_pull(BOT, "issue-2", "b", PullState::Closed);
    let octo = octo(&world);
    let numbers_of = |v: &Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|p| p["number"].as_u64().unwrap())
            .collect()
    };
    let pulls = "/repos/acme/widgets/pulls";
    // A bare branch name filters nothing (newest first by default)
    let (_, _, all) = get(&octo, &format!("{pulls}?state=all&head=issue-1"), None).await;
    assert_eq!(numbers_of(&all), [b, a]);
    // `owner:branch` filters, the owner case-insensitively
    let (_, _, one) = get(&octo, &format!("{pulls}?state=all&head=ACME:issue-1"), None).await;
    assert_eq!(numbers_of(&one), [a]);
    // Another owner's branch of that name is someone else's fork: nothing here
    let (_, _, none) = get(
        &octo,
        &format!("{pulls}?state=all&head=mallory:issue-1"),
        None,
    )
    .await;
    assert_eq!(numbers_of(&none), Vec::<u64>::new());
    // The default state is open
    let (_, _, open) = get(&octo, pulls, None).await;
    assert_eq!(numbers_of(&open), [a]);
    // And a bad state is GitHub's 422
    let (status, _, _) = get(&octo, &format!("{pulls}?state=merged"), None).await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn a_pull_request_is_an_issue_listed_with_a_pull_request_key_and_left_out_by_the_client() {
    // Given an issue, then a PR, then an issue: one number sequence
    let world = World::new().await;
    let first = world.ready_issue("one");
    let pr = world
        .sim
        .create_pull(BOT, "issue-1", "Fix #1", PullState::Open);
    let last = world.ready_issue("two");
    assert_eq!((first + 1, pr + 1), (pr, last));
    // When the issues are listed raw
    let (_, _, items) = get(&octo(&world), "/repos/acme/widgets/issues?state=all", None).await;
    // Then the PR is among them with a pull_request key, the issues without
    let with_key: Vec<u64> = items
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i.get("pull_request").is_some())
        .map(|i| i["number"].as_u64().unwrap())
        .collect();
    assert_eq!(with_key, [pr]);
    assert_eq!(items.as_array().unwrap().len(), 3);
    // And the client's issue list leaves it out
    let listed = client(&world).list_issues("all", None).await.unwrap();
    let listed: Vec<u64> = listed.iter().map(|i| i.number).collect();
    assert_eq!(listed, [first, last]);
    // And GET /pulls/{n} of a plain issue is 404
    let (status, _, _) = get(
        &octo(&world),
        &format!("/repos/acme/widgets/pulls/{first}"),
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_pull_request_follows_its_branch_and_a_closed_one_keeps_its_sha() {
    // Given an open and a closed PR on branches of the origin
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let first_a = origin.push_commit("issue-1", "a1");
    let first_b = origin.push_commit("issue-2", "b1");
    let open = world.sim.create_pull(BOT, "issue-1", "a", PullState::Open);
    let closed = world
        .sim
        .create_pull(BOT, "issue-2", "b", PullState::Closed);
    // When both branches get another push
    let next_a = origin.push_commit("issue-1", "a2");
    origin.push_commit("issue-2", "b2");
    // Then octocrab's typed API reads the open PR at its new head, the closed one at its old
    let pulls = octo(&world);
    let pulls = pulls.pulls("acme", "widgets");
    let open = pulls.get(open).await.expect("pulls().get(open)");
    assert_eq!(open.head.sha, next_a);
    assert_ne!(open.head.sha, first_a);
    assert_eq!(open.merged, Some(false));
    let closed = pulls.get(closed).await.expect("pulls().get(closed)");
    assert_eq!(closed.head.sha, first_b);
    assert_eq!(closed.head.label.as_deref(), Some("acme:issue-2"));
}

#[tokio::test]
async fn the_new_routes_are_charged_logged_and_answer_304_on_a_matching_etag() {
    let world = World::new().await;
    world.sim.add_branch("main", &"d".repeat(40));
    let octo = octo(&world);
    let before = world.sim.rate_remaining(BOT_TOKEN);
    let (status, tag, _) = get(&octo, "/repos/acme/widgets/branches", None).await;
    assert_eq!(status, 200);
    let (status, _, _) = get(&octo, "/repos/acme/widgets/branches", tag.as_deref()).await;
    assert_eq!(status, 304);
    assert_eq!(
        world.sim.rate_remaining(BOT_TOKEN),
        before - 1,
        "a 304 is free"
    );
    assert_eq!(world.sim.count("GET", BRANCHES_ROUTE), 2);
}

#[tokio::test]
async fn an_unreadable_git_origin_is_a_500_naming_git() {
    let world = World::new().await;
    world
        .sim
        .set_git_origin(world.dir.path().join("no-such-repo.git"));
    let (status, _, body) = get(&octo(&world), "/repos/acme/widgets/branches", None).await;
    assert_eq!(status, 500);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("git origin unreadable"),
        "{body}"
    );
}
