//! Cancelling a thirdshift Command, as thirdshift stops itself. A trusted cancel request for a
//! live Command (`cancel --issue N` or `/thirdshift cancel`, claim id `ts-…`) is carried out by
//! the Command's own host at its next `observe`: it starts `thirdshift stop <the record>
//! --requeue` (thirdshift 0.19.0 `src/logs/stop.rs`: it writes a stop request beside the record
//! and signals the Command through a pidfd after checking its start identity; the Command then
//! keeps its work, ends its Claim and puts the issue back in the queue itself, which takes
//! minutes), in a session of its own with its output in `<state>/logs/stop-<claim id>.log`, and
//! never signals the Command itself. The record is named by its path, so only the Command the
//! request names is stopped, not another of the same issue.
//!
//! Once thirdshift recorded the Command's outcome (or its process is gone), the host posts one
//! end record for it, `cancelled`, with the evidence, thirdshift's outcome and the labels
//! thirdshift left: the request is then answered and the Command leaves the live view. What was
//! asked is kept in the state folder (`adopted/<claim id>.stop`), so the stop is started once
//! and a pass killed half-way is finished by the next. It decides nothing about dead Commands
//! (those are ended as recovered, `reconcile::plan::adopted`).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::context::Ctx;
use crate::host::ProcessIdentity;
use crate::protocol::record::{AdoptedEvidence, Cause, EndRecord, Kind, Outcome};
use crate::snapshot::Snapshot;
use crate::text::ToComment;
use crate::thirdshift::Adopted;

/// The state folder's note of a stop this host started.
pub const NOTE: &str = "stop";

/// A stop this host started, as kept in the state folder.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Asked {
    request_id: String,
    issue: u64,
    /// The Command's record, as a full path.
    path: PathBuf,
    evidence: AdoptedEvidence,
    start_ticks: u64,
    asked_at: DateTime<Utc>,
    log: PathBuf,
    /// Who asked for the cancel (empty in a note kept before causes were).
    #[serde(default)]
    requested_by: String,
    /// Set once the end record is posted.
    #[serde(default)]
    ended: bool,
}

/// What a pass did about a cancelled thirdshift Command, for its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `thirdshift stop` started.
    Asked {
        issue: u64,
        claim_id: String,
        log: PathBuf,
    },
    /// It could not be started; tried again next pass.
    NotStarted {
        issue: u64,
        claim_id: String,
        why: String,
    },
    /// thirdshift finished it; the end record is posted.
    Ended {
        issue: u64,
        claim_id: String,
        outcome: String,
    },
}

impl Stop {
    /// One line for the pass's output.
    pub fn line(&self) -> String {
        match self {
            Stop::Asked {
                issue,
                claim_id,
                log,
            } => format!(
                "#{issue}: thirdshift asked to stop its Command {claim_id} (`thirdshift stop \
                 --requeue`, output in {})",
                log.display()
            ),
            Stop::NotStarted {
                issue,
                claim_id,
                why,
            } => {
                format!("#{issue}: could not start `thirdshift stop` for {claim_id}: {why}")
            }
            Stop::Ended {
                issue,
                claim_id,
                outcome,
            } => format!("#{issue}: thirdshift's Command {claim_id} stopped on request: {outcome}"),
        }
    }
}

/// Starts `thirdshift stop` for live Command `live` when a trusted cancel request for it waits
/// and none was started; `None` when there is nothing to do.
pub fn ask(ctx: &Ctx, snapshot: &Snapshot, live: &Adopted) -> Option<Stop> {
    let id = &live.claim.claim_id;
    let issue = snapshot.issue(live.claim.issue)?;
    let request = issue.ownership.pending_adopted_cancel(id)?;
    if ctx.state.adopted_note(id, NOTE).is_some() {
        return None;
    }
    let log = ctx.state.root().join("logs").join(format!("stop-{id}.log"));
    let (issue, claim_id) = (live.claim.issue, id.clone());
    if let Err(e) = start(ctx, &live.path, &log) {
        let why = format!("{e:#}");
        return Some(Stop::NotStarted {
            issue,
            claim_id,
            why,
        });
    }
    let asked = Asked {
        request_id: request.record.request_id.clone(),
        issue,
        path: live.path.clone(),
        evidence: live.evidence(&ctx.host),
        start_ticks: live.claim.start_ticks,
        asked_at: Utc::now(),
        log: log.clone(),
        requested_by: request.record.requested_by.clone(),
        ended: false,
    };
    keep(ctx, id, &asked);
    Some(Stop::Asked {
        issue,
        claim_id,
        log,
    })
}

/// `thirdshift stop <record> --requeue`, detached: it waits for the Command's cleanup.
fn start(ctx: &Ctx, record: &Path, log: &Path) -> anyhow::Result<()> {
    let bin = ctx.config.thirdshift.bin.clone();
    let bin = bin.unwrap_or_else(|| PathBuf::from("thirdshift"));
    let mut command = crate::context::detached::program(&bin, log)?;
    command.arg("stop").arg(record).arg("--requeue");
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    tracing::info!(record = %record.display(), pid = child.id(), "thirdshift stop started");
    Ok(())
}

/// Posts the end record of every Command this host asked to stop that thirdshift finished.
pub async fn record_endings(ctx: &Ctx) -> Vec<Stop> {
    let mut out = Vec::new();
    for (id, text) in ctx.state.adopted_notes(NOTE) {
        let Ok(asked) = serde_json::from_slice::<Asked>(&text) else {
            continue;
        };
        if asked.ended {
            continue;
        }
        match record_ending(ctx, &id, &asked).await {
            Ok(Some(stop)) => out.push(stop),
            Ok(None) => {}
            Err(e) => tracing::warn!(claim = %id, "recording how it stopped: {e:#}; next pass"),
        }
    }
    out
}

async fn record_ending(ctx: &Ctx, id: &str, asked: &Asked) -> anyhow::Result<Option<Stop>> {
    let Some(outcome) = finished(asked) else {
        return Ok(None);
    };
    let n = asked.issue;
    let comments = crate::store::read::complete_comments(ctx, n).await?;
    let own = crate::store::ownership(ctx, n, &comments);
    if own.adopted_end(id).is_none() {
        let issue = ctx.client.get_issue(n).await?;
        let labels = issue.labels.iter().map(|l| l.name.clone()).collect();
        let reason = crate::text::reasons::adopted_stopped_reason(
            &asked.evidence.host,
            &asked.request_id,
            &asked.evidence.record,
            &outcome,
        );
        let end = EndRecord {
            claim_id: id.to_string(),
            issue: n,
            outcome: Outcome::Cancelled,
            actor: format!("observe@{}", ctx.host.host),
            reason: crate::protocol::record::field::fit_text(&reason),
            exit_code: None,
            signal: Some(libc::SIGTERM),
            cause: (!asked.requested_by.is_empty()).then(|| Cause::Cancel {
                by: asked.requested_by.clone(),
            }),
            claim_comment_id: None,
            events_seen: None,
            labels_after: Some(labels),
            kept: None,
            pull_request: None,
            continuation: None,
            resume: None,
            session: None,
            run: crate::protocol::record::RunOf::thirdshift_of(asked.evidence.clone()),
            failures: Vec::new(),
            ended_at: Utc::now(),
        };
        crate::store::post_record(ctx, n, id, Kind::End, &end.to_comment()).await?;
    }
    keep(
        ctx,
        id,
        &Asked {
            ended: true,
            ..asked.clone()
        },
    );
    let (issue, claim_id) = (n, id.to_string());
    Ok(Some(Stop::Ended {
        issue,
        claim_id,
        outcome,
    }))
}

/// thirdshift's outcome of the Command once it has one, or once its process is gone without
/// one; `None` while it is still ending.
fn finished(asked: &Asked) -> Option<String> {
    let recorded = std::fs::read(&asked.path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("outcome")?.as_str().map(str::to_string));
    if recorded.is_some() {
        return recorded;
    }
    let owner = ProcessIdentity {
        pid: asked.evidence.pid,
        start_ticks: asked.start_ticks,
    };
    let alive = ProcessIdentity::of(owner.pid) == Some(owner);
    (!alive).then(|| "died before recording an outcome".to_string())
}

fn keep(ctx: &Ctx, id: &str, asked: &Asked) {
    let text = serde_json::to_vec_pretty(asked).expect("a stop note serializes");
    if let Err(e) = ctx.state.save_adopted_note(id, NOTE, &text) {
        tracing::warn!(claim = %id, "could not keep the stop note: {e:#}");
    }
}
