//! The Runs one `observe` pass judges, in one loop: this host's own Claims and the thirdshift
//! Commands it finds in thirdshift's records ([`HostRun`]). Each gets its verdict from this
//! machine's process table and boot id, its work kept when it is dead with no writer left, and
//! what its kind does next: a Command dead with no writer has its Pickup reservation released
//! (`crate::observe::reservation`), even once its end is recorded (a release that failed is
//! tried again until it is settled), and a live one with a cancel request waiting is stopped
//! through thirdshift (`crate::observe::stop_adopted`); a live one gets a companion when none
//! watches it yet, so its death is acted on in seconds (`crate::context::companion`). It ends no
//! Claim.

use anyhow::Context as _;

use crate::context::Ctx;
use crate::host::Judge;
use crate::observe::stop_collided::Collided;
use crate::protocol::record::{
    ClaimRecord, ClaimState, ClaimVerdict, DeathReason, RunOf, Salvage, Verdict,
};
use crate::snapshot::Snapshot;
use crate::thirdshift::Adopted;

/// A Run this host judges: one of ours (its claim as this host recorded it) or a thirdshift
/// Command found in its records.
pub(super) enum HostRun {
    Ours(Box<ClaimRecord>),
    Thirdshift(Box<Adopted>),
}

impl HostRun {
    /// The claim record it is judged by (a Command's is made from its record).
    pub(super) fn claim(&self) -> &ClaimRecord {
        match self {
            HostRun::Ours(c) => c,
            HostRun::Thirdshift(a) => &a.claim,
        }
    }
}

/// What one pass found and did about its Runs.
#[derive(Default)]
pub(super) struct Pass {
    pub verdicts: Vec<ClaimVerdict>,
    pub reservations: Vec<crate::observe::reservation::Settled>,
    pub stops: Vec<crate::observe::stop_adopted::Stop>,
    /// The Commands this pass stopped because another Run keeps their issue, by claim id.
    pub collided: Vec<(String, Collided)>,
}

/// Judges one Run, keeps its work when it is dead, and does what its kind does next; its
/// verdict goes into `pass` unless the Run is a Command already ended on GitHub.
pub(super) async fn observe_run(
    ctx: &Ctx,
    snapshot: &Snapshot,
    judge: &mut Judge,
    run: HostRun,
    pass: &mut Pass,
) -> anyhow::Result<()> {
    match run {
        HostRun::Ours(c) => {
            let verdict = ours(ctx, judge, &c).await?;
            pass.verdicts.push(verdict);
        }
        HostRun::Thirdshift(a) => command(ctx, snapshot, judge, *a, pass).await?,
    }
    Ok(())
}

/// The verdict on one of our Claims; a Run that ended by itself but could not write its end
/// keeps its own outcome and its own salvage.
async fn ours(ctx: &Ctx, judge: &mut Judge, c: &ClaimRecord) -> anyhow::Result<ClaimVerdict> {
    let verdict = judge.verdict(c)?;
    let finished = ctx.state.load(&c.claim_id).ok().and_then(|l| l.finished);
    let kept = match (&verdict, &finished) {
        (_, Some(f)) => f.kept.clone(),
        (Verdict::Dead { reason, .. }, None) => salvage_dead(ctx, c, *reason).await?,
        _ => None,
    };
    Ok(ClaimVerdict {
        claim_id: c.claim_id.clone(),
        issue: c.issue,
        verdict,
        kept,
        run: RunOf::Ours,
        finished: finished.map(Box::new),
        watched: crate::context::companion::watching(ctx, &c.claim_id),
    })
}

/// One thirdshift Command: its verdict and salvage, then its reservation released (dead) or a
/// waiting cancel carried out through thirdshift (alive); no verdict once its end is recorded.
async fn command(
    ctx: &Ctx,
    snapshot: &Snapshot,
    judge: &mut Judge,
    a: Adopted,
    pass: &mut Pass,
) -> anyhow::Result<()> {
    let ended = ended_here(snapshot, &a.claim);
    let settled = ctx
        .state
        .adopted_note(&a.claim.claim_id, crate::observe::reservation::NOTE);
    if ended && settled.is_some() {
        return Ok(());
    }
    let (verdict, named) = adopted_verdict(ctx, judge, &a)?;
    if !ended && matches!(verdict, Verdict::Alive) {
        // its place first: a collision is decided on recorded places alone
        crate::observe::adopt::place(ctx, snapshot, &a).await;
    }
    let (verdict, named, collided, now) =
        collision(ctx, snapshot, &a, ended, (verdict, named)).await?;
    if now {
        let stopped = collided
            .iter()
            .map(|c| (a.claim.claim_id.clone(), c.clone()));
        pass.collided.extend(stopped);
    }
    let mut watched = crate::context::companion::watching(ctx, &a.claim.claim_id);
    let kept = if ended {
        None
    } else {
        keep_dead(ctx, &a, &verdict, named, collided.as_ref()).await?
    };
    // As thirdshift's own Drop: the reservation goes once the work is kept.
    match &verdict {
        Verdict::Dead { .. } => {
            let settled = crate::observe::reservation::release_for(ctx, &a).await;
            pass.reservations.extend(settled);
        }
        Verdict::Alive => {
            if !ended && !watched {
                watched = watch(ctx, &a.claim);
            }
            let stop = crate::observe::stop_adopted::ask(ctx, snapshot, &a);
            pass.stops.extend(stop);
        }
        Verdict::WritersAlive { .. } => {}
    }
    let kept = match kept {
        Some(k) if collided.is_none() && hands_back(ctx, &a, &verdict) => {
            let branch = a.claim.branch.as_deref().unwrap_or_default();
            Some(crate::ending::move_aside(ctx, &a.claim.claim_id, branch, k).await)
        }
        other => other,
    };
    if !ended {
        pass.verdicts.push(ClaimVerdict {
            claim_id: a.claim.claim_id.clone(),
            issue: a.claim.issue,
            verdict,
            kept,
            run: RunOf::thirdshift_of(a.facts),
            finished: None,
            watched,
        });
    }
    Ok(())
}

/// A dead Command's work kept (on its Issue branch, or on a branch of its own when it was
/// stopped for a collision, whose end is then posted here: reconcile ends no Command while
/// another of its issue lives).
async fn keep_dead(
    ctx: &Ctx,
    a: &Adopted,
    verdict: &Verdict,
    named: Option<crate::thirdshift::Named>,
    collided: Option<&Collided>,
) -> anyhow::Result<Option<Salvage>> {
    let kept = match (verdict, named) {
        (Verdict::Dead { reason, .. }, Some(named)) => {
            let (why, own) = match collided {
                Some(c) => (
                    crate::text::collision::salvage_reason(&c.owner.claim_id, &c.owner.host),
                    Some(crate::observe::stop_collided::branch(&a.claim.claim_id)),
                ),
                None => (crate::text::salvage::reason_dead(*reason), None),
            };
            crate::ending::adopted_run(ctx, a, named, why, own).await?
        }
        _ => None,
    };
    if let (Some(c), true) = (collided, verdict.is_dead()) {
        let ending = crate::observe::stop_collided::end(ctx, a, c, kept.as_ref()).await;
        if let Err(e) = ending {
            tracing::warn!(claim = %a.claim.claim_id, "collided Command's end not posted: {e:#}; next pass");
        }
    }
    Ok(kept)
}

/// A Command this host stopped, or stops now, because another Run keeps its issue
/// (`thirdshift.on_collision: stop`, `crate::observe::stop_collided`): judged again after the
/// stop, on a table read afresh, with whether this pass stopped it. A failed decision is logged
/// and leaves it running.
async fn collision(
    ctx: &Ctx,
    snapshot: &Snapshot,
    a: &Adopted,
    ended: bool,
    judged: (Verdict, Option<crate::thirdshift::Named>),
) -> anyhow::Result<(
    Verdict,
    Option<crate::thirdshift::Named>,
    Option<Collided>,
    bool,
)> {
    use crate::observe::stop_collided::{noted, stop_if_later};
    let (verdict, named) = judged;
    let noted = noted(ctx, &a.claim.claim_id);
    if ended || !matches!(verdict, Verdict::Alive) {
        return Ok((verdict, named, noted, false));
    }
    let stopped = match stop_if_later(ctx, snapshot, a).await {
        Ok(Some(c)) => c,
        Ok(None) => return Ok((verdict, named, noted, false)),
        Err(e) => {
            tracing::warn!(claim = %a.claim.claim_id, "collision not decided: {e:#}; next pass");
            return Ok((verdict, named, noted, false));
        }
    };
    let mut fresh = Judge::new([(a.claim.pid, a.claim.start_ticks)])?;
    let (verdict, named) = adopted_verdict(ctx, &mut fresh, a)?;
    Ok((verdict, named, Some(stopped), true))
}

/// Whether a dead Command's worktree goes aside for thirdshift's Continuation: under
/// `thirdshift.on_dead: continue`, once a dead Pickup's reservation no longer holds the issue.
fn hands_back(ctx: &Ctx, a: &Adopted, verdict: &Verdict) -> bool {
    use crate::protocol::config::OnDead;
    ctx.config.thirdshift.on_dead == OnDead::Continue
        && verdict.is_dead()
        && crate::observe::reservation::issue_free(ctx, &a.claim.claim_id)
}

/// Leaves a companion beside a live thirdshift Command that has none yet, so its death is acted
/// on in seconds as a Run of ours is (`crate::context::companion`); whether one was started.
fn watch(ctx: &Ctx, claim: &ClaimRecord) -> bool {
    let process = crate::host::ProcessIdentity {
        pid: claim.pid,
        start_ticks: claim.start_ticks,
    };
    let watched = crate::context::companion::Watched::Command {
        claim_id: &claim.claim_id,
        issue: claim.issue,
        process,
    };
    let started = crate::context::companion::start(ctx, watched);
    if started {
        tracing::info!(claim = %claim.claim_id, "a companion watches this thirdshift Command");
    }
    started
}

/// Salvages the worktree of a Claim proven dead with no writer left (never before): once per
/// Claim, remembered in its local record so later passes report the same result (`crate::ending::keep`).
/// Before the first salvage the Claim is checked still active on a complete comment list: a
/// stale list can hide the end record of a Run that ended by itself (done) and then exited, and
/// its worktree must not be committed and pushed as a failed run.
async fn salvage_dead(
    ctx: &Ctx,
    claim: &ClaimRecord,
    reason: DeathReason,
) -> anyhow::Result<Option<Salvage>> {
    let stored = ctx.state.load(&claim.claim_id).ok().and_then(|l| l.salvage);
    if claim.worktree.is_some() && stored.is_none() && !still_active(ctx, claim).await? {
        tracing::info!(claim = %claim.claim_id, "already ended: its worktree is not salvaged");
        return Ok(None);
    }
    crate::ending::stopped_run(ctx, claim, crate::text::salvage::reason_dead(reason)).await
}

/// Whether `claim` has no end record on a list holding every comment of its issue.
async fn still_active(ctx: &Ctx, claim: &ClaimRecord) -> anyhow::Result<bool> {
    let comments = crate::store::read::complete_comments(ctx, claim.issue)
        .await
        .context("checking that a dead Run's Claim is still active before salvaging its work")?;
    let own = crate::store::ownership(ctx, claim.issue, &comments);
    Ok(!matches!(
        own.state(&claim.claim_id),
        ClaimState::Ended { .. }
    ))
}

/// The verdict on a thirdshift Command: as on our Claims, except that a dead Command whose
/// Harness (carrying thirdshift's session marker, in the Command's worktree, or in one on its
/// Issue branch when that is not known) still runs has writers alive (`thirdshift::writers`).
/// For a dead Command with an Issue branch, also what its Command log names as its worktree
/// (read once, for the writers and for the salvage).
fn adopted_verdict(
    ctx: &Ctx,
    judge: &mut Judge,
    a: &Adopted,
) -> anyhow::Result<(Verdict, Option<crate::thirdshift::Named>)> {
    let verdict = judge.verdict(&a.claim)?;
    let Verdict::Dead { evidence, .. } = &verdict else {
        return Ok((verdict, None));
    };
    let repo = ctx.remote_repo();
    let (Some(named), Some(branch)) = (
        crate::thirdshift::of_command(a, &repo),
        a.claim.branch.as_deref(),
    ) else {
        return Ok((verdict, None));
    };
    let worktree = match &named {
        crate::thirdshift::Named::Worktree(path) => Some(path.as_path()),
        _ => None,
    };
    let pids = crate::thirdshift::writers(&repo, branch, a.claim.start_ticks, worktree);
    if pids.is_empty() {
        return Ok((verdict, Some(named)));
    }
    let evidence = crate::text::reasons::adopted_writers(evidence, branch, &pids);
    Ok((Verdict::WritersAlive { pids, evidence }, Some(named)))
}

/// Whether the thirdshift Command `claim` stands for was ended by an end record the snapshot
/// shows: it leaves the report then (thirdshift's record stays unfinished for ever).
fn ended_here(snapshot: &Snapshot, claim: &ClaimRecord) -> bool {
    snapshot
        .issue(claim.issue)
        .is_some_and(|i| i.ownership.adopted_end(&claim.claim_id).is_some())
}

/// This host's unfinished thirdshift Commands on the repository (docs/thirdshift.md), in the
/// order their processes started (so two on one issue are placed as they began).
pub(super) fn adopted(ctx: &Ctx) -> Vec<Adopted> {
    let repo = ctx.client.repo();
    let mut found = crate::thirdshift::on_this_host(
        &ctx.config.thirdshift,
        &ctx.host,
        &crate::host::system_hostname(),
        (&repo.owner, &repo.name),
    );
    found.sort_by_key(|a| (a.claim.boot_id.clone(), a.claim.start_ticks));
    found
}
