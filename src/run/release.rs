//! A Run's own end (`release`, and `run` when its command exits): the Claim this host's Run held
//! is ended as `run@HOST`, the way `observe::ending` ends any Claim. It does not decide the
//! outcome (the Run's exit does, `run.rs`).

use crate::context::Ctx;
use crate::observe::ending::{end_claim, Ending, Released};

/// Ends the Claim `claim_id` of this host's Run, as `run@HOST`.
pub async fn release(ctx: &Ctx, claim_id: &str, ending: &Ending) -> anyhow::Result<Released> {
    let local = ctx.state.load(claim_id)?;
    let actor = format!("run@{}", ctx.host.host);
    end_claim(ctx, local.record.issue, claim_id, &actor, ending).await
}
