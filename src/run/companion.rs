//! The Run companion: a small process each Run leaves in a session of its own, so a Run killed
//! outright (kill -9, an OOM kill) has its Claim ended in seconds, with no timer and no host
//! daemon. It waits for the Run's process to end (a pidfd), and then, unless the Run ended its
//! own Claim, runs this host's `observe` and a reconcile pass: the same evidence as any pass.
//! While processes of the Run still write ("writers alive"), it waits for those to end too, and
//! passes again. It exits with its Run's Claim.
//!
//! It is never counted as a writer: it is not in the Run's command's session and carries no
//! claim marker. A companion killed itself changes nothing: the next pass ends the Claim. It
//! decides nothing of its own: the verdicts are `observe`'s and the endings reconcile's. This
//! file starts one; what it does once started (`companion --claim ID --run PID:TICKS`) is
//! `cli/companion.rs`, above the use cases it runs.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::context::Ctx;
use crate::host::ProcessIdentity;

/// The environment variable that turns companions off (`off`), for a host that runs its own
/// observe loop.
pub const COMPANION_VAR: &str = "THIRDSHIFT_COMPANION";

/// What a companion needs to be started: this binary and the config file the Run read.
#[derive(Clone, Debug)]
pub struct Launch {
    pub exe: PathBuf,
    pub config: Option<PathBuf>,
}

/// Starts the companion of this process's Run on `claim_id`: detached, in a new session, its
/// output appended to `<state>/logs/companion-<claim id>.log`, with the credentials handed over
/// and no `RUNNER_TRACKING_ID` or claim marker. A companion that cannot start is only a warning:
/// the host's passes still end the Claim.
pub fn start(ctx: &Ctx, launch: &Launch, claim_id: &str) {
    if std::env::var(COMPANION_VAR).is_ok_and(|v| v == "off") {
        return;
    }
    if let Err(e) = spawn(ctx, launch, claim_id) {
        tracing::warn!(claim = claim_id, "no companion for this Run: {e:#}");
    }
}

fn spawn(ctx: &Ctx, launch: &Launch, claim_id: &str) -> anyhow::Result<()> {
    let log = log_of(ctx.state.root(), claim_id);
    let mut command =
        crate::context::detached::command(ctx, &launch.exe, launch.config.as_deref(), &log)?;
    let me = ProcessIdentity::current();
    command
        .args(["companion", "--claim", claim_id, "--run"])
        .arg(format!("{}:{}", me.pid, me.start_ticks))
        .env_remove("THIRDSHIFT_CLAIM_ID");
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", launch.exe.display()))?;
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

/// The log a Run's companion writes, for people reading what it did.
pub fn log_of(state_root: &Path, claim_id: &str) -> PathBuf {
    state_root
        .join("logs")
        .join(format!("companion-{claim_id}.log"))
}
