//! The reply record: the bot's one answer to a `/thirdshift` command comment, naming the comment
//! it answers. Append-only. A command comment with a trusted reply is answered and is never
//! handled again, whatever triggers run; a reply by anyone else answers nothing (else a stranger
//! could silence commands by pasting a reply). It does not decide or post anything.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{encode, Kind};

/// What the bot did about a command, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// The Claim was proven dead and ended (to the queue or to people).
    Recovered,
    /// The Claim was proven dead and re-queued as a Continuation.
    Continued,
    /// The Claim of a silent host was ended because a person forced it.
    Forced,
    /// The owning host was asked to kill the live Run before recovering it.
    KillRequested,
    /// The owning host was asked to stop the Run.
    CancelRequested,
    /// A request for the same Claim was already waiting.
    AlreadyRequested,
    /// The Claim had already ended; nothing to do.
    NothingToDo,
    /// `status` or `help` answered.
    Answered,
    /// Refused, with the evidence (owner alive, host silent, …).
    Refused,
    /// The author lacks the permission the command needs.
    NotPermitted,
    /// The command could not be read.
    Invalid,
}

impl Answer {
    /// Whether the command was carried out or answered (`+1`) rather than refused (`-1`).
    pub fn is_success(self) -> bool {
        !matches!(
            self,
            Answer::Refused | Answer::NotPermitted | Answer::Invalid | Answer::NothingToDo
        )
    }
}

/// `<!-- thirdshift:v1:reply {…} -->`: the answer to one command comment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyRecord {
    /// The id of the command comment answered (the key: one reply per command comment).
    pub command_comment_id: u64,
    /// The issue both comments are on; a reply found on another issue answers nothing.
    pub issue: u64,
    /// Who gave the command (login).
    pub author: String,
    /// The command as understood (`recover --force`), or `invalid`.
    pub command: String,
    pub answer: Answer,
    /// The Claim the command concerned, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_id: Option<String>,
    pub replied_at: DateTime<Utc>,
}

impl ReplyRecord {
    /// The whole comment: `text` (from `text::replies`), a blank line, the record line.
    pub fn to_comment(&self, text: &str) -> String {
        format!("{text}\n\n{}", encode(Kind::Reply, &self.to_json()))
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The checks beyond the JSON shape.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.command_comment_id == 0 || self.issue == 0 {
            return Err("command_comment_id and issue must be positive".into());
        }
        super::field::name("author", &self.author)?;
        if let Some(id) = &self.claim_id {
            super::check_claim_id(id)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::record::{decode, Decoded, Record, RecordError};
    use chrono::TimeZone;

    pub(crate) fn sample_reply() -> ReplyRecord {
        ReplyRecord {
            command_comment_id: 5_000_000_123,
            issue: 42,
            author: "alice".into(),
            command: "recover --force".into(),
            answer: Answer::Forced,
            claim_id: Some("c-0123456789abcdef".into()),
            replied_at: Utc.with_ymd_and_hms(2025, 3, 4, 6, 0, 0).unwrap(),
        }
    }

    #[test]
    fn reply_round_trips_through_its_comment() {
        let r = sample_reply();
        let body = r.to_comment("text <!-- --> ```");
        assert_eq!(decode(&body), Decoded::Record(Record::Reply(r)));
    }

    #[test]
    fn reply_naming_no_command_is_malformed() {
        let mut json = sample_reply().to_json();
        json["command_comment_id"] = serde_json::json!(0);
        assert!(matches!(
            decode(&encode(Kind::Reply, &json)),
            Decoded::Invalid(RecordError::Malformed { .. })
        ));
    }
}
