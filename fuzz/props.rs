//! The properties the record decoder, the ownership rule and the `/thirdshift` command parser
//! must keep on any input, shared word for word by the cargo-fuzz targets (`fuzz_targets/`,
//! included with `#[path]`) and by the seeded property test `tests/it/fuzz_properties.rs`, so plain
//! `cargo test` checks on stable what the fuzzer checks for longer. Each check panics on a
//! violation. It holds no inputs of its own beyond the seeds below, and reads no clock or file.

#![allow(dead_code)]

use thirdshift_reconciler::protocol::command::{parse, Parsed};
use thirdshift_reconciler::protocol::record::{
    decode, encode, ClaimRecord, Decoded, Kind, Ownership, RawComment, Record, Trust,
};
use thirdshift_reconciler::text::ToComment;

/// The logins the ownership property trusts; anything else is a stranger.
pub const TRUSTED: &str = "thirdshift-bot";
const AUTHORS: [&str; 4] = [TRUSTED, "mallory", "THIRDSHIFT-BOT", "thirdshift-bot[bot]"];

/// The JSON of a decoded record, as its writer would encode it again.
fn json_of(record: &Record) -> serde_json::Value {
    match record {
        Record::Claim(r) => r.to_json(),
        Record::End(r) => r.to_json(),
        Record::HostReport(r) => r.to_json(),
        Record::Cancel(r) => r.to_json(),
        Record::Reply(r) => r.to_json(),
        Record::Adopt(r) => r.to_json(),
        Record::Other { json, .. } => json.clone(),
    }
}

/// Decoding any text never panics; a record that decodes encodes to one line that decodes to
/// the same record, and that line holds no `-->` before its end.
pub fn check_record(body: &str) {
    let Decoded::Record(record) = decode(body) else {
        return;
    };
    let line = encode(record.kind(), &json_of(&record));
    assert!(
        !line.contains('\n'),
        "an encoded record is one line: {line}"
    );
    let inner = &line[..line.len() - "-->".len()];
    assert!(
        !inner.contains("-->"),
        "the JSON closes the comment: {line}"
    );
    assert_eq!(
        decode(&line),
        Decoded::Record(record),
        "re-encoded record reads back"
    );
}

/// Comments made from `data`: split at `\0` (at most 1000, each with its own id), each one's
/// first byte picks its author.
pub fn comments_of(data: &str) -> Vec<RawComment> {
    data.split('\0')
        .take(1000)
        .enumerate()
        .map(|(i, part)| {
            let pick = part.bytes().next().unwrap_or(0) as usize % AUTHORS.len();
            RawComment {
                id: 5_000_000_000 + (i as u64 * 7919) % 1000,
                author: AUTHORS[pick].to_string(),
                body: part.get(1..).unwrap_or("").to_string(),
            }
        })
        .collect()
}

/// The ownership rule over any comments: the owner and every active or ended claim were
/// written by a trusted author, on this issue; no claim id is active twice; the owner has the
/// lowest comment id of the active claims; the answer does not depend on the comments' order.
pub fn check_ownership(issue: u64, comments: &[RawComment]) {
    let trust = Trust::new([TRUSTED]);
    let own = Ownership::of(issue, comments, &trust);
    let mut ids = std::collections::HashSet::new();
    for c in own.active() {
        assert!(
            trust.is_trusted(&c.author),
            "untrusted claim counted: {c:?}"
        );
        assert_eq!(c.record.issue, issue, "claim of another issue counted");
        assert!(ids.insert(c.record.claim_id.clone()), "claim id twice");
    }
    for (c, e) in &own.ended {
        assert!(trust.is_trusted(&c.author) && trust.is_trusted(&e.author));
        assert_eq!(c.record.claim_id, e.record.claim_id);
        assert!(
            !ids.contains(&c.record.claim_id),
            "ended and active at once"
        );
    }
    if let Some(owner) = &own.owner {
        assert!(own
            .superseded
            .iter()
            .all(|s| s.comment_id > owner.comment_id));
    }
    let mut reversed = comments.to_vec();
    reversed.reverse();
    assert_eq!(
        Ownership::of(issue, &reversed, &trust),
        own,
        "order matters"
    );
}

/// Parsing any comment never panics; a command reads back from its canonical spelling; an
/// error's reply text is one line, bounded, and can never be read as a record.
pub fn check_command(body: &str) {
    match parse(body) {
        Parsed::NotACommand => {}
        Parsed::Command(c) => {
            let again = parse(&format!("/thirdshift {}", c.canonical()));
            assert_eq!(again, Parsed::Command(c), "canonical spelling reads back");
        }
        Parsed::Invalid(e) => {
            let text = thirdshift_reconciler::text::replies::parse_error(&e);
            assert!(!text.contains('\n'), "one line: {text}");
            assert!(text.chars().count() <= 400, "bounded: {text}");
            assert_eq!(decode(&text), Decoded::NotARecord, "a record: {text}");
        }
    }
}

/// Valid bodies to start from: one record of each kind our writers produce, and commands.
pub fn seeds() -> Vec<String> {
    let now = chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
        .expect("a timestamp")
        .with_timezone(&chrono::Utc);
    let claim = ClaimRecord {
        claim_id: "c-0123456789abcdef".into(),
        issue: 7,
        host: "build-01".into(),
        machine_id: "m1".into(),
        boot_id: "b1".into(),
        pid: 4242,
        start_ticks: 99,
        session_id: Some(4242),
        session_start_ticks: None,
        kind: thirdshift_reconciler::protocol::record::RunKind::Ticket,
        harness: Some("claude".into()),
        model: None,
        agent_session: Some("s-1".into()),
        branch: Some("issue-7".into()),
        worktree: Some("/w/issue-7".into()),
        logs: vec!["https://logs/1".into()],
        stage: "implementing".into(),
        stage_since: now,
        claimed_at: now,
        removed_ready: true,
    };
    let end = format!(
        "ended\n\n<!-- thirdshift:v1:end {{\"claim_id\":\"c-0123456789abcdef\",\"issue\":7,\
         \"outcome\":\"recovered\",\"actor\":\"reconcile\",\"reason\":\"PID gone\",\
         \"labels_after\":[\"ready-for-agent\"],\"ended_at\":\"{}\"}} -->",
        now.to_rfc3339()
    );
    let report = "<!-- thirdshift:v1:host-report {\"host\":\"build-01\",\"machine_id\":\"m1\",\
        \"boot_id\":\"b1\",\"claims\":[{\"claim_id\":\"c-0123456789abcdef\",\"issue\":7,\
        \"verdict\":\"dead\",\"reason\":\"pid-gone\",\"evidence\":\"gone\"}]} -->";
    let cancel = format!(
        "<!-- thirdshift:v1:cancel {{\"request_id\":\"cx-1\",\"claim_id\":\"c-0123456789abcdef\",\
         \"issue\":7,\"requested_by\":\"alice\",\"requested_at\":\"{}\",\"recover\":true}} -->",
        now.to_rfc3339()
    );
    vec![
        claim.to_comment(),
        end,
        report.to_string(),
        cancel,
        encode(Kind::View, &serde_json::json!({"registry": true})),
        "```\n<!-- thirdshift:v1:claim {} -->\n```".into(),
        "/thirdshift recover --continue --force --kill".into(),
        "/thirdshift cancel".into(),
        "  /thirdshift status\nmore".into(),
        "/thirdshift help".into(),
        "/thirdshift recovr --forse".into(),
    ]
}
