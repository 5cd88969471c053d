//! `POST /graphql`: the one query the tool sends (the comments of up to 100 issues by
//! `node_id`), answered as GitHub answers it: `data.nodes` in the order of the ids, `null`
//! with a `NOT_FOUND` error for an id that names no issue, `[bot]` left off a bot's login,
//! comment ids as `BigInt` strings, the first 100 comments with `hasNextPage` beyond them.
//!
//! Any other query is answered with a GraphQL error rather than guessed at: the emulator is
//! not a GraphQL server. Comments stale list reads still hide are left out here too.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::json_response;
use crate::call::{self, Call};
use crate::error::ApiError;
use crate::json::ts;
use crate::state::{Comment, State as SimState};
use crate::Sim;

/// The query served, whitespace-normalised (`normalise`).
const SERVED: &str = "query($ids: [ID!]!) { nodes(ids: $ids) { ... on Issue { number \
comments(first: 100) { totalCount pageInfo { hasNextPage } nodes { fullDatabaseId body url \
createdAt updatedAt author { __typename login } reactionGroups { content reactors { totalCount } } \
} } } } }";

/// Whether `text` is the one query served (the same query up to whitespace).
pub fn serves(text: &str) -> bool {
    normalise(text) == normalise(SERVED)
}

/// GitHub's cap on `nodes(ids:)` and on a connection's `first`.
const MAX: usize = 100;

/// `POST /graphql`.
pub(crate) async fn query(
    State(sim): State<Sim>,
    ctx: Call,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    ctx.caller.require_login()?;
    let v = call::parse_body(&bytes)?;
    let text = v.get("query").and_then(Value::as_str).unwrap_or("");
    if !serves(text) {
        return Ok(errors(json!([{
            "message": "the emulator serves only the issue-comments query the tool sends"
        }])));
    }
    let ids: Vec<String> = v
        .pointer("/variables/ids")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|i| i.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if ids.len() > MAX {
        return Ok(errors(json!([{
            "type": "EXCESSIVE_PAGINATION",
            "message": format!(
                "You may not provide more than {MAX} node ids; you provided {}.",
                ids.len()
            )
        }])));
    }
    let mut st = sim.lock();
    let mut nodes = Vec::new();
    let mut missing = Vec::new();
    for id in &ids {
        match issue_of(&st, id) {
            Some(number) => nodes.push(issue_node(&ctx.base, &mut st, number)),
            None => {
                missing.push(json!({
                    "type": "NOT_FOUND",
                    "path": ["nodes", nodes.len()],
                    "message": format!("Could not resolve to a node with the global id of '{id}'")
                }));
                nodes.push(Value::Null);
            }
        }
    }
    let mut body = json!({ "data": { "nodes": nodes } });
    if !missing.is_empty() {
        body["errors"] = Value::Array(missing);
    }
    Ok(json_response(StatusCode::OK, &body))
}

fn errors(list: Value) -> Response {
    json_response(StatusCode::OK, &json!({ "errors": list }))
}

/// Collapses runs of whitespace, so a query's layout does not matter.
fn normalise(query: &str) -> String {
    query.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The number of the issue whose `node_id` is `id` (`I_kwDO<hex id>`, as `json::issue` writes).
fn issue_of(st: &SimState, id: &str) -> Option<u64> {
    let hex = id.strip_prefix("I_kwDO")?;
    let internal = u64::from_str_radix(hex, 16).ok()?;
    st.issues
        .values()
        .find(|i| i.id == internal)
        .map(|i| i.number)
}

/// One `Issue` node with its first 100 listed comments.
fn issue_node(base: &str, st: &mut SimState, number: u64) -> Value {
    let (listed, hidden): (Vec<&Comment>, Vec<&Comment>) = st
        .comments
        .values()
        .filter(|c| c.issue == number)
        .partition(|c| c.listed());
    let total = listed.len();
    let hidden = hidden.len();
    let nodes: Vec<Value> = listed
        .iter()
        .take(MAX)
        .map(|c| comment_node(base, st, c))
        .collect();
    st.count_hidden(hidden);
    st.list_read();
    json!({
        "number": number,
        "comments": {
            "totalCount": total,
            "pageInfo": { "hasNextPage": total > MAX },
            "nodes": nodes,
        }
    })
}

fn comment_node(base: &str, st: &SimState, c: &Comment) -> Value {
    let bot = st.user(&c.author).is_some_and(|u| u.bot) || c.author.ends_with("[bot]");
    let login = if bot {
        c.author.trim_end_matches("[bot]").to_string()
    } else {
        c.author.clone()
    };
    json!({
        "fullDatabaseId": c.id.to_string(),
        "body": c.body,
        "url": crate::json::html(base, st, &format!("issues/{}#issuecomment-{}", c.issue, c.id)),
        "createdAt": ts(c.created_at),
        "updatedAt": ts(c.updated_at),
        "author": { "__typename": if bot { "Bot" } else { "User" }, "login": login },
        "reactionGroups": reaction_groups(st, c.id),
    })
}

/// Every kind of reaction with its count, as GitHub lists a comment's `reactionGroups`.
fn reaction_groups(st: &SimState, id: u64) -> Value {
    let kinds = [
        ("+1", "THUMBS_UP"),
        ("-1", "THUMBS_DOWN"),
        ("laugh", "LAUGH"),
        ("hooray", "HOORAY"),
        ("confused", "CONFUSED"),
        ("heart", "HEART"),
        ("rocket", "ROCKET"),
        ("eyes", "EYES"),
    ];
    let target = crate::state::Target::Comment(id);
    let groups: Vec<Value> = kinds
        .iter()
        .map(|(rest, content)| {
            let n = st
                .reactions
                .iter()
                .filter(|r| r.target == target && r.content == *rest)
                .count();
            json!({ "content": content, "reactors": { "totalCount": n } })
        })
        .collect();
    Value::Array(groups)
}
