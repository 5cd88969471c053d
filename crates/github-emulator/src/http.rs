//! The pipeline every request goes through, in GitHub's order: authenticate the token (or an
//! App's JWT, which only App endpoints take), check
//! the caller's hourly budget, maybe inject a fault, run the route, turn a matching
//! `If-None-Match` into a free 304, charge the budget, stamp the rate-limit and request-id
//! headers, and append the request to the log. An injected latency delays every request.
//!
//! Routes never see tokens, budgets or faults; this file never looks at issues or comments.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::call::Caller;
use super::error::ApiError;
use super::jwt;
use super::state::State as SimState;
use super::{RequestLogEntry, Sim};

/// The GitHub App routes: the App itself, a repository's installation, an installation token.
pub(crate) const APP: &str = "/app";
pub(crate) const INSTALLATION: &str = "/repos/{owner}/{repo}/installation";
pub(crate) const ACCESS_TOKENS: &str = "/app/installations/{installation_id}/access_tokens";

/// The operations that take an App's JWT, and only a JWT.
pub(crate) const APP_ROUTES: [(&str, &str); 3] =
    [("GET", APP), ("GET", INSTALLATION), ("POST", ACCESS_TOKENS)];

/// Budget of a caller without a token, as on GitHub.
const ANONYMOUS_LIMIT: u32 = 60;
/// The one route that is neither charged nor faulted.
const RATE_LIMIT_ROUTE: &str = "/rate_limit";

/// What the pipeline decided to do instead of (or around) the route.
enum Fault {
    ServerError {
        apply: bool,
    },
    /// A secondary rate limit, as 403 (`forbidden`) or 429.
    SecondaryLimit {
        forbidden: bool,
    },
    /// The connection breaks after the status line: the client never reads a body.
    Dropped {
        apply: bool,
    },
}

/// The request facts the pipeline needs after the request itself is handed on.
struct Seen {
    method: Method,
    route: String,
    path: String,
    query: String,
    if_none_match: Option<String>,
}

/// The axum middleware (see the module doc for its steps).
pub(crate) async fn pipeline(State(sim): State<Sim>, mut req: Request, next: Next) -> Response {
    let seen = Seen {
        method: req.method().clone(),
        route: req
            .extensions()
            .get::<MatchedPath>()
            .map(|m| m.as_str().to_string())
            .unwrap_or_default(),
        path: req.uri().path().to_string(),
        query: req.uri().query().unwrap_or("").to_string(),
        if_none_match: header_str(req.headers(), header::IF_NONE_MATCH),
    };
    let caller = match authenticate(&sim, req.headers()) {
        Ok(c) => c,
        Err(e) => return finish(&sim, &seen, &Caller::anonymous(), e.into_response(), false),
    };
    if let Some(refusal) = app_gate(&seen.method, &seen.route, &caller) {
        let charge = refusal.status != StatusCode::UNAUTHORIZED;
        return finish(&sim, &seen, &caller, refusal.into_response(), charge);
    }
    let exempt = seen.route == RATE_LIMIT_ROUTE;
    if !exempt {
        if let Some(refusal) = over_budget(&sim, &caller) {
            return finish(&sim, &seen, &caller, refusal, false);
        }
    }
    let fault = if exempt {
        None
    } else {
        draw_fault(&sim, &seen)
    };
    req.extensions_mut().insert(caller.clone());
    let latency = sim.lock().faults.latency;
    if let Some(latency) = latency {
        tokio::time::sleep(latency).await;
    }
    sim.stalls.wait(seen.method.as_str(), &seen.route).await;
    let resp = match fault {
        Some(Fault::SecondaryLimit { forbidden }) => secondary_limit(forbidden),
        Some(Fault::Dropped { apply }) => {
            if apply {
                let _ = next.run(req).await;
                sim.lock().fault_counts.applied_then_failed += 1;
            }
            return finish(&sim, &seen, &caller, dropped(), true);
        }
        Some(Fault::ServerError { apply }) => {
            if apply {
                let _ = next.run(req).await;
                sim.lock().fault_counts.applied_then_failed += 1;
            }
            bad_gateway()
        }
        None => next.run(req).await,
    };
    let resp = if resp.status() == StatusCode::METHOD_NOT_ALLOWED {
        ApiError::not_found().into_response()
    } else {
        resp
    };
    let (resp, not_modified) = conditional(resp, &seen, &caller).await;
    finish(&sim, &seen, &caller, resp, !exempt && !not_modified)
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Whether a request changes anything (a GraphQL query is a `POST` that only reads).
fn is_write(seen: &Seen) -> bool {
    !matches!(seen.method, Method::GET | Method::HEAD | Method::OPTIONS) && seen.route != "/graphql"
}

/// `token X` or `Bearer X`; no header is anonymous; an unknown or expired token is 401. A
/// JWT (see `jwt.rs`) makes the caller its App, without a login; an installation token makes
/// the caller the App's bot user.
fn authenticate(sim: &Sim, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let Some(value) = header_str(headers, header::AUTHORIZATION) else {
        return Ok(Caller::anonymous());
    };
    let value = value.trim();
    let token = value
        .split_once(' ')
        .filter(|(scheme, _)| {
            scheme.eq_ignore_ascii_case("token") || scheme.eq_ignore_ascii_case("bearer")
        })
        .map(|(_, t)| t.trim())
        .ok_or_else(ApiError::bad_credentials)?;
    let st = sim.lock();
    if jwt::looks_like_jwt(token) {
        let app = jwt::verify(&st, token, chrono::Utc::now().timestamp())?;
        return Ok(Caller {
            token: Some(token.to_string()),
            app: Some(app),
            ..Caller::anonymous()
        });
    }
    let user = match st.installation_login(token) {
        Some(Ok(bot)) => st.user(&bot),
        Some(Err(())) => None,
        None => st.user_by_token(token),
    }
    .ok_or_else(ApiError::bad_credentials)?;
    Ok(Caller {
        login: Some(user.login.clone()),
        user_id: Some(user.id),
        token: Some(token.to_string()),
        permission: user.permission,
        app: None,
    })
}

/// App endpoints take only a JWT (anything else is 401, as GitHub answers a token it cannot
/// read as a JWT); a JWT is good for nothing else but `/rate_limit` (403). An unserved method
/// on an App path is left to fall through to 404.
fn app_gate(method: &Method, route: &str, caller: &Caller) -> Option<ApiError> {
    let app_path = APP_ROUTES.iter().any(|(_, r)| *r == route);
    let app_operation = APP_ROUTES.contains(&(method.as_str(), route));
    if app_operation && caller.app.is_none() {
        return Some(match caller.token {
            None => ApiError::requires_auth(),
            Some(_) => ApiError::new(StatusCode::UNAUTHORIZED, jwt::UNDECODABLE),
        });
    }
    let other = !app_path && !route.is_empty() && route != RATE_LIMIT_ROUTE;
    (other && caller.app.is_some())
        .then(|| ApiError::forbidden("Resource not accessible by integration"))
}

/// The budget key and limit of a caller.
fn budget_key(st: &SimState, caller: &Caller) -> (String, u32) {
    match (&caller.app, &caller.token) {
        (Some(app), _) => (format!("app:{app}"), st.config.rate_limit),
        (None, Some(t)) => (t.clone(), st.config.rate_limit),
        (None, None) => (String::new(), ANONYMOUS_LIMIT),
    }
}

/// A 403 when the caller's budget is spent.
fn over_budget(sim: &Sim, caller: &Caller) -> Option<Response> {
    let mut st = sim.lock();
    let (key, limit) = budget_key(&st, caller);
    let now = chrono::Utc::now().timestamp();
    if st.budget(&key, now).used < limit {
        return None;
    }
    let who = match (caller.user_id, caller.app) {
        (Some(id), _) => format!("user ID {id}"),
        (None, Some(app)) => format!("app ID {app}"),
        (None, None) => "127.0.0.1".to_string(),
    };
    let mut e = ApiError::forbidden(format!("API rate limit exceeded for {who}."));
    e.documentation_url =
        "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-rate-limits";
    Some(e.into_response())
}

/// Whether this request is faulted: a scripted failure first (`script.rs`), else a draw from
/// the seeded PRNG.
fn draw_fault(sim: &Sim, seen: &Seen) -> Option<Fault> {
    let write = is_write(seen);
    let mut st = sim.lock();
    if let Some(applied) = st.script.take_failure(seen.method.as_str(), &seen.route) {
        return Some(Fault::ServerError {
            apply: write && applied,
        });
    }
    let f = st.faults.clone();
    if f.server_error_rate <= 0.0 && f.rate_limited_rate <= 0.0 && f.dropped_rate <= 0.0 {
        return None;
    }
    let x = st.rng.next_f64();
    let limited = f.server_error_rate + f.rate_limited_rate;
    if x < f.server_error_rate {
        let apply = write && st.rng.next_f64() < f.applied_before_error;
        Some(Fault::ServerError { apply })
    } else if x < limited {
        let forbidden = st.rng.next_f64() < f.secondary_as_403;
        Some(Fault::SecondaryLimit { forbidden })
    } else if x < limited + f.dropped_rate {
        let apply = write && st.rng.next_f64() < f.applied_before_error;
        Some(Fault::Dropped { apply })
    } else {
        None
    }
}

/// A 200 whose body fails at once: hyper aborts the connection, so the client sees it broken
/// mid-reply and cannot tell whether a write was applied.
fn dropped() -> Response {
    let broken = futures_util::stream::once(async {
        Err::<axum::body::Bytes, _>(std::io::Error::other(
            "connection dropped by fault injection",
        ))
    });
    let mut resp = Response::new(axum::body::Body::from_stream(broken));
    resp.extensions_mut().insert(DroppedMark);
    resp
}

/// Marks a dropped reply, so the request log records status 0 for it.
#[derive(Clone, Copy)]
struct DroppedMark;

fn bad_gateway() -> Response {
    ApiError::new(StatusCode::BAD_GATEWAY, "Server Error").into_response()
}

/// GitHub's secondary limit reply: 429, or 403 when `forbidden`, with `retry-after`.
fn secondary_limit(forbidden: bool) -> Response {
    let status = if forbidden {
        StatusCode::FORBIDDEN
    } else {
        StatusCode::TOO_MANY_REQUESTS
    };
    let mut e = ApiError::new(
        status,
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    );
    e.documentation_url = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits";
    let mut resp = e.into_response();
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}

/// Adds a weak ETag to a 200 GET (over body and token) and answers 304 when it matches.
/// Returns the response and whether it is a 304.
async fn conditional(resp: Response, seen: &Seen, caller: &Caller) -> (Response, bool) {
    if seen.method != Method::GET || resp.status() != StatusCode::OK {
        return (resp, false);
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return (bad_gateway(), false);
    };
    let tag = etag(&bytes, caller.token.as_deref());
    if let Ok(v) = HeaderValue::from_str(&tag) {
        parts.headers.insert(header::ETAG, v);
    }
    parts.headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=60, s-maxage=60"),
    );
    parts.headers.insert(
        header::VARY,
        HeaderValue::from_static("Accept, Authorization, Cookie, X-GitHub-OTP"),
    );
    if seen
        .if_none_match
        .as_deref()
        .is_some_and(|inm| matches(inm, &tag))
    {
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove(header::CONTENT_TYPE);
        parts.headers.remove(header::CONTENT_LENGTH);
        return (Response::from_parts(parts, Body::empty()), true);
    }
    (Response::from_parts(parts, Body::from(bytes)), false)
}

/// `W/"<hex>"` over the body and the token (GitHub's ETags only match for the same token).
pub(crate) fn etag(body: &[u8], token: Option<&str>) -> String {
    let mut a = DefaultHasher::new();
    body.hash(&mut a);
    token.hash(&mut a);
    let mut b = DefaultHasher::new();
    (a.finish(), body.len(), token).hash(&mut b);
    format!("W/\"{:016x}{:016x}\"", a.finish(), b.finish())
}

/// Whether an `If-None-Match` list matches `tag` (weak comparison, `*` matches anything).
fn matches(if_none_match: &str, tag: &str) -> bool {
    let bare = |t: &str| t.trim().trim_start_matches("W/").to_string();
    if_none_match
        .split(',')
        .any(|t| t.trim() == "*" || bare(t) == bare(tag))
}

/// Charges the budget, stamps headers and logs the request.
fn finish(sim: &Sim, seen: &Seen, caller: &Caller, mut resp: Response, charge: bool) -> Response {
    let mut st = sim.lock();
    let (key, limit) = budget_key(&st, caller);
    let now = chrono::Utc::now().timestamp();
    if charge {
        st.charge(&key, now);
    }
    let budget = st.budget(&key, now);
    st.request_seq += 1;
    let request_id = format!(
        "51AB:{:04X}:{:06X}:SIM",
        st.config.seed & 0xFFFF,
        st.request_seq
    );
    st.log.push(RequestLogEntry {
        method: seen.method.to_string(),
        route: seen.route.clone(),
        path: seen.path.clone(),
        query: seen.query.clone(),
        status: if resp.extensions().get::<DroppedMark>().is_some() {
            0
        } else {
            resp.status().as_u16()
        },
        login: caller.login.clone(),
    });
    drop(st);
    let used = budget.used.min(limit);
    let h = resp.headers_mut();
    for (name, value) in [
        ("x-ratelimit-limit", limit.to_string()),
        ("x-ratelimit-remaining", (limit - used).to_string()),
        ("x-ratelimit-used", used.to_string()),
        ("x-ratelimit-reset", budget.reset.to_string()),
        ("x-ratelimit-resource", "core".to_string()),
        ("x-github-request-id", request_id),
        ("x-github-api-version-selected", "2022-11-28".to_string()),
    ] {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    resp
}

/// The fallback for paths no route knows: GitHub's 404.
pub(crate) async fn not_found() -> Response {
    ApiError::not_found().into_response()
}

/// The body GitHub's `GET /rate_limit` returns for a budget.
pub(crate) fn rate_limit_body(sim: &Sim, caller: &Caller) -> serde_json::Value {
    let mut st = sim.lock();
    let (key, limit) = budget_key(&st, caller);
    let b = st.budget(&key, chrono::Utc::now().timestamp());
    let used = b.used.min(limit);
    let core = json!({"limit": limit, "remaining": limit - used, "reset": b.reset, "used": used, "resource": "core"});
    let other = |name: &str, l: u32| json!({"limit": l, "remaining": l, "reset": b.reset, "used": 0, "resource": name});
    json!({
        "resources": {
            "core": core,
            "search": other("search", 30),
            "graphql": other("graphql", 5000),
            "integration_manifest": other("integration_manifest", 5000),
            "code_search": other("code_search", 10),
        },
        "rate": core,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etag_depends_on_token_and_matching_is_weak() {
        let a = etag(b"[]", Some("t1"));
        assert_ne!(a, etag(b"[]", Some("t2")));
        assert_eq!(a, etag(b"[]", Some("t1")));
        assert!(matches(&a, &a));
        assert!(matches(
            &format!("\"x\", {}", a.trim_start_matches("W/")),
            &a
        ));
        assert!(matches("*", &a));
        assert!(!matches("W/\"nope\"", &a));
    }
}
