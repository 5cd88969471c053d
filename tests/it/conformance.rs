//! Conformance of the GitHub emulator (`crates/github-emulator`) to GitHub's published OpenAPI description
//! (npm `@octokit/openapi`, installed by `.ci/install-fixtures.sh`), and to octocrab's models.
//!
//! Every route the emulator serves is exercised over HTTP with the real octocrab client,
//! successes and errors alike; each reply's status must be one the operation declares and its
//! body must match the declared schema and deserialize into octocrab's model for it. The
//! emulator's request log proves the list of routes below is complete, and a sweep over every
//! path in the description finds any route the emulator serves that the list lacks.
//!
//! The `validator_*` tests prove the validator in `tests/it/support/openapi.rs` accepts GitHub's
//! own examples and rejects broken variants, so it cannot pass everything silently.
//!
//! The one GraphQL query the tool sends (`github::ISSUE_COMMENTS_QUERY`) is checked against
//! GitHub's published GraphQL schema (npm `@octokit/graphql-schema`), and so is the emulator's
//! answer to it, by the checker in `tests/it/support/graphql.rs` (itself shown to reject broken
//! queries and answers). `POST /graphql` is not in the OpenAPI description, so the REST sweep
//! below does not see it.
//!
//! Not tested here: the emulator's behaviour beyond shapes (pagination, faults, stale reads),
//! request bodies against the description, and response headers other than the rate budget.

use crate::support;

use std::collections::BTreeSet;

use github_emulator::{Permission, PullState, Sim, SimApp, SimConfig, SimServer};
use http::header::{HeaderMap, HeaderValue, IF_NONE_MATCH};
use octocrab::models;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use support::exchange::{anonymous_client, bearer_client, token_scheme_client, Exchange, Recorder};
use support::openapi::{report, Spec, Violation};
use thirdshift_reconciler::github::app_jwt;

const REPO: &str = "/repos/{owner}/{repo}";
const ISSUES: &str = "/repos/{owner}/{repo}/issues";
const ISSUE: &str = "/repos/{owner}/{repo}/issues/{issue_number}";
const ISSUE_COMMENTS: &str = "/repos/{owner}/{repo}/issues/{issue_number}/comments";
const REPO_COMMENTS: &str = "/repos/{owner}/{repo}/issues/comments";
const COMMENT: &str = "/repos/{owner}/{repo}/issues/comments/{comment_id}";
const LABELS: &str = "/repos/{owner}/{repo}/labels";
const LABEL: &str = "/repos/{owner}/{repo}/labels/{name}";
const ISSUE_LABELS: &str = "/repos/{owner}/{repo}/issues/{issue_number}/labels";
const ISSUE_LABEL: &str = "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}";
const ISSUE_REACTIONS: &str = "/repos/{owner}/{repo}/issues/{issue_number}/reactions";
const ISSUE_EVENTS: &str = "/repos/{owner}/{repo}/issues/{issue_number}/events";
const COMMENT_REACTIONS: &str = "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions";
const PERMISSION: &str = "/repos/{owner}/{repo}/collaborators/{username}/permission";
const BRANCHES: &str = "/repos/{owner}/{repo}/branches";
const BRANCH: &str = "/repos/{owner}/{repo}/branches/{branch}";
const PULLS: &str = "/repos/{owner}/{repo}/pulls";
const PULL: &str = "/repos/{owner}/{repo}/pulls/{pull_number}";
const USER: &str = "/user";
const RATE_LIMIT: &str = "/rate_limit";
const APP: &str = "/app";
const INSTALLATION: &str = "/repos/{owner}/{repo}/installation";
const ACCESS_TOKENS: &str = "/app/installations/{installation_id}/access_tokens";

/// Every (method, route template) the emulator serves, as its request log names them. A route
/// added to the emulator must be added here, exercised in `exercise_every_route` and given a
/// model in `decode_model`, or the tests below fail.
const EMULATOR_ROUTES: &[(&str, &str)] = &[
    ("GET", REPO),
    ("GET", ISSUES),
    ("POST", ISSUES),
    ("GET", ISSUE),
    ("PATCH", ISSUE),
    ("GET", ISSUE_COMMENTS),
    ("POST", ISSUE_COMMENTS),
    ("GET", REPO_COMMENTS),
    ("GET", COMMENT),
    ("PATCH", COMMENT),
    ("POST", COMMENT),
    ("DELETE", COMMENT),
    ("GET", LABELS),
    ("POST", LABELS),
    ("GET", LABEL),
    ("GET", ISSUE_LABELS),
    ("POST", ISSUE_LABELS),
    ("PUT", ISSUE_LABELS),
    ("DELETE", ISSUE_LABELS),
    ("DELETE", ISSUE_LABEL),
    ("GET", ISSUE_EVENTS),
    ("GET", ISSUE_REACTIONS),
    ("POST", ISSUE_REACTIONS),
    ("GET", COMMENT_REACTIONS),
    ("POST", COMMENT_REACTIONS),
    ("GET", PERMISSION),
    ("GET", BRANCHES),
    ("GET", BRANCH),
    ("GET", PULLS),
    ("GET", PULL),
    ("GET", USER),
    ("GET", RATE_LIMIT),
    ("GET", APP),
    ("GET", INSTALLATION),
    ("POST", ACCESS_TOKENS),
];

/// The operation in the description that documents an emulator route: the same one, except
/// `POST` on a comment, which GitHub accepts as `PATCH` (octocrab's `update_comment` sends it)
/// though the description does not list it.
fn spec_operation<'a>(method: &'a str, route: &'a str) -> (&'a str, &'a str) {
    if method == "POST" && route == COMMENT {
        ("PATCH", route)
    } else {
        (method, route)
    }
}

fn spec() -> &'static Spec {
    Spec::get()
}

const ADMIN_TOKEN: &str = "tok-octo";
const READER_TOKEN: &str = "tok-rita";
const BOT_TOKEN: &str = "tok-bot";

/// A seeded emulator, served on a free local port: an issue with a comment, branches `main` and
/// `issue-1`, an open pull request from `issue-1` (labelled, so its labels are rendered), a
/// merged one from a branch that no longer exists, and a GitHub App installed on the
/// repository (with a JWT signed by its test key).
struct Seeded {
    sim: Sim,
    server: SimServer,
    issue: u64,
    comment: u64,
    pull: u64,
    merged: u64,
    installation: u64,
    app_jwt: String,
}

const APP_ID: u64 = 31_337;

/// Installs a GitHub App with a fresh test key pair; returns its installation and a JWT.
fn install_app(sim: &Sim) -> (u64, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = support::keys::key_pair(dir.path(), "conformance", true);
    let installation = sim
        .add_app(SimApp {
            id: APP_ID,
            slug: "thirdshift".to_string(),
            name: "Thirdshift".to_string(),
            public_key_pem: keys.public_pem,
            permission: Permission::Write,
        })
        .expect("the test public key is accepted");
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(keys.private_pem.as_bytes()).unwrap();
    let jwt = app_jwt(APP_ID, &key, chrono::Utc::now().timestamp()).expect("JWT signed");
    (installation, jwt)
}

async fn world() -> Seeded {
    let sim = Sim::new(SimConfig::default());
    sim.add_user("octo", ADMIN_TOKEN, Permission::Admin);
    sim.add_user("rita", READER_TOKEN, Permission::Read);
    sim.add_bot("thirdshift[bot]", BOT_TOKEN, Permission::Write);
    let issue = sim.create_issue("octo", "Widgets wobble", "Steps to reproduce: …", &["bug"]);
    let comment = sim.add_comment(issue, "rita", "Seen it too.");
    sim.add_branch("main", "6dcb09b5b57875f334f61aebed695e2e4193db5e");
    sim.add_branch("issue-1", "c5b97d5ae6c19d5c5df71a34c7fbeeda2479ccbc");
    let pull = sim.create_pull("thirdshift[bot]", "issue-1", "Fix #1", PullState::Open);
    sim.set_labels(pull, &["bug"]);
    let merged = sim.create_pull("octo", "gone", "Old fix", PullState::Merged);
    let (installation, app_jwt) = install_app(&sim);
    let server = sim
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .expect("emulator starts");
    Seeded {
        sim,
        server,
        issue,
        comment,
        pull,
        merged,
        installation,
        app_jwt,
    }
}

/// Requests that must get the expected status, so that each step of the script is meaningful;
/// every exchange is kept by its recorder. Paths are relative to the seeded repository unless
/// they start with `/repos/`, `/user`, `/rate_limit` or `/app`.
struct Script<'a> {
    rec: &'a mut Recorder,
}

impl Script<'_> {
    async fn send(&mut self, status: u16, method: &str, rel: &str, body: Option<Value>) -> Value {
        let absolute = ["/repos/", USER, RATE_LIMIT, APP]
            .iter()
            .any(|p| rel.starts_with(p));
        let path = if absolute {
            rel.to_string()
        } else {
            format!("/repos/acme/widgets{rel}")
        };
        let route = route_of(method, &path);
        let x = self.rec.send(method, route, &path, body).await;
        let body = x.body.clone().unwrap_or(Value::Null);
        assert_eq!(
            x.status,
            status,
            "{}: unexpected status; body: {body}",
            x.describe()
        );
        body
    }

    async fn get(&mut self, status: u16, rel: &str) -> Value {
        self.send(status, "GET", rel, None).await
    }

    async fn post(&mut self, status: u16, rel: &str, body: Value) -> Value {
        self.send(status, "POST", rel, Some(body)).await
    }

    async fn patch(&mut self, status: u16, rel: &str, body: Value) -> Value {
        self.send(status, "PATCH", rel, Some(body)).await
    }

    async fn put(&mut self, status: u16, rel: &str, body: Value) -> Value {
        self.send(status, "PUT", rel, Some(body)).await
    }

    async fn delete(&mut self, status: u16, rel: &str) -> Value {
        self.send(status, "DELETE", rel, None).await
    }
}

/// The template in [`EMULATOR_ROUTES`] that `method path` should match, preferring literal
/// segments over parameters as the router does (`/issues/comments` over `/issues/{number}`).
fn route_of(method: &str, path: &str) -> &'static str {
    try_route_of(method, path)
        .unwrap_or_else(|| panic!("no route in EMULATOR_ROUTES matches {method} {path}"))
}

fn try_route_of(method: &str, path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.split('?').next().unwrap_or(path).split('/').collect();
    EMULATOR_ROUTES
        .iter()
        .filter(|(m, _)| *m == method)
        .map(|&(_, route)| route)
        .filter(|route| {
            let parts: Vec<&str> = route.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(p, s)| p.starts_with('{') || p == s)
        })
        .max_by_key(|route| route.split('/').filter(|p| !p.starts_with('{')).count())
}

/// Drives every route in [`EMULATOR_ROUTES`] through successes and errors.
async fn exercise_every_route(
    w: &Seeded,
    rec: &mut Recorder,
    reader: &mut Recorder,
    bad: &mut Recorder,
    app: &mut Recorder,
) {
    let mut s = Script { rec };
    let (n, c) = (w.issue, w.comment);
    s.get(200, "").await;
    s.get(404, "/repos/acme/nothing").await;

    // Issues
    s.get(200, "/issues?state=all&per_page=50").await;
    let issue = json!({ "title": "Gears grind", "body": "Loudly.", "labels": ["bug"] });
    let second = s.post(201, "/issues", issue).await["number"]
        .as_u64()
        .unwrap();
    s.post(422, "/issues", json!({ "body": "no title" })).await;
    s.get(200, &format!("/issues/{n}")).await;
    s.get(404, "/issues/999999").await;
    s.patch(200, &format!("/issues/{n}"), json!({ "title": "Wobbles" }))
        .await;
    let close = json!({ "state": "closed", "state_reason": "completed" });
    s.patch(200, &format!("/issues/{second}"), close).await;

    // Comments
    let on_issue = format!("/issues/{n}/comments");
    s.get(200, &on_issue).await;
    let claim = json!({ "body": "<!-- thirdshift:v1:claim {} -->" });
    let mine = s.post(201, &on_issue, claim).await["id"].as_u64().unwrap();
    s.post(422, &on_issue, json!({})).await;
    s.post(404, "/issues/999999/comments", json!({ "body": "x" }))
        .await;
    s.get(200, "/issues/comments?sort=created&direction=asc")
        .await;
    s.get(200, &format!("/issues/comments/{c}")).await;
    s.get(404, "/issues/comments/999999999").await;
    let mine = format!("/issues/comments/{mine}");
    s.patch(200, &mine, json!({ "body": "edited" })).await;
    s.patch(422, &mine, json!({})).await;
    s.post(200, &mine, json!({ "body": "edited by POST" }))
        .await;

    // Labels
    s.get(200, "/labels").await;
    let label = json!({ "name": "in-progress", "color": "fbca04", "description": "Claimed" });
    s.post(201, "/labels", label.clone()).await;
    s.post(422, "/labels", label).await;
    s.get(200, "/labels/bug").await;
    s.get(404, "/labels/nope").await;
    let labels = format!("/issues/{n}/labels");
    s.get(200, &labels).await;
    s.post(200, &labels, json!({ "labels": ["in-progress"] }))
        .await;
    s.put(200, &labels, json!({ "labels": ["bug", "in-progress"] }))
        .await;
    s.delete(200, &format!("{labels}/in-progress")).await;
    s.delete(404, &format!("{labels}/in-progress")).await;
    s.delete(204, &format!("/issues/{second}/labels")).await;
    // Who changed which label when: labeled and unlabeled events, paged
    s.get(200, &format!("/issues/{n}/events")).await;
    s.get(200, &format!("/issues/{n}/events?per_page=1&page=2"))
        .await;

    // Reactions (a repeated reaction is GitHub's 200, a new one 201)
    let on_issue = format!("/issues/{n}/reactions");
    s.post(201, &on_issue, json!({ "content": "rocket" })).await;
    s.post(200, &on_issue, json!({ "content": "rocket" })).await;
    s.post(422, &on_issue, json!({ "content": "thumbsup" }))
        .await;
    s.get(200, &on_issue).await;
    let on_comment = format!("/issues/comments/{c}/reactions");
    s.post(201, &on_comment, json!({ "content": "eyes" })).await;
    s.post(422, &on_comment, json!({ "content": "" })).await;
    s.get(200, &on_comment).await;
    s.get(404, "/issues/comments/999999999/reactions").await;

    // Branches and pull requests (a pull request is an issue: /issues above lists them too)
    s.get(200, "/branches").await;
    s.get(200, "/branches?per_page=1&page=2").await;
    s.get(200, "/branches/issue-1").await;
    let missing = s.get(404, "/branches/issue-404").await;
    assert_eq!(missing["message"], "Branch not found");
    let (p, m) = (w.pull, w.merged);
    s.get(200, "/pulls").await;
    s.get(200, "/pulls?state=all&head=acme:issue-1&base=main")
        .await;
    s.get(200, "/pulls?state=closed&sort=updated&direction=asc")
        .await;
    s.get(422, "/pulls?state=merged").await;
    s.get(200, &format!("/pulls/{p}")).await;
    s.get(200, &format!("/pulls/{m}")).await;
    s.get(200, &format!("/issues/{p}")).await;
    s.get(404, &format!("/pulls/{n}")).await;
    s.get(404, "/pulls/999999").await;

    // Permissions, identity, budget
    for login in ["octo", "rita", "thirdshift%5Bbot%5D"] {
        s.get(200, &format!("/collaborators/{login}/permission"))
            .await;
    }
    s.get(404, "/collaborators/nobody/permission").await;
    s.get(200, "/user").await;
    s.get(200, "/rate_limit").await;
    let mut unknown = Script { rec: bad };
    unknown.get(401, "/user").await;
    unknown.get(401, &format!("/issues/{n}")).await;

    // A reader may not change what others wrote
    let mut rita = Script { rec: reader };
    rita.patch(403, &format!("/issues/{n}"), json!({ "state": "closed" }))
        .await;
    rita.post(403, &labels, json!({ "labels": ["bug"] })).await;
    rita.patch(403, &mine, json!({ "body": "mine now" })).await;

    // A GitHub App: its JWT on the App endpoints, and refused elsewhere; a user's token on them
    let mut app = Script { rec: app };
    app.get(200, "/app").await;
    app.get(200, "/installation").await;
    app.get(404, "/repos/acme/nothing/installation").await;
    let tokens = format!("/app/installations/{}/access_tokens", w.installation);
    app.post(201, &tokens, json!({})).await;
    app.post(404, "/app/installations/1/access_tokens", json!({}))
        .await;
    app.get(403, &format!("/issues/{n}")).await;
    s.get(401, "/app").await;
    s.post(401, &tokens, json!({})).await;

    // Deleting last, so that the routes above saw the comment
    s.delete(204, &mine).await;
    s.get(404, &mine).await;
}

/// Statuses GitHub answers on any route though the description declares them only on some: 401
/// (credentials) and 403 (permissions). Where an operation does not declare one, the reply is
/// held to the description's own shared response for it instead.
const GITHUB_WIDE: &[(u16, &str)] = &[(401, "requires_authentication"), (403, "forbidden")];

/// The exchange's departures from the description, as lines of a report.
fn spec_violations(x: &Exchange) -> Vec<String> {
    let (method, route) = spec_operation(&x.method, &x.route);
    let declared = spec().response_schema(method, route, x.status);
    let github_wide = GITHUB_WIDE.iter().find(|(status, _)| *status == x.status);
    let result = match (declared, github_wide) {
        (Err(_), Some((_, shared))) => match spec().component_response_schema(shared) {
            Ok(Some(schema)) => x
                .body
                .as_ref()
                .map_or(Ok(()), |b| spec().validate(schema, b)),
            other => panic!("the description's `{shared}` response: {other:?}"),
        },
        _ => spec().validate_response(method, route, x.status, x.body.as_ref()),
    };
    let mut out: Vec<String> = result
        .err()
        .unwrap_or_default()
        .iter()
        .map(Violation::to_string)
        .collect();
    if x.body.is_some()
        && !x
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
    {
        out.push(format!(
            "content-type {:?} for a JSON body",
            x.header("content-type")
        ));
    }
    out
}

/// Deserializes a body the way octocrab would, as `T` or a list of `T`.
fn decode<T: DeserializeOwned>(body: &Value) -> Result<(), String> {
    let result = match body {
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| serde_json::from_value::<T>(item.clone()).map(drop)),
        _ => serde_json::from_value::<T>(body.clone()).map(drop),
    };
    result.map_err(|e| {
        format!(
            "does not deserialize into {}: {e}",
            std::any::type_name::<T>()
        )
    })
}

/// The fields octocrab reads from an error reply (its private `GitHubErrorBody`), with `message`
/// required: without it octocrab reports the raw body instead of GitHub's message.
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct ErrorBody {
    message: String,
    documentation_url: Option<String>,
    errors: Option<Vec<Value>>,
}

/// The collaborator-permission reply, read as our own struct: octocrab's `RepoPermission` cannot
/// read `write`, `read` or `none` (docs/commands.md says how a role is read), so only its `user`
/// goes through octocrab.
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct CollaboratorPermission {
    permission: String,
    role_name: String,
    user: models::Author,
}

/// Checks a body against octocrab's model for its route.
fn decode_model(x: &Exchange) -> Result<(), String> {
    let Some(body) = &x.body else { return Ok(()) };
    if x.status >= 400 {
        return decode::<ErrorBody>(body);
    }
    match spec_operation(&x.method, &x.route) {
        ("GET", REPO) => decode::<models::Repository>(body),
        ("GET" | "POST", ISSUES) | ("GET" | "PATCH", ISSUE) => {
            decode::<models::issues::Issue>(body)
        }
        ("GET" | "POST", ISSUE_COMMENTS) | ("GET", REPO_COMMENTS) | ("GET" | "PATCH", COMMENT) => {
            decode::<models::issues::Comment>(body)
        }
        ("GET" | "POST", LABELS) | ("GET", LABEL) | (_, ISSUE_LABELS) | ("DELETE", ISSUE_LABEL) => {
            decode::<models::Label>(body)
        }
        (_, ISSUE_REACTIONS) | (_, COMMENT_REACTIONS) => {
            decode::<models::reactions::Reaction>(body)
        }
        ("GET", ISSUE_EVENTS) => decode::<models::IssueEvent>(body),
        ("GET", PERMISSION) => decode::<CollaboratorPermission>(body),
        ("GET", BRANCHES) | ("GET", BRANCH) => decode::<models::repos::Branch>(body),
        ("GET", PULLS) | ("GET", PULL) => decode::<models::pulls::PullRequest>(body),
        ("GET", USER) => decode::<models::Author>(body),
        ("GET", RATE_LIMIT) => decode::<models::RateLimit>(body),
        ("GET", APP) => decode::<models::App>(body),
        ("GET", INSTALLATION) => decode::<models::Installation>(body),
        ("POST", ACCESS_TOKENS) => decode::<models::InstallationToken>(body),
        (method, route) => Err(format!(
            "no octocrab model is mapped for {method} {route}: add one in decode_model"
        )),
    }
}

#[tokio::test]
async fn every_served_route_replies_as_the_openapi_description_and_octocrabs_models_say() {
    // Given a seeded emulator and octocrab clients for an admin, a reader and an unknown token
    let w = world().await;
    let mut rec = Recorder::new(bearer_client(&w.server.url, ADMIN_TOKEN));
    let mut reader = Recorder::new(bearer_client(&w.server.url, READER_TOKEN));
    let mut bad = Recorder::new(bearer_client(&w.server.url, "tok-unknown"));
    let mut app = Recorder::new(bearer_client(&w.server.url, &w.app_jwt));

    // When every route is exercised, errors included
    exercise_every_route(&w, &mut rec, &mut reader, &mut bad, &mut app).await;

    // Then the emulator's log agrees with the routes the test meant to hit
    let mut exchanges = rec.exchanges;
    exchanges.extend(reader.exchanges);
    exchanges.extend(bad.exchanges);
    exchanges.extend(app.exchanges);
    let log = w.sim.requests();
    assert_eq!(
        log.len(),
        exchanges.len(),
        "the emulator logged a different number of requests"
    );
    for x in &exchanges {
        let seen = log.iter().find(|e| {
            e.method == x.method
                && x.path.split('?').next() == Some(&e.path)
                && e.status == x.status
        });
        let seen =
            seen.unwrap_or_else(|| panic!("{} is not in the emulator's request log", x.describe()));
        assert_eq!(
            seen.route,
            x.route,
            "{}: the emulator matched another route",
            x.describe()
        );
    }
    // And every reply conforms to the description and to octocrab's models
    let mut failures = String::new();
    for x in &exchanges {
        for v in spec_violations(x) {
            failures.push_str(&format!("{} [spec]: {v}\n", x.describe()));
        }
        if let Err(e) = decode_model(x) {
            failures.push_str(&format!("{} [octocrab]: {e}\n", x.describe()));
        }
    }
    assert!(
        failures.is_empty(),
        "the emulator's replies do not conform:\n{failures}"
    );
    // And the routes hit are exactly the routes the emulator is known to serve
    let hit: BTreeSet<(String, String)> = log
        .iter()
        .map(|e| (e.method.clone(), e.route.clone()))
        .collect();
    let listed: BTreeSet<(String, String)> = EMULATOR_ROUTES
        .iter()
        .map(|(m, r)| (m.to_string(), r.to_string()))
        .collect();
    assert_eq!(
        hit, listed,
        "routes hit (left) differ from EMULATOR_ROUTES (right)"
    );
}

#[tokio::test]
async fn the_emulator_serves_no_route_missing_from_the_covered_list() {
    // Given an emulator, and every path of GitHub's description with its parameters filled in
    let w = world().await;
    let octo = bearer_client(&w.server.url, ADMIN_TOKEN);
    // When each path is read (the emulator logs the route template it matched, whatever the
    // method), and each template it knows is sent every method the list does not name, with
    // parameters that exist (an unlisted method must fall through to GitHub's 404)
    for template in spec().paths() {
        let path = fill(template, &[]);
        support::exchange::send(&octo, "GET", "", &path, None, HeaderMap::new()).await;
    }
    let known: BTreeSet<String> = w
        .sim
        .requests()
        .into_iter()
        .map(|e| e.route)
        .filter(|r| !r.is_empty())
        .collect();
    let listed: BTreeSet<(&str, &str)> = EMULATOR_ROUTES.iter().copied().collect();
    let (n, c, p) = (
        w.issue.to_string(),
        w.comment.to_string(),
        w.pull.to_string(),
    );
    let real = [
        ("owner", "acme"),
        ("repo", "widgets"),
        ("issue_number", n.as_str()),
        ("comment_id", c.as_str()),
        ("name", "bug"),
        ("username", "octo"),
        ("branch", "main"),
        ("pull_number", p.as_str()),
    ];
    let mut unlisted = Vec::new();
    for route in &known {
        if !listed.iter().any(|(_, r)| r == route) {
            unlisted.push(format!("{route} (every method)"));
            continue;
        }
        for method in ["GET", "POST", "PATCH", "PUT", "DELETE"] {
            if listed.contains(&(method, route.as_str())) {
                continue;
            }
            let x = support::exchange::send(
                &octo,
                method,
                route,
                &fill(route, &real),
                Some(json!({})),
                HeaderMap::new(),
            )
            .await;
            if x.status != 404 {
                unlisted.push(format!("{} ({method} {route})", x.describe()));
            }
        }
    }
    // Then there are none
    assert!(
        unlisted.is_empty(),
        "the emulator serves routes EMULATOR_ROUTES does not list:\n{}",
        unlisted.join("\n")
    );
}

/// `template` with each `{parameter}` replaced by its value in `values`, or `1`.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut path = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map_or(rest.len(), |i| open + i);
        let name = &rest[open + 1..close];
        path.push_str(&rest[..open]);
        path.push_str(
            values
                .iter()
                .find(|(k, _)| *k == name)
                .map_or("1", |(_, v)| v),
        );
        rest = &rest[(close + 1).min(rest.len())..];
    }
    path.push_str(rest);
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn branches_and_pulls_read_from_a_real_git_origin_reply_as_the_description_says() {
    // Given an emulator whose origin is a real bare repository with a pushed Issue branch (so
    // the branch's commit carries git's tree, parents, identities and message) and its PR
    let w = world().await;
    let origin = support::origin::Origin::new();
    let pushed = origin.push_commit("issue-1", "thirdshift: failed run (pid gone)");
    w.sim.set_git_origin(origin.bare.clone());
    let mut rec = Recorder::new(bearer_client(&w.server.url, ADMIN_TOKEN));
    let mut s = Script { rec: &mut rec };
    // When the branches and the pull request are read
    let branch = s.get(200, "/branches/issue-1").await;
    s.get(200, "/branches").await;
    s.get(200, &format!("/pulls/{}", w.pull)).await;
    let pulls = s.get(200, "/pulls?state=all&head=acme:issue-1").await;
    // Then git's commit is served, and the open pull request follows the pushed branch
    assert_eq!(branch["commit"]["sha"], pushed.as_str());
    assert_eq!(branch["commit"]["commit"]["author"]["name"], "Run");
    assert_eq!(pulls[0]["head"]["sha"], pushed.as_str());
    // And every reply conforms to the description and to octocrab's models
    let mut failures = String::new();
    for x in &rec.exchanges {
        for v in spec_violations(x) {
            failures.push_str(&format!("{} [spec]: {v}\n", x.describe()));
        }
        if let Err(e) = decode_model(x) {
            failures.push_str(&format!("{} [octocrab]: {e}\n", x.describe()));
        }
    }
    assert!(failures.is_empty(), "replies do not conform:\n{failures}");
}

#[tokio::test]
async fn both_token_and_bearer_authorization_are_accepted_and_an_unknown_token_is_refused() {
    // Given an emulator with one user
    let w = world().await;
    for (scheme, octo) in [
        ("Bearer", bearer_client(&w.server.url, ADMIN_TOKEN)),
        ("token", token_scheme_client(&w.server.url, ADMIN_TOKEN)),
    ] {
        // When GET /user is sent with `Authorization: <scheme> TOKEN`
        let x = Recorder::new(octo).send("GET", USER, "/user", None).await;
        // Then it answers as that user
        assert_eq!(
            x.status, 200,
            "`{scheme}` authorization refused: {:?}",
            x.body
        );
        assert_eq!(
            x.body.as_ref().unwrap()["login"],
            "octo",
            "`{scheme}` authorization"
        );
        assert!(spec_violations(&x).is_empty(), "{:?}", spec_violations(&x));
    }
    // And an unknown token, in either scheme, gets GitHub's 401
    for octo in [
        bearer_client(&w.server.url, "tok-forged"),
        token_scheme_client(&w.server.url, "tok-forged"),
    ] {
        let x = Recorder::new(octo).send("GET", USER, "/user", None).await;
        assert_eq!(x.status, 401, "{}", x.describe());
        assert!(spec_violations(&x).is_empty(), "{:?}", spec_violations(&x));
        assert_eq!(
            x.body,
            Some(serde_json::json!({"message": "Bad credentials",
                "documentation_url": "https://docs.github.com/rest", "status": "401"}))
        );
    }
    // And no credentials at all is a 401 on /user too
    let x = Recorder::new(anonymous_client(&w.server.url))
        .send("GET", USER, "/user", None)
        .await;
    assert_eq!(x.status, 401, "{}", x.describe());
}

#[tokio::test]
async fn a_304_on_if_none_match_leaves_the_rate_budget_unchanged_while_a_200_spends_one() {
    // Given an issue read once, with its ETag
    let w = world().await;
    let mut rec = Recorder::new(bearer_client(&w.server.url, ADMIN_TOKEN));
    let path = format!("/repos/acme/widgets/issues/{}", w.issue);
    let before = w.sim.rate_remaining(ADMIN_TOKEN);
    let first = rec.send("GET", ISSUE, &path, None).await;
    assert_eq!(first.status, 200);
    assert_eq!(
        w.sim.rate_remaining(ADMIN_TOKEN),
        before - 1,
        "a 200 costs one request"
    );
    let etag = first
        .header("etag")
        .expect("a 200 carries an ETag")
        .to_string();

    // When it is read again with If-None-Match
    let mut headers = HeaderMap::new();
    headers.insert(IF_NONE_MATCH, HeaderValue::from_str(&etag).unwrap());
    let second = rec
        .send_with("GET", ISSUE, &path, None, headers.clone())
        .await;

    // Then the reply is a bodiless 304 the description declares, and the budget is untouched
    assert_eq!(second.status, 304, "{:?}", second.body);
    assert_eq!(
        w.sim.rate_remaining(ADMIN_TOKEN),
        before - 1,
        "a 304 costs nothing"
    );
    for x in [&first, &second] {
        assert!(
            spec_violations(x).is_empty(),
            "{}: {:?}",
            x.describe(),
            spec_violations(x)
        );
    }

    // And once the issue changes, the old ETag no longer matches and the read is charged
    w.sim.close_issue(w.issue);
    let third = rec.send_with("GET", ISSUE, &path, None, headers).await;
    assert_eq!(third.status, 200);
    assert_eq!(w.sim.rate_remaining(ADMIN_TOKEN), before - 2);
}

#[tokio::test]
async fn octocrabs_typed_api_reads_the_emulators_replies_and_errors() {
    // Given octocrab pointed at the emulator
    let w = world().await;
    let octo = bearer_client(&w.server.url, ADMIN_TOKEN);
    let issues = octo.issues("acme", "widgets");
    // When its typed calls are used, Then they succeed
    let repo = octo
        .repos("acme", "widgets")
        .get()
        .await
        .expect("repos().get()");
    assert_eq!(repo.full_name.as_deref(), Some("acme/widgets"));
    let issue = issues.get(w.issue).await.expect("issues().get()");
    assert_eq!(issue.number, w.issue);
    let comments = issues
        .list_comments(w.issue)
        .send()
        .await
        .expect("list_comments()");
    assert_eq!(comments.items.len(), 1);
    assert_eq!(
        octo.current().user().await.expect("current().user()").login,
        "octo"
    );
    let budget = octo.ratelimit().get().await.expect("ratelimit().get()");
    assert_eq!(budget.resources.core.limit, 5000);
    // And an error reply becomes octocrab's GitHub error with GitHub's message and status
    match issues.get(999_999).await {
        Err(octocrab::Error::GitHub { source, .. }) => {
            assert_eq!(source.status_code.as_u16(), 404);
            assert_eq!(source.message, "Not Found");
        }
        other => panic!("expected a GitHub 404 error, got {other:?}"),
    }
}

/// Asserts that validation failed with a violation at `path` whose message contains `needle`.
fn assert_violation(result: Result<(), Vec<Violation>>, path: &str, needle: &str) {
    let violations = result.expect_err("the validator accepted a broken value");
    assert!(
        violations
            .iter()
            .any(|v| v.path == path && v.message.contains(needle)),
        "expected a violation at {path} mentioning {needle:?}, got:\n{}",
        report(&violations)
    );
}

fn example(name: &str) -> Value {
    spec().example(name).clone()
}

/// Defects in GitHub's own examples (not in the validator): the repository examples and the
/// collaborator-permission example lack properties their schemas require, the pull-request
/// examples' `requested_teams` lack `type`, and the branch-list example's status checks lack
/// `checks`. These exact violations are tolerated when checking GitHub's examples and
/// recordings, never the emulator's replies.
const KNOWN_EXAMPLE_DEFECTS: &[(&str, &str)] = &[
    ("$", "missing required property `language`"),
    ("$", "missing required property `has_discussions`"),
    ("$.source", "missing required property `language`"),
    ("$.parent", "missing required property `language`"),
    (
        "$.template_repository",
        "missing required property `language`",
    ),
    ("$.user", "missing required property `role_name`"),
    ("$.requested_teams[0]", "missing required property `type`"),
    (
        "$[0].requested_teams[0]",
        "missing required property `type`",
    ),
    (
        "$[0].protection.required_status_checks",
        "missing required property `checks`",
    ),
];

/// Passes unless `result` has a violation outside [`KNOWN_EXAMPLE_DEFECTS`].
fn assert_example_ok(what: &str, result: Result<(), Vec<Violation>>) {
    let Err(violations) = result else { return };
    let unexpected: Vec<Violation> = violations
        .into_iter()
        .filter(|v| {
            !KNOWN_EXAMPLE_DEFECTS
                .iter()
                .any(|(p, m)| v.path == *p && v.message == *m)
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "{what} fails:\n{}",
        report(&unexpected)
    );
}

#[test]
fn validator_accepts_githubs_component_examples() {
    // Given GitHub's own examples for the resources the emulator serves
    let pairs = [
        ("issue", "issue"),
        ("issue-comment", "issue-comment"),
        ("label", "label"),
        ("reaction", "reaction"),
        ("full-repository", "full-repository"),
        ("rate-limit-overview", "rate-limit-overview"),
        ("private-user", "private-user"),
        ("branch-get", "branch-with-protection"),
        ("pull-request", "pull-request"),
    ];
    for (example_name, schema_name) in pairs {
        // When each is validated against its schema
        let result = spec().validate(spec().schema(schema_name), spec().example(example_name));
        // Then it passes
        assert_example_ok(
            &format!("example `{example_name}` against `{schema_name}`"),
            result,
        );
    }
}

#[test]
fn validator_accepts_the_examples_each_served_operation_declares() {
    // Given every example attached to a 2xx reply of an operation the emulator serves
    let mut checked = 0;
    for (method, route) in served_operations() {
        let op = spec().operation(method, route).unwrap();
        for (status, response) in op["responses"].as_object().unwrap() {
            let Ok(code) = status.parse::<u16>() else {
                continue;
            };
            let examples = response.pointer("/content/application~1json/examples");
            for (name, ex) in examples.and_then(Value::as_object).into_iter().flatten() {
                let value = match ex.get("$ref").and_then(Value::as_str) {
                    Some(r) => spec().example(r.rsplit('/').next().unwrap()),
                    None => match ex["value"].get("$ref").and_then(Value::as_str) {
                        Some(r) => spec().example(r.rsplit('/').next().unwrap()),
                        None => &ex["value"],
                    },
                };
                // When it is validated as that operation's reply
                let result = spec().validate_response(method, route, code, Some(value));
                // Then it passes
                assert_example_ok(&format!("{method} {route} {code} example `{name}`"), result);
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} examples found: is this the right spec?"
    );
}

#[test]
fn validator_accepts_real_github_replies_recorded_by_octokit_fixtures() {
    // Given replies api.github.com really sent, recorded by @octokit/fixtures, for the
    // operations the emulator serves
    let scenarios = [
        "add-labels-to-issue",
        "labels",
        "errors",
        "paginate-issues",
        "get-repository",
    ];
    let mut checked = 0;
    for scenario in scenarios {
        for recorded in &support::replay::scenario(scenario) {
            let method = recorded["method"].as_str().unwrap().to_ascii_uppercase();
            let path = recorded["path"].as_str().unwrap();
            let Some(route) = try_route_of(&method, path) else {
                continue;
            };
            let status = recorded["status"].as_u64().unwrap() as u16;
            let body = recorded
                .get("response")
                .filter(|b| b.is_object() || b.is_array());
            // When each is validated as its operation's reply
            let (method, route) = spec_operation(&method, route);
            let result = spec().validate_response(method, route, status, body);
            // Then it passes
            assert_example_ok(&format!("{scenario}: {method} {path} {status}"), result);
            checked += 1;
        }
    }
    assert!(
        checked >= 8,
        "only {checked} recorded replies matched a served route"
    );
}

#[test]
fn validator_rejects_a_missing_required_property() {
    // Given GitHub's issue example without its `id`
    let mut issue = example("issue");
    issue.as_object_mut().unwrap().remove("id");
    // When it is validated, Then the missing property is named
    assert_violation(
        spec().validate(spec().schema("issue"), &issue),
        "$",
        "missing required property `id`",
    );
}

#[test]
fn validator_rejects_a_wrong_type() {
    // Given an issue whose number is a string
    let mut issue = example("issue");
    issue["number"] = json!("1347");
    assert_violation(
        spec().validate(spec().schema("issue"), &issue),
        "$.number",
        "expected integer",
    );
}

#[test]
fn validator_rejects_a_fractional_integer() {
    let mut label = example("label");
    label["id"] = json!(1.5);
    assert_violation(
        spec().validate(spec().schema("label"), &label),
        "$.id",
        "expected integer, found number",
    );
}

#[test]
fn validator_rejects_null_where_the_schema_is_not_nullable() {
    // Given an issue with a null title (nullable: only `body` is)
    let mut issue = example("issue");
    issue["title"] = Value::Null;
    issue["body"] = Value::Null;
    // Then only the title is reported
    let violations = spec().validate(spec().schema("issue"), &issue).unwrap_err();
    assert_eq!(violations.len(), 1, "{}", report(&violations));
    assert_violation(Err(violations), "$.title", "not nullable");
}

#[test]
fn validator_reports_the_path_of_nested_violations() {
    // Given an issue whose author's login is a number and whose second label has no name type
    let mut issue = example("issue");
    issue["user"]["login"] = json!(5);
    issue["labels"][0]["name"] = json!(["bug"]);
    let result = spec().validate(spec().schema("issue"), &issue);
    assert_violation(result.clone(), "$.user.login", "expected string");
    // The labels items are a oneOf (string or object): the closest branch's error is reported
    assert_violation(result, "$.labels[0].name", "expected string");
}

#[test]
fn validator_rejects_a_value_outside_an_enum() {
    let mut reaction = example("reaction");
    reaction["content"] = json!("thumbsup");
    assert_violation(
        spec().validate(spec().schema("reaction"), &reaction),
        "$.content",
        "expected one of",
    );
}

#[test]
fn validator_checks_date_time_and_uri_formats() {
    let mut comment = example("issue-comment");
    comment["created_at"] = json!("yesterday");
    comment["html_url"] = json!("/octocat/Hello-Seeded/issues/1347#issuecomment-1");
    let result = spec().validate(spec().schema("issue-comment"), &comment);
    assert_violation(result.clone(), "$.created_at", "RFC 3339");
    assert_violation(result, "$.html_url", "absolute URI");
}

#[test]
fn validator_rejects_unknown_properties_when_additional_properties_is_false() {
    let mut user = example("private-user");
    // Given a user with only the properties public-user declares, plus one it does not
    let declared = spec().schema("public-user")["properties"]
        .as_object()
        .unwrap();
    user.as_object_mut()
        .unwrap()
        .retain(|k, _| declared.contains_key(k));
    assert!(spec().validate(spec().schema("public-user"), &user).is_ok());
    user["user_view_type"] = json!("public");
    user["surprise"] = json!(true);
    assert_violation(
        spec().validate(spec().schema("public-user"), &user),
        "$.surprise",
        "additionalProperties",
    );
}

#[test]
fn validator_requires_exactly_one_one_of_alternative() {
    // Given a oneOf whose two alternatives both accept strings
    let schema = json!({ "oneOf": [{ "type": "string" }, { "type": "string", "nullable": true }] });
    // Then a string matches both, which oneOf forbids, and a number matches neither
    assert_violation(spec().validate(&schema, &json!("x")), "$", "exactly one");
    assert_violation(spec().validate(&schema, &json!(1)), "$", "matches none");
    // And null matches only the nullable one
    assert!(spec().validate(&schema, &Value::Null).is_ok());
}

#[test]
fn validator_follows_the_discriminator_of_a_one_of() {
    // Given GET /user's reply, a oneOf of private-user and public-user keyed by user_view_type
    let mut user = example("private-user");
    user["user_view_type"] = json!("private");
    assert!(spec()
        .validate_response("GET", "/user", 200, Some(&user))
        .is_ok());
    // When the discriminator says public but private fields are present
    user["user_view_type"] = json!("public");
    // Then the public-user schema is applied and rejects them
    assert_violation(
        spec().validate_response("GET", "/user", 200, Some(&user)),
        "$.two_factor_authentication",
        "additionalProperties",
    );
}

#[test]
fn validator_rejects_a_status_the_operation_does_not_declare() {
    let result = spec().validate_response("GET", ISSUE, 418, Some(&json!({})));
    assert_violation(result, "$", "does not declare status 418");
}

#[test]
fn validator_follows_response_refs_to_githubs_error_schemas() {
    // Given GET issue's 404, declared as a $ref to components/responses/not_found (basic-error)
    let error = json!({ "message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404" });
    assert!(spec()
        .validate_response("GET", ISSUE, 404, Some(&error))
        .is_ok());
    // When the message has the wrong type, Then the referenced schema rejects it
    let broken = json!({ "message": 404, "documentation_url": "https://docs.github.com/rest" });
    assert_violation(
        spec().validate_response("GET", ISSUE, 404, Some(&broken)),
        "$.message",
        "expected string",
    );
    // And a 304, declared without a body, takes none
    assert!(spec().validate_response("GET", ISSUE, 304, None).is_ok());
}

#[test]
fn validator_rejects_a_body_where_none_is_declared() {
    let route = "/repos/{owner}/{repo}/issues/comments/{comment_id}";
    assert!(spec().validate_response("DELETE", route, 204, None).is_ok());
    assert_violation(
        spec().validate_response("DELETE", route, 204, Some(&json!({}))),
        "$",
        "declares no body",
    );
}

#[test]
fn validator_matches_routes_whatever_their_parameter_names() {
    let by_spec_names = spec()
        .operation("GET", "/repos/{owner}/{repo}/labels/{name}")
        .unwrap();
    let by_other_names = spec()
        .operation("get", "/repos/{o}/{r}/labels/{label}")
        .unwrap();
    assert_eq!(by_spec_names["operationId"], by_other_names["operationId"]);
    assert!(spec()
        .operation("GET", "/repos/{owner}/{repo}/nonsense")
        .is_err());
}

#[test]
fn validator_loading_a_missing_spec_is_an_error_that_says_how_to_install_it() {
    let err = Spec::from_path(std::path::Path::new("/nonexistent/api.github.com.json"))
        .err()
        .unwrap();
    assert!(err.contains("cannot read"), "{err}");
    let panic = std::panic::catch_unwind(|| {
        support::openapi::load_or_panic(std::path::Path::new("/nonexistent.json"))
    })
    .err()
    .unwrap();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains(".ci/install-fixtures.sh"), "{message}");
}

/// Every (method, spec route) the emulator serves, for the example checks.
fn served_operations() -> Vec<(&'static str, &'static str)> {
    let mut ops: Vec<(&str, &str)> = EMULATOR_ROUTES
        .iter()
        .map(|&(m, r)| spec_operation(m, r))
        .collect();
    ops.sort();
    ops.dedup();
    ops
}

// GraphQL: the one query the tool sends, against GitHub's published GraphQL schema.

#[test]
fn the_graphql_query_the_tool_sends_is_valid_against_githubs_schema() {
    // Given the query the tool sends for a batch of issues' comments
    let op = support::graphql::parse(thirdshift_reconciler::github::ISSUE_COMMENTS_QUERY);
    // When it is checked field by field against GitHub's schema
    let problems = support::graphql::schema().check_query(&op);
    // Then every field, argument and variable type exists as written
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Moved from the emulator's own unit tests when it became a crate of its own (issue #41): the
/// emulator cannot depend on the product, so the product's tests hold the two side by side.
#[test]
fn the_emulator_serves_the_query_the_tool_sends() {
    // Given the query the tool sends, when the emulator is asked whether it serves it,
    // then it does (the same query up to whitespace), so a changed query fails here first.
    assert!(github_emulator::serves_graphql_query(
        thirdshift_reconciler::github::ISSUE_COMMENTS_QUERY
    ));
}

#[tokio::test]
async fn the_emulators_graphql_answer_has_the_shape_githubs_schema_gives() {
    // Given an issue with a person's comment and a bot's, and an id that names nothing
    let w = world().await;
    w.sim.add_comment(w.issue, "thirdshift[bot]", "a record");
    let octo = bearer_client(&w.server.url, BOT_TOKEN);
    let issue = send_json(
        &octo,
        "GET",
        &format!("/repos/acme/widgets/issues/{}", w.issue),
        None,
    )
    .await
    .1;
    let ids = json!([issue["node_id"], "I_kwDO0"]);
    let query = thirdshift_reconciler::github::ISSUE_COMMENTS_QUERY;
    // When the tool's query asks for both
    let body = json!({ "query": query, "variables": { "ids": ids } });
    let (status, answer) = send_json(&octo, "POST", "/graphql", Some(body)).await;
    // Then the data has the schema's shape, the unknown id is null with a NOT_FOUND error,
    // and the bot is named as GraphQL names bots (without `[bot]`)
    assert_eq!(status, 200, "{answer}");
    let op = support::graphql::parse(query);
    let problems = support::graphql::schema().check_answer(&op, &answer["data"]);
    assert!(problems.is_empty(), "{problems:#?}\n{answer:#}");
    assert_eq!(answer["data"]["nodes"][1], Value::Null);
    assert_eq!(answer["errors"][0]["type"], "NOT_FOUND", "{answer:#}");
    let comments = &answer["data"]["nodes"][0]["comments"]["nodes"];
    assert_eq!(comments[0]["author"]["login"], "rita");
    assert_eq!(
        comments[1]["author"],
        json!({"__typename": "Bot", "login": "thirdshift"})
    );
    // And more than 100 ids, another query, or no credentials are refused as GitHub does
    let many: Vec<String> = (0..101).map(|i| format!("I_kwDO{i:X}")).collect();
    let body = json!({ "query": query, "variables": { "ids": many } });
    let (_, answer) = send_json(&octo, "POST", "/graphql", Some(body)).await;
    assert!(answer["data"].is_null(), "{answer}");
    assert_eq!(answer["errors"][0]["type"], "EXCESSIVE_PAGINATION");
    let body = json!({ "query": "query { viewer { login } }" });
    let (_, answer) = send_json(&octo, "POST", "/graphql", Some(body)).await;
    assert!(answer["errors"][0]["message"].is_string(), "{answer}");
    let anonymous = anonymous_client(&w.server.url);
    let body = json!({ "query": query, "variables": { "ids": [] } });
    assert_eq!(
        send_json(&anonymous, "POST", "/graphql", Some(body))
            .await
            .0,
        401
    );
}

#[test]
fn the_graphql_checker_rejects_unknown_fields_arguments_and_misshapen_answers() {
    // Given GitHub's schema
    let schema = support::graphql::schema();
    // When queries name a field, an argument or a variable type the schema does not have
    let bad_field = "query($ids: [ID!]!) { nodes(ids: $ids) { ... on Issue { numbr } } }";
    let bad_arg = "query($ids: [ID!]!) { nodes(idz: $ids) { id } }";
    let bad_var = "query($ids: [ID]) { nodes(ids: $ids) { id } }";
    // Then each is reported
    for q in [bad_field, bad_arg, bad_var] {
        let problems = schema.check_query(&support::graphql::parse(q));
        assert_eq!(problems.len(), 1, "{q}: {problems:?}");
    }
    // And answers with a wrong scalar, a null where none may be, or an unselected key are too
    let op = support::graphql::parse(
        "query($ids: [ID!]!) { nodes(ids: $ids) { ... on Issue { number comments(first: 1) \
         { totalCount } } } }",
    );
    let good = json!({ "nodes": [{ "number": 1, "comments": { "totalCount": 0 } }] });
    assert!(schema.check_answer(&op, &good).is_empty());
    for bad in [
        json!({ "nodes": [{ "number": "1", "comments": { "totalCount": 0 } }] }),
        json!({ "nodes": [{ "number": 1, "comments": null }] }),
        json!({ "nodes": [{ "number": 1, "comments": { "totalCount": 0, "extra": 1 } }] }),
    ] {
        assert_eq!(schema.check_answer(&op, &bad).len(), 1, "{bad}");
    }
}

/// Sends one request and returns its status and JSON body (`null` when empty).
async fn send_json(
    octo: &octocrab::Octocrab,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let x = support::exchange::send(octo, method, path, path, body, HeaderMap::new()).await;
    (x.status, x.body.unwrap_or(Value::Null))
}
