//! Fencing: every stage change of a Run re-checks on GitHub that its Claim still owns the issue
//! (the claim's comment id is the token) before editing the claim record, from a comment list
//! that shows the claim's own comment (`store::read`: a stale list could hide an earlier claim). A Claim that was ended
//! or superseded gets `Exit::not_ours` (exit 4) with the reason, and the Run must stop.
//! It does not end Claims (that is `run::release`).

use chrono::Utc;

use crate::context::Ctx;
use crate::exit::Exit;
use crate::host::LocalClaim;
use crate::protocol::record::{ClaimRecord, ClaimState, ClaimView};
use crate::text::ToComment;

/// A change to the claim record.
#[derive(Clone, Debug, Default)]
pub struct StageUpdate {
    pub name: String,
    pub agent_session: Option<String>,
    pub log: Option<String>,
    pub worktree: Option<String>,
    /// The Issue branch the Run works on now.
    pub branch: Option<String>,
    pub session_id: Option<u32>,
    /// CMD's start ticks, recorded with its session.
    pub session_start_ticks: Option<u64>,
}

/// The claim's current view on GitHub if it still owns its issue, else `Exit::not_ours` naming
/// why.
pub async fn check_ours(ctx: &Ctx, local: &LocalClaim) -> anyhow::Result<ClaimView> {
    let n = local.record.issue;
    let id = &local.record.claim_id;
    let comments = crate::store::read::claim_comments(ctx, local).await?;
    let own = crate::store::ownership(ctx, n, &comments);
    let why = match own.state(id) {
        ClaimState::Owner(view) => return Ok(view.clone()),
        ClaimState::Superseded { by, .. } => format!(
            "claim {id} no longer owns issue #{n}: claim {} on host {} (comment {}) is earlier; stop \
             now",
            by.record.claim_id, by.record.host, by.comment_id
        ),
        ClaimState::Ended { end, .. } => format!(
            "claim {id} on issue #{n} was ended ({}) by @{} in comment {}: {}; stop now",
            end.record.outcome.as_str(),
            end.author,
            end.comment_id,
            end.record.reason
        ),
        ClaimState::Unknown => format!(
            "claim {id} is not on issue #{n} (its comment is gone or not trusted); stop now"
        ),
    };
    Err(Exit::not_ours(why).into())
}

/// Records a new stage (and session, log) in the claim record, if the Claim is still ours. A
/// change that would make a record its readers refuse (an empty stage, one too long for a
/// comment) is a usage error before anything is read or written.
pub async fn stage(ctx: &Ctx, claim_id: &str, update: &StageUpdate) -> anyhow::Result<()> {
    if update.session_id.is_none() {
        wait_for_session(ctx, claim_id).await;
    }
    let local = ctx.state.load(claim_id)?;
    checked(&applied(&local.record, update))?;
    let view = check_ours(ctx, &local).await?;
    let record = applied(&view.record, update);
    if record != view.record {
        let body = checked(&record)?;
        ctx.client.update_comment(view.comment_id, &body).await?;
    }
    ctx.state.update(claim_id, |c| c.record = record)?;
    tracing::info!(claim = claim_id, stage = %update.name, "stage recorded");
    Ok(())
}

/// `record` with `update` applied.
fn applied(record: &ClaimRecord, update: &StageUpdate) -> ClaimRecord {
    let mut record = record.clone();
    if record.stage != update.name {
        record.stage = update.name.clone();
        record.stage_since = Utc::now();
    }
    if let Some(s) = &update.agent_session {
        record.agent_session = Some(s.clone());
    }
    if let Some(log) = &update.log {
        if !record.logs.contains(log) {
            record.logs.push(log.clone());
        }
    }
    if let Some(w) = &update.worktree {
        record.worktree = Some(w.clone());
    }
    if let Some(b) = &update.branch {
        record.branch = Some(b.clone());
    }
    if let Some(sid) = update.session_id {
        record.session_id = Some(sid);
        record.session_start_ticks = update.session_start_ticks;
    }
    record
}

/// The claim comment for `record`, or a usage error saying why readers would refuse it.
fn checked(record: &ClaimRecord) -> Result<String, Exit> {
    match record.write_refusal() {
        None => Ok(record.to_comment()),
        Some(why) => Err(Exit::usage(format!(
            "stage `{}` is not recorded: {why}; claim {} and its record on GitHub are unchanged",
            crate::protocol::record::field::fit(&record.stage, 60),
            record.claim_id
        ))),
    }
}

/// Inside a Run, the Run records its command's session in the claim record right after starting
/// it; a `stage` from the command at that moment would edit the record from a read taken before
/// that edit, and one of the two updates would be lost. So a command's `stage` waits (briefly,
/// bounded) until the Run has recorded the session in the local record. Outside a Run, or for a
/// Claim taken with `claim`, there is nothing to wait for.
async fn wait_for_session(ctx: &Ctx, claim_id: &str) {
    let inside_run = std::env::var("THIRDSHIFT_CLAIM_ID").is_ok_and(|id| id == claim_id)
        && std::env::var_os("THIRDSHIFT_CLAIM_COMMENT_ID").is_some();
    if !inside_run {
        return;
    }
    for _ in 0..300 {
        match ctx.state.load(claim_id) {
            Ok(local) if local.record.session_id.is_none() => {}
            _ => return,
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tracing::warn!(
        claim = claim_id,
        "the Run has not recorded its session yet; going on"
    );
}
