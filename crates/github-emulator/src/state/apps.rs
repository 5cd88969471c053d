//! GitHub Apps in the emulator's data model: each App has an id, a slug, a name and the RSA
//! public key its JWTs are checked with, and is installed on the emulated repository (one
//! installation per App). An installation token maps to the App's bot user `<slug>[bot]` and
//! expires after the configured lifetime, so a client's refresh can be tested in seconds.
//!
//! It checks no JWT (see `sim/jwt.rs`) and knows nothing of HTTP or JSON.

use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::DecodingKey;

use super::{now, State};
use crate::Permission;

/// A GitHub App to install on the emulated repository ([`crate::Sim::add_app`]).
#[derive(Clone, Debug)]
pub struct SimApp {
    pub id: u64,
    /// Its bot user is `<slug>[bot]`.
    pub slug: String,
    pub name: String,
    /// The PEM of the App's RSA public key (`-----BEGIN PUBLIC KEY-----`), which its JWTs are
    /// checked with.
    pub public_key_pem: String,
    /// The installation's (its bot user's) role on the repository.
    pub permission: Permission,
}

/// Installation ids start here, so they never look like user or object ids.
const FIRST_INSTALLATION_ID: u64 = 41_000_001;

#[derive(Clone)]
pub(crate) struct App {
    pub id: u64,
    pub slug: String,
    pub name: String,
    pub key: DecodingKey,
    pub installation_id: u64,
    /// What the installation may do on the repository (its bot user's role).
    pub permission: Permission,
    pub created_at: DateTime<Utc>,
}

impl App {
    /// The login of the App's bot user, e.g. `thirdshift[bot]`.
    pub(crate) fn bot_login(&self) -> String {
        format!("{}[bot]", self.slug)
    }
}

/// An installation token handed out by `POST /app/installations/{id}/access_tokens`.
#[derive(Clone, Debug)]
pub(crate) struct InstallationToken {
    pub bot_login: String,
    pub expires_at: DateTime<Utc>,
}

impl State {
    /// Registers an App installed on the repository and its bot user; returns the
    /// installation id. An App with the same id is replaced (its tokens stay valid).
    pub(crate) fn add_app(
        &mut self,
        id: u64,
        slug: &str,
        name: &str,
        key: DecodingKey,
        permission: Permission,
    ) -> u64 {
        self.apps.retain(|a| a.id != id);
        let installation_id = FIRST_INSTALLATION_ID + self.apps.len() as u64;
        let app = App {
            id,
            slug: slug.to_string(),
            name: name.to_string(),
            key,
            installation_id,
            permission,
            created_at: now(),
        };
        self.add_user(&app.bot_login(), None, permission, true);
        self.apps.push(app);
        installation_id
    }

    /// (id, slug, installation id) of every App, for printing.
    pub(crate) fn app_lines(&self) -> Vec<(u64, String, u64)> {
        self.apps
            .iter()
            .map(|a| (a.id, a.slug.clone(), a.installation_id))
            .collect()
    }

    pub(crate) fn app(&self, id: u64) -> Option<&App> {
        self.apps.iter().find(|a| a.id == id)
    }

    /// Makes a new installation token for `app`, valid for the configured lifetime.
    pub(crate) fn issue_installation_token(&mut self, app: &App) -> (String, DateTime<Utc>) {
        let token = format!("ghs_{}", random_hex());
        let expires_at = now() + self.installation_token_lifetime;
        self.installation_tokens.insert(
            token.clone(),
            InstallationToken {
                bot_login: app.bot_login(),
                expires_at,
            },
        );
        (token, expires_at)
    }

    /// The bot login of a live installation token: `None` when unknown, `Some(Err)` when
    /// expired.
    pub(crate) fn installation_login(&self, token: &str) -> Option<Result<String, ()>> {
        let t = self.installation_tokens.get(token)?;
        Some(if Utc::now() < t.expires_at {
            Ok(t.bot_login.clone())
        } else {
            Err(())
        })
    }
}

/// How long installation tokens live unless a test says otherwise (GitHub: one hour).
pub(crate) fn default_token_lifetime() -> Duration {
    Duration::hours(1)
}

/// 36 random hex digits, like the body of a GitHub installation token.
fn random_hex() -> String {
    let mut bytes = [0u8; 18];
    if getrandom::getrandom(&mut bytes).is_err() {
        // No OS randomness: a clock-derived value still makes tokens distinct.
        let nanos = Utc::now().timestamp_nanos_opt().unwrap_or_default() as u128;
        bytes[..16].copy_from_slice(&nanos.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
