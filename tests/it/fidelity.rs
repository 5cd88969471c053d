//! Fidelity to the real GitHub: replies api.github.com really sent, recorded by npm
//! `@octokit/fixtures` (installed by `.ci/install-fixtures.sh`), go through our own client
//! (`src/github`, over HTTP from a replay server, `tests/it/support/replay.rs`) and our record
//! readers, and the emulator's replies to the same kinds of request have the recorded replies'
//! keys and value types.
//!
//! `tests/it/conformance.rs` checks the recorded replies and the emulator against GitHub's OpenAPI
//! description; this file checks what the description cannot: that our decoding, pagination and
//! error mapping take GitHub's real bodies and headers, and that the emulator has no key the
//! real replies lack (and lacks none they have) beyond the exceptions listed in `EXCEPTIONS`.
//!
//! The fixtures record no issue comment and no 401, so comments are served from GitHub's own
//! documented example (`issue-comment-items` in the OpenAPI description) and the 401 path stays
//! with the emulator's tests (`tests/it/github_client.rs`).

use crate::harness;
use crate::support;

use std::time::Duration;

use github_emulator::{Permission, Sim, SimConfig};
use serde_json::{json, Value};
use support::exchange::{bearer_client, send};
use support::openapi::Spec;
use support::replay::{scenario, Replay, Route};
use thirdshift_reconciler::github::{Client, GithubError, Repo, RetryPolicy};
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::{ClaimRecord, Ownership, RawComment, Trust};
use thirdshift_reconciler::text::ToComment;

const ORG: &str = "octokit-fixture-org";
const TOKEN: &str = "fixture-token";

/// Our client for `repo` (a scenario's repository) at the replay server.
fn client(replay: &Replay, repo: &str) -> Client {
    let repo: Repo = format!("{ORG}/{repo}").parse().unwrap();
    Client::new(&replay.url, Some(TOKEN.into()), repo)
        .unwrap()
        .with_retry(RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
        })
}

/// Every recorded exchange of a scenario, served as recorded.
fn routes(name: &str) -> Vec<Route> {
    scenario(name).iter().map(Route::recorded).collect()
}

#[tokio::test]
async fn real_issue_pages_are_followed_through_githubs_repositories_id_links() {
    // Given GitHub's five recorded pages of issues, whose `Link: rel="next"` points at
    // `/repositories/1000/issues` rather than at the repository's name
    let recorded = scenario("paginate-issues");
    let mut numbers: Vec<u64> = recorded
        .iter()
        .flat_map(|x| x["response"].as_array().unwrap().clone())
        .map(|i| i["number"].as_u64().unwrap())
        .collect();
    numbers.sort();
    let replay = Replay::start(routes("paginate-issues")).await;
    // When our client lists the open issues
    let issues = client(&replay, "paginate-issues")
        .list_issues("open", None)
        .await
        .expect("real GitHub pages decode");
    // Then it read every page, with credentials on each, and decoded every issue
    assert_eq!(issues.iter().map(|i| i.number).collect::<Vec<_>>(), numbers);
    let served = replay.served();
    let followed: Vec<&str> = served.iter().map(|s| s.request.as_str()).collect();
    assert_eq!(served.len(), 5, "{followed:#?}");
    assert!(followed[1..]
        .iter()
        .all(|r| r.starts_with("GET /repositories/1000/issues?")));
    assert!(served.iter().all(|s| s.authorized), "{served:#?}");
    assert!(issues.iter().all(|i| i.is_open() && i.body.is_none()));
}

#[tokio::test]
async fn a_real_created_issue_and_label_reply_decode() {
    // Given GitHub's recorded replies to creating an issue and adding labels to it
    let replay = Replay::start(routes("add-labels-to-issue")).await;
    let client = client(&replay, "add-labels-to-issue");
    // When our client creates the issue and adds a label
    let issue = client
        .create_issue("Issue without a label", "", &[])
        .await
        .expect("the real 201 decodes");
    client.add_label(issue.number, "Foo").await.unwrap();
    // Then the issue is read as GitHub sent it
    assert_eq!(issue.number, 1);
    assert_eq!(issue.title, "Issue without a label");
    assert!(issue.is_open() && issue.labels.is_empty());
    assert!(issue.html_url.starts_with("https://github.com/"));
}

#[tokio::test]
async fn real_error_replies_become_errors_a_person_can_act_on() {
    // Given GitHub's recorded 422 (a label's invalid color), 404 (a branch not protected) and
    // 301 (a renamed repository) served where our client posts, reads an issue and a branch
    let base = format!("/repos/{ORG}/errors");
    let invalid = Route::recorded(&scenario("errors")[0]);
    let missing = Route::recorded(&scenario("branch-protection")[0]);
    let moved = Route::recorded(&scenario("rename-repository")[1]);
    let replay = Replay::start(vec![
        invalid.at("POST", &format!("{base}/issues/1/comments")),
        missing.clone().at("GET", &format!("{base}/issues/2")),
        missing.at("GET", &format!("{base}/branches/issue-2")),
        moved.at("GET", &format!("{base}/issues/3")),
    ])
    .await;
    let client = client(&replay, "errors");
    // When it makes those calls
    let posted = client.create_comment(1, "hello").await.unwrap_err();
    let read = client.get_issue(2).await.unwrap_err();
    let branch = client.branch_head("issue-2").await;
    let renamed = client.get_issue(3).await.unwrap_err();
    // Then each is a typed error carrying GitHub's message, and a missing branch is none
    assert!(
        matches!(&posted, GithubError::Status { status: 422, message, .. } if message == "Validation Failed"),
        "{posted:?}"
    );
    assert!(posted
        .to_string()
        .contains("failed with 422: Validation Failed"));
    assert!(matches!(read, GithubError::NotFound { .. }), "{read:?}");
    assert_eq!(branch.unwrap(), None);
    assert!(
        matches!(&renamed, GithubError::Status { status: 301, message, .. } if message == "Moved Permanently"),
        "{renamed:?}"
    );
}

/// GitHub's documented reply to listing an issue's comments (the fixtures record none), with
/// `bodies` in place of the example's, comment ids from 1.
fn documented_comments(bodies: &[(&str, String)]) -> Value {
    let example = Spec::get().example("issue-comment-items")[0].clone();
    let items = bodies.iter().enumerate().map(|(i, (author, body))| {
        let mut comment = example.clone();
        comment["id"] = json!(i as u64 + 1);
        comment["body"] = json!(body);
        comment["user"]["login"] = json!(author);
        comment
    });
    Value::Array(items.collect())
}

fn claim(issue: u64, claim_id: &str) -> ClaimRecord {
    let owner = ProcessIdentity {
        pid: 4242,
        start_ticks: 7,
    };
    harness::claim_record(issue, "fixture-host", "m", owner, "b", claim_id)
}

#[tokio::test]
async fn claims_are_read_from_comments_in_githubs_shape_with_web_line_endings() {
    // Given GitHub's documented comment list holding, by id: a person's note, our bot's claim
    // as GitHub returns a comment edited on the web (CRLF line endings), a stranger's forged
    // claim, and a later claim by the bot
    let web = claim(7, "c-first").to_comment().replace('\n', "\r\n");
    let bodies = [
        ("octocat", "Me too".to_string()),
        ("thirdshift-bot", web),
        ("mallory", claim(7, "c-forged").to_comment()),
        ("thirdshift-bot", claim(7, "c-second").to_comment()),
    ];
    let path = format!("/repos/{ORG}/comments/issues/7/comments");
    let list = Route::recorded(&scenario("labels")[0]).at("GET", &path);
    let replay = Replay::start(vec![list.with_body(&documented_comments(&bodies))]).await;
    // When our client lists them and the ownership rule reads them
    let comments = client(&replay, "comments")
        .list_issue_comments(7)
        .await
        .expect("GitHub's documented comments decode");
    let raw: Vec<RawComment> = comments
        .iter()
        .map(|c| RawComment {
            id: c.id,
            author: c.author().to_string(),
            body: c.text().to_string(),
        })
        .collect();
    let own = Ownership::of(7, &raw, &Trust::new(["thirdshift-bot"]));
    // Then the first trusted claim owns the issue, the later one is superseded and the
    // stranger's is reported, never believed
    assert_eq!(
        own.owner.as_ref().map(|o| o.record.claim_id.as_str()),
        Some("c-first")
    );
    assert_eq!(own.superseded.len(), 1);
    assert_eq!(own.superseded[0].record.claim_id, "c-second");
    assert!(
        own.problems.iter().any(|p| p.comment_id == 3),
        "{:?}",
        own.problems
    );
}

/// Keys one side may have and the other lack (`true`: the emulator has it, the recording does
/// not), and why. Everything else must match: the same keys, and the same JSON type for each
/// value (null matches any type: GitHub's nullable fields are null in one reply, set in another).
const EXCEPTIONS: &[(&str, bool, &str)] = &[
    (
        "user_view_type",
        true,
        "added to users by GitHub after the recordings (2022)",
    ),
    (
        "has_discussions",
        true,
        "added to repositories by GitHub after the recordings",
    ),
    (
        "status",
        true,
        "added to error bodies by GitHub after the recordings",
    ),
    (
        "closed_by",
        true,
        "GitHub leaves it out of issue lists; the emulator always sends it",
    ),
    (
        "organization",
        false,
        "the recorded repository belongs to an organization",
    ),
    ("allow_auto_merge", false, MERGE_SETTINGS),
    ("allow_merge_commit", false, MERGE_SETTINGS),
    ("allow_rebase_merge", false, MERGE_SETTINGS),
    ("allow_squash_merge", false, MERGE_SETTINGS),
    ("allow_update_branch", false, MERGE_SETTINGS),
    ("delete_branch_on_merge", false, MERGE_SETTINGS),
    ("use_squash_pr_title_as_default", false, MERGE_SETTINGS),
    ("temp_clone_token", false, MERGE_SETTINGS),
];

const MERGE_SETTINGS: &str =
    "repository settings GitHub shows its admins; the emulator has none and the tool reads none";

/// Where `emulated` departs in shape from `recorded`: keys one has and the other lacks, values
/// of different JSON types. Arrays compare their first items.
fn shape_differences(recorded: &Value, emulated: &Value, at: &str, out: &mut Vec<String>) {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let excepted = |key: &str, emulated_only: bool| {
        EXCEPTIONS
            .iter()
            .any(|(k, side, _)| *k == key && *side == emulated_only)
    };
    match (recorded, emulated) {
        (Value::Null, _) | (_, Value::Null) => {}
        (Value::Object(r), Value::Object(e)) => {
            for (key, value) in r {
                match e.get(key) {
                    Some(other) => shape_differences(value, other, &format!("{at}.{key}"), out),
                    None if excepted(key, false) => {}
                    None => out.push(format!("{at}.{key}: recorded, not emulated")),
                }
            }
            for key in e
                .keys()
                .filter(|k| !r.contains_key(*k) && !excepted(k, true))
            {
                out.push(format!("{at}.{key}: emulated, not recorded"));
            }
        }
        (Value::Array(r), Value::Array(e)) => {
            if let (Some(r), Some(e)) = (r.first(), e.first()) {
                shape_differences(r, e, &format!("{at}[0]"), out);
            }
        }
        (r, e) if kind(r) != kind(e) => {
            out.push(format!("{at}: recorded {}, emulated {}", kind(r), kind(e)))
        }
        _ => {}
    }
}

#[tokio::test]
async fn the_emulators_replies_have_the_recorded_replies_keys_and_types() {
    // Given an emulator with an issue carrying a label, and GitHub's recorded replies
    let sim = Sim::new(SimConfig::default());
    sim.add_user("octo", TOKEN, Permission::Admin);
    let issue = sim.create_issue("octo", "Wobbles", "Steps", &["bug"]);
    let server = sim.serve(([127, 0, 0, 1], 0).into()).await.unwrap();
    let octo = bearer_client(&server.url, TOKEN);
    let repo = format!("/repos/{}", sim.repo_full_name());
    let recorded = |name: &str, i: usize| scenario(name)[i].clone();
    let cases = [
        (
            "GET",
            format!("{repo}/issues"),
            None,
            recorded("paginate-issues", 0),
        ),
        (
            "POST",
            format!("{repo}/issues"),
            Some(json!({"title": "New"})),
            recorded("add-labels-to-issue", 0),
        ),
        (
            "POST",
            format!("{repo}/issues/{issue}/labels"),
            Some(json!({"labels": ["Foo"]})),
            recorded("add-labels-to-issue", 1),
        ),
        ("GET", format!("{repo}/labels"), None, recorded("labels", 0)),
        (
            "POST",
            format!("{repo}/labels"),
            Some(json!({"name": "test-label", "color": "663399"})),
            recorded("labels", 1),
        ),
        (
            "GET",
            format!("{repo}/labels/test-label"),
            None,
            recorded("labels", 2),
        ),
        ("GET", repo.clone(), None, recorded("get-repository", 0)),
        (
            "POST",
            format!("{repo}/labels"),
            Some(json!({"name": "foo", "color": "invalid"})),
            recorded("errors", 0),
        ),
        (
            "GET",
            format!("{repo}/branches/main/protection"),
            None,
            recorded("branch-protection", 0),
        ),
    ];
    let mut differences = Vec::new();
    for (method, path, body, recorded) in cases {
        // When the emulator answers the same kind of request
        let x = send(&octo, method, "", &path, body, Default::default()).await;
        // Then it answers with the recorded status, and a body with the recorded reply's keys
        // and types (a missing body differs from any recorded one)
        let at = x.describe();
        if recorded["status"].as_u64() != Some(u64::from(x.status)) {
            differences.push(format!("{at}: recorded status {}", recorded["status"]));
        }
        let response = &recorded["response"];
        let listed = |v: &Value| v.as_array().map(Vec::len);
        match &x.body {
            // A list of nothing would match any recorded list: the case must list something
            Some(emulated) if listed(emulated) == Some(0) && listed(response) > Some(0) => {
                differences.push(format!("{at}: recorded items, emulated an empty list"));
            }
            Some(emulated) => shape_differences(response, emulated, &at, &mut differences),
            None if response.is_null() => {}
            None => differences.push(format!("{at}: recorded a body, emulated none")),
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// The relations of a `Link` header, in order, and the path of each URL.
fn link_relations(link: Option<&str>) -> Vec<(String, String)> {
    let Some(link) = link else { return Vec::new() };
    link.split(", ")
        .map(|part| {
            let (url, rel) = part.split_once("; ").expect("<url>; rel=\"...\"");
            let url = url.trim_matches(['<', '>']);
            let path = url
                .splitn(4, '/')
                .nth(3)
                .unwrap_or("")
                .split('?')
                .next()
                .unwrap();
            (rel.to_string(), format!("/{path}"))
        })
        .collect()
}

#[tokio::test]
async fn the_emulators_link_headers_carry_the_recorded_relations_in_githubs_order() {
    // Given GitHub's five recorded pages of 13 issues, 3 a page, and an emulator with 13 issues
    let recorded: Vec<Option<String>> = scenario("paginate-issues")
        .iter()
        .map(|x| x["headers"]["link"].as_str().map(str::to_string))
        .collect();
    let sim = Sim::new(SimConfig::default());
    sim.add_user("octo", TOKEN, Permission::Admin);
    for n in 1..=13 {
        sim.create_issue("octo", &format!("Test issue {n}"), "", &[]);
    }
    let server = sim.serve(([127, 0, 0, 1], 0).into()).await.unwrap();
    let octo = bearer_client(&server.url, TOKEN);
    let issues = format!("/repos/{}/issues", sim.repo_full_name());
    for (page, recorded) in recorded.iter().enumerate() {
        // When the emulator serves the same page
        let path = format!("{issues}?per_page=3&page={}", page + 1);
        let x = send(&octo, "GET", "", &path, None, Default::default()).await;
        // Then its Link header names the same relations in the same order; GitHub's URLs go
        // through `/repositories/{id}`, the emulator's through the repository's name
        let real = link_relations(recorded.as_deref());
        let emulated = link_relations(x.header("link"));
        let rels = |l: &[(String, String)]| l.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>();
        assert_eq!(rels(&emulated), rels(&real), "page {}", page + 1);
        assert!(
            real.iter().all(|(_, p)| p == "/repositories/1000/issues"),
            "{real:?}"
        );
        assert!(emulated.iter().all(|(_, p)| *p == issues), "{emulated:?}");
        assert_eq!(
            x.body.unwrap().as_array().unwrap().len(),
            if page == 4 { 1 } else { 3 }
        );
    }
}
