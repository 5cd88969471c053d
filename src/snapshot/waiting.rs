//! Commands on idle issues. A reconcile pass reads the issues that matter to Claims
//! (`in-progress`, named by a host report); a `/thirdshift` command can be written on any issue,
//! and when its workflow trigger is dropped only a pass can answer it (DESIGN: commands are
//! level-triggered). This finds the other issues that hold a command still waiting for a trusted
//! reply, so the pass reads them in full as it reads the rest and `plan` answers them:
//!
//! - [`everywhere`], for a pass with no cache to go by (`--no-cache`, and the cache's first, cold
//!   pass): one listing of every comment of the repository, page by page, keeping only those
//!   that mention thirdshift. Exact, and as dear as the repository has comments (one request per
//!   100).
//! - [`carry`], for a warm cached pass: no request at all. What the cache knows of idle issues'
//!   commands and replies, merged with the comments the pass's `since` listing showed; the cache
//!   keeps an idle issue's relevant comments while a command there waits, and while the listing
//!   still shows it (so a command answered long ago but edited now is read once, not every
//!   pass).
//!
//! What `carry` cannot see: a trusted reply deleted from an idle issue (a deletion never shows in
//! a listing, and idle issues' comment counts are not read), so the command it answered is not
//! answered again by cached passes; a `--no-cache` pass, or any new comment listed there that
//! makes the issue worth reading, answers it. It decides nothing: `plan` answers.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::cache::{merge_relevant, relevant, Cache};
use crate::context::Ctx;
use crate::github::Comment;
use crate::snapshot::pending::pending;

/// What one listing of every comment found.
#[derive(Clone, Debug, Default)]
pub struct Everywhere {
    /// Issues holding a command no trusted reply answers (any issue, the usual ones included).
    pub waiting: BTreeSet<u64>,
    /// The newest `updated_at` listed: a cold cache's first watermark.
    pub newest: Option<DateTime<Utc>>,
}

/// Lists every comment of the repository and returns the issues with a command waiting.
pub async fn everywhere(ctx: &Ctx) -> anyhow::Result<Everywhere> {
    let mut kept: BTreeMap<u64, Vec<Comment>> = BTreeMap::new();
    let mut newest = None;
    ctx.client
        .each_repo_comment(|c| {
            newest = newest.max(Some(c.updated_at));
            if let Some(n) = c.issue_number().filter(|_| relevant(&c)) {
                kept.entry(n).or_default().push(c);
            }
        })
        .await?;
    let waiting = kept
        .iter()
        .filter(|(n, comments)| holds_waiting(ctx, **n, comments))
        .map(|(n, _)| *n)
        .collect();
    Ok(Everywhere { waiting, newest })
}

/// For a warm cached pass: the issues outside `usual` (the ones the pass reads anyway) where a
/// command waits, from what `cache` knows of them (an earlier full read in `cache.issues`, else
/// `cache.idle`) and the comments the `since` listing showed (`listed`, by issue). Leaves in
/// `cache.idle` what the next pass needs (module doc); issues found waiting are taken out of
/// `cache.issues` so that the pass reads them in full.
pub fn carry(
    ctx: &Ctx,
    cache: &mut Cache,
    listed: &BTreeMap<u64, Vec<&Comment>>,
    usual: &BTreeSet<u64>,
) -> BTreeSet<u64> {
    let before = std::mem::take(&mut cache.idle);
    let candidates: BTreeSet<u64> = (cache.issues.keys())
        .chain(before.keys())
        .chain(listed.keys())
        .filter(|n| !usual.contains(n))
        .copied()
        .collect();
    let mut waiting = BTreeSet::new();
    for n in candidates {
        let shown = listed.get(&n).map(Vec::as_slice).unwrap_or_default();
        let mut known = match cache.issues.remove(&n) {
            Some(read) => read.relevant,
            None => before.get(&n).cloned().unwrap_or_default(),
        };
        merge_relevant(&mut known, shown);
        let waits = holds_waiting(ctx, n, &known);
        if waits {
            waiting.insert(n);
        }
        if waits || (!shown.is_empty() && !known.is_empty()) {
            cache.idle.insert(n, known);
        }
    }
    waiting
}

/// Whether `comments` of issue `n` hold a command no trusted reply answers.
fn holds_waiting(ctx: &Ctx, n: u64, comments: &[Comment]) -> bool {
    !pending(n, comments, &ctx.trust, &ctx.me).is_empty()
}
