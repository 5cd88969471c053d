//! GitHub's JSON shapes for branches and pull requests: `short-branch` (branch lists),
//! `branch-with-protection` (one branch, with its head `commit`), `pull-request-simple` (pull
//! lists), `pull-request` (one pull request) and the `pull_request` key of an issue that is one.
//! Every field the OpenAPI description requires is present with the right type, and the shapes
//! deserialize into octocrab 0.54's `repos::Branch` and `pulls::PullRequest`.
//!
//! It only renders: which branches exist and which sha a pull request's head shows are decided
//! by the routes. Nothing is protected, nothing is a draft, no pull request has reviews or
//! auto-merge, and diff statistics are zeros.

use serde_json::{json, Value};

use super::call::{percent_encode, Caller};
use super::json::{self, html, node_id, opt_ts, repo_url, ts, user_by_login};
use super::origin::{CommitInfo, Signature};
use super::state::{fake_sha, Issue, Pull, State};

/// `short-branch`, an item of `GET /repos/{owner}/{repo}/branches`.
pub(crate) fn short_branch(base: &str, st: &State, name: &str, sha: &str) -> Value {
    let repo = repo_url(base, st);
    json!({
        "name": name,
        "commit": { "sha": sha, "url": format!("{repo}/commits/{sha}") },
        "protected": false,
        "protection_url": format!("{repo}/branches/{}/protection", percent_encode(name)),
    })
}

/// `branch-with-protection`, for `GET /repos/{owner}/{repo}/branches/{branch}`; `info` is the
/// commit as git holds it (`None` for a seeded branch, whose commit is rendered from its sha).
pub(crate) fn branch(
    base: &str,
    st: &State,
    name: &str,
    sha: &str,
    info: Option<&CommitInfo>,
) -> Value {
    let repo = repo_url(base, st);
    let enc = percent_encode(name);
    json!({
        "name": name,
        "commit": commit(base, st, sha, info),
        "_links": {
            "self": format!("{repo}/branches/{enc}"),
            "html": html(base, st, &format!("tree/{enc}")),
        },
        "protected": false,
        "protection": {
            "enabled": false,
            "required_status_checks": {
                "enforcement_level": "off", "contexts": [], "checks": [],
            },
        },
        "protection_url": format!("{repo}/branches/{enc}/protection"),
    })
}

/// `commit`: the branch's head. The GitHub accounts of author and committer are `null` (the
/// emulator does not map emails to users); the git identities are in `commit.author/committer`.
fn commit(base: &str, st: &State, sha: &str, info: Option<&CommitInfo>) -> Value {
    let repo = repo_url(base, st);
    let tree = info.map_or_else(|| fake_sha(&format!("tree:{sha}")), |c| c.tree.clone());
    let parents: Vec<Value> = info
        .map(|c| c.parents.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|p| {
            json!({
                "sha": p,
                "url": format!("{repo}/commits/{p}"),
                "html_url": html(base, st, &format!("commit/{p}")),
            })
        })
        .collect();
    json!({
        "sha": sha,
        "node_id": format!("C_kwDO{}", &sha[..sha.len().min(20)]),
        "url": format!("{repo}/commits/{sha}"),
        "html_url": html(base, st, &format!("commit/{sha}")),
        "comments_url": format!("{repo}/commits/{sha}/comments"),
        "commit": {
            "url": format!("{repo}/git/commits/{sha}"),
            "author": info.map_or(Value::Null, |c| git_user(&c.author)),
            "committer": info.map_or(Value::Null, |c| git_user(&c.committer)),
            "message": info.map_or("", |c| c.message.as_str()),
            "comment_count": 0,
            "tree": { "sha": tree, "url": format!("{repo}/git/trees/{tree}") },
            "verification": {
                "verified": false, "reason": "unsigned",
                "payload": null, "signature": null, "verified_at": null,
            },
        },
        "author": null,
        "committer": null,
        "parents": parents,
    })
}

fn git_user(s: &Signature) -> Value {
    json!({ "name": s.name, "email": s.email, "date": ts(s.date) })
}

/// The shas a pull request shows for its head and base right now (routes decide them: an open
/// pull request follows its branches, a closed one keeps what it had).
pub(crate) struct Shas<'a> {
    pub head: &'a str,
    pub base: &'a str,
}

/// `pull-request-simple`, an item of `GET /repos/{owner}/{repo}/pulls`.
pub(crate) fn pull_simple(
    base: &str,
    st: &State,
    caller: &Caller,
    (i, p): (&Issue, &Pull),
    shas: &Shas,
) -> Value {
    let repo = repo_url(base, st);
    let url = format!("{repo}/pulls/{}", i.number);
    let issue_url = format!("{repo}/issues/{}", i.number);
    let web = html(base, st, &format!("pull/{}", i.number));
    let head_status = format!("{repo}/statuses/{}", shas.head);
    json!({
        "url": url, "id": i.id, "node_id": node_id("PR", i.id), "html_url": web,
        "diff_url": format!("{web}.diff"), "patch_url": format!("{web}.patch"),
        "issue_url": issue_url, "commits_url": format!("{url}/commits"),
        "review_comments_url": format!("{url}/comments"),
        "review_comment_url": format!("{repo}/pulls/comments{{/number}}"),
        "comments_url": format!("{issue_url}/comments"), "statuses_url": head_status,
        "number": i.number, "state": if i.open { "open" } else { "closed" },
        "locked": false, "title": i.title,
        "user": user_by_login(base, st, &i.author),
        "body": if i.body.is_empty() { Value::Null } else { json!(i.body) },
        "labels": labels(base, st, i), "milestone": null, "active_lock_reason": null,
        "created_at": ts(i.created_at), "updated_at": ts(i.updated_at),
        "closed_at": opt_ts(i.closed_at), "merged_at": opt_ts(p.merged_at),
        "merge_commit_sha": p.merge_commit_sha,
        "assignee": null, "assignees": [], "requested_reviewers": [], "requested_teams": [],
        "head": git_ref(base, st, caller, &p.head_ref, shas.head),
        "base": git_ref(base, st, caller, &p.base_ref, shas.base),
        "_links": links(&url, &issue_url, &web, &head_status),
        "author_association": json::association(st, &i.author),
        "auto_merge": null, "draft": false,
    })
}

/// `pull-request`, for `GET /repos/{owner}/{repo}/pulls/{pull_number}`.
pub(crate) fn pull(
    base: &str,
    st: &State,
    caller: &Caller,
    (i, p): (&Issue, &Pull),
    shas: &Shas,
) -> Value {
    let mut v = pull_simple(base, st, caller, (i, p), shas);
    let merged = p.merged_at.is_some();
    let merged_by = match &p.merged_by {
        Some(login) => user_by_login(base, st, login),
        None => Value::Null,
    };
    let extra = json!({
        "merged": merged,
        "mergeable": if i.open { json!(true) } else { Value::Null },
        "rebaseable": if i.open { json!(true) } else { Value::Null },
        "mergeable_state": if i.open { "clean" } else { "unknown" },
        "merged_by": merged_by,
        "comments": i.comments, "review_comments": 0, "maintainer_can_modify": false,
        "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
    });
    if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), extra) {
        obj.extend(extra);
    }
    v
}

/// The labels of a pull request: the issue's, with `description` a string (the description
/// requires one here, where an issue's label may have `null`).
fn labels(base: &str, st: &State, i: &Issue) -> Value {
    let mut labels = json::issue_labels(&repo_url(base, st), st, i);
    for l in labels.as_array_mut().into_iter().flatten() {
        if l["description"].is_null() {
            l["description"] = json!("");
        }
    }
    labels
}

/// `head` or `base`: a branch of this repository (pull requests from forks are not modelled).
fn git_ref(base: &str, st: &State, caller: &Caller, name: &str, sha: &str) -> Value {
    json!({
        "label": format!("{}:{name}", st.config.owner),
        "ref": name,
        "sha": sha,
        "user": json::owner(base, st),
        "repo": json::repository(base, st, caller),
    })
}

fn links(url: &str, issue_url: &str, web: &str, statuses: &str) -> Value {
    let href = |h: String| json!({ "href": h });
    json!({
        "self": href(url.to_string()),
        "html": href(web.to_string()),
        "issue": href(issue_url.to_string()),
        "comments": href(format!("{issue_url}/comments")),
        "review_comments": href(format!("{url}/comments")),
        "review_comment": href(format!("{}/comments{{/number}}", pulls_root(url))),
        "commits": href(format!("{url}/commits")),
        "statuses": href(statuses.to_string()),
    })
}

/// `.../pulls` from `.../pulls/N`.
fn pulls_root(url: &str) -> &str {
    url.rsplit_once('/').map_or(url, |(root, _)| root)
}
