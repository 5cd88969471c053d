//! Issue comments: list per issue (ascending id, `since`), list repo-wide (`since`, `sort`,
//! `direction`), create, get, edit (PATCH, and POST as octocrab's `update_comment` sends) and
//! delete.
//!
//! Lists leave out comments that stale list reads still hide (`Faults::stale_list_reads`); a
//! single comment is always read fresh. Scripted list lags (`script.rs`) count down per list read. Anyone logged in may comment; editing or deleting needs the comment's author or write.
//! Reactions on comments live in `reactions.rs`.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{check_body_len, descending, json_response, since};
use crate::call::{self, Call};
use crate::error::ApiError;
use crate::page::page_response;
use crate::state::Comment;
use crate::{json, Permission, Sim};

/// `GET /repos/{owner}/{repo}/issues/{issue_number}/comments`.
pub(crate) async fn list_for_issue(
    State(sim): State<Sim>,
    ctx: Call,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    let number = ctx.number("issue_number")?;
    if !st.issues.contains_key(&number) {
        return Err(ApiError::not_found());
    }
    let since = since(&ctx, "IssueComment")?;
    let (items, hidden): (Vec<&Comment>, Vec<&Comment>) = st
        .comments
        .values()
        .filter(|c| c.issue == number && since.is_none_or(|s| c.updated_at >= s))
        .partition(|c| c.listed());
    let hidden = hidden.len();
    let resp = page_response(items, &ctx, |c| json::comment(&ctx.base, &st, c));
    st.count_hidden(hidden);
    st.list_read();
    Ok(resp)
}

/// `GET /repos/{owner}/{repo}/issues/comments`: ascending id unless `sort` is given, then
/// by that field (`direction` defaults to desc), ties by id.
pub(crate) async fn list_for_repo(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    let since = since(&ctx, "IssueComment")?;
    let (mut found, hidden): (Vec<&Comment>, Vec<&Comment>) = st
        .comments
        .values()
        .filter(|c| since.is_none_or(|s| c.updated_at >= s))
        .partition(|c| c.listed());
    let hidden = hidden.len();
    if let Some(sort) = ctx.q("sort") {
        match sort {
            "created" => found.sort_by_key(|c| (c.created_at, c.id)),
            "updated" => found.sort_by_key(|c| (c.updated_at, c.id)),
            _ => return Err(ApiError::validation("IssueComment", "invalid", "sort")),
        }
        if descending(&ctx, "IssueComment", true)? {
            found.reverse();
        }
    }
    let resp = page_response(found, &ctx, |c| json::comment(&ctx.base, &st, c));
    st.count_hidden(hidden);
    st.list_read();
    Ok(resp)
}

/// The `body` of a comment write: required, non-blank, not too long.
fn read_body(bytes: &[u8]) -> Result<String, ApiError> {
    let v = call::parse_body(bytes)?;
    call::object(&v)?;
    let body = call::str_field(&v, "body", false)?.unwrap_or_default();
    if body.trim().is_empty() {
        return Err(ApiError::validation(
            "IssueComment",
            "missing_field",
            "body",
        ));
    }
    check_body_len("IssueComment", &body)?;
    Ok(body)
}

/// `POST /repos/{owner}/{repo}/issues/{issue_number}/comments`.
pub(crate) async fn create(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    let number = ctx.number("issue_number")?;
    if !st.issues.contains_key(&number) {
        return Err(ApiError::not_found());
    }
    let login = ctx.caller.require_login()?;
    let body = read_body(&bytes)?;
    let id = st
        .add_comment(number, &login, &body)
        .ok_or_else(ApiError::not_found)?;
    let c = st.comments.get(&id).ok_or_else(ApiError::not_found)?;
    let json = json::comment(&ctx.base, &st, c);
    let mut resp = json_response(StatusCode::CREATED, &json);
    if let Some(loc) = json["url"]
        .as_str()
        .and_then(|u| HeaderValue::from_str(u).ok())
    {
        resp.headers_mut().insert(header::LOCATION, loc);
    }
    Ok(resp)
}

/// `GET /repos/{owner}/{repo}/issues/comments/{comment_id}`.
pub(crate) async fn get(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let c = st
        .comments
        .get(&ctx.number("comment_id")?)
        .ok_or_else(ApiError::not_found)?;
    Ok(json_response(
        StatusCode::OK,
        &json::comment(&ctx.base, &st, c),
    ))
}

/// The comment's author, or 404; then 401/403 unless the caller may change it.
fn may_change(st: &crate::state::State, ctx: &Call, id: u64) -> Result<(), ApiError> {
    let author = st
        .comments
        .get(&id)
        .map(|c| c.author.clone())
        .ok_or_else(ApiError::not_found)?;
    ctx.caller.require_login()?;
    if ctx.caller.is(&author) || ctx.caller.can(Permission::Write) {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "Resource not accessible by personal access token",
        ))
    }
}

/// `PATCH` (or `POST`) `/repos/{owner}/{repo}/issues/comments/{comment_id}`.
pub(crate) async fn update(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    let id = ctx.number("comment_id")?;
    may_change(&st, &ctx, id)?;
    let body = read_body(&bytes)?;
    st.edit_comment(id, &body);
    let c = st.comments.get(&id).ok_or_else(ApiError::not_found)?;
    Ok(json_response(
        StatusCode::OK,
        &json::comment(&ctx.base, &st, c),
    ))
}

/// `DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}`.
pub(crate) async fn delete(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    let id = ctx.number("comment_id")?;
    may_change(&st, &ctx, id)?;
    st.delete_comment(id);
    Ok(StatusCode::NO_CONTENT.into_response())
}
