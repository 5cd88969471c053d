//! Issues: list (state, labels, since, creator, sort, direction, pagination), create, get and
//! update (title, body, state, state_reason, labels).
//!
//! Permissions follow a public repository: anyone logged in may open an issue; its author may
//! edit and close it; others need triage to change state and write to edit text; labels set by
//! callers below triage are dropped silently, as GitHub documents. Comments and label
//! endpoints live in their own files.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::{check_body_len, descending, json_response, since};
use crate::call::{self, Call};
use crate::error::ApiError;
use crate::page::page_response;
use crate::state::{Issue, State as SimState};
use crate::{json, Permission, Sim};

/// `GET /repos/{owner}/{repo}/issues`.
pub(crate) async fn list(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let mut found = filtered(&st, &ctx)?;
    sort(&mut found, &ctx)?;
    Ok(page_response(found, &ctx, |i| {
        json::issue(&ctx.base, &st, i)
    }))
}

/// The issues that pass the list filters.
fn filtered<'a>(st: &'a SimState, ctx: &Call) -> Result<Vec<&'a Issue>, ApiError> {
    let state = match ctx.q("state").unwrap_or("open") {
        "open" => Some(true),
        "closed" => Some(false),
        "all" => None,
        _ => return Err(ApiError::validation("Issue", "invalid", "state")),
    };
    let since = since(ctx, "Issue")?;
    let wanted: Vec<String> = ctx
        .q("labels")
        .map(|l| {
            l.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let creator = ctx.q("creator");
    Ok(st
        .issues
        .values()
        .filter(|i| state.is_none_or(|open| i.open == open))
        .filter(|i| since.is_none_or(|s| i.updated_at >= s))
        .filter(|i| creator.is_none_or(|c| i.author.eq_ignore_ascii_case(c)))
        .filter(|i| {
            wanted
                .iter()
                .all(|w| i.labels.iter().any(|l| l.eq_ignore_ascii_case(w)))
        })
        .collect())
}

/// Sorts by `sort` (created, updated, comments) and `direction` (default desc); ties by number.
fn sort(found: &mut [&Issue], ctx: &Call) -> Result<(), ApiError> {
    let desc = descending(ctx, "Issue", true)?;
    match ctx.q("sort").unwrap_or("created") {
        "created" => found.sort_by_key(|i| (i.created_at, i.number)),
        "updated" => found.sort_by_key(|i| (i.updated_at, i.number)),
        "comments" => found.sort_by_key(|i| (i.comments, i.number)),
        _ => return Err(ApiError::validation("Issue", "invalid", "sort")),
    }
    if desc {
        found.reverse();
    }
    Ok(())
}

/// `GET /repos/{owner}/{repo}/issues/{issue_number}`.
pub(crate) async fn get(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let issue = st
        .issues
        .get(&ctx.number("issue_number")?)
        .ok_or_else(ApiError::not_found)?;
    Ok(json_response(
        StatusCode::OK,
        &json::issue(&ctx.base, &st, issue),
    ))
}

/// `POST /repos/{owner}/{repo}/issues`.
pub(crate) async fn create(
    State(sim): State<Sim>,
    ctx: Call,
    body: Bytes,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    let login = ctx.caller.require_login()?;
    let v = call::parse_body(&body)?;
    call::object(&v)?;
    let title = call::str_field(&v, "title", false)?.unwrap_or_default();
    if title.trim().is_empty() {
        return Err(ApiError::validation("Issue", "missing_field", "title"));
    }
    let text = call::str_field(&v, "body", true)?.unwrap_or_default();
    check_body_len("Issue", &text)?;
    let labels = match v.get("labels") {
        Some(l) if ctx.caller.can(Permission::Triage) => call::label_names(l, "labels")?,
        _ => Vec::new(),
    };
    let number = st.create_issue(&login, &title, &text, &labels);
    let issue = st.issues.get(&number).ok_or_else(ApiError::not_found)?;
    let body = json::issue(&ctx.base, &st, issue);
    let mut resp = json_response(StatusCode::CREATED, &body);
    if let Some(loc) = body["url"]
        .as_str()
        .and_then(|u| HeaderValue::from_str(u).ok())
    {
        resp.headers_mut().insert(header::LOCATION, loc);
    }
    Ok(resp)
}

/// What a PATCH asks for, validated.
struct Patch {
    title: Option<String>,
    body: Option<String>,
    open: Option<bool>,
    reason: Option<String>,
    labels: Option<Vec<String>>,
}

fn read_patch(v: &Value) -> Result<Patch, ApiError> {
    call::object(v)?;
    let title = call::str_field(v, "title", false)?;
    if title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(ApiError::validation("Issue", "missing_field", "title"));
    }
    let body = call::str_field(v, "body", true)?;
    if let Some(b) = &body {
        check_body_len("Issue", b)?;
    }
    let open = match call::str_field(v, "state", false)?.as_deref() {
        None => None,
        Some("open") => Some(true),
        Some("closed") => Some(false),
        Some(_) => return Err(ApiError::validation("Issue", "invalid", "state")),
    };
    let reason = call::str_field(v, "state_reason", false)?;
    let valid = ["completed", "not_planned", "reopened", "duplicate"];
    if reason.as_deref().is_some_and(|r| !valid.contains(&r)) {
        return Err(ApiError::validation("Issue", "invalid", "state_reason"));
    }
    let labels = match v.get("labels") {
        None | Some(Value::Null) => None,
        Some(l) => Some(call::label_names(l, "labels")?),
    };
    Ok(Patch {
        title,
        body,
        open,
        reason,
        labels,
    })
}

/// `PATCH /repos/{owner}/{repo}/issues/{issue_number}`.
pub(crate) async fn update(
    State(sim): State<Sim>,
    ctx: Call,
    body: Bytes,
) -> Result<Response, ApiError> {
    let mut st = sim.lock();
    ctx.check_repo(&st)?;
    let number = ctx.number("issue_number")?;
    let author = st
        .issues
        .get(&number)
        .map(|i| i.author.clone())
        .ok_or_else(ApiError::not_found)?;
    let login = ctx.caller.require_login()?;
    let patch = read_patch(&call::parse_body(&body)?)?;
    let own = ctx.caller.is(&author);
    let edits_text = patch.title.is_some() || patch.body.is_some();
    let changes_state = patch.open.is_some() || patch.reason.is_some();
    if (edits_text && !own && !ctx.caller.can(Permission::Write))
        || (changes_state && !own && !ctx.caller.can(Permission::Triage))
    {
        return Err(ApiError::forbidden(
            "Resource not accessible by personal access token",
        ));
    }
    apply_patch(
        &mut st,
        number,
        patch,
        &login,
        ctx.caller.can(Permission::Triage),
    );
    let issue = st.issues.get(&number).ok_or_else(ApiError::not_found)?;
    Ok(json_response(
        StatusCode::OK,
        &json::issue(&ctx.base, &st, issue),
    ))
}

fn apply_patch(st: &mut SimState, number: u64, patch: Patch, login: &str, may_label: bool) {
    if let Some(labels) = patch.labels.filter(|_| may_label) {
        st.set_labels(number, &labels, login);
    }
    if let Some(i) = st.issues.get_mut(&number) {
        let mut changed = false;
        if let Some(t) = patch.title.filter(|t| *t != i.title) {
            i.title = t;
            changed = true;
        }
        if let Some(b) = patch.body.filter(|b| *b != i.body) {
            i.body = b;
            changed = true;
        }
        if changed {
            st.touch(number);
        }
    }
    let is_open = st.issues.get(&number).is_some_and(|i| i.open);
    match (patch.open, patch.reason.as_deref()) {
        (Some(open), reason) => st.set_state(number, open, reason, login),
        (None, Some("reopened")) => {}
        (None, Some(reason)) if !is_open => st.set_state(number, false, Some(reason), login),
        _ => {}
    }
}
