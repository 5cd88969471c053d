//! Pull requests: `GET /repos/{owner}/{repo}/pulls` (`state` open|closed|all, default open;
//! `head` as `owner:branch`; `base`; `sort` created|updated|popularity|long-running with
//! `direction`; pagination) and `GET /repos/{owner}/{repo}/pulls/{pull_number}`.
//!
//! As on GitHub, a `head` without the `owner:` part is ignored (every pull request matches),
//! and an open pull request shows the current sha of its branches while a closed one keeps the
//! sha it had. `long-running` sorts like `created` without GitHub's one-month filter. Pull
//! requests are only seeded (`Sim::create_pull`): nothing here creates, merges or edits them.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::{branches, descending, json_response};
use crate::call::Call;
use crate::error::ApiError;
use crate::json_refs::{self, Shas};
use crate::page::page_response;
use crate::state::{Issue, Pull, State as SimState};
use crate::Sim;

/// `GET /repos/{owner}/{repo}/pulls`.
pub(crate) async fn list(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    ctx.check_repo(&sim.lock())?;
    let heads = branches::read(&sim).await?;
    let st = sim.lock();
    let mut found = filtered(&st, &ctx)?;
    sort(&mut found, &ctx)?;
    Ok(page_response(found, &ctx, |(i, p)| {
        let (head, base) = shas(i, p, &heads);
        let shas = Shas {
            head: &head,
            base: &base,
        };
        json_refs::pull_simple(&ctx.base, &st, &ctx.caller, (i, p), &shas)
    }))
}

/// The pull requests that pass `state`, `head` and `base`.
fn filtered<'a>(st: &'a SimState, ctx: &Call) -> Result<Vec<(&'a Issue, &'a Pull)>, ApiError> {
    let state = match ctx.q("state").unwrap_or("open") {
        "open" => Some(true),
        "closed" => Some(false),
        "all" => None,
        _ => return Err(ApiError::validation("PullRequest", "invalid", "state")),
    };
    // `owner:branch`; GitHub ignores a head without an owner.
    let head = ctx.q("head").and_then(|h| h.split_once(':'));
    let base = ctx.q("base");
    let owner = &st.config.owner;
    Ok(st
        .issues
        .values()
        .filter_map(|i| i.pull.as_ref().map(|p| (i, p)))
        .filter(|(i, _)| state.is_none_or(|open| i.open == open))
        .filter(|(_, p)| head.is_none_or(|(o, b)| o.eq_ignore_ascii_case(owner) && p.head_ref == b))
        .filter(|(_, p)| base.is_none_or(|b| p.base_ref == b))
        .collect())
}

/// `sort` (default created) and `direction` (default desc for created, asc otherwise).
fn sort(found: &mut [(&Issue, &Pull)], ctx: &Call) -> Result<(), ApiError> {
    let by = ctx.q("sort").unwrap_or("created");
    let desc = descending(ctx, "PullRequest", by == "created")?;
    match by {
        "created" | "long-running" => found.sort_by_key(|(i, _)| (i.created_at, i.number)),
        "updated" => found.sort_by_key(|(i, _)| (i.updated_at, i.number)),
        "popularity" => found.sort_by_key(|(i, _)| (i.comments, i.number)),
        _ => return Err(ApiError::validation("PullRequest", "invalid", "sort")),
    }
    if desc {
        found.reverse();
    }
    Ok(())
}

/// `GET /repos/{owner}/{repo}/pulls/{pull_number}`; a plain issue's number is 404.
pub(crate) async fn get(State(sim): State<Sim>, ctx: Call) -> Result<Response, ApiError> {
    ctx.check_repo(&sim.lock())?;
    let number = ctx.number("pull_number")?;
    let heads = branches::read(&sim).await?;
    let st = sim.lock();
    let (i, p) = st
        .issues
        .get(&number)
        .and_then(|i| i.pull.as_ref().map(|p| (i, p)))
        .ok_or_else(ApiError::not_found)?;
    let (head, base) = shas(i, p, &heads);
    let shas = Shas {
        head: &head,
        base: &base,
    };
    let body = json_refs::pull(&ctx.base, &st, &ctx.caller, (i, p), &shas);
    Ok(json_response(StatusCode::OK, &body))
}

/// The head and base shas shown now: an open pull request follows its branches (while they
/// exist), a closed one keeps the shas it had.
fn shas(i: &Issue, p: &Pull, heads: &BTreeMap<String, String>) -> (String, String) {
    let now = |name: &str, kept: &str| match heads.get(name) {
        Some(sha) if i.open => sha.clone(),
        _ => kept.to_string(),
    };
    (now(&p.head_ref, &p.head_sha), now(&p.base_ref, &p.base_sha))
}
