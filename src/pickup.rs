//! `pickup [--max N] -- CMD...`: fill this host's free capacity with Ready issues, one detached
//! Run each, then exit. Free capacity is the host's capacity minus its live Claims (local records
//! across every repository, checked alive in the process table); when nothing is free, pickup says
//! so and sends no request to GitHub at all. Otherwise it lists the open Ready issues, keeps those
//! a Run may take (no `in-progress`, hand-off or configured skip label, no active claim), in the
//! configured order, and starts `run --issue N -- CMD...` for each until the free slots are filled,
//! waiting only until that Run has won or lost its Claim (a lost race moves on to the next issue).
//!
//! Runs are started in their own session, with no stdin, their output appended to a log in the
//! state folder and without `RUNNER_TRACKING_ID`, so neither the end of a CI job nor the end of
//! this process stops them. Pickup holds no Claim itself: `run` takes it through the claim
//! protocol. Two pickups on one host take turns (a lock file in the state folder), so they cannot
//! both count the same free slot.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use tracing::Instrument as _;

use crate::cli::Globals;
use crate::config::{Config, PickupOrder};
use crate::context::Ctx;
use crate::exit::{ERROR, OK};
use crate::github::Issue;
use crate::host::capacity::{capacity, capacity_source, live_claims};
use crate::host::{HostIdentity, LocalStatus, ProcessTable, StateDir};

/// How long a started Run may take to win or lose its Claim before pickup stops waiting for it
/// (it then counts as started: it may still win).
const CLAIM_WAIT: Duration = Duration::from_secs(60);
/// How often the state folder and the Run are looked at while waiting.
const POLL: Duration = Duration::from_millis(50);
/// A pass stops after this many Runs failed before claiming: something is broken for all.
const MAX_FAILURES: usize = 3;

/// This host's slots at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slots {
    pub host: String,
    pub capacity: u32,
    /// Where the capacity came from (`configured`, or derived).
    pub source: &'static str,
    /// Live Claims of this host, across every repository.
    pub in_use: u32,
}

impl Slots {
    /// Reads this host's capacity and live Claims; no GitHub.
    pub fn read(config: &Config, host: &HostIdentity, state: &StateDir) -> anyhow::Result<Slots> {
        let table = ProcessTable::read().context("reading this host's process table")?;
        let boot = crate::host::identity::boot_id().unwrap_or_default();
        let live = live_claims(state, &table, &boot);
        Ok(Slots {
            host: host.host.clone(),
            capacity: capacity(config, &host.host),
            source: capacity_source(config, &host.host),
            in_use: u32::try_from(live.len()).unwrap_or(u32::MAX),
        })
    }

    /// Runs this pass may start: the free slots, at most `max`.
    pub fn free(&self, max: Option<u32>) -> u32 {
        let free = self.capacity.saturating_sub(self.in_use);
        max.map_or(free, |m| free.min(m))
    }

    /// Why nothing may be started now, if nothing may.
    pub fn skip_reason(&self, max: Option<u32>) -> Option<String> {
        if self.free(max) > 0 {
            return None;
        }
        if max == Some(0) {
            return Some(format!("host {}: --max 0; pickup skipped", self.host));
        }
        Some(format!(
            "host {} is at capacity ({} of {} slots in use, capacity {}); pickup skipped",
            self.host, self.in_use, self.capacity, self.source
        ))
    }
}

/// What to start for each issue taken: this binary's `run` with CMD.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The binary that runs `run` (this one).
    pub exe: PathBuf,
    /// The config file the Runs read, when one was given.
    pub config: Option<PathBuf>,
    pub cmd: Vec<String>,
}

impl Launch {
    /// This binary, the config file of `globals`, and CMD (which must not be empty).
    pub fn new(globals: &Globals, cmd: &[String]) -> anyhow::Result<Launch> {
        if cmd.is_empty() {
            return Err(crate::exit::Exit::usage(
                "pickup needs the command each Run runs: pickup [--max N] -- CMD...",
            )
            .into());
        }
        Ok(Launch {
            exe: std::env::current_exe().context("finding this program's path")?,
            config: globals.config.clone(),
            cmd: cmd.to_vec(),
        })
    }
}

/// How one attempt on an issue ended, as far as pickup waits for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// The Run won the Claim and works on.
    Won { claim_id: String, pid: u32 },
    /// The Run lost the Claim (owned, no longer Ready, or a lost race) and exited 3.
    Lost { why: String },
    /// The Run exited with an error before it won or lost.
    Failed { code: Option<i32>, why: String },
    /// The Run had neither won nor lost when pickup stopped waiting; it may still win.
    Pending { pid: u32 },
}

/// One issue pickup tried, or skipped because it found it claimed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tried {
    pub issue: u64,
    pub attempt: Attempt,
    /// The Run's log file.
    pub log: PathBuf,
}

/// What a pickup pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickupReport {
    pub slots: Slots,
    /// Set when the pass started nothing because nothing was free (and asked GitHub nothing).
    pub skipped: Option<String>,
    /// Ready issues that were left alone because an active claim owns them.
    pub owned: Vec<u64>,
    pub tried: Vec<Tried>,
}

impl PickupReport {
    /// Runs started: won, or still claiming when pickup stopped waiting.
    pub fn started(&self) -> usize {
        self.tried
            .iter()
            .filter(|t| matches!(t.attempt, Attempt::Won { .. } | Attempt::Pending { .. }))
            .count()
    }

    /// Runs that failed before they won or lost.
    pub fn failed(&self) -> usize {
        self.tried
            .iter()
            .filter(|t| matches!(t.attempt, Attempt::Failed { .. }))
            .count()
    }
}

/// The `pickup` command: checks the slots locally first, so a host at capacity sends no request
/// to GitHub at all; then connects and picks up. Exit 1 when a Run failed to start.
pub async fn command(globals: &Globals, max: Option<u32>, cmd: &[String]) -> anyhow::Result<i32> {
    let launch = Launch::new(globals, cmd)?;
    let config = Config::load(globals.config.as_deref())?;
    let host = HostIdentity::detect(globals.host.as_deref());
    let state = StateDir::resolve(globals.state_dir.as_deref());
    let slots = Slots::read(&config, &host, &state)?;
    if let Some(why) = slots.skip_reason(max) {
        println!("{why}");
        return Ok(OK);
    }
    let ctx = Ctx::connect(globals, None).await?;
    let report = pickup(&ctx, max, &launch).await?;
    Ok(if report.failed() == 0 { OK } else { ERROR })
}

/// Takes Ready issues up to this host's free capacity (at most `max`), starting one detached Run
/// per won Claim; prints one line per issue. Sends no request when nothing is free.
pub async fn pickup(ctx: &Ctx, max: Option<u32>, launch: &Launch) -> anyhow::Result<PickupReport> {
    let _turn = HostLock::acquire(&ctx.state).await?;
    let slots = Slots::read(&ctx.config, &ctx.host, &ctx.state)?;
    let mut report = PickupReport {
        skipped: slots.skip_reason(max),
        slots,
        owned: Vec::new(),
        tried: Vec::new(),
    };
    if let Some(why) = &report.skipped {
        println!("{why}");
        return Ok(report);
    }
    let free = report.slots.free(max) as usize;
    println!(
        "host {}: {} of {} slots in use; taking up to {free} Ready issue(s)",
        report.slots.host, report.slots.in_use, report.slots.capacity
    );
    let ready = ctx
        .client
        .list_issues("open", Some(&ctx.config.labels.ready));
    for issue in candidates(&ctx.config, ready.await?) {
        if report.started() >= free {
            break;
        }
        if report.failed() >= MAX_FAILURES {
            println!("{MAX_FAILURES} Runs failed before claiming; stopping this pass");
            break;
        }
        let n = issue.number;
        let comments = ctx.client.list_issue_comments(n).await?;
        if let Some(owner) = crate::claim::ownership(ctx, n, &comments).owner {
            println!("#{n}: skipped, claimed by host {}", owner.record.host);
            report.owned.push(n);
            continue;
        }
        let span = tracing::info_span!("pickup", issue = n);
        let tried = attempt(ctx, n, launch).instrument(span).await?;
        println!("{}", line(&tried));
        report.tried.push(tried);
    }
    if report.started() < free {
        println!("no more Ready issues to take");
    }
    Ok(report)
}

/// The Ready issues a Run may take, in the configured order: open, carrying the ready label, and
/// carrying neither `in-progress`, the hand-off label nor any of `pickup.skip_labels`.
pub fn candidates(config: &Config, issues: Vec<Issue>) -> Vec<Issue> {
    let labels = &config.labels;
    let mut keep: Vec<Issue> = issues
        .into_iter()
        .filter(|i| i.is_open() && i.has_label(&labels.ready))
        .filter(|i| !i.has_label(&labels.in_progress) && !i.has_label(&labels.hand_off))
        .filter(|i| !config.pickup.skip_labels.iter().any(|l| i.has_label(l)))
        .collect();
    keep.sort_by_key(|i| i.number);
    if config.pickup.order == PickupOrder::HighestFirst {
        keep.reverse();
    }
    keep
}

/// The line printed for one issue tried.
fn line(t: &Tried) -> String {
    let (n, log) = (t.issue, t.log.display());
    match &t.attempt {
        Attempt::Won { claim_id, pid } => {
            format!("#{n}: taken, claim {claim_id}, Run PID {pid} (log {log})")
        }
        Attempt::Lost { why } => format!("#{n}: lost ({why}); moving on"),
        Attempt::Failed { code, why } => {
            let code = code.map_or("a signal".to_string(), |c| format!("status {c}"));
            format!("#{n}: the Run failed with {code} before claiming: {why} (log {log})")
        }
        Attempt::Pending { pid } => format!(
            "#{n}: Run PID {pid} started but had not won or lost its claim after {}s; \
             counted as started (log {log})",
            CLAIM_WAIT.as_secs()
        ),
    }
}

/// Starts a detached Run on issue `n` and waits until it has won or lost its Claim.
async fn attempt(ctx: &Ctx, n: u64, launch: &Launch) -> anyhow::Result<Tried> {
    let since = Utc::now();
    let log = log_path(ctx.state.root(), n, since);
    let child = spawn(ctx, n, launch, &log)?;
    let attempt = settle(&ctx.state, n, child, since, &log).await?;
    Ok(Tried {
        issue: n,
        attempt,
        log,
    })
}

/// `<state>/logs/issue-N-<UTC time>.log`.
fn log_path(root: &Path, n: u64, at: DateTime<Utc>) -> PathBuf {
    let stamp = at.format("%Y%m%dT%H%M%S%.3fZ");
    root.join("logs").join(format!("issue-{n}-{stamp}.log"))
}

/// `EXE --repo .. --api-url .. --host .. --state-dir .. [--config ..] run --issue N -- CMD...` in
/// a new session, stdin from /dev/null, output appended to `log`, without `RUNNER_TRACKING_ID`.
fn spawn(ctx: &Ctx, n: u64, launch: &Launch, log: &Path) -> anyhow::Result<Child> {
    let dir = log.parent().expect("logs folder");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening the Run's log {}", log.display()))?;
    let mut command = std::process::Command::new(&launch.exe);
    command
        .arg("--repo")
        .arg(ctx.client.repo().to_string())
        .arg("--api-url")
        .arg(ctx.client.api_url())
        .arg("--host")
        .arg(&ctx.host.host)
        .arg("--state-dir")
        .arg(ctx.state.root());
    if let Some(config) = &launch.config {
        command.arg("--config").arg(config);
    }
    command
        .args(["run", "--issue", &n.to_string(), "--"])
        .args(&launch.cmd)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .env_remove("RUNNER_TRACKING_ID");
    // SAFETY: setsid is async-signal-safe; the Run leads a new session, so no terminal hang-up,
    // no signal to this process group and no job cleanup that follows this process reaches it.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", launch.exe.display()))?;
    tracing::info!(issue = n, pid = child.id(), "Run started");
    Ok(child)
}

/// Waits until the Run `child` on issue `n` (started at `since`) has won or lost its Claim: its
/// local record says active (or already ended) or lost, or it exited first.
async fn settle(
    state: &StateDir,
    n: u64,
    mut child: Child,
    since: DateTime<Utc>,
    log: &Path,
) -> anyhow::Result<Attempt> {
    let pid = child.id();
    let deadline = Instant::now() + CLAIM_WAIT;
    loop {
        let status = record_status(state, n, pid, since);
        match status {
            Some(LocalStatus::Active | LocalStatus::Ended) => {
                let claim_id = record_claim(state, n, pid, since).unwrap_or_default();
                return Ok(Attempt::Won { claim_id, pid });
            }
            Some(LocalStatus::Lost) => {
                wait_exit(&mut child, Duration::from_secs(5)).await;
                return Ok(Attempt::Lost {
                    why: last_line(log),
                });
            }
            _ => {}
        }
        if let Some(exit) = child.try_wait()? {
            // The record may have been written just before the Run exited.
            if status != record_status(state, n, pid, since) {
                continue;
            }
            let why = last_line(log);
            return Ok(match exit.code() {
                Some(crate::exit::LOST) => Attempt::Lost { why },
                code => Attempt::Failed { code, why },
            });
        }
        if Instant::now() >= deadline {
            return Ok(Attempt::Pending { pid });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The local record the Run `pid` wrote for issue `n` since `since`, if any.
fn record_of(
    state: &StateDir,
    n: u64,
    pid: u32,
    since: DateTime<Utc>,
) -> Option<crate::host::LocalClaim> {
    let earliest = since - chrono::Duration::seconds(1);
    state
        .all()
        .into_iter()
        .find(|c| c.record.issue == n && c.record.pid == pid && c.record.claimed_at >= earliest)
}

fn record_status(state: &StateDir, n: u64, pid: u32, since: DateTime<Utc>) -> Option<LocalStatus> {
    record_of(state, n, pid, since).map(|c| c.status)
}

fn record_claim(state: &StateDir, n: u64, pid: u32, since: DateTime<Utc>) -> Option<String> {
    record_of(state, n, pid, since).map(|c| c.record.claim_id)
}

/// Reaps `child` if it exits within `limit`.
async fn wait_exit(child: &mut Child, limit: Duration) {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The last non-empty line of a Run's log, without the program's name: why it lost or failed.
fn last_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let last = text.lines().rev().find(|l| !l.trim().is_empty());
    last.map_or_else(
        || "no output".to_string(),
        |l| {
            l.trim_start_matches("thirdshift-reconciler: ")
                .trim()
                .to_string()
        },
    )
}

/// This host's pickup turn: an exclusive lock on `<state>/pickup.lock`, released when dropped.
/// The file is opened close-on-exec, so the Runs started while it is held do not keep it.
struct HostLock {
    _file: std::fs::File,
}

impl HostLock {
    async fn acquire(state: &StateDir) -> anyhow::Result<HostLock> {
        use std::os::fd::AsRawFd as _;
        let root = state.root();
        std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
        let path = root.join("pickup.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let mut told = false;
        loop {
            // SAFETY: flock on a file descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(HostLock { _file: file });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err).with_context(|| format!("locking {}", path.display()));
            }
            if !told {
                tracing::info!("another pickup runs on this host; waiting for its turn");
                told = true;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}
