//! What a companion does once started (`companion --claim ID --run PID:TICKS [--issue N]`,
//! started by `context::companion` for a Run of ours, or by `observe` for a live thirdshift
//! Command, `--issue` naming its issue): it waits for the process to end (a pidfd), and then,
//! unless the Run ended its own Claim (or the Command ended normally: its host no longer reports
//! it), runs this host's `observe` and a reconcile pass, and writes the live view: the same
//! evidence as any pass. While processes of the Run still write ("writers alive"), it waits for
//! those to end too, and passes again. A companion holds its Run's turn while it lives, so at
//! most one watches a Run, and `observe` can say which Runs are watched. When the pass ended the
//! Claim as a Continuation, it starts the Continuation itself, as pickup would take the issue
//! (`pickup::carry_on`: a free slot here, the issue still Ready), with the dead Run's own command
//! (kept in its local record) and kind and Harness; the new Run resumes the agent session from
//! the end record as any Continuation does. It lives here, on top, because it runs other use
//! cases; it decides nothing of its own.

use crate::context::Ctx;
use crate::host::{LocalStatus, ProcessIdentity};
use crate::pickup::{carry_on, CarriedOn, Launch};
use crate::protocol::record::{ClaimState, Outcome, Verdict};
use crate::reconcile::{Action, PassReport};

/// How many passes a companion makes once its Run is gone before it leaves the Claim to the
/// host's next pass (a pass can fail: GitHub down, the budget within its reserve).
const PASSES: u32 = 5;

/// `companion --claim ID --run PID:TICKS [--issue N]`: waits for the Run (a thirdshift Command
/// on issue `command_issue`), then passes until its Claim is ended or nothing more can be done
/// here, and carries a Continuation on. Exit 0 either way.
pub async fn watch(
    ctx: &Ctx,
    claim_id: &str,
    run: ProcessIdentity,
    command_issue: Option<u64>,
) -> anyhow::Result<()> {
    let Some(_turn) = crate::context::companion::take_turn(ctx, claim_id)? else {
        return Ok(());
    };
    crate::host::wait_for_exit(run).await;
    say(claim_id, &format!("the Run's process {} ended", run.pid));
    for _ in 0..PASSES {
        if ended(ctx, claim_id, command_issue).await? {
            say(claim_id, "the Claim is ended: nothing left to do");
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
                say(
                    claim_id,
                    &format!("processes of the Run still write ({pids:?}): waiting"),
                );
                for pid in pids {
                    if let Some(p) = ProcessIdentity::of(pid) {
                        crate::host::wait_for_exit(p).await;
                    }
                }
            }
            Some(Verdict::Dead { evidence, .. }) => {
                say(claim_id, &format!("observe: dead: {evidence}"));
                let pass = reconcile(ctx, claim_id).await;
                if let Some(n) = pass.as_ref().and_then(|p| continued(p, claim_id)) {
                    say(claim_id, &format!("carrying #{n} on as a Continuation"));
                    continuation(ctx, claim_id, n).await;
                    return Ok(());
                }
            }
            // Not this host's to judge any more, or alive: nothing for a companion to do.
            Some(Verdict::Alive) | None => {
                say(
                    claim_id,
                    "alive, or not this host's to judge: nothing to do",
                );
                return Ok(());
            }
        }
    }
    say(claim_id, "left to the host's next pass");
    Ok(())
}

/// One line of what the companion did, into its log (`logs/companion-<claim id>.log`, its
/// stdout): a person reading why a Claim ended finds it there.
fn say(claim_id: &str, what: &str) {
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ");
    println!(
        "{now} companion of {claim_id}: {}",
        crate::text::for_terminal(what)
    );
}

/// One reconcile pass, and the live view written when it changed; failures are only logged (the
/// next pass, the companion's or the host's, goes on).
async fn reconcile(ctx: &Ctx, claim_id: &str) -> Option<PassReport> {
    let pass = match crate::reconcile::pass(ctx).await {
        Ok(pass) => pass,
        Err(e) => {
            tracing::warn!(claim = claim_id, "reconcile: {e:#}");
            return None;
        }
    };
    let summary = crate::view::pass_summary(&pass.plan, &pass.applied);
    say(claim_id, &format!("reconcile: {}", summary.trim_end()));
    let ended = &pass.applied.ended;
    if let Err(e) = crate::view::publish(ctx, &pass.snapshot, &pass.plan, ended).await {
        tracing::warn!(claim = claim_id, "the live view: {e:#}");
    }
    Some(pass)
}

/// The issue of `claim_id` when `pass` ended it as a Continuation (its end record planned
/// `continued` and standing on GitHub).
fn continued(pass: &PassReport, claim_id: &str) -> Option<u64> {
    let planned = pass.plan.actions.iter().any(|a| {
        matches!(a, Action::PostEnd { end, .. }
            if end.claim_id == claim_id && end.outcome == Outcome::Continued)
    });
    let ended = pass.applied.ended.iter().find(|e| e.claim_id == claim_id);
    ended.filter(|_| planned).map(|e| e.issue)
}

/// Starts the Continuation of `claim_id` on issue `n` with the dead Run's own command, kind and
/// Harness, when pickup would take the issue here now; otherwise leaves it to pickup.
async fn continuation(ctx: &Ctx, claim_id: &str, n: u64) {
    let Ok(local) = ctx.state.load(claim_id) else {
        return;
    };
    if local.command.is_empty() {
        tracing::info!(
            claim = claim_id,
            "no command kept (a Claim taken by hand): left to pickup"
        );
        return;
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return tracing::warn!(claim = claim_id, "no Continuation started: {e}"),
    };
    let launch = Launch {
        exe,
        config: ctx.config_path.clone(),
        kind: Some(local.record.kind),
        harness: local.record.harness.clone(),
        cmd: local.command,
    };
    match carry_on(ctx, n, &launch).await {
        Ok(CarriedOn::Started(tried)) => {
            tracing::info!(claim = claim_id, "{}", crate::pickup::line(&tried));
        }
        Ok(CarriedOn::Left(why)) => {
            tracing::info!(claim = claim_id, "Continuation left to pickup: {why}");
        }
        Err(e) => tracing::warn!(claim = claim_id, "Continuation left to pickup: {e:#}"),
    }
}

/// Whether the Claim is ended: by this host's Run itself (its local record says so), or by an end
/// record a complete list of its issue shows (a Run of ours: the issue its local record names;
/// a thirdshift Command: `command_issue`). A Run of ours with no local record is over here.
async fn ended(ctx: &Ctx, claim_id: &str, command_issue: Option<u64>) -> anyhow::Result<bool> {
    let local = ctx.state.load(claim_id).ok();
    if local
        .as_ref()
        .is_some_and(|l| l.status == LocalStatus::Ended)
    {
        return Ok(true);
    }
    let Some(n) = command_issue.or(local.map(|l| l.record.issue)) else {
        return Ok(true);
    };
    let comments = crate::store::read::complete_comments(ctx, n).await?;
    let own = crate::store::ownership(ctx, n, &comments);
    let ours = matches!(own.state(claim_id), ClaimState::Ended { .. });
    Ok(ours || own.adopted_end(claim_id).is_some())
}
