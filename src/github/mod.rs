//! The GitHub client: one type over octocrab with token or GitHub App auth, an explicit base URL,
//! explicit pagination, our own retry rules and rate-limit accounting. One method per REST call
//! lives in the files beside this one. It makes no decisions about Claims and never logs a token.

mod app_auth;
mod auth;
mod collaborators;
mod comments;
mod conditional;
mod error;
mod graphql;
mod handoff;
mod issues;
pub mod models;
mod repos;
mod transport;

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use app_auth::{app_jwt, AppClaims, JWT_BACKDATE_SECS, JWT_MAX_LIFETIME_SECS};
pub use auth::{
    take_from_env, taken, AppCredentials, Credentials, APP_ID_VAR, APP_KEY_VAR, CREDENTIAL_VARS,
    INSTALLATION_ID_VAR, TOKEN_VARS,
};
pub use conditional::PageCache;
pub use error::{GhResult, GithubError};
pub use graphql::{BATCH as GRAPHQL_BATCH, ISSUE_COMMENTS_QUERY};
pub use handoff::{hand_over, HANDOFF_FD_VAR};
pub use models::{Comment, Issue, IssueEvent, Label, User};
pub use repos::{HeadCommit, PullSummary};
pub use transport::{Retry, RetryPolicy};

/// The API base used when neither `--api-url` nor `GITHUB_API_URL` is given.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// A repository as `owner/name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repo {
    pub owner: String,
    pub name: String,
}

impl FromStr for Repo {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Repo> {
        match s.split_once('/') {
            Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => Ok(Repo {
                owner: o.to_string(),
                name: n.to_string(),
            }),
            _ => anyhow::bail!("repository `{s}` is not of the form OWNER/NAME"),
        }
    }
}

impl fmt::Display for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// A GitHub client for one repository. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    octo: octocrab::Octocrab,
    api_url: String,
    repo: Repo,
    retry: RetryPolicy,
    rate_remaining: Arc<AtomicU64>,
    /// The budget kept back for Runs' own end writes: a request made while GitHub's last answer
    /// left no more than this is refused before it is sent (0: none kept).
    reserve: Arc<AtomicU64>,
    /// The GitHub App whose installation tokens authenticate requests; `None` for a token.
    app: Option<Arc<app_auth::AppAuth>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Deliberately no token or header here.
        f.debug_struct("Client")
            .field("api_url", &self.api_url)
            .field("repo", &self.repo)
            .finish()
    }
}

impl Client {
    /// A client for `repo` at `api_url`, authenticated with `token` when given.
    pub fn new(api_url: &str, token: Option<String>, repo: Repo) -> anyhow::Result<Client> {
        match token {
            Some(token) => Client::with_credentials(api_url, Credentials::Token(token), repo),
            None => Client::build(api_url, None, None, repo),
        }
    }

    /// A client for `repo` at `api_url` with a token or a GitHub App.
    pub fn with_credentials(
        api_url: &str,
        credentials: Credentials,
        repo: Repo,
    ) -> anyhow::Result<Client> {
        match credentials {
            Credentials::Token(token) => Client::build(api_url, Some(token), None, repo),
            Credentials::App(app) => {
                let app = Arc::new(app_auth::AppAuth::new(app));
                Client::build(api_url, None, Some(app), repo)
            }
        }
    }

    fn build(
        api_url: &str,
        token: Option<String>,
        app: Option<Arc<app_auth::AppAuth>>,
        repo: Repo,
    ) -> anyhow::Result<Client> {
        let api_url = api_url.trim_end_matches('/').to_string();
        let mut builder = octocrab::Octocrab::builder()
            .base_uri(api_url.as_str())
            .map_err(|e| anyhow::anyhow!("API URL `{api_url}` is not a valid URL: {e}"))?
            // GitHub answers within 10 s or not at all (its own request timeout); a server that
            // accepts and never answers is cut there (`transport::UNREACHABLE_BUDGET` in all).
            .set_connect_timeout(Some(Duration::from_secs(5)))
            .set_read_timeout(Some(Duration::from_secs(10)));
        if let Some(token) = token {
            builder = builder.personal_token(token);
        }
        let octo = builder
            .build()
            .map_err(|e| anyhow::anyhow!("setting up the GitHub client: {e}"))?;
        Ok(Client {
            octo,
            api_url,
            repo,
            retry: RetryPolicy::from_env(),
            rate_remaining: Arc::new(AtomicU64::new(u64::MAX)),
            reserve: Arc::new(AtomicU64::new(0)),
            app,
        })
    }

    /// Replaces the retry policy (tests use short delays).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Client {
        self.retry = retry;
        self
    }

    /// The repository this client talks about.
    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The API base URL, without a trailing slash.
    pub fn api_url(&self) -> &str {
        &self.api_url
    }

    /// The rate budget GitHub reported in its latest answer, if any answer carried one.
    pub fn rate_remaining(&self) -> Option<u64> {
        match self.rate_remaining.load(Ordering::Relaxed) {
            u64::MAX => None,
            n => Some(n),
        }
    }

    /// Keeps `reserve` requests of the budget back: requests stop once GitHub's last answer left
    /// no more than that ([`GithubError::Reserve`]).
    pub fn keep_reserve(&self, reserve: u64) {
        self.reserve.store(reserve, Ordering::Relaxed);
    }

    /// Lets this client use the reserve: a Run's own end writes do.
    pub fn spend_reserve(&self) {
        self.reserve.store(0, Ordering::Relaxed);
    }

    /// The refusal of a request while the budget is within the reserve, if it is.
    fn within_reserve(&self) -> Option<GithubError> {
        let reserve = self.reserve.load(Ordering::Relaxed);
        let remaining = self.rate_remaining()?;
        (reserve > 0 && remaining <= reserve).then(|| GithubError::Reserve {
            repo: self.repo.to_string(),
            remaining,
            reserve,
        })
    }

    fn note_rate(&self, headers: &http::HeaderMap) {
        if let Some(n) = transport::remaining(headers) {
            self.rate_remaining.store(n, Ordering::Relaxed);
        }
    }

    /// The absolute URL of a path under this repository, e.g. `repo_url("/issues/3")`.
    fn repo_url(&self, rest: &str) -> String {
        format!(
            "{}/repos/{}/{}{rest}",
            self.api_url, self.repo.owner, self.repo.name
        )
    }

    /// The login our records are written by: the token's own (`GET /user`), or a GitHub
    /// App's bot, `<slug>[bot]` (`GET /app`).
    pub async fn whoami(&self) -> GhResult<User> {
        if let Some(bot) = self.app_bot().await? {
            return Ok(bot);
        }
        let url = format!("{}/user", self.api_url);
        let resp = self
            .send(http::Method::GET, &url, None, Retry::Safe)
            .await?;
        self.decode(&http::Method::GET, &url, &resp)
    }
}

impl Client {
    /// Every item of a paginated list, following `Link: rel="next"` with explicit requests (so
    /// credentials go with every page whatever the host), 100 items a page.
    async fn get_all<T: serde::de::DeserializeOwned>(&self, first: &str) -> GhResult<Vec<T>> {
        let sep = if first.contains('?') { '&' } else { '?' };
        let mut url = Some(format!("{first}{sep}per_page=100"));
        let mut items = Vec::new();
        while let Some(current) = url.take() {
            let resp = self
                .send(http::Method::GET, &current, None, Retry::Safe)
                .await?;
            let mut page: Vec<T> = self.decode(&http::Method::GET, &current, &resp)?;
            items.append(&mut page);
            url = next_link(&resp.headers);
        }
        Ok(items)
    }
}

/// The URL of the `rel="next"` page in a `Link` header, if any.
fn next_link(headers: &http::HeaderMap) -> Option<String> {
    let link = headers.get(http::header::LINK)?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_link_is_found_among_several_relations() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::LINK,
            "<http://h/x?page=3>; rel=\"next\", <http://h/x?page=9>; rel=\"last\""
                .parse()
                .unwrap(),
        );
        assert_eq!(next_link(&headers).as_deref(), Some("http://h/x?page=3"));
    }

    #[test]
    fn last_page_has_no_next_link() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::LINK,
            "<http://h/x?page=1>; rel=\"first\"".parse().unwrap(),
        );
        assert_eq!(next_link(&headers), None);
    }

    #[test]
    fn repo_must_be_owner_slash_name() {
        assert!("acme/widgets".parse::<Repo>().is_ok());
        for bad in ["acme", "/x", "a/", "a/b/c"] {
            assert!(bad.parse::<Repo>().is_err(), "{bad} accepted");
        }
    }
}
