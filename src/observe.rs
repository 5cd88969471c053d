//! `observe`: this host's view of its own Claims. For every active Claim naming this host (on
//! GitHub, or in the local state folder) it judges the owner from this machine's process table
//! and boot id, and writes the verdicts into this host's report on the registry issue, editing
//! the report only when its content changed. The report also carries this host's capacity and
//! its slots in use (live Claims across every repository it serves). It ends no Claim on its
//! verdicts: reconcile does, on this evidence. The one Claim it ends is one it stopped on a
//! cancel request (`crate::observe::cancel`): those are carried out first and, once ended, left out of the
//! report.

mod cancel;
mod reservation;
mod stop_adopted;

pub use cancel::{cancel, Asked};

use anyhow::Context as _;

use crate::context::Ctx;
use crate::host::capacity;
use crate::host::Judge;
use crate::host::{LocalClaim, LocalStatus};
use crate::protocol::record::{
    ClaimRecord, ClaimState, ClaimVerdict, DeathReason, HostReport, Kind, Salvage, Verdict,
};
use crate::snapshot::{ReportView, Snapshot};
use crate::store::post_record;
use crate::text::ToComment;

/// What an observe pass saw and did.
#[derive(Clone, Debug)]
pub struct Observed {
    pub report: HostReport,
    /// The cancel requests this pass carried out (or tried to).
    pub cancels: Vec<crate::observe::cancel::Carried>,
    /// The Pickup reservations of dead thirdshift Commands this pass released or left.
    pub reservations: Vec<crate::observe::reservation::Settled>,
    /// What it did about cancelled thirdshift Commands (`thirdshift stop` started, ended).
    pub stops: Vec<crate::observe::stop_adopted::Stop>,
    pub registry_issue: u64,
    pub report_written: bool,
}

/// Observes this host's Claims and writes its report; returns what it found.
pub async fn observe(ctx: &Ctx) -> anyhow::Result<Observed> {
    let _turn = crate::host::Turn::take(&ctx.state, "observe").await?;
    let local = active_local(ctx);
    let extra: Vec<u64> = local.iter().map(|c| c.record.issue).collect();
    let snapshot = crate::snapshot::read_any(ctx, &extra).await?;
    crate::snapshot::warn_untrusted(&snapshot, &ctx.me);
    let claims = claims_to_judge(ctx, &snapshot, &local)?;
    let (claims, cancels) = crate::observe::cancel::carry_out(ctx, &snapshot, claims).await?;
    let adopted = adopted(ctx);
    let owners = claims
        .iter()
        .chain(local.iter().map(|l| &l.record))
        .chain(adopted.iter().map(|a| &a.claim))
        .map(|c| (c.pid, c.start_ticks));
    let mut judge = Judge::new(owners)?;
    let mut verdicts = Vec::new();
    for c in &claims {
        let verdict = judge.verdict(c)?;
        // A Run that ended by itself but could not write its end: its own outcome, its own salvage.
        let finished = ctx.state.load(&c.claim_id).ok().and_then(|l| l.finished);
        let kept = match (&verdict, &finished) {
            (_, Some(f)) => f.kept.clone(),
            (Verdict::Dead { reason, .. }, None) => salvage_dead(ctx, c, *reason).await?,
            _ => None,
        };
        verdicts.push(ClaimVerdict {
            claim_id: c.claim_id.clone(),
            issue: c.issue,
            verdict,
            kept,
            run: Default::default(),
            finished: finished.map(Box::new),
        });
    }
    let mut adopted = adopted_verdicts(ctx, &snapshot, &mut judge, adopted).await?;
    verdicts.append(&mut adopted.verdicts);
    adopted
        .stops
        .extend(crate::observe::stop_adopted::record_endings(ctx).await);
    verdicts.sort_by(|a, b| a.claim_id.cmp(&b.claim_id));
    let in_use = judge.live_claims(&ctx.state)?.len();
    let report = HostReport {
        host: ctx.host.host.clone(),
        machine_id: ctx.host.machine_id.clone(),
        boot_id: ctx.host.boot_id.clone(),
        claims: verdicts,
        capacity: Some(capacity(&ctx.config, &ctx.host.host)),
        slots_used: Some(u32::try_from(in_use).unwrap_or(u32::MAX)),
        booted_at: booted_at(ctx, &snapshot),
        refresh_secs: Some(ctx.config.observe.refresh_secs()),
        written_at: Some(chrono::Utc::now()),
    };
    let (registry_issue, report_written) = write_report(ctx, &snapshot, &report).await?;
    Ok(Observed {
        report,
        cancels,
        reservations: adopted.reservations,
        stops: adopted.stops,
        registry_issue,
        report_written,
    })
}

/// When this host booted: the time its last report gave for the same boot id, else read now
/// (so a second's jitter in the kernel's boot time never rewrites the report).
fn booted_at(ctx: &Ctx, snapshot: &Snapshot) -> Option<chrono::DateTime<chrono::Utc>> {
    let last = snapshot
        .report_of(&ctx.host.host, &ctx.host.machine_id)
        .filter(|r| r.report.boot_id == ctx.host.boot_id)
        .and_then(|r| r.report.booted_at);
    last.or_else(crate::host::boot_time)
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

/// The claim as this host recorded it when it has a local record (GitHub's copy can be edited
/// by any write collaborator: its PID, session or worktree must not decide what this host
/// judges, signals or salvages), else GitHub's copy, to judge and show only.
fn local_values(ctx: &Ctx, github: &ClaimRecord) -> ClaimRecord {
    match ctx.state.load(&github.claim_id) {
        Ok(local) if local.record.issue == github.issue => local.record,
        _ => github.clone(),
    }
}

/// What `observe` did about this host's thirdshift Commands.
#[derive(Default)]
struct AdoptedPass {
    verdicts: Vec<ClaimVerdict>,
    reservations: Vec<crate::observe::reservation::Settled>,
    stops: Vec<crate::observe::stop_adopted::Stop>,
}

/// The verdicts on this host's thirdshift Commands, and their salvages; a Command dead with no
/// writer left also has its Pickup reservation released (`crate::observe::reservation`), even once its
/// end is recorded (a release that failed is tried again until it is settled); a live one with
/// a cancel request waiting is stopped through thirdshift (`crate::observe::stop_adopted`).
async fn adopted_verdicts(
    ctx: &Ctx,
    snapshot: &Snapshot,
    judge: &mut Judge,
    adopted: Vec<crate::thirdshift::Adopted>,
) -> anyhow::Result<AdoptedPass> {
    let mut pass = AdoptedPass::default();
    for a in adopted {
        let ended = ended_here(snapshot, &a.claim);
        let settled = ctx
            .state
            .adopted_note(&a.claim.claim_id, crate::observe::reservation::NOTE);
        if ended && settled.is_some() {
            continue;
        }
        let (verdict, named) = adopted_verdict(ctx, judge, &a)?;
        let kept = match (&verdict, named) {
            (Verdict::Dead { reason, .. }, Some(named)) if !ended => {
                let why = crate::text::salvage::reason_dead(*reason);
                crate::ending::adopted_run(ctx, &a, named, why).await?
            }
            _ => None,
        };
        // As thirdshift's own Drop: the reservation goes once the work is kept.
        match &verdict {
            Verdict::Dead { .. } => {
                let settled = crate::observe::reservation::release_for(ctx, &a).await;
                pass.reservations.extend(settled);
            }
            Verdict::Alive => pass
                .stops
                .extend(crate::observe::stop_adopted::ask(ctx, snapshot, &a)),
            Verdict::WritersAlive { .. } => {}
        }
        if ended {
            continue;
        }
        pass.verdicts.push(ClaimVerdict {
            claim_id: a.claim.claim_id.clone(),
            issue: a.claim.issue,
            verdict,
            kept,
            run: crate::protocol::record::RunOf::thirdshift_of(a.facts),
            finished: None,
        });
    }
    Ok(pass)
}

/// The verdict on a thirdshift Command: as on our Claims, except that a dead Command whose
/// Harness (carrying thirdshift's session marker, in the Command's worktree, or in one on its
/// Issue branch when that is not known) still runs has writers alive (`thirdshift::writers`).
/// For a dead Command with an Issue branch, also what its Command log names as its worktree
/// (read once, for the writers and for the salvage).
fn adopted_verdict(
    ctx: &Ctx,
    judge: &mut Judge,
    a: &crate::thirdshift::Adopted,
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

/// This host's unfinished thirdshift Commands on the repository (docs/thirdshift.md).
fn adopted(ctx: &Ctx) -> Vec<crate::thirdshift::Adopted> {
    let repo = ctx.client.repo();
    crate::thirdshift::on_this_host(
        &ctx.config.thirdshift,
        &ctx.host,
        &crate::host::system_hostname(),
        (&repo.owner, &repo.name),
    )
}

/// Local Claims that may still be active.
fn active_local(ctx: &Ctx) -> Vec<LocalClaim> {
    let repo = ctx.client.repo().to_string();
    ctx.state
        .all()
        .into_iter()
        .filter(|c| c.repo == repo)
        .filter(|c| matches!(c.status, LocalStatus::Active | LocalStatus::Posting))
        .collect()
}

/// The active claims naming this host (GitHub's copy wins over the local one); local records
/// whose claim GitHub shows ended are marked ended.
fn claims_to_judge(
    ctx: &Ctx,
    snapshot: &Snapshot,
    local: &[LocalClaim],
) -> anyhow::Result<Vec<ClaimRecord>> {
    let mut claims: Vec<ClaimRecord> = snapshot
        .issues
        .iter()
        .flat_map(|i| i.ownership.active())
        .filter(|c| c.record.host == ctx.host.host && c.record.machine_id == ctx.host.machine_id)
        .map(|c| local_values(ctx, &c.record))
        .collect();
    for l in local {
        let id = &l.record.claim_id;
        let state = snapshot
            .issue(l.record.issue)
            .map(|i| i.ownership.state(id));
        match state {
            Some(ClaimState::Ended { .. }) => {
                ctx.state.update(id, |c| c.status = LocalStatus::Ended)?;
            }
            Some(ClaimState::Owner(_)) | Some(ClaimState::Superseded { .. }) => {}
            // Not on GitHub (never posted, or not visible yet): nothing to report.
            _ => {}
        }
    }
    claims.sort_by(|a, b| a.claim_id.cmp(&b.claim_id));
    claims.dedup_by(|a, b| a.claim_id == b.claim_id);
    Ok(claims)
}

/// Writes the report if it differs from the one on GitHub, or if that one is older than the
/// refresh interval (`observe.refresh_mins`), so a silent host can be told from a quiet one;
/// returns (registry issue, written).
async fn write_report(
    ctx: &Ctx,
    snapshot: &Snapshot,
    report: &HostReport,
) -> anyhow::Result<(u64, bool)> {
    let registry = match snapshot.registry_issue {
        Some(n) => n,
        None => crate::store::registry::find_or_create(ctx).await?,
    };
    let existing = snapshot.report_of(&report.host, &report.machine_id);
    let refresh = chrono::Duration::seconds(report.refresh_secs.unwrap_or(0) as i64);
    let fresh = |e: &ReportView| chrono::Utc::now() - e.updated_at < refresh;
    if existing.is_some_and(|e| e.report.same_as(report) && fresh(e)) {
        return Ok((registry, false));
    }
    let body = report.to_comment();
    fits(report, &body)?;
    match existing {
        Some(e) => {
            ctx.client
                .update_comment(e.comment_id, &body)
                .await
                .context("editing this host's report")?;
        }
        None => {
            post_record(ctx, registry, &report.host, Kind::HostReport, &body)
                .await
                .context("posting this host's report")?;
        }
    }
    tracing::info!(host = %report.host, claims = report.claims.len(), "host report written");
    Ok((registry, true))
}

/// Refuses a report every reader would refuse (too large: a host with about 1,000 Claims or
/// more), rather than writing one that would leave all of its Claims awaiting this host.
fn fits(report: &HostReport, body: &str) -> anyhow::Result<()> {
    match crate::protocol::record::write_refusal(body) {
        None => Ok(()),
        Some(why) => anyhow::bail!(
            "this host's report on {} Claims is not written: {why}; readers would ignore it and \
             leave every Claim awaiting this host. A host report holds about 1,000 Claims",
            report.claims.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_of(claims: usize) -> HostReport {
        HostReport {
            host: "h".into(),
            machine_id: "m".into(),
            boot_id: "b".into(),
            claims: (0..claims)
                .map(|k| ClaimVerdict {
                    claim_id: format!("c-{k:016x}"),
                    issue: k as u64 + 1,
                    verdict: Verdict::Alive,
                    kept: None,
                    run: Default::default(),
                    finished: None,
                })
                .collect(),
            capacity: None,
            slots_used: None,
            booted_at: None,
            refresh_secs: None,
            written_at: None,
        }
    }

    #[test]
    fn a_report_too_large_for_readers_is_refused_with_the_reason() {
        // given a host with a few Claims, and one with five thousand
        // when their reports are checked
        // then the small one fits and the large one is refused, naming the count and the limit
        let (small, large) = (report_of(3), report_of(5_000));
        assert!(fits(&small, &small.to_comment()).is_ok());
        let err = fits(&large, &large.to_comment()).unwrap_err().to_string();
        assert!(
            err.contains("5000 Claims") && err.contains("limit"),
            "{err}"
        );
    }
}
