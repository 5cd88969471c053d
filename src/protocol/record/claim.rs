//! The claim record: the comment a Run posts on an issue to take it, naming the exact process
//! that owns the Claim (host, machine id, boot id, PID and start ticks) so that a later pass can
//! prove that process dead from evidence rather than from a clock.
//!
//! It does not decide ownership (`ownership.rs`) or post anything (the GitHub client and the Run
//! do). Unknown fields are tolerated: a newer v1 writer may add optional fields and an older
//! reader still understands the record. Only the Claim's own Run edits it, so fields it does not
//! know are never dropped by someone else's edit.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{check_claim_id, field};

/// What the Run is working on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// An ordinary issue delivered as a PR.
    #[default]
    Ticket,
    /// A specification issue.
    Spec,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Ticket => "ticket",
            RunKind::Spec => "spec",
        }
    }
}

/// `<!-- thirdshift:v1:claim {…} -->`: one Run's Claim on one issue.
///
/// `None` options and empty `logs` are left out on the wire and read back as absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimRecord {
    /// Random, made before posting (see [`new_claim_id`]); end records name it.
    pub claim_id: String,
    /// The issue claimed; a claim record found on another issue is ignored.
    pub issue: u64,
    /// Host name, as configured or from the hostname.
    pub host: String,
    /// `/etc/machine-id` (or equivalent) of the host.
    pub machine_id: String,
    /// `/proc/sys/kernel/random/boot_id` when the Run started: a different one means a reboot.
    pub boot_id: String,
    /// PID of the Run process.
    pub pid: u32,
    /// Start time of that PID in clock ticks since boot: tells a reused PID apart.
    pub start_ticks: u64,
    /// The session / process-group id of CMD, once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<u32>,
    /// CMD's start ticks (it leads the session): a process with PID `session_id` that started at
    /// another tick leads a later session that got the same number, so the Run's is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_start_ticks: Option<u64>,
    #[serde(default)]
    pub kind: RunKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The agent session id to resume the work with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// Log paths or URLs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
    /// The stage the Run last reported (`claimed` at first).
    pub stage: String,
    pub stage_since: DateTime<Utc>,
    pub claimed_at: DateTime<Utc>,
    /// Whether taking the Claim removed `ready-for-agent` (so ending it may put it back).
    pub removed_ready: bool,
}

impl ClaimRecord {
    /// The Issue branch the Claim works on: the one it recorded, else `issue-<n>`.
    pub fn issue_branch(&self) -> String {
        self.branch
            .clone()
            .unwrap_or_else(|| format!("issue-{}", self.issue))
    }

    /// The record's JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        // A struct of strings, numbers and timestamps always serialises.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The checks beyond the JSON shape that a decoded claim must pass.
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_claim_id(&self.claim_id)?;
        if self.issue == 0 {
            return Err("issue must be a positive issue number".into());
        }
        field::pid("pid", self.pid)?;
        if let Some(sid) = self.session_id {
            field::pid("session_id", sid)?;
        }
        field::name("host", &self.host)?;
        field::name("stage", &self.stage)?;
        field::opt_name("harness", self.harness.as_deref())?;
        field::opt_name("model", self.model.as_deref())?;
        field::opt_name("agent_session", self.agent_session.as_deref())?;
        field::opt_name("branch", self.branch.as_deref())?;
        field::opt_path("worktree", self.worktree.as_deref())?;
        field::paths("logs", &self.logs, field::MAX_LOGS)
    }
}

/// A fresh claim id: `c-` and 16 lowercase hex digits from the OS's random source.
///
/// Made before the claim comment is posted, so a retried post can be recognised. Should the
/// random source fail (it does not on Linux), falls back to mixing the clock and the PID.
pub fn new_claim_id() -> String {
    format!("c-{:016x}", random_u64())
}

/// 64 random bits from the OS, for record ids made before posting.
pub(super) fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    match getrandom::getrandom(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => fallback_random(),
    }
}

fn fallback_random() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    // splitmix64 of the clock and the PID.
    let mut z = nanos ^ (u64::from(std::process::id()) << 32);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::record::{decode, Decoded, Record, RecordError};
    use crate::protocol::record::{encode, Kind};
    use crate::text::ToComment;
    use chrono::TimeZone;

    /// A full claim record as a Run on `build-01` would post it.
    pub(crate) fn sample_claim() -> ClaimRecord {
        let t = Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap();
        ClaimRecord {
            claim_id: "c-0123456789abcdef".into(),
            issue: 42,
            host: "build-01".into(),
            machine_id: "4c4c4544003a".into(),
            boot_id: "8d1f0c2a-6b1e-4f7e-9a3b-2c5d7e9f1a3b".into(),
            pid: 4242,
            start_ticks: 987_654_321,
            session_id: Some(4243),
            session_start_ticks: None,
            kind: RunKind::Ticket,
            harness: Some("claude-code".into()),
            model: Some("opus".into()),
            agent_session: Some("sess-77".into()),
            branch: Some("issue-42".into()),
            worktree: Some("/work/wt-issue-42".into()),
            logs: vec!["/var/log/thirdshift/42.log".into()],
            stage: "implementing".into(),
            stage_since: t + chrono::Duration::minutes(5),
            claimed_at: t,
            removed_ready: true,
        }
    }

    /// The smallest claim: a Run that has just claimed, nothing else known.
    pub(crate) fn minimal_claim() -> ClaimRecord {
        ClaimRecord {
            session_id: None,
            session_start_ticks: None,
            harness: None,
            model: None,
            agent_session: None,
            branch: None,
            worktree: None,
            logs: vec![],
            stage: "claimed".into(),
            stage_since: sample_claim().claimed_at,
            ..sample_claim()
        }
    }

    fn decode_claim(body: &str) -> ClaimRecord {
        match decode(body) {
            Decoded::Record(Record::Claim(c)) => c,
            other => panic!("expected a claim record, got {other:?}"),
        }
    }

    #[test]
    fn a_claim_naming_pid_or_session_0_or_1_is_refused_by_readers_and_writers() {
        // given claims whose process or session would make a stop reach every process
        for (pid, session) in [(1, Some(4243)), (0, Some(4243)), (4242, Some(1))] {
            let claim = ClaimRecord {
                pid,
                session_id: session,
                ..sample_claim()
            };
            // then a writer refuses it and a reader refuses it, naming the field
            let why = claim.write_refusal().expect("refused");
            assert!(why.contains("must be above 1"), "{why}");
            let body = encode(Kind::Claim, &claim.to_json());
            assert!(
                matches!(decode(&body), Decoded::Invalid(_)),
                "{pid} {session:?}"
            );
        }
    }

    #[test]
    fn full_claim_round_trips_through_its_comment() {
        // given a claim with every field set
        let claim = sample_claim();
        // when it is written as a comment and read back
        let back = decode_claim(&claim.to_comment());
        // then nothing is lost
        assert_eq!(back, claim);
    }

    #[test]
    fn minimal_claim_round_trips_and_leaves_absent_fields_out() {
        let claim = minimal_claim();
        let comment = claim.to_comment();
        assert!(!comment.contains("\"harness\""), "{comment}");
        assert!(!comment.contains("\"logs\""), "{comment}");
        assert_eq!(decode_claim(&comment), claim);
    }

    #[test]
    fn worktree_path_holding_comment_close_cannot_end_the_hidden_line_early() {
        // given a worktree path and harness holding `-->` and `--!>`
        let claim = ClaimRecord {
            worktree: Some("/tmp/a-->b <!-- c".into()),
            harness: Some("x--!>y".into()),
            ..sample_claim()
        };
        // when it is encoded
        let comment = claim.to_comment();
        let hidden = comment.lines().last().unwrap();
        // then the hidden line closes exactly once, at its end, and reads back the same path
        assert_eq!(hidden.matches("-->").count(), 1, "{hidden}");
        assert!(!hidden.contains("--!>"), "{hidden}");
        assert!(hidden.ends_with(" -->"));
        assert_eq!(decode_claim(&comment), claim);
    }

    #[test]
    fn unknown_fields_from_a_newer_v1_writer_are_tolerated() {
        // given a v1 claim carrying a field this reader does not know
        let mut json = sample_claim().to_json();
        json["future_field"] = serde_json::json!({"x": 1});
        let body = crate::protocol::record::encode(Kind::Claim, &json);
        // then it still reads as the same claim
        assert_eq!(decode_claim(&body), sample_claim());
    }

    #[test]
    fn claim_missing_its_process_identity_is_malformed() {
        let mut json = sample_claim().to_json();
        json.as_object_mut().unwrap().remove("start_ticks");
        let decoded = decode(&crate::protocol::record::encode(Kind::Claim, &json));
        let Decoded::Invalid(RecordError::Malformed { kind, reason }) = decoded else {
            panic!("expected malformed, got {decoded:?}");
        };
        assert_eq!(kind, "claim");
        assert!(reason.contains("start_ticks"), "{reason}");
    }

    #[test]
    fn claim_id_with_markdown_or_spaces_is_malformed() {
        for bad in ["", "c 1", "c-`x`", &"a".repeat(65)] {
            let mut json = sample_claim().to_json();
            json["claim_id"] = serde_json::json!(bad);
            let decoded = decode(&crate::protocol::record::encode(Kind::Claim, &json));
            assert!(
                matches!(decoded, Decoded::Invalid(RecordError::Malformed { .. })),
                "{bad:?}: {decoded:?}"
            );
        }
    }

    #[test]
    fn run_kind_defaults_to_ticket_and_reads_spec() {
        let mut json = sample_claim().to_json();
        json.as_object_mut().unwrap().remove("kind");
        assert_eq!(
            decode_claim(&crate::protocol::record::encode(Kind::Claim, &json)).kind,
            RunKind::Ticket
        );
        json["kind"] = serde_json::json!("spec");
        assert_eq!(
            decode_claim(&crate::protocol::record::encode(Kind::Claim, &json)).kind,
            RunKind::Spec
        );
    }

    #[test]
    fn new_claim_ids_are_distinct_and_valid() {
        let a = new_claim_id();
        let b = new_claim_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 18);
        assert!(a.starts_with("c-"));
        assert!(check_claim_id(&a).is_ok());
        assert_ne!(fallback_random(), 0);
    }
}
