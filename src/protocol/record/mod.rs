//! The comment protocol: every machine-readable record thirdshift keeps on GitHub is a comment
//! (or issue body) made of human-readable text plus one hidden line
//! `<!-- thirdshift:v1:KIND {json} -->`. This module finds, versions, size-checks and parses that
//! line, and writes it so that no string inside can close the HTML comment early.
//!
//! It does not decide whom to believe: a marker is only as trustworthy as the comment's author,
//! and anyone can paste one. Ownership (`ownership.rs`) applies the trust rule; the readable
//! text lives in `crate::text`. Decoding never panics and is linear in the body's length.
//! Readable parts must close every code fence they open: a record line inside an open fence is
//! shown as code on GitHub, and so is not a record here either.

pub mod adopt;
pub mod cancel;
pub mod cause;
pub mod claim;
pub mod end;
pub mod field;
pub mod ownership;
pub mod reply;
pub mod report;
pub mod run;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use adopt::{AdoptRecord, AdoptView};
pub use cancel::{new_request_id, CancelRecord, CancelView};
pub use cause::{Cause, OomMark, OomSeen};
pub use claim::{new_claim_id, ClaimRecord, RunKind};
pub use end::{
    AdoptedEvidence, Continuation, ContinuationStart, EndRecord, FailedRun, Outcome, StartedBy,
};
pub use field::{write_refusal, MAX_COMMENT_CHARS};
pub use ownership::{
    ClaimState, ClaimView, EndView, Ownership, Problem, ProblemKind, RawComment, Trust,
};
pub use reply::{Answer, ReplyRecord};
pub use report::{AdoptedRun, ClaimVerdict, DeathReason, HostReport, RunEnding, Salvage, Verdict};
pub use run::RunOf;

/// The protocol version this reader writes and understands.
pub const VERSION: u32 = 1;

/// Hidden JSON larger than this is refused (`RecordError::TooLarge`) without being parsed.
/// GitHub comments may hold up to about 1 MiB; no record of ours comes near 64 KiB.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;

/// Every record line starts with this, at the start of a line.
const MARKER: &str = "<!-- thirdshift:";
const CLOSE: &str = "-->";

/// The kinds of record; the wire name is the `KIND` in the marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Claim,
    End,
    HostReport,
    Cancel,
    Reply,
    View,
    Adopt,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Claim,
        Kind::End,
        Kind::HostReport,
        Kind::Cancel,
        Kind::Reply,
        Kind::View,
        Kind::Adopt,
    ];

    /// The wire name: `claim`, `end`, `host-report`, `cancel`, `reply`, `view`, `adopt`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Claim => "claim",
            Kind::End => "end",
            Kind::HostReport => "host-report",
            Kind::Cancel => "cancel",
            Kind::Reply => "reply",
            Kind::View => "view",
            Kind::Adopt => "adopt",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Kind {
    type Err = RecordError;

    fn from_str(s: &str) -> Result<Kind, RecordError> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| RecordError::UnknownKind(s.to_string()))
    }
}

/// One decoded record. Kinds without a model yet are carried as their JSON object.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    Claim(ClaimRecord),
    End(EndRecord),
    HostReport(HostReport),
    Cancel(CancelRecord),
    Reply(ReplyRecord),
    Adopt(AdoptRecord),
    Other { kind: Kind, json: serde_json::Value },
}

/// What names one record among copies of it: its kind, its key (the claim id of a claim or end
/// record, the host of a host report, the request id of a cancel record, the command comment id
/// of a reply, the claim id of an adoption), and the issue it names, when its kind names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub kind: Kind,
    pub key: String,
    pub issue: Option<u64>,
}

impl Record {
    /// This record's identity; `None` for a record of a kind this reader does not know.
    pub fn identity(&self) -> Option<Identity> {
        let (kind, key, issue) = match self {
            Record::Claim(r) => (Kind::Claim, r.claim_id.clone(), Some(r.issue)),
            Record::End(r) => (Kind::End, r.claim_id.clone(), Some(r.issue)),
            Record::HostReport(r) => (Kind::HostReport, r.host.clone(), None),
            Record::Cancel(r) => (Kind::Cancel, r.request_id.clone(), Some(r.issue)),
            Record::Reply(r) => (Kind::Reply, r.command_comment_id.to_string(), Some(r.issue)),
            Record::Adopt(r) => (Kind::Adopt, r.claim_id.clone(), Some(r.issue)),
            Record::Other { .. } => return None,
        };
        Some(Identity { kind, key, issue })
    }
}

impl Decoded {
    /// The kind of a decoded record, if any.
    pub fn kind(&self) -> Option<Kind> {
        match self {
            Decoded::Record(r) => Some(r.kind()),
            _ => None,
        }
    }
}

impl Record {
    pub fn kind(&self) -> Kind {
        match self {
            Record::Claim(_) => Kind::Claim,
            Record::End(_) => Kind::End,
            Record::HostReport(_) => Kind::HostReport,
            Record::Cancel(_) => Kind::Cancel,
            Record::Reply(_) => Kind::Reply,
            Record::Adopt(_) => Kind::Adopt,
            Record::Other { kind, .. } => *kind,
        }
    }
}

/// What a comment body holds.
// Decoded values are short-lived and matched on at once; boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// No record line: an ordinary comment.
    NotARecord,
    Record(Record),
    /// A record line that cannot be trusted to mean anything: never act on it.
    Invalid(RecordError),
}

/// Why a record line was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("{}", version_message(kind, *version))]
    UnknownVersion { kind: String, version: u32 },
    #[error(
        "unknown record kind `{0}` (this reader knows claim, end, host-report, cancel, reply, \
         view): upgrade thirdshift-reconciler if a newer version wrote it"
    )]
    UnknownKind(String),
    #[error("malformed {} record: {reason}", if kind.is_empty() { "thirdshift" } else { kind })]
    Malformed { kind: String, reason: String },
    #[error(
        "record is {bytes} bytes, more than the limit of {MAX_RECORD_BYTES}: refused unread; \
         whoever wrote it must write a smaller record"
    )]
    TooLarge { bytes: usize },
    #[error(
        "comment holds more than one thirdshift record line; a record comment holds exactly \
         one, so none of them is used"
    )]
    Multiple,
}

fn version_message(kind: &str, version: u32) -> String {
    if version > VERSION {
        format!(
            "{kind} record v{version} is newer than this reader (v{VERSION}): \
             upgrade thirdshift-reconciler"
        )
    } else {
        format!(
            "{kind} record v{version} is older than any version this reader knows \
             (v{VERSION}): it cannot be used; end or re-post it with a current version"
        )
    }
}

fn malformed(kind: &str, reason: impl Into<String>) -> RecordError {
    RecordError::Malformed {
        kind: kind.to_string(),
        reason: reason.into(),
    }
}

/// The hidden line for `json`: `<!-- thirdshift:v1:KIND {json} -->`, on one line.
///
/// `<` and `>` inside strings are written as `\u003c` / `\u003e`, so no value (a worktree
/// path holding `-->`, say) can close the HTML comment early. Records are JSON objects.
pub fn encode(kind: Kind, json: &serde_json::Value) -> String {
    // serde_json escapes control characters, so the output is one line. Outside strings JSON
    // has no `<` or `>`, and inside them they are never part of an escape, so replacing them
    // with their \u escapes keeps the same value.
    let text = json.to_string();
    let text = text.replace('<', "\\u003c").replace('>', "\\u003e");
    format!("{MARKER}v{VERSION}:{kind} {text} {CLOSE}")
}

/// Like [`encode`], but refuses a record that readers would refuse as too large.
pub fn encode_checked(kind: Kind, json: &serde_json::Value) -> Result<String, RecordError> {
    let line = encode(kind, json);
    let bytes = line.len() - hidden_overhead(kind);
    if bytes > MAX_RECORD_BYTES {
        return Err(RecordError::TooLarge { bytes });
    }
    Ok(line)
}

fn hidden_overhead(kind: Kind) -> usize {
    encode(kind, &serde_json::Value::Null).len() - "null".len()
}

/// Reads the record out of a comment body.
///
/// A record line is a line that starts with `<!-- thirdshift:` at column 0 and lies outside
/// fenced code blocks. A marker anywhere else (quoted with `>`, indented, mid-line, inside a
/// ``` fence) is text about a record, not a record. No record line → `NotARecord`; two or
/// more → `Invalid(Multiple)`. Whether to believe a record is the caller's business: see
/// `ownership::Trust`.
pub fn decode(body: &str) -> Decoded {
    let mut found = None;
    for line in record_lines(body) {
        if found.is_some() {
            return Decoded::Invalid(RecordError::Multiple);
        }
        found = Some(line);
    }
    match found {
        None => Decoded::NotARecord,
        Some(line) => match parse_line(line) {
            Ok(record) => Decoded::Record(record),
            Err(e) => Decoded::Invalid(e),
        },
    }
}

/// The lines of `body` that are record lines, in order. Linear in `body`'s length.
fn record_lines(body: &str) -> impl Iterator<Item = &str> {
    let mut fence: Option<(char, usize)> = None;
    body.lines().filter_map(move |raw| {
        let line = raw.trim_end_matches(['\r', ' ', '\t']);
        if let Some(open) = fence_of(line) {
            fence = match fence {
                None => Some(open),
                Some((c, n)) if open.0 == c && open.1 >= n && is_bare_fence(line) => None,
                inside => inside,
            };
            return None;
        }
        (fence.is_none() && line.starts_with(MARKER) && !thirdshifts_own(line)).then_some(line)
    })
}

/// Whether a marker line is one of thirdshift's own hidden markers (`<!-- thirdshift:tickets
/// -->`, `<!-- thirdshift:base-ci-commit … -->`, … as thirdshift 0.19.0 writes in pull requests and
/// comments): a lowercase name with no version and not one of our kinds. Ours always read
/// `vN:KIND`, so `<!-- thirdshift:claim … -->` is still a malformed record of ours.
fn thirdshifts_own(line: &str) -> bool {
    let rest = &line[MARKER.len()..];
    let name = rest
        .split([' ', '\t'])
        .next()
        .unwrap_or("")
        .trim_end_matches("-->");
    let versioned = name
        .strip_prefix('v')
        .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()));
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !versioned
        && name.parse::<Kind>().is_err()
}

/// `Some((char, length))` when `line` starts a code fence (``` or ~~~, up to 3 spaces in).
fn fence_of(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// A closing fence holds nothing but the fence characters.
fn is_bare_fence(line: &str) -> bool {
    let t = line.trim();
    t.chars().all(|c| c == '`') || t.chars().all(|c| c == '~')
}

/// Parses one record line: `<!-- thirdshift:vN:KIND {json} -->`.
fn parse_line(line: &str) -> Result<Record, RecordError> {
    let rest = &line[MARKER.len()..];
    let Some(inner) = rest.strip_suffix(CLOSE) else {
        return Err(malformed("", "record line does not end with `-->`"));
    };
    let (head, json) = inner.split_once(' ').unwrap_or((inner, ""));
    let (version, kind_str) = parse_head(head)?;
    if version != VERSION {
        return Err(RecordError::UnknownVersion {
            kind: kind_str.to_string(),
            version,
        });
    }
    let kind: Kind = kind_str.parse()?;
    let json = json.trim();
    if json.len() > MAX_RECORD_BYTES {
        return Err(RecordError::TooLarge { bytes: json.len() });
    }
    if json.contains(CLOSE) {
        return Err(malformed(
            kind.as_str(),
            "JSON holds `-->`, which no thirdshift writer produces",
        ));
    }
    parse_json(kind, json)
}

/// `vN:KIND` → (N, KIND).
fn parse_head(head: &str) -> Result<(u32, &str), RecordError> {
    let bad = || {
        malformed(
            "",
            format!(
                "expected `vN:KIND` after `thirdshift:`, found `{}`",
                clip(head)
            ),
        )
    };
    let (v, kind) = head.split_once(':').ok_or_else(bad)?;
    let digits = v.strip_prefix('v').ok_or_else(bad)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let version = digits.parse::<u32>().unwrap_or(u32::MAX);
    let kind_ok = !kind.is_empty()
        && kind.len() <= 40
        && kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    if !kind_ok {
        return Err(bad());
    }
    Ok((version, kind))
}

fn parse_json(kind: Kind, json: &str) -> Result<Record, RecordError> {
    let k = kind.as_str();
    if json.is_empty() {
        return Err(malformed(k, "no JSON after the kind"));
    }
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| malformed(k, format!("bad JSON: {e}")))?;
    if !value.is_object() {
        return Err(malformed(k, "the JSON is not an object"));
    }
    match kind {
        Kind::Claim => {
            let c: ClaimRecord =
                serde_json::from_value(value).map_err(|e| malformed(k, e.to_string()))?;
            c.validate().map_err(|reason| malformed(k, reason))?;
            Ok(Record::Claim(c))
        }
        Kind::End => {
            let e: EndRecord =
                serde_json::from_value(value).map_err(|e| malformed(k, e.to_string()))?;
            e.validate().map_err(|reason| malformed(k, reason))?;
            Ok(Record::End(e))
        }
        Kind::HostReport => {
            let r: HostReport =
                serde_json::from_value(value).map_err(|e| malformed(k, e.to_string()))?;
            r.validate().map_err(|reason| malformed(k, reason))?;
            Ok(Record::HostReport(r))
        }
        Kind::Cancel => {
            let c: CancelRecord =
                serde_json::from_value(value).map_err(|e| malformed(k, e.to_string()))?;
            c.validate().map_err(|reason| malformed(k, reason))?;
            Ok(Record::Cancel(c))
        }
        Kind::Reply => {
            let r: ReplyRecord =
                serde_json::from_value(value).map_err(|e| malformed(k, e.to_string()))?;
            r.validate().map_err(|reason| malformed(k, reason))?;
            Ok(Record::Reply(r))
        }
        Kind::Adopt => {
            let a: AdoptRecord =
                serde_json::from_value(value).map_err(|e| malformed(k, e.to_string()))?;
            a.validate().map_err(|reason| malformed(k, reason))?;
            Ok(Record::Adopt(a))
        }
        kind => Ok(Record::Other { kind, json: value }),
    }
}

/// Checks a claim id: 1–64 characters of `A-Z a-z 0-9 - _`, so it is safe in text and URLs.
pub(crate) fn check_claim_id(id: &str) -> Result<(), String> {
    check_id("claim_id", id)
}

/// Checks the id in field `field` the way claim ids are checked.
pub(crate) fn check_id(field: &str, id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{field} `{}` is not 1-64 characters of letters, digits, `-` and `_`",
            clip(id)
        ))
    }
}

/// At most 40 characters of `s`, for error messages about untrusted input.
fn clip(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::ToComment;
    use claim::tests::sample_claim;
    use serde_json::json;

    fn claim_line() -> String {
        encode(Kind::Claim, &sample_claim().to_json())
    }

    #[test]
    fn a_body_readers_would_refuse_is_refused_before_it_is_written() {
        // Given a valid claim, one with an empty stage, one with a stage too long for its
        // field, and one whose logs together are too large for a record
        let ok = sample_claim();
        let empty = ClaimRecord {
            stage: String::new(),
            ..sample_claim()
        };
        let long = ClaimRecord {
            stage: "x".repeat(70_000),
            ..sample_claim()
        };
        let huge = ClaimRecord {
            logs: vec!["<".repeat(field::MAX_PATH_CHARS); field::MAX_LOGS],
            ..sample_claim()
        };
        // Then only the valid one may be written, and each refusal names the field or the limit
        assert_eq!(ok.write_refusal(), None);
        let why = write_refusal(&empty.to_comment()).expect("refused");
        assert_eq!(why, "`stage` must not be empty");
        let why = long.write_refusal().expect("refused");
        assert!(
            why.contains("`stage` is 70000") && why.contains("256"),
            "{why}"
        );
        let why = huge.write_refusal().expect("refused");
        assert!(why.contains("65536"), "{why}");
        assert!(write_refusal("no record here").is_some());
    }

    #[test]
    fn kinds_have_their_wire_names_both_ways() {
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse::<Kind>(), Ok(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
        }
        assert_eq!(Kind::HostReport.as_str(), "host-report");
        assert_eq!(
            "bogus".parse::<Kind>(),
            Err(RecordError::UnknownKind("bogus".into()))
        );
    }

    #[test]
    fn comment_without_marker_is_not_a_record() {
        assert_eq!(decode(""), Decoded::NotARecord);
        assert_eq!(
            decode("LGTM, thanks!\n<!-- a normal comment -->"),
            Decoded::NotARecord
        );
    }

    #[test]
    fn hidden_line_is_found_after_readable_text() {
        let body = format!("Some **text**\n\nmore\r\n\n{}\r\n", claim_line());
        assert_eq!(
            decode(&body),
            Decoded::Record(Record::Claim(sample_claim()))
        );
    }

    #[test]
    fn encoded_line_has_the_documented_shape() {
        let line = encode(Kind::Cancel, &json!({"claim_id": "c-1", "note": "a<b>c"}));
        assert_eq!(
            line,
            r#"<!-- thirdshift:v1:cancel {"claim_id":"c-1","note":"a\u003cb\u003ec"} -->"#
        );
    }

    #[test]
    fn kinds_not_modelled_yet_are_carried_as_json_objects() {
        let value = json!({"host": "build-01", "verdicts": [1, 2]});
        let kind = Kind::View;
        assert_eq!(
            decode(&encode(kind, &value)),
            Decoded::Record(Record::Other {
                kind,
                json: value.clone()
            })
        );
        let not_object = decode(&encode(Kind::View, &json!([1])));
        assert!(matches!(
            not_object,
            Decoded::Invalid(RecordError::Malformed { .. })
        ));
    }

    #[test]
    fn record_from_newer_version_is_refused_with_upgrade_hint() {
        // given a record written by a v2 writer
        let body = claim_line().replace("thirdshift:v1:", "thirdshift:v2:");
        // when it is decoded
        let decoded = decode(&body);
        // then it is refused, and the message says what to do
        let Decoded::Invalid(e) = decoded else {
            panic!("expected invalid, got {decoded:?}");
        };
        assert_eq!(
            e,
            RecordError::UnknownVersion {
                kind: "claim".into(),
                version: 2
            }
        );
        assert_eq!(
            e.to_string(),
            "claim record v2 is newer than this reader (v1): upgrade thirdshift-reconciler"
        );
    }

    #[test]
    fn record_from_older_version_is_refused() {
        let body = claim_line().replace("thirdshift:v1:", "thirdshift:v0:");
        let Decoded::Invalid(e) = decode(&body) else {
            panic!()
        };
        assert!(e.to_string().contains("older than any version"), "{e}");
        let huge = claim_line().replace("thirdshift:v1:", "thirdshift:v99999999999:");
        assert!(matches!(
            decode(&huge),
            Decoded::Invalid(RecordError::UnknownVersion { .. })
        ));
    }

    #[test]
    fn record_of_unknown_kind_is_refused() {
        let body = "<!-- thirdshift:v1:lease {} -->";
        assert_eq!(
            decode(body),
            Decoded::Invalid(RecordError::UnknownKind("lease".into()))
        );
    }

    #[test]
    fn broken_json_behind_valid_marker_is_reported_not_trusted() {
        for body in [
            r#"<!-- thirdshift:v1:claim {"claim_id": -->"#,
            "<!-- thirdshift:v1:claim -->",
            "<!-- thirdshift:v1:claim {} -->",
            "<!-- thirdshift:v1:claim not json -->",
        ] {
            let decoded = decode(body);
            assert!(
                matches!(&decoded, Decoded::Invalid(RecordError::Malformed { kind, .. }) if kind == "claim"),
                "{body}: {decoded:?}"
            );
        }
    }

    #[test]
    fn thirdshifts_own_markers_are_not_records_and_not_problems() {
        // as thirdshift 0.19.0 writes them (src/pull_request.rs, src/base_fix.rs, …)
        for body in [
            "Summary\n\n<!-- thirdshift:tickets -->\n- [x] #8 landed\n<!-- /thirdshift:tickets -->\n",
            "<!-- thirdshift:base-ci-commit 0123abcd -->",
            "<!-- thirdshift:security-reproduction -->\nsteps",
            "<!-- thirdshift:built-with claude opus -->",
            "Built with claude 2.1.11 · opus · high <!-- thirdshift:built-with -->",
            "<!-- thirdshift:base-ci-flaky 2/3 -->",
            "<!-- thirdshift:security-review -->\nnotes\n<!-- /thirdshift:security-review -->",
            "\n<!-- thirdshift:security-fix -->\nFix Ticket: https://github.com/a/b/issues/8\n",
            "\n<!-- thirdshift:security-close -->\nClosed by: https://github.com/a/b/pull/9",
        ] {
            assert_eq!(decode(body), Decoded::NotARecord, "{body}");
        }
        // and beside one of ours, ours is still read
        let ours = format!("<!-- thirdshift:tickets -->\n{}", claim_line());
        assert!(matches!(decode(&ours), Decoded::Record(Record::Claim(_))));
    }

    #[test]
    fn garbled_marker_is_malformed() {
        for body in [
            "<!-- thirdshift:claim {} -->",
            "<!-- thirdshift:v1 {} -->",
            "<!-- thirdshift:vx:claim {} -->",
            "<!-- thirdshift:v1:CLAIM {} -->",
            "<!-- thirdshift:v1:claim {}",
        ] {
            let decoded = decode(body);
            assert!(
                matches!(decoded, Decoded::Invalid(RecordError::Malformed { .. })),
                "{body}: {decoded:?}"
            );
        }
    }

    #[test]
    fn json_holding_a_raw_comment_close_is_malformed() {
        let body = r#"<!-- thirdshift:v1:view {"a":"-->"} -->"#;
        assert!(matches!(
            decode(body),
            Decoded::Invalid(RecordError::Malformed { .. })
        ));
    }

    #[test]
    fn two_record_lines_are_refused() {
        let body = format!("{}\n{}", claim_line(), claim_line());
        assert_eq!(decode(&body), Decoded::Invalid(RecordError::Multiple));
    }

    #[test]
    fn marker_quoted_indented_or_mid_line_is_text_not_a_record() {
        let line = claim_line();
        for body in [
            format!("> {line}"),
            format!("    {line}"),
            format!("see `{line}`"),
            format!("Here is one: {line}"),
        ] {
            assert_eq!(decode(&body), Decoded::NotARecord, "{body}");
        }
    }

    #[test]
    fn marker_inside_a_code_block_is_text_not_a_record() {
        let line = claim_line();
        let fenced = format!("look:\n```text\n{line}\n```\n");
        assert_eq!(decode(&fenced), Decoded::NotARecord);
        let tilde = format!("~~~~\n```\n{line}\n~~~~\n");
        assert_eq!(decode(&tilde), Decoded::NotARecord);
        // after the fence closes, a record line counts again
        let after = format!("```\n{line}\n```\n\n{line}");
        assert_eq!(
            decode(&after),
            Decoded::Record(Record::Claim(sample_claim()))
        );
    }

    #[test]
    fn oversized_record_is_refused_unread() {
        let big = json!({"blob": "x".repeat(MAX_RECORD_BYTES)});
        let decoded = decode(&encode(Kind::View, &big));
        assert!(
            matches!(decoded, Decoded::Invalid(RecordError::TooLarge { bytes }) if bytes > MAX_RECORD_BYTES),
            "{decoded:?}"
        );
        assert!(matches!(
            encode_checked(Kind::View, &big),
            Err(RecordError::TooLarge { .. })
        ));
        let fits = json!({"blob": "x".repeat(MAX_RECORD_BYTES - 20)});
        assert!(encode_checked(Kind::View, &fits).is_ok());
        assert!(matches!(
            decode(&encode(Kind::View, &fits)),
            Decoded::Record(_)
        ));
    }

    #[test]
    fn megabyte_comment_decodes_without_panic() {
        // given a 1 MiB comment of text, one of many short lines, and one of markers
        let text = "a".repeat(1 << 20);
        let lines = "-\n".repeat(1 << 19);
        let markers = "<!-- thirdshift:\n".repeat((1 << 20) / 17);
        let line = format!("<!-- thirdshift:v1:claim {} -->", "{".repeat(1 << 20));
        // when each is decoded, then each is answered quickly and without a panic
        let start = std::time::Instant::now();
        assert_eq!(decode(&text), Decoded::NotARecord);
        assert_eq!(
            decode(&format!("{lines}{}", claim_line())).kind(),
            Some(Kind::Claim)
        );
        assert_eq!(decode(&markers), Decoded::Invalid(RecordError::Multiple));
        assert!(matches!(
            decode(&line),
            Decoded::Invalid(RecordError::TooLarge { .. })
        ));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn deeply_nested_json_is_malformed_not_a_stack_overflow() {
        let nested = format!(
            "<!-- thirdshift:v1:view {}{} -->",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        assert!(matches!(
            decode(&nested),
            Decoded::Invalid(RecordError::Malformed { .. })
        ));
    }

    #[test]
    fn errors_read_as_advice() {
        let too_large = RecordError::TooLarge { bytes: 70_000 };
        assert!(too_large.to_string().contains("70000 bytes"));
        assert!(RecordError::UnknownKind("lease".into())
            .to_string()
            .contains("upgrade thirdshift-reconciler"));
    }
}
