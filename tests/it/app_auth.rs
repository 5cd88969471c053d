//! GitHub App authentication end to end against the emulator: the real binary with
//! `THIRDSHIFT_APP_ID` + `THIRDSHIFT_APP_KEY` gets an installation token and writes as the App's
//! bot, which is trusted as our own identity; a wrong key, an expired or too-long JWT, and a JWT
//! on a non-App endpoint are refused as GitHub refuses them; an installation token that expires
//! during a command is renewed before it does. RSA key pairs are made per test with the
//! `openssl` CLI (`support/keys.rs`: test keys only, in a temporary folder).

use crate::harness;
use crate::support;

use std::time::Duration;

use github_emulator::{Permission, SimApp};
use harness::*;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use support::keys::{key_pair, KeyPair};
use thirdshift_reconciler::github::{app_jwt, AppCredentials, Client, Credentials, Repo};

const APP_ID: u64 = 424_242;
const SLUG: &str = "thirdshift-test";
const BOT_LOGIN: &str = "thirdshift-test[bot]";
const TOKENS_ROUTE: &str = "/app/installations/{installation_id}/access_tokens";

/// Given: a World whose repository has the App installed with `keys`' public key.
async fn world_with_app(keys_name: &str) -> (World, KeyPair) {
    let world = World::new().await;
    let keys = key_pair(world.dir.path(), keys_name, true);
    world
        .sim
        .add_app(SimApp {
            id: APP_ID,
            slug: SLUG.to_string(),
            name: "Thirdshift Test".to_string(),
            public_key_pem: keys.public_pem.clone(),
            permission: Permission::Write,
        })
        .expect("the App's public key is accepted");
    (world, keys)
}

/// The binary as `host`, authenticated as the App with `key` (a path or PEM text). The bot's
/// GITHUB_TOKEN stays set: the App must win over it.
fn app_cli(world: &World, host: &str, key: &str) -> tokio::process::Command {
    let mut cmd = world.cli(host);
    cmd.env("THIRDSHIFT_APP_ID", APP_ID.to_string())
        .env("THIRDSHIFT_APP_KEY", key);
    cmd
}

fn no_secret_in(text: &str, keys: &KeyPair) {
    let key_line = keys.private_pem.lines().nth(1).unwrap();
    assert!(!text.contains(key_line), "key text in output: {text}");
    assert!(
        !text.contains("ghs_"),
        "an installation token in output: {text}"
    );
    assert!(!text.contains("eyJ"), "a JWT in output: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_made_as_the_app_is_written_by_its_bot_wins_and_is_recognised_as_ours() {
    // Given the App installed on the repository and a Ready issue
    let (world, keys) = world_with_app("good").await;
    let issue = world.ready_issue("app work");
    // When a host claims it with the App's id and private key file (GITHUB_TOKEN also set)
    let out = app_cli(&world, "h1", keys.private_path.to_str().unwrap())
        .args(["claim", "--issue", &issue.to_string()])
        .output()
        .await
        .unwrap();
    // Then it won, and the claim comment is the App bot's
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let claim_id = stdout(&out);
    let comments = world.sim.comments(issue);
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].author, BOT_LOGIN);
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
    no_secret_in(&stderr(&out), &keys);
    // And the bot's claim owns the issue for a reader trusting the bot
    let owner = world.ownership_trusting(issue, BOT_LOGIN).owner;
    assert_eq!(owner.map(|o| o.record.claim_id), Some(claim_id.clone()));
    // And one token exchange was made, for this repository only and the permissions the tool
    // uses; no request used GET /user
    assert_eq!(world.sim.count("POST", TOKENS_ROUTE), 1);
    assert_eq!(world.sim.count("GET", "/user"), 0);
    let name = world.sim.repo_full_name();
    let name = name.split('/').nth(1).unwrap();
    let asked = &world.sim.token_requests()[0];
    assert_eq!(asked["repositories"], serde_json::json!([name]), "{asked}");
    assert_eq!(
        asked["permissions"],
        serde_json::json!({"issues": "write", "contents": "read", "pull_requests": "read",
            "metadata": "read"})
    );

    // When the same App, its key given as PEM text, releases the Claim
    let out = app_cli(&world, "h1", &keys.private_pem)
        .args(["release", "--claim", &claim_id, "--outcome", "handed-back"])
        .output()
        .await
        .unwrap();
    // Then its own claim is recognised (our identity is trusted) and ended by the bot
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = world.sim.comments(issue);
    assert_eq!(after.len(), 2, "an end record was added");
    assert_eq!(after[1].author, BOT_LOGIN);
    assert!(!world.labels(issue).contains(&IN_PROGRESS.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_that_is_not_the_apps_is_refused_naming_the_problem_and_no_secret() {
    // Given the App installed, and a host holding some other private key
    let (world, keys) = world_with_app("good").await;
    let wrong = key_pair(world.dir.path(), "wrong", false);
    let issue = world.ready_issue("x");
    // When it claims as the App
    let out = app_cli(&world, "h1", wrong.private_path.to_str().unwrap())
        .args(["claim", "--issue", &issue.to_string()])
        .output()
        .await
        .unwrap();
    // Then it fails with GitHub's reason and the variables to check, and wrote nothing
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("A JSON web token could not be decoded"),
        "{err}"
    );
    assert!(err.contains("THIRDSHIFT_APP_KEY"), "{err}");
    no_secret_in(&err, &wrong);
    no_secret_in(&err, &keys);
    assert!(world.sim.comments(issue).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_key_or_app_id_is_named_before_anything_is_sent() {
    let (world, _keys) = world_with_app("good").await;
    let secret = "-----BEGIN RSA PRIVATE KEY-----\nTOPSECRETNOTAKEY\n-----END RSA PRIVATE KEY-----";
    // When the key is not a key
    let out = app_cli(&world, "h1", secret)
        .args(["claim", "--issue", "1"])
        .output()
        .await
        .unwrap();
    // Then the variable is named, never the text
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("THIRDSHIFT_APP_KEY is not an RSA private key"),
        "{err}"
    );
    assert!(!err.contains("TOPSECRET"), "{err}");
    // When the App id is a name
    let out = app_cli(&world, "h1", "/nonexistent/key.pem")
        .env("THIRDSHIFT_APP_ID", "thirdshift")
        .args(["claim", "--issue", "1"])
        .output()
        .await
        .unwrap();
    let err = stderr(&out);
    assert!(err.contains("THIRDSHIFT_APP_ID must be a number"), "{err}");
    // And nothing reached the emulator
    assert!(world.sim.requests().is_empty());
}

/// `GET path` on the emulator with `Authorization: Bearer <credential>`: (status, body).
async fn get(world: &World, path: &str, credential: &str) -> (u16, Value) {
    let octo = octocrab::Octocrab::builder()
        .base_uri(world.server.url.as_str())
        .unwrap()
        .personal_token(credential.to_string())
        .build()
        .unwrap();
    let resp = octo._get(path).await.expect("request sent");
    let status = resp.status().as_u16();
    let body = octo.body_to_string(resp).await.unwrap();
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_emulator_refuses_expired_too_long_and_misplaced_jwts_as_github_does() {
    let (world, keys) = world_with_app("good").await;
    let key = EncodingKey::from_rsa_pem(keys.private_pem.as_bytes()).unwrap();
    let app_url = "/app";
    // Given a JWT signed now, Then GET /app answers with the App
    let good = app_jwt(APP_ID, &key, now()).unwrap();
    let (status, body) = get(&world, app_url, &good).await;
    assert_eq!((status, body["slug"].as_str()), (200, Some(SLUG)));
    // Given a JWT signed 11 minutes ago (expired 2 minutes ago), Then it is refused
    let expired = app_jwt(APP_ID, &key, now() - 660).unwrap();
    let (status, body) = get(&world, app_url, &expired).await;
    assert_eq!(status, 401);
    assert_eq!(
        body["message"],
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
    );
    // Given a JWT meant to live 20 minutes, Then it is refused
    let claims = json!({ "iat": now() - 60, "exp": now() + 1140, "iss": APP_ID });
    let long = jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &key).unwrap();
    let (status, body) = get(&world, app_url, &long).await;
    assert_eq!(status, 401);
    assert_eq!(
        body["message"],
        "'Expiration time' claim ('exp') is too far in the future"
    );
    // Given a good JWT on a repository endpoint, Then it is refused
    let issue = world.ready_issue("x");
    let issue_url = format!("/repos/acme/widgets/issues/{issue}");
    let (status, _) = get(&world, &issue_url, &good).await;
    assert_eq!(status, 403);
    // Given a user token on an App endpoint, Then it is not a JWT
    let (status, body) = get(&world, app_url, BOT_TOKEN).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some("A JSON web token could not be decoded"))
    );
}

fn app_client(world: &World, keys: &KeyPair) -> Client {
    let creds = Credentials::App(AppCredentials {
        app_id: APP_ID,
        key: EncodingKey::from_rsa_pem(keys.private_pem.as_bytes()).unwrap(),
        installation_id: None,
    });
    let repo: Repo = world.sim.repo_full_name().parse().unwrap();
    Client::with_credentials(&world.server.url, creds, repo).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_of_a_list_carries_the_installation_token() {
    // Given an issue with 250 comments and a client authenticated as the App
    let (world, keys) = world_with_app("good").await;
    let issue = world.ready_issue("long");
    for i in 0..250 {
        world.sim.add_comment(issue, BOT, &format!("c{i}"));
    }
    // When it lists them
    let comments = app_client(&world, &keys)
        .list_issue_comments(issue)
        .await
        .unwrap();
    // Then all three pages were read as the App's bot, none anonymously
    assert_eq!(comments.len(), 250);
    let pages: Vec<_> = world
        .sim
        .requests()
        .into_iter()
        .filter(|r| r.route == "/repos/{owner}/{repo}/issues/{issue_number}/comments")
        .collect();
    assert_eq!(pages.len(), 3);
    assert!(
        pages.iter().all(|r| r.login.as_deref() == Some(BOT_LOGIN)),
        "{pages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_outliving_its_installation_token_renews_it_before_it_expires() {
    // Given installation tokens that live 4 seconds
    let (world, keys) = world_with_app("good").await;
    world
        .sim
        .set_installation_token_lifetime(Duration::from_secs(4));
    let issue = world.ready_issue("long run");
    // When a Run as the App takes the issue and its command runs for 7 seconds
    let out = app_cli(&world, "h1", keys.private_path.to_str().unwrap())
        .args(["run", "--issue", &issue.to_string(), "--", "sleep", "7"])
        .output()
        .await
        .unwrap();
    // Then the Run ended its Claim as done, as the bot
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let comments = world.sim.comments(issue);
    assert!(comments.len() >= 2, "claim and end record");
    assert!(comments.iter().all(|c| c.author == BOT_LOGIN));
    assert!(!world.labels(issue).contains(&IN_PROGRESS.to_string()));
    // And the token was renewed ahead of time: more than one exchange, no request refused
    assert!(world.sim.count("POST", TOKENS_ROUTE) >= 2);
    let refused: Vec<_> = world
        .sim
        .requests()
        .into_iter()
        .filter(|r| r.status == 401)
        .collect();
    assert!(
        refused.is_empty(),
        "requests sent with an expired token: {refused:?}"
    );
    no_secret_in(&stderr(&out), &keys);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_declared_in_a_seed_file_can_claim_on_the_standalone_emulator() {
    use tokio::io::AsyncBufReadExt;
    // Given a seed file declaring the App (its public key beside the file) and a Ready issue
    let dir = tempfile::tempdir().unwrap();
    let keys = key_pair(dir.path(), "seeded", true);
    std::fs::write(dir.path().join("app.pub.pem"), &keys.public_pem).unwrap();
    let seed = format!(
        "apps:\n  - {{id: {APP_ID}, slug: {SLUG}, public_key: app.pub.pem}}\n\
         issues:\n  - {{title: T, labels: [{READY}], author: alice}}\n"
    );
    std::fs::write(dir.path().join("seed.yml"), seed).unwrap();
    // When `sim --seed` runs and a host claims issue 1 as the App
    let mut sim = tokio::process::Command::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"))
        .args(["sim", "--port", "0", "--seed"])
        .arg(dir.path().join("seed.yml"))
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(sim.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("sim prints its URL");
        if let Some(url) = line.strip_prefix("GitHub emulator listening on ") {
            break url.to_string();
        }
        printed.push(line);
    };
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("THIRDSHIFT_APP_ID", APP_ID.to_string())
        .env("THIRDSHIFT_APP_KEY", &keys.private_path)
        .args([
            "--repo",
            "acme/widgets",
            "--api-url",
            &url,
            "--host",
            "h1",
            "--state-dir",
        ])
        .arg(dir.path().join("state"))
        .args(["claim", "--issue", "1"])
        .output()
        .await
        .unwrap();
    // Then the claim is won
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // And sim named the App it serves
    while let Ok(Some(line)) = lines.next_line().await {
        printed.push(line.clone());
        if line.starts_with("try:") {
            break;
        }
    }
    assert!(
        printed
            .iter()
            .any(|l| l.contains(&format!("app {SLUG} (id {APP_ID})"))),
        "{printed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_command_gets_none_of_the_apps_credentials_and_its_stage_is_still_recorded() {
    // Given the App installed, a Ready issue, and a host holding only the App's id and key
    let (world, keys) = world_with_app("good").await;
    let issue = world.ready_issue("app run");
    let env_file = world.dir.path().join("cmd-env");
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    let script = format!(
        "env > '{}' && '{bin}' stage implementing",
        env_file.display()
    );
    // When a Run as the App runs a command that reports a stage
    let out = app_cli(&world, "h1", keys.private_path.to_str().unwrap())
        .env_remove("GITHUB_TOKEN")
        .args([
            "run",
            "--issue",
            &issue.to_string(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .output()
        .await
        .unwrap();
    // Then the Run ended done, with the stage recorded in its claim by the App's bot
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let own = world.ownership_trusting(issue, BOT_LOGIN);
    let (claim, end) = own.ended.first().expect("the Claim ended");
    assert_eq!(claim.record.stage, "implementing");
    assert_eq!(end.record.outcome.as_str(), "done");
    // And the command's environment held neither the App's id, its key, nor a token
    let env = std::fs::read_to_string(&env_file).unwrap();
    for var in [
        "THIRDSHIFT_APP_ID=",
        "THIRDSHIFT_APP_KEY=",
        "GITHUB_TOKEN=",
        "GH_TOKEN=",
    ] {
        let found = env.lines().any(|l| l.starts_with(var));
        assert!(!found, "{var} in the command's environment");
    }
    no_secret_in(&env, &keys);
}

/// Who the next test runs its Run as: `nobody` when the tests run as root (root reads any
/// process's memory), else the current user, already unprivileged.
fn unprivileged() -> (u32, u32) {
    // SAFETY: getuid/getgid only read this process's ids.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if uid == 0 {
        (65_534, 65_534)
    } else {
        (uid, gid)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_running_as_its_runs_user_cannot_read_the_runs_key_from_any_of_our_processes() {
    use std::os::unix::fs::{chown, PermissionsExt as _};
    let (world, keys) = world_with_app("guarded").await;
    let issue = world.ready_issue("guarded run");
    let (uid, gid) = unprivileged();
    // Given a folder that user may use, with a copy of the binary it may run
    let dir = tempfile::Builder::new()
        .prefix("thirdshift-unprivileged")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = dir.path().join("thirdshift-reconciler");
    std::fs::copy(env!("CARGO_BIN_EXE_thirdshift-reconciler"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    chown(&state, Some(uid), Some(gid)).unwrap();
    // And a Run as that user, holding the App's key as PEM text, whose command (as that user
    // too) tries to read every environment and command line in /proc, its Run's first
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    chown(&out, Some(uid), Some(gid)).unwrap();
    let script = format!(
        "run=${{THIRDSHIFT_RUN%%:*}}; \
         if cat /proc/$run/environ >/dev/null 2>&1; then echo readable; else echo refused; fi \
           > '{o}/run-environ'; \
         for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat \"$f\" 2>/dev/null; echo; \
           done | tr '\\0' '\\n' > '{o}/seen'; \
         '{b}' stage working",
        o = out.display(),
        b = bin.display()
    );
    let mut run = tokio::process::Command::new(&bin);
    run.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("THIRDSHIFT_APP_ID", APP_ID.to_string())
        .env("THIRDSHIFT_APP_KEY", &keys.private_pem)
        .env("THIRDSHIFT_RETRY_BASE_MS", "5")
        .args([
            "--repo",
            &world.sim.repo_full_name(),
            "--api-url",
            &world.server.url,
        ])
        .args(["--host", "h1", "--state-dir", state.to_str().unwrap()])
        .args([
            "run",
            "--issue",
            &issue.to_string(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .uid(uid)
        .gid(gid);
    let run = output_once_written(&mut run).await;
    // Then the Run still worked: its stage is recorded and it ended done
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let own = world.ownership_trusting(issue, BOT_LOGIN);
    let (claim, end) = own.ended.first().expect("the Claim ended");
    assert_eq!(claim.record.stage, "working");
    assert_eq!(end.record.outcome.as_str(), "done");
    // And its command could not read the Run's environment, nor find the key anywhere in /proc
    let read = std::fs::read_to_string(out.join("run-environ")).unwrap();
    assert_eq!(read.trim(), "refused");
    let seen = std::fs::read_to_string(out.join("seen")).unwrap();
    assert!(
        seen.contains("PATH="),
        "the command read some environments: {seen}"
    );
    no_secret_in(&seen, &keys);
    assert!(
        !seen.contains("THIRDSHIFT_APP_KEY"),
        "the key's variable was readable"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_the_apps_bot_wrote_are_its_own_when_a_cold_pass_reads_them_through_graphql() {
    // Given two Claims made as the App (its bot is `slug[bot]` on REST, `slug` on GraphQL)
    let (world, keys) = world_with_app("good").await;
    let key = keys.private_path.to_str().unwrap();
    for k in 0..2 {
        let issue = world.ready_issue(&format!("app work {k}"));
        let out = app_cli(&world, "h1", key)
            .args(["claim", "--issue", &issue.to_string()])
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // When a reconcile with no cache reads them, in one GraphQL request
    world.sim.clear_requests();
    let out = app_cli(&world, "ci", key)
        .args(["reconcile"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(world.sim.count("POST", "/graphql"), 1);
    // Then both are the App's own Claims: neither is a stranger's record, nor left unowned
    let (said, warned) = (stdout(&out), stderr(&out));
    assert!(!warned.contains("untrusted"), "{warned}");
    assert!(!said.contains("unowned"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_next_page_on_another_origin_gets_no_app_token() {
    // Given the App installed, its passes authenticated as the App (see the shared test)
    let (world, keys) = world_with_app("good").await;
    let key = keys.private_path.to_str().unwrap().to_string();
    crate::credentials::a_poisoned_next_page_is_never_asked(&world, || {
        let mut cmd = app_cli(&world, "h1", &key);
        cmd.env_remove("GITHUB_TOKEN");
        cmd
    })
    .await;
}

/// Runs `cmd`, retrying while the kernel says its program is busy (ETXTBSY): a process another
/// test forked while the copy of the binary was still open for writing holds that descriptor
/// until it execs, for a few milliseconds.
async fn output_once_written(cmd: &mut tokio::process::Command) -> std::process::Output {
    for _ in 0..100 {
        match cmd.output().await {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            other => return other.expect("the copied binary runs"),
        }
    }
    panic!("the copied binary stayed busy for two seconds")
}
