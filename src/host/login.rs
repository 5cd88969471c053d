//! Who the credentials belong to, kept in the state folder (`login.json`), so an idle `observe`
//! does not spend a request on `GET /user` every minute. The entry is keyed by a fingerprint of
//! the API URL and the credentials (FNV-1a over them, never the token itself), so other
//! credentials, or another GitHub, are asked again. A file that cannot be read or written only
//! costs that one request. It does not talk to GitHub.

use serde::{Deserialize, Serialize};

use super::StateDir;
use crate::github::Credentials;

#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    login: String,
}

/// The fingerprint of `api_url` and `credentials` the entry is kept under.
pub fn key(api_url: &str, credentials: &Credentials) -> String {
    let who = match credentials {
        Credentials::Token(token) => format!("token:{token}"),
        Credentials::App(app) => format!("app:{}:{:?}", app.app_id, app.installation_id),
    };
    let h = crate::protocol::fingerprint::fnv1a64(format!("{api_url}\n{who}").as_bytes());
    format!("fnv1a64:{h:016x}")
}

/// The login kept for `key`, if any.
pub fn cached(state: &StateDir, key: &str) -> Option<String> {
    let text = std::fs::read(state.root().join("login.json")).ok()?;
    let entry: Entry = serde_json::from_slice(&text).ok()?;
    (entry.key == key && !entry.login.is_empty()).then_some(entry.login)
}

/// Keeps `login` for `key`; a failure is only logged.
pub fn keep(state: &StateDir, key: &str, login: &str) {
    let entry = Entry {
        key: key.to_string(),
        login: login.to_string(),
    };
    let text = serde_json::to_vec(&entry).expect("an entry serializes");
    if let Err(e) = state.write_file("login.json", &text) {
        tracing::debug!("could not keep the login: {e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_is_kept_per_api_url_and_credentials_and_never_holds_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::resolve(Some(dir.path())).unwrap();
        let token = Credentials::Token("ghp_secret".into());
        let k = key("https://api.github.com", &token);
        // given nothing kept, when a login is kept, then it is found under the same key only
        assert_eq!(cached(&state, &k), None);
        keep(&state, &k, "octo-bot");
        assert_eq!(cached(&state, &k).as_deref(), Some("octo-bot"));
        let other = Credentials::Token("ghp_other".into());
        assert_eq!(cached(&state, &key("https://api.github.com", &other)), None);
        assert_eq!(
            cached(&state, &key("https://ghe.example/api/v3", &token)),
            None
        );
        let text = std::fs::read_to_string(dir.path().join("login.json")).unwrap();
        assert!(!text.contains("ghp_secret"), "{text}");
    }
}
