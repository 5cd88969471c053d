//! A live thirdshift Command's place on its issue: the first `observe` of its host that sees it
//! alive posts its adoption record there (`protocol::record::adopt`), once. That comment's id is
//! where the Command stands among the Runs working on the issue (`protocol::collision`): a
//! direct `thirdshift <issue-url>` run started beside a Pickup, or a second machine's Command,
//! is seen later and so collides. A pass sees its host's Commands in the order their processes
//! started (one machine's start ticks), so two Commands of one host are placed as they began.
//!
//! Posted through `store::post_record` (exactly once, found again after an unknown outcome),
//! then noted in the state folder (`adopted/<claim id>.adopt`), so later passes ask nothing. A
//! post that fails is tried again by the next pass; the Command is judged and reported either way.
//! It stops nothing (`stop_adopted` does, for a collision under `on_collision: stop`).

use crate::context::Ctx;
use crate::protocol::record::{AdoptRecord, Kind};
use crate::snapshot::Snapshot;
use crate::text::ToComment;
use crate::thirdshift::Adopted;

/// The state folder's note of an adoption this host posted.
pub const NOTE: &str = "adopt";

/// Posts the adoption record of live Command `a` unless its issue already holds one (as the
/// snapshot shows it, or as this host noted); errors are logged, never fatal to the pass.
pub async fn place(ctx: &Ctx, snapshot: &Snapshot, a: &Adopted) {
    let id = &a.claim.claim_id;
    let issue = a.claim.issue;
    let shown = snapshot
        .issue(issue)
        .is_some_and(|i| i.ownership.adoption(id).is_some());
    if shown || ctx.state.adopted_note(id, NOTE).is_some() {
        return;
    }
    let record = AdoptRecord {
        claim_id: id.clone(),
        issue,
        kind: a.facts.kind.clone(),
        command: a.evidence(&ctx.host),
        seen_at: chrono::Utc::now(),
    };
    let posted = crate::store::post_record(ctx, issue, id, Kind::Adopt, &record.to_comment()).await;
    match posted {
        Ok(c) => {
            tracing::info!(claim = %id, issue, comment = c.id, "thirdshift Command's place recorded");
            if let Err(e) = ctx
                .state
                .save_adopted_note(id, NOTE, c.id.to_string().as_bytes())
            {
                tracing::warn!(claim = %id, "could not note the adoption record: {e:#}");
            }
        }
        Err(e) => {
            tracing::warn!(claim = %id, issue, "adoption record not posted: {e:#}; the next pass tries again")
        }
    }
}
