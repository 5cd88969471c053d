//! Everything a command needs to talk about one repository from this host: the client, the
//! config, whom to trust, this host's identity and its state folder. Built once per command from
//! the global options and the environment. It makes no decisions.

pub mod companion;
pub mod detached;

use std::path::PathBuf;

use anyhow::Context as _;

use crate::github::{Client, Credentials, Repo, DEFAULT_API_URL};
use crate::host::{HostIdentity, StateDir};
use crate::protocol::config::Config;
use crate::protocol::record::Trust;

/// The options that name the repository, the API, the config, this host and its state folder
/// (the command line's global options, `cli::Globals::options`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub repo: Option<String>,
    pub api_url: Option<String>,
    pub config: Option<PathBuf>,
    pub host: Option<String>,
    pub state_dir: Option<PathBuf>,
    /// The cache file kept between passes; the default one in the state folder when `None`.
    pub cache: Option<PathBuf>,
    pub no_cache: bool,
}

/// One command's view of the world.
pub struct Ctx {
    pub client: Client,
    pub config: Config,
    /// The token's own login, or the GitHub App's bot (`<slug>[bot]`): our records are
    /// written by it.
    pub me: String,
    pub trust: Trust,
    pub host: HostIdentity,
    pub state: StateDir,
    /// The cache file kept between passes; `None` with `--no-cache` (every pass reads in full).
    pub cache: Option<std::path::PathBuf>,
    /// The config file given (`--config`), for the processes this one starts (Runs, companions).
    pub config_path: Option<PathBuf>,
}

/// The config file, as every command reads it: a file that is missing (when named), is not
/// YAML, or does not fit the settings is a usage error (exit 2), naming the file, line and
/// column; one that cannot be read is an error (exit 1).
pub fn load_config(path: Option<&std::path::Path>) -> anyhow::Result<Config> {
    use crate::protocol::config::ConfigError;
    Config::load(path).map_err(|e| match e {
        ConfigError::Read { .. } => anyhow::Error::new(e),
        _ => crate::exit::Exit::usage(e.to_string()).into(),
    })
}

impl Ctx {
    /// Connects to the repository named by the options (or by `fallback`, e.g. a local claim
    /// record's repository and API URL) and learns the token's identity.
    pub async fn connect(globals: &Options, fallback: Option<(&str, &str)>) -> anyhow::Result<Ctx> {
        let config = load_config(globals.config.as_deref())?;
        let repo_text = globals
            .repo
            .clone()
            .or_else(|| fallback.map(|f| f.0.to_string()))
            .context("no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY")?;
        let repo: Repo = repo_text.parse()?;
        let api_url = globals
            .api_url
            .clone()
            .or_else(|| fallback.map(|f| f.1.to_string()))
            .unwrap_or_else(|| DEFAULT_API_URL.to_string());
        let Some(credentials) = Credentials::from_env()? else {
            anyhow::bail!(
                "no credentials: set GITHUB_TOKEN or GH_TOKEN (it needs Issues: write on {repo}), \
                 or THIRDSHIFT_APP_ID and THIRDSHIFT_APP_KEY for a GitHub App installed there"
            );
        };
        check_api_url(&api_url)?;
        let state = StateDir::resolve(globals.state_dir.as_deref())?;
        let login_key = crate::host::login_key(&api_url, &credentials);
        let client = Client::with_credentials(&api_url, credentials, repo)?;
        let cached = crate::host::cached_login(&state, &login_key);
        let me = match cached {
            Some(login) => login,
            None => whoami(&client, &api_url, &state, &login_key).await?,
        };
        client.keep_reserve(config.budget.reserve);
        let trust = Trust::new(config.trusted_authors.iter().cloned().chain([me.clone()]));
        let cache = match (&globals.cache, globals.no_cache) {
            (_, true) => None,
            (Some(path), false) => Some(path.clone()),
            (None, false) => Some(crate::host::cache_path(
                state.root(),
                &client.repo().to_string(),
            )),
        };
        Ok(Ctx {
            client,
            config,
            me,
            trust,
            host: HostIdentity::detect(globals.host.as_deref()),
            state,
            cache,
            config_path: globals.config.clone(),
        })
    }

    /// This repository as git remotes name it: `owner/name` on the API's web host.
    pub fn remote_repo(&self) -> crate::protocol::remote::RemoteRepo {
        crate::protocol::remote::RemoteRepo::new(
            self.client.api_url(),
            &self.client.repo().to_string(),
        )
    }
}

/// Asks GitHub who the credentials belong to, and keeps the answer for the next process.
async fn whoami(
    client: &Client,
    api_url: &str,
    state: &StateDir,
    key: &str,
) -> anyhow::Result<String> {
    let login = match client.whoami().await {
        Ok(user) => user.login,
        Err(crate::github::GithubError::NotFound { .. }) => anyhow::bail!(
            "GET {api_url}/user answered 404: {api_url} does not look like a GitHub API URL \
             (GitHub's is https://api.github.com, GitHub Enterprise Server's \
             https://HOST/api/v3); check GITHUB_API_URL or --api-url"
        ),
        Err(e) => return Err(e).context("finding out who the credentials belong to"),
    };
    crate::host::keep_login(state, key, &login);
    Ok(login)
}

/// An API URL this tool can talk to: `http` or `https`, with a host. Anything else is a usage
/// error at once (exit 2), never retried.
fn check_api_url(url: &str) -> Result<(), crate::exit::Exit> {
    let parsed: Option<http::Uri> = url.parse().ok();
    let ok = parsed.as_ref().is_some_and(|u| {
        matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some_and(|h| !h.is_empty())
    });
    if ok {
        return Ok(());
    }
    Err(crate::exit::Exit::usage(format!(
        "the API URL `{url}` is not an http(s) URL with a host: set GITHUB_API_URL or --api-url \
         to https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server"
    )))
}
