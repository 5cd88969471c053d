//! The GitHub App endpoints a client needs to turn an App's JWT into an installation token:
//! `GET /app` (the App itself, for its slug), `GET /repos/{owner}/{repo}/installation` (the
//! App's installation on the repository) and `POST /app/installations/{id}/access_tokens`
//! (201 with a token that expires after the emulator's configured lifetime), with GitHub's JSON
//! shapes (`integration`, `installation`, `installation-token`).
//!
//! Every one needs a JWT (the `http` pipeline checks it and refuses anything else); nothing
//! here checks signatures or lists installations of other repositories, accounts or Apps.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::json_response;
use crate::call::{parse_body, Call};
use crate::error::ApiError;
use crate::json::{node_id, owner, ts};
use crate::state::{App, State as SimState};
use crate::{Permission, Sim};

/// The calling App (the pipeline let only JWT callers through).
fn calling_app(st: &SimState, ctx: &Call) -> Result<App, ApiError> {
    ctx.caller
        .app
        .and_then(|id| st.app(id).cloned())
        .ok_or_else(ApiError::requires_auth)
}

/// `GET /app`.
pub(crate) async fn get_app(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    let app = calling_app(&st, &ctx)?;
    Ok(json_response(
        StatusCode::OK,
        &integration(&ctx.base, &st, &app),
    ))
}

/// `GET /repos/{owner}/{repo}/installation`.
pub(crate) async fn get_installation(
    State(sim): State<Sim>,
    ctx: Call,
) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let app = calling_app(&st, &ctx)?;
    Ok(json_response(
        StatusCode::OK,
        &installation(&ctx.base, &st, &app),
    ))
}

/// `POST /app/installations/{installation_id}/access_tokens`: a new token for the bot user,
/// scoped as asked: `repositories` must name this repository, `permissions` may ask for no more
/// than the installation has (GitHub answers 422 otherwise). The request is kept for tests.
pub(crate) async fn create_token(
    State(sim): State<Sim>,
    ctx: Call,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request = parse_body(&body)?;
    let mut st = sim.lock();
    let app = calling_app(&st, &ctx)?;
    if ctx.number("installation_id")? != app.installation_id {
        return Err(ApiError::not_found());
    }
    check_repositories(&request, &st.config.name)?;
    let granted = permissions(app.permission);
    let asked = scoped_permissions(&request, &granted)?;
    st.token_requests.push(request);
    let (token, expires_at) = st.issue_installation_token(&app);
    let body = json!({
        "token": token,
        "expires_at": ts(expires_at),
        "permissions": asked,
        "repository_selection": "selected",
    });
    Ok(json_response(StatusCode::CREATED, &body))
}

/// 422 unless `repositories`, when given, is a list of names that holds only this repository.
fn check_repositories(request: &Value, name: &str) -> Result<(), ApiError> {
    let Some(repos) = request.get("repositories") else {
        return Ok(());
    };
    let names = repos.as_array().ok_or_else(|| {
        ApiError::invalid_type("repositories", repos, "an array of repository names")
    })?;
    if names.iter().all(|n| n.as_str() == Some(name)) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "There is at least one repository that does not exist or is not accessible to the \
             parent installation.",
        ))
    }
}

/// The permissions a token gets: those asked for, each within what the installation has.
fn scoped_permissions(request: &Value, granted: &Value) -> Result<Value, ApiError> {
    let Some(asked) = request.get("permissions") else {
        return Ok(granted.clone());
    };
    let asked_map = asked
        .as_object()
        .ok_or_else(|| ApiError::invalid_type("permissions", asked, "an object"))?;
    let level = |v: Option<&Value>| match v.and_then(Value::as_str) {
        Some("write") => 2,
        Some("read") => 1,
        _ => 0,
    };
    let within = asked_map
        .iter()
        .all(|(k, v)| level(Some(v)) > 0 && level(Some(v)) <= level(granted.get(k)));
    if within {
        Ok(asked.clone())
    } else {
        Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "The permissions requested are not granted to this installation.",
        ))
    }
}

/// The installation's permissions on the repository, from its bot user's role.
fn permissions(role: Permission) -> Value {
    let write = if role.at_least(Permission::Write) {
        "write"
    } else {
        "read"
    };
    json!({ "issues": write, "pull_requests": "read", "contents": "read", "metadata": "read" })
}

/// `integration`: the App, owned by the repository's owner.
fn integration(base: &str, st: &SimState, app: &App) -> Value {
    json!({
        "id": app.id,
        "slug": app.slug,
        "client_id": format!("Iv1.{:016x}", app.id),
        "node_id": node_id("A", app.id),
        "owner": owner(base, st),
        "name": app.name,
        "description": "",
        "external_url": format!("{base}/{}", st.config.owner),
        "html_url": format!("{base}/apps/{}", app.slug),
        "created_at": ts(app.created_at),
        "updated_at": ts(app.created_at),
        "permissions": permissions(app.permission),
        "events": ["issue_comment", "issues"],
        "installations_count": 1,
    })
}

/// `installation`: the App's installation on the repository's owner, for selected repositories.
fn installation(base: &str, st: &SimState, app: &App) -> Value {
    let id = app.installation_id;
    json!({
        "id": id,
        "account": owner(base, st),
        "repository_selection": "selected",
        "access_tokens_url": format!("{base}/app/installations/{id}/access_tokens"),
        "repositories_url": format!("{base}/installation/repositories"),
        "html_url": format!("{base}/organizations/{}/settings/installations/{id}", st.config.owner),
        "app_id": app.id,
        "app_slug": app.slug,
        "target_id": 100,
        "target_type": "Organization",
        "permissions": permissions(app.permission),
        "events": ["issue_comment", "issues"],
        "created_at": ts(app.created_at),
        "updated_at": ts(app.created_at),
        "single_file_name": null,
        "suspended_by": null,
        "suspended_at": null,
    })
}
