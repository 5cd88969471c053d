//! What a Run's companion does once started (`companion --claim ID --run PID:TICKS`, started by
//! `run::companion`): it waits for the Run's process to end (a pidfd), and then, unless the Run
//! ended its own Claim, runs this host's `observe` and a reconcile pass, and writes the live view:
//! the same evidence as any pass. While processes of the Run still write ("writers alive"), it
//! waits for those to end too, and passes again. It lives here, on top, because it runs other
//! use cases; it decides nothing of its own.

use crate::context::Ctx;
use crate::host::{LocalStatus, ProcessIdentity};
use crate::protocol::record::{ClaimState, Verdict};

/// How many passes a companion makes once its Run is gone before it leaves the Claim to the
/// host's next pass (a pass can fail: GitHub down, the budget within its reserve).
const PASSES: u32 = 5;

/// `companion --claim ID --run PID:TICKS`: waits for the Run, then passes until its Claim is
/// ended or nothing more can be done here. Exit 0 either way.
pub async fn watch(ctx: &Ctx, claim_id: &str, run: ProcessIdentity) -> anyhow::Result<()> {
    crate::host::wait_for_exit(run).await;
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
                        crate::host::wait_for_exit(p).await;
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
    if let Err(e) = crate::view::publish(ctx, &pass.snapshot, &pass.plan, ended).await {
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
