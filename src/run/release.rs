//! A Run's own end (`release`, and `run` when its command exits or could not start): the Claim
//! this host's Run held is ended as `run@HOST`, the way `crate::ending` ends any Claim, and
//! the Run says so in one line on stderr unless asked to be quiet. It does not decide the
//! outcome (the Run's exit does, `run.rs`).

use crate::context::Ctx;
use crate::ending::{end_claim, Ending, Released};
use crate::exit;
use crate::protocol::record::Outcome;
use crate::run::broker;
use crate::run::claim::Held;

/// Ends the Claim `claim_id` of this host's Run, as `run@HOST`.
pub async fn release(ctx: &Ctx, claim_id: &str, ending: &Ending) -> anyhow::Result<Released> {
    let local = ctx.state.load(claim_id)?;
    let actor = format!("run@{}", ctx.host.host);
    end_claim(ctx, local.record.issue, claim_id, &actor, ending).await
}

/// Says one line on stderr for a person watching the Run, unless `quiet` (`-q`).
pub fn say(quiet: bool, line: &str) {
    if !quiet {
        eprintln!("thirdshift-reconciler: {line}");
    }
}

/// Ends this host's Run's Claim with `ending`, kept in its local record first, and says how it
/// ended. When GitHub refuses the end write for longer than its retries last, the Claim is left
/// to this host's `observe`: its report carries the kept outcome, and reconcile ends the Claim
/// with it (a `done` stays done). Fails only when the outcome could not be kept either.
pub async fn end_own(ctx: &Ctx, held: &Held, ending: &Ending, quiet: bool) -> anyhow::Result<()> {
    use crate::text::reasons::{end_left_to_observe, run_already_ended, run_ended};
    let (claim_id, issue) = (&held.record.claim_id, held.record.issue);
    let kept = ctx
        .state
        .update(claim_id, |l| l.finished = Some(ending.clone()));
    ctx.client.spend_reserve();
    match release(ctx, claim_id, ending).await {
        Ok(Released::AlreadyEnded { outcome, by }) => {
            tracing::warn!(%outcome, %by, kept = ?ending.kept, "the Claim was already ended");
            say(quiet, &run_already_ended(issue, claim_id, outcome, &by));
            Ok(())
        }
        Ok(Released::Ended { url }) => {
            let (code, signal) = (ending.exit_code, ending.signal);
            say(
                quiet,
                &run_ended(issue, claim_id, ending.outcome, code, signal, &url),
            );
            Ok(())
        }
        Err(e) if kept.is_ok() => {
            say(false, &end_left_to_observe(claim_id, ending.outcome, &e));
            Ok(())
        }
        Err(e) => Err(e.context(format!(
            "the Run's outcome ({}) could not be kept locally either",
            ending.outcome
        ))),
    }
}

/// Ends the Claim of a Run whose command could not be started (`err`) as `failed`, its labels
/// back as the Claim found them; the Run exits [`exit::run::NOT_STARTED`].
pub async fn not_started(
    ctx: &Ctx,
    held: &Held,
    err: &anyhow::Error,
    quiet: bool,
) -> anyhow::Result<i32> {
    let claim_id = &held.record.claim_id;
    let _ = std::fs::remove_dir_all(broker::folder(ctx.state.root(), claim_id));
    let ending = Ending {
        outcome: Outcome::Failed,
        reason: crate::text::reasons::not_started_reason(&format!("{err:#}")),
        exit_code: None,
        signal: None,
        cause: None,
        kept: None,
        started: false,
    };
    end_own(ctx, held, &ending, quiet).await?;
    let line = crate::text::reasons::run_not_started(held.record.issue, claim_id, &ending.reason);
    say(false, &line);
    Ok(exit::run::NOT_STARTED)
}
