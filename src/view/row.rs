//! One row of the live view, as every renderer shows it: a Run's health in the view's words and
//! what is known of the Run. Shared by the model and the rows it takes from hosts' reports
//! (`hosts.rs`, `adopted.rs`); it builds nothing.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::reconcile::Health;

/// The health of a Run in the view's words (`docs/view.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunHealth {
    Alive,
    /// Taken after its host's last report: the host has not had its turn to report on it yet.
    Starting,
    WritersAlive,
    AwaitingHost,
    HostMismatch,
    Superseded,
    Unowned,
    /// Proven dead by its host; the next pass (or this one, if it failed) ends the Claim.
    Dead,
    /// An active Claim on a closed issue, to be swept.
    IssueClosed,
    /// Its host's report is older than a few of its refresh intervals: the host's `observe`
    /// has probably stopped (display only; the Claim ends only on evidence).
    HostSilent,
    /// Works on an issue another Run, recorded first, keeps (`protocol::collision`).
    Colliding,
}

impl RunHealth {
    pub const ALL: [RunHealth; 11] = [
        RunHealth::Alive,
        RunHealth::Starting,
        RunHealth::WritersAlive,
        RunHealth::AwaitingHost,
        RunHealth::HostMismatch,
        RunHealth::Superseded,
        RunHealth::Unowned,
        RunHealth::Dead,
        RunHealth::IssueClosed,
        RunHealth::HostSilent,
        RunHealth::Colliding,
    ];

    /// The word people read: `alive`, `writers alive`, `awaiting host`, ….
    pub fn word(self) -> &'static str {
        match self {
            RunHealth::Alive => "alive",
            RunHealth::Starting => "starting",
            RunHealth::WritersAlive => "writers alive",
            RunHealth::AwaitingHost => "awaiting host",
            RunHealth::HostMismatch => "host mismatch",
            RunHealth::Superseded => "superseded",
            RunHealth::Unowned => "unowned",
            RunHealth::Dead => "dead",
            RunHealth::IssueClosed => "issue closed",
            RunHealth::HostSilent => "host silent",
            RunHealth::Colliding => "colliding",
        }
    }

    /// The wire name (kebab-case), also the HTML class suffix.
    pub fn slug(self) -> &'static str {
        match self {
            RunHealth::Alive => "alive",
            RunHealth::Starting => "starting",
            RunHealth::WritersAlive => "writers-alive",
            RunHealth::AwaitingHost => "awaiting-host",
            RunHealth::HostMismatch => "host-mismatch",
            RunHealth::Superseded => "superseded",
            RunHealth::Unowned => "unowned",
            RunHealth::Dead => "dead",
            RunHealth::IssueClosed => "issue-closed",
            RunHealth::HostSilent => "host-silent",
            RunHealth::Colliding => "colliding",
        }
    }

    /// The view's word for a plan finding; `None` for findings that are no Run.
    pub(super) fn of(h: &Health) -> Option<RunHealth> {
        Some(match h {
            Health::Alive => RunHealth::Alive,
            Health::Starting => RunHealth::Starting,
            Health::WritersAlive { .. } => RunHealth::WritersAlive,
            Health::AwaitingHost => RunHealth::AwaitingHost,
            Health::HostMismatch => RunHealth::HostMismatch,
            Health::Superseded => RunHealth::Superseded,
            Health::Colliding => RunHealth::Colliding,
            Health::Unowned => RunHealth::Unowned,
            Health::Recovered | Health::Continued => RunHealth::Dead,
            Health::Swept => RunHealth::IssueClosed,
            Health::LabelsFinished | Health::Finished | Health::PeoplesLabels => return None,
        })
    }
}

/// One active Run (or one issue `in-progress` without a Claim).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRow {
    pub issue: u64,
    pub title: String,
    pub issue_url: String,
    pub claim_id: Option<String>,
    pub claim_url: Option<String>,
    pub host: Option<String>,
    pub kind: Option<String>,
    pub harness: Option<String>,
    pub model: Option<String>,
    pub session: Option<String>,
    pub stage: Option<String>,
    pub stage_since: Option<DateTime<Utc>>,
    pub claimed_at: Option<DateTime<Utc>>,
    pub branch: Option<String>,
    pub health: RunHealth,
    /// The pass's evidence for the health, one sentence.
    pub evidence: String,
    /// Log paths or URLs, as the Run recorded them.
    pub logs: Vec<String>,
    /// For a thirdshift Command (docs/thirdshift.md): its record's path on its host.
    pub thirdshift_record: Option<String>,
    /// The command that resumes its agent session from its worktree, when its Harness is known
    /// (`crate::protocol::resume`); a thirdshift Command's as thirdshift recorded it.
    pub resume: Option<String>,
    /// For a Continuation: which one, of which Claim, and what started it.
    pub continues: Option<Continues>,
    /// Whether its host reports a companion watching it (its death is then acted on within
    /// seconds, not at the host's next pass).
    pub watched: bool,
    /// For a Run that collides: the Run, recorded first on the issue, that keeps it.
    pub collides_with: Option<crate::protocol::collision::Contender>,
}

/// The link of a Continuation's Run to the Claim it carries on: the chain of an issue's Runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Continues {
    /// 1 for the issue's first Continuation, and so on.
    pub number: u32,
    /// The dead Run's claim.
    pub claim_id: String,
    /// What started this Run, when its starter noted it in the end record.
    pub started_by: Option<crate::protocol::record::StartedBy>,
}

/// The address of comment `id` on the issue at `issue_url`.
pub fn comment_url(issue_url: &str, id: u64) -> String {
    format!("{issue_url}#issuecomment-{id}")
}
