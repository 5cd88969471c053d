//! Pure rules shared by a Run ending its own Claim and reconcile ending a dead Run's Claim, so the
//! two can never disagree: whether a Run started work, and which label an issue gets when its
//! Claim ends. No IO.

use crate::protocol::config::{LabelEnding, Labels};
use crate::protocol::record::{CancelView, ClaimRecord, ClaimView, EndView, Outcome, Salvage};

/// The stage a claim record starts in.
pub const STAGE_CLAIMED: &str = "claimed";
/// The stage a Run records when its command has started.
pub const STAGE_RUNNING: &str = "running";

/// Whether the Run did any work worth keeping: it reported a stage of its own (see
/// docs/adr/0001).
pub fn work_started(record: &ClaimRecord) -> bool {
    record.stage != STAGE_CLAIMED && record.stage != STAGE_RUNNING
}

/// What reached origin of a Run, as read from GitHub (its Issue branch and pull requests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOrigin {
    /// The Issue branch exists there, or a pull request of it does (any state).
    pub work: bool,
    /// A pull request of the Issue branch is open.
    pub open_pull: bool,
}

/// Whether an ended Run left work anyone should look at: anything of it on origin (`on_origin`:
/// its Issue branch or a pull request, as read from GitHub; `None` when not read), or anything
/// its host kept (`kept`, the salvage report: commits or files it saved, or work it had to leave
/// in place; when origin was not read, a salvage that found the Issue branch on origin counts
/// too); a worktree that is gone keeps nothing, so with origin read and empty nothing is left;
/// without a salvage report (no worktree was recorded), whether the Run reported a stage of its
/// own. One rule for a Run ending its own Claim and for reconcile ending a dead one
/// (docs/adr/0001).
pub fn work_left(record: &ClaimRecord, on_origin: Option<bool>, kept: Option<&Salvage>) -> bool {
    if on_origin == Some(true) {
        return true;
    }
    match kept {
        Some(k) if k.worktree_missing && on_origin.is_some() => false,
        Some(k) => !k.nothing_to_keep || (on_origin.is_none() && k.pushed),
        None => work_started(record),
    }
}

/// The labels the issue of `record` gets when its Claim ends with `outcome` (listing
/// `in-progress`: it stays on), by the configured conventions (`labels.preset`, `labels.after`):
/// a finished Run by whether its pull request is open; a failed or recovered one by whether it
/// left work ([`work_left`]; a Claim that had not removed `ready-for-agent` counts as having left
/// some, so the issue goes to people rather than into a queue it was never in); `ready-for-agent`
/// is only ever put back by a Claim that took it off. Other outcomes touch no label.
pub fn labels_after(
    labels: &Labels,
    record: &ClaimRecord,
    outcome: Outcome,
    on_origin: Option<OnOrigin>,
    kept: Option<&Salvage>,
) -> Vec<String> {
    let ending = match outcome {
        Outcome::Done if on_origin.is_some_and(|o| o.open_pull) => LabelEnding::DoneWithPullRequest,
        Outcome::Done => LabelEnding::Done,
        Outcome::HandedBack => LabelEnding::HandedBack,
        Outcome::Cancelled => LabelEnding::Cancelled,
        Outcome::Failed | Outcome::Recovered => {
            let work = on_origin.map(|o| o.work);
            if !record.removed_ready || work_left(record, work, kept) {
                LabelEnding::FailedWithWork
            } else {
                LabelEnding::FailedWithNothing
            }
        }
        _ => return Vec::new(),
    };
    let mut list = labels.after(ending);
    if !record.removed_ready {
        list.retain(|l| !l.eq_ignore_ascii_case(&labels.ready));
    }
    list
}

/// The Run whose Claim ends, as the one end-label rule ([`end_labels`]) needs it.
#[derive(Clone, Copy, Debug)]
pub enum Ended<'a> {
    /// One of ours, its Claim `record`, ending with `outcome`; `started`: its command started;
    /// `on_origin`: what origin holds of it (`None` when not read); `kept`: what its host kept.
    Ours {
        record: &'a ClaimRecord,
        outcome: Outcome,
        started: bool,
        on_origin: Option<OnOrigin>,
        kept: Option<&'a Salvage>,
    },
    /// A dead Run of ours re-queued as a Continuation (the recovery policy's choice, or a
    /// person's `recover --continue`).
    Continued,
    /// A dead thirdshift Command; `started`: its issue was started on origin.
    Thirdshift { started: bool },
}

/// The labels an issue gets when a Claim ends, listing `in-progress` when it stays on: the one
/// rule for a Run ending its own Claim, observe's carried-out cancel, and reconcile ending a dead
/// or finished Run of ours or a dead thirdshift Command, by the label conventions
/// (`labels.preset`, `labels.after`). Ours: by [`labels_after`] when the command had started,
/// else as the Claim found the issue ([`label_unstarted`]); a Continuation: back to the queue;
/// thirdshift's: as its own Failed run leaves it ([`adopted_labels_after`]). The failure limit
/// and a cancel's hold settle the result (`protocol::failures::settle`).
pub fn end_labels(labels: &Labels, ended: Ended<'_>) -> Vec<String> {
    match ended {
        Ended::Ours {
            record,
            started: false,
            ..
        } => label_unstarted(labels, record)
            .into_iter()
            .map(str::to_string)
            .collect(),
        Ended::Ours {
            record,
            outcome,
            on_origin,
            kept,
            ..
        } => labels_after(labels, record, outcome, on_origin, kept),
        Ended::Continued => vec![labels.ready.clone()],
        Ended::Thirdshift { started } => adopted_labels_after(labels, started),
    }
}

/// The label to add when a Claim ends whose Run's command never started: `ready-for-agent`
/// back when the Claim had removed it, else none, so the issue is as the Claim found it.
pub fn label_unstarted<'a>(labels: &'a Labels, record: &ClaimRecord) -> Option<&'a str> {
    record.removed_ready.then_some(labels.ready.as_str())
}

pub use crate::protocol::config::AGENT_FAILED;

/// thirdshift 0.19.0's label of a Security fix Ticket (`security::fixing::SECURITY_FIX`), whose
/// failed run keeps its Claim even with nothing on origin.
pub const SECURITY_FIX: &str = "security-fix";

/// The labels a dead thirdshift Command's issue carries once its Claim ends, as thirdshift's own
/// Failed run labels it (docs/thirdshift.md): with work `started` (anything on origin, or kept
/// on its host) the Claim stays and the issue is labelled `agent-failed`; with none it is
/// released, `ready-for-agent` back in place of `in-progress`.
pub fn adopted_labels_after(labels: &Labels, started: bool) -> Vec<String> {
    if started {
        vec![labels.in_progress.clone(), AGENT_FAILED.to_string()]
    } else {
        vec![labels.ready.clone()]
    }
}

/// Whether `branch` is a later Issue branch of `issue` as thirdshift names them
/// (`issue-N-branch-K`, K ≥ 2): thirdshift takes one only once the earlier ones were used on
/// origin (`src/branch.rs`, `select`), so the issue was started there.
pub fn later_issue_branch(issue: u64, branch: &str) -> bool {
    branch
        .strip_prefix(&format!("issue-{issue}-branch-"))
        .and_then(|k| k.parse::<u64>().ok())
        .is_some_and(|k| k >= 2)
}

/// How many times an issue was already continued, counted from its end records.
pub fn continuations(ended: &[(ClaimView, EndView)]) -> u32 {
    let n = ended
        .iter()
        .filter(|(_, e)| e.record.outcome == Outcome::Continued)
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The signals that stop a Run: a Run ended by one of them while a cancel request for its Claim
/// is pending was stopped by that request.
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGTERM, libc::SIGKILL, libc::SIGINT, libc::SIGHUP];

/// How a Claim stopped on `request` ends: `recovered` when `/thirdshift recover --kill` asked,
/// else `cancelled`.
pub fn cancel_outcome(request: &CancelView) -> Outcome {
    if request.record.recover {
        Outcome::Recovered
    } else {
        Outcome::Cancelled
    }
}

/// Whether `login`, with repository role `role`, can be an identity the repository's own hosts
/// or workflows write as: someone with write access, or an App (`name[bot]`), which can write to
/// the repository only when an admin installed it. A registry issue by such an author, even one
/// not trusted, stands: no second one is made beside it. Anyone else may be a stranger.
pub fn writes_for_the_repository(login: &str, role: crate::protocol::config::Role) -> bool {
    role >= crate::protocol::config::Role::Write || login.ends_with("[bot]")
}

/// How often at most an author without the role is told so in a reply; their other commands
/// get a `-1` reaction only. A display and budget rule, deciding nothing about a Claim.
pub const REFUSAL_REPLY_EVERY: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// At most this many authors' last refusals are kept in (and believed from) the view record.
pub const REFUSALS_KEPT_MAX: usize = 200;

/// The last refusal of a command for want of the role, by author in lower case.
pub type Refusals = std::collections::BTreeMap<String, chrono::DateTime<chrono::Utc>>;

/// The refusals (author in lower case, when) still within [`REFUSAL_REPLY_EVERY`] of `now`:
/// none in the future (the registry's body is editable), the latest per author, at most
/// [`REFUSALS_KEPT_MAX`] of them, the latest first kept.
pub fn recent_refusals(
    refusals: impl IntoIterator<Item = (String, chrono::DateTime<chrono::Utc>)>,
    now: chrono::DateTime<chrono::Utc>,
) -> Refusals {
    let mut latest = Refusals::new();
    for (author, at) in refusals {
        if at <= now && now - at < REFUSAL_REPLY_EVERY {
            let kept = latest.entry(author.to_ascii_lowercase()).or_insert(at);
            *kept = (*kept).max(at);
        }
    }
    if latest.len() > REFUSALS_KEPT_MAX {
        let mut by_time: Vec<_> = latest.into_iter().collect();
        by_time.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
        by_time.truncate(REFUSALS_KEPT_MAX);
        latest = by_time.into_iter().collect();
    }
    latest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_writer_or_an_app_can_be_the_repositorys_own_identity() {
        use crate::protocol::config::Role;
        assert!(writes_for_the_repository("alice", Role::Write));
        assert!(writes_for_the_repository("alice", Role::Admin));
        assert!(writes_for_the_repository("github-actions[bot]", Role::None));
        assert!(!writes_for_the_repository("mallory", Role::Triage));
        assert!(!writes_for_the_repository("mallory", Role::None));
    }

    #[test]
    fn handed_back_claims_are_requeued_and_cancelled_ones_held() {
        let labels = Labels::default();
        let mut record = crate::protocol::record::claim::tests::sample_claim();
        record.removed_ready = true;
        let back = labels_after(&labels, &record, Outcome::HandedBack, None, None);
        assert_eq!(back, ["ready-for-agent"]);
        let held = labels_after(&labels, &record, Outcome::Cancelled, None, None);
        assert!(held.is_empty(), "a cancel holds: {held:?}");
        record.removed_ready = false;
        assert!(labels_after(&labels, &record, Outcome::HandedBack, None, None).is_empty());
    }

    fn kept(nothing_to_keep: bool, pushed: bool) -> Salvage {
        Salvage {
            pushed,
            nothing_to_keep,
            ..Salvage::untouched("/w".into(), "issue-42".into())
        }
    }

    #[test]
    fn a_failed_run_whose_host_kept_work_goes_to_people_even_without_a_stage() {
        // given a Claim that removed the ready label and never reported a stage of its own
        let labels = Labels::default();
        let record = crate::protocol::record::claim::tests::sample_claim();
        let record = ClaimRecord {
            stage: STAGE_RUNNING.into(),
            removed_ready: true,
            ..record
        };
        for outcome in [Outcome::Failed, Outcome::Recovered] {
            // when its host kept commits or files, or found its Issue branch on origin
            for k in [kept(false, false), kept(false, true), kept(true, true)] {
                // then the issue goes to people
                assert_eq!(
                    labels_after(&labels, &record, outcome, None, Some(&k)),
                    ["ready-for-human"],
                    "{outcome:?} {k:?}"
                );
            }
            // and when salvage found nothing at all, or nothing was known, back to the queue
            for k in [Some(&kept(true, false)), None] {
                assert_eq!(
                    labels_after(&labels, &record, outcome, None, k),
                    ["ready-for-agent"]
                );
            }
        }
    }

    #[test]
    fn a_worktree_gone_keeps_nothing_once_origin_was_read_and_is_empty() {
        // given a failed Run that reported a stage, whose worktree the factory removed
        let record = ClaimRecord {
            stage: "implementing".into(),
            removed_ready: true,
            ..crate::protocol::record::claim::tests::sample_claim()
        };
        let gone = Salvage {
            worktree_missing: true,
            ..Salvage::untouched("/w".into(), "issue-42".into())
        };
        let labels = Labels::default();
        let nothing = OnOrigin {
            work: false,
            open_pull: false,
        };
        // when origin was read and holds nothing of it, the issue goes back to the queue
        let after = labels_after(
            &labels,
            &record,
            Outcome::Failed,
            Some(nothing),
            Some(&gone),
        );
        assert_eq!(after, ["ready-for-agent"]);
        // and when origin could not be read, to people, as before
        let unread = labels_after(&labels, &record, Outcome::Failed, None, Some(&gone));
        assert_eq!(unread, ["ready-for-human"]);
    }

    #[test]
    fn the_thirdshift_preset_keeps_in_progress_on_a_done_run_with_an_open_pull_request() {
        let labels = Labels {
            preset: crate::protocol::config::Preset::Thirdshift,
            ..Labels::default()
        };
        let record = ClaimRecord {
            removed_ready: true,
            ..crate::protocol::record::claim::tests::sample_claim()
        };
        let open = OnOrigin {
            work: true,
            open_pull: true,
        };
        let done = labels_after(&labels, &record, Outcome::Done, Some(open), None);
        assert_eq!(done, ["in-progress"]);
        let failed = labels_after(&labels, &record, Outcome::Failed, Some(open), None);
        assert_eq!(failed, ["in-progress", "agent-failed"]);
    }

    #[test]
    fn work_on_origin_counts_whatever_salvage_found() {
        let record = crate::protocol::record::claim::tests::sample_claim();
        assert!(work_left(&record, Some(true), Some(&kept(true, false))));
        // a salvage that found the branch on origin counts only when origin was not read
        assert!(work_left(&record, None, Some(&kept(true, true))));
        assert!(!work_left(&record, Some(false), Some(&kept(true, true))));
        let quiet = ClaimRecord {
            stage: STAGE_RUNNING.into(),
            ..record
        };
        assert!(!work_left(&quiet, None, Some(&kept(true, false))));
        let staged = ClaimRecord {
            stage: "implementing".into(),
            ..quiet
        };
        // a stage of its own counts only when no salvage report says what is there
        assert!(work_left(&staged, None, None));
        assert!(!work_left(&staged, None, Some(&kept(true, false))));
    }
}
