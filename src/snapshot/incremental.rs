//! The efficient read: the same `Snapshot` as `read.rs`'s full read, at a fraction of the
//! requests, from the local cache (`cache.rs`) kept between passes. Why it can be trusted is
//! argued in `docs/performance.md`; in short:
//!
//! 1. One repo-wide listing `GET /issues/comments?since=W-margin` shows every comment created or
//!    edited since the watermark `W` (the newest `updated_at` an earlier listing showed; a
//!    replica that showed that write had applied every earlier one). Those are merged into the
//!    cached issues.
//! 2. The `in-progress` list (conditional pages) gives each issue's comment count as GitHub
//!    keeps it. An issue whose cached ids plus the merged ones do not add up to that count (a
//!    deletion, a comment the listing did not show yet, an issue new to the cache) has its
//!    comments read in full, with bounded concurrency.
//! 3. Writes are never decided from the cache alone: `reconcile` re-reads in full every issue
//!    its plan would write to that this pass did not read in full ([`CachedRead::confirm`]),
//!    and plans again.
//!
//! 4. Issues outside that read where a `/thirdshift` command waits for its answer are read as
//!    well (`waiting.rs`): found from the cache and the `since` listing, at no cost.
//!
//! Without a cache file the read is cold. When the registry's view record holds the listing mark
//! of the last view written (its watermark, and the issues where a command was still waiting
//! then), the cold read lists only since that watermark, reads those issues too, and every other
//! issue it wants in full: it costs what the claims cost, however old the repository. Without
//! one, every comment of the repository is listed once (for the commands waiting anywhere, and
//! the watermark from the newest). A command older than the mark was seen by the pass that
//! wrote it: answered then, or among its waiting issues. It decides nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::cache::{Cache, CachedIssue};
use super::read::{
    add_issue_with, fill_origin, fill_people_changes, fill_roles, registry_with, replace_comments,
    usual, wanted_issues,
};
use super::{waiting, ListingMark, Snapshot, LISTING_WAITING_MAX};
use crate::context::Ctx;
use crate::github::Comment;

/// How many comment lists are read at once.
pub const CONCURRENCY: usize = 8;
/// How far before the watermark the repo-wide listing starts: covers second-resolution
/// timestamps and clocks that differ between GitHub's servers.
pub const MARGIN_SECS: i64 = 30;

/// A snapshot read through the cache, and what it needs to confirm and save it.
pub struct CachedRead {
    pub snapshot: Snapshot,
    /// Issues whose comments this pass read in full (the rest came from the cache).
    pub fresh: BTreeSet<u64>,
    cache: Cache,
    path: PathBuf,
}

/// Reads the snapshot through the cache file at `path`; `extra` as for `read::read`. Issues
/// holding a command that waits for its answer are read too, wherever they are (`waiting.rs`).
pub async fn read(ctx: &Ctx, extra: &[u64], path: &Path) -> anyhow::Result<CachedRead> {
    let repo = ctx.client.repo().to_string();
    let mut cache = Cache::load(path, ctx.client.api_url(), &repo);
    let mut snapshot = registry_with(ctx, Some(&mut cache.pages)).await?;
    let stored = snapshot
        .registry_page
        .as_ref()
        .and_then(|p| p.listing(Utc::now()));
    let (changes, carried) = changes(ctx, &mut cache, stored).await?;
    let labelled = ctx
        .client
        .list_issues_conditional(
            "all",
            Some(&ctx.config.labels.in_progress),
            &mut cache.pages,
        )
        .await?;
    let mut by_issue: BTreeMap<u64, Vec<&Comment>> = BTreeMap::new();
    let waiting = match &changes {
        Changes::Cold { waiting } => waiting.clone(),
        Changes::Warm(listed) => {
            for c in listed {
                if let Some(n) = c.issue_number() {
                    by_issue.entry(n).or_default().push(c);
                }
            }
            let usual = usual(&snapshot, &labelled, extra);
            let mut waiting = waiting::carry(ctx, &mut cache, &by_issue, &usual);
            waiting.extend(carried.iter().filter(|n| !usual.contains(n)));
            waiting
        }
    };
    let warm = matches!(changes, Changes::Warm(_));
    let extra: Vec<u64> = extra.iter().chain(&waiting).copied().collect();
    let issues = wanted_issues(ctx, &snapshot, labelled, &extra).await?;
    cache.idle.retain(|n, _| !waiting.contains(n));
    let (mut known, unread) = from_cache(&mut cache, &issues, warm.then_some(&by_issue));
    let fresh: BTreeSet<u64> = unread.iter().copied().collect();
    known.extend(read_batched(ctx, &issues, &unread).await?);
    for issue in issues {
        let comments = known
            .get(&issue.number)
            .map(|e| e.relevant.as_slice())
            .unwrap_or_default();
        add_issue_with(ctx, &mut snapshot, issue, comments);
    }
    snapshot.issues.sort_by_key(|i| i.number);
    fill_origin(ctx, &mut snapshot).await?;
    fill_people_changes(ctx, &mut snapshot).await?;
    fill_roles(ctx, &mut snapshot, 0).await?;
    cache.issues = known;
    cache.pages.prune();
    snapshot.listing = cache.watermark.map(|watermark| ListingMark {
        watermark,
        waiting: waiting.iter().copied().take(LISTING_WAITING_MAX).collect(),
    });
    let read = CachedRead {
        snapshot,
        fresh,
        cache,
        path: path.to_path_buf(),
    };
    read.save();
    Ok(read)
}

/// Splits `issues` into those the cache can give (its entry merged with the comments the
/// listing showed, `listed`, adds up to GitHub's comment count) and those to read in full (all
/// of them for a cold cache, `listed` being `None`). Takes the entries out of `cache.issues`.
fn from_cache(
    cache: &mut Cache,
    issues: &[crate::github::Issue],
    listed: Option<&BTreeMap<u64, Vec<&Comment>>>,
) -> (BTreeMap<u64, CachedIssue>, Vec<u64>) {
    let mut known = BTreeMap::new();
    let mut unread = Vec::new();
    for issue in issues {
        let n = issue.number;
        match (cache.issues.remove(&n), listed) {
            (Some(mut entry), Some(listed)) => {
                entry.merge(listed.get(&n).map(Vec::as_slice).unwrap_or_default());
                if entry.ids.len() as u64 == issue.comments {
                    known.insert(n, entry);
                } else {
                    unread.push(n);
                }
            }
            _ => unread.push(n),
        }
    }
    (known, unread)
}

impl CachedRead {
    /// The issues among `written` (those a plan would write to) whose comments came from the
    /// cache, in number order. The registry issue is always read in full.
    pub fn unconfirmed(&self, written: impl IntoIterator<Item = u64>) -> Vec<u64> {
        let set: BTreeSet<u64> = written
            .into_iter()
            .filter(|n| !self.fresh.contains(n) && Some(*n) != self.snapshot.registry_issue)
            .collect();
        set.into_iter().collect()
    }

    /// Reads the comments of `issues` in full and puts them into the snapshot and the cache.
    pub async fn confirm(&mut self, ctx: &Ctx, issues: &[u64]) -> anyhow::Result<()> {
        let read = read_all(ctx, issues, None).await?;
        for (n, entry) in &read {
            replace_comments(ctx, &mut self.snapshot, *n, &entry.relevant);
        }
        // replace_comments appends each issue's waiting commands: theirs are the last ones
        let commands = &self.snapshot.commands;
        let from = commands
            .iter()
            .filter(|c| !read.contains_key(&c.pending.issue))
            .count();
        fill_roles(ctx, &mut self.snapshot, from).await?;
        self.snapshot
            .commands
            .sort_by_key(|c| (c.pending.issue, c.pending.comment_id));
        fill_origin(ctx, &mut self.snapshot).await?;
        fill_people_changes(ctx, &mut self.snapshot).await?;
        self.fresh.extend(read.keys().copied());
        self.cache.issues.extend(read);
        self.save();
        Ok(())
    }

    /// Writes the cache; a cache that cannot be written only makes the next pass dearer.
    fn save(&self) {
        if let Err(e) = self.cache.save(&self.path) {
            tracing::warn!("the next pass will read everything again: {e:#}");
        }
    }
}

/// What changed since the last pass.
enum Changes {
    /// No watermark (a cold cache): every comment was listed once, for the commands waiting
    /// anywhere (the watermark is then set from the newest); every issue is read in full.
    Cold { waiting: BTreeSet<u64> },
    /// The comments created or edited since the watermark (minus the margin).
    Warm(Vec<Comment>),
}

/// The comments changed since the watermark (moving it on), or, for a cold cache, the issues
/// where a command waits, found by listing every comment (which also sets the watermark). A
/// cold cache with the `stored` listing mark of the last view written lists only since that
/// mark, and carries the issues where a command was waiting then (returned beside).
async fn changes(
    ctx: &Ctx,
    cache: &mut Cache,
    stored: Option<ListingMark>,
) -> anyhow::Result<(Changes, Vec<u64>)> {
    let mut carried = Vec::new();
    if let (None, Some(mark)) = (cache.watermark, stored) {
        cache.issues.clear();
        cache.idle.clear();
        cache.watermark = Some(mark.watermark);
        carried = mark.waiting;
    }
    let Some(mark) = cache.watermark else {
        cache.issues.clear();
        cache.idle.clear();
        let everywhere = waiting::everywhere(ctx).await?;
        cache.watermark = Some(everywhere.newest.unwrap_or(DateTime::<Utc>::UNIX_EPOCH));
        let waiting = everywhere.waiting;
        return Ok((Changes::Cold { waiting }, carried));
    };
    let since = mark - chrono::Duration::seconds(MARGIN_SECS);
    let listed = ctx.client.comments_since(since, &mut cache.pages).await?;
    let newest = listed.iter().map(|c| c.updated_at).max();
    cache.watermark = Some(newest.map_or(mark, |n| n.max(mark)));
    Ok((Changes::Warm(listed), carried))
}

/// The full comment lists of the issues `unread` among `issues`: [`crate::github::GRAPHQL_BATCH`] issues a
/// request through GraphQL when there are several, the REST way for any it did not answer
/// (more comments than a page holds, no `node_id`) or when GraphQL failed.
async fn read_batched(
    ctx: &Ctx,
    issues: &[crate::github::Issue],
    unread: &[u64],
) -> anyhow::Result<BTreeMap<u64, CachedIssue>> {
    let wanted: Vec<(u64, String)> = issues
        .iter()
        .filter(|i| unread.contains(&i.number) && !i.node_id.is_empty())
        .map(|i| (i.number, i.node_id.clone()))
        .collect();
    let progress = crate::snapshot::progress::Progress::start("issues", unread.len() as u64);
    let mut out = BTreeMap::new();
    if wanted.len() > 1 {
        match ctx.client.issue_comments_batched(&wanted).await {
            Ok(read) => out.extend(
                read.into_iter()
                    .map(|(n, comments)| (n, CachedIssue::from_comments(comments))),
            ),
            Err(e) => tracing::warn!("reading the claimed issues one by one: {e}"),
        }
    }
    progress.advance(out.len() as u64);
    let rest: Vec<u64> = unread
        .iter()
        .filter(|n| !out.contains_key(n))
        .copied()
        .collect();
    out.extend(read_all(ctx, &rest, Some(&progress)).await?);
    progress.finish();
    Ok(out)
}

/// The full comment lists of `numbers`, at most [`CONCURRENCY`] requests at a time, each one read
/// counted on `progress`.
async fn read_all(
    ctx: &Ctx,
    numbers: &[u64],
    progress: Option<&crate::snapshot::progress::Progress>,
) -> anyhow::Result<BTreeMap<u64, CachedIssue>> {
    let permits = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let mut set = tokio::task::JoinSet::new();
    for &n in numbers {
        let client = ctx.client.clone();
        let permits = permits.clone();
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let comments = client.list_issue_comments(n).await;
            (n, comments.map(CachedIssue::from_comments))
        });
    }
    let mut out = BTreeMap::new();
    while let Some(joined) = set.join_next().await {
        let (n, entry) = joined?;
        out.insert(n, entry?);
        if let Some(p) = progress {
            p.advance(1);
        }
    }
    Ok(out)
}
