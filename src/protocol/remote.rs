//! Whether a git remote is this repository: a remote URL names a repository by its web host and
//! its `owner/name` path, and both must match. `https://evil.example/acme/widgets` is not
//! `acme/widgets` on github.com, however its path reads. Every check that asks "is this clone
//! ours?" before committing, pushing or deleting a ref goes through [`RemoteRepo::named_by`].
//!
//! The web host comes from the configured API URL (`web_host`): GitHub's API
//! (`api.github.com`) and GitHub Enterprise Cloud's (`api.<tenant>.ghe.com`) serve the web host
//! without `api.`; GitHub Enterprise Server serves its API at `https://<host>/api/v3`, on the web
//! host itself. An API URL of neither shape (a proxy, or the built-in emulator) stands in for
//! github.com, the only host thirdshift 0.19.0 takes issues from (`src/issue.rs` `IssueUrl`).
//!
//! Pure: it reads no git config (the caller passes the URL as configured, not as `insteadOf`
//! rewrites it, since the configured URL is what the clone claims to be).

/// The repository `owner/name` on web host `host`, all compared case-insensitively.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteRepo {
    host: String,
    path: String,
}

impl RemoteRepo {
    /// Repository `repo` (`owner/name`) on the web host of the API at `api_url`.
    pub fn new(api_url: &str, repo: &str) -> RemoteRepo {
        RemoteRepo {
            host: web_host(api_url),
            path: repo.trim_matches('/').to_ascii_lowercase(),
        }
    }

    /// The repository's name, without its owner (lower case): `widgets` of `acme/widgets`.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or_default()
    }

    /// Whether remote URL `url` (`https://github.com/o/r.git`, `git@github.com:o/r`,
    /// `ssh://git@github.com/o/r/`, ...) names this repository on its web host. A local path, a
    /// `file://` URL or any other host does not.
    pub fn named_by(&self, url: &str) -> bool {
        let Some((host, path)) = split_remote(url.trim()) else {
            return false;
        };
        let path = path.trim_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        host.eq_ignore_ascii_case(&self.host) && path.eq_ignore_ascii_case(&self.path)
    }
}

impl std::fmt::Display for RemoteRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.host, self.path)
    }
}

/// `url` fit to show: any user and password before the host (a token, in
/// `https://x-access-token:<token>@github.com/o/r`) left out.
pub fn shown(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find('/').unwrap_or(rest.len());
            match rest[..end].rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://{host}{}", &rest[end..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

/// The web host of the GitHub whose API is at `api_url` (see the module docs).
fn web_host(api_url: &str) -> String {
    let Some((host, path)) = split_remote(api_url.trim()) else {
        return GITHUB.to_string();
    };
    let host = host.to_ascii_lowercase();
    if let Some(web) = host.strip_prefix("api.") {
        return web.to_string();
    }
    if path.starts_with("/api/") {
        return host;
    }
    GITHUB.to_string()
}

const GITHUB: &str = "github.com";

/// A URL's host (without user or port) and path: `scheme://[user@]host[:port]/path`, or git's
/// scp-like `[user@]host:path`. `None` for a local path or `file://`.
fn split_remote(url: &str) -> Option<(&str, &str)> {
    if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return None;
        }
        let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = host.split(':').next().unwrap_or_default();
        return (!host.is_empty()).then_some((host, path));
    }
    // scp-like: a ':' before any '/', and not a Windows drive letter.
    let colon = url.find(':')?;
    if url[..colon].contains('/') || colon < 2 {
        return None;
    }
    let (authority, path) = (&url[..colon], &url[colon + 1..]);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then_some((host, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_web_host_is_githubs_gheccs_or_the_enterprise_servers() {
        for (api, web) in [
            ("https://api.github.com", "github.com"),
            ("https://api.github.com/", "github.com"),
            ("https://api.octocorp.ghe.com", "octocorp.ghe.com"),
            ("https://ghe.corp.example/api/v3", "ghe.corp.example"),
            ("https://GHE.corp.example:8443/api/v3/", "ghe.corp.example"),
            ("http://127.0.0.1:4312", "github.com"),
        ] {
            assert_eq!(web_host(api), web, "{api}");
        }
    }

    #[test]
    fn a_remote_names_the_repository_in_every_form_git_accepts_on_its_web_host_only() {
        let ours = RemoteRepo::new("https://api.github.com", "acme/widgets");
        for url in [
            "https://github.com/acme/widgets.git",
            "https://github.com/Acme/Widgets",
            "https://x-access-token:secret@github.com/acme/widgets",
            "git@github.com:acme/widgets.git",
            "ssh://git@github.com/acme/widgets/",
            "ssh://git@GitHub.com:22/acme/widgets.git",
        ] {
            assert!(ours.named_by(url), "{url}");
        }
        for url in [
            "https://evil.example/acme/widgets",
            "git@evil.example:acme/widgets.git",
            "https://github.com.evil.example/acme/widgets",
            "https://evil.example/github.com/acme/widgets",
            "https://github.com/acme/widgets-2.git",
            "https://github.com/notacme/widgets",
            "https://github.com/other/acme/widgets",
            "/srv/git/acme/widgets.git",
            "file:///srv/github.com/acme/widgets.git",
            "",
        ] {
            assert!(!ours.named_by(url), "{url}");
        }
    }

    #[test]
    fn a_remote_is_shown_without_its_credentials() {
        assert_eq!(
            shown("https://x-access-token:s3cret@github.com/acme/widgets"),
            "https://github.com/acme/widgets"
        );
        assert_eq!(
            shown("git@github.com:acme/widgets"),
            "git@github.com:acme/widgets"
        );
        let ours = RemoteRepo::new("https://api.github.com", "Acme/Widgets");
        assert_eq!(ours.to_string(), "github.com/acme/widgets");
    }

    #[test]
    fn on_an_enterprise_server_only_its_host_names_the_repository() {
        let ours = RemoteRepo::new("https://ghe.corp.example/api/v3", "acme/widgets");
        assert!(ours.named_by("git@ghe.corp.example:acme/widgets.git"));
        assert!(!ours.named_by("https://github.com/acme/widgets.git"));
    }
}
