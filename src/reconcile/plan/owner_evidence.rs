//! What the owning host's report says about a Claim: its verdict, a report from another machine
//! under the host's name, or nothing; and, when nothing, whether the Claim is only starting (taken
//! after the host's last report, within one of its refresh intervals: a host rewrites its report
//! at least that often, and names a new Claim at its next `observe`). Starting is a display
//! word: no Claim is ever ended or kept for it. Pure, like the rest of `plan`.

use chrono::TimeDelta;

use crate::protocol::record::{ClaimRecord, ClaimVerdict, ClaimView};

use super::Planner;

/// What the owning host's report says about a Claim.
pub(super) enum Evidence<'a> {
    /// No report from the host, or none that names this Claim.
    Missing,
    /// The report under the Claim's host name comes from another machine.
    OtherMachine {
        machine_id: &'a str,
    },
    Verdict(&'a ClaimVerdict),
}

impl Planner<'_> {
    /// The verdict of the Claim's own host (same host name and machine id), if any.
    pub(super) fn evidence(&self, owner: &ClaimView) -> Evidence<'_> {
        let claim = &owner.record;
        let Some(view) = self.snapshot.report_of(&claim.host, &claim.machine_id) else {
            return match self.snapshot.report_for(&claim.host) {
                None => Evidence::Missing,
                Some(other) => Evidence::OtherMachine {
                    machine_id: &other.report.machine_id,
                },
            };
        };
        let report = &view.report;
        report
            .claims
            .iter()
            .find(|v| v.claim_id == claim.claim_id && v.issue == claim.issue)
            .map_or(Evidence::Missing, Evidence::Verdict)
    }

    /// Whether a Claim its host has not reported on was taken after the host's last report
    /// (or before any), less than one of the host's refresh intervals ago (its report's, else
    /// this repository's `observe.refresh_mins`).
    pub(super) fn starting(&self, claim: &ClaimRecord) -> bool {
        let report = self.snapshot.report_of(&claim.host, &claim.machine_id);
        if report.is_some_and(|r| r.updated_at >= claim.claimed_at) {
            return false;
        }
        let secs = report.and_then(|r| r.report.refresh_secs);
        let secs = secs.unwrap_or_else(|| self.config.observe.refresh_secs());
        let every = TimeDelta::seconds(i64::try_from(secs).unwrap_or(i64::MAX));
        let age = self.input.now - claim.claimed_at;
        age < every
    }
}
