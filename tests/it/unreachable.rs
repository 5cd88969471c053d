//! A wrong API URL, as a new user types one: nothing listens there, a server accepts and never
//! answers, the text is not a URL, or it is a server that is not GitHub's API. Each fails fast
//! with one message naming the URL and where it came from, with the real binary and the default
//! retry policy (no test shortcut).

use crate::harness;

use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};

use harness::*;

/// The real binary against `api_url`, with a token and the default retry policy.
fn observe_at(api_url: &str) -> (Output, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GITHUB_TOKEN", BOT_TOKEN)
        .env("GITHUB_API_URL", api_url)
        .args(["--repo", "acme/widgets", "--host", "h1", "--state-dir"])
        .arg(dir.path())
        .arg("observe");
    // (a product that waits for ever fails here, not by hanging the test)
    let out = output_within(
        &mut cmd,
        Duration::from_secs(60),
        "observe of an unreachable API",
    );
    (out, started.elapsed())
}

fn said(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// Then: exit 1 in under 20 s, saying it cannot reach `url`; returns what it said.
fn fails_fast_naming(url: &str, (out, took): (Output, Duration)) -> String {
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    let names = format!("cannot reach the GitHub API at {url}");
    assert!(text.contains(&names), "{text}");
    text
}

#[test]
fn an_api_url_where_nothing_listens_fails_within_20_s_naming_the_url() {
    // Given a port nothing listens on
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    // When a host observes with it
    // Then it fails in under 20 s, saying it cannot reach that URL and where to change it
    let text = fails_fast_naming(&url, observe_at(&url));
    assert!(text.contains("GITHUB_API_URL or --api-url"), "{text}");
    assert!(
        !text.contains("octocrab"),
        "one message, not the client's raw errors: {text}"
    );
    // And each cause once (issue #61: "client error (Connect)" was said twice)
    assert_eq!(text.matches("client error (Connect)").count(), 1, "{text}");
    assert_eq!(text.matches("Connection refused").count(), 1, "{text}");
}

#[test]
fn a_server_that_accepts_and_never_answers_fails_within_20_s_naming_the_url() {
    // Given a server that accepts connections and never answers
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    // When a host observes with it
    // Then it fails in under 20 s, naming the URL
    fails_fast_naming(&url, observe_at(&url));
}

#[test]
fn an_api_url_that_is_not_a_url_is_a_usage_error_at_once() {
    for url in ["api.github.com", "htp://x", "not a url", ""] {
        // When a host observes with it
        let (out, took) = observe_at(url);
        // Then it exits 2 at once, naming it, with nothing retried
        assert_eq!(out.status.code(), Some(2), "{url}: {}", said(&out));
        assert!(took < Duration::from_secs(2), "{url}: {took:?}");
        assert!(said(&out).contains(&format!("`{url}`")), "{}", said(&out));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_not_githubs_api_is_named_as_a_wrong_api_url() {
    // Given the emulator under a wrong base path: GET <url>/user is 404
    let world = World::new().await;
    let url = format!("{}/wrong", world.server.url);
    // When a host observes with it
    let (out, _) = tokio::task::spawn_blocking(move || observe_at(&url))
        .await
        .unwrap();
    // Then it says the API URL looks wrong, not that a permission is missing
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("does not look like a GitHub API URL"),
        "{text}"
    );
    assert!(!text.contains("needs"), "{text}");
}
