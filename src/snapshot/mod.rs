//! What one read of GitHub saw: the open (and recently closed) issues that matter to Claims with
//! their ownership as the record protocol reads it, and the hosts' reports from the registry
//! issue, and the `/thirdshift` commands on those issues still waiting for an answer. `plan`
//! decides from this alone; the view renders it. Reading it is `read.rs` (IO) or, through the
//! cache, `incremental.rs`; `waiting.rs` finds the idle issues a command waits on. The types here
//! hold no IO. Its door is this file: the submodules are private.

mod cache;
mod incremental;
mod pending;
mod progress;
mod read;
mod since_end;
mod waiting;

pub use incremental::{read as read_cached, CachedRead};
pub use pending::is_ignored_author;
pub use progress::{quiet, Progress};
pub use read::{read_issue, read_pass};
pub use since_end::{label_changes_since, newest_label_event, since_end, Planned, SinceEnd};

use chrono::{DateTime, Utc};

use crate::protocol::command::Pending;
use crate::protocol::config::Role;
use crate::protocol::record::{HostReport, Ownership};
use crate::protocol::rules::Refusals;

/// Reads the snapshot through the cache when the context has one (`incremental.rs`), else in
/// full (`read.rs`); `extra` names issues to include whatever their labels.
pub async fn read_any(ctx: &crate::context::Ctx, extra: &[u64]) -> anyhow::Result<Snapshot> {
    match &ctx.cache {
        Some(path) => Ok(incremental::read(ctx, extra, path).await?.snapshot),
        None => read::read(ctx, extra).await,
    }
}

/// One read of the repository.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Issues with `in-progress` or named in a host report (and, in a reconcile pass's read, those
    /// holding a command waiting for its answer), in number order.
    pub issues: Vec<IssueSnapshot>,
    /// The first trusted report of each host (name and machine id) on the registry issue.
    pub reports: Vec<ReportView>,
    /// The registry issue, if it exists yet.
    pub registry_issue: Option<u64>,
    /// Later duplicates of a host's report (trusted authors): comment ids to delete.
    pub duplicate_reports: Vec<u64>,
    /// The registry issue's page as read (for the live view), if it exists yet.
    pub registry_page: Option<RegistryPage>,
    /// `/thirdshift` commands on these issues that no trusted reply answers yet, by comment id.
    pub commands: Vec<CommandView>,
    /// The latest trusted reply refusing a command for want of the role, by its author (lower
    /// case), within the hour: among the comments read, and as the last view record kept them
    /// (`RegistryPage::refusals`; a refusal on an issue no longer read still counts). Such an
    /// author gets one reply an hour, then reactions.
    pub refusals: Refusals,
    /// How far a cached read listed the repository's comments, for the view record (so a pass
    /// with no cache reads only since then); `None` from a full read.
    pub listing: Option<ListingMark>,
    /// Records outside the issues read, ignored for their author (registry issues, host
    /// reports), by login in lower case: see [`Snapshot::untrusted`].
    pub untrusted_outside_issues: Untrusted,
}

/// How many records were ignored for their author, by login in lower case.
pub type Untrusted = std::collections::BTreeMap<String, usize>;

/// Says once per pass, for each login whose records the read ignored, how many and the config
/// line that would trust it (a warning: a pass reading as the wrong identity sees no Runs).
pub fn warn_untrusted(snapshot: &Snapshot, me: &str) {
    for (login, count) in snapshot.untrusted() {
        tracing::warn!(
            "{}",
            crate::text::trust::untrusted_records(&login, count, me)
        );
    }
}

/// How far the repository's comments were listed: the watermark, and the issues outside the
/// usual read where a command was still waiting then. Kept in the registry's view record.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ListingMark {
    pub watermark: DateTime<Utc>,
    pub waiting: Vec<u64>,
}

/// At most this many waiting issues are kept in (and believed from) the view record.
pub const LISTING_WAITING_MAX: usize = 500;

/// The registry issue as the live view needs it: its address and the view record in its body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegistryPage {
    pub html_url: String,
    /// The JSON of the body's `view` record (the last view written), if it holds one.
    pub view: Option<serde_json::Value>,
}

impl RegistryPage {
    /// The listing mark the last view written holds, if any; a watermark later than `now` is
    /// not believed (the registry's body is editable), and at most [`LISTING_WAITING_MAX`]
    /// waiting issues are taken.
    pub fn listing(&self, now: DateTime<Utc>) -> Option<ListingMark> {
        let json = self.view.as_ref()?.get("listing")?.clone();
        let mut mark: ListingMark = serde_json::from_value(json).ok()?;
        mark.waiting.truncate(LISTING_WAITING_MAX);
        (mark.watermark <= now).then_some(mark)
    }

    /// The refusals the last view written keeps, as written.
    pub fn kept_refusals(&self) -> Refusals {
        let kept = self.view.as_ref().and_then(|v| v.get("refusals")).cloned();
        kept.and_then(|k| serde_json::from_value(k).ok())
            .unwrap_or_default()
    }

    /// The refusals the last view written keeps that still count
    /// (`protocol::rules::recent_refusals` of them).
    pub fn refusals(&self, now: DateTime<Utc>) -> Refusals {
        crate::protocol::rules::recent_refusals(self.kept_refusals(), now)
    }
}

/// A command waiting for its answer, and its author's repository role as GitHub reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandView {
    pub pending: Pending,
    pub role: Role,
}

/// One issue and what its comments say about its Claims.
#[derive(Clone, Debug)]
pub struct IssueSnapshot {
    pub number: u64,
    pub title: String,
    pub open: bool,
    pub labels: Vec<String>,
    pub html_url: String,
    pub ownership: Ownership,
    /// What GitHub holds of the owner's Issue branch; read only when its host reports the owner
    /// dead (the one decision that needs it).
    pub origin: Option<Origin>,
    /// What happened to its labels since the latest end record that states labels was posted
    /// (the people's changes, whether it was claimed again), from the issue's events; read only
    /// when that end still has label work left (`Ownership::latest_intent`), `None` when not.
    pub since_end: Option<SinceEnd>,
}

/// A label someone added or removed, as the issue's events record it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelChange {
    pub label: String,
    pub added: bool,
    pub by: String,
}

/// What origin holds of an Issue branch: the branch head and every pull request from it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub branch: String,
    pub head: Option<String>,
    pub pulls: Vec<Pull>,
}

impl Origin {
    /// Whether anything of the Run reached origin (a branch, or a pull request in any state).
    pub fn has_work(&self) -> bool {
        self.head.is_some() || !self.pulls.is_empty()
    }

    /// What the label conventions need of it (`protocol::rules::labels_after`).
    pub fn facts(&self) -> crate::protocol::rules::OnOrigin {
        crate::protocol::rules::OnOrigin {
            work: self.has_work(),
            open_pull: self.pulls.iter().any(|p| p.state == "open"),
        }
    }

    /// Reads what origin holds of `branch`: its head and its pull requests (two requests).
    pub async fn read(ctx: &crate::context::Ctx, branch: &str) -> anyhow::Result<Origin> {
        let head = ctx.client.branch_head(branch).await?;
        let pulls = ctx.client.pulls_for_branch(branch).await?;
        let pulls = pulls
            .into_iter()
            .map(|p| Pull {
                number: p.number,
                state: p.state,
                merged: p.merged,
                html_url: p.html_url,
            })
            .collect();
        Ok(Origin {
            branch: branch.to_string(),
            head,
            pulls,
        })
    }

    /// The pull request to name: an open one first, else the newest.
    pub fn pull_request(&self) -> Option<u64> {
        let open = self
            .pulls
            .iter()
            .filter(|p| p.state == "open")
            .map(|p| p.number)
            .max();
        open.or_else(|| self.pulls.iter().map(|p| p.number).max())
    }
}

/// A pull request as reconcile needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pull {
    pub number: u64,
    pub state: String,
    pub merged: bool,
    pub html_url: String,
}

impl IssueSnapshot {
    /// Whether the latest end record that states labels still has label work on this issue:
    /// `in-progress` is on it and either comes off (not listed) or a listed label is missing; or
    /// a hand-back took `in-progress` off and a listed label is still missing.
    pub fn label_work_left(&self, in_progress: &str) -> bool {
        let Some((end, list)) = self.ownership.latest_intent() else {
            return false;
        };
        let listed = |l: &str| list.iter().any(|x| x.eq_ignore_ascii_case(l));
        let missing = list.iter().any(|l| !self.has_label(l));
        let claimed = self.has_label(in_progress) && (!listed(in_progress) || missing);
        // A hand-back takes `in-progress` off first: killed after that, its label goes on next.
        let handing_back = !self.has_label(in_progress) && end.record.is_hand_back() && missing;
        self.ownership.active().next().is_none() && (claimed || handing_back)
    }

    /// Whether a person changed `label` that way (`added`) since the latest end record.
    pub fn changed_by_people(&self, label: &str, added: bool) -> bool {
        self.since_end
            .iter()
            .flat_map(|s| &s.people)
            .any(|c| c.added == added && c.label.eq_ignore_ascii_case(label))
    }

    /// Whether it was claimed again since the latest end record ([`SinceEnd::claimed_again`]).
    pub fn claimed_again(&self) -> bool {
        self.since_end.as_ref().is_some_and(|s| s.claimed_again)
    }

    /// Whether the issue carries `label` (case-insensitive, as GitHub compares them).
    pub fn has_label(&self, label: &str) -> bool {
        self.labels.iter().any(|l| l.eq_ignore_ascii_case(label))
    }
}

/// A host report as read from the registry issue.
#[derive(Clone, Debug)]
pub struct ReportView {
    pub comment_id: u64,
    pub author: String,
    pub updated_at: DateTime<Utc>,
    pub report: HostReport,
}

impl Snapshot {
    /// Every record this read ignored because its author is not trusted, counted by login:
    /// claim, end, cancel and reply records on the issues read, host reports and registry
    /// issues. A login listed here may be a host writing as another identity, or a stranger.
    pub fn untrusted(&self) -> Untrusted {
        let mut by = self.untrusted_outside_issues.clone();
        for issue in &self.issues {
            for p in &issue.ownership.problems {
                if matches!(
                    p.kind,
                    crate::protocol::record::ProblemKind::Untrusted { .. }
                ) {
                    *by.entry(p.author.to_ascii_lowercase()).or_default() += 1;
                }
            }
        }
        by
    }

    /// The report of host `host` on machine `machine_id`, if it ever reported.
    pub fn report_of(&self, host: &str, machine_id: &str) -> Option<&ReportView> {
        self.reports
            .iter()
            .find(|r| r.report.host == host && r.report.machine_id == machine_id)
    }

    /// The first report under the name `host`, from whichever machine.
    pub fn report_for(&self, host: &str) -> Option<&ReportView> {
        self.reports.iter().find(|r| r.report.host == host)
    }

    /// The thirdshift Commands hosts report on `issue` that no end record ended yet, with the
    /// report of each, in report order.
    pub fn adopted_on<'s>(
        &'s self,
        issue: &IssueSnapshot,
    ) -> Vec<(&'s ReportView, &'s crate::protocol::record::ClaimVerdict)> {
        let mut out = Vec::new();
        for report in &self.reports {
            for verdict in &report.report.claims {
                let open = issue.ownership.adopted_end(&verdict.claim_id).is_none();
                if verdict.issue == issue.number && !verdict.run.is_ours() && open {
                    out.push((report, verdict));
                }
            }
        }
        out
    }

    /// The Runs working on issue `n`, for `protocol::collision`: its owning claim of ours in
    /// `own` (the issue's ownership, perhaps read fresher than the snapshot), and the thirdshift
    /// Commands hosts report on it alive or with writers alive that `own` shows no end of.
    pub fn runs_working_on(
        &self,
        n: u64,
        own: &crate::protocol::record::Ownership,
    ) -> Vec<crate::protocol::collision::Contender> {
        let mut out: Vec<_> = (own.owner.iter())
            .map(|c| crate::protocol::collision::Contender {
                claim_id: c.record.claim_id.clone(),
                host: c.record.host.clone(),
            })
            .collect();
        for report in &self.reports {
            for v in &report.report.claims {
                let working = !v.verdict.is_dead() && !v.run.is_ours();
                if v.issue == n && working && own.adopted_end(&v.claim_id).is_none() {
                    out.push(crate::protocol::collision::Contender {
                        claim_id: v.claim_id.clone(),
                        host: report.report.host.clone(),
                    });
                }
            }
        }
        out
    }

    /// The live thirdshift Command a host reports on open `issue`, if any: what `cancel` stops.
    /// Of several, the one that keeps the issue (the lowest place, `protocol::collision`), as a
    /// cancel of our Runs stops the owner.
    pub fn live_adopted_on<'s>(
        &'s self,
        issue: &IssueSnapshot,
    ) -> Option<(&'s ReportView, &'s crate::protocol::record::ClaimVerdict)> {
        let alive = |v: &crate::protocol::record::ClaimVerdict| {
            matches!(v.verdict, crate::protocol::record::Verdict::Alive)
        };
        issue.open.then_some(())?;
        let place = |id: &str| {
            let placed = crate::protocol::collision::place(&issue.ownership, id);
            (placed.unwrap_or(u64::MAX), id.to_string())
        };
        let live = self.adopted_on(issue).into_iter().filter(|(_, v)| alive(v));
        live.min_by_key(|(_, v)| place(&v.claim_id))
    }

    /// The issue numbered `n`, if it is in the snapshot.
    pub fn issue(&self, n: u64) -> Option<&IssueSnapshot> {
        self.issues.iter().find(|i| i.number == n)
    }
}
