//! `pickup [--max N] [--kind K] [--harness H] -- CMD...`: fill this host's free capacity with
//! Ready issues, one detached Run each (`run --issue N [--kind K] [--harness H] -- CMD...`), then
//! exit. Free capacity is the host's capacity minus its live Claims (local records
//! across every repository, checked alive in the process table); when nothing is free, pickup says
//! so and sends no request to GitHub at all. Otherwise it lists the open Ready issues and keeps
//! those a Run may take (no `in-progress`, hand-off or configured skip label), in the configured
//! order; with any left, at its Failure limit (`pickup.failure_limit` open issues this host handed
//! to people for failing) it says so and takes nothing. Else it skips an issue with an active
//! claim or held by its latest end (`pickup/holds.rs`) and starts `run --issue N -- CMD...` for
//! each until the free slots are filled, waiting only until that Run has won or lost its Claim
//! (a lost race moves on to the next issue).
//!
//! Runs are started in their own session, with no stdin, their output appended to a log in the
//! state folder and without `RUNNER_TRACKING_ID`, so neither the end of a CI job nor the end of
//! this process stops them. Pickup holds no Claim itself: `run` takes it through the claim
//! protocol. Two pickups on one host take turns (a lock file in the state folder), so they cannot
//! both count the same free slot. Starting and watching one Run is `pickup/launch.rs`.

mod carry_on;
mod holds;
mod launch;

use anyhow::Context as _;
use tracing::Instrument as _;

use crate::context::{Ctx, Options};
use crate::exit::{ERROR, OK};
use crate::github::Issue;
use crate::host::{capacity, capacity_source, live_claims};
use crate::host::{HostIdentity, ProcessTable, StateDir};
use crate::protocol::config::{Config, PickupOrder};
use crate::protocol::record::{RunKind, StartedBy};
pub use carry_on::{carry_on, CarriedOn};
pub use launch::{attempt, Attempt, Launch, Tried, CLAIM_WAIT};

/// A pass stops after this many Runs failed before claiming: something is broken for all.
const MAX_FAILURES: usize = 3;

/// This host's slots at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slots {
    pub host: String,
    pub capacity: u32,
    /// Where the capacity came from (`configured`, or derived).
    pub source: &'static str,
    /// Live Claims of this host, across every repository.
    pub in_use: u32,
}

impl Slots {
    /// Reads this host's capacity and live Claims; no GitHub.
    pub fn read(config: &Config, host: &HostIdentity, state: &StateDir) -> anyhow::Result<Slots> {
        let table = ProcessTable::read().context("reading this host's process table")?;
        let boot = crate::host::boot_id().unwrap_or_default();
        let live = live_claims(state, &table, &boot);
        Ok(Slots {
            host: host.host.clone(),
            capacity: capacity(config, &host.host),
            source: capacity_source(config, &host.host),
            in_use: u32::try_from(live.len()).unwrap_or(u32::MAX),
        })
    }

    /// Runs this pass may start: the free slots, at most `max`.
    pub fn free(&self, max: Option<u32>) -> u32 {
        let free = self.capacity.saturating_sub(self.in_use);
        max.map_or(free, |m| free.min(m))
    }

    /// Why nothing may be started now, if nothing may.
    pub fn skip_reason(&self, max: Option<u32>) -> Option<String> {
        if self.free(max) > 0 {
            return None;
        }
        if max == Some(0) {
            return Some(format!("host {}: --max 0; pickup skipped", self.host));
        }
        Some(format!(
            "host {} is at capacity ({} of {} slots in use, capacity {}); pickup skipped",
            self.host, self.in_use, self.capacity, self.source
        ))
    }
}

/// What a pickup pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickupReport {
    pub slots: Slots,
    /// Set when the pass started nothing: nothing was free (and GitHub was asked nothing), or
    /// the host is at its Failure limit.
    pub skipped: Option<String>,
    /// Ready issues that were left alone because an active claim owns them.
    pub owned: Vec<u64>,
    /// Ready issues left alone because their latest end holds them (`protocol::failures`).
    pub held: Vec<u64>,
    pub tried: Vec<Tried>,
}

impl PickupReport {
    /// Runs started: won, or still claiming when pickup stopped waiting.
    pub fn started(&self) -> usize {
        self.tried
            .iter()
            .filter(|t| matches!(t.attempt, Attempt::Won { .. } | Attempt::Pending { .. }))
            .count()
    }

    /// Runs that failed before they won or lost.
    pub fn failed(&self) -> usize {
        self.tried
            .iter()
            .filter(|t| matches!(t.attempt, Attempt::Failed { .. }))
            .count()
    }
}

/// What `pickup` is asked for: at most `max` Runs of CMD (`cmd`), of `kind` with `harness`.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub max: Option<u32>,
    pub kind: Option<RunKind>,
    pub harness: Option<String>,
    pub cmd: Vec<String>,
}

/// The `pickup` command: checks the slots locally first, so a host at capacity sends no request
/// to GitHub at all; then connects and picks up. Exit 1 when a Run failed to start.
pub async fn command(globals: &Options, args: &Request) -> anyhow::Result<i32> {
    let max = args.max;
    let mut launch = Launch::new(globals.config.clone(), &args.cmd)?;
    launch.kind = args.kind;
    launch.harness.clone_from(&args.harness);
    let config = crate::context::load_config(globals.config.as_deref())?;
    let host = HostIdentity::detect(globals.host.as_deref());
    let state = StateDir::resolve(globals.state_dir.as_deref())?;
    let slots = Slots::read(&config, &host, &state)?;
    if let Some(why) = slots.skip_reason(max) {
        println!("{}", crate::text::for_terminal(&why));
        return Ok(OK);
    }
    let ctx = Ctx::connect(globals, None).await?;
    let report = pickup(&ctx, max, &launch).await?;
    Ok(if report.failed() == 0 { OK } else { ERROR })
}

/// Takes Ready issues up to this host's free capacity (at most `max`), starting one detached Run
/// per won Claim; prints one line per issue. Sends no request when nothing is free.
pub async fn pickup(ctx: &Ctx, max: Option<u32>, launch: &Launch) -> anyhow::Result<PickupReport> {
    let _turn = crate::host::Turn::take(&ctx.state, "pickup").await?;
    let slots = Slots::read(&ctx.config, &ctx.host, &ctx.state)?;
    let mut report = PickupReport {
        skipped: slots.skip_reason(max),
        slots,
        owned: Vec::new(),
        held: Vec::new(),
        tried: Vec::new(),
    };
    if let Some(why) = &report.skipped {
        println!("{}", crate::text::for_terminal(why));
        return Ok(report);
    }
    let ready = ctx
        .client
        .list_issues("open", Some(&ctx.config.labels.ready));
    let candidates = candidates(&ctx.config, ready.await?);
    // The Failure limit is read only when there is something to take: an idle pass stays cheap.
    if let Some(why) = at_failure_limit(ctx, &report.slots, &candidates).await? {
        println!("{}", crate::text::for_terminal(&why));
        report.skipped = Some(why);
        return Ok(report);
    }
    let free = report.slots.free(max) as usize;
    println!(
        "host {}: {} of {} slots in use; taking up to {free} Ready issue(s)",
        report.slots.host, report.slots.in_use, report.slots.capacity
    );
    for issue in candidates {
        if report.started() >= free {
            break;
        }
        if report.failed() >= MAX_FAILURES {
            println!("{MAX_FAILURES} Runs failed before claiming; stopping this pass");
            break;
        }
        let n = issue.number;
        let tried = match take_one(ctx, n, launch, StartedBy::Pickup).await? {
            OneIssue::Owned { host } => {
                println!("#{n}: skipped, claimed by host {host}");
                report.owned.push(n);
                continue;
            }
            OneIssue::Held(why) => {
                println!("{}", crate::text::for_terminal(&why));
                report.held.push(n);
                continue;
            }
            OneIssue::Tried(tried) => tried,
        };
        println!("{}", crate::text::for_terminal(&line(&tried)));
        report.tried.push(tried);
    }
    if report.started() < free && report.failed() < MAX_FAILURES {
        println!("no more Ready issues to take");
    }
    Ok(report)
}

/// What pickup's rules made of one takeable issue.
enum OneIssue {
    /// An active claim owns it (on `host`).
    Owned { host: String },
    /// Its latest end holds it, and why.
    Held(String),
    /// A Run was started on it; how its claim went.
    Tried(Tried),
}

/// One takeable issue by pickup's rules: left when an active claim owns it or its latest end
/// holds it, else a Run started on it, and, when the Run won a Continuation, its start noted in
/// the end record as `by`'s (`carry_on::note_started`).
async fn take_one(ctx: &Ctx, n: u64, launch: &Launch, by: StartedBy) -> anyhow::Result<OneIssue> {
    let comments = ctx.client.list_issue_comments(n).await?;
    let own = crate::store::ownership(ctx, n, &comments);
    if let Some(owner) = &own.owner {
        let host = owner.record.host.clone();
        return Ok(OneIssue::Owned { host });
    }
    if let Some(why) = holds::held(ctx, n, &own, &comments).await? {
        return Ok(OneIssue::Held(why));
    }
    let span = tracing::info_span!("pickup", issue = n);
    let tried = attempt(ctx, n, launch).instrument(span).await?;
    carry_on::note_started(ctx, &own, &tried, by).await;
    Ok(OneIssue::Tried(tried))
}

/// Why this host takes nothing, when it is at its Failure limit (`pickup.failure_limit` open
/// issues it handed to people for failing); never asked when there is no candidate.
async fn at_failure_limit(
    ctx: &Ctx,
    slots: &Slots,
    candidates: &[Issue],
) -> anyhow::Result<Option<String>> {
    if candidates.is_empty() {
        return Ok(None);
    }
    let limit = ctx.config.pickup.failure_limit;
    let failing = holds::failing_here(ctx).await?;
    Ok((failing.len() >= limit as usize)
        .then(|| crate::text::failures::host_at_limit(&slots.host, limit, &failing)))
}

/// The Ready issues a Run may take, in the configured order: open, carrying the ready label, and
/// carrying neither `in-progress`, the hand-off label nor any of `pickup.skip_labels`.
pub fn candidates(config: &Config, issues: Vec<Issue>) -> Vec<Issue> {
    let labels = &config.labels;
    let mut keep: Vec<Issue> = issues
        .into_iter()
        .filter(|i| i.is_open() && i.has_label(&labels.ready))
        .filter(|i| !i.has_label(&labels.in_progress))
        .filter(|i| !config.keeps_agents_off(|l| i.has_label(l)))
        .collect();
    keep.sort_by_key(|i| i.number);
    if config.pickup.order == PickupOrder::HighestFirst {
        keep.reverse();
    }
    keep
}

/// The line printed for one issue tried.
pub fn line(t: &Tried) -> String {
    let (n, log) = (t.issue, t.log.display());
    match &t.attempt {
        Attempt::Won { claim_id, pid } => {
            format!("#{n}: taken, claim {claim_id}, Run PID {pid} (log {log})")
        }
        Attempt::Lost { why } => format!("#{n}: lost ({why}); moving on"),
        Attempt::Failed { code, why } => {
            let code = code.map_or("a signal".to_string(), |c| format!("status {c}"));
            format!("#{n}: the Run failed with {code} before claiming: {why} (log {log})")
        }
        Attempt::Pending { pid } => format!(
            "#{n}: Run PID {pid} started but had not won or lost its claim after {}s; \
             counted as started (log {log})",
            CLAIM_WAIT.as_secs()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(number: u64, labels: &[&str]) -> Issue {
        let labels: Vec<_> = labels
            .iter()
            .map(|l| serde_json::json!({ "name": l }))
            .collect();
        serde_json::from_value(serde_json::json!({
            "number": number,
            "title": format!("issue {number}"),
            "state": "open",
            "labels": labels,
            "user": null,
            "updated_at": "2026-01-01T00:00:00Z",
        }))
        .expect("an issue")
    }

    fn numbers(issues: &[Issue]) -> Vec<u64> {
        issues.iter().map(|i| i.number).collect()
    }

    #[test]
    fn only_ready_issues_without_a_skip_label_are_candidates_lowest_first() {
        // given Ready issues, some also in progress, handed to people, or in triage (any case)
        let issues = vec![
            issue(9, &["ready-for-agent"]),
            issue(2, &["ready-for-agent", "in-progress"]),
            issue(3, &["ready-for-agent", "ready-for-human"]),
            issue(4, &["ready-for-agent", "Needs-Triage"]),
            issue(5, &["ready-for-agent", "wontfix"]),
            issue(6, &["needs-info"]),
            issue(7, &["ready-for-agent", "bug"]),
        ];
        // when candidates are chosen with the defaults
        let picked = candidates(&Config::default(), issues.clone());
        // then only the plain Ready ones remain, lowest number first
        assert_eq!(numbers(&picked), [7, 9]);
        // and with the newest first, and a custom hand-off label always skipped
        let mut config = Config::default();
        config.pickup.order = PickupOrder::HighestFirst;
        config.pickup.skip_labels = vec![];
        config.labels.hand_off = "bug".into();
        assert_eq!(numbers(&candidates(&config, issues)), [9, 5, 4, 3]);
    }

    fn slots(capacity: u32, in_use: u32) -> Slots {
        Slots {
            host: "h1".into(),
            capacity,
            source: "configured",
            in_use,
        }
    }

    #[test]
    fn free_slots_are_capacity_minus_live_claims_at_most_max() {
        assert_eq!(slots(2, 0).free(None), 2);
        assert_eq!(slots(2, 1).free(None), 1);
        assert_eq!(slots(4, 1).free(Some(2)), 2);
        assert_eq!(slots(2, 5).free(None), 0, "over capacity is none free");
        assert_eq!(slots(2, 0).skip_reason(None), None);
        assert_eq!(
            slots(2, 2).skip_reason(Some(1)).as_deref(),
            Some(
                "host h1 is at capacity (2 of 2 slots in use, capacity configured); pickup skipped"
            )
        );
        assert_eq!(
            slots(2, 0).skip_reason(Some(0)).as_deref(),
            Some("host h1: --max 0; pickup skipped")
        );
    }
}
