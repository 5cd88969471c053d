//! Reactions on issues and on issue comments: list (optional `content` filter, paginated) and
//! create (201 when new, 200 when the caller already reacted with that content; 422 for a
//! content GitHub does not know).
//!
//! Deleting reactions is not served. Anyone logged in may react.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::{json_response, REACTIONS};
use crate::call::{self, Call};
use crate::error::ApiError;
use crate::page::page_response;
use crate::state::{State as SimState, Target};
use crate::{json, Sim};

/// The reaction target of the path, or 404 when it does not exist.
fn target(st: &SimState, ctx: &Call, on_comment: bool) -> Result<Target, ApiError> {
    ctx.check_repo(st)?;
    if on_comment {
        let id = ctx.number("comment_id")?;
        st.comments
            .contains_key(&id)
            .then_some(Target::Comment(id))
            .ok_or_else(ApiError::not_found)
    } else {
        let n = ctx.number("issue_number")?;
        st.issues
            .contains_key(&n)
            .then_some(Target::Issue(n))
            .ok_or_else(ApiError::not_found)
    }
}

fn list(sim: &Sim, ctx: &Call, on_comment: bool) -> Result<Response, ApiError> {
    let st = sim.lock();
    let target = target(&st, ctx, on_comment)?;
    let content = ctx.q("content");
    if content.is_some_and(|c| !REACTIONS.contains(&c)) {
        return Err(ApiError::validation("Reaction", "invalid", "content"));
    }
    let items = st
        .reactions
        .iter()
        .filter(|r| r.target == target)
        .filter(|r| content.is_none_or(|c| r.content == c))
        .collect();
    Ok(page_response(items, ctx, |r| {
        json::reaction(&ctx.base, &st, r)
    }))
}

fn create(sim: &Sim, ctx: &Call, bytes: &[u8], on_comment: bool) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    let target = target(&st, ctx, on_comment)?;
    let login = ctx.caller.require_login()?;
    let v = call::parse_body(bytes)?;
    call::object(&v)?;
    let content = match call::str_field(&v, "content", false)? {
        None => return Err(ApiError::validation("Reaction", "missing_field", "content")),
        Some(c) if !REACTIONS.contains(&c.as_str()) => {
            return Err(ApiError::validation("Reaction", "invalid", "content"))
        }
        Some(c) => c,
    };
    let (id, new) = st.react(target, &login, &content);
    let r = st
        .reactions
        .iter()
        .find(|r| r.id == id)
        .ok_or_else(ApiError::not_found)?;
    let status = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(json_response(status, &json::reaction(&ctx.base, &st, r)))
}

/// `GET /repos/{owner}/{repo}/issues/{issue_number}/reactions`.
pub(crate) async fn list_for_issue(
    State(sim): State<Sim>,
    ctx: Call,
) -> Result<Response, ApiError> {
    list(&sim, &ctx, false)
}

/// `GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions`.
pub(crate) async fn list_for_comment(
    State(sim): State<Sim>,
    ctx: Call,
) -> Result<Response, ApiError> {
    list(&sim, &ctx, true)
}

/// `POST /repos/{owner}/{repo}/issues/{issue_number}/reactions`.
pub(crate) async fn create_for_issue(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    create(&sim, &ctx, &bytes, false)
}

/// `POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions`.
pub(crate) async fn create_for_comment(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    create(&sim, &ctx, &bytes, true)
}
