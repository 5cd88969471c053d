//! The end record: the append-only, final comment that ends one Claim, naming the claim, the
//! outcome, the evidence and who ended it. Once a trusted end record names a claim id, that
//! Claim no longer owns anything.
//!
//! It does not choose the outcome or apply labels (the Run and reconcile do); `labels_after`
//! only records what the ender meant the labels to become, so a pass killed between writing the
//! end record and fixing the labels can be finished by the next one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{check_claim_id, field, RunOf};

/// The most Runs an end record lists as failures (`recovery.max_failures` is at most this).
pub const MAX_FAILURES_LISTED: usize = 10;

/// How a Claim ended. Kebab-case on the wire (`handed-back`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// CMD exited 0: the work was delivered.
    Done,
    /// CMD exited non-zero (or died by a signal it was not sent).
    Failed,
    /// The Run was stopped by SIGINT/SIGTERM/SIGHUP and gave the issue back.
    HandedBack,
    /// The claim lost the race to an earlier claim before doing any work.
    Withdrawn,
    /// An earlier active claim owns the issue; reconcile ended this later one.
    Superseded,
    /// The Run was proven dead by its host; the Claim ended as a failed run would.
    Recovered,
    /// Stopped on a `/thirdshift cancel` request.
    Cancelled,
    /// The Run was proven dead and the issue re-queued as a Continuation.
    Continued,
    /// Cleared up with no Run to account for it (e.g. its issue was closed).
    Swept,
}

impl Outcome {
    pub const ALL: [Outcome; 9] = [
        Outcome::Done,
        Outcome::Failed,
        Outcome::HandedBack,
        Outcome::Withdrawn,
        Outcome::Superseded,
        Outcome::Recovered,
        Outcome::Cancelled,
        Outcome::Continued,
        Outcome::Swept,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Failed => "failed",
            Outcome::HandedBack => "handed-back",
            Outcome::Withdrawn => "withdrawn",
            Outcome::Superseded => "superseded",
            Outcome::Recovered => "recovered",
            Outcome::Cancelled => "cancelled",
            Outcome::Continued => "continued",
            Outcome::Swept => "swept",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Outcome {
    type Err = String;

    fn from_str(s: &str) -> Result<Outcome, String> {
        Outcome::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| format!("unknown outcome `{s}`"))
    }
}

/// `<!-- thirdshift:v1:end {…} -->`: the end of one Claim. Unknown fields are tolerated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndRecord {
    /// The claim this ends.
    pub claim_id: String,
    pub issue: u64,
    pub outcome: Outcome,
    /// Who ended it: `run@HOST`, `observe@HOST`, `reconcile`, a person's login…
    pub actor: String,
    /// A human summary of the evidence (`PID 4242 gone after reboot`, `exit code 1`).
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Why the Run died, as far as its host could know (`cause.rs`); absent for a Run that ended
    /// by itself without dying, and in records written before causes were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<super::Cause>,
    /// The id of the claim comment ended, when the ender knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_comment_id: Option<u64>,
    /// The id of the issue's newest label event its writer had read just before posting this
    /// record: events with a larger id came after it (`snapshot::since_end`). Absent in records
    /// written before ids were kept, and when the issue had no label event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_seen: Option<u64>,
    /// The labels the ender adds when it owned the issue's labels (`in-progress` is always
    /// removed; no other label is touched). `None`: the Claim did not own the labels
    /// (withdrawn, superseded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_after: Option<Vec<String>>,
    /// What the dead Run's host kept of its work (salvage), when it had a worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<super::Salvage>,
    /// The Run's pull request, when one exists (any state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<u64>,
    /// For outcome `continued`: what the next Run resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation: Option<Box<Continuation>>,
    /// The command a person runs to resume the agent session, when the Harness allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// The agent session id, when the issue goes to people: resumable by hand even when no
    /// command is known for its Harness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Ours, or a thirdshift Command (no claim comment) with the evidence it was judged on, as
    /// its host read it from thirdshift's own record (the `adopted` key on the wire).
    #[serde(
        default,
        rename = "adopted",
        skip_serializing_if = "RunOf::is_ours",
        with = "super::run::wire"
    )]
    pub run: RunOf<AdoptedEvidence>,
    /// Set when this end hands the issue to people at the failure limit
    /// (`recovery.max_failures`): the Runs that failed in a row, this one last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailedRun>,
    pub ended_at: DateTime<Utc>,
}

/// One Run counted toward an issue's failure limit, as its end record tells it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedRun {
    pub claim_id: String,
    pub host: String,
    pub outcome: Outcome,
    pub reason: String,
}

/// What identifies the thirdshift Command an end record ends: its host, its record's path under
/// thirdshift's logs folder, its PID and `process_start` (`<boot_id>:<start ticks>`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdoptedEvidence {
    pub host: String,
    pub machine_id: String,
    pub record: String,
    pub pid: u32,
    pub process_start: String,
}

/// What a Continuation hands to the next Run of the issue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Continuation {
    /// 1 for the first Continuation of the issue, and so on.
    pub number: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// The dead Run's worktree, which its agent session belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// Where and by whom the Continuation was started, noted by its starter once the new Run
    /// won its Claim (absent until then, or when a person or a script started it by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<Box<ContinuationStart>>,
}

/// A Continuation started: the new Run's claim, its host, and what started it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinuationStart {
    pub claim_id: String,
    pub host: String,
    pub by: StartedBy,
}

/// What started a Continuation's Run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StartedBy {
    /// The dead Run's companion, on the dead Run's host, seconds after the death.
    Companion,
    /// A `pickup` pass.
    Pickup,
    /// A starter this version does not know (a later version's).
    #[serde(other)]
    Other,
}

impl EndRecord {
    /// The end of `claim` with `outcome` by `actor` at `ended_at`, its reason made to fit its
    /// field (`field::fit_text`) and every other field empty: the writer fills what it knows.
    pub fn ending(
        claim: &super::ClaimRecord,
        outcome: Outcome,
        actor: &str,
        reason: &str,
        ended_at: DateTime<Utc>,
    ) -> EndRecord {
        EndRecord {
            claim_id: claim.claim_id.clone(),
            issue: claim.issue,
            outcome,
            actor: actor.to_string(),
            reason: field::fit_text(reason),
            exit_code: None,
            signal: None,
            cause: None,
            claim_comment_id: None,
            events_seen: None,
            labels_after: None,
            kept: None,
            pull_request: None,
            continuation: None,
            resume: None,
            session: None,
            run: Default::default(),
            failures: Vec::new(),
            ended_at,
        }
    }

    /// The person who forced this ending (`/thirdshift recover --force`), if a person did: the
    /// actor is then their login, which never holds `@` (every actor of this tool does:
    /// `run@HOST`, `reconcile@HOST`, `observe@HOST`, `command@HOST`; `reconcile` of old).
    pub fn forced_by(&self) -> Option<&str> {
        let recovered = matches!(self.outcome, Outcome::Recovered | Outcome::Continued);
        let person = !self.actor.contains('@') && self.actor != "reconcile";
        (recovered && person).then_some(self.actor.as_str())
    }

    /// The record's JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        // Strings, numbers and timestamps always serialise.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Whether this end hands a thirdshift Command's issue back for thirdshift's own Pickup to
    /// continue (`thirdshift.on_dead: continue`): its labels come off before any goes on.
    pub fn is_hand_back(&self) -> bool {
        self.outcome == Outcome::Continued && self.run.thirdshift().is_some()
    }

    /// The checks beyond the JSON shape that a decoded end record must pass.
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_claim_id(&self.claim_id)?;
        if self.issue == 0 {
            return Err("issue must be a positive issue number".into());
        }
        field::name("actor", &self.actor)?;
        field::text("reason", &self.reason)?;
        field::opt_path("resume", self.resume.as_deref())?;
        field::opt_name("session", self.session.as_deref())?;
        if let Some(c) = &self.cause {
            c.validate()?;
        }
        for label in self.labels_after.iter().flatten() {
            field::name("labels_after", label)?;
        }
        if let Some(a) = self.run.thirdshift() {
            field::name("adopted.host", &a.host)?;
            field::name("adopted.machine_id", &a.machine_id)?;
            field::path("adopted.record", &a.record)?;
            field::name("adopted.process_start", &a.process_start)?;
            field::pid("adopted.pid", a.pid)?;
        }
        if self.failures.len() > MAX_FAILURES_LISTED {
            return Err(format!(
                "failures lists more than {MAX_FAILURES_LISTED} Runs"
            ));
        }
        for f in &self.failures {
            check_claim_id(&f.claim_id)?;
            field::name("failures.host", &f.host)?;
            field::text("failures.reason", &f.reason)?;
        }
        if let Some(c) = &self.continuation {
            field::opt_name("continuation.branch", c.branch.as_deref())?;
            field::opt_name("continuation.agent_session", c.agent_session.as_deref())?;
            field::opt_path("continuation.worktree", c.worktree.as_deref())?;
            field::opt_name("continuation.harness", c.harness.as_deref())?;
            if let Some(s) = &c.started {
                super::check_claim_id(&s.claim_id)?;
                field::name("continuation.started.host", &s.host)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::record::Kind;
    use crate::protocol::record::{decode, Decoded, Record, RecordError};
    use crate::text::ToComment;
    use chrono::TimeZone;

    /// An end record for `claim::tests::sample_claim()`.
    pub(crate) fn sample_end(outcome: Outcome) -> EndRecord {
        EndRecord {
            claim_id: "c-0123456789abcdef".into(),
            issue: 42,
            outcome,
            actor: "run@build-01".into(),
            reason: "CMD exited with code 1".into(),
            exit_code: Some(1),
            signal: None,
            cause: None,
            claim_comment_id: Some(5_000_000_001),
            events_seen: None,
            labels_after: Some(vec!["ready-for-human".into()]),
            kept: None,
            pull_request: None,
            continuation: None,
            resume: None,
            session: None,
            run: Default::default(),
            failures: Vec::new(),
            ended_at: Utc.with_ymd_and_hms(2025, 3, 4, 6, 0, 0).unwrap(),
        }
    }

    fn decode_end(body: &str) -> EndRecord {
        match decode(body) {
            Decoded::Record(Record::End(e)) => e,
            other => panic!("expected an end record, got {other:?}"),
        }
    }

    #[test]
    fn every_outcome_round_trips_through_its_comment() {
        for outcome in Outcome::ALL {
            let end = sample_end(outcome);
            assert_eq!(decode_end(&end.to_comment()), end, "{outcome}");
        }
    }

    #[test]
    fn outcomes_are_kebab_case_on_the_wire() {
        for outcome in Outcome::ALL {
            let wire = serde_json::to_value(outcome).unwrap();
            assert_eq!(wire, serde_json::json!(outcome.as_str()));
            assert_eq!(outcome.as_str().parse::<Outcome>(), Ok(outcome));
        }
        assert_eq!(Outcome::HandedBack.as_str(), "handed-back");
    }

    #[test]
    fn minimal_end_round_trips_without_optional_fields() {
        let end = EndRecord {
            exit_code: None,
            signal: None,
            claim_comment_id: None,
            events_seen: None,
            labels_after: None,
            kept: None,
            pull_request: None,
            continuation: None,
            resume: None,
            session: None,
            ..sample_end(Outcome::Recovered)
        };
        let comment = end.to_comment();
        assert!(!comment.contains("labels_after"), "{comment}");
        assert_eq!(decode_end(&comment), end);
    }

    #[test]
    fn empty_labels_after_is_kept_apart_from_no_intent() {
        let end = EndRecord {
            labels_after: Some(vec![]),
            kept: None,
            pull_request: None,
            continuation: None,
            resume: None,
            session: None,
            ..sample_end(Outcome::Done)
        };
        assert_eq!(decode_end(&end.to_comment()).labels_after, Some(vec![]));
    }

    #[test]
    fn end_with_an_unknown_outcome_is_malformed() {
        let mut json = sample_end(Outcome::Done).to_json();
        json["outcome"] = serde_json::json!("exploded");
        let decoded = decode(&crate::protocol::record::encode(Kind::End, &json));
        let Decoded::Invalid(RecordError::Malformed { kind, reason }) = decoded else {
            panic!("expected malformed, got {decoded:?}");
        };
        assert_eq!(kind, "end");
        assert!(reason.contains("exploded"), "{reason}");
    }
}
