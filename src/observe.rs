//! `observe`: this host's view of its own Runs. It judges, in one loop (`runs.rs`), every active
//! Claim naming this host (on GitHub, or in the local state folder) and every unfinished
//! thirdshift Command in this machine's records, from this machine's process table and boot id,
//! keeps a dead one's work, and writes the verdicts into this host's report on the registry
//! issue, editing the report only when its content changed. The report also carries this host's
//! capacity and its slots in use (live Claims across every repository it serves). It ends no
//! Claim on its verdicts: reconcile does, on this evidence. The Claims it ends are those it
//! stopped itself: on a cancel request (`cancel.rs`), carried out first and, once ended, left
//! out of the report, and a thirdshift Command that collides with the Run that keeps its issue,
//! under `thirdshift.on_collision: stop` (`stop_collided.rs`). A live Command's place on its
//! issue is posted once (`adopt.rs`).

mod adopt;
mod cancel;
mod reservation;
mod runs;
mod stop_adopted;
mod stop_collided;

pub use cancel::{cancel, Asked};
pub use stop_collided::Collided;

use runs::HostRun;

use anyhow::Context as _;

use crate::context::Ctx;
use crate::host::capacity;
use crate::host::Judge;
use crate::host::{LocalClaim, LocalStatus};
use crate::protocol::record::{ClaimRecord, ClaimState, HostReport, Kind};
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
    /// The thirdshift Commands it stopped because another Run keeps their issue, by claim id.
    pub collided: Vec<(String, Collided)>,
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
    let runs: Vec<HostRun> = claims
        .into_iter()
        .map(|c| HostRun::Ours(Box::new(c)))
        .chain(
            runs::adopted(ctx)
                .into_iter()
                .map(|a| HostRun::Thirdshift(Box::new(a))),
        )
        .collect();
    let owners = runs
        .iter()
        .map(HostRun::claim)
        .chain(local.iter().map(|l| &l.record))
        .map(|c| (c.pid, c.start_ticks));
    let mut judge = Judge::new(owners)?;
    let mut pass = runs::Pass::default();
    for run in runs {
        runs::observe_run(ctx, &snapshot, &mut judge, run, &mut pass).await?;
    }
    pass.stops
        .extend(crate::observe::stop_adopted::record_endings(ctx).await);
    let mut verdicts = pass.verdicts;
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
        reservations: pass.reservations,
        stops: pass.stops,
        collided: pass.collided,
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

/// The claim as this host recorded it when it has a local record (GitHub's copy can be edited
/// by any write collaborator: its PID, session or worktree must not decide what this host
/// judges, signals or salvages), else GitHub's copy, to judge and show only.
fn local_values(ctx: &Ctx, github: &ClaimRecord) -> ClaimRecord {
    match ctx.state.load(&github.claim_id) {
        Ok(local) if local.record.issue == github.issue => local.record,
        _ => github.clone(),
    }
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
    use crate::protocol::record::{ClaimVerdict, Verdict};

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
                    watched: false,
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
