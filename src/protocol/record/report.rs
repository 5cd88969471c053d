//! The host report record: one comment per host on the registry issue, written by that host's
//! `observe`, edited in place only when a verdict or the host's identity changes. It carries this
//! host's verdict on every Claim naming it; reconcile ends a Claim only on a `dead` verdict from
//! the Claim's own host (same host name and machine id). No clock appears in it on purpose: an
//! unchanged world gives a byte-identical report, so nothing is rewritten.

use super::RunOf;
use serde::{Deserialize, Serialize};

/// Why a Claim's owner is dead, as its host proved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeathReason {
    /// No process has the recorded PID.
    PidGone,
    /// A process has the PID but started at another time: the PID was reused.
    PidReused,
    /// The host booted since the Claim was taken (its boot id changed).
    Rebooted,
}

impl DeathReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DeathReason::PidGone => "PID gone",
            DeathReason::PidReused => "PID reused",
            DeathReason::Rebooted => "rebooted",
        }
    }
}

/// What a host saw of one of its Claims.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// The owning process runs (same PID, same start time, same boot).
    Alive,
    /// The owner is gone and no process of its session or with its Claim in the environment
    /// survives.
    Dead {
        reason: DeathReason,
        evidence: String,
    },
    /// The owner is gone but these processes of its Run still run: not dead yet.
    WritersAlive { pids: Vec<u32>, evidence: String },
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Alive => "alive",
            Verdict::Dead { .. } => "dead",
            Verdict::WritersAlive { .. } => "writers alive",
        }
    }

    /// Whether the owner is proven dead with no writer left.
    pub fn is_dead(&self) -> bool {
        matches!(self, Verdict::Dead { .. })
    }
}

/// What a host kept of a dead Run's work (`crate::salvage`): where it is and whether it reached
/// origin. Carried in the host report and copied into the end record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Salvage {
    pub worktree: String,
    pub branch: String,
    /// The branch head after salvage (full sha), when known.
    #[serde(default)]
    pub head: Option<String>,
    /// The `thirdshift: failed run (…)` commit, if one was made.
    #[serde(default)]
    pub salvage_commit: Option<String>,
    /// Commits on the branch that origin did not have before, oldest first.
    #[serde(default)]
    pub commits: Vec<String>,
    /// Origin's branch now equals `head`.
    #[serde(default)]
    pub pushed: bool,
    /// Files that were uncommitted before salvage.
    #[serde(default)]
    pub dirty_files: usize,
    /// Commits of `head` not on origin after the attempt.
    #[serde(default)]
    pub unpushed_commits: usize,
    #[serde(default)]
    pub worktree_missing: bool,
    /// No dirty files and no commits beyond origin: nothing committed, nothing pushed.
    #[serde(default)]
    pub nothing_to_keep: bool,
    /// What failed, for people.
    #[serde(default)]
    pub error: Option<String>,
    /// Where its host moved the worktree aside (`git worktree move`, never deleted) so a
    /// thirdshift Continuation can take its path and branch (`thirdshift.on_dead: continue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
}

impl Salvage {
    /// The report of a salvage that has done nothing yet in `worktree` on `branch`.
    pub fn untouched(worktree: String, branch: String) -> Salvage {
        Salvage {
            worktree,
            branch,
            head: None,
            salvage_commit: None,
            commits: Vec::new(),
            pushed: false,
            dirty_files: 0,
            unpushed_commits: 0,
            worktree_missing: false,
            nothing_to_keep: false,
            error: None,
            moved_to: None,
        }
    }

    /// Where the kept work is now, when salvage worked in it: its moved-aside place, else the
    /// worktree (`None` for a worktree not found or not believed).
    pub fn work_is_at(&self) -> Option<&str> {
        let worked_in = !self.worktree_missing && (self.head.is_some() || self.nothing_to_keep);
        self.moved_to
            .as_deref()
            .or(worked_in.then_some(self.worktree.as_str()))
    }
}

/// A host's verdict on one Claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    pub claim_id: String,
    pub issue: u64,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// For a dead Claim with a worktree: what salvage kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Salvage>,
    /// Ours, or a thirdshift Command this host adopted (docs/thirdshift.md) with what its
    /// record says (the `thirdshift` key on the wire).
    #[serde(
        default,
        rename = "thirdshift",
        skip_serializing_if = "RunOf::is_ours",
        with = "super::run::wire"
    )]
    pub run: RunOf<AdoptedRun>,
    /// How the Run ended by itself, as it kept it in this host's local record before GitHub
    /// refused its end record: reconcile ends the Claim with this outcome, never as a recovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<Box<RunEnding>>,
    /// Whether a companion on the host watches the Run now, so its death is acted on within
    /// seconds rather than at the host's next pass. Display only: nothing is decided on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub watched: bool,
}

/// How a Run ended by itself (its command's outcome), kept in its local record before its end
/// record is posted, so a refused write never turns a finished Run into a recovered one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEnding {
    pub outcome: super::Outcome,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Why its command died, when it died (`super::Cause`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<super::Cause>,
    /// What the Run kept of its work (`crate::ending::keep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Salvage>,
    /// Whether the Run's command started (a Claim whose command never started gives the labels
    /// back as it found them).
    pub started: bool,
}

/// A thirdshift Command as its record on the host describes it, for people and the live view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdoptedRun {
    /// The record's path under thirdshift's logs folder.
    pub record: String,
    /// thirdshift's kind: `Ticket`, `Spec`, `Pickup`, …
    pub kind: String,
    /// Its process, as thirdshift recorded it (`process_id`).
    #[serde(default)]
    pub pid: u32,
    /// `<boot_id>:<start ticks>` of its process, as thirdshift recorded it.
    pub process_start: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_since: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_log: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// The agent session id its Session log names (`protocol::session_log`), for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// One host's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostReport {
    pub host: String,
    pub machine_id: String,
    pub boot_id: String,
    /// Verdicts, sorted by claim id.
    #[serde(default)]
    pub claims: Vec<ClaimVerdict>,
    /// How many Runs this host carries at once (configured, or derived from cores and memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
    /// Slots in use: this host's live Claims across every repository it serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots_used: Option<u32>,
    /// When the host booted (the boot `boot_id` names), for the live view. Read once per boot
    /// and kept while the boot id stays the same, so it never makes a report change by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booted_at: Option<chrono::DateTime<chrono::Utc>>,
    /// How often this host rewrites its report when nothing changed, in seconds: a report much
    /// older than that says its `observe` stopped (the view shows it; nothing is decided on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_secs: Option<u64>,
    /// When the host wrote this report (its own clock): what changes at a refresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl HostReport {
    /// Whether `other` says what this report says, whenever each was written.
    pub fn same_as(&self, other: &HostReport) -> bool {
        let undated = |r: &HostReport| HostReport {
            written_at: None,
            ..r.clone()
        };
        undated(self) == undated(other)
    }

    /// This host's verdict on `claim_id`, if it reported one.
    pub fn verdict(&self, claim_id: &str) -> Option<&Verdict> {
        self.claims
            .iter()
            .find(|c| c.claim_id == claim_id)
            .map(|c| &c.verdict)
    }

    /// The record's JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The checks beyond the JSON shape that a decoded report must pass.
    pub(crate) fn validate(&self) -> Result<(), String> {
        super::field::name("host", &self.host)?;
        for c in &self.claims {
            super::check_claim_id(&c.claim_id)?;
            if let Some(f) = &c.finished {
                super::field::text("finished.reason", &f.reason)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::record::{decode, Decoded, Record};
    use crate::text::ToComment;

    /// What a host reports of a thirdshift Ticket Command on issue 7 working on `branch`.
    pub(crate) fn sample_adopted_run(branch: &str) -> AdoptedRun {
        AdoptedRun {
            record: "o/r/commands/issue/7-20261204T100000+0000~0123456789abcdef.command.json"
                .into(),
            kind: "Ticket".into(),
            pid: 4242,
            process_start: "b-2:987654".into(),
            stage: Some("implementing".into()),
            stage_since: None,
            harness: Some("claude".into()),
            model: Some("opus".into()),
            effort: None,
            branch: Some(branch.into()),
            pull_request: None,
            session_log: None,
            resume: Some("thirdshift resume 7".into()),
            session: None,
        }
    }

    fn report() -> HostReport {
        HostReport {
            host: "builder-1".into(),
            machine_id: "m1".into(),
            boot_id: "b1".into(),
            claims: vec![
                ClaimVerdict {
                    claim_id: "c-1".into(),
                    issue: 4,
                    verdict: Verdict::Dead {
                        reason: DeathReason::PidGone,
                        evidence: "pid 42 is gone".into(),
                    },
                    kept: None,
                    run: Default::default(),
                    finished: None,
                    watched: false,
                },
                ClaimVerdict {
                    claim_id: "c-2".into(),
                    issue: 5,
                    verdict: Verdict::WritersAlive {
                        pids: vec![7, 8],
                        evidence: "2 processes of session 7 run".into(),
                    },
                    kept: None,
                    run: Default::default(),
                    finished: None,
                    watched: false,
                },
            ],
            capacity: Some(2),
            slots_used: Some(1),
            booted_at: None,
            refresh_secs: None,
            written_at: None,
        }
    }

    #[test]
    fn host_report_round_trips_through_a_comment() {
        let r = report();
        match decode(&r.to_comment()) {
            Decoded::Record(Record::HostReport(back)) => assert_eq!(back, r),
            other => panic!("not a host report: {other:?}"),
        }
    }

    #[test]
    fn report_without_capacity_reads_and_writes_as_before() {
        let old = HostReport {
            capacity: None,
            slots_used: None,
            ..report()
        };
        let json = old.to_json();
        assert!(json.get("capacity").is_none() && json.get("slots_used").is_none());
        let back: HostReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, old);
        assert_eq!(report().to_json()["capacity"], 2);
        assert_eq!(report().to_json()["slots_used"], 1);
    }

    #[test]
    fn verdict_wire_form_is_tagged_and_kebab_case() {
        let json = serde_json::to_value(&report().claims[0]).unwrap();
        assert_eq!(json["verdict"], "dead");
        assert_eq!(json["reason"], "pid-gone");
    }
}
