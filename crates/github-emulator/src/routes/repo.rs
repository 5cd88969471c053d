//! Repository-level and caller-level reads: `GET /repos/{owner}/{repo}`, `GET /user`,
//! `GET /rate_limit` and the collaborator-permission endpoint.
//!
//! The permission endpoint needs push access on real GitHub; here any caller with read or more
//! may use it (so a read-only token can still check a command author). Nothing here writes.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::{json_response, need};
use crate::call::Call;
use crate::error::ApiError;
use crate::{http, json, Permission, Sim};

/// `GET /repos/{owner}/{repo}`.
pub(crate) async fn get_repo(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    let body = json::repository(&ctx.base, &st, &ctx.caller);
    Ok(json_response(StatusCode::OK, &body))
}

/// `GET /user`: the token's own user.
pub(crate) async fn get_user(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let login = ctx.caller.require_login()?;
    let st = sim.lock();
    let user = st.user(&login).ok_or_else(ApiError::bad_credentials)?;
    Ok(json_response(
        StatusCode::OK,
        &json::private_user(&ctx.base, user),
    ))
}

/// `GET /rate_limit` (the pipeline neither charges nor faults it).
pub(crate) async fn rate_limit(State(sim): State<Sim>, ctx: Call) -> Response {
    let body = http::rate_limit_body(&sim, &ctx.caller);
    json_response(StatusCode::OK, &body)
}

/// `GET /repos/{owner}/{repo}/collaborators/{username}/permission`.
pub(crate) async fn permission(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    let st = sim.lock();
    ctx.check_repo(&st)?;
    need(&ctx.caller, Permission::Read)?;
    let user = st
        .user(ctx.param("username"))
        .ok_or_else(ApiError::not_found)?;
    let p = user.permission;
    let mut who = json::user(&ctx.base, user);
    who["permissions"] = json!({
        "admin": p.at_least(Permission::Admin),
        "maintain": p.at_least(Permission::Maintain),
        "push": p.at_least(Permission::Write),
        "triage": p.at_least(Permission::Triage),
        "pull": p.at_least(Permission::Read),
    });
    who["role_name"] = json!(p.role_name());
    who["name"] = json!(null);
    who["email"] = json!(null);
    let body = json!({
        "permission": p.legacy_name(),
        "role_name": p.role_name(),
        "user": who,
    });
    Ok(json_response(StatusCode::OK, &body))
}
