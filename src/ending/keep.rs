//! Salvaging a stopped Run's work: the one place that salvages a Claim's worktree with
//! `crate::salvage` (commit what is uncommitted as `thirdshift: failed run (<reason>)`, push the
//! Issue branch; never reset, never force), for every way a Run stops without delivering: its
//! command failed or was killed, the Run was handed back by a signal (`run.rs`), its host stopped
//! it on a cancel request (`observe::cancel`), or its host proved it dead (`observe.rs`).
//!
//! Once per Claim: the result is stored in the Claim's local record before anyone reports it,
//! and a stored result is reported as it is. A Run killed half-way through is salvaged again by
//! `observe` once it is proven dead; salvage is idempotent (a tree already committed is not
//! committed twice, a branch already pushed is pushed again as a no-op).
//!
//! It salvages only when no process of the Run may still write: `observe` and `observe::cancel` call it
//! after proving that, and a Run's own call ([`own_run`]) first waits up to the grace period for
//! its command's session (and any process carrying its claim id) to be gone. If some remain,
//! nothing is salvaged and the report says where the work stays. It never decides how a Claim
//! ends and never talks to GitHub.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;

use crate::context::Ctx;
use crate::host::writers;
use crate::host::ProcessTable;
use crate::protocol::record::{ClaimRecord, Salvage};
use crate::salvage::{salvage, SalvageRequest};
use crate::thirdshift::Named;

/// Under `thirdshift.on_dead: continue`, the worktree of dead Command `claim_id` moved aside
/// (`crate::salvage::move_aside`) once its work is on its Issue branch (`branch`) on origin, so
/// thirdshift's Continuation can take its path and branch; the kept report with its new place,
/// stored as the salvage is. Anything else, or a move that fails (logged), leaves it as it is.
pub async fn move_aside(ctx: &Ctx, claim_id: &str, branch: &str, mut kept: Salvage) -> Salvage {
    if kept.moved_to.is_some() || !kept.pushed || kept.branch != branch {
        return kept;
    }
    let (worktree, id) = (
        std::path::PathBuf::from(&kept.worktree),
        claim_id.to_string(),
    );
    let moved = tokio::task::spawn_blocking(move || crate::salvage::move_aside(&worktree, &id));
    match moved.await {
        Ok(Ok(to)) => {
            kept.moved_to = Some(to.display().to_string());
            tracing::info!(claim = %claim_id, "worktree moved aside to {}", to.display());
            if let Err(e) = ctx.state.save_adopted_kept(claim_id, &kept) {
                tracing::warn!(claim = %claim_id, "could not store where its worktree went: {e:#}");
            }
        }
        Ok(Err(why)) => tracing::warn!(claim = %claim_id, "worktree not moved aside: {why}"),
        Err(e) => tracing::warn!(claim = %claim_id, "worktree not moved aside: {e}"),
    }
    kept
}

/// How often a Run looks again whether its command's processes are gone.
const POLL: Duration = Duration::from_millis(100);

/// Salvages the worktree this host's record of `claim` names (none: `None`), unless this host
/// salvaged it already:
/// then the stored result. `reason` goes into the salvage commit's subject. Call only once no
/// writer of the Run is left.
pub async fn stopped_run(
    ctx: &Ctx,
    claim: &ClaimRecord,
    reason: String,
) -> anyhow::Result<Option<Salvage>> {
    // The worktree and branch come from this host's own record of the Claim, never from GitHub's
    // copy: any write collaborator can edit a comment to name another path.
    let Ok(local) = ctx.state.load(&claim.claim_id) else {
        return Ok(claim.worktree.clone().map(|w| not_recorded_here(claim, w)));
    };
    if let Some(done) = local.salvage.clone() {
        return Ok(Some(done));
    }
    let claim = &local.record;
    let Some(worktree) = claim.worktree.clone() else {
        return Ok(None);
    };
    let branch = claim.issue_branch();
    let (host, claim_id) = (ctx.host.host.clone(), claim.claim_id.clone());
    let kept = tokio::task::spawn_blocking(move || {
        salvage(&SalvageRequest {
            worktree: Path::new(&worktree),
            branch: &branch,
            remote: "origin",
            claim_id: &claim_id,
            reason: &reason,
            host: &host,
            now: chrono::Utc::now(),
        })
    })
    .await
    .context("salvage task")?;
    tracing::info!(
        claim = %claim.claim_id,
        pushed = kept.pushed,
        commit = ?kept.salvage_commit,
        "salvaged: {:?}",
        kept.error
    );
    // The salvage is done whatever happens to the record: a failed write only means a later
    // pass salvages again, which commits nothing new.
    if let Err(e) = ctx
        .state
        .update(&claim.claim_id, |l| l.salvage = Some(kept.clone()))
    {
        tracing::warn!(claim = %claim.claim_id, "could not store the salvage result: {e:#}");
    }
    Ok(Some(kept))
}

/// Salvages the worktree of a thirdshift Command proven dead with no writer left (never
/// before), once: `named`, what thirdshift's own step in its Command log names for its Issue
/// branch (`thirdshift::of_command`), committed and pushed on that branch as ours
/// are, or on `own_branch` when given (a Command stopped for a collision, whose Issue branch may
/// be the owner's). The result is kept in the state folder and reported as it is by later passes. A Command
/// with no Issue branch, or whose log names no worktree, has nothing to salvage; one whose
/// worktree cannot be believed is reported untouched: the work is left on this host, and the
/// report says why.
pub async fn adopted_run(
    ctx: &Ctx,
    adopted: &crate::thirdshift::Adopted,
    named: Named,
    reason: String,
    own_branch: Option<String>,
) -> anyhow::Result<Option<Salvage>> {
    let claim_id = adopted.claim.claim_id.clone();
    if let Some(done) = ctx.state.adopted_kept(&claim_id) {
        return Ok(Some(done));
    }
    let Some(issue_branch) = adopted.claim.branch.clone() else {
        return Ok(None);
    };
    let branch = own_branch.unwrap_or(issue_branch);
    let kept = match named {
        Named::Nothing => return Ok(None),
        Named::NotBelieved { path, why } => Salvage {
            error: Some(crate::text::salvage::not_believed(
                &ctx.host.host,
                &path,
                &why,
            )),
            ..Salvage::untouched(path, branch)
        },
        Named::Worktree(worktree) => {
            let host = ctx.host.host.clone();
            let id = claim_id.clone();
            tokio::task::spawn_blocking(move || {
                salvage(&SalvageRequest {
                    worktree: &worktree,
                    branch: &branch,
                    remote: "origin",
                    claim_id: &id,
                    reason: &reason,
                    host: &host,
                    now: chrono::Utc::now(),
                })
            })
            .await
            .context("salvage task")?
        }
    };
    tracing::info!(claim = %claim_id, pushed = kept.pushed, "thirdshift Command salvaged: {:?}", kept.error);
    if let Err(e) = ctx.state.save_adopted_kept(&claim_id, &kept) {
        tracing::warn!(claim = %claim_id, "could not store the salvage result: {e:#}");
    }
    Ok(Some(kept))
}

/// The salvage report for a Claim naming this host that this host has no record of: nothing is
/// touched, and people are told where the work may be.
fn not_recorded_here(claim: &ClaimRecord, worktree: String) -> Salvage {
    tracing::warn!(claim = %claim.claim_id, "no local record of the Claim: its worktree is not salvaged");
    Salvage {
        error: Some(crate::text::salvage::not_recorded_here(&claim.claim_id)),
        ..Salvage::untouched(worktree, claim.issue_branch())
    }
}

/// A Run's own salvage after its command ended without delivering: the Claim as this host last
/// recorded it (a worktree given to `stage --worktree` included), with `sid` its command's
/// session. Waits up to `run.kill_grace_secs` (of its kind) for the session and every process carrying the
/// claim id to be gone; if some remain, salvages nothing and reports where the work stays.
pub async fn own_run(
    ctx: &Ctx,
    claim_id: &str,
    sid: u32,
    reason: String,
) -> anyhow::Result<Option<Salvage>> {
    let mut claim = ctx.state.load(claim_id)?.record;
    let Some(worktree) = claim.worktree.clone() else {
        return Ok(None);
    };
    claim.session_id = claim.session_id.or(Some(sid));
    let grace = ctx.config.run.for_kind(claim.kind).kill_grace_secs;
    let left = writers_after(&claim, Duration::from_secs(grace)).await?;
    if !left.is_empty() {
        tracing::warn!(
            claim = claim_id,
            ?left,
            "writers left: the worktree is not salvaged"
        );
        return Ok(Some(not_salvaged(&claim, &worktree, &left, grace)));
    }
    stopped_run(ctx, &claim, reason).await
}

/// The processes that may still write for `claim` once they had up to `grace` to go: its
/// session's members and every process carrying its claim id (this process excluded).
async fn writers_after(claim: &ClaimRecord, grace: Duration) -> anyhow::Result<Vec<u32>> {
    let deadline = tokio::time::Instant::now() + grace;
    loop {
        let table = ProcessTable::read_environ_from(claim.start_ticks)
            .context("reading this host's process table")?;
        let left = writers(claim, &table);
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return Ok(left);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The report for a worktree left alone because writers of the Run still ran.
fn not_salvaged(claim: &ClaimRecord, worktree: &str, left: &[u32], grace: u64) -> Salvage {
    Salvage {
        error: Some(crate::text::salvage::writers_left(left, grace)),
        ..Salvage::untouched(worktree.to_string(), claim.issue_branch())
    }
}
