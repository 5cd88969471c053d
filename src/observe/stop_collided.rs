//! Stopping a thirdshift Command that collides with another Run on its issue, under
//! `thirdshift.on_collision: stop` (docs/thirdshift.md, "Two Runs on one issue"). Only the
//! Command's own host does it, at its `observe`, and only when a complete, fresh read of the
//! issue's comments places the Command after a Run still working there (`protocol::collision`,
//! by recorded places alone: a Command not yet recorded is never stopped for it).
//!
//! It stops the Command without thirdshift's own ending: thirdshift 0.19.0's `stop` (and a
//! SIGTERM) runs its Claim's end, which takes `in-progress` off (`--requeue`), or puts
//! `needs-triage` on and `ready-for-agent` off (without it), and pushes its work to its Issue
//! branch, which is the owner's `issue-N` when both took it. So the Command process gets SIGKILL
//! (checked by PID and start ticks), its Harness (the processes that carry thirdshift's session
//! marker in its worktree) SIGTERM, a grace, SIGKILL; then the pass keeps its work on a branch of
//! its own (`thirdshift/salvage/<claim id>`, never its Issue branch) and posts its end record,
//! `superseded`, with no labels: the issue's labels stay the owner's. What was done is noted in
//! the state folder (`adopted/<claim id>.collided`) before the first signal, so a pass killed
//! half-way is finished by the next, and the Command is never handed back or relabelled.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::context::Ctx;
use crate::host::ProcessIdentity;
use crate::protocol::collision::{among, Contender};
use crate::protocol::config::OnCollision;
use crate::protocol::record::{AdoptedEvidence, EndRecord, Kind, Outcome, RunOf, Salvage};
use crate::snapshot::Snapshot;
use crate::text::ToComment;
use crate::thirdshift::Adopted;

impl Collided {
    /// The pass's line for Command `claim_id`, stopped now.
    pub fn line(&self, claim_id: &str) -> String {
        let owner = &self.owner;
        crate::text::collision::stopped_line(self.issue, claim_id, &owner.claim_id, &owner.host)
    }
}

/// The state folder's note of a Command this host stopped for a collision.
pub const NOTE: &str = "collided";

/// A Command this host stopped because another Run keeps its issue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collided {
    pub issue: u64,
    /// The Run that keeps the issue.
    pub owner: Contender,
    pub evidence: AdoptedEvidence,
    pub stopped_at: DateTime<Utc>,
    /// Processes of it still there after SIGKILL, if any.
    #[serde(default)]
    pub left: Vec<u32>,
}

/// The note of Command `claim_id`, when this host stopped it for a collision.
pub fn noted(ctx: &Ctx, claim_id: &str) -> Option<Collided> {
    let text = ctx.state.adopted_note(claim_id, NOTE)?;
    serde_json::from_slice(&text).ok()
}

/// Stops live Command `a` when `on_collision: stop` and its issue's records place it after a
/// Run still working there; the note of what was done, or `None` when it is left running.
pub async fn stop_if_later(
    ctx: &Ctx,
    snapshot: &Snapshot,
    a: &Adopted,
) -> anyhow::Result<Option<Collided>> {
    let owner = match noted(ctx, &a.claim.claim_id) {
        // a stop a killed pass left half-way is finished, whatever the config says now
        Some(c) => c.owner,
        None if ctx.config.thirdshift.on_collision != OnCollision::Stop => return Ok(None),
        None => match keeps_it(ctx, snapshot, a).await? {
            Some(owner) => owner,
            None => return Ok(None),
        },
    };
    let mut collided = Collided {
        issue: a.claim.issue,
        owner,
        evidence: a.evidence(&ctx.host),
        stopped_at: Utc::now(),
        left: Vec::new(),
    };
    save(ctx, &a.claim.claim_id, &collided)?;
    collided.left = stop(ctx, a).await;
    save(ctx, &a.claim.claim_id, &collided)?;
    tracing::warn!(
        claim = %a.claim.claim_id,
        owner = %collided.owner.claim_id,
        "stopped a thirdshift Command that collides with the Run that keeps its issue"
    );
    Ok(Some(collided))
}

/// The Run that keeps `a`'s issue when a fresh read of its comments places `a` after it.
async fn keeps_it(
    ctx: &Ctx,
    snapshot: &Snapshot,
    a: &Adopted,
) -> anyhow::Result<Option<Contender>> {
    let n = a.claim.issue;
    let me = Contender {
        claim_id: a.claim.claim_id.clone(),
        host: ctx.host.host.clone(),
    };
    // The snapshot first, with no request: the Run that keeps the issue, or a Command alone on
    // it, never needs more. A Command it shows later (or not placed yet) is decided afresh.
    let cached = snapshot.issue(n).map(|i| &i.ownership);
    let later = cached.is_some_and(|own| {
        among(own, runs_on(snapshot, n, own, &me)).is_some_and(|c| c.collides(&me.claim_id))
    });
    if !later {
        return Ok(None);
    }
    let comments = crate::store::read::complete_comments(ctx, n).await?;
    let own = crate::store::ownership(ctx, n, &comments);
    let collision = among(&own, runs_on(snapshot, n, &own, &me));
    let collision = collision.filter(|c| c.recorded_later(&me.claim_id));
    Ok(collision.map(|c| c.owner))
}

/// The Runs working on issue `n` as `own` and the hosts' reports show them, and `me`.
fn runs_on(
    snapshot: &Snapshot,
    n: u64,
    own: &crate::protocol::record::Ownership,
    me: &Contender,
) -> Vec<Contender> {
    let mut runs = snapshot.runs_working_on(n, own);
    runs.push(me.clone());
    runs
}

/// SIGKILL to the Command process (no cleanup of thirdshift's runs), then its Harness stopped;
/// the PIDs still there after SIGKILL. The Harness is looked for only inside the worktree its
/// Command log names (believed as `thirdshift::of_command` believes it): on the Issue branch
/// alone it could be the owner's, on the same machine, and that one is never signalled. A
/// Harness not found so is left to finish; the Command is then ended once it has.
async fn stop(ctx: &Ctx, a: &Adopted) -> Vec<u32> {
    let command = ProcessIdentity {
        pid: a.claim.pid,
        start_ticks: a.claim.start_ticks,
    };
    crate::host::kill(command);
    let Some(branch) = a.claim.branch.as_deref() else {
        return Vec::new();
    };
    let repo = ctx.remote_repo();
    let Some(crate::thirdshift::Named::Worktree(worktree)) =
        crate::thirdshift::of_command(a, &repo)
    else {
        return Vec::new();
    };
    let writers = crate::thirdshift::writers(&repo, branch, a.claim.start_ticks, Some(&worktree));
    let harness: Vec<ProcessIdentity> = writers
        .into_iter()
        .filter_map(ProcessIdentity::of)
        .collect();
    let grace = std::time::Duration::from_secs(ctx.config.run.kill_grace_secs);
    crate::host::stop_processes(&harness, grace).await
}

/// The branch a stopped Command's work is kept on: one of its own, never its Issue branch.
pub fn branch(claim_id: &str) -> String {
    crate::salvage::salvage_branch(claim_id)
}

/// Posts the end record of Command `a` this host stopped for `collided`, once its work is kept
/// (`kept`): `superseded`, no labels. Nothing when a fresh read shows its end already.
pub async fn end(
    ctx: &Ctx,
    a: &Adopted,
    collided: &Collided,
    kept: Option<&Salvage>,
) -> anyhow::Result<()> {
    let (n, id) = (collided.issue, &a.claim.claim_id);
    let comments = crate::store::read::complete_comments(ctx, n).await?;
    if crate::store::ownership(ctx, n, &comments)
        .adopted_end(id)
        .is_some()
    {
        return Ok(());
    }
    let owner = &collided.owner;
    let reason =
        crate::text::collision::stopped(&ctx.host.host, &owner.claim_id, &owner.host, kept);
    let actor = format!("observe@{}", ctx.host.host);
    let end = EndRecord {
        signal: Some(libc::SIGKILL),
        kept: kept.cloned(),
        run: RunOf::thirdshift_of(collided.evidence.clone()),
        ..EndRecord::ending(&a.claim, Outcome::Superseded, &actor, &reason, Utc::now())
    };
    crate::store::post_record(ctx, n, id, Kind::End, &end.to_comment()).await?;
    Ok(())
}

fn save(ctx: &Ctx, id: &str, collided: &Collided) -> anyhow::Result<()> {
    let text = serde_json::to_vec_pretty(collided)?;
    ctx.state.save_adopted_note(id, NOTE, &text)
}
