//! Branches: `GET /repos/{owner}/{repo}/branches` (paginated, `protected` filter) and
//! `GET /repos/{owner}/{repo}/branches/{branch}` (404 `Branch not found` when absent).
//!
//! Branches are read at request time (seeded ones plus the `refs/heads/*` of the git origin, see
//! `crate::origin`), off the async runtime, with the state unlocked while git runs. No branch is
//! protected, and nothing here creates, renames or deletes branches: pushing to the git origin
//! does that. A branch name holding `/` must be sent percent-encoded (`%2F`).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::json_response;
use crate::call::Call;
use crate::error::ApiError;
use crate::origin::{self, CommitInfo};
use crate::page::page_response;
use crate::{json_refs, Sim};

/// `GET /repos/{owner}/{repo}/branches`, in name order.
pub(crate) async fn list(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    ctx.check_repo(&sim.lock())?;
    let all = read(&sim).await?;
    // Nothing is protected: `protected=true` lists nothing, `false` or absent lists everything.
    let items: Vec<(String, String)> = match ctx.q("protected") {
        Some("true") => Vec::new(),
        _ => all.into_iter().collect(),
    };
    let st = sim.lock();
    Ok(page_response(items, &ctx, |(name, sha)| {
        json_refs::short_branch(&ctx.base, &st, &name, &sha)
    }))
}

/// `GET /repos/{owner}/{repo}/branches/{branch}`.
pub(crate) async fn get(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    ctx.check_repo(&sim.lock())?;
    let name = ctx.param("branch").to_string();
    let sha = read(&sim)
        .await?
        .remove(&name)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "Branch not found"))?;
    let info = commit(&sim, &sha).await?;
    let st = sim.lock();
    let body = json_refs::branch(&ctx.base, &st, &name, &sha, info.as_ref());
    Ok(json_response(StatusCode::OK, &body))
}

/// Every branch, name to sha (git runs on a blocking thread). An unreadable git origin is a
/// 500 naming the git error: the emulator is misconfigured, and the test should say so.
pub(crate) async fn read(sim: &Sim) -> Result<BTreeMap<String, String>, ApiError> {
    let sim = sim.clone();
    tokio::task::spawn_blocking(move || origin::branches(&sim))
        .await
        .map_err(|e| server_error(e.to_string()))?
        .map_err(server_error)
}

async fn commit(sim: &Sim, sha: &str) -> Result<Option<CommitInfo>, ApiError> {
    let (sim, sha) = (sim.clone(), sha.to_string());
    tokio::task::spawn_blocking(move || origin::commit(&sim, &sha))
        .await
        .map_err(|e| server_error(e.to_string()))
}

fn server_error(detail: String) -> ApiError {
    tracing::error!(%detail, "emulator: git origin unreadable");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("git origin unreadable: {detail}"),
    )
}
