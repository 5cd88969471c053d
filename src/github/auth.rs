//! Which credentials the client uses, read from the environment: a GitHub App
//! (`THIRDSHIFT_APP_ID` + `THIRDSHIFT_APP_KEY`, PEM text or a path to a PEM file, and optionally
//! `THIRDSHIFT_INSTALLATION_ID`) wins over a token (`GITHUB_TOKEN`, else `GH_TOKEN`). Bad input
//! is an error naming the variable, never quoting the key.
//!
//! It sends nothing; signing JWTs and exchanging them for installation tokens is `app_auth.rs`.

use std::fmt;

use anyhow::{bail, Context as _};
use jsonwebtoken::EncodingKey;

pub const APP_ID_VAR: &str = "THIRDSHIFT_APP_ID";
pub const APP_KEY_VAR: &str = "THIRDSHIFT_APP_KEY";
pub const INSTALLATION_ID_VAR: &str = "THIRDSHIFT_INSTALLATION_ID";
pub const TOKEN_VARS: [&str; 2] = ["GITHUB_TOKEN", "GH_TOKEN"];
/// Every variable that holds or names a credential.
pub const CREDENTIAL_VARS: [&str; 5] = [
    APP_ID_VAR,
    APP_KEY_VAR,
    INSTALLATION_ID_VAR,
    "GITHUB_TOKEN",
    "GH_TOKEN",
];

/// The credential variables [`take_from_env`] moved out of the environment.
static TAKEN: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();

/// Moves every credential variable out of this process's environment (and reads those handed
/// to it over a descriptor, `handoff.rs`) into its memory, so no child inherits one unless it is
/// handed it ([`taken`]). The binary calls it first thing, while
/// it has a single thread (changing the environment is only sound then).
pub fn take_from_env() {
    // Handed over a descriptor (`handoff.rs`) first: a process of ours gets them so.
    let mut vars = super::handoff::receive(&CREDENTIAL_VARS);
    vars.extend(
        CREDENTIAL_VARS
            .iter()
            .filter_map(|name| std::env::var(name).ok().map(|v| (name.to_string(), v))),
    );
    for name in CREDENTIAL_VARS {
        std::env::remove_var(name);
    }
    let _ = TAKEN.set(vars);
}

/// A credential variable as this process was started with it.
fn credential_var(name: &str) -> Option<String> {
    match TAKEN.get() {
        Some(vars) => vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        None => std::env::var(name).ok(),
    }
}

/// The credential variables among `names` this process was started with, to hand to a child
/// that needs them (a Run that `pickup` starts; a Run's command gets the token only).
pub fn taken(names: &[&str]) -> Vec<(String, String)> {
    names
        .iter()
        .filter_map(|name| credential_var(name).map(|v| (name.to_string(), v)))
        .collect()
}

/// How the client authenticates.
pub enum Credentials {
    /// A personal access token, `GITHUB_TOKEN` or an installation token made elsewhere.
    Token(String),
    /// A GitHub App, exchanged for installation tokens as needed.
    App(AppCredentials),
}

/// A GitHub App's id, private key and (when known) its installation on the repository.
pub struct AppCredentials {
    pub app_id: u64,
    pub key: EncodingKey,
    /// Found with `GET /repos/{owner}/{repo}/installation` when not given.
    pub installation_id: Option<u64>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the token or the key.
        match self {
            Credentials::Token(_) => f.write_str("Credentials::Token(..)"),
            Credentials::App(app) => write!(f, "Credentials::App({})", app.app_id),
        }
    }
}

impl Credentials {
    /// The credentials the environment names, or `None` when it names none.
    pub fn from_env() -> anyhow::Result<Option<Credentials>> {
        Credentials::from_vars(credential_var)
    }

    /// [`Credentials::from_env`] over any source of variables (empty values count as unset).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<Credentials>> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let (id, key, installation) = (var(APP_ID_VAR), var(APP_KEY_VAR), var(INSTALLATION_ID_VAR));
        match (id, key) {
            (Some(id), Some(key)) => Ok(Some(Credentials::App(AppCredentials {
                app_id: number(APP_ID_VAR, &id)?,
                key: private_key(&key)?,
                installation_id: installation
                    .map(|i| number(INSTALLATION_ID_VAR, &i))
                    .transpose()?,
            }))),
            (Some(_), None) => {
                bail!("{APP_ID_VAR} is set but {APP_KEY_VAR} is not: set both to use a GitHub App")
            }
            (None, Some(_)) => {
                bail!("{APP_KEY_VAR} is set but {APP_ID_VAR} is not: set both to use a GitHub App")
            }
            (None, None) if installation.is_some() => {
                bail!("{INSTALLATION_ID_VAR} is set but {APP_ID_VAR} and {APP_KEY_VAR} are not")
            }
            (None, None) => Ok(TOKEN_VARS
                .iter()
                .find_map(|name| var(name))
                .map(|t| Credentials::Token(t.trim().to_string()))),
        }
    }
}

/// A positive integer from variable `name` (the value is an id, safe to show).
fn number(name: &str, value: &str) -> anyhow::Result<u64> {
    match value.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => bail!("{name} must be a number (the id GitHub shows on the App's settings page), got {value:?}"),
    }
}

/// The App's RSA private key from PEM text or the path of a PEM file. Errors name the variable
/// (and the path), never the key text.
fn private_key(value: &str) -> anyhow::Result<EncodingKey> {
    let pem = if value.contains("-----BEGIN") {
        // A PEM pasted into one line with literal `\n`s (as some secret stores keep it).
        value.replace("\\n", "\n")
    } else {
        let path = value.trim();
        std::fs::read_to_string(path).with_context(|| {
            format!("{APP_KEY_VAR}: cannot read the private key file {path:?} (the value is neither PEM text nor a readable file)")
        })?
    };
    EncodingKey::from_rsa_pem(pem.trim().as_bytes()).map_err(|e| {
        anyhow::anyhow!(
            "{APP_KEY_VAR} is not an RSA private key in PEM form ({e}): use the .pem file GitHub \
             generated for the App, or its text"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn err(pairs: &[(&str, &str)]) -> String {
        format!("{:#}", Credentials::from_vars(vars(pairs)).unwrap_err())
    }

    #[test]
    fn github_token_wins_over_gh_token_and_empty_values_are_unset() {
        let creds = Credentials::from_vars(vars(&[("GITHUB_TOKEN", " "), ("GH_TOKEN", "t2")]));
        assert!(matches!(creds.unwrap(), Some(Credentials::Token(t)) if t == "t2"));
        assert!(Credentials::from_vars(vars(&[])).unwrap().is_none());
    }

    #[test]
    fn an_app_id_that_is_not_a_number_is_named() {
        let e = err(&[(APP_ID_VAR, "my-app"), (APP_KEY_VAR, "/nonexistent.pem")]);
        assert!(
            e.contains(APP_ID_VAR) && e.contains("must be a number"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_key_file_is_named_with_its_path() {
        let e = err(&[(APP_ID_VAR, "12"), (APP_KEY_VAR, "/nonexistent/app.pem")]);
        assert!(
            e.contains(APP_KEY_VAR) && e.contains("/nonexistent/app.pem"),
            "{e}"
        );
    }

    #[test]
    fn a_malformed_key_is_named_without_quoting_it() {
        let secret = "-----BEGIN RSA PRIVATE KEY-----\nnot-really-a-key-SECRET\n-----END RSA PRIVATE KEY-----";
        let e = err(&[(APP_ID_VAR, "12"), (APP_KEY_VAR, secret)]);
        assert!(
            e.contains(APP_KEY_VAR) && e.contains("not an RSA private key"),
            "{e}"
        );
        assert!(!e.contains("SECRET"), "the key text never appears: {e}");
    }

    #[test]
    fn half_an_app_configuration_is_an_error() {
        assert!(err(&[(APP_ID_VAR, "12")]).contains(APP_KEY_VAR));
        assert!(err(&[(APP_KEY_VAR, "x")]).contains(APP_ID_VAR));
        assert!(err(&[(INSTALLATION_ID_VAR, "7"), ("GITHUB_TOKEN", "t")]).contains(APP_ID_VAR));
    }

    #[test]
    fn credentials_debug_shows_no_secret() {
        let creds = Credentials::Token("s3cret".into());
        assert!(!format!("{creds:?}").contains("s3cret"));
    }
}
