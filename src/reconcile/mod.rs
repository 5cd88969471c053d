//! Reconcile: a pure `plan` from a snapshot to actions, and `apply`, the IO shell that performs
//! them end record first and labels second, so a pass killed half-way is finished by the next.

pub mod apply;
pub mod plan;

pub use plan::{plan, Action, Finding, Health, Plan, PlanInput};

use chrono::Utc;

use crate::context::Ctx;
use crate::snapshot::Snapshot;

/// What one reconcile pass decided and did.
#[derive(Clone, Debug)]
pub struct PassReport {
    /// What the pass read (the live view renders it with the plan's verdicts).
    pub snapshot: crate::snapshot::Snapshot,
    pub plan: Plan,
    pub applied: apply::Applied,
}

/// One pass: read the snapshot, plan, apply.
pub async fn pass(ctx: &Ctx) -> anyhow::Result<PassReport> {
    let input = PlanInput {
        actor: format!("reconcile@{}", ctx.host.host),
        now: Utc::now(),
    };
    let (snapshot, plan) = read_and_plan(ctx, &input).await?;
    crate::snapshot::warn_untrusted(&snapshot, &ctx.me);
    let applied = apply::apply(ctx, &plan.actions, &apply::Seen::of(&snapshot)).await;
    for f in &plan.findings {
        tracing::info!(issue = f.issue, claim = ?f.claim_id, health = ?f.health, "{}", f.note);
    }
    Ok(PassReport {
        snapshot,
        plan,
        applied,
    })
}

/// Reads and plans. Through the cache, an issue the plan would write to is first read again in
/// full when its comments came from the cache, and the pass plans again: the cache can make a
/// pass skip reads, never decide a write.
pub async fn read_and_plan(ctx: &Ctx, input: &PlanInput) -> anyhow::Result<(Snapshot, Plan)> {
    let Some(path) = &ctx.cache else {
        let snapshot = crate::snapshot::read_pass(ctx).await?;
        let plan = plan(&snapshot, &ctx.config, input);
        return Ok((snapshot, plan));
    };
    let mut read = crate::snapshot::read_cached(ctx, &[], path).await?;
    let mut decided = plan(&read.snapshot, &ctx.config, input);
    loop {
        let unconfirmed = read.unconfirmed(decided.actions.iter().map(Action::issue));
        if unconfirmed.is_empty() {
            return Ok((read.snapshot, decided));
        }
        tracing::debug!(?unconfirmed, "reading again in full before writing");
        read.confirm(ctx, &unconfirmed).await?;
        decided = plan(&read.snapshot, &ctx.config, input);
    }
}
