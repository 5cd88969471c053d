//! Starting one Run for `pickup` and waiting until it has won or lost its Claim. The Run is this
//! same binary's `run --issue N -- CMD...`, started in its own session with no stdin, its output
//! appended to `<state>/logs/issue-N-<time>.log`, and without `RUNNER_TRACKING_ID` (a CI runner
//! kills every process carrying its job's id when the job ends). Pickup waits for the Run's local
//! record to say active or lost, or for the Run to exit, never for the Run to finish.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use chrono::{DateTime, Utc};

use crate::context::Ctx;
use crate::host::{LocalClaim, LocalStatus, StateDir};
use crate::protocol::record::RunKind;

/// How long a started Run may take to win or lose its Claim before pickup stops waiting for it
/// (it then counts as started: it may still win).
pub const CLAIM_WAIT: Duration = Duration::from_secs(60);
/// How often the state folder and the Run are looked at while waiting.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// What to start for each issue taken: this binary's `run` with CMD.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The binary that runs `run` (this one).
    pub exe: PathBuf,
    /// The config file the Runs read, when one was given.
    pub config: Option<PathBuf>,
    /// `--kind` for each Run, when given (else `run`'s default).
    pub kind: Option<RunKind>,
    /// `--harness` for each Run, when given, so its claim records the Harness.
    pub harness: Option<String>,
    pub cmd: Vec<String>,
}

impl Launch {
    /// This binary, the config file given (`--config`), and CMD (which must not be empty).
    pub fn new(config: Option<std::path::PathBuf>, cmd: &[String]) -> anyhow::Result<Launch> {
        if cmd.is_empty() {
            return Err(crate::exit::Exit::usage(
                "pickup needs the command each Run runs: pickup [--max N] [--kind K] [--harness H] -- CMD...",
            )
            .into());
        }
        let exe = std::env::current_exe().context("finding this program's path")?;
        let path = crate::host::command_path(&exe);
        if let Err(why) = startable(&cmd[0], &path) {
            return Err(crate::exit::Exit::usage(format!(
                "pickup's command cannot be started, so nothing is claimed: {why}"
            ))
            .into());
        }
        Ok(Launch {
            exe,
            config,
            kind: None,
            harness: None,
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

/// One issue pickup started a Run for, and how that Run's claim went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tried {
    pub issue: u64,
    pub attempt: Attempt,
    /// The Run's log file.
    pub log: PathBuf,
}

/// Starts a detached Run on issue `n` and waits until it has won or lost its Claim.
pub async fn attempt(ctx: &Ctx, n: u64, launch: &Launch) -> anyhow::Result<Tried> {
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

/// `EXE --repo .. --api-url .. --host .. --state-dir .. [--config ..] run --issue N [--kind K]
/// [--harness H] -- CMD...` in
/// a new session, stdin from /dev/null, output appended to `log`, without `RUNNER_TRACKING_ID`.
fn spawn(ctx: &Ctx, n: u64, launch: &Launch, log: &Path) -> anyhow::Result<Child> {
    let mut command =
        crate::context::detached::command(ctx, &launch.exe, launch.config.as_deref(), log)?;
    command.args(["run", "--issue", &n.to_string()]);
    if let Some(kind) = launch.kind {
        command.args(["--kind", kind.as_str()]);
    }
    if let Some(harness) = &launch.harness {
        command.arg("--harness").arg(harness);
    }
    command.arg("--").args(&launch.cmd);
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
                Some(crate::exit::run::LOST) => Attempt::Lost { why },
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
fn record_of(state: &StateDir, n: u64, pid: u32, since: DateTime<Utc>) -> Option<LocalClaim> {
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

/// Whether `program` can be started as a Run would start it, from this folder with `path`: a
/// path (with a `/`) to an executable file, or a name found as one on `path`; why not, if not.
fn startable(program: &str, path: &[PathBuf]) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = Path::new(program);
        return match std::fs::metadata(p) {
            Err(e) => Err(format!("`{program}`: {e}")),
            Ok(_) if !executable(p) => Err(format!("`{program}` is not an executable file")),
            Ok(_) => Ok(()),
        };
    }
    if program.is_empty() || !path.iter().any(|dir| executable(&dir.join(program))) {
        return Err(format!("`{program}` is not an executable on PATH"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_startable_only_as_an_executable_file_or_a_name_on_path() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let (script, plain) = (dir.path().join("agent"), dir.path().join("notes"));
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(&plain, "").unwrap();
        let path = vec![dir.path().to_path_buf()];
        assert_eq!(startable(script.to_str().unwrap(), &[]), Ok(()));
        assert_eq!(startable("agent", &path), Ok(()));
        let missing = startable("/no/such/agent", &path).unwrap_err();
        assert!(missing.starts_with("`/no/such/agent`: "), "{missing}");
        assert_eq!(
            startable(plain.to_str().unwrap(), &path),
            Err(format!("`{}` is not an executable file", plain.display()))
        );
        assert_eq!(
            startable("agnt", &path),
            Err("`agnt` is not an executable on PATH".into())
        );
        assert!(startable("notes", &path).is_err());
    }

    #[test]
    fn log_names_the_issue_and_the_time() {
        let at = DateTime::parse_from_rfc3339("2026-03-04T05:06:07.089Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            log_path(Path::new("/s"), 12, at),
            Path::new("/s/logs/issue-12-20260304T050607.089Z.log")
        );
    }

    #[test]
    fn why_is_the_last_line_of_the_log_without_the_program_name() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("l.log");
        assert_eq!(last_line(&log), "no output");
        std::fs::write(
            &log,
            "WARN something\nthirdshift-reconciler: issue #3 is not Ready\n\n",
        )
        .unwrap();
        assert_eq!(last_line(&log), "issue #3 is not Ready");
    }
}
