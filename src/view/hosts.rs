//! The hosts of the live view: every host that reported, and every host a Run names that never
//! did, with what a person needs to see of each — a host silent for longer than a few of its
//! own refresh intervals (its `observe` stopped: `SILENT_AFTER_REFRESHES`), one with more slots
//! in use than its capacity — and the Runs of a silent host shown as `host silent`.
//!
//! Display only: nothing here, and nothing that reads it, ends a Claim (DESIGN: evidence, never
//! timers). Pure: the caller gives `now`.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::row::{comment_url, RunHealth, RunRow};
use crate::protocol::config::SILENT_AFTER_REFRESHES;
use crate::snapshot::Snapshot;

/// One host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostRow {
    pub name: String,
    pub machine_id: Option<String>,
    pub booted_at: Option<DateTime<Utc>>,
    pub capacity: Option<u32>,
    pub slots_used: Option<u32>,
    /// Active Runs in this view naming the host.
    pub runs: usize,
    /// When its report was last written; `None`: it never reported.
    pub last_report: Option<DateTime<Utc>>,
    pub report_url: Option<String>,
    /// How often the host rewrites an unchanged report, as its report says (seconds).
    pub refresh_secs: Option<u64>,
    /// Its report is older than `SILENT_AFTER_REFRESHES` of its refresh intervals: its
    /// `observe` has probably stopped.
    pub silent: bool,
    /// It uses more slots than its capacity.
    pub over_capacity: bool,
}

/// Every reporting host, then every host a Run names that never reported, by name.
pub fn rows(snapshot: &Snapshot, runs: &[RunRow], now: DateTime<Utc>) -> Vec<HostRow> {
    let count = |name: &str| {
        runs.iter()
            .filter(|r| r.host.as_deref() == Some(name))
            .count()
    };
    let registry_url = snapshot.registry_page.as_ref().map(|p| p.html_url.as_str());
    let mut hosts: Vec<HostRow> = snapshot
        .reports
        .iter()
        .map(|v| {
            let r = &v.report;
            HostRow {
                name: r.host.clone(),
                machine_id: Some(r.machine_id.clone()),
                booted_at: r.booted_at,
                capacity: r.capacity,
                slots_used: r.slots_used,
                runs: count(&r.host),
                last_report: Some(v.updated_at),
                report_url: registry_url.map(|u| comment_url(u, v.comment_id)),
                refresh_secs: r.refresh_secs,
                silent: silent(v.updated_at, r.refresh_secs, now),
                over_capacity: matches!((r.slots_used, r.capacity), (Some(u), Some(c)) if u > c),
            }
        })
        .collect();
    for run in runs {
        let Some(name) = &run.host else { continue };
        if hosts.iter().any(|h| &h.name == name) {
            continue;
        }
        hosts.push(HostRow {
            name: name.clone(),
            machine_id: None,
            booted_at: None,
            capacity: None,
            slots_used: None,
            runs: count(name),
            last_report: None,
            report_url: None,
            refresh_secs: None,
            silent: false,
            over_capacity: false,
        });
    }
    hosts.sort_by(|a, b| (&a.name, &a.machine_id).cmp(&(&b.name, &b.machine_id)));
    hosts
}

/// Whether a report written at `written` by a host refreshing every `refresh_secs` is older
/// than [`SILENT_AFTER_REFRESHES`] intervals at `now` (a report that states no interval, from
/// a version that never refreshed, is never called silent).
fn silent(written: DateTime<Utc>, refresh_secs: Option<u64>, now: DateTime<Utc>) -> bool {
    refresh_secs.is_some_and(|secs| {
        let limit = secs.saturating_mul(SILENT_AFTER_REFRESHES);
        (now - written).num_seconds() > i64::try_from(limit).unwrap_or(i64::MAX)
    })
}

/// Shows the Runs of silent hosts as `host silent` (those a host has not proven dead), with
/// why. Display only.
pub fn mark_silent(runs: &mut [RunRow], hosts: &[HostRow]) {
    for run in runs.iter_mut() {
        let Some(host) = hosts
            .iter()
            .find(|h| h.silent && run.host.as_deref() == Some(h.name.as_str()))
        else {
            continue;
        };
        if matches!(
            run.health,
            RunHealth::Alive
                | RunHealth::Starting
                | RunHealth::WritersAlive
                | RunHealth::AwaitingHost
        ) {
            run.health = RunHealth::HostSilent;
            run.evidence = crate::text::reasons::host_silent_note(
                &host.name,
                host.last_report,
                host.refresh_secs.unwrap_or(0),
                &run.evidence,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_silent_only_past_a_few_of_its_own_refresh_intervals() {
        let now = Utc::now();
        let hour = Some(3600);
        assert!(!silent(now - chrono::Duration::hours(3), hour, now));
        assert!(silent(now - chrono::Duration::hours(4), hour, now));
        assert!(!silent(now - chrono::Duration::days(30), None, now));
    }
}
