//! The standalone emulator (`thirdshift-reconciler sim [--port P] [--seed FILE]`) and its seed
//! file, so the demo, scripts and people can run the real client against a known repository.
//!
//! Seed file (YAML; unknown keys are errors, reported with line and column):
//!
//! ```yaml
//! repo: acme/widgets          # owner/name (default acme/widgets)
//! rate_limit: 5000            # requests per token per hour (default 5000)
//! users:                      # who may call, and with which token
//!   - login: thirdshift-bot
//!     token: sim-admin-token
//!     permission: admin       # admin | maintain | write | triage | read | none
//!   - login: thirdshift[bot]
//!     token: sim-app-token
//!     permission: write
//!     bot: true               # type "Bot" instead of "User" (default false)
//! apps:                       # GitHub Apps installed on the repository
//!   - id: 12345
//!     slug: thirdshift          # its bot user is thirdshift[bot]
//!     name: Thirdshift          # default: the slug
//!     public_key: app.pub.pem   # the App's RSA public key (PEM), relative to this file
//!     permission: write         # the installation's role (default write)
//! installation_token_lifetime_secs: 3600   # default one hour, as on GitHub
//! issues:                     # opened in order: numbers 1, 2, 3...
//!   - title: Add a widget
//!     body: Please.           # default empty
//!     labels: [ready-for-agent]   # default none; created on first use
//!     author: alice           # any login; unknown ones become users without a token
//!     state: open             # open | closed (default open)
//! ```
//!
//! Without a seed file: repo acme/widgets, users `thirdshift-bot` (token `sim-admin-token`,
//! admin), `alice` (token `sim-read-token`, read), `bob` (token `sim-write-token`, write: may
//! give `/thirdshift` commands) and `carol` (token `sim-maintain-token`, maintain: may also
//! `recover --force`), and three open issues labelled `ready-for-agent`. The emulator keeps nothing on disk; every start is fresh.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Deserialize;

use super::{Permission, Sim, SimApp, SimConfig};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedFile {
    repo: Option<String>,
    rate_limit: Option<u32>,
    #[serde(default)]
    users: Vec<SeedUser>,
    #[serde(default)]
    apps: Vec<SeedApp>,
    installation_token_lifetime_secs: Option<u64>,
    #[serde(default)]
    issues: Vec<SeedIssue>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedApp {
    id: u64,
    slug: String,
    name: Option<String>,
    public_key: PathBuf,
    permission: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedUser {
    login: String,
    token: String,
    permission: String,
    #[serde(default)]
    bot: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedIssue {
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    labels: Vec<String>,
    author: String,
    state: Option<String>,
}

/// Builds an emulator from seed-file text; App key paths are relative to `dir`.
pub(crate) fn from_yaml(text: &str, dir: &Path) -> anyhow::Result<Sim> {
    let seed: SeedFile = yaml_serde::from_str(text)?;
    let mut config = SimConfig::default();
    if let Some(repo) = &seed.repo {
        let Some((owner, name)) = repo
            .split_once('/')
            .filter(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
        else {
            bail!("repo: expected OWNER/NAME, got {repo:?}");
        };
        config.owner = owner.to_string();
        config.name = name.to_string();
    }
    if let Some(limit) = seed.rate_limit {
        config.rate_limit = limit;
    }
    let sim = Sim::new(config);
    for u in &seed.users {
        let p = permission(&format!("users: {}", u.login), &u.permission)?;
        if u.bot {
            sim.add_bot(&u.login, &u.token, p);
        } else {
            sim.add_user(&u.login, &u.token, p);
        }
    }
    for app in &seed.apps {
        add_app(&sim, app, dir)?;
    }
    if let Some(secs) = seed.installation_token_lifetime_secs {
        sim.set_installation_token_lifetime(std::time::Duration::from_secs(secs));
    }
    for i in &seed.issues {
        let labels: Vec<&str> = i.labels.iter().map(String::as_str).collect();
        let n = sim.create_issue(&i.author, &i.title, &i.body, &labels);
        match i.state.as_deref() {
            None | Some("open") => {}
            Some("closed") => sim.close_issue(n),
            Some(other) => bail!(
                "issues: {:?}: state {other:?} is not open or closed",
                i.title
            ),
        }
    }
    Ok(sim)
}

fn permission(what: &str, word: &str) -> anyhow::Result<Permission> {
    Permission::parse(word).with_context(|| {
        format!(
            "{what}: permission {word:?} is not one of admin, maintain, write, triage, read, none"
        )
    })
}

/// Installs a seeded App, reading its public key relative to the seed file.
fn add_app(sim: &Sim, app: &SeedApp, dir: &Path) -> anyhow::Result<()> {
    let what = format!("apps: {}", app.slug);
    let role = permission(&what, app.permission.as_deref().unwrap_or("write"))?;
    let path = dir.join(&app.public_key);
    let public_key_pem = std::fs::read_to_string(&path)
        .with_context(|| format!("{what}: reading public key {}", path.display()))?;
    sim.add_app(SimApp {
        id: app.id,
        slug: app.slug.clone(),
        name: app.name.clone().unwrap_or_else(|| app.slug.clone()),
        public_key_pem,
        permission: role,
    })
    .with_context(|| format!("{what}: {}", path.display()))?;
    Ok(())
}

/// The emulator `sim` starts without a seed file.
pub(crate) fn default_sim() -> Sim {
    let sim = Sim::new(SimConfig::default());
    sim.add_user("thirdshift-bot", "sim-admin-token", Permission::Admin);
    sim.add_user("alice", "sim-read-token", Permission::Read);
    sim.add_user("bob", "sim-write-token", Permission::Write);
    sim.add_user("carol", "sim-maintain-token", Permission::Maintain);
    for title in ["Add a widget", "Fix the sprocket", "Document the gizmo"] {
        sim.create_issue(
            "alice",
            title,
            "Seeded by the emulator.",
            &["ready-for-agent"],
        );
    }
    sim
}

fn load(path: &Path) -> anyhow::Result<Sim> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading seed file {}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    from_yaml(&text, dir).with_context(|| format!("seed file {}", path.display()))
}

/// Serves an emulator on 127.0.0.1:`port` (0 picks one) until Ctrl-C, printing its URL,
/// repository and users with their tokens.
pub async fn run_cli(port: u16, seed: Option<PathBuf>) -> anyhow::Result<()> {
    let sim = match &seed {
        Some(path) => load(path)?,
        None => default_sim(),
    };
    let server = sim
        .serve(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .await
        .with_context(|| format!("binding 127.0.0.1:{port}"))?;
    println!("GitHub emulator listening on {}", server.url);
    println!("repository: {}", sim.repo_full_name());
    for (login, token, permission, bot) in sim.lock().user_lines() {
        let kind = if bot { " (bot)" } else { "" };
        println!("  user {login}{kind}: token {token}, {permission}");
    }
    for (id, slug, installation) in sim.lock().app_lines() {
        println!("  app {slug} (id {id}): installation {installation}, writes as {slug}[bot]");
    }
    println!(
        "try: GITHUB_API_URL={} GITHUB_TOKEN=<token>; Ctrl-C (or kill) stops",
        server.url
    );
    // Ctrl-C or a plain `kill` stops it with status 0, its port free once it has exited, so a
    // script can `kill $sim; wait $sim` and start another on the same port.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("waiting for SIGTERM")?;
    tokio::select! {
        stopped = tokio::signal::ctrl_c() => stopped.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    server.shutdown();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_file_builds_users_and_issues() {
        let sim = from_yaml(
            "repo: o/r\nrate_limit: 10\nusers:\n  - {login: \"b[bot]\", token: t, permission: write, bot: true}\nissues:\n  - {title: T, labels: [x], author: z, state: closed}\n",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(sim.repo_full_name(), "o/r");
        assert_eq!(sim.rate_remaining("t"), 10);
        let issue = sim.issue(1).unwrap();
        assert_eq!((issue.state.as_str(), issue.labels.len()), ("closed", 1));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let err = from_yaml("repo: o/r\ncolour: red\n", Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(err.contains("colour"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        assert!(from_yaml(
            "users: [{login: a, token: t, permission: boss}]",
            Path::new(".")
        )
        .is_err());
        assert!(from_yaml("repo: nope", Path::new(".")).is_err());
    }

    #[test]
    fn a_seeded_apps_missing_or_bad_public_key_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = "apps:\n  - {id: 7, slug: bot, public_key: app.pub.pem}\n";
        let err = format!("{:#}", from_yaml(yaml, dir.path()).unwrap_err());
        assert!(
            err.contains("apps: bot") && err.contains("app.pub.pem"),
            "{err}"
        );
        std::fs::write(dir.path().join("app.pub.pem"), "not a key").unwrap();
        let err = format!("{:#}", from_yaml(yaml, dir.path()).unwrap_err());
        assert!(err.contains("not an RSA public key"), "{err}");
    }

    #[test]
    fn default_seed_has_a_user_of_each_role_commands_need_and_three_ready_issues() {
        let sim = default_sim();
        assert_eq!(sim.repo_full_name(), "acme/widgets");
        let roles: Vec<(String, String)> = sim
            .lock()
            .user_lines()
            .into_iter()
            .map(|(login, _, permission, _)| (login, permission.to_string()))
            .collect();
        for (login, role) in [("alice", "read"), ("bob", "write"), ("carol", "maintain")] {
            assert!(
                roles.contains(&(login.to_string(), role.to_string())),
                "{roles:?}"
            );
        }
        assert!(sim
            .issue(3)
            .is_some_and(|i| i.labels == ["ready-for-agent"]));
        assert!(sim.issue(4).is_none());
    }

    #[tokio::test]
    async fn run_cli_reports_an_unreadable_seed_file() {
        let err = run_cli(0, Some(PathBuf::from("/nonexistent/seed.yml")))
            .await
            .unwrap_err();
        assert!(format!("{err:#}").contains("reading seed file"), "{err:#}");
    }
}
