//! Talking to the emulator through the real octocrab client and keeping what came back, so a
//! test can check every reply afterwards (against GitHub's OpenAPI description, octocrab's
//! models, the emulator's request log).
//!
//! It sends through octocrab's own request pipeline (`build_request` + `execute`: its headers,
//! auth and base-URI layers) but skips octocrab's typed API, because conformance needs
//! the raw status and body of every reply, errors included. It makes no judgement of its own.

use http::header::{HeaderMap, AUTHORIZATION};
use http::Method;
use octocrab::Octocrab;
use serde_json::Value;

/// One request and its reply.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub method: String,
    /// The emulator's route template the test meant to hit, e.g. `/repos/{owner}/{repo}/issues`.
    pub route: String,
    /// The concrete path (and query) sent.
    pub path: String,
    pub status: u16,
    pub headers: HeaderMap,
    /// The parsed JSON body; `None` when the body was empty.
    pub body: Option<Value>,
}

impl Exchange {
    /// `METHOD path -> status`, for messages.
    pub fn describe(&self) -> String {
        format!("{} {} -> {}", self.method, self.path, self.status)
    }

    /// A response header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// An octocrab client for `url` that authenticates as octocrab does for a personal token:
/// `Authorization: Bearer TOKEN`.
pub fn bearer_client(url: &str, token: &str) -> Octocrab {
    builder(url)
        .personal_token(token.to_string())
        .build()
        .expect("octocrab client")
}

/// An octocrab client for `url` that sends `Authorization: token TOKEN`, the older scheme
/// GitHub still accepts (octocrab itself never sends it).
pub fn token_scheme_client(url: &str, token: &str) -> Octocrab {
    builder(url)
        .add_header(AUTHORIZATION, format!("token {token}"))
        .build()
        .expect("octocrab client")
}

/// An octocrab client for `url` that sends no credentials.
pub fn anonymous_client(url: &str) -> Octocrab {
    builder(url).build().expect("octocrab client")
}

fn builder(
    url: &str,
) -> octocrab::OctocrabBuilder<
    octocrab::NoSvc,
    octocrab::DefaultOctocrabBuilderConfig,
    octocrab::NoAuth,
    octocrab::NotLayerReady,
> {
    // The crate builds octocrab without its `retry` feature, so every request is sent once.
    Octocrab::builder()
        .base_uri(url)
        .expect("emulator URL is a valid base URI")
}

/// Sends requests through one octocrab client and keeps every exchange.
pub struct Recorder {
    octo: Octocrab,
    pub exchanges: Vec<Exchange>,
}

impl Recorder {
    pub fn new(octo: Octocrab) -> Recorder {
        Recorder {
            octo,
            exchanges: Vec::new(),
        }
    }

    /// Sends `method path` (route template `route`) with an optional JSON body, records the
    /// reply and returns it.
    pub async fn send(
        &mut self,
        method: &str,
        route: &str,
        path: &str,
        body: Option<Value>,
    ) -> Exchange {
        self.send_with(method, route, path, body, HeaderMap::new())
            .await
    }

    /// [`Recorder::send`] with extra request headers (e.g. `If-None-Match`).
    pub async fn send_with(
        &mut self,
        method: &str,
        route: &str,
        path: &str,
        body: Option<Value>,
        headers: HeaderMap,
    ) -> Exchange {
        let exchange = send(&self.octo, method, route, path, body, headers).await;
        self.exchanges.push(exchange.clone());
        exchange
    }
}

/// Sends one request through `octo` and reads the whole reply. Panics on transport errors:
/// the emulator is in-process, so those are bugs, not conditions to test.
pub async fn send(
    octo: &Octocrab,
    method: &str,
    route: &str,
    path: &str,
    body: Option<Value>,
    headers: HeaderMap,
) -> Exchange {
    let mut builder = http::Request::builder()
        .method(Method::from_bytes(method.as_bytes()).expect("HTTP method"))
        .uri(path);
    for (name, value) in &headers {
        builder = builder.header(name, value);
    }
    let request = match &body {
        Some(json) => octo.build_request(builder, Some(json)),
        None => octo.build_request(builder, None::<&()>),
    }
    .expect("request builds");
    let response = octo
        .execute(request)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: transport error: {e}"));
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = octo
        .body_to_string(response)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: unreadable body: {e}"));
    let body = if text.trim().is_empty() {
        None
    } else {
        Some(serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!("{method} {path} -> {status}: body is not JSON ({e}): {text}")
        }))
    };
    Exchange {
        method: method.to_string(),
        route: route.to_string(),
        path: path.to_string(),
        status,
        headers,
        body,
    }
}
