//! The world the CLI tests run in: an in-process GitHub emulator served over real HTTP, a trusted
//! bot identity, a stranger, per-host state folders, and the real binary started as a child
//! process. Helpers read as the "given" and "then" of each test. Not used by unit tests.

mod action;
mod browser;
mod chaos;
mod fates;
mod gates;
mod pickup;
mod replay;
mod runs;
mod standins;
mod within;
pub use action::*;
pub use browser::*;
pub use chaos::*;
pub use fates::*;
pub use gates::*;
pub use pickup::*;
pub use runs::*;
pub use standins::*;
pub use within::*;

use std::path::PathBuf;
use std::process::Output;

use github_emulator::{Permission, Sim, SimConfig, SimServer};
use thirdshift_reconciler::protocol::record::{Decoded, Ownership, RawComment, Record, Trust};

pub const BOT: &str = "thirdshift-bot";
pub const BOT_TOKEN: &str = "bot-token";
pub const STRANGER: &str = "mallory";
pub const STRANGER_TOKEN: &str = "mallory-token";
pub const READY: &str = "ready-for-agent";
pub const IN_PROGRESS: &str = "in-progress";
pub const LABELS_ROUTE: &str = "/repos/{owner}/{repo}/issues/{issue_number}/labels";

/// An emulator with a trusted bot and a stranger, and a folder for hosts' state.
pub struct World {
    pub sim: Sim,
    pub server: SimServer,
    pub dir: tempfile::TempDir,
    /// Whether Runs started here leave their companion (`tests/it/companion.rs`); off elsewhere, so
    /// a test's own passes are the only actors it asserts on.
    pub companions: bool,
}

impl World {
    pub async fn new() -> World {
        World::with_config(SimConfig::default()).await
    }

    /// A World on an emulator configured as `config` (rate budget, fault seed).
    pub async fn with_config(config: SimConfig) -> World {
        let sim = Sim::new(config);
        sim.add_user(BOT, BOT_TOKEN, Permission::Admin);
        sim.add_user(STRANGER, STRANGER_TOKEN, Permission::Read);
        let server = sim
            .serve("127.0.0.1:0".parse().unwrap())
            .await
            .expect("emulator starts");
        World {
            sim,
            server,
            dir: tempfile::tempdir().expect("temp dir"),
            companions: false,
        }
    }

    /// A World whose Runs leave their companion, as Runs do outside tests.
    pub async fn with_companions() -> World {
        World {
            companions: true,
            ..World::new().await
        }
    }

    /// Given: an open issue labelled `ready-for-agent`.
    pub fn ready_issue(&self, title: &str) -> u64 {
        self.sim.create_issue(BOT, title, "do the thing", &[READY])
    }

    pub fn state_dir(&self, host: &str) -> PathBuf {
        self.dir.path().join(host)
    }

    /// The real binary, pointed at the emulator as `host`, with the bot's token.
    pub fn cli(&self, host: &str) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GITHUB_TOKEN", BOT_TOKEN)
            .env("THIRDSHIFT_RETRY_BASE_MS", "5")
            // 12 attempts: the fault tests fail up to 30% of requests, and 8 failures in a row
            // (0.3^8) happen a few times in a run of thousands of requests
            .env("THIRDSHIFT_RETRY_ATTEMPTS", "12")
            .env("RUST_LOG", "warn")
            .env(
                "THIRDSHIFT_COMPANION",
                if self.companions { "on" } else { "off" },
            )
            .arg("--repo")
            .arg(self.sim.repo_full_name())
            .arg("--api-url")
            .arg(&self.server.url)
            .arg("--host")
            .arg(host)
            .arg("--state-dir")
            .arg(self.state_dir(host))
            .kill_on_drop(true);
        cmd
    }

    /// [`World::cli`] as run on a machine named `host`: the binary runs in a UTS namespace of
    /// its own (`unshare --uts`, as root) whose system host name is `host`, so thirdshift's
    /// records naming that host name are this host's (`gethostname`, as thirdshift records it).
    /// Its process table, boot id and machine id stay this machine's.
    pub fn cli_on_machine(&self, host: &str) -> tokio::process::Command {
        let base = self.cli(host);
        let base = base.as_std();
        let mut cmd = tokio::process::Command::new("unshare");
        cmd.env_clear();
        for (key, value) in base.get_envs() {
            if let Some(value) = value {
                cmd.env(key, value);
            }
        }
        cmd.args(["--uts", "sh", "-c"])
            .arg("printf %s \"$0\" > /proc/sys/kernel/hostname && exec \"$@\"")
            .arg(host)
            .arg(base.get_program())
            .args(base.get_args())
            .kill_on_drop(true);
        cmd
    }

    /// Starts `n` concurrent `claim` processes on `issue`, hosts `host-0`..; returns
    /// (host, output) of each.
    pub async fn race_claims(&self, issue: u64, n: usize) -> Vec<(String, Output)> {
        let mut set = tokio::task::JoinSet::new();
        for i in 0..n {
            let host = format!("host-{i}");
            let child = self
                .cli(&host)
                .args(["claim", "--issue", &issue.to_string()])
                .output();
            set.spawn(async move { (host, child.await.expect("claim runs")) });
        }
        set.join_all().await
    }

    /// Runs the binary to its end with `args`.
    pub async fn exec(&self, host: &str, args: &[&str]) -> Output {
        self.cli(host)
            .args(args)
            .output()
            .await
            .expect("binary runs")
    }

    /// When: one `reconcile` pass on `host`, to exit 0.
    pub async fn reconcile_ok(&self, host: &str) -> Output {
        let out = self.exec(host, &["reconcile"]).await;
        assert_eq!(out.status.code(), Some(0), "reconcile: {}", stderr(&out));
        out
    }

    /// When: `reconcile` passes on `host` until one applies all its actions (exit 1 is a failed
    /// action, as under GitHub's 502s, which the next pass retries); at most five.
    pub async fn reconcile_until_applied(&self, host: &str) {
        for _ in 0..5 {
            let out = self.exec(host, &["reconcile"]).await;
            match out.status.code() {
                Some(0) => return,
                Some(1) => continue,
                _ => panic!("reconcile: {}", stderr(&out)),
            }
        }
        panic!("five reconcile passes all had failed actions");
    }

    pub fn labels(&self, issue: u64) -> Vec<String> {
        self.sim.issue(issue).expect("issue exists").labels
    }

    /// What the ownership rule reads from the issue's comments, trusting only the bot.
    pub fn ownership(&self, issue: u64) -> Ownership {
        self.ownership_trusting(issue, BOT)
    }

    /// What the ownership rule reads from the issue's comments, trusting only `login`.
    pub fn ownership_trusting(&self, issue: u64, login: &str) -> Ownership {
        let raw: Vec<RawComment> = self
            .sim
            .comments(issue)
            .into_iter()
            .map(|c| RawComment {
                id: c.id,
                author: c.author,
                body: c.body,
            })
            .collect();
        Ownership::of(issue, &raw, &Trust::new([login]))
    }

    /// Every record on the issue written by the bot, in comment order.
    /// The kinds of the bot's records on `issue`, in comment order.
    pub fn record_kinds(&self, issue: u64) -> Vec<thirdshift_reconciler::protocol::record::Kind> {
        self.records(issue).iter().map(Record::kind).collect()
    }

    pub fn records(&self, issue: u64) -> Vec<Record> {
        self.sim
            .comments(issue)
            .into_iter()
            .filter(|c| c.author == BOT)
            .filter_map(
                |c| match thirdshift_reconciler::protocol::record::decode(&c.body) {
                    Decoded::Record(r) => Some(r),
                    _ => None,
                },
            )
            .collect()
    }

    /// How many label writes (add or set) the issue received.
    pub fn label_posts(&self, issue: u64) -> usize {
        let path = format!("/issues/{issue}/labels");
        self.sim
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.route == LABELS_ROUTE && r.path.ends_with(&path))
            .count()
    }
}

/// Polls `done` every 20 ms until it holds; fails naming `what` once `limit` has passed. For
/// waits on what a step needs (a file written, a request held by the emulator), never for the
/// verdict a test asserts: a wait that runs out is a failure that says what never happened.
pub async fn wait_until(what: &str, limit: std::time::Duration, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {limit:?} for {what}; it never happened"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The time a wait on a step of a test may take before it fails: generous, since a loaded CI
/// machine is slow, and the wait ends as soon as the step is done.
pub const STEP: std::time::Duration = std::time::Duration::from_secs(30);

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
