//! The route table (GitHub's paths at the root, like api.github.com) and the helpers every
//! route shares: JSON responses and the permission gates.
//!
//! Each resource has its own file; none of them touch tokens, budgets, ETags or faults, which
//! the `http` pipeline wrapped around this router handles.

pub(crate) mod apps;
mod branches;
mod comments;
pub(crate) mod graphql;
mod issues;
mod labels;
mod pulls;
mod reactions;
mod repo;

use axum::middleware::from_fn_with_state;
use axum::routing::{delete, get, post};
use axum::Router;
use serde_json::Value;

use super::call::Caller;
use super::error::ApiError;
use super::{http, Permission, Sim};
use crate::json::{json_response, REACTIONS};

/// GitHub caps issue and comment bodies at this many characters.
pub(crate) const MAX_BODY_CHARS: usize = 65_536;

/// The whole emulator as an axum router, pipeline included.
pub(crate) fn router(sim: Sim) -> Router {
    const R: &str = "/repos/{owner}/{repo}";
    let issue = format!("{R}/issues/{{issue_number}}");
    let comment = format!("{R}/issues/comments/{{comment_id}}");
    Router::new()
        .route("/user", get(repo::get_user))
        .route("/rate_limit", get(repo::rate_limit))
        .route("/graphql", post(graphql::query))
        .route(R, get(repo::get_repo))
        .route(
            &format!("{R}/collaborators/{{username}}/permission"),
            get(repo::permission),
        )
        .route(
            &format!("{R}/issues"),
            get(issues::list).post(issues::create),
        )
        .route(&issue, get(issues::get).patch(issues::update))
        .route(
            &format!("{issue}/comments"),
            get(comments::list_for_issue).post(comments::create),
        )
        .route(
            &format!("{R}/issues/comments"),
            get(comments::list_for_repo),
        )
        .route(
            &comment,
            get(comments::get)
                .patch(comments::update)
                .post(comments::update)
                .delete(comments::delete),
        )
        .route(
            &format!("{R}/labels"),
            get(labels::list).post(labels::create),
        )
        .route(&format!("{R}/labels/{{name}}"), get(labels::get))
        .route(
            &format!("{issue}/labels"),
            get(labels::list_for_issue)
                .post(labels::add)
                .put(labels::set)
                .delete(labels::clear),
        )
        .route(&format!("{issue}/labels/{{name}}"), delete(labels::remove))
        .route(&format!("{issue}/events"), get(labels::events_for_issue))
        .route(
            &format!("{issue}/reactions"),
            get(reactions::list_for_issue).post(reactions::create_for_issue),
        )
        .route(
            &format!("{comment}/reactions"),
            get(reactions::list_for_comment).post(reactions::create_for_comment),
        )
        .merge(ref_routes())
        .merge(app_routes())
        .fallback(http::not_found)
        .layer(from_fn_with_state(sim.clone(), http::pipeline))
        .with_state(sim)
}

/// Branches and pull requests (read-only).
fn ref_routes() -> Router<Sim> {
    const R: &str = "/repos/{owner}/{repo}";
    Router::new()
        .route(&format!("{R}/branches"), get(branches::list))
        .route(&format!("{R}/branches/{{branch}}"), get(branches::get))
        .route(&format!("{R}/pulls"), get(pulls::list))
        .route(&format!("{R}/pulls/{{pull_number}}"), get(pulls::get))
}

/// The GitHub App endpoints (JWT only).
fn app_routes() -> Router<Sim> {
    Router::new()
        .route(http::APP, get(apps::get_app))
        .route(http::INSTALLATION, get(apps::get_installation))
        .route(http::ACCESS_TOKENS, post(apps::create_token))
}

/// 401 for anonymous callers, 403 when the caller's role is below `role`.
pub(crate) fn need(caller: &Caller, role: Permission) -> Result<String, ApiError> {
    let login = caller.require_login()?;
    if caller.permission.at_least(role) {
        Ok(login)
    } else {
        Err(ApiError::forbidden(
            "Resource not accessible by personal access token",
        ))
    }
}

/// 422 when a body is longer than GitHub allows.
pub(crate) fn check_body_len(resource: &str, body: &str) -> Result<(), ApiError> {
    if body.chars().count() > MAX_BODY_CHARS {
        let mut e = ApiError::validation(resource, "custom", "body");
        if let Some(first) = e.errors.as_mut().and_then(|v| v.first_mut()) {
            first["message"] = Value::String(format!(
                "body is too long (maximum is {MAX_BODY_CHARS} characters)"
            ));
        }
        return Err(e);
    }
    Ok(())
}

/// Parses an RFC 3339 `since` (422 when malformed, like GitHub).
pub(crate) fn since(
    ctx: &super::call::Call,
    resource: &str,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, ApiError> {
    match ctx.q("since") {
        None => Ok(None),
        Some(s) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| Some(t.with_timezone(&chrono::Utc)))
            .map_err(|_| ApiError::validation(resource, "invalid", "since")),
    }
}

/// `direction`: `asc` or `desc` (`default` when absent); 422 otherwise.
pub(crate) fn descending(
    ctx: &super::call::Call,
    resource: &str,
    default: bool,
) -> Result<bool, ApiError> {
    match ctx.q("direction") {
        None => Ok(default),
        Some("desc") => Ok(true),
        Some("asc") => Ok(false),
        Some(_) => Err(ApiError::validation(resource, "invalid", "direction")),
    }
}
