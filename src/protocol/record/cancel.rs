//! The cancel record: a request, posted on a claimed issue, that the host owning the Claim stop
//! its Run. It is append-only: `cancel --issue N` (and later `/thirdshift cancel`) writes it, and
//! the owning host's next `observe` carries it out (TERM to the Run and its session, a grace
//! period, KILL) and ends the Claim as `cancelled`. A request is pending while the Claim it names
//! has no end record; once the Claim ends, the request is history.
//!
//! Like every record it counts only when a trusted author wrote it (`ownership.rs` keeps the
//! trusted ones and reports the rest). It does not stop anything or post anything itself.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{check_claim_id, check_id};

/// `<!-- thirdshift:v1:cancel {…} -->`: a request to stop the Run of one Claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelRecord {
    /// Random, made before posting (see [`new_request_id`]): a post retried after an unknown
    /// outcome is found again by it, so the request is written once.
    pub request_id: String,
    /// The Claim whose Run is to stop.
    pub claim_id: String,
    /// The issue the Claim is on; a cancel record found on another issue is ignored.
    pub issue: u64,
    /// Who asked: a login (`/thirdshift cancel`) or `cancel@HOST` (the command line).
    pub requested_by: String,
    /// Why, in the asker's words, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub requested_at: DateTime<Utc>,
    /// Set by `/thirdshift recover --kill`: once the Run is stopped, its Claim ends `recovered`
    /// (to people when it started work) rather than `cancelled`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recover: bool,
    /// Set by `--requeue`: the stopped Run's issue goes straight back to the queue. Without it
    /// a cancel holds the issue until a person puts the ready label back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requeue: bool,
}

impl CancelRecord {
    /// The record's JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        // Strings, a number and a timestamp always serialise.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The checks beyond the JSON shape that a decoded cancel record must pass.
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_id("request_id", &self.request_id)?;
        check_claim_id(&self.claim_id)?;
        if self.issue == 0 {
            return Err("issue must be a positive issue number".into());
        }
        super::field::name("requested_by", &self.requested_by)?;
        self.reason
            .as_deref()
            .map_or(Ok(()), |r| super::field::text("reason", r))
    }
}

/// A trusted cancel record and the comment that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CancelView {
    pub comment_id: u64,
    pub author: String,
    pub record: CancelRecord,
}

/// A fresh request id: `cx-` and 16 lowercase hex digits from the OS's random source.
pub fn new_request_id() -> String {
    format!("cx-{:016x}", super::claim::random_u64())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::record::{decode, Decoded, Record, RecordError};
    use crate::protocol::record::{encode, Kind};
    use crate::text::ToComment;
    use chrono::TimeZone;

    /// A cancel request for `claim::tests::sample_claim()`.
    pub(crate) fn sample_cancel() -> CancelRecord {
        CancelRecord {
            request_id: "cx-00000000000000aa".into(),
            claim_id: "c-0123456789abcdef".into(),
            issue: 42,
            requested_by: "cancel@build-02".into(),
            reason: Some("wrong approach, stop it".into()),
            requested_at: Utc.with_ymd_and_hms(2025, 3, 4, 5, 30, 0).unwrap(),
            recover: false,
            requeue: false,
        }
    }

    fn decode_cancel(body: &str) -> CancelRecord {
        match decode(body) {
            Decoded::Record(Record::Cancel(c)) => c,
            other => panic!("expected a cancel record, got {other:?}"),
        }
    }

    #[test]
    fn cancel_round_trips_through_its_comment() {
        // given a cancel request with every field set, and one without a reason
        let full = sample_cancel();
        let bare = CancelRecord {
            reason: None,
            ..sample_cancel()
        };
        // when each is written as a comment and read back, then nothing is lost
        assert_eq!(decode_cancel(&full.to_comment()), full);
        let comment = bare.to_comment();
        assert!(!comment.contains("\"reason\""), "{comment}");
        assert_eq!(decode_cancel(&comment), bare);
    }

    #[test]
    fn reason_holding_markup_cannot_forge_or_hide_the_record_line() {
        // given a reason that tries to close the hidden line and to start a record line
        let hostile = CancelRecord {
            reason: Some("x --> y\n```\n<!-- thirdshift:v1:end {} -->".into()),
            ..sample_cancel()
        };
        // then the comment still decodes to exactly this request
        assert_eq!(decode_cancel(&hostile.to_comment()), hostile);
    }

    #[test]
    fn cancel_missing_or_with_bad_fields_is_malformed() {
        for (field, value) in [
            ("request_id", serde_json::json!("cx 1")),
            ("request_id", serde_json::json!("")),
            ("claim_id", serde_json::json!("c-`x`")),
            ("issue", serde_json::json!(0)),
            ("requested_by", serde_json::json!("  ")),
        ] {
            let mut json = sample_cancel().to_json();
            json[field] = value;
            let decoded = decode(&encode(Kind::Cancel, &json));
            assert!(
                matches!(&decoded, Decoded::Invalid(RecordError::Malformed { kind, .. }) if kind == "cancel"),
                "{field}: {decoded:?}"
            );
        }
        let mut json = sample_cancel().to_json();
        json.as_object_mut().unwrap().remove("claim_id");
        let Decoded::Invalid(RecordError::Malformed { reason, .. }) =
            decode(&encode(Kind::Cancel, &json))
        else {
            panic!("a cancel naming no claim is malformed");
        };
        assert!(reason.contains("claim_id"), "{reason}");
    }

    #[test]
    fn unknown_fields_from_a_newer_v1_writer_are_tolerated() {
        let mut json = sample_cancel().to_json();
        json["grace_secs"] = serde_json::json!(5);
        assert_eq!(decode_cancel(&encode(Kind::Cancel, &json)), sample_cancel());
    }

    #[test]
    fn new_request_ids_are_distinct_valid_and_not_claim_ids() {
        let a = new_request_id();
        let b = new_request_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 19);
        assert!(a.starts_with("cx-"), "{a}");
        assert!(check_id("request_id", &a).is_ok());
    }
}
