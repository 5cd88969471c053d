//! One read of GitHub into a `Snapshot`: the registry issue's host reports (trusted authors only,
//! the first per host), then every issue that has `in-progress` (open or closed), is named in a
//! host report, or is named by the caller (this host's local records; for a reconcile pass, the
//! issues holding a waiting command, `read_pass`), with its comments read into the ownership rule
//! and the `/thirdshift` commands waiting for an answer (with their authors' roles, read only
//! when some wait). It decides nothing.

use std::collections::{BTreeMap, BTreeSet};

use crate::context::Ctx;
use crate::github::{Comment, Issue};
use crate::protocol::record::{decode, Decoded, Record, Verdict};

use super::{CommandView, IssueSnapshot, Origin, RegistryPage, ReportView, Snapshot};
use crate::protocol::config::Role;

/// Reads the snapshot; `extra` names issues to include whatever their labels.
pub async fn read(ctx: &Ctx, extra: &[u64]) -> anyhow::Result<Snapshot> {
    let mut snapshot = registry(ctx).await?;
    let labelled = ctx
        .client
        .list_issues("all", Some(&ctx.config.labels.in_progress))
        .await?;
    for issue in wanted_issues(ctx, &snapshot, labelled, extra).await? {
        add_issue(ctx, &mut snapshot, issue).await?;
    }
    snapshot.issues.sort_by_key(|i| i.number);
    fill_origin(ctx, &mut snapshot).await?;
    fill_people_changes(ctx, &mut snapshot).await?;
    fill_roles(ctx, &mut snapshot, 0).await?;
    Ok(snapshot)
}

/// The full read of a reconcile pass without a cache: [`read`], and also every issue holding a
/// command that waits for its answer wherever it is (one listing of every comment of the
/// repository, `waiting::everywhere`), so a command whose workflow trigger was dropped is
/// answered by this pass even on an idle issue.
pub async fn read_pass(ctx: &Ctx) -> anyhow::Result<Snapshot> {
    let everywhere = super::waiting::everywhere(ctx).await?;
    let extra: Vec<u64> = everywhere.waiting.into_iter().collect();
    read(ctx, &extra).await
}

/// The issues a read takes in whatever their comments hold: those `labelled` `in-progress`,
/// those a host report names, those in `extra`, and the registry issue (read on its own).
pub(super) fn usual(snapshot: &Snapshot, labelled: &[Issue], extra: &[u64]) -> BTreeSet<u64> {
    let mut usual: BTreeSet<u64> = extra.iter().copied().collect();
    for r in &snapshot.reports {
        usual.extend(r.report.claims.iter().map(|c| c.issue));
    }
    usual.extend(labelled.iter().map(|i| i.number));
    usual.extend(snapshot.registry_issue);
    usual
}

/// The issues a pass reads, in number order: those `labelled` `in-progress`, those a host report
/// names and those in `extra` (read one by one; gone ones left out), never the registry issue.
pub(super) async fn wanted_issues(
    ctx: &Ctx,
    snapshot: &Snapshot,
    labelled: Vec<Issue>,
    extra: &[u64],
) -> anyhow::Result<Vec<Issue>> {
    let mut wanted = usual(snapshot, &labelled, extra);
    if let Some(n) = snapshot.registry_issue {
        wanted.remove(&n);
    }
    let mut by_number: BTreeMap<u64, Issue> = labelled.into_iter().map(|i| (i.number, i)).collect();
    let mut out = Vec::with_capacity(wanted.len());
    for n in wanted {
        match by_number.remove(&n) {
            Some(i) => out.push(i),
            None => match ctx.client.get_issue(n).await {
                Ok(i) => out.push(i),
                Err(e) if e.status() == Some(404) || e.status() == Some(410) => continue,
                Err(e) => return Err(e.into()),
            },
        }
    }
    Ok(out)
}

/// The snapshot of one issue (with the hosts' reports), for `command --event`: the same reads
/// as a pass makes of that issue, and no others.
pub async fn read_issue(ctx: &Ctx, n: u64) -> anyhow::Result<Snapshot> {
    let mut snapshot = registry(ctx).await?;
    // only issue `n` is wanted, the registry issue too when `n` names it: read below as any other
    snapshot.issues.clear();
    snapshot.commands.clear();
    let issue = ctx.client.get_issue(n).await?;
    add_issue(ctx, &mut snapshot, issue).await?;
    fill_origin(ctx, &mut snapshot).await?;
    fill_people_changes(ctx, &mut snapshot).await?;
    fill_roles(ctx, &mut snapshot, 0).await?;
    Ok(snapshot)
}

/// A snapshot holding the registry issue's hosts' reports (and the registry issue itself when a
/// command waits there, so a pass answers it too); with `pages`, the registry's comments are
/// read conditionally (a 304 when no report changed).
pub(super) async fn registry_with(
    ctx: &Ctx,
    pages: Option<&mut crate::github::PageCache>,
) -> anyhow::Result<Snapshot> {
    let mut pages = pages;
    let found = crate::store::registry::find_issue_with(ctx, pages.as_deref_mut()).await?;
    let registry = found.issue;
    let page = registry.as_ref().map(registry_page);
    let mut untrusted = crate::snapshot::Untrusted::new();
    for other in &found.untrusted {
        *untrusted
            .entry(other.author().to_ascii_lowercase())
            .or_default() += 1;
    }
    let mut snapshot = Snapshot {
        registry_issue: registry.as_ref().map(|i| i.number),
        refusals: page
            .as_ref()
            .map(|p| p.refusals(chrono::Utc::now()))
            .unwrap_or_default(),
        registry_page: page,
        untrusted_outside_issues: untrusted,
        ..Snapshot::default()
    };
    if let Some(issue) = registry {
        let n = issue.number;
        let comments = match pages {
            Some(p) => ctx.client.list_issue_comments_conditional(n, p).await?,
            None => ctx.client.list_issue_comments(n).await?,
        };
        (snapshot.reports, snapshot.duplicate_reports) =
            reports(ctx, &comments, &mut snapshot.untrusted_outside_issues);
        let waiting = crate::snapshot::pending::pending(n, &comments, &ctx.trust, &ctx.me);
        if !waiting.is_empty() {
            add_issue_with(ctx, &mut snapshot, issue, &comments);
        }
    }
    Ok(snapshot)
}

async fn registry(ctx: &Ctx) -> anyhow::Result<Snapshot> {
    registry_with(ctx, None).await
}

/// Reads the repository role of the author of every command from index `from` on, once per
/// author; only when there are commands waiting, so an idle pass asks nothing more.
pub(super) async fn fill_roles(
    ctx: &Ctx,
    snapshot: &mut Snapshot,
    from: usize,
) -> anyhow::Result<()> {
    let mut roles: BTreeMap<String, Role> = BTreeMap::new();
    for c in snapshot.commands.iter_mut().skip(from) {
        let login = c.pending.author.to_ascii_lowercase();
        let role = match roles.get(&login) {
            Some(r) => *r,
            None => {
                let r = ctx.client.role_of(&c.pending.author).await?;
                roles.insert(login, r);
                r
            }
        };
        c.role = role;
    }
    Ok(())
}

/// Reads what origin holds of the Issue branch of every owner its host reports dead: the one
/// decision that needs it, so live Claims cost no extra requests. Issues whose origin is already
/// read are left alone.
pub(super) async fn fill_origin(ctx: &Ctx, snapshot: &mut Snapshot) -> anyhow::Result<()> {
    let mut wanted = Vec::new();
    for (k, issue) in snapshot.issues.iter().enumerate() {
        if issue.origin.is_some() {
            continue;
        }
        let Some(owner) = &issue.ownership.owner else {
            if let Some(branch) =
                dead_adopted_branch(snapshot, issue, &ctx.config.labels.in_progress)
            {
                wanted.push((k, branch));
            }
            continue;
        };
        let c = &owner.record;
        let dead = snapshot
            .report_of(&c.host, &c.machine_id)
            .is_some_and(|r| matches!(r.report.verdict(&c.claim_id), Some(Verdict::Dead { .. })));
        if dead && issue.open {
            wanted.push((k, c.issue_branch()));
        }
    }
    for (k, branch) in wanted {
        snapshot.issues[k].origin = Some(Origin::read(ctx, &branch).await?);
    }
    Ok(())
}

/// Reads, for every issue whose latest end record still has label work left, the label changes
/// people made since that end record was posted, and whether it was claimed again since
/// (`since_end.rs`): a pass never undoes them. One request per such issue (the events; two for
/// an end record that names no event, its comment too); none for the others, so an idle pass
/// costs nothing more.
pub(super) async fn fill_people_changes(ctx: &Ctx, snapshot: &mut Snapshot) -> anyhow::Result<()> {
    let in_progress = &ctx.config.labels.in_progress;
    for issue in snapshot.issues.iter_mut() {
        if issue.since_end.is_some() || !issue.label_work_left(in_progress) {
            continue;
        }
        let Some((end, _)) = issue.ownership.latest_intent() else {
            continue;
        };
        issue.since_end = Some(super::since_end(ctx, issue.number, end, None).await?);
    }
    Ok(())
}

/// The Issue branch of a thirdshift Command a host reports dead on `issue` (no claim of ours, still
/// `in-progress`), not ended yet: reconcile's ending asks what origin holds of it.
fn dead_adopted_branch(
    snapshot: &Snapshot,
    issue: &IssueSnapshot,
    in_progress: &str,
) -> Option<String> {
    if !issue.has_label(in_progress) {
        return None;
    }
    snapshot
        .reports
        .iter()
        .flat_map(|r| &r.report.claims)
        .filter(|v| v.issue == issue.number && v.verdict.is_dead())
        .filter(|v| issue.ownership.adopted_end(&v.claim_id).is_none())
        .find_map(|v| v.run.thirdshift())
        .map(|f| {
            f.branch
                .clone()
                .unwrap_or_else(|| format!("issue-{}", issue.number))
        })
}

/// Reads an issue's comments into the snapshot: its ownership and its waiting commands.
async fn add_issue(ctx: &Ctx, snapshot: &mut Snapshot, issue: Issue) -> anyhow::Result<()> {
    let comments = ctx.client.list_issue_comments(issue.number).await?;
    add_issue_with(ctx, snapshot, issue, &comments);
    Ok(())
}

/// Adds an issue to the snapshot from its comments: its ownership and its waiting commands.
pub(super) fn add_issue_with(
    ctx: &Ctx,
    snapshot: &mut Snapshot,
    issue: Issue,
    comments: &[Comment],
) {
    let waiting = crate::snapshot::pending::pending(issue.number, comments, &ctx.trust, &ctx.me);
    note_refusals(ctx, snapshot, issue.number, comments);
    snapshot
        .commands
        .extend(waiting.into_iter().map(|pending| CommandView {
            pending,
            role: Role::None,
        }));
    snapshot.issues.push(issue_snapshot(ctx, issue, comments));
}

/// Keeps the latest refusal for want of the role of each author among `comments` of issue `n`.
fn note_refusals(ctx: &Ctx, snapshot: &mut Snapshot, n: u64, comments: &[Comment]) {
    for (author, at) in crate::snapshot::pending::refusals(n, comments, &ctx.trust) {
        let latest = snapshot.refusals.entry(author).or_insert(at);
        *latest = (*latest).max(at);
    }
}

/// Replaces what the snapshot says of issue `n` from a new read of its comments: its ownership
/// (origin to be read again when the owner changed) and its waiting commands (appended, roles still to be read).
pub(super) fn replace_comments(ctx: &Ctx, snapshot: &mut Snapshot, n: u64, comments: &[Comment]) {
    if let Some(i) = snapshot.issues.iter_mut().find(|i| i.number == n) {
        let owner = |o: &crate::protocol::record::Ownership| o.owner.as_ref().map(|c| c.comment_id);
        let ownership = crate::store::ownership(ctx, n, comments);
        if owner(&ownership) != owner(&i.ownership) {
            i.origin = None;
        }
        i.since_end = None;
        i.ownership = ownership;
    }
    snapshot.commands.retain(|c| c.pending.issue != n);
    let waiting = crate::snapshot::pending::pending(n, comments, &ctx.trust, &ctx.me);
    note_refusals(ctx, snapshot, n, comments);
    snapshot
        .commands
        .extend(waiting.into_iter().map(|pending| CommandView {
            pending,
            role: Role::None,
        }));
}

fn issue_snapshot(ctx: &Ctx, issue: Issue, comments: &[Comment]) -> IssueSnapshot {
    let ownership = crate::store::ownership(ctx, issue.number, comments);
    IssueSnapshot {
        number: issue.number,
        open: issue.is_open(),
        labels: issue.labels.iter().map(|l| l.name.clone()).collect(),
        html_url: issue.html_url.clone(),
        title: issue.title,
        ownership,
        origin: None,
        since_end: None,
    }
}

/// The first trusted report of each host (name and machine), and the ids of later duplicates.
/// Reports by an author not trusted are counted in `untrusted`.
fn reports(
    ctx: &Ctx,
    comments: &[Comment],
    untrusted: &mut crate::snapshot::Untrusted,
) -> (Vec<ReportView>, Vec<u64>) {
    let mut firsts: Vec<ReportView> = Vec::new();
    let mut duplicates = Vec::new();
    let mut sorted: Vec<&Comment> = comments.iter().collect();
    sorted.sort_by_key(|c| c.id);
    for c in sorted {
        let Decoded::Record(Record::HostReport(report)) = decode(c.text()) else {
            continue;
        };
        if !ctx.trust.is_trusted(c.author()) {
            *untrusted
                .entry(c.author().to_ascii_lowercase())
                .or_default() += 1;
            continue;
        }
        let same = |r: &ReportView| {
            r.report.host == report.host && r.report.machine_id == report.machine_id
        };
        if firsts.iter().any(same) {
            duplicates.push(c.id);
            continue;
        }
        firsts.push(ReportView {
            comment_id: c.id,
            author: c.author().to_string(),
            updated_at: c.updated_at,
            report,
        });
    }
    (firsts, duplicates)
}

/// The registry issue's address and the JSON of the view record in its body, if it holds one.
fn registry_page(issue: &Issue) -> RegistryPage {
    let view = match decode(issue.body.as_deref().unwrap_or("")) {
        Decoded::Record(Record::Other {
            kind: crate::protocol::record::Kind::View,
            json,
        }) => Some(json),
        _ => None,
    };
    RegistryPage {
        html_url: issue.html_url.clone(),
        view,
    }
}
