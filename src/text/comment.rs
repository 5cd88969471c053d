//! A record's whole comment, rendered here from the record (as bors renders a comment from its
//! metadata, never the reverse): the readable text a person sees, a blank line, then the hidden
//! record line (`protocol::record::encode`). Records know nothing of their text.

use crate::protocol::record::{
    encode, write_refusal, AdoptRecord, CancelRecord, ClaimRecord, EndRecord, HostReport, Kind,
};

/// A record posted as an issue comment.
pub trait ToComment {
    /// The whole comment body: readable text, a blank line, the hidden record line.
    fn to_comment(&self) -> String;

    /// Why this record must not be written, if so: its comment as a reader would see it.
    fn write_refusal(&self) -> Option<String> {
        write_refusal(&self.to_comment())
    }
}

impl ToComment for ClaimRecord {
    fn to_comment(&self) -> String {
        format!(
            "{}\n\n{}",
            super::claim_comment(self),
            encode(Kind::Claim, &self.to_json())
        )
    }

    /// Its fields' rules first (so the message names the field and its limit), then its comment
    /// as a reader would see it.
    fn write_refusal(&self) -> Option<String> {
        self.validate()
            .err()
            .or_else(|| write_refusal(&self.to_comment()))
    }
}

impl ToComment for EndRecord {
    fn to_comment(&self) -> String {
        format!(
            "{}\n\n{}",
            super::end_comment(self),
            encode(Kind::End, &self.to_json())
        )
    }
}

impl ToComment for CancelRecord {
    fn to_comment(&self) -> String {
        format!(
            "{}\n\n{}",
            super::cancel::cancel_comment(self),
            encode(Kind::Cancel, &self.to_json())
        )
    }
}

impl ToComment for AdoptRecord {
    fn to_comment(&self) -> String {
        format!(
            "{}\n\n{}",
            super::collision::adopt_comment(self),
            encode(Kind::Adopt, &self.to_json())
        )
    }
}

impl ToComment for HostReport {
    fn to_comment(&self) -> String {
        format!(
            "{}\n\n{}",
            super::host_report_comment(self),
            encode(Kind::HostReport, &self.to_json())
        )
    }
}
