//! GitHub's JSON shapes for what the emulator serves: `simple-user`, `private-user`, `label`,
//! `issue` (with its `pull_request` key when it is one), `issue-comment`, `reaction`,
//! `full-repository`, an issue's link to its pull request; branches and pull requests themselves
//! are in `json_refs`. Every field GitHub's OpenAPI
//! description marks required is present with the right type, plus what octocrab 0.54's models
//! insist on (`gravatar_id`, `assignees`, `author_association`, absolute URLs). All URLs are
//! built from the base URL of the request, so they are valid and point back at the emulator.
//!
//! It also holds the response every route sends (`json_response`) and the reaction contents
//! GitHub accepts. It only renders: it never changes state and never decides who may see what.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::call::{percent_encode, Caller};
use super::state::{Comment, Issue, Label, LabelEvent, Pull, Reaction, State, Target, User};

/// RFC 3339 with `Z` and whole seconds, as GitHub writes timestamps.
pub(crate) fn ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub(crate) fn opt_ts(t: Option<DateTime<Utc>>) -> Value {
    t.map(|t| Value::String(ts(t))).unwrap_or(Value::Null)
}

/// A `node_id`-looking string (GitHub's are opaque base64; any string is valid).
pub(crate) fn node_id(prefix: &str, id: u64) -> String {
    format!("{prefix}_kwDO{id:X}")
}

/// `simple-user` for a stored user.
pub(crate) fn user(base: &str, u: &User) -> Value {
    let kind = if u.bot { "Bot" } else { "User" };
    person(base, &u.login, u.id, kind)
}

/// `simple-user` for a login (a login unknown to the state is rendered with id 0).
pub(crate) fn user_by_login(base: &str, st: &State, login: &str) -> Value {
    match st.user(login) {
        Some(u) => user(base, u),
        None => person(base, login, 0, "User"),
    }
}

/// `simple-user` for the repository's owner (an organization).
pub(crate) fn owner(base: &str, st: &State) -> Value {
    person(base, &st.config.owner, 100, "Organization")
}

fn person(base: &str, login: &str, id: u64, kind: &str) -> Value {
    let api = format!("{base}/users/{}", percent_encode(login));
    json!({
        "login": login,
        "id": id,
        "node_id": node_id(if kind == "Bot" { "BOT" } else { "U" }, id),
        "avatar_url": format!("{base}/avatars/u/{id}?v=4"),
        "gravatar_id": "",
        "url": api,
        "html_url": format!("{base}/{}", percent_encode(login)),
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": kind,
        "user_view_type": "public",
        "site_admin": false,
    })
}

/// `private-user` for `GET /user`.
pub(crate) fn private_user(base: &str, u: &User) -> Value {
    let mut v = user(base, u);
    let extra = json!({
        "name": null, "company": null, "blog": "", "location": null, "email": null,
        "hireable": null, "bio": null, "twitter_username": null,
        "public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
        "created_at": ts(u.created_at), "updated_at": ts(u.created_at),
        "private_gists": 0, "total_private_repos": 0, "owned_private_repos": 0,
        "disk_usage": 0, "collaborators": 0, "two_factor_authentication": true,
        "user_view_type": "private",
    });
    merge(&mut v, extra);
    v
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), from) {
        a.extend(b);
    }
}

/// `label`.
pub(crate) fn label(repo_url: &str, l: &Label) -> Value {
    json!({
        "id": l.id,
        "node_id": node_id("LA", l.id),
        "url": format!("{repo_url}/labels/{}", percent_encode(&l.name)),
        "name": l.name,
        "description": l.description,
        "color": l.color,
        "default": false,
    })
}

/// `labeled-issue-event` / `unlabeled-issue-event`: who changed which label, when.
pub(crate) fn label_event(base: &str, repo_url: &str, st: &State, e: &LabelEvent) -> Value {
    let color = st
        .label(&e.label)
        .map_or(super::state::DEFAULT_LABEL_COLOR, |l| l.color.as_str());
    json!({
        "id": e.id,
        "node_id": node_id(if e.event == "labeled" { "LE" } else { "UNLE" }, e.id),
        "url": format!("{repo_url}/issues/events/{}", e.id),
        "actor": user_by_login(base, st, &e.actor),
        "event": e.event,
        "commit_id": null,
        "commit_url": null,
        "created_at": ts(e.created_at),
        "performed_via_github_app": null,
        "label": { "name": e.label, "color": color },
    })
}

/// The labels of an issue, in its order.
pub(crate) fn issue_labels(repo_url: &str, st: &State, issue: &Issue) -> Value {
    let labels: Vec<Value> = issue
        .labels
        .iter()
        .filter_map(|n| st.label(n))
        .map(|l| label(repo_url, l))
        .collect();
    Value::Array(labels)
}

/// GitHub's `author_association` for a login on this repository.
pub(crate) fn association(st: &State, login: &str) -> &'static str {
    if login.eq_ignore_ascii_case(&st.config.owner) {
        return "OWNER";
    }
    match st.user(login) {
        Some(u) if u.permission != super::Permission::None => "COLLABORATOR",
        _ => "NONE",
    }
}

/// `reaction-rollup` for an issue or a comment.
pub(crate) fn rollup(url: &str, st: &State, target: Target) -> Value {
    let mut v = json!({"url": url, "total_count": 0});
    for content in REACTIONS {
        v[content] = json!(0);
    }
    let mut total = 0u64;
    for r in st.reactions.iter().filter(|r| r.target == target) {
        total += 1;
        let n = v[r.content.as_str()].as_u64().unwrap_or(0);
        v[r.content.as_str()] = json!(n + 1);
    }
    v["total_count"] = json!(total);
    v
}

/// `issue`.
pub(crate) fn issue(base: &str, st: &State, i: &Issue) -> Value {
    let repo_url = format!("{base}/repos/{}/{}", st.config.owner, st.config.name);
    let url = format!("{repo_url}/issues/{}", i.number);
    let closed_by = match (&i.closed_by, i.open) {
        (Some(by), false) => user_by_login(base, st, by),
        _ => Value::Null,
    };
    // A pull request's web page is under `pull/`, as on GitHub.
    let web = if i.pull.is_some() { "pull" } else { "issues" };
    let mut v = json!({
        "id": i.id,
        "node_id": node_id("I", i.id),
        "url": url,
        "repository_url": repo_url,
        "labels_url": format!("{url}/labels{{/name}}"),
        "comments_url": format!("{url}/comments"),
        "events_url": format!("{url}/events"),
        "html_url": html(base, st, &format!("{web}/{}", i.number)),
        "timeline_url": format!("{url}/timeline"),
        "number": i.number,
        "state": if i.open { "open" } else { "closed" },
        "title": i.title,
        "body": if i.body.is_empty() { Value::Null } else { json!(i.body) },
        "user": user_by_login(base, st, &i.author),
        "labels": issue_labels(&repo_url, st, i),
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "locked": false,
        "active_lock_reason": null,
        "comments": i.comments,
        "closed_at": opt_ts(i.closed_at),
        "created_at": ts(i.created_at),
        "updated_at": ts(i.updated_at),
        "closed_by": closed_by,
        "author_association": association(st, &i.author),
        "performed_via_github_app": null,
        "reactions": rollup(&format!("{url}/reactions"), st, Target::Issue(i.number)),
        // `null` for an issue never closed, as GitHub sends it (its recorded replies have it).
        "state_reason": i.state_reason,
    });
    if let Some(pull) = &i.pull {
        v["pull_request"] = issue_pull_link(base, st, i.number, pull);
    }
    v
}

/// The web URL of something in the repository (the emulator has no web pages; the URL is
/// only guaranteed to be absolute and unique).
pub(crate) fn html(base: &str, st: &State, rest: &str) -> String {
    format!("{base}/{}/{}/{rest}", st.config.owner, st.config.name)
}

/// `issue-comment`.
pub(crate) fn comment(base: &str, st: &State, c: &Comment) -> Value {
    let repo_url = format!("{base}/repos/{}/{}", st.config.owner, st.config.name);
    let url = format!("{repo_url}/issues/comments/{}", c.id);
    json!({
        "id": c.id,
        "node_id": node_id("IC", c.id),
        "url": url,
        "html_url": html(base, st, &format!("issues/{}#issuecomment-{}", c.issue, c.id)),
        "issue_url": format!("{repo_url}/issues/{}", c.issue),
        "body": c.body,
        "user": user_by_login(base, st, &c.author),
        "created_at": ts(c.created_at),
        "updated_at": ts(c.updated_at),
        "author_association": association(st, &c.author),
        "performed_via_github_app": null,
        "reactions": rollup(&format!("{url}/reactions"), st, Target::Comment(c.id)),
    })
}

/// `reaction`.
pub(crate) fn reaction(base: &str, st: &State, r: &Reaction) -> Value {
    json!({
        "id": r.id,
        "node_id": node_id("REA", r.id),
        "user": user_by_login(base, st, &r.user),
        "content": r.content,
        "created_at": ts(r.created_at),
    })
}

/// `full-repository`, with `permissions` for the caller.
pub(crate) fn repository(base: &str, st: &State, caller: &Caller) -> Value {
    let (owner, name) = (&st.config.owner, &st.config.name);
    let r = format!("{base}/repos/{owner}/{name}");
    let html = format!("{base}/{owner}/{name}");
    let open = st.issues.values().filter(|i| i.open).count();
    let mut v = json!({
        "id": st.repo_id, "node_id": node_id("R", st.repo_id), "name": name,
        "full_name": format!("{owner}/{name}"),
        "owner": self::owner(base, st),
        "private": false, "html_url": html, "description": null, "fork": false, "url": r,
        "git_url": format!("{}/{owner}/{name}.git", base.replacen("http", "git", 1)),
        "ssh_url": format!("git@{}:{owner}/{name}.git", host_of(base)),
        "clone_url": format!("{html}.git"), "mirror_url": null, "svn_url": html,
    });
    if let Some(obj) = v.as_object_mut() {
        for (key, suffix) in REPO_URLS.iter() {
            obj.insert(format!("{key}_url"), Value::String(format!("{r}{suffix}")));
        }
    }
    merge(&mut v, repository_counts(st, open, caller));
    v
}

/// The `*_url` fields of a repository: name without `_url`, and what follows the API URL.
const REPO_URLS: &[(&str, &str)] = &[
    ("archive", "/{archive_format}{/ref}"),
    ("assignees", "/assignees{/user}"),
    ("blobs", "/git/blobs{/sha}"),
    ("branches", "/branches{/branch}"),
    ("collaborators", "/collaborators{/collaborator}"),
    ("comments", "/comments{/number}"),
    ("commits", "/commits{/sha}"),
    ("compare", "/compare/{base}...{head}"),
    ("contents", "/contents/{+path}"),
    ("contributors", "/contributors"),
    ("deployments", "/deployments"),
    ("downloads", "/downloads"),
    ("events", "/events"),
    ("forks", "/forks"),
    ("git_commits", "/git/commits{/sha}"),
    ("git_refs", "/git/refs{/sha}"),
    ("git_tags", "/git/tags{/sha}"),
    ("issue_comment", "/issues/comments{/number}"),
    ("issue_events", "/issues/events{/number}"),
    ("issues", "/issues{/number}"),
    ("keys", "/keys{/key_id}"),
    ("labels", "/labels{/name}"),
    ("languages", "/languages"),
    ("merges", "/merges"),
    ("milestones", "/milestones{/number}"),
    ("notifications", "/notifications{?since,all,participating}"),
    ("pulls", "/pulls{/number}"),
    ("releases", "/releases{/id}"),
    ("stargazers", "/stargazers"),
    ("statuses", "/statuses/{sha}"),
    ("subscribers", "/subscribers"),
    ("subscription", "/subscription"),
    ("tags", "/tags"),
    ("teams", "/teams"),
    ("trees", "/git/trees{/sha}"),
    ("hooks", "/hooks"),
];

/// The scalar half of `full-repository`.
fn repository_counts(st: &State, open: usize, caller: &Caller) -> Value {
    let p = caller.permission;
    let authed = caller.login.is_some();
    use super::Permission as P;
    json!({
        "homepage": null, "language": null, "forks_count": 0, "forks": 0,
        "stargazers_count": 0, "watchers_count": 0, "watchers": 0, "size": 0,
        "default_branch": "main", "open_issues_count": open, "open_issues": open,
        "is_template": false, "topics": [], "has_issues": true, "has_projects": false,
        "has_wiki": false, "has_pages": false, "has_downloads": false,
        "has_discussions": false, "archived": false, "disabled": false,
        "visibility": "public", "pushed_at": ts(st.created_at),
        "created_at": ts(st.created_at), "updated_at": ts(st.created_at),
        "permissions": {
            "admin": authed && p.at_least(P::Admin),
            "maintain": authed && p.at_least(P::Maintain),
            "push": authed && p.at_least(P::Write),
            "triage": authed && p.at_least(P::Triage),
            "pull": true,
        },
        "allow_forking": true, "web_commit_signoff_required": false,
        "license": null, "subscribers_count": 0, "network_count": 0,
    })
}

fn host_of(base: &str) -> &str {
    let rest = base.split_once("://").map(|(_, r)| r).unwrap_or(base);
    rest.split(':').next().unwrap_or(rest)
}

/// The reaction contents GitHub accepts, in its rollup order.
pub(crate) const REACTIONS: [&str; 8] = [
    "+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket",
];

/// A JSON response with GitHub's content type.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body.to_string(),
    )
        .into_response()
}

pub(crate) fn repo_url(base: &str, st: &State) -> String {
    format!("{base}/repos/{}/{}", st.config.owner, st.config.name)
}

/// The `pull_request` key of an issue that is a pull request.
pub(crate) fn issue_pull_link(base: &str, st: &State, number: u64, pull: &Pull) -> Value {
    let web = html(base, st, &format!("pull/{number}"));
    json!({
        "url": format!("{}/pulls/{number}", repo_url(base, st)),
        "html_url": web,
        "diff_url": format!("{web}.diff"),
        "patch_url": format!("{web}.patch"),
        "merged_at": opt_ts(pull.merged_at),
    })
}
