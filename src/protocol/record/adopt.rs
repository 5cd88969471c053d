//! The adoption record: a live thirdshift Command, as its own host first saw it, written on the
//! Command's issue. thirdshift claims with the `in-progress` label alone, so two of its Commands
//! (a direct `thirdshift <issue-url>` beside a Pickup, or two machines) can work one issue with
//! nothing on GitHub to say which came first. This record is that order: like our claim records,
//! the lowest comment id among the Runs still working on an issue keeps it, and every later one
//! collides with it (`protocol::collision`), the same from every host and every reader, with no
//! clock compared.
//!
//! It is posted once per Command, by the host that runs it (`observe`), and counts only when a
//! trusted author wrote it (`ownership.rs`). It says nothing about whether the Command lives:
//! that stays its host report's verdict. It decides and posts nothing itself.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::check_claim_id;
use super::end::AdoptedEvidence;
use super::field;

/// `<!-- thirdshift:v1:adopt {…} -->`: a live thirdshift Command on this issue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdoptRecord {
    /// The Command's claim id (`ts-…`, as its host reports it).
    pub claim_id: String,
    /// The issue the Command works on; an adoption record found on another issue is ignored.
    pub issue: u64,
    /// thirdshift's kind of Command (`Ticket`, `Pickup`, …).
    pub kind: String,
    /// Which Command: its host, machine, record path, PID and `process_start`.
    pub command: AdoptedEvidence,
    /// When its host first saw it alive: for people only, never compared.
    pub seen_at: DateTime<Utc>,
}

impl AdoptRecord {
    /// The record's JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        // Strings, numbers and a timestamp always serialise.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The checks beyond the JSON shape that a decoded adoption record must pass.
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_claim_id(&self.claim_id)?;
        if self.issue == 0 {
            return Err("issue must be a positive issue number".into());
        }
        field::name("kind", &self.kind)?;
        let c = &self.command;
        field::name("command.host", &c.host)?;
        field::name("command.machine_id", &c.machine_id)?;
        field::path("command.record", &c.record)?;
        field::name("command.process_start", &c.process_start)?;
        field::pid("command.pid", c.pid)
    }
}

/// A trusted adoption record and the comment that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdoptView {
    pub comment_id: u64,
    pub author: String,
    pub record: AdoptRecord,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::record::{decode, encode, Decoded, Kind, Record, RecordError};
    use crate::text::ToComment;
    use chrono::TimeZone;

    /// A Ticket run on issue 42, on host `build-07`.
    pub(crate) fn sample_adopt() -> AdoptRecord {
        AdoptRecord {
            claim_id: "ts-00000000000000a7".into(),
            issue: 42,
            kind: "Ticket".into(),
            command: AdoptedEvidence {
                host: "build-07".into(),
                machine_id: "m-7".into(),
                record: "o/r/commands/issue/42-20261204T100000+0000~0123456789abcdef.command.json"
                    .into(),
                pid: 4242,
                process_start: "b0-07:123456".into(),
            },
            seen_at: Utc.with_ymd_and_hms(2026, 12, 7, 9, 0, 0).unwrap(),
        }
    }

    fn decode_adopt(body: &str) -> AdoptRecord {
        match decode(body) {
            Decoded::Record(Record::Adopt(a)) => a,
            other => panic!("expected an adoption record, got {other:?}"),
        }
    }

    #[test]
    fn adoption_round_trips_through_its_comment() {
        // given a Command's adoption, when written as a comment and read back, then it is equal
        assert_eq!(decode_adopt(&sample_adopt().to_comment()), sample_adopt());
    }

    #[test]
    fn adoption_with_bad_fields_is_malformed() {
        for (field, value) in [
            ("claim_id", serde_json::json!("ts `x`")),
            ("issue", serde_json::json!(0)),
            ("kind", serde_json::json!(" ")),
            ("command", serde_json::json!({"host": "h"})),
        ] {
            let mut json = sample_adopt().to_json();
            json[field] = value;
            let decoded = decode(&encode(Kind::Adopt, &json));
            assert!(
                matches!(&decoded, Decoded::Invalid(RecordError::Malformed { kind, .. }) if kind == "adopt"),
                "{field}: {decoded:?}"
            );
        }
        let mut json = sample_adopt().to_json();
        json["command"]["pid"] = serde_json::json!(1);
        assert!(matches!(
            decode(&encode(Kind::Adopt, &json)),
            Decoded::Invalid(RecordError::Malformed { .. })
        ));
    }

    #[test]
    fn unknown_fields_from_a_newer_v1_writer_are_tolerated() {
        let mut json = sample_adopt().to_json();
        json["stage"] = serde_json::json!("implementing");
        assert_eq!(decode_adopt(&encode(Kind::Adopt, &json)), sample_adopt());
    }
}
