//! Pagination as GitHub does it: `per_page` (default 30, at most 100) and `page` (from 1), and
//! a `Link` header with absolute URLs in GitHub's order (`prev`, `next`, `last`, `first`),
//! omitted when everything fits on one page. Links keep every other query parameter as sent.
//!
//! It slices lists that routes already filtered and sorted; it does not sort or filter.

use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::call::Call;

/// `per_page` and `page` from the query, clamped like GitHub.
fn params(ctx: &Call) -> (usize, usize) {
    let per_page = match ctx.q("per_page").and_then(|v| v.parse::<usize>().ok()) {
        Some(0) | None => 30,
        Some(n) => n.min(100),
    };
    let page = ctx
        .q("page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    (per_page, page)
}

/// One page of `items` and the `Link` header that goes with it.
pub(crate) fn paginate<T>(items: Vec<T>, ctx: &Call) -> (Vec<T>, Option<String>) {
    let (per_page, page) = params(ctx);
    let total = items.len();
    let last = total.div_ceil(per_page).max(1);
    let link = (last > 1 || page > 1).then(|| link_header(ctx, page, last));
    let page_items = items
        .into_iter()
        .skip((page - 1).saturating_mul(per_page))
        .take(per_page)
        .collect();
    (page_items, link)
}

fn link_header(ctx: &Call, page: usize, last: usize) -> String {
    let mut rels = Vec::new();
    if page > 1 {
        rels.push((page - 1, "prev"));
    }
    if page < last {
        rels.push((page + 1, "next"));
        rels.push((last, "last"));
    }
    if page > 1 {
        rels.push((1, "first"));
    }
    rels.iter()
        .map(|(p, rel)| format!("<{}>; rel=\"{rel}\"", page_url(ctx, *p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The request's URL with `page` set to `page` (other parameters kept in order).
fn page_url(ctx: &Call, page: usize) -> String {
    let mut parts: Vec<String> = ctx
        .raw_query
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("page=") && *p != "page")
        .map(str::to_string)
        .collect();
    parts.push(format!("page={page}"));
    format!("{}{}?{}", ctx.base, ctx.path, parts.join("&"))
}

/// A 200 JSON array response for one page, with its `Link` header; only the items on the
/// page are rendered.
pub(crate) fn page_response<T>(items: Vec<T>, ctx: &Call, render: impl Fn(T) -> Value) -> Response {
    let (page, link) = paginate(items, ctx);
    let page: Vec<Value> = page.into_iter().map(render).collect();
    let mut resp =
        super::json::json_response(axum::http::StatusCode::OK, &Value::Array(page)).into_response();
    if let Some(link) = link.and_then(|l| HeaderValue::from_str(&l).ok()) {
        resp.headers_mut().insert(axum::http::header::LINK, link);
    }
    resp
}
