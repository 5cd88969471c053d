//! Which kind of Run a verdict, a host report or an end record is about: one of ours (a claim
//! comment on the issue) or a thirdshift Command adopted with no wrapper (its record on its
//! host), with what identifies it. One type for both, so no `Option` stands for "which kind".
//!
//! On the wire it stays what it always was: the Command's facts under their key (`thirdshift` in
//! a verdict, `adopted` in an end record), absent for one of ours ([`wire`]). It decides nothing.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A Run of ours, or a thirdshift Command and its facts `T`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RunOf<T> {
    /// One of ours: a claim comment on the issue.
    #[default]
    Ours,
    /// A thirdshift Command, adopted with no wrapper.
    Thirdshift(Box<T>),
}

impl<T> RunOf<T> {
    /// A thirdshift Command with facts `facts`.
    pub fn thirdshift_of(facts: T) -> RunOf<T> {
        RunOf::Thirdshift(Box::new(facts))
    }

    /// Whether it is one of ours.
    pub fn is_ours(&self) -> bool {
        matches!(self, RunOf::Ours)
    }

    /// The Command's facts, when it is thirdshift's.
    pub fn thirdshift(&self) -> Option<&T> {
        match self {
            RunOf::Ours => None,
            RunOf::Thirdshift(facts) => Some(facts),
        }
    }
}

/// `#[serde(with = "wire")]`: the Command's facts, or nothing for one of ours.
pub mod wire {
    use super::*;

    pub fn serialize<T: Serialize, S: Serializer>(run: &RunOf<T>, s: S) -> Result<S::Ok, S::Error> {
        run.thirdshift().serialize(s)
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<RunOf<T>, D::Error> {
        Ok(Option::<T>::deserialize(d)?.map_or(RunOf::Ours, RunOf::thirdshift_of))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::report::tests::sample_adopted_run;
    use crate::protocol::record::{ClaimVerdict, Verdict};

    #[test]
    fn the_kind_of_run_reads_and_writes_as_the_facts_under_their_key_or_nothing() {
        // given a verdict on one of ours and one on a thirdshift Command
        let ours = ClaimVerdict {
            claim_id: "c-0123456789abcdef".into(),
            issue: 7,
            verdict: Verdict::Alive,
            kept: None,
            run: RunOf::Ours,
            finished: None,
            watched: false,
        };
        let theirs = ClaimVerdict {
            claim_id: "ts-00000000000000a7".into(),
            run: RunOf::thirdshift_of(sample_adopted_run("issue-7")),
            ..ours.clone()
        };
        // when written, ours carries no `thirdshift` key and thirdshift's carries its facts
        let (a, b) = (
            serde_json::to_value(&ours).unwrap(),
            serde_json::to_value(&theirs).unwrap(),
        );
        assert!(a.get("thirdshift").is_none(), "{a}");
        assert_eq!(b["thirdshift"]["kind"], "Ticket", "{b}");
        // and each reads back as it was
        assert_eq!(serde_json::from_value::<ClaimVerdict>(a).unwrap(), ours);
        assert_eq!(serde_json::from_value::<ClaimVerdict>(b).unwrap(), theirs);
    }
}
