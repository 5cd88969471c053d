//! One HTTP exchange with GitHub through octocrab, with the retry rules this tool relies on:
//! reads and repeatable writes are retried with back-off on 5xx, 429, secondary limits and broken
//! connections (honouring `retry-after`); a write that is not safe to repeat is never repeated
//! after an unknown outcome, but reported as `Uncertain` so the caller can check first.
//! A request that gets no answer at all (nothing listens, the name does not resolve, a server
//! that accepts and never answers) is retried for at most [`UNREACHABLE_BUDGET`] in all, each
//! attempt cut at what is left of it, and then fails as `Unreachable`, naming the API URL.
//! It does not know any route; the per-route methods live beside it.

use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde::de::DeserializeOwned;

use super::error::{GhResult, GithubError};
use super::Client;

/// Whether a request may be sent again when its outcome is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Repeating it cannot do harm (a read, adding or removing one label, editing to a full body).
    Safe,
    /// Repeating it could write twice (creating a comment): never repeated after an unknown outcome.
    Once,
}

/// How long a request that gets no answer at all is tried, in all, before it fails.
pub const UNREACHABLE_BUDGET: Duration = Duration::from_secs(15);

/// How often and how patiently a request is retried.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The default policy, with the base delay overridable by `THIRDSHIFT_RETRY_BASE_MS` (tests
    /// against the emulator use a few milliseconds) and the attempts by
    /// `THIRDSHIFT_RETRY_ATTEMPTS` (tests that fail 30% of requests ask for more patience).
    pub fn from_env() -> RetryPolicy {
        let mut policy = RetryPolicy::default();
        let number = |name: &str| std::env::var(name).ok()?.parse::<u64>().ok();
        if let Some(ms) = number("THIRDSHIFT_RETRY_BASE_MS") {
            policy.base_delay = Duration::from_millis(ms);
        }
        if let Some(n) = number("THIRDSHIFT_RETRY_ATTEMPTS").filter(|n| (1..=20).contains(n)) {
            policy.max_attempts = n as u32;
        }
        policy
    }

    fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(after) = retry_after {
            return after.min(self.max_delay);
        }
        let exp = self
            .base_delay
            .saturating_mul(1 << attempt.min(16).saturating_sub(1));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let jitter_ns =
            u64::from(now.unwrap_or_default().subsec_nanos()) ^ u64::from(std::process::id());
        let jitter = Duration::from_nanos(jitter_ns % (self.base_delay.as_nanos() as u64 + 1));
        (exp + jitter).min(self.max_delay)
    }
}

/// A complete response: status, headers and body text.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

/// The request headers an exchange adds to octocrab's own.
struct Headers<'a> {
    auth: Option<&'a HeaderValue>,
    etag: Option<&'a str>,
}

/// What one attempt came to, before the retry decision.
enum Attempt {
    Done(Response),
    /// Retry after the given delay (or back-off); not applied, safe to send again.
    NotApplied(String, Option<Duration>),
    /// May have been applied: retry only when the request is `Safe`.
    Unknown(String),
    /// No answer at all; `sent`: the request may have reached the server (a timeout after
    /// connecting), else it never left (no connection).
    NoAnswer {
        detail: String,
        sent: bool,
    },
}

impl Client {
    /// Sends one request, retrying as `retry` allows; maps 4xx answers to typed errors. With a
    /// GitHub App, an installation token refused early (revoked, clocks apart) is renewed and
    /// the request sent once more: a 401 was not applied.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        retry: Retry,
    ) -> GhResult<Response> {
        self.send_if(method, url, body, retry, None).await
    }

    /// [`Client::send`] with an `If-None-Match` ETag (a `GET` answered 304 when unchanged, which
    /// costs no rate budget); a 304 is returned as a success for the caller to recognise.
    pub(crate) async fn send_if(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        retry: Retry,
        etag: Option<&str>,
    ) -> GhResult<Response> {
        let auth = self.auth_header().await?;
        let renew = auth.is_some();
        let first = self
            .exchange(method.clone(), url, body, retry, auth, etag)
            .await;
        match first {
            Err(GithubError::Unauthorized { .. }) if renew => {
                self.forget_token().await;
                let auth = self.auth_header().await?;
                self.exchange(method, url, body, retry, auth, etag).await
            }
            other => other,
        }
    }

    /// [`Client::send`] with a given `Authorization` header (`None`: octocrab's own, if any).
    pub(crate) async fn send_with(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        retry: Retry,
        auth: Option<HeaderValue>,
    ) -> GhResult<Response> {
        self.exchange(method, url, body, retry, auth, None).await
    }

    /// One request with its retries, `Authorization` and optional `If-None-Match` given.
    async fn exchange(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        retry: Retry,
        auth: Option<HeaderValue>,
        etag: Option<&str>,
    ) -> GhResult<Response> {
        if !self.on_api_origin(url) {
            return Err(GithubError::ForeignOrigin {
                method: method.to_string(),
                origin: origin_of(url).map_or_else(|| "a URL that is not one".into(), show),
                api_origin: origin_of(&self.api_url).map_or_else(String::new, show),
            });
        }
        let headers = Headers {
            auth: auth.as_ref(),
            etag,
        };
        let mut attempt = 0;
        let started = Instant::now();
        let mut unanswered = false;
        loop {
            if let Some(refusal) = self.within_reserve() {
                return Err(refusal);
            }
            attempt += 1;
            let outcome = if unanswered {
                let left = UNREACHABLE_BUDGET.saturating_sub(started.elapsed());
                let sent = self.attempt(&method, url, body, &headers);
                tokio::time::timeout(left, sent)
                    .await
                    .unwrap_or_else(|_| Attempt::NoAnswer {
                        detail: format!("no answer within {} s", UNREACHABLE_BUDGET.as_secs()),
                        sent: true,
                    })
            } else {
                self.attempt(&method, url, body, &headers).await
            };
            let (detail, after) = match outcome {
                Attempt::Done(resp) => return self.check(&method, url, resp),
                Attempt::NotApplied(detail, after) => (detail, after),
                Attempt::NoAnswer { detail, sent } if sent && retry == Retry::Once => {
                    return Err(GithubError::Uncertain {
                        repo: self.repo.to_string(),
                        method: method.to_string(),
                        path: self.path_of(url),
                        detail,
                    })
                }
                Attempt::NoAnswer { detail, .. } => {
                    unanswered = true;
                    let next = started.elapsed() + self.retry.delay(attempt, None);
                    if next >= UNREACHABLE_BUDGET || attempt >= self.retry.max_attempts {
                        return Err(GithubError::Unreachable {
                            api_url: self.api_url.clone(),
                            method: method.to_string(),
                            path: self.path_of(url),
                            secs: started.elapsed().as_secs(),
                            attempts: attempt,
                            detail,
                        });
                    }
                    (detail, None)
                }
                Attempt::Unknown(detail) if retry == Retry::Once => {
                    return Err(GithubError::Uncertain {
                        repo: self.repo.to_string(),
                        method: method.to_string(),
                        path: self.path_of(url),
                        detail,
                    })
                }
                Attempt::Unknown(detail) => (detail, None),
            };
            if attempt >= self.retry.max_attempts {
                return Err(GithubError::Exhausted {
                    repo: self.repo.to_string(),
                    method: method.to_string(),
                    path: self.path_of(url),
                    attempts: attempt,
                    detail,
                });
            }
            let delay = self.retry.delay(attempt, after);
            tracing::debug!(%method, path = %self.path_of(url), attempt, ?delay, %detail, "retrying");
            tokio::time::sleep(delay).await;
        }
    }

    /// Sleeps the back-off a failed request would wait before its retry number `attempt` (1 for
    /// the first), for callers that retry reads of their own (a stale list, say).
    pub async fn back_off(&self, attempt: u32) {
        tokio::time::sleep(self.retry.delay(attempt, None)).await;
    }

    async fn attempt(
        &self,
        method: &Method,
        url: &str,
        body: Option<&serde_json::Value>,
        headers: &Headers<'_>,
    ) -> Attempt {
        let mut builder = http::Request::builder()
            .method(method.clone())
            .uri(url)
            .header(http::header::ACCEPT, "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28");
        if let Some(auth) = headers.auth {
            builder = builder.header(http::header::AUTHORIZATION, auth.clone());
        }
        if let Some(tag) = headers.etag {
            builder = builder.header(http::header::IF_NONE_MATCH, tag);
        }
        let request = match self.octo.build_request(builder, body) {
            Ok(r) => r,
            Err(e) => return Attempt::Unknown(format!("building the request: {e}")),
        };
        let response = match self.octo.execute(request).await {
            Ok(r) => r,
            Err(e) => return no_answer(&e),
        };
        let status = response.status();
        let headers = response.headers().clone();
        let body = match self.octo.body_to_string(response).await {
            Ok(b) => b,
            Err(e) => return Attempt::Unknown(format!("reading the response: {e}")),
        };
        self.note_rate(&headers);
        classify(Response {
            status,
            headers,
            body,
        })
    }

    /// Turns a final response into success or a typed error.
    fn check(&self, method: &Method, url: &str, resp: Response) -> GhResult<Response> {
        let status = resp.status.as_u16();
        if resp.status.is_success() || status == 304 {
            return Ok(resp);
        }
        let message = github_message(&resp.body);
        let repo = self.repo.to_string();
        let (method_s, path) = (method.to_string(), self.path_of(url));
        let needs = if *method == Method::GET {
            "Issues: read (a classic token needs the `repo` scope for a private repository)"
        } else {
            "Issues: write (a classic token needs the `repo` scope)"
        };
        Err(match status {
            401 => GithubError::Unauthorized {
                repo,
                message,
                credentials: self.credentials_hint(),
            },
            403 if remaining(&resp.headers) == Some(0) => GithubError::RateLimited {
                repo,
                reset_in: reset_in(&resp.headers),
            },
            403 => GithubError::Forbidden {
                repo,
                method: method_s,
                path,
                message,
                needs,
            },
            404 => GithubError::NotFound {
                repo,
                method: method_s,
                path,
                needs,
            },
            _ => GithubError::Status {
                repo,
                method: method_s,
                path,
                status,
                message,
            },
        })
    }

    /// The variables the client's credentials came from, for messages.
    fn credentials_hint(&self) -> &'static str {
        if self.app.is_some() {
            "THIRDSHIFT_APP_ID and THIRDSHIFT_APP_KEY (the App's id and one of its private keys)"
        } else {
            "GITHUB_TOKEN / GH_TOKEN"
        }
    }

    /// Decodes a JSON body into `T`, naming the request on failure.
    pub(crate) fn decode<T: DeserializeOwned>(
        &self,
        method: &Method,
        url: &str,
        resp: &Response,
    ) -> GhResult<T> {
        serde_json::from_str(&resp.body).map_err(|e| GithubError::Decode {
            repo: self.repo.to_string(),
            method: method.to_string(),
            path: self.path_of(url),
            detail: e.to_string(),
        })
    }

    /// The path and query of an absolute URL, for messages (never carries credentials).
    pub(crate) fn path_of(&self, url: &str) -> String {
        url.strip_prefix(&self.api_url).unwrap_or(url).to_string()
    }
}

impl Client {
    /// Whether `url` is on the configured API's origin (scheme, host and port): the only place
    /// any request, and so any credential, is sent.
    pub(crate) fn on_api_origin(&self, url: &str) -> bool {
        let theirs = origin_of(url);
        theirs.is_some() && theirs == origin_of(&self.api_url)
    }
}

/// The scheme, lower-case host and port (the scheme's default when none is written) of an
/// absolute http(s) URL.
fn origin_of(url: &str) -> Option<(String, String, u16)> {
    let uri: http::Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let host = uri.host()?.to_ascii_lowercase();
    Some((scheme, host, uri.port_u16().unwrap_or(default)))
}

fn show((scheme, host, port): (String, String, u16)) -> String {
    format!("{scheme}://{host}:{port}")
}

fn classify(resp: Response) -> Attempt {
    let status = resp.status.as_u16();
    let after = retry_after(&resp.headers);
    let secondary = status == 403
        && (after.is_some()
            || resp
                .body
                .to_ascii_lowercase()
                .contains("secondary rate limit"));
    if status == 429 || secondary {
        return Attempt::NotApplied(format!("{status} {}", github_message(&resp.body)), after);
    }
    if resp.status.is_server_error() {
        return Attempt::Unknown(format!("{status} {}", github_message(&resp.body)));
    }
    Attempt::Done(resp)
}

/// A request that got no response: whether it never left (no connection could be made) or may
/// have reached the server (it timed out, or the connection broke after sending).
fn no_answer(e: &octocrab::Error) -> Attempt {
    let mut chain = Vec::new();
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = source {
        chain.push(err.to_string());
        source = err.source();
    }
    let debug = format!("{e:?}");
    let sent = !debug.contains("ConnectError") && !debug.contains("is_connect: true");
    Attempt::NoAnswer {
        detail: causes(chain),
        sent,
    }
}

/// An error's chain of messages, each said once: a cause whose words an earlier message already
/// holds (hyper repeats "client error (Connect)", the OS error is inside the connect error) is
/// left out.
fn causes(chain: Vec<String>) -> String {
    let mut said: Vec<String> = Vec::new();
    for text in chain {
        if !said.iter().any(|earlier| earlier.contains(&text)) {
            said.push(text);
        }
    }
    said.join(": ")
}

fn github_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.chars().take(200).collect())
}

fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    header_u64(headers, "retry-after").map(Duration::from_secs)
}

pub(crate) fn remaining(headers: &HeaderMap) -> Option<u64> {
    header_u64(headers, "x-ratelimit-remaining")
}

fn reset_in(headers: &HeaderMap) -> Duration {
    let now = chrono::Utc::now().timestamp().max(0) as u64;
    let reset = header_u64(headers, "x-ratelimit-reset").unwrap_or(now);
    Duration::from_secs(reset.saturating_sub(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_names_each_cause_once() {
        let chain = [
            "Service Error: client error (Connect)",
            "client error (Connect)",
            "client error (Connect)",
            "tcp connect error: Connection refused (os error 111)",
            "Connection refused (os error 111)",
        ];
        assert_eq!(
            causes(chain.iter().map(|c| c.to_string()).collect()),
            "Service Error: client error (Connect): tcp connect error: Connection refused (os \
             error 111)"
        );
    }

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
        }
    }

    #[test]
    fn an_origin_is_scheme_host_and_port_with_the_default_port_filled_in() {
        let o = |u: &str| origin_of(u).map(show);
        assert_eq!(
            o("https://API.github.com/repos/o/r").as_deref(),
            Some("https://api.github.com:443")
        );
        assert_eq!(
            o("https://api.github.com:443/x"),
            o("https://api.github.com/y")
        );
        assert_ne!(o("http://127.0.0.1:4000/x"), o("http://127.0.0.1:4001/x"));
        assert_ne!(o("http://api.github.com/x"), o("https://api.github.com/x"));
        assert_eq!(o("/repos/o/r"), None);
        assert_eq!(o("ftp://api.github.com/x"), None);
    }

    #[tokio::test]
    async fn a_request_for_another_origin_is_never_sent() {
        // given a listener on another port than the API's
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        other.set_nonblocking(true).unwrap();
        let port = other.local_addr().unwrap().port();
        let repo = "o/r".parse().unwrap();
        let client = Client::new("http://127.0.0.1:9/", Some("s3cret".into()), repo).unwrap();
        // when the client is asked for a page there
        let url = format!("http://127.0.0.1:{port}/repos/o/r/issues?page=2");
        let err = client
            .send(Method::GET, &url, None, Retry::Safe)
            .await
            .unwrap_err();
        // then it refuses, naming both origins, and nothing reached the listener
        assert!(matches!(err, GithubError::ForeignOrigin { .. }), "{err}");
        assert!(err
            .to_string()
            .contains(&format!("http://127.0.0.1:{port}")));
        assert!(
            other.accept().is_err(),
            "a connection reached the other origin"
        );
    }

    #[test]
    fn retry_after_wins_over_back_off_up_to_the_cap() {
        let p = policy();
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(90))),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn back_off_doubles_and_is_capped() {
        let p = policy();
        let first = p.delay(1, None);
        let third = p.delay(3, None);
        assert!(first >= Duration::from_millis(100) && first <= Duration::from_millis(200));
        assert!(third >= Duration::from_millis(400) && third <= Duration::from_millis(500));
        assert_eq!(p.delay(30, None), Duration::from_secs(5));
    }

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        Response {
            status: StatusCode::from_u16(status).unwrap(),
            headers: map,
            body: body.to_string(),
        }
    }

    #[test]
    fn secondary_rate_limit_is_not_applied_and_waits_for_retry_after() {
        let body = r#"{"message":"You have exceeded a secondary rate limit."}"#;
        match classify(response(403, &[("retry-after", "7")], body)) {
            Attempt::NotApplied(_, after) => assert_eq!(after, Some(Duration::from_secs(7))),
            _ => panic!("a secondary limit must be retried as not applied"),
        }
        assert!(matches!(
            classify(response(429, &[], "{}")),
            Attempt::NotApplied(_, None)
        ));
    }

    #[test]
    fn server_errors_have_unknown_outcome_and_client_errors_are_final() {
        assert!(matches!(
            classify(response(502, &[], "")),
            Attempt::Unknown(_)
        ));
        assert!(matches!(
            classify(response(422, &[], "{}")),
            Attempt::Done(_)
        ));
        assert!(matches!(
            classify(response(403, &[("x-ratelimit-remaining", "0")], "{}")),
            Attempt::Done(_)
        ));
    }
}
