//! The Run companion: a small process each Run leaves in a session of its own, so a Run killed
//! outright (kill -9, an OOM kill) has its Claim ended in seconds, with no timer and no host
//! daemon. It waits for the Run's process to end (a pidfd), and then, unless the Run ended its
//! own Claim, runs this host's `observe` and a reconcile pass: the same evidence as any pass.
//! While processes of the Run still write ("writers alive"), it waits for those to end too, and
//! passes again. It exits with its Run's Claim.
//!
//! It is never counted as a writer: it is not in the Run's command's session and carries no
//! claim marker. A companion killed itself changes nothing: the next pass ends the Claim. It
//! decides nothing of its own: the verdicts are `observe`'s and the endings reconcile's.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::context::Ctx;
use crate::host::{LocalStatus, ProcessIdentity};
use crate::protocol::record::{ClaimState, Verdict};

/// The environment variable that turns companions off (`off`), for a host that runs its own
/// observe loop.
pub const COMPANION_VAR: &str = "THIRDSHIFT_COMPANION";

/// How many passes a companion makes once its Run is gone before it leaves the Claim to the
/// host's next pass (a pass can fail: GitHub down, the budget within its reserve).
const PASSES: u32 = 5;

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

/// `companion --claim ID --run PID:TICKS`: waits for the Run, then passes until its Claim is
/// ended or nothing more can be done here. Exit 0 either way.
pub async fn watch(ctx: &Ctx, claim_id: &str, run: ProcessIdentity) -> anyhow::Result<()> {
    wait_for(run).await;
    for _ in 0..PASSES {
        if ended_by_run(ctx, claim_id) || ended_on_github(ctx, claim_id).await? {
            return Ok(());
        }
        let observed = crate::observe::observe(ctx).await?;
        let verdict = observed
            .report
            .claims
            .iter()
            .find(|v| v.claim_id == claim_id)
            .map(|v| v.verdict.clone());
        match verdict {
            Some(Verdict::WritersAlive { pids, .. }) => {
                tracing::info!(claim = claim_id, ?pids, "writers alive: waiting for them");
                for pid in pids {
                    if let Some(p) = ProcessIdentity::of(pid) {
                        wait_for(p).await;
                    }
                }
            }
            Some(Verdict::Dead { .. }) => reconcile(ctx, claim_id).await,
            // Not this host's to judge any more, or alive: nothing for a companion to do.
            Some(Verdict::Alive) | None => return Ok(()),
        }
    }
    tracing::warn!(claim = claim_id, "left to the host's next pass");
    Ok(())
}

/// One reconcile pass, and the live view written when it changed; failures are only logged (the
/// next pass, the companion's or the host's, goes on).
async fn reconcile(ctx: &Ctx, claim_id: &str) {
    let pass = match crate::reconcile::pass(ctx).await {
        Ok(pass) => pass,
        Err(e) => {
            tracing::warn!(claim = claim_id, "reconcile: {e:#}");
            return;
        }
    };
    let ended = &pass.applied.ended;
    if let Err(e) = crate::view::publish::publish(ctx, &pass.snapshot, &pass.plan, ended).await {
        tracing::warn!(claim = claim_id, "the live view: {e:#}");
    }
}

/// Whether this host's Run ended its own Claim (its local record says so).
fn ended_by_run(ctx: &Ctx, claim_id: &str) -> bool {
    ctx.state
        .load(claim_id)
        .is_ok_and(|l| l.status == LocalStatus::Ended)
}

/// Whether a complete list of the Claim's issue shows its end record.
async fn ended_on_github(ctx: &Ctx, claim_id: &str) -> anyhow::Result<bool> {
    let Ok(local) = ctx.state.load(claim_id) else {
        return Ok(true);
    };
    let comments = crate::store::read::complete_comments(ctx, local.record.issue).await?;
    let own = crate::store::ownership(ctx, local.record.issue, &comments);
    Ok(matches!(own.state(claim_id), ClaimState::Ended { .. }))
}

/// Waits until process `p` (that exact process: its start ticks) has ended; at once when it is
/// gone already. Through a pidfd, so no polling and no timer.
async fn wait_for(p: ProcessIdentity) {
    // SAFETY: pidfd_open(2) with a PID and no flags; the fd is owned and closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p.pid as libc::c_long, 0) } as i32;
    if fd < 0 {
        return;
    }
    // The PID may have been reused between our reading and the pidfd: check it is still the one.
    if ProcessIdentity::of(p.pid) != Some(p) {
        // SAFETY: closing the fd opened above.
        unsafe { libc::close(fd) };
        return;
    }
    let _ = tokio::task::spawn_blocking(move || {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one valid pollfd; -1 waits until the process exits.
        while unsafe { libc::poll(&mut pfd, 1, -1) } < 0
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {}
        // SAFETY: closing the fd opened above.
        unsafe { libc::close(fd) };
    })
    .await;
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
