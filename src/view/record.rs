//! The hidden `view` record at the end of the registry issue's body: it marks the issue as the
//! registry (so hosts find it again), holds a hash of the dashboard's text so a pass can tell an
//! unchanged view without comparing bodies GitHub may have normalised, keeps the last
//! recoveries (their issues leave the snapshot once ended), and the listing mark of the pass
//! that wrote it (so a pass with no cache lists comments only since then), and the last hour's
//! refusals of commands for want of the role, by author (so one reply an hour holds across
//! issues a pass no longer reads). It does no IO.

use serde_json::json;

use super::model::Recovery;
use crate::protocol::record::{encode, Kind};

/// The `content_hash` of `markdown`: FNV-1a, 64 bits, as `fnv1a64:` and 16 hex digits. Not a
/// security measure: it only tells whether the text changed.
pub fn content_hash(markdown: &str) -> String {
    let h = crate::protocol::fingerprint::fnv1a64(markdown.as_bytes());
    format!("fnv1a64:{h:016x}")
}

/// The `content_hash` of the last view written, from the view record's JSON.
pub fn last_hash(view: Option<&serde_json::Value>) -> Option<&str> {
    view?.get("content_hash")?.as_str()
}

/// The registry issue's whole body: the dashboard, a blank line, the hidden record line.
pub fn body(
    markdown: &str,
    recoveries: &[Recovery],
    listing: Option<&crate::snapshot::ListingMark>,
    refusals: &crate::protocol::rules::Refusals,
) -> String {
    let mut record = json!({
        "registry": true,
        "content_hash": content_hash(markdown),
        "recoveries": recoveries,
    });
    if let Some(listing) = listing {
        record["listing"] = json!(listing);
    }
    if !refusals.is_empty() {
        record["refusals"] = json!(refusals);
    }
    format!("{}\n\n{}", markdown.trim_end(), encode(Kind::View, &record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::{decode, Decoded, Record};

    #[test]
    fn body_is_found_as_the_registry_and_carries_its_hash_and_recoveries() {
        // given a dashboard with one recovery
        let r = Recovery {
            issue: 9,
            title: "t <-- x -->".into(),
            claim_id: "c-9".into(),
            host: Some("h".into()),
            outcome: crate::protocol::record::Outcome::Recovered,
            ended_at: chrono::Utc::now(),
            end_url: "https://github.com/o/r/issues/9#issuecomment-1".into(),
            forced_by: None,
            cause: None,
        };
        // when its body is written and read back
        let text = body(
            "# Runs\n\n| a | b |\n",
            std::slice::from_ref(&r),
            None,
            &crate::protocol::rules::Refusals::new(),
        );
        let Decoded::Record(Record::Other { kind, json }) = decode(&text) else {
            panic!("{text}");
        };
        // then it is a view record naming the registry, with the hash and the recovery
        assert_eq!(kind, Kind::View);
        assert_eq!(json["registry"], true);
        assert_eq!(
            last_hash(Some(&json)),
            Some(content_hash("# Runs\n\n| a | b |\n").as_str())
        );
        let back: Vec<Recovery> = serde_json::from_value(json["recoveries"].clone()).unwrap();
        assert_eq!(back, vec![r]);
    }

    #[test]
    fn hash_is_fnv1a_64_of_the_text() {
        // FNV-1a's published test vectors: the offset basis for "", and "a"
        assert_eq!(content_hash(""), "fnv1a64:cbf29ce484222325");
        assert_eq!(content_hash("a"), "fnv1a64:af63dc4c8601ec8c");
        assert_ne!(content_hash("a"), content_hash("b"));
    }
}
