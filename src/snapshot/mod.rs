//! What one read of GitHub saw: the open (and recently closed) issues that matter to Claims with
//! their ownership as the record protocol reads it, and the hosts' reports from the registry
//! issue. `plan` decides from this alone; the view renders it. Reading it is `read.rs` (IO);
//! the types here hold no IO.

pub mod read;

use chrono::{DateTime, Utc};

use crate::record::{HostReport, Ownership};

/// One read of the repository.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Issues with `in-progress` or named in a host report, in number order.
    pub issues: Vec<IssueSnapshot>,
    /// The first trusted report of each host (name and machine id) on the registry issue.
    pub reports: Vec<ReportView>,
    /// The registry issue, if it exists yet.
    pub registry_issue: Option<u64>,
    /// Later duplicates of a host's report (trusted authors): comment ids to delete.
    pub duplicate_reports: Vec<u64>,
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
}

impl IssueSnapshot {
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

    /// The issue numbered `n`, if it is in the snapshot.
    pub fn issue(&self, n: u64) -> Option<&IssueSnapshot> {
        self.issues.iter().find(|i| i.number == n)
    }
}
