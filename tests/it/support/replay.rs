//! GitHub's recorded real replies (npm `@octokit/fixtures`, installed by
//! `.ci/install-fixtures.sh` into `.ci/vendor`) and a small loopback HTTP server that serves
//! them again, so our own client can be pointed at replies api.github.com really sent.
//!
//! The server answers a request with the recorded reply of the same method and path whose
//! `page` query parameter is the same (other parameters are ignored: our client asks for
//! `per_page=100` where the recording asked for 3). Every `https://api.github.com` in bodies
//! and headers (`Link`, `Location`) becomes the server's own URL, as GitHub's links point at
//! the host that was asked. A request nothing was recorded for gets a 501 that names it.
//!
//! A missing fixture is a panic that says how to install it, never a skip. It makes no
//! judgement of its own about the replies it serves.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

/// Where GitHub's recorded links point; rewritten to the replay server's URL.
const GITHUB: &str = "https://api.github.com";

/// The recorded exchanges of one `@octokit/fixtures` scenario, in recording order.
pub fn scenario(name: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".ci/vendor/node_modules/@octokit/fixtures/scenarios/api.github.com")
        .join(name)
        .join("normalized-fixture.json");
    let text = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{} missing ({e}): run .ci/install-fixtures.sh",
            path.display()
        )
    });
    match serde_json::from_slice(&text).expect("fixture is JSON") {
        Value::Array(items) => items,
        other => panic!("{name}: a scenario is a list of exchanges, found {other}"),
    }
}

/// One reply the server gives, and the request it answers.
#[derive(Clone, Debug)]
pub struct Route {
    pub method: String,
    /// The path without its query.
    pub path: String,
    /// The `page` query parameter the request must carry (`None`: none, or `1`).
    pub page: Option<String>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body as recorded: JSON text, or nothing.
    pub body: Option<String>,
}

impl Route {
    /// The reply recorded in `exchange`, for the request it was recorded for.
    pub fn recorded(exchange: &Value) -> Route {
        let method = exchange["method"].as_str().expect("method").to_uppercase();
        let full = exchange["path"].as_str().expect("path");
        let (path, query) = full.split_once('?').unwrap_or((full, ""));
        let headers = exchange["headers"]
            .as_object()
            .map(|h| {
                h.iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "content-length" | "connection"))
                    .map(|(k, v)| (k.clone(), v.as_str().map_or(v.to_string(), str::to_string)))
                    .collect()
            })
            .unwrap_or_default();
        let body = exchange
            .get("response")
            .filter(|b| b.is_object() || b.is_array())
            .map(Value::to_string);
        Route {
            method,
            path: path.to_string(),
            page: page_of(query),
            status: exchange["status"].as_u64().expect("status") as u16,
            headers,
            body,
        }
    }

    /// The same reply, served for `method path` instead (a recorded error body on a route our
    /// client calls).
    pub fn at(mut self, method: &str, path: &str) -> Route {
        self.method = method.to_string();
        self.path = path.to_string();
        self.page = None;
        self
    }

    /// The same reply with `body` (JSON) in place of the recorded one.
    pub fn with_body(mut self, body: &Value) -> Route {
        self.body = Some(body.to_string());
        self
    }
}

/// The `page` parameter of a query, `1` counting as absent.
fn page_of(query: &str) -> Option<String> {
    query
        .split('&')
        .find_map(|p| p.strip_prefix("page="))
        .filter(|p| *p != "1")
        .map(str::to_string)
}

/// A request the server received: `METHOD path?query`, and whether it carried credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    pub request: String,
    pub authorized: bool,
}

struct Shared {
    routes: Vec<Route>,
    url: String,
    served: Mutex<Vec<Served>>,
}

/// The replay server; stops when dropped.
pub struct Replay {
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Replay {
    /// Serves `routes` on a loopback port.
    pub async fn start(routes: Vec<Route>) -> Replay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("loopback port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared {
            routes,
            url: url.clone(),
            served: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("replay server");
        });
        Replay { url, shared, task }
    }

    /// Every request received so far, in order.
    pub fn served(&self) -> Vec<Served> {
        self.shared.served.lock().unwrap().clone()
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let method = request.method().as_str().to_string();
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or("").to_string();
    shared.served.lock().unwrap().push(Served {
        request: format!("{method} {path}?{query}"),
        authorized: request.headers().contains_key("authorization"),
    });
    let page = page_of(&query);
    let found = shared
        .routes
        .iter()
        .find(|r| r.method == method && r.path == path && r.page == page);
    let Some(route) = found else {
        let message = format!("no recorded reply for {method} {path}?{query}");
        return reply(
            501,
            &[],
            Some(serde_json::json!({ "message": message }).to_string()),
        );
    };
    let rewrite = |s: &str| s.replace(GITHUB, &shared.url);
    let headers: Vec<(String, String)> = route
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), rewrite(v)))
        .collect();
    reply(route.status, &headers, route.body.as_deref().map(rewrite))
}

fn reply(status: u16, headers: &[(String, String)], body: Option<String>) -> Response {
    let mut response = Response::new(Body::from(body.unwrap_or_default()));
    *response.status_mut() = StatusCode::from_u16(status).expect("recorded status");
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}
