//! Typed errors of the GitHub client, so callers can branch on what happened (a lost write, a
//! missing permission) and people read a message they can act on. It holds no retry logic.

use std::time::Duration;

/// What went wrong talking to GitHub. Messages name the repository and, where known, what to fix.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error("GitHub rejected the credentials for {repo} (401 {message}): check {credentials}")]
    Unauthorized {
        repo: String,
        message: String,
        /// Where the credentials came from, e.g. `GITHUB_TOKEN / GH_TOKEN`.
        credentials: &'static str,
    },
    /// A GitHub App could not be used (not installed, a reply without what we need).
    #[error("GitHub App authentication for {repo}: {detail}")]
    App { repo: String, detail: String },
    #[error(
        "GitHub refused {method} {path} on {repo} (403 {message}): the token needs {needs} on {repo}"
    )]
    Forbidden {
        repo: String,
        method: String,
        path: String,
        message: String,
        needs: &'static str,
    },
    #[error(
        "{method} {path}: not found on {repo} (404): the repository or item does not exist, or the \
         token cannot see it (it needs {needs})"
    )]
    NotFound {
        repo: String,
        method: String,
        path: String,
        needs: &'static str,
    },
    /// The rate budget is down to the reserve kept for Runs' own end writes: this pass reads
    /// and writes nothing more.
    #[error(
        "the rate budget for {repo} is down to {remaining} requests, within the reserve of \
         {reserve} kept for Runs' own end records (`budget.reserve`): this pass stops here and \
         the next one goes on once the budget resets"
    )]
    Reserve {
        repo: String,
        remaining: u64,
        reserve: u64,
    },
    #[error("GitHub rate limit exhausted for {repo}; it resets in {reset_in:?}")]
    RateLimited { repo: String, reset_in: Duration },
    #[error("{method} {path} on {repo} failed with {status}: {message}")]
    Status {
        repo: String,
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    /// A write whose request may or may not have been applied (5xx or a broken connection after
    /// sending). The caller must check whether it took effect before repeating it.
    #[error("{method} {path} on {repo}: outcome unknown ({detail}); check before repeating")]
    Uncertain {
        repo: String,
        method: String,
        path: String,
        detail: String,
    },
    /// No answer at all from the API URL: nothing listens there, its name does not resolve, or
    /// it never answers.
    #[error(
        "cannot reach the GitHub API at {api_url}: {method} {path} got no answer in {attempts} \
         attempt(s) over {secs} s ({detail}); check the API URL (GITHUB_API_URL or --api-url; \
         GitHub's is https://api.github.com) and the network"
    )]
    Unreachable {
        api_url: String,
        method: String,
        path: String,
        secs: u64,
        attempts: u32,
        detail: String,
    },
    #[error("{method} {path} on {repo}: gave up after {attempts} attempts: {detail}")]
    Exhausted {
        repo: String,
        method: String,
        path: String,
        attempts: u32,
        detail: String,
    },
    /// A request for a URL on another origin than the API's (a cached or linked page naming
    /// another host or port): never sent, so no credential goes there.
    #[error(
        "refused {method} {origin}: credentials go only to the API's own origin {api_origin}, \
         and a page named another"
    )]
    ForeignOrigin {
        method: String,
        origin: String,
        api_origin: String,
    },
    #[error("{method} {path} on {repo}: unexpected response: {detail}")]
    Decode {
        repo: String,
        method: String,
        path: String,
        detail: String,
    },
}

impl GithubError {
    /// The HTTP status GitHub answered with, when the error came from one.
    pub fn status(&self) -> Option<u16> {
        match self {
            GithubError::Unauthorized { .. } => Some(401),
            GithubError::Forbidden { .. } => Some(403),
            GithubError::NotFound { .. } => Some(404),
            GithubError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether this is a write whose effect is unknown and must be checked before repeating.
    pub fn is_uncertain(&self) -> bool {
        matches!(self, GithubError::Uncertain { .. })
    }
}

/// Result of a GitHub call.
pub type GhResult<T> = Result<T, GithubError>;
