//! The GitHub emulator, driven over real HTTP by octocrab: its typed calls prove the JSON
//! shapes deserialize into octocrab's own (strict) models, and raw calls check statuses,
//! headers and error bodies. Each test builds its own emulator, so tests run in parallel.
//!
//! The OpenAPI conformance of every shape is checked by a separate test file.

use github_emulator::{Faults, Permission, Sim, SimConfig, SimServer};
use http::{HeaderMap, Method, StatusCode};
use octocrab::models::reactions::ReactionContent;
use octocrab::Octocrab;
use serde_json::{json, Value};

const ADMIN: &str = "admin-token";
const READER: &str = "read-token";
const COMMENTS: &str = "/repos/{owner}/{repo}/issues/{issue_number}/comments";

/// An emulator with an admin (`thirdshift-bot`) and a reader (`alice`), served on a free port.
async fn given_sim(config: SimConfig) -> (Sim, SimServer) {
    let sim = Sim::new(config);
    sim.add_user("thirdshift-bot", ADMIN, Permission::Admin);
    sim.add_user("alice", READER, Permission::Read);
    let server = sim
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    (sim, server)
}

async fn given_default_sim() -> (Sim, SimServer) {
    given_sim(SimConfig::default()).await
}

fn client(server: &SimServer, token: Option<&str>) -> Octocrab {
    let b = Octocrab::builder()
        .base_uri(server.url.as_str())
        .expect("uri");
    match token {
        Some(t) => b.personal_token(t.to_string()).build().expect("client"),
        None => b.build().expect("client"),
    }
}

/// A raw answer: status, headers and the body as JSON (Null when not JSON).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    json: Value,
}

impl Answer {
    fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    }
}

/// Sends one request with octocrab's `execute` (auth included) and reads the answer.
async fn call(
    oc: &Octocrab,
    method: Method,
    uri: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Answer {
    let mut req = http::Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req.body(body.unwrap_or("").to_string()).expect("request");
    let resp = oc.execute(req).await.expect("execute");
    let status = resp.status();
    let headers = resp.headers().clone();
    let text = oc.body_to_string(resp).await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        json,
    }
}

async fn get(oc: &Octocrab, uri: &str) -> Answer {
    call(oc, Method::GET, uri, None, &[]).await
}

async fn post(oc: &Octocrab, uri: &str, body: Value) -> Answer {
    call(oc, Method::POST, uri, Some(&body.to_string()), &[]).await
}

const ISSUES: &str = "/repos/acme/widgets/issues";

#[tokio::test]
async fn octocrab_typed_calls_deserialize_every_shape() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "First", "", &["ready-for-agent"]);
    let oc = client(&server, Some(ADMIN));
    let issues = oc.issues("acme", "widgets");

    let issue = issues.get(n).await.expect("issue");
    assert_eq!(issue.number, n);
    assert_eq!(issue.labels[0].name, "ready-for-agent");
    assert!(issue.body.is_none(), "an empty body is null, as on GitHub");

    let created = issues
        .create("Second")
        .body("b")
        .send()
        .await
        .expect("create");
    assert_eq!(created.user.login, "thirdshift-bot");
    let c = issues.create_comment(n, "hello").await.expect("comment");
    let c = issues.update_comment(c.id, "edited").await.expect("update");
    assert_eq!(c.body.as_deref(), Some("edited"));
    let listed = issues.list_comments(n).send().await.expect("list comments");
    assert_eq!(listed.items.len(), 1);
    let all = issues
        .list_issue_comments()
        .send()
        .await
        .expect("repo comments");
    assert_eq!(all.items.len(), 1);
    let labels = issues.add_labels(n, &["in-progress".to_string()]).await;
    assert_eq!(labels.expect("add labels").len(), 2);
    issues
        .remove_label(n, "ready-for-agent")
        .await
        .expect("remove");
    issues
        .create_reaction(n, ReactionContent::Eyes)
        .await
        .expect("react");
    let r = issues
        .create_comment_reaction(c.id, ReactionContent::PlusOne)
        .await;
    assert_eq!(
        r.expect("comment reaction").content,
        ReactionContent::PlusOne
    );
    assert_eq!(
        issues
            .list_reactions(n)
            .send()
            .await
            .expect("reactions")
            .items
            .len(),
        1
    );
    assert_eq!(
        issues
            .list_labels_for_repo()
            .send()
            .await
            .expect("labels")
            .items
            .len(),
        2
    );
    let page = issues
        .list()
        .state(octocrab::params::State::All)
        .send()
        .await;
    assert_eq!(page.expect("list issues").items.len(), 2);
    issues.delete_comment(c.id).await.expect("delete comment");

    let repo = oc.repos("acme", "widgets").get().await.expect("repo");
    assert_eq!(repo.full_name.as_deref(), Some("acme/widgets"));
    let me = oc.current().user().await.expect("user");
    assert_eq!(me.login, "thirdshift-bot");
    let rl = oc.ratelimit().get().await.expect("rate limit");
    assert_eq!(rl.resources.core.limit, 5000);
}

#[tokio::test]
async fn anonymous_reads_work_but_writes_need_authentication() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let anon = client(&server, None);
    let a = get(&anon, &format!("{ISSUES}/{n}")).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.header("x-ratelimit-limit"), "60");
    let w = post(
        &anon,
        &format!("{ISSUES}/{n}/comments"),
        json!({"body": "x"}),
    )
    .await;
    assert_eq!(w.status, StatusCode::UNAUTHORIZED);
    assert_eq!(w.json["message"], "Requires authentication");
    assert!(sim.comments(n).is_empty());
}

#[tokio::test]
async fn etag_from_another_token_does_not_match() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let uri = format!("{ISSUES}/{n}");
    let tag = get(&client(&server, Some(ADMIN)), &uri)
        .await
        .header("etag");
    let other = client(&server, Some(READER));
    let a = call(&other, Method::GET, &uri, None, &[("if-none-match", &tag)]).await;
    assert_eq!(a.status, StatusCode::OK);
}

#[tokio::test]
async fn labels_are_created_on_first_use() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let oc = client(&server, Some(ADMIN));
    assert_eq!(
        get(&oc, "/repos/acme/widgets/labels/in-progress")
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    let added = post(
        &oc,
        &format!("{ISSUES}/{n}/labels"),
        json!({"labels": ["in-progress"]}),
    )
    .await;
    assert_eq!(added.status, StatusCode::OK);
    assert_eq!(added.json[0]["name"], "in-progress");
    let bare = post(&oc, &format!("{ISSUES}/{n}/labels"), json!(["blocked"])).await;
    assert_eq!(bare.json.as_array().map(Vec::len), Some(2));

    let label = get(&oc, "/repos/acme/widgets/labels/in-progress").await;
    assert_eq!(label.status, StatusCode::OK);
    assert_eq!(label.json["color"], "ededed");
    assert_eq!(
        sim.issue(n).expect("issue").labels,
        ["in-progress", "blocked"]
    );
}

#[tokio::test]
async fn removing_a_label_answers_the_rest_or_404_label_does_not_exist() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &["a", "b"]);
    let oc = client(&server, Some(ADMIN));
    let uri = format!("{ISSUES}/{n}/labels/a");
    let gone = call(&oc, Method::DELETE, &uri, None, &[]).await;
    assert_eq!(gone.status, StatusCode::OK);
    assert_eq!(gone.json.as_array().map(Vec::len), Some(1));
    let again = call(&oc, Method::DELETE, &uri, None, &[]).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(again.json["message"], "Label does not exist");
    let put = call(
        &oc,
        Method::PUT,
        &format!("{ISSUES}/{n}/labels"),
        Some(r#"{"labels":["c"]}"#),
        &[],
    )
    .await;
    assert_eq!(put.json[0]["name"], "c");
    assert_eq!(sim.issue(n).expect("issue").labels, ["c"]);
}

#[tokio::test]
async fn link_header_pages_through_comments() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    for i in 0..65 {
        sim.add_comment(n, "alice", &format!("c{i}"));
    }
    let oc = client(&server, Some(ADMIN));
    let first = get(&oc, &format!("{ISSUES}/{n}/comments?per_page=30")).await;
    let link = first.header("link");
    let base = format!("{}{ISSUES}/{n}/comments", server.url);
    assert_eq!(
        link,
        format!(
            "<{base}?per_page=30&page=2>; rel=\"next\", <{base}?per_page=30&page=3>; rel=\"last\""
        )
    );
    let last = get(&oc, &format!("{ISSUES}/{n}/comments?per_page=30&page=3")).await;
    assert_eq!(last.json.as_array().map(Vec::len), Some(5));
    assert!(last.header("link").contains("rel=\"prev\""));
    assert!(last.header("link").contains("rel=\"first\""));

    let page = oc
        .issues("acme", "widgets")
        .list_comments(n)
        .per_page(30)
        .send()
        .await;
    let all = oc
        .all_pages(page.expect("page 1"))
        .await
        .expect("all pages");
    let bodies: Vec<_> = all.iter().filter_map(|c| c.body.clone()).collect();
    assert_eq!(bodies.len(), 65);
    assert_eq!((bodies[0].as_str(), bodies[64].as_str()), ("c0", "c64"));
}

#[tokio::test]
async fn ids_increase_across_issues_and_comments() {
    let (sim, server) = given_default_sim().await;
    let oc = client(&server, Some(ADMIN));
    let a = post(&oc, ISSUES, json!({"title": "a"})).await.json;
    let c = post(&oc, &format!("{ISSUES}/1/comments"), json!({"body": "x"}))
        .await
        .json;
    let b = post(&oc, ISSUES, json!({"title": "b"})).await.json;
    let ids: Vec<u64> = [&a, &c, &b]
        .iter()
        .filter_map(|v| v["id"].as_u64())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids[0] > u64::from(u32::MAX), "ids exceed 32 bits: {ids:?}");
    assert!(ids[0] < ids[1] && ids[1] < ids[2], "{ids:?}");
    assert_eq!(
        (a["number"].as_u64(), b["number"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(sim.comments(1)[0].id, ids[1]);
}

#[tokio::test]
async fn faulted_write_can_be_applied_before_502() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    sim.set_faults(Faults {
        server_error_rate: 1.0,
        applied_before_error: 1.0,
        ..Faults::default()
    });
    let oc = client(&server, Some(ADMIN));
    let a = post(
        &oc,
        &format!("{ISSUES}/{n}/comments"),
        json!({"body": "once"}),
    )
    .await;
    assert_eq!(a.status, StatusCode::BAD_GATEWAY);
    assert_eq!(sim.comments(n).len(), 1, "applied although answered 502");
    assert_eq!(sim.count("POST", COMMENTS), 1);
}

#[tokio::test]
async fn faulted_write_not_applied_changes_nothing() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    sim.set_faults(Faults {
        server_error_rate: 1.0,
        ..Faults::default()
    });
    let oc = client(&server, Some(ADMIN));
    let a = post(&oc, &format!("{ISSUES}/{n}/comments"), json!({"body": "x"})).await;
    assert_eq!(a.status, StatusCode::BAD_GATEWAY);
    assert!(sim.comments(n).is_empty());
    assert_eq!(
        get(&oc, "/rate_limit").await.status,
        StatusCode::OK,
        "never faulted"
    );
}

#[tokio::test]
async fn secondary_limit_fault_answers_429_with_retry_after() {
    let (_sim, server) = given_default_sim().await;
    _sim.set_faults(Faults {
        rate_limited_rate: 1.0,
        ..Faults::default()
    });
    let a = get(&client(&server, Some(ADMIN)), ISSUES).await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(a.header("retry-after"), "1");
    assert!(a.json["message"]
        .as_str()
        .unwrap_or("")
        .contains("secondary rate limit"));
}

#[tokio::test]
async fn secondary_limit_fault_can_answer_githubs_403_form_with_retry_after() {
    let (sim, server) = given_default_sim().await;
    // Given every request answered as a secondary limit, in its 403 form
    sim.set_faults(Faults {
        rate_limited_rate: 1.0,
        secondary_as_403: 1.0,
        ..Faults::default()
    });
    // When a client reads the issues
    let a = get(&client(&server, Some(ADMIN)), ISSUES).await;
    // Then it gets 403 with retry-after and GitHub's secondary limit message
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert_eq!(a.header("retry-after"), "1");
    assert!(a.json["message"]
        .as_str()
        .unwrap_or("")
        .contains("secondary rate limit"));
}

#[tokio::test]
async fn faults_are_reproducible_from_the_seed() {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (sim, server) = given_default_sim().await;
        sim.set_faults(Faults {
            server_error_rate: 0.5,
            ..Faults::default()
        });
        let oc = client(&server, Some(ADMIN));
        let mut statuses = Vec::new();
        for _ in 0..20 {
            statuses.push(get(&oc, ISSUES).await.status.as_u16());
        }
        runs.push(statuses);
    }
    assert_eq!(runs[0], runs[1]);
    assert!(
        runs[0].contains(&502) && runs[0].contains(&200),
        "{:?}",
        runs[0]
    );
}

#[tokio::test]
async fn exhausted_budget_gives_403_and_rate_limit_is_free() {
    let (sim, server) = given_sim(SimConfig {
        rate_limit: 2,
        ..SimConfig::default()
    })
    .await;
    let oc = client(&server, Some(ADMIN));
    assert_eq!(get(&oc, ISSUES).await.header("x-ratelimit-remaining"), "1");
    assert_eq!(get(&oc, ISSUES).await.header("x-ratelimit-remaining"), "0");
    let refused = get(&oc, ISSUES).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.json["message"]
        .as_str()
        .unwrap_or("")
        .starts_with("API rate limit exceeded for user ID"));
    assert_eq!(refused.header("x-ratelimit-remaining"), "0");
    let rl = get(&oc, "/rate_limit").await;
    assert_eq!(rl.status, StatusCode::OK);
    assert_eq!(rl.json["resources"]["core"]["remaining"], 0);
    assert_eq!(sim.rate_remaining(ADMIN), 0);
    assert_eq!(sim.rate_remaining(READER), 2);
}

#[tokio::test]
async fn every_response_carries_rate_and_request_id_headers() {
    let (_sim, server) = given_default_sim().await;
    let a = get(&client(&server, Some(ADMIN)), "/no/such/path").await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(a.json["message"], "Not Found");
    for h in [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-used",
        "x-ratelimit-reset",
        "x-github-request-id",
    ] {
        assert!(!a.header(h).is_empty(), "missing {h}");
    }
    assert_eq!(a.header("x-ratelimit-resource"), "core");
}

#[tokio::test]
async fn request_log_counts_by_route_template() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let oc = client(&server, Some(ADMIN));
    post(&oc, &format!("{ISSUES}/{n}/comments"), json!({"body": "a"})).await;
    post(&oc, &format!("{ISSUES}/{n}/comments"), json!({"body": "b"})).await;
    get(&oc, &format!("{ISSUES}/{n}/comments?per_page=5")).await;
    assert_eq!(sim.count("POST", COMMENTS), 2);
    assert_eq!(sim.count("GET", COMMENTS), 1);
    let last = sim.requests().pop().expect("logged");
    assert_eq!((last.query.as_str(), last.status), ("per_page=5", 200));
    assert_eq!(last.login.as_deref(), Some("thirdshift-bot"));
    sim.clear_requests();
    assert!(sim.requests().is_empty());
}

#[tokio::test]
async fn bad_json_is_400_and_missing_title_is_422() {
    let (_sim, server) = given_default_sim().await;
    let oc = client(&server, Some(ADMIN));
    let bad = call(&oc, Method::POST, ISSUES, Some("{nope"), &[]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.json["message"], "Problems parsing JSON");
    let missing = post(&oc, ISSUES, json!({"body": "no title"})).await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        missing.json,
        json!({
            "message": "Validation Failed",
            "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}],
            "documentation_url": "https://docs.github.com/rest",
            "status": "422",
        })
    );
    let wrong = post(&oc, ISSUES, json!({"title": 5})).await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        get(&oc, &format!("{ISSUES}/abc")).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn reader_may_comment_but_not_label_or_edit_others_comments() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let bots = sim.add_comment(n, "thirdshift-bot", "record");
    let alice = client(&server, Some(READER));
    let own = post(
        &alice,
        &format!("{ISSUES}/{n}/comments"),
        json!({"body": "mine"}),
    )
    .await;
    assert_eq!(own.status, StatusCode::CREATED);
    let labelled = post(&alice, &format!("{ISSUES}/{n}/labels"), json!(["x"])).await;
    assert_eq!(labelled.status, StatusCode::FORBIDDEN);
    let uri = format!("{ISSUES}/comments/{bots}");
    let edit = call(
        &alice,
        Method::PATCH,
        &uri,
        Some(r#"{"body":"forged"}"#),
        &[],
    )
    .await;
    assert_eq!(edit.status, StatusCode::FORBIDDEN);
    let own_uri = format!("{ISSUES}/comments/{}", own.json["id"]);
    let mine = call(
        &alice,
        Method::PATCH,
        &own_uri,
        Some(r#"{"body":"fixed"}"#),
        &[],
    )
    .await;
    assert_eq!(mine.status, StatusCode::OK);
    assert_eq!(sim.comments(n)[0].body, "record");
    assert_eq!(sim.comments(n)[1].body, "fixed");
}

#[tokio::test]
async fn collaborator_permission_maps_maintain_to_write_and_triage_to_read() {
    let (sim, server) = given_default_sim().await;
    sim.add_user("mo", "mo-token", Permission::Maintain);
    sim.add_user("tri", "tri-token", Permission::Triage);
    sim.add_bot("thirdshift[bot]", "app-token", Permission::Write);
    let oc = client(&server, Some(READER));
    let uri = |u: &str| format!("/repos/acme/widgets/collaborators/{u}/permission");
    let mo = get(&oc, &uri("mo")).await.json;
    assert_eq!(
        (mo["permission"].as_str(), mo["role_name"].as_str()),
        (Some("write"), Some("maintain"))
    );
    let tri = get(&oc, &uri("tri")).await.json;
    assert_eq!(
        (tri["permission"].as_str(), tri["role_name"].as_str()),
        (Some("read"), Some("triage"))
    );
    let bot = get(&oc, &uri("thirdshift%5Bbot%5D")).await.json;
    assert_eq!(bot["user"]["type"], "Bot");
    assert_eq!(get(&oc, &uri("nobody")).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn reacting_twice_answers_201_then_200_and_bad_content_is_422() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let oc = client(&server, Some(ADMIN));
    let uri = format!("{ISSUES}/{n}/reactions");
    let first = post(&oc, &uri, json!({"content": "eyes"})).await;
    let second = post(&oc, &uri, json!({"content": "eyes"})).await;
    assert_eq!(
        (first.status, second.status),
        (StatusCode::CREATED, StatusCode::OK)
    );
    assert_eq!(first.json["id"], second.json["id"]);
    assert_eq!(
        post(&oc, &uri, json!({"content": "wow"})).await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    let issue = get(&oc, &format!("{ISSUES}/{n}")).await.json;
    assert_eq!(issue["reactions"]["eyes"], 1);
}

#[tokio::test]
async fn issue_list_filters_by_state_labels_and_since() {
    let (sim, server) = given_default_sim().await;
    sim.create_issue("alice", "a", "", &["ready-for-agent", "x"]);
    sim.create_issue("alice", "b", "", &["ready-for-agent"]);
    let c = sim.create_issue("alice", "c", "", &["x"]);
    sim.close_issue(c);
    let oc = client(&server, Some(ADMIN));
    let titles = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| i["title"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(titles(&get(&oc, ISSUES).await.json), ["b", "a"]);
    assert_eq!(
        titles(
            &get(&oc, &format!("{ISSUES}?labels=ready-for-agent,x"))
                .await
                .json
        ),
        ["a"]
    );
    assert_eq!(
        titles(
            &get(&oc, &format!("{ISSUES}?state=all&labels=x&direction=asc"))
                .await
                .json
        ),
        ["a", "c"]
    );
    assert_eq!(
        titles(&get(&oc, &format!("{ISSUES}?state=closed")).await.json),
        ["c"]
    );
    let future = get(&oc, &format!("{ISSUES}?since=2999-01-01T00:00:00Z")).await;
    assert_eq!(future.json, json!([]));
    assert_eq!(
        get(&oc, &format!("{ISSUES}?state=bogus")).await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
}

#[tokio::test]
async fn closing_and_commenting_keep_counts_and_timestamps() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let oc = client(&server, Some(ADMIN));
    post(&oc, &format!("{ISSUES}/{n}/comments"), json!({"body": "x"})).await;
    let closed = call(
        &oc,
        Method::PATCH,
        &format!("{ISSUES}/{n}"),
        Some(r#"{"state":"closed","state_reason":"not_planned"}"#),
        &[],
    )
    .await;
    assert_eq!(closed.status, StatusCode::OK);
    let j = closed.json;
    assert_eq!(
        (j["state"].as_str(), j["state_reason"].as_str()),
        (Some("closed"), Some("not_planned"))
    );
    assert_eq!(j["comments"], 1);
    assert_eq!(j["closed_by"]["login"], "thirdshift-bot");
    let closed_at = j["closed_at"].as_str().unwrap_or("");
    assert!(
        closed_at.ends_with('Z') && closed_at.len() == 20,
        "{closed_at}"
    );
    assert!(j["updated_at"].as_str() >= j["created_at"].as_str());
    let typed = oc.issues("acme", "widgets").get(n).await.expect("typed");
    assert!(typed.closed_at.is_some());
    assert_eq!(sim.issue(n).expect("issue").state, "closed");
}

#[tokio::test]
async fn server_stops_when_dropped() {
    let (_sim, server) = given_default_sim().await;
    let url = server.url.clone();
    let oc = client(&server, Some(ADMIN));
    assert_eq!(get(&oc, ISSUES).await.status, StatusCode::OK);
    drop(server);
    let fresh = Octocrab::builder()
        .base_uri(url.as_str())
        .expect("uri")
        .build()
        .expect("client");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while fresh._get(ISSUES).await.is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server still answers 10 s after it was dropped"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn issue_author_may_close_own_issue_but_not_others() {
    let (sim, server) = given_default_sim().await;
    let own = sim.create_issue("alice", "mine", "", &[]);
    let other = sim.create_issue("thirdshift-bot", "theirs", "", &[]);
    let alice = client(&server, Some(READER));
    let close = Some(r#"{"state":"closed"}"#);
    let a = call(
        &alice,
        Method::PATCH,
        &format!("{ISSUES}/{own}"),
        close,
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.json["state_reason"], "completed");
    let b = call(
        &alice,
        Method::PATCH,
        &format!("{ISSUES}/{other}"),
        close,
        &[],
    )
    .await;
    assert_eq!(b.status, StatusCode::FORBIDDEN);
    assert_eq!(sim.issue(other).expect("issue").state, "open");
}

#[tokio::test]
async fn labels_sent_by_a_reader_when_opening_an_issue_are_dropped() {
    let (sim, server) = given_default_sim().await;
    let alice = client(&server, Some(READER));
    let a = post(
        &alice,
        ISSUES,
        json!({"title": "t", "labels": ["ready-for-agent"]}),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED);
    assert_eq!(a.json["labels"], json!([]));
    assert!(a
        .header("location")
        .ends_with("/repos/acme/widgets/issues/1"));
    assert!(sim.issue(1).expect("issue").labels.is_empty());
}

#[tokio::test]
async fn repo_wide_comments_sort_and_filter_by_since() {
    let (sim, server) = given_default_sim().await;
    let a = sim.create_issue("alice", "a", "", &[]);
    let b = sim.create_issue("alice", "b", "", &[]);
    let first = sim.add_comment(a, "alice", "1");
    let second = sim.add_comment(b, "alice", "2");
    let oc = client(&server, Some(ADMIN));
    let ids = |v: &Value| -> Vec<u64> {
        v.as_array()
            .map(|a| a.iter().filter_map(|c| c["id"].as_u64()).collect())
            .unwrap_or_default()
    };
    let uri = "/repos/acme/widgets/issues/comments";
    assert_eq!(ids(&get(&oc, uri).await.json), [first, second]);
    let desc = get(&oc, &format!("{uri}?sort=created")).await.json;
    assert_eq!(ids(&desc), [second, first]);
    let later = get(&oc, &format!("{uri}?since=2999-01-01T00:00:00Z"))
        .await
        .json;
    assert!(ids(&later).is_empty());
    assert_eq!(
        get(&oc, &format!("{uri}?since=yesterday")).await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
}

#[tokio::test]
async fn overlong_comment_body_is_422() {
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let oc = client(&server, Some(ADMIN));
    let body = "x".repeat(65_537);
    let a = post(
        &oc,
        &format!("{ISSUES}/{n}/comments"),
        json!({ "body": body }),
    )
    .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(a.json["message"], "Validation Failed");
    let fits = "x".repeat(65_536);
    let b = post(
        &oc,
        &format!("{ISSUES}/{n}/comments"),
        json!({ "body": fits }),
    )
    .await;
    assert_eq!(b.status, StatusCode::CREATED);
}

#[tokio::test]
async fn unserved_method_on_a_known_path_is_404_and_logged_with_its_route() {
    let (sim, server) = given_default_sim().await;
    let oc = client(&server, Some(ADMIN));
    let a = call(&oc, Method::DELETE, ISSUES, None, &[]).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(a.json["message"], "Not Found");
    assert_eq!(sim.count("DELETE", "/repos/{owner}/{repo}/issues"), 1);
    get(&oc, "/nothing/here").await;
    assert_eq!(
        sim.requests().last().map(|e| e.route.clone()),
        Some(String::new())
    );
}

/// The ids in a JSON array of comments.
fn comment_ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|c| c["id"].as_u64()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn stale_list_reads_hide_fresh_comments_from_lists_until_their_window_passes() {
    // Given lists that may be up to three seconds stale (ten quick posts and two list reads
    // take far less, even on a loaded machine)
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let window = std::time::Duration::from_secs(3);
    sim.set_faults(Faults {
        stale_list_reads: Some(window),
        ..Faults::default()
    });
    let oc = client(&server, Some(ADMIN));
    // When ten comments are posted in quick succession
    let mut posted = Vec::new();
    let uri = format!("{ISSUES}/{n}/comments");
    for i in 0..10 {
        let c = post(&oc, &uri, json!({"body": i.to_string()})).await;
        posted.extend(c.json["id"].as_u64());
    }
    // Then each one can be read on its own at once
    let last = *posted.last().expect("posted");
    let single = get(&oc, &format!("{ISSUES}/comments/{last}")).await;
    assert_eq!(single.status, StatusCode::OK);
    // And both lists leave the newest out, showing an unbroken run of the oldest (in order)
    let per_issue = comment_ids(&get(&oc, &format!("{ISSUES}/{n}/comments")).await.json);
    let repo_wide = comment_ids(&get(&oc, &format!("{ISSUES}/comments")).await.json);
    for listed in [&per_issue, &repo_wide] {
        assert!(listed.len() < posted.len(), "stale: {listed:?}");
        assert_eq!(listed[..], posted[..listed.len()], "a prefix of {posted:?}");
    }
    // And once the window has passed (as the emulator drew it), every list shows them all
    let newest = sim.comments(n).iter().filter_map(|c| c.listed_after).max();
    assert!(newest.is_some_and(|d| d <= window), "{newest:?}");
    let deadline = std::time::Instant::now() + window + std::time::Duration::from_secs(10);
    loop {
        let per_issue = comment_ids(&get(&oc, &format!("{ISSUES}/{n}/comments")).await.json);
        let repo_wide = comment_ids(&get(&oc, &format!("{ISSUES}/comments")).await.json);
        if per_issue == posted && repo_wide == posted {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "lists still stale long after the window: {per_issue:?} {repo_wide:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn stale_list_delays_are_drawn_per_comment_within_the_window() {
    // Given lists that may be stale for 300 ms
    let (sim, server) = given_default_sim().await;
    let n = sim.create_issue("alice", "T", "", &[]);
    let window = std::time::Duration::from_millis(300);
    sim.set_faults(Faults {
        stale_list_reads: Some(window),
        ..Faults::default()
    });
    let oc = client(&server, Some(ADMIN));
    // When comments are posted one at a time, each once the one before is listed
    let uri = format!("{ISSUES}/{n}/comments");
    for i in 0..8 {
        let id = post(&oc, &uri, json!({"body": i.to_string()})).await.json["id"].as_u64();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !comment_ids(&get(&oc, &uri).await.json).contains(&id.expect("posted")) {
            assert!(
                std::time::Instant::now() < deadline,
                "comment {i} never listed within 10 s"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
    // Then lists left them out for a while, each its own random part of the window, as the
    // emulator drew it: some short, some long, none longer than the window
    assert!(
        sim.fault_counts().hidden_comments > 0,
        "no list read was stale"
    );
    let delays: Vec<_> = sim
        .comments(n)
        .iter()
        .map(|c| c.listed_after.expect("drawn under stale lists"))
        .collect();
    assert_eq!(delays.len(), 8);
    let (min, max) = (delays.iter().min(), delays.iter().max());
    assert!(
        min < Some(&(window * 2 / 5)),
        "some listed early: {delays:?}"
    );
    assert!(
        max > Some(&(window * 3 / 5)),
        "some listed late: {delays:?}"
    );
    assert!(max <= Some(&window), "within the window: {delays:?}");
}
