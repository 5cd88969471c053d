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
use crate::sim::ctx::{parse_body, Ctx};
use crate::sim::error::ApiError;
use crate::sim::json::{node_id, owner, ts};
use crate::sim::state::{App, State as SimState};
use crate::sim::{Permission, Sim};

pub(crate) const APP: &str = "/app";
pub(crate) const INSTALLATION: &str = "/repos/{owner}/{repo}/installation";
pub(crate) const ACCESS_TOKENS: &str = "/app/installations/{installation_id}/access_tokens";

/// The operations that take an App's JWT, and only a JWT.
pub(crate) const APP_ROUTES: [(&str, &str); 3] =
    [("GET", APP), ("GET", INSTALLATION), ("POST", ACCESS_TOKENS)];

/// The calling App (the pipeline let only JWT callers through).
fn calling_app(st: &SimState, ctx: &Ctx) -> Result<App, ApiError> {
    ctx.caller
        .app
        .and_then(|id| st.app(id).cloned())
        .ok_or_else(ApiError::requires_auth)
}

/// `GET /app`.
pub(crate) async fn get_app(State(sim): State<Sim>, ctx: Ctx) -> Result<Response, ApiError> {
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
    ctx: Ctx,
) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let app = calling_app(&st, &ctx)?;
    Ok(json_response(
        StatusCode::OK,
        &installation(&ctx.base, &st, &app),
    ))
}

/// `POST /app/installations/{installation_id}/access_tokens`: a new token for the bot user.
pub(crate) async fn create_token(
    State(sim): State<Sim>,
    ctx: Ctx,
    body: Bytes,
) -> Result<Response, ApiError> {
    parse_body(&body)?;
    let mut st = sim.lock();
    let app = calling_app(&st, &ctx)?;
    if ctx.number("installation_id")? != app.installation_id {
        return Err(ApiError::not_found());
    }
    let (token, expires_at) = st.issue_installation_token(&app);
    let body = json!({
        "token": token,
        "expires_at": ts(expires_at),
        "permissions": permissions(app.permission),
        "repository_selection": "selected",
    });
    Ok(json_response(StatusCode::CREATED, &body))
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
