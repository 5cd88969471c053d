//! Secrets never leave the process: the real binary runs every kind of command (claim, run,
//! stage, release, observe, reconcile, status in all its forms, cancel, command) with a
//! distinctive token, and then as a GitHub App with a private key given as PEM text, with
//! `RUST_LOG=debug`, GitHub failing requests (502, 429) and refusing credentials (401). Then
//! everything written is scanned for the secrets: stdout and stderr of every process, every
//! issue body and comment the emulator holds, every file in the state folders (Run logs
//! included), the step summary and the HTML page. It does not test what GitHub itself logs.

use crate::harness;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use github_emulator::{Faults, Permission, SimApp};
use harness::*;
use support::keys::{key_pair, KeyPair};

const TOKEN: &str = "ghp_Zq7sEcReT0kEn4tHiRdShIfT9xW2vB6nM1kL";
const WRONG_TOKEN: &str = "ghp_Wr0nGt0KeN8pQ3rS5tU7vW9xY1zA2bC4dE";
const SECRET_LOGIN: &str = "secret-bot";
const APP_ID: u64 = 737_373;

/// Everything the tool wrote that a person or GitHub could read, by where it was found.
#[derive(Default)]
struct Written {
    texts: Vec<(String, String)>,
}

impl Written {
    fn output(&mut self, what: &str, out: &Output) {
        self.texts.push((format!("{what} stdout"), stdout(out)));
        self.texts.push((format!("{what} stderr"), stderr(out)));
    }

    fn files(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                self.files(&path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                self.texts.push((path.display().to_string(), text));
            }
        }
    }

    fn github(&mut self, world: &World) {
        for n in 1..500 {
            let Some(issue) = world.sim.issue(n) else {
                break;
            };
            self.texts.push((format!("issue #{n} body"), issue.body));
            for c in world.sim.comments(n) {
                self.texts.push((format!("comment {}", c.id), c.body));
            }
        }
    }

    /// Then: none of `secrets` appears anywhere; `what` says which secret it was.
    fn assert_free_of(&self, secrets: &[(&str, String)]) {
        for (where_, text) in &self.texts {
            for (what, secret) in secrets {
                assert!(
                    !text.contains(secret.as_str()),
                    "{what} found in {where_}:\n{text}"
                );
            }
        }
    }

    /// How many bytes were scanned (so a scan of nothing shows).
    fn bytes(&self) -> usize {
        self.texts.iter().map(|(_, t)| t.len()).sum()
    }
}

/// The secrets a private key's PEM holds: each line of its base64 body.
fn key_secrets(keys: &KeyPair) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = keys
        .private_pem
        .lines()
        .filter(|l| !l.starts_with("-----") && l.len() >= 40)
        .map(|l| ("a line of the App's private key", l.to_string()))
        .collect();
    out.push(("a PEM private key header", "PRIVATE KEY-----".into()));
    out.push(("an installation token", "ghs_".into()));
    out.push(("a JWT the App signs", jwt_header(keys)));
    out
}

/// The first part of every JWT the product signs for an App (its header, `{"typ":"JWT",
/// "alg":"RS256"}` as base64url), with the dot after it: made by the product's own signer, so
/// the needle is what a leaked JWT would begin with, whatever the header's field order.
fn jwt_header(keys: &KeyPair) -> String {
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(keys.private_pem.as_bytes()).unwrap();
    let jwt = thirdshift_reconciler::github::app_jwt(APP_ID, &key, 1_700_000_000).unwrap();
    let header = jwt.split('.').next().unwrap();
    assert!(header.starts_with("eyJ"), "{jwt}");
    format!("{header}.")
}

/// GitHub failing a fifth of the requests (502, half of failed writes applied) and 5% with a
/// secondary limit (half 429, half 403).
fn flaky() -> Faults {
    Faults {
        server_error_rate: 0.2,
        applied_before_error: 0.5,
        rate_limited_rate: 0.05,
        secondary_as_403: 0.5,
        ..Faults::default()
    }
}

struct Setup {
    summary: PathBuf,
}

impl Setup {
    fn new(world: &World) -> Setup {
        Setup {
            summary: world.dir.path().join("step-summary.md"),
        }
    }

    /// The binary as `host` at debug level, with the step summary set, no token.
    fn cli(&self, world: &World, host: &str) -> tokio::process::Command {
        let mut cmd = world.cli(host);
        cmd.env_remove("GITHUB_TOKEN")
            .env("RUST_LOG", "debug")
            .env("GITHUB_STEP_SUMMARY", &self.summary);
        cmd
    }
}

async fn output(mut cmd: tokio::process::Command, args: &[&str]) -> Output {
    cmd.args(args).output().await.expect("binary runs")
}

/// Kills what is left of Runs started with the state folder `state` (their commands carry it as
/// `THIRDSHIFT_STATE_DIR`): a command whose cancel the injected faults refused still runs.
fn kill_left_over(state: &Path) {
    let wanted = format!("THIRDSHIFT_STATE_DIR={}", state.display());
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes()) {
            // SAFETY: kill(2) of a process this test's Run started (its state folder is ours).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// A `/thirdshift status` comment by a writer and its `issue_comment` event file.
fn command_event(world: &World, issue: u64) -> PathBuf {
    world
        .sim
        .add_user("writer", "writer-token", Permission::Write);
    let id = world.sim.add_comment(issue, "writer", "/thirdshift status");
    let payload = serde_json::json!({
        "action": "created",
        "issue": {"number": issue},
        "comment": {"id": id, "body": "/thirdshift status",
                    "html_url": format!("https://github.com/acme/widgets/issues/{issue}"),
                    "user": {"login": "writer", "type": "User"}},
    });
    let path = world.dir.path().join(format!("event-{id}.json"));
    std::fs::write(&path, payload.to_string()).unwrap();
    path
}

/// The faults GitHub answered with so far, from the emulator's log: `(502s, 429s)`.
fn faults_seen(world: &World) -> (usize, usize) {
    let statuses: Vec<u16> = world.sim.requests().iter().map(|r| r.status).collect();
    let count = |s: u16| statuses.iter().filter(|&&x| x == s).count();
    (count(502), count(429))
}

/// Runs every command once as `cli` makes it; returns the outputs by name.
async fn every_command(
    world: &World,
    cli: &dyn Fn(&str) -> tokio::process::Command,
    html: &Path,
) -> Vec<(String, Output)> {
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    let a = world.ready_issue("claimed and released");
    let b = world.ready_issue("run with a stage");
    let c = world.ready_issue("cancelled");
    let mut outs = Vec::new();
    let claim = output(cli("h1"), &["claim", "--issue", &a.to_string()]).await;
    assert_eq!(claim.status.code(), Some(0), "claim: {}", stderr(&claim));
    let claim_id = stdout(&claim);
    outs.push(("claim".to_string(), claim));
    // (its second stage comes 12 s later: with App tokens living 20 s, the Run renews its token
    // in between, renewed when less than half its life is left)
    let script = format!(
        "'{bin}' stage working --log http://logs/x && sleep 12 && '{bin}' stage checking && echo done"
    );
    let b = b.to_string();
    let run = ["run", "--issue", &b, "--", "sh", "-c", &script];
    outs.push(("run".into(), output(cli("h1"), &run).await));
    // Its output goes to files: whatever the faults let its cancel do, the test never waits on
    // a pipe that its command (in a session of its own) may hold open
    let (long_out, long_err) = (
        world.dir.path().join("long.out"),
        world.dir.path().join("long.err"),
    );
    let long = cli("h2")
        .args(["run", "--issue", &c.to_string(), "--", "sleep", "600"])
        .stdout(std::fs::File::create(&long_out).unwrap())
        .stderr(std::fs::File::create(&long_err).unwrap())
        .spawn()
        .expect("run starts");
    for (name, args) in [
        ("observe", vec!["observe", "--reconcile"]),
        ("cancel", vec!["cancel", "--issue", &c.to_string()]),
        ("observe h2", vec!["observe"]),
        ("reconcile", vec!["reconcile"]),
        ("status", vec!["status"]),
        ("status --json", vec!["status", "--json"]),
        (
            "status --html",
            vec!["status", "--html", html.to_str().unwrap()],
        ),
        ("status --issue", vec!["status", "--issue", &b]),
    ] {
        let host = if name == "observe h2" { "h2" } else { "h1" };
        outs.push((name.to_string(), output(cli(host), &args).await));
    }
    let event = command_event(world, c);
    let args = ["command", "--event", event.to_str().unwrap()];
    outs.push(("command".into(), output(cli("ci"), &args).await));
    let release = ["release", "--claim", &claim_id, "--outcome", "done"];
    outs.push(("release".into(), output(cli("h1"), &release).await));
    let mut long = long;
    let _ = long.start_kill();
    let status = long.wait().await.unwrap();
    kill_left_over(&world.state_dir("h2"));
    let long = Output {
        status,
        stdout: std::fs::read(&long_out).unwrap_or_default(),
        stderr: std::fs::read(&long_err).unwrap_or_default(),
    };
    outs.push(("long run".into(), long));
    outs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_never_appears_in_output_records_state_or_step_summary() {
    let world = World::new().await;
    world.sim.add_user(SECRET_LOGIN, TOKEN, Permission::Admin);
    let setup = Setup::new(&world);
    let html = world.dir.path().join("status.html");
    // Given GitHub failing requests with 502 and 429
    world.sim.set_faults(flaky());
    // When every command runs with a distinctive token at debug level
    let cli = |host: &str| {
        let mut cmd = setup.cli(&world, host);
        cmd.env("GITHUB_TOKEN", TOKEN);
        cmd
    };
    let outs = every_command(&world, &cli, &html).await;
    let (bad_gateways, limits) = faults_seen(&world);
    assert!(
        bad_gateways > 0 && limits > 0,
        "502s {bad_gateways}, 429s {limits}"
    );
    // And a command runs with a token GitHub refuses (401)
    let mut refused = setup.cli(&world, "h3");
    refused.env("GH_TOKEN", WRONG_TOKEN);
    let refused = output(refused, &["reconcile"]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("Bad credentials"),
        "{}",
        stderr(&refused)
    );
    // Then neither token appears in anything written
    let mut written = Written::default();
    for (name, out) in &outs {
        written.output(name, out);
    }
    written.output("refused", &refused);
    written.github(&world);
    written.files(world.dir.path());
    assert!(world
        .sim
        .comments(1)
        .iter()
        .any(|c| c.author == SECRET_LOGIN));
    assert!(std::fs::metadata(&setup.summary).is_ok(), "a step summary");
    assert!(written.bytes() > 10_000, "debug output was scanned");
    written.assert_free_of(&[
        ("the token", TOKEN.to_string()),
        ("the refused token", WRONG_TOKEN.to_string()),
        ("the token's tail", TOKEN[8..].to_string()),
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_private_key_and_its_tokens_never_appear_in_output_records_or_state() {
    let world = World::new().await;
    let keys = key_pair(world.dir.path(), "secret-app", true);
    let wrong = key_pair(world.dir.path(), "not-the-app", false);
    world
        .sim
        .add_app(SimApp {
            id: APP_ID,
            slug: "thirdshift-secret".into(),
            name: "Thirdshift Secret".into(),
            public_key_pem: keys.public_pem.clone(),
            permission: Permission::Write,
        })
        .expect("App installed");
    // Given installation tokens that expire every 20 s (renewed during commands) and GitHub
    // failing requests with 502 and 429
    world
        .sim
        .set_installation_token_lifetime(std::time::Duration::from_secs(20));
    world.sim.set_faults(flaky());
    let setup = Setup::new(&world);
    let html = world.dir.path().join("status.html");
    // When every command runs as the App, its key given as PEM text, at debug level
    let cli = |host: &str| {
        let mut cmd = setup.cli(&world, host);
        cmd.env("THIRDSHIFT_APP_ID", APP_ID.to_string())
            .env("THIRDSHIFT_APP_KEY", &keys.private_pem);
        cmd
    };
    let outs = every_command(&world, &cli, &html).await;
    let (bad_gateways, limits) = faults_seen(&world);
    assert!(
        bad_gateways > 0 && limits > 0,
        "502s {bad_gateways}, 429s {limits}"
    );
    // (the Run renewed its installation token between its two stages: the expiry happened)
    let run = &outs.iter().find(|(n, _)| n == "run").expect("the run").1;
    let renewed = stderr(run).matches("installation token renewed").count();
    assert!(renewed >= 2, "renewed {renewed} times: {}", stderr(run));
    // And a command runs with a key that is not the App's (GitHub answers 401)
    let mut refused = setup.cli(&world, "h3");
    refused
        .env("THIRDSHIFT_APP_ID", APP_ID.to_string())
        .env("THIRDSHIFT_APP_KEY", &wrong.private_pem);
    let refused = output(refused, &["reconcile"]).await;
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    // Then no line of either key, no installation token and no JWT appears anywhere
    let mut written = Written::default();
    for (name, out) in &outs {
        written.output(name, out);
    }
    written.output("refused", &refused);
    written.github(&world);
    for host in ["h1", "h2", "h3", "ci"] {
        written.files(&world.state_dir(host));
    }
    written.texts.push((
        "step summary".into(),
        std::fs::read_to_string(&setup.summary).unwrap_or_default(),
    ));
    written.texts.push((
        "status page".into(),
        std::fs::read_to_string(&html).unwrap_or_default(),
    ));
    assert!(written.bytes() > 10_000, "debug output was scanned");
    let mut secrets = key_secrets(&keys);
    secrets.extend(key_secrets(&wrong));
    written.assert_free_of(&secrets);
}

/// Paths with their permission bits.
type Modes = Vec<(PathBuf, u32)>;

/// Every folder under `root` (itself included) with its mode, and every file with its mode.
fn modes(root: &Path) -> (Modes, Modes) {
    use std::os::unix::fs::PermissionsExt as _;
    let (mut dirs, mut files) = (Vec::new(), Vec::new());
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        dirs.push((dir.clone(), mode));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                files.push((path, mode));
            }
        }
    }
    (dirs, files)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_cache_and_log_files_are_the_users_only_whatever_the_umask() {
    let world = World::new().await;
    let issue = world.ready_issue("private state");
    let config = config(&world, &[("h1", 2)]);
    // Given an umask that lets everyone read, and a state folder that exists open to everyone
    let state = world.state_dir("h1");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    // When a pickup starts a Run that reports a stage and ends, and the host passes
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    let script = format!("'{bin}' stage working --log /var/log/x");
    let mut cmd = pickup(&world, "h1", &config, &[], &script);
    // SAFETY: umask(2) in the child before exec is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = cmd.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    wait_until("the Run to end its Claim", STEP, || {
        world.ownership(issue).ended.len() == 1
    })
    .await;
    observe_reconcile(&world, "h1").await;
    // Then every folder in the state folder is 0700 and every file 0600: claims, cache, logs
    let (dirs, files) = modes(&state);
    let names: Vec<String> = files
        .iter()
        .map(|(p, _)| p.strip_prefix(&state).unwrap().display().to_string())
        .collect();
    for part in ["claims/", "cache/", "logs/"] {
        assert!(
            names.iter().any(|n| n.starts_with(part)),
            "{part} in {names:?}"
        );
    }
    assert!(dirs.iter().all(|(_, m)| *m == 0o700), "{dirs:?}");
    assert!(files.iter().all(|(_, m)| *m == 0o600), "{files:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_home_and_no_state_folder_a_command_says_so_and_writes_nothing() {
    let world = World::new().await;
    let issue = world.ready_issue("no home");
    // Given no HOME, no XDG_STATE_HOME and no --state-dir
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GITHUB_TOKEN", BOT_TOKEN)
        .args([
            "--repo",
            &world.sim.repo_full_name(),
            "--api-url",
            &world.server.url,
        ])
        .args(["claim", "--issue", &issue.to_string()])
        .output()
        .await
        .unwrap();
    // Then the claim is refused with a message naming the fix, and nothing is on the issue
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--state-dir"), "{}", stderr(&out));
    assert!(world.sim.comments(issue).is_empty());
}
