//! GitHub App authentication for the client: a JWT (RS256, `iat` 60 s in the past, `exp` 10
//! minutes after `iat`, `iss` the App id) signed with the App's private key, exchanged for an
//! installation token (`POST /app/installations/{id}/access_tokens`, the installation found with
//! `GET /repos/{owner}/{repo}/installation` when not configured), kept and renewed before it
//! expires, so a long `observe` or `run` never meets the hour mark with a dead token.
//!
//! How the token is swapped: the client holds it behind a lock shared by its clones and our own
//! transport sends `Authorization` with every request it builds (pages included, whatever the
//! host), rather than octocrab's installation auth, which sends credentials on absolute URLs
//! only to api.github.com. Refreshes are serialised by the lock, so concurrent requests make one.
//! It never logs a token, a JWT or the key.

use chrono::{DateTime, Utc};
use http::{HeaderValue, Method};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use super::auth::AppCredentials;
use super::error::{GhResult, GithubError};
use super::transport::{Response, Retry};
use super::{Client, User};

/// How far `iat` is set in the past, against clock drift (GitHub's advice).
pub const JWT_BACKDATE_SECS: i64 = 60;
/// The longest life GitHub accepts for an App JWT (`exp` - `iat`, and `exp` - now).
pub const JWT_MAX_LIFETIME_SECS: i64 = 600;
/// An installation token is renewed when less than this is left (or less than half its life,
/// for tokens that live less than twice as long).
pub const REFRESH_MARGIN_SECS: i64 = 300;

/// The claims of an App JWT.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppClaims {
    pub iat: i64,
    pub exp: i64,
    pub iss: u64,
}

impl AppClaims {
    /// The claims for `app_id` at `now` (epoch seconds): `iat` 60 s back, `exp` 10 minutes
    /// after `iat` (so 9 minutes after now).
    pub fn at(app_id: u64, now: i64) -> AppClaims {
        let iat = now - JWT_BACKDATE_SECS;
        AppClaims {
            iat,
            exp: iat + JWT_MAX_LIFETIME_SECS,
            iss: app_id,
        }
    }
}

/// An App JWT for `app_id` signed with `key`, as of `now` (epoch seconds; a parameter so tests
/// can sign in the past).
pub fn app_jwt(app_id: u64, key: &EncodingKey, now: i64) -> Result<String, String> {
    jsonwebtoken::encode(
        &Header::new(Algorithm::RS256),
        &AppClaims::at(app_id, now),
        key,
    )
    .map_err(|e| format!("signing a JWT for GitHub App {app_id}: {e}"))
}

/// A client's App: its key, its installation and the current installation token.
pub(crate) struct AppAuth {
    app_id: u64,
    key: EncodingKey,
    state: Mutex<TokenState>,
}

struct TokenState {
    installation_id: Option<u64>,
    token: Option<Cached>,
}

/// An installation token and its life, in epoch seconds.
struct Cached {
    token: HeaderValue,
    obtained: i64,
    expires: i64,
}

impl Cached {
    /// Whether it is still good to send at `now`, with the refresh margin to spare.
    fn fresh(&self, now: i64) -> bool {
        let margin = REFRESH_MARGIN_SECS.min((self.expires - self.obtained) / 2);
        self.expires - now > margin
    }
}

impl AppAuth {
    pub(crate) fn new(creds: AppCredentials) -> AppAuth {
        AppAuth {
            app_id: creds.app_id,
            key: creds.key,
            state: Mutex::new(TokenState {
                installation_id: creds.installation_id,
                token: None,
            }),
        }
    }
}

/// `Bearer X`, marked sensitive so no debug output of the request shows it.
fn bearer(secret: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(&format!("Bearer {secret}")).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// The reply of the token exchange (only what we use).
#[derive(Deserialize)]
struct TokenReply {
    token: String,
    expires_at: DateTime<Utc>,
}

/// The reply of `GET /repos/{owner}/{repo}/installation` or `GET /app` (only what we use).
#[derive(Deserialize)]
struct Identified {
    id: u64,
    #[serde(default)]
    slug: Option<String>,
}

impl Client {
    /// The `Authorization` header for a request: the installation token, renewed first when it
    /// is missing or close to expiry. `None` for a token client (octocrab sends its header).
    pub(crate) async fn auth_header(&self) -> GhResult<Option<HeaderValue>> {
        let Some(app) = &self.app else {
            return Ok(None);
        };
        let mut state = app.state.lock().await;
        let now = Utc::now().timestamp();
        if let Some(cached) = state.token.as_ref().filter(|c| c.fresh(now)) {
            return Ok(Some(cached.token.clone()));
        }
        let installation = match state.installation_id {
            Some(id) => id,
            None => {
                let id = self.find_installation().await?;
                state.installation_id = Some(id);
                id
            }
        };
        let url = format!(
            "{}/app/installations/{installation}/access_tokens",
            self.api_url
        );
        let scope = token_scope(&self.repo.name);
        let resp = self.send_as_app(Method::POST, &url, Some(&scope)).await?;
        let reply: TokenReply = self.decode(&Method::POST, &url, &resp)?;
        let token = bearer(&reply.token).ok_or_else(|| {
            self.app_error("GitHub sent an installation token that is not a valid header value")
        })?;
        tracing::debug!(installation, expires_at = %reply.expires_at, "installation token renewed");
        state.token = Some(Cached {
            token: token.clone(),
            obtained: now,
            expires: reply.expires_at.timestamp(),
        });
        Ok(Some(token))
    }

    /// Drops the installation token, so the next request makes a new one (after a 401).
    pub(crate) async fn forget_token(&self) {
        if let Some(app) = &self.app {
            app.state.lock().await.token = None;
        }
    }

    /// The App's bot user, `<slug>[bot]`, from `GET /app`: with an installation token
    /// `GET /user` is refused, and the bot is who writes our comments.
    pub(crate) async fn app_bot(&self) -> GhResult<Option<User>> {
        if self.app.is_none() {
            return Ok(None);
        }
        let url = format!("{}/app", self.api_url);
        let resp = self.send_as_app(Method::GET, &url, None).await?;
        let app: Identified = self.decode(&Method::GET, &url, &resp)?;
        let slug = app
            .slug
            .ok_or_else(|| self.app_error("GET /app named no slug"))?;
        Ok(Some(User {
            login: format!("{slug}[bot]"),
            id: 0,
            kind: Some("Bot".to_string()),
        }))
    }

    /// The App's installation on this client's repository.
    async fn find_installation(&self) -> GhResult<u64> {
        let url = self.repo_url("/installation");
        match self.send_as_app(Method::GET, &url, None).await {
            Ok(resp) => Ok(self.decode::<Identified>(&Method::GET, &url, &resp)?.id),
            Err(GithubError::NotFound { .. }) => Err(self.app_error(&format!(
                "the GitHub App is not installed on {} (or cannot see it): install it there, or \
                 set THIRDSHIFT_INSTALLATION_ID",
                self.repo
            ))),
            Err(e) => Err(e),
        }
    }

    /// One request authenticated with a new App JWT (App endpoints take nothing else).
    async fn send_as_app(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> GhResult<Response> {
        let app = self
            .app
            .as_ref()
            .ok_or_else(|| self.app_error("no GitHub App configured"))?;
        let jwt = app_jwt(app.app_id, &app.key, Utc::now().timestamp())
            .map_err(|e| self.app_error(&e))?;
        let header = bearer(&jwt)
            .ok_or_else(|| self.app_error("the signed JWT is not a valid header value"))?;
        self.send_with(method, url, body, Retry::Safe, Some(header))
            .await
    }

    fn app_error(&self, detail: &str) -> GithubError {
        GithubError::App {
            repo: self.repo.to_string(),
            detail: detail.to_string(),
        }
    }
}

/// What an installation token is asked for: this repository only, with the permissions the tool
/// uses (issues and their comments, labels and reactions: write; branches, pull requests and the
/// collaborator-permission check: read), never the whole installation.
fn token_scope(repo_name: &str) -> serde_json::Value {
    serde_json::json!({
        "repositories": [repo_name],
        "permissions": {
            "issues": "write",
            "contents": "read",
            "pull_requests": "read",
            "metadata": "read",
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwt_claims_are_backdated_a_minute_and_live_ten_minutes_from_issue() {
        // Given a moment, When the claims for App 42 are made
        let claims = AppClaims::at(42, 1_700_000_000);
        // Then iat is 60 s in the past, exp at most 10 minutes after now and after iat
        assert_eq!(claims.iat, 1_700_000_000 - 60);
        assert!(claims.exp - 1_700_000_000 <= 600);
        assert_eq!(claims.exp - claims.iat, 600);
        assert!(claims.exp > 1_700_000_000, "the JWT is valid now");
        assert_eq!(claims.iss, 42);
    }

    #[test]
    fn a_token_is_renewed_five_minutes_before_expiry_or_half_way_for_short_ones() {
        let token = HeaderValue::from_static("Bearer x");
        let hour = Cached {
            token: token.clone(),
            obtained: 0,
            expires: 3600,
        };
        assert!(hour.fresh(3000));
        assert!(!hour.fresh(3301), "less than 5 minutes left");
        let short = Cached {
            token,
            obtained: 0,
            expires: 4,
        };
        assert!(short.fresh(1));
        assert!(!short.fresh(2), "half its life is gone");
    }
}
