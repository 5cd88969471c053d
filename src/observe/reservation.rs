//! Releasing a dead thirdshift Pickup's reservation on origin (`refs/heads/thirdshift/pickup/<N>`,
//! see `thirdshift::reservation`), so that the issue a killed Pickup held can be taken again once its
//! Claim is ended. On the dead Command's own host only, by `observe`: the reservation is read on
//! GitHub, judged against the Command's record and this machine's boot, and deleted with
//! `git push --force-with-lease=<ref>:<the sha read>` from the launch clone the reservation names
//! (a clone of this repository), exactly as thirdshift's own `Drop` would have deleted it.
//!
//! A reservation that is not the dead Command's, or that cannot be read or judged, is never
//! touched. What was decided is kept per Command in the state folder (`adopted/<claim
//! id>.reservation`), so each dead Command costs one read, once; a failed read or push is tried
//! again by the next pass. It decides nothing about Claims and writes nothing to GitHub's API.

use std::path::Path;

use crate::context::Ctx;
use crate::salvage::{Git, LOCAL_TIMEOUT, NETWORK_TIMEOUT};
use crate::thirdshift::Adopted;
use crate::thirdshift::{judge_reservation as judge, parse_reservation as parse};
use crate::thirdshift::{reservation_ref as reference, DeadOwner};

/// The state folder's note of how a dead Command's reservation was settled.
pub const NOTE: &str = "reservation";

/// What became of a dead Command's reservation, for the pass's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    /// Deleted from origin (its ref, the sha it held).
    Released { reference: String, sha: String },
    /// Left where it is, and why (not the Command's own, or no launch clone to push from).
    Kept { reference: String, why: String },
}

impl Settled {
    /// One line for the pass's output.
    pub fn line(&self) -> String {
        match self {
            Settled::Released { reference, sha } => {
                format!("released {reference} (at {sha}): its Pickup is dead")
            }
            Settled::Kept { reference, why } => format!("left {reference} alone: {why}"),
        }
    }
}

/// Releases the reservation of `dead`, a Command this host proved dead with no writer left.
/// `None` when there is nothing to say: settled before, no reservation, or to be tried again.
pub async fn release_for(ctx: &Ctx, dead: &Adopted) -> Option<Settled> {
    let claim_id = &dead.claim.claim_id;
    if ctx.state.adopted_note(claim_id, NOTE).is_some() {
        return None;
    }
    let reference = reference(dead.claim.issue);
    let branch = reference.trim_start_matches("refs/heads/").to_string();
    let head = match ctx.client.branch_commit(&branch).await {
        Ok(head) => head,
        Err(e) => {
            tracing::warn!(claim = %claim_id, "reading {reference}: {e}; tried again next pass");
            return None;
        }
    };
    let settled = match head {
        None => {
            settle(ctx, claim_id, "no reservation");
            return None;
        }
        Some(head) => judge_reservation(ctx, dead, &reference, &head).await?,
    };
    let how = match &settled {
        Settled::Released { sha, .. } => format!("released {reference} at {sha}"),
        Settled::Kept { why, .. } => format!("{KEPT}{reference}: {why}"),
    };
    settle(ctx, claim_id, &how);
    Some(settled)
}

/// Judges the reservation `head` against `dead` and deletes it when it is its own; `None` when
/// the push failed (tried again next pass).
async fn judge_reservation(
    ctx: &Ctx,
    dead: &Adopted,
    reference: &str,
    head: &crate::github::HeadCommit,
) -> Option<Settled> {
    let kept = |why: String| {
        Some(Settled::Kept {
            reference: reference.to_string(),
            why,
        })
    };
    let Some(reservation) = parse(&head.message) else {
        return kept("its commit is not a thirdshift Pickup reservation".into());
    };
    let booted_at = crate::host::boot_time().unwrap_or_default();
    let owner = DeadOwner {
        hostname: &dead.hostname,
        pid: dead.claim.pid,
        boot_id: &dead.claim.boot_id,
        start_ticks: dead.claim.start_ticks,
        boot_now: &ctx.host.boot_id,
        booted_at,
        ticks_per_second: crate::host::ticks_per_second(),
    };
    if let Err(why) = judge(&reservation, &owner) {
        return kept(format!("not dead process {}'s: {why}", dead.claim.pid));
    }
    let launch = std::path::PathBuf::from(&reservation.launch);
    if let Err(why) = is_clone_of(&launch, &ctx.remote_repo()) {
        return kept(format!("its launch clone {}: {why}", launch.display()));
    }
    let (r, sha) = (reference.to_string(), head.sha.clone());
    let pushed = tokio::task::spawn_blocking(move || delete_with_lease(&launch, &r, &sha)).await;
    match pushed {
        Ok(Ok(())) => Some(Settled::Released {
            reference: reference.to_string(),
            sha: head.sha.clone(),
        }),
        Ok(Err(e)) => {
            tracing::warn!(%reference, "releasing it: {e}; tried again next pass");
            None
        }
        Err(e) => {
            tracing::warn!(%reference, "releasing it: {e}");
            None
        }
    }
}

/// Whether `dir` is a git clone whose `origin` is repository `repo` on its web host.
fn is_clone_of(dir: &Path, repo: &crate::protocol::remote::RemoteRepo) -> Result<(), String> {
    if !dir.is_dir() {
        return Err("not there".into());
    }
    // As configured: `remote get-url` would apply `insteadOf` rewrites.
    let url = Git::new(dir).run_within(&["config", "--get", "remote.origin.url"], LOCAL_TIMEOUT)?;
    let url = url.trim();
    if repo.named_by(url) {
        Ok(())
    } else {
        Err(format!(
            "its origin is {}, not {repo}",
            crate::protocol::remote::shown(url)
        ))
    }
}

/// `git push --no-verify --force-with-lease=<ref>:<sha> origin :<ref>`: deleted only if origin
/// still holds the commit read.
fn delete_with_lease(launch: &Path, reference: &str, sha: &str) -> Result<(), String> {
    let lease = format!("--force-with-lease={reference}:{sha}");
    let delete = format!(":{reference}");
    let args = ["push", "--no-verify", &lease, "origin", &delete];
    Git::new(launch)
        .run_within(&args, NETWORK_TIMEOUT)
        .map(drop)
}

/// Whether dead Command `claim_id`'s issue is free of its Pickup reservation: released, or none
/// was there (a reservation left alone, or not settled yet, still keeps every Pickup off it).
pub fn issue_free(ctx: &Ctx, claim_id: &str) -> bool {
    ctx.state
        .adopted_note(claim_id, NOTE)
        .is_some_and(|how| !how.starts_with(KEPT.as_bytes()))
}

/// How a note of a reservation left alone begins.
const KEPT: &str = "kept ";

fn settle(ctx: &Ctx, claim_id: &str, how: &str) {
    if let Err(e) = ctx.state.save_adopted_note(claim_id, NOTE, how.as_bytes()) {
        tracing::warn!(claim = %claim_id, "could not record that its reservation is settled: {e:#}");
    }
}
