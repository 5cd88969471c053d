//! Reconcile: a pure `plan` from a snapshot to actions, and `apply`, the IO shell that performs
//! them end record first and labels second, so a pass killed half-way is finished by the next.

pub mod apply;
pub mod plan;

pub use plan::{plan, Action, Finding, Health, Plan, PlanInput};

use chrono::Utc;

use crate::context::Ctx;

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
    let snapshot = crate::snapshot::read::read(ctx, &[]).await?;
    let input = PlanInput {
        actor: format!("reconcile@{}", ctx.host.host),
        now: Utc::now(),
    };
    let plan = plan(&snapshot, &ctx.config, &input);
    let applied = apply::apply(ctx, &plan.actions).await;
    for f in &plan.findings {
        tracing::info!(issue = f.issue, claim = ?f.claim_id, health = ?f.health, "{}", f.note);
    }
    Ok(PassReport {
        snapshot,
        plan,
        applied,
    })
}
