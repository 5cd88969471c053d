//! Starting a companion: a small process left in a session of its own beside a Run, so a Run
//! killed outright (kill -9, an OOM kill) has its Claim ended in seconds, with no timer and no
//! host daemon. Each Run of ours starts one for itself (`run`); `observe` starts one for each
//! live thirdshift Command it reports that has none yet, so thirdshift's own Runs, which have no
//! wrapper, are watched the same way. The companion waits for the process to end (a pidfd), and
//! then, unless the Run ended its own Claim, runs this host's `observe` and a reconcile pass: the
//! same evidence as any pass. What it does once started (`companion --claim ID --run PID:TICKS
//! [--issue N]`) is `cli/companion.rs`, above the use cases it runs.
//!
//! It is never counted as a writer: it is not in the Run's command's session and carries no
//! claim marker, and its credentials come over a descriptor, never in its environment
//! (`detached`). A companion killed itself changes nothing: the next pass ends the Claim. A
//! companion holds its Run's turn (`<state>/companion-<id>.lock`) while it lives: at most one
//! watches a Run, `observe` starts none for a thirdshift Command while it is held, and `observe`
//! reports which Runs are watched (`watching`) for the live view.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::context::Ctx;
use crate::host::{ProcessIdentity, Turn};

/// The environment variable that turns companions off (`off`), for a host that runs its own
/// observe loop.
pub const COMPANION_VAR: &str = "THIRDSHIFT_COMPANION";

/// What a companion watches: this process's Run, or a thirdshift Command (its process as our
/// liveness judged it alive, and its issue).
#[derive(Clone, Copy, Debug)]
pub enum Watched<'a> {
    Run {
        claim_id: &'a str,
    },
    Command {
        claim_id: &'a str,
        issue: u64,
        process: ProcessIdentity,
    },
}

impl Watched<'_> {
    fn claim_id(&self) -> &str {
        match self {
            Watched::Run { claim_id } | Watched::Command { claim_id, .. } => claim_id,
        }
    }
}

/// Starts the companion of `watched`: detached, in a new session, its output appended to
/// `<state>/logs/companion-<claim id>.log`, with the credentials handed over and no
/// `RUNNER_TRACKING_ID` or claim marker. None when companions are off; the caller asks first
/// whether one already watches a Command (`watching`), and a second one started anyway leaves at
/// once (it cannot take the turn). A companion that cannot start is only a warning: the host's
/// passes still end the Claim. Whether one was started.
pub fn start(ctx: &Ctx, watched: Watched<'_>) -> bool {
    if std::env::var(COMPANION_VAR).is_ok_and(|v| v == "off") {
        return false;
    }
    match spawn(ctx, watched) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(claim = watched.claim_id(), "no companion: {e:#}");
            false
        }
    }
}

/// Whether a companion watches the Run of `claim_id` now (it holds the Run's turn).
pub fn watching(ctx: &Ctx, claim_id: &str) -> bool {
    Turn::is_held(&ctx.state, &turn_of(claim_id))
}

/// A companion's own turn on the Run of `claim_id`: `None` when another holds it.
pub fn take_turn(ctx: &Ctx, claim_id: &str) -> anyhow::Result<Option<Turn>> {
    Turn::try_take(&ctx.state, &turn_of(claim_id))
}

fn turn_of(claim_id: &str) -> String {
    format!("companion-{claim_id}")
}

fn spawn(ctx: &Ctx, watched: Watched<'_>) -> anyhow::Result<()> {
    let claim_id = watched.claim_id();
    let log = log_of(ctx.state.root(), claim_id);
    let exe = std::env::current_exe().context("finding this program's path")?;
    let mut command =
        crate::context::detached::command(ctx, &exe, ctx.config_path.as_deref(), &log)?;
    let process = match watched {
        Watched::Run { .. } => ProcessIdentity::current(),
        Watched::Command { process, .. } => process,
    };
    command
        .args(["companion", "--claim", claim_id, "--run"])
        .arg(format!("{}:{}", process.pid, process.start_ticks))
        .env_remove("THIRDSHIFT_CLAIM_ID");
    if let Watched::Command { issue, .. } = watched {
        command.arg("--issue").arg(issue.to_string());
    }
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    tracing::debug!(claim = claim_id, pid = child.id(), "companion started");
    Ok(())
}

/// The companion's `--run` value, `PID:TICKS`.
pub fn parse_run(text: &str) -> Option<ProcessIdentity> {
    let (pid, ticks) = text.split_once(':')?;
    Some(ProcessIdentity {
        pid: pid.parse().ok()?,
        start_ticks: ticks.parse().ok()?,
    })
}

/// The log a companion writes, for people reading what it did.
pub fn log_of(state_root: &Path, claim_id: &str) -> PathBuf {
    state_root
        .join("logs")
        .join(format!("companion-{claim_id}.log"))
}
