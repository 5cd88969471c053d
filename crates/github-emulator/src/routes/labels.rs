//! Labels: the repository's labels (list, create, get) and an issue's labels (list, add with
//! POST, replace with PUT, clear with DELETE, remove one with DELETE `/labels/{name}`).
//!
//! Naming a label that does not exist creates it with GitHub's default colour, as GitHub
//! does. Changing an issue's labels needs triage; creating a repository label needs write.
//! Names match case-insensitively. Editing or deleting repository labels is not served.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{json_response, need};
use crate::call::{self, Call};
use crate::error::ApiError;
use crate::page::page_response;
use crate::state::{State as SimState, DEFAULT_LABEL_COLOR};
use crate::{json, Permission, Sim};

/// `GET /repos/{owner}/{repo}/labels`.
pub(crate) async fn list(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let repo_url = ctx.repo_url(&st);
    let items: Vec<_> = st.labels.iter().collect();
    Ok(page_response(items, &ctx, |l| json::label(&repo_url, l)))
}

/// `GET /repos/{owner}/{repo}/labels/{name}`.
pub(crate) async fn get(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let label = st
        .label(ctx.param("name"))
        .ok_or_else(ApiError::not_found)?;
    Ok(json_response(
        StatusCode::OK,
        &json::label(&ctx.repo_url(&st), label),
    ))
}

/// `POST /repos/{owner}/{repo}/labels`.
pub(crate) async fn create(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    need(&ctx.caller, Permission::Write)?;
    let v = call::parse_body(&bytes)?;
    call::object(&v)?;
    let name = call::str_field(&v, "name", false)?.unwrap_or_default();
    if name.trim().is_empty() {
        return Err(ApiError::validation("Label", "missing_field", "name"));
    }
    let color = call::str_field(&v, "color", false)?
        .map(|c| c.trim_start_matches('#').to_ascii_lowercase())
        .unwrap_or_else(|| DEFAULT_LABEL_COLOR.to_string());
    if color.len() != 6 || !color.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ApiError::validation("Label", "invalid", "color"));
    }
    let description = call::str_field(&v, "description", false)?;
    if st.create_label(&name, &color, description).is_none() {
        return Err(ApiError::validation("Label", "already_exists", "name"));
    }
    let label = st.label(&name).ok_or_else(ApiError::not_found)?;
    Ok(json_response(
        StatusCode::CREATED,
        &json::label(&ctx.repo_url(&st), label),
    ))
}

/// The issue number of the path, or 404.
fn issue_of(st: &SimState, ctx: &Call) -> Result<u64, ApiError> {
    ctx.check_repo(st)?;
    let number = ctx.number("issue_number")?;
    if st.issues.contains_key(&number) {
        Ok(number)
    } else {
        Err(ApiError::not_found())
    }
}

/// All labels of an issue as a JSON array.
fn labels_of(st: &SimState, ctx: &Call, number: u64) -> Value {
    match st.issues.get(&number) {
        Some(i) => json::issue_labels(&ctx.repo_url(st), st, i),
        None => Value::Array(Vec::new()),
    }
}

/// `GET /repos/{owner}/{repo}/issues/{issue_number}/labels`.
pub(crate) async fn list_for_issue(
    State(sim): State<Sim>,
    ctx: Call,
) -> Result<Response, ApiError> {
    let st = sim.lock();
    let number = issue_of(&st, &ctx)?;
    let items = match labels_of(&st, &ctx, number) {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    Ok(page_response(items, &ctx, |v| v))
}

/// `GET /repos/{owner}/{repo}/issues/{issue_number}/events`: the issue's label events
/// (`labeled`, `unlabeled`), oldest first, paginated as GitHub pages them.
pub(crate) async fn events_for_issue(
    State(sim): State<Sim>,
    ctx: Call,
) -> Result<Response, ApiError> {
    let st = sim.lock();
    let number = issue_of(&st, &ctx)?;
    let repo_url = ctx.repo_url(&st);
    let items: Vec<_> = st.events.iter().filter(|e| e.issue == number).collect();
    Ok(page_response(items, &ctx, |e| {
        json::label_event(&ctx.base, &repo_url, &st, e)
    }))
}

/// Label names from `{"labels": [...]}`, a bare array, or `{"labels": "name"}`.
fn requested(bytes: &[u8]) -> Result<Vec<String>, ApiError> {
    let v = call::parse_body(bytes)?;
    match &v {
        Value::Array(_) => call::label_names(&v, "labels"),
        Value::Object(o) => match o.get("labels") {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(l) => call::label_names(l, "labels"),
        },
        other => Err(ApiError::invalid_type("labels", other, "an array")),
    }
}

/// `POST /repos/{owner}/{repo}/issues/{issue_number}/labels`: adds.
pub(crate) async fn add(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    let number = issue_of(&st, &ctx)?;
    need(&ctx.caller, Permission::Triage)?;
    let names = requested(&bytes)?;
    st.add_labels(number, &names, &actor(&ctx));
    Ok(json_response(StatusCode::OK, &labels_of(&st, &ctx, number)))
}

/// `PUT /repos/{owner}/{repo}/issues/{issue_number}/labels`: replaces.
pub(crate) async fn set(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    let number = issue_of(&st, &ctx)?;
    need(&ctx.caller, Permission::Triage)?;
    let names = requested(&bytes)?;
    st.set_labels(number, &names, &actor(&ctx));
    Ok(json_response(StatusCode::OK, &labels_of(&st, &ctx, number)))
}

/// `DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels`: removes all.
pub(crate) async fn clear(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    let number = issue_of(&st, &ctx)?;
    need(&ctx.caller, Permission::Triage)?;
    st.set_labels(number, &[], &actor(&ctx));
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}`: 200 with what is left,
/// 404 `Label does not exist` when the issue does not carry it.
pub(crate) async fn remove(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    let number = issue_of(&st, &ctx)?;
    need(&ctx.caller, Permission::Triage)?;
    if !st.remove_label(number, ctx.param("name"), &actor(&ctx)) {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "Label does not exist"));
    }
    Ok(json_response(StatusCode::OK, &labels_of(&st, &ctx, number)))
}

/// Who a label change is by: the caller's login (routes that change labels need one).
fn actor(ctx: &Call) -> String {
    ctx.caller.login.clone().unwrap_or_default()
}
