//! The ownership rule, pure: given an issue's comments and the set of trusted logins, which
//! Claim owns the issue, which are superseded, which have ended, and what was ignored and why.
//!
//! Rule: only records written by trusted authors count. Among trusted claim records on this
//! issue that no trusted end record names, the one with the lowest comment id owns the issue;
//! every later one is superseded. Trusted cancel requests are kept beside the claims: one is
//! pending while the Claim it names is active. It reads no clock and does no IO; fetching the comments and
//! acting on the answer belong to the callers.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::{
    decode, AdoptView, CancelView, ClaimRecord, Decoded, EndRecord, Kind, Record, RecordError,
};

/// A comment as read from GitHub: what the rule needs and nothing more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawComment {
    pub id: u64,
    /// The author's login.
    pub author: String,
    pub body: String,
}

/// The logins whose records are believed. Matching ignores ASCII case (GitHub logins are
/// case-insensitive) but is otherwise exact: `name` and `name[bot]` are different accounts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trust {
    logins: HashSet<String>,
}

impl Trust {
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(logins: I) -> Trust {
        let logins = logins
            .into_iter()
            .map(|s| s.into().trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        Trust { logins }
    }

    pub fn is_trusted(&self, login: &str) -> bool {
        self.logins.contains(&login.to_ascii_lowercase())
    }
}

/// A trusted claim record and the comment that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimView {
    pub comment_id: u64,
    pub author: String,
    pub record: ClaimRecord,
}

/// A trusted end record and the comment that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndView {
    pub comment_id: u64,
    pub author: String,
    pub record: EndRecord,
}

/// Who owns one issue, as its comments show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ownership {
    /// The active claim with the lowest comment id.
    pub owner: Option<ClaimView>,
    /// Later active claims, by comment id: their Runs must stop; reconcile ends them.
    pub superseded: Vec<ClaimView>,
    /// Claims with their (first) end record, by claim comment id.
    pub ended: Vec<(ClaimView, EndView)>,
    /// End records of thirdshift Commands (carrying `adopted` evidence, no claim comment of
    /// ours), the first per claim id, by comment id.
    pub adopted_ends: Vec<EndView>,
    /// Trusted cancel requests on this issue, by comment id, whatever Claim they name.
    pub cancels: Vec<CancelView>,
    /// Trusted adoption records of thirdshift Commands, the first per claim id, by comment id.
    pub adoptions: Vec<AdoptView>,
    /// Everything ignored, by comment id.
    pub problems: Vec<Problem>,
}

/// Where one claim id stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimState<'a> {
    Owner(&'a ClaimView),
    Superseded {
        claim: &'a ClaimView,
        by: &'a ClaimView,
    },
    Ended {
        claim: &'a ClaimView,
        end: &'a EndView,
    },
    /// No trusted claim record with this id on the issue.
    Unknown,
}

/// A comment that was ignored, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub comment_id: u64,
    pub author: String,
    pub kind: ProblemKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// A record by someone not in the trusted list.
    Untrusted { kind: Kind },
    /// A trusted author's record that cannot be read.
    Invalid(RecordError),
    /// A claim reusing the claim id of an earlier claim comment.
    DuplicateClaimId {
        claim_id: String,
        first_comment_id: u64,
    },
    /// A claim or end record naming another issue than the one it was read on.
    WrongIssue { record_issue: u64 },
    /// An end record naming no claim on this issue.
    EndForUnknownClaim { claim_id: String },
    /// A second end record for a claim; the first one counts.
    DuplicateEnd {
        claim_id: String,
        first_comment_id: u64,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "comment {} by @{}: {}",
            self.comment_id, self.author, self.kind
        )
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::Untrusted { kind } => {
                write!(f, "{kind} record from an untrusted author, ignored")
            }
            ProblemKind::Invalid(e) => write!(f, "{e}; ignored"),
            ProblemKind::DuplicateClaimId {
                claim_id,
                first_comment_id,
            } => write!(
                f,
                "claim record reuses claim id `{claim_id}` of comment {first_comment_id}, ignored"
            ),
            ProblemKind::WrongIssue { record_issue } => write!(
                f,
                "record belongs to issue #{record_issue}, not the issue it was posted on, ignored"
            ),
            ProblemKind::EndForUnknownClaim { claim_id } => write!(
                f,
                "end record for claim `{claim_id}`, which has no claim record here, ignored"
            ),
            ProblemKind::DuplicateEnd {
                claim_id,
                first_comment_id,
            } => write!(
                f,
                "another end record for claim `{claim_id}` (comment {first_comment_id} \
                 ended it first), ignored"
            ),
        }
    }
}

impl Ownership {
    /// Applies the ownership rule to the comments of `issue`, given in any order.
    pub fn of(issue: u64, comments: &[RawComment], trust: &Trust) -> Ownership {
        let mut sorted: Vec<&RawComment> = comments.iter().collect();
        sorted.sort_by_key(|c| c.id);
        // A comment seen twice (overlapping pages) counts once.
        sorted.dedup_by_key(|c| c.id);

        let mut out = Ownership::default();
        let mut claims: Vec<ClaimView> = Vec::new();
        let mut ends: Vec<EndView> = Vec::new();
        let mut first_claim: HashMap<String, u64> = HashMap::new();
        for c in sorted {
            let problem = |kind| Problem {
                comment_id: c.id,
                author: c.author.clone(),
                kind,
            };
            let record = match read(c, trust) {
                Ok(Some(record)) => record,
                Ok(None) => continue,
                Err(kind) => {
                    out.problems.push(problem(kind));
                    continue;
                }
            };
            match record {
                Record::Claim(r) if r.issue != issue => {
                    out.problems.push(problem(ProblemKind::WrongIssue {
                        record_issue: r.issue,
                    }));
                }
                Record::End(r) if r.issue != issue => {
                    out.problems.push(problem(ProblemKind::WrongIssue {
                        record_issue: r.issue,
                    }));
                }
                Record::Adopt(r) if r.issue != issue => {
                    out.problems.push(problem(ProblemKind::WrongIssue {
                        record_issue: r.issue,
                    }));
                }
                // The first copy of a Command's adoption counts (`store::dedupe`).
                Record::Adopt(r) if out.adoption(&r.claim_id).is_some() => {}
                Record::Adopt(r) => out.adoptions.push(AdoptView {
                    comment_id: c.id,
                    author: c.author.clone(),
                    record: r,
                }),
                Record::Cancel(r) if r.issue != issue => {
                    out.problems.push(problem(ProblemKind::WrongIssue {
                        record_issue: r.issue,
                    }));
                }
                Record::Cancel(r) => out.cancels.push(CancelView {
                    comment_id: c.id,
                    author: c.author.clone(),
                    record: r,
                }),
                Record::Claim(r) => {
                    if let Some(&first) = first_claim.get(&r.claim_id) {
                        out.problems.push(problem(ProblemKind::DuplicateClaimId {
                            claim_id: r.claim_id,
                            first_comment_id: first,
                        }));
                    } else {
                        first_claim.insert(r.claim_id.clone(), c.id);
                        claims.push(view_claim(c, r));
                    }
                }
                Record::End(r) => ends.push(EndView {
                    comment_id: c.id,
                    author: c.author.clone(),
                    record: r,
                }),
                Record::HostReport(_) | Record::Reply(_) | Record::Other { .. } => {}
            }
        }
        out.settle(claims, ends);
        out.problems.sort_by_key(|p| p.comment_id);
        out
    }

    /// Pairs end records with claims (the first end by comment id counts) and splits the rest
    /// into the owner and the superseded. `claims` and `ends` are in comment-id order.
    fn settle(&mut self, claims: Vec<ClaimView>, ends: Vec<EndView>) {
        let mut end_of: HashMap<String, EndView> = HashMap::new();
        for end in ends {
            let id = end.record.claim_id.clone();
            let kind = if let Some(first) = end_of.get(&id) {
                ProblemKind::DuplicateEnd {
                    claim_id: id,
                    first_comment_id: first.comment_id,
                }
            } else if claims.iter().any(|c| c.record.claim_id == id) {
                end_of.insert(id, end);
                continue;
            } else if !end.record.run.is_ours() {
                if let Some(first) = self.adopted_end(&id) {
                    ProblemKind::DuplicateEnd {
                        claim_id: id,
                        first_comment_id: first.comment_id,
                    }
                } else {
                    self.adopted_ends.push(end);
                    continue;
                }
            } else {
                ProblemKind::EndForUnknownClaim { claim_id: id }
            };
            self.problems.push(Problem {
                comment_id: end.comment_id,
                author: end.author,
                kind,
            });
        }
        for claim in claims {
            match end_of.remove(&claim.record.claim_id) {
                Some(end) => self.ended.push((claim, end)),
                None if self.owner.is_none() => self.owner = Some(claim),
                None => self.superseded.push(claim),
            }
        }
    }

    /// Where `claim_id` stands on this issue.
    pub fn state(&self, claim_id: &str) -> ClaimState<'_> {
        if let Some(owner) = &self.owner {
            if owner.record.claim_id == claim_id {
                return ClaimState::Owner(owner);
            }
            if let Some(claim) = self
                .superseded
                .iter()
                .find(|c| c.record.claim_id == claim_id)
            {
                return ClaimState::Superseded { claim, by: owner };
            }
        }
        match self
            .ended
            .iter()
            .find(|(c, _)| c.record.claim_id == claim_id)
        {
            Some((claim, end)) => ClaimState::Ended { claim, end },
            None => ClaimState::Unknown,
        }
    }

    /// The claims without an end record: the owner first, then the superseded.
    pub fn active(&self) -> impl Iterator<Item = &ClaimView> {
        self.owner.iter().chain(self.superseded.iter())
    }

    /// The comment id of the newest trusted claim, active or ended, if any.
    pub fn newest_claim(&self) -> Option<u64> {
        let ended = self.ended.iter().map(|(c, _)| c);
        self.active().chain(ended).map(|c| c.comment_id).max()
    }

    /// The ended claim whose end record is the latest (highest comment id), with that end.
    pub fn last_ended(&self) -> Option<(&ClaimView, &EndView)> {
        self.ended
            .iter()
            .map(|(c, e)| (c, e))
            .max_by_key(|(_, e)| e.comment_id)
    }

    /// The end record with the highest comment id among those that state `labels_after` (ours
    /// and thirdshift Commands'), with those labels. Ends stating nothing (a superseded or
    /// withdrawn claim's) never owned the labels, so they do not hide an owner's end that a
    /// killed pass left unfinished.
    pub fn latest_intent(&self) -> Option<(&EndView, &Vec<String>)> {
        self.ended
            .iter()
            .map(|(_, e)| e)
            .chain(&self.adopted_ends)
            .filter_map(|e| e.record.labels_after.as_ref().map(|l| (e, l)))
            .max_by_key(|(e, _)| e.comment_id)
    }

    /// The first trusted adoption record of thirdshift Command `claim_id`, if its host posted
    /// one: where it stands among the Runs on the issue (`protocol::collision`).
    pub fn adoption(&self, claim_id: &str) -> Option<&AdoptView> {
        self.adoptions
            .iter()
            .find(|a| a.record.claim_id == claim_id)
    }

    /// The end record of the thirdshift Command `claim_id`, if one ended it.
    pub fn adopted_end(&self, claim_id: &str) -> Option<&EndView> {
        self.adopted_ends
            .iter()
            .find(|e| e.record.claim_id == claim_id)
    }

    /// The first trusted cancel request for thirdshift Command `claim_id` (a `ts-` id, no claim
    /// comment of ours) while no end record ended it.
    pub fn pending_adopted_cancel(&self, claim_id: &str) -> Option<&CancelView> {
        if self.adopted_end(claim_id).is_some() {
            return None;
        }
        self.cancels.iter().find(|c| c.record.claim_id == claim_id)
    }

    /// The first trusted cancel request for `claim_id` while that Claim is active, if any.
    pub fn pending_cancel(&self, claim_id: &str) -> Option<&CancelView> {
        if !self.active().any(|c| c.record.claim_id == claim_id) {
            return None;
        }
        self.cancels.iter().find(|c| c.record.claim_id == claim_id)
    }
}

/// The record in `c` if it is one to believe; `Err` when it must be reported instead.
fn read(c: &RawComment, trust: &Trust) -> Result<Option<Record>, ProblemKind> {
    let trusted = trust.is_trusted(&c.author);
    match decode(&c.body) {
        Decoded::NotARecord => Ok(None),
        Decoded::Record(r) if trusted => Ok(Some(r)),
        Decoded::Record(r) => Err(ProblemKind::Untrusted { kind: r.kind() }),
        Decoded::Invalid(e) if trusted => Err(ProblemKind::Invalid(e)),
        Decoded::Invalid(e) => Err(match kind_named_by(&e) {
            Some(kind) => ProblemKind::Untrusted { kind },
            None => ProblemKind::Invalid(e),
        }),
    }
}

/// The record kind an error names, when it is a known one.
fn kind_named_by(e: &RecordError) -> Option<Kind> {
    match e {
        RecordError::UnknownVersion { kind, .. } | RecordError::Malformed { kind, .. } => {
            kind.parse().ok()
        }
        _ => None,
    }
}

fn view_claim(c: &RawComment, record: ClaimRecord) -> ClaimView {
    ClaimView {
        comment_id: c.id,
        author: c.author.clone(),
        record,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::cancel::tests::sample_cancel;
    use crate::protocol::record::claim::tests::sample_claim;
    use crate::protocol::record::end::tests::sample_end;
    use crate::protocol::record::{encode, CancelRecord, Outcome};
    use crate::text::ToComment;

    const ISSUE: u64 = 42;
    /// Comment ids beyond 32 bits, as GitHub's are.
    const BASE: u64 = 5_000_000_000;

    fn trust() -> Trust {
        Trust::new(["thirdshift-bot[bot]", "Alice"])
    }

    fn claim(id: &str) -> ClaimRecord {
        ClaimRecord {
            claim_id: id.into(),
            ..sample_claim()
        }
    }

    fn end(id: &str, outcome: Outcome) -> EndRecord {
        EndRecord {
            claim_id: id.into(),
            ..sample_end(outcome)
        }
    }

    fn by(author: &str, id: u64, body: String) -> RawComment {
        RawComment {
            id: BASE + id,
            author: author.into(),
            body,
        }
    }

    fn bot(id: u64, body: String) -> RawComment {
        by("thirdshift-bot[bot]", id, body)
    }

    fn owner_id(o: &Ownership) -> Option<&str> {
        o.owner.as_ref().map(|c| c.record.claim_id.as_str())
    }

    fn ids(claims: &[ClaimView]) -> Vec<&str> {
        claims.iter().map(|c| c.record.claim_id.as_str()).collect()
    }

    #[test]
    fn issue_without_records_has_no_owner() {
        let comments = [by("bob", 1, "I'd like to work on this".into())];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(o, Ownership::default());
        assert_eq!(o.state("c-a"), ClaimState::Unknown);
    }

    #[test]
    fn lowest_active_claim_id_owns_the_issue() {
        // given three claims posted out of order in the listing
        let comments = [
            bot(30, claim("c-c").to_comment()),
            bot(10, claim("c-a").to_comment()),
            bot(20, claim("c-b").to_comment()),
        ];
        // when ownership is worked out
        let o = Ownership::of(ISSUE, &comments, &trust());
        // then the lowest comment id owns, the others are superseded by it, in order
        assert_eq!(owner_id(&o), Some("c-a"));
        assert_eq!(o.owner.as_ref().unwrap().comment_id, BASE + 10);
        assert_eq!(ids(&o.superseded), ["c-b", "c-c"]);
        let ClaimState::Superseded { claim, by } = o.state("c-c") else {
            panic!("{:?}", o.state("c-c"));
        };
        assert_eq!((claim.comment_id, by.comment_id), (BASE + 30, BASE + 10));
        assert!(matches!(o.state("c-a"), ClaimState::Owner(_)));
        let active: Vec<&str> = o.active().map(|c| c.record.claim_id.as_str()).collect();
        assert_eq!(active, ["c-a", "c-b", "c-c"]);
        assert!(o.problems.is_empty());
    }

    #[test]
    fn ended_claim_passes_ownership_to_next_active() {
        // given an earlier claim that ended and a later one still active
        let comments = [
            bot(1, claim("c-a").to_comment()),
            bot(2, claim("c-b").to_comment()),
            by("alice", 3, end("c-a", Outcome::Recovered).to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        // then the later claim owns, and the ended one is paired with its end
        assert_eq!(owner_id(&o), Some("c-b"));
        assert!(o.superseded.is_empty());
        let ClaimState::Ended { claim, end } = o.state("c-a") else {
            panic!()
        };
        assert_eq!((claim.comment_id, end.comment_id), (BASE + 1, BASE + 3));
        assert_eq!(end.record.outcome, Outcome::Recovered);
        assert_eq!(o.ended.len(), 1);
    }

    #[test]
    fn claim_by_untrusted_author_is_ignored_and_reported() {
        // given a stranger's forged claim posted before ours
        let comments = [
            by("mallory", 1, claim("c-evil").to_comment()),
            bot(2, claim("c-a").to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        // then ours owns and the forgery is reported
        assert_eq!(owner_id(&o), Some("c-a"));
        assert_eq!(o.state("c-evil"), ClaimState::Unknown);
        assert_eq!(o.problems.len(), 1);
        assert_eq!(
            o.problems[0].to_string(),
            format!(
                "comment {} by @mallory: claim record from an untrusted author, ignored",
                BASE + 1
            )
        );
    }

    #[test]
    fn end_by_untrusted_author_does_not_end_the_claim() {
        let comments = [
            bot(1, claim("c-a").to_comment()),
            by("mallory", 2, end("c-a", Outcome::Done).to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(owner_id(&o), Some("c-a"));
        assert_eq!(
            o.problems[0].kind,
            ProblemKind::Untrusted { kind: Kind::End }
        );
    }

    #[test]
    fn stranger_quoting_our_record_cannot_take_the_issue() {
        // given a stranger whose comment pastes our exact claim line, bare and in a code block
        let line = encode(Kind::Claim, &claim("c-copy").to_json());
        let comments = [
            by("mallory", 1, line.clone()),
            by("mallory", 2, format!("```\n{line}\n```")),
            bot(3, claim("c-a").to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        // then the bare copy is reported, the fenced one is plain text, ours owns
        assert_eq!(owner_id(&o), Some("c-a"));
        assert_eq!(o.problems.len(), 1);
        assert_eq!(o.problems[0].comment_id, BASE + 1);
    }

    #[test]
    fn trust_ignores_case_but_not_the_bot_suffix() {
        let t = Trust::new(vec![String::from("Thirdshift-Bot[bot]"), " alice ".into()]);
        assert!(t.is_trusted("thirdshift-bot[BOT]"));
        assert!(t.is_trusted("ALICE"));
        assert!(!t.is_trusted("thirdshift-bot"));
        assert!(!t.is_trusted("alice[bot]"));
        assert!(!t.is_trusted(""));
    }

    #[test]
    fn malformed_record_by_trusted_author_is_reported_not_trusted() {
        let comments = [
            bot(
                1,
                "<!-- thirdshift:v1:claim {\"claim_id\":\"c-x\"} -->".into(),
            ),
            bot(
                2,
                claim("c-a")
                    .to_comment()
                    .replace("thirdshift:v1:", "thirdshift:v2:"),
            ),
            bot(3, claim("c-b").to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(owner_id(&o), Some("c-b"));
        assert!(matches!(
            o.problems[0].kind,
            ProblemKind::Invalid(RecordError::Malformed { .. })
        ));
        assert_eq!(
            o.problems[1].to_string(),
            format!(
                "comment {} by @thirdshift-bot[bot]: claim record v2 is newer than this reader \
                 (v1): upgrade thirdshift-reconciler; ignored",
                BASE + 2
            )
        );
    }

    #[test]
    fn claim_for_another_issue_is_ignored() {
        let other = ClaimRecord {
            issue: 7,
            ..claim("c-moved")
        };
        let comments = [
            bot(1, other.to_comment()),
            bot(2, claim("c-a").to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(owner_id(&o), Some("c-a"));
        assert_eq!(
            o.problems[0].kind,
            ProblemKind::WrongIssue { record_issue: 7 }
        );
        assert!(o.problems[0].to_string().contains("issue #7"));
    }

    #[test]
    fn end_for_another_issue_does_not_end_the_claim() {
        let other = EndRecord {
            issue: 7,
            ..end("c-a", Outcome::Done)
        };
        let comments = [
            bot(1, claim("c-a").to_comment()),
            bot(2, other.to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(owner_id(&o), Some("c-a"));
        assert_eq!(
            o.problems[0].kind,
            ProblemKind::WrongIssue { record_issue: 7 }
        );
    }

    #[test]
    fn second_claim_with_a_seen_claim_id_is_ignored() {
        // given a claim posted twice (a retried POST) with the same claim id
        let comments = [
            bot(1, claim("c-a").to_comment()),
            bot(2, claim("c-a").to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(o.owner.as_ref().unwrap().comment_id, BASE + 1);
        assert!(o.superseded.is_empty());
        assert_eq!(
            o.problems[0].kind,
            ProblemKind::DuplicateClaimId {
                claim_id: "c-a".into(),
                first_comment_id: BASE + 1
            }
        );
    }

    #[test]
    fn first_end_record_counts_and_later_ones_are_reported() {
        let comments = [
            bot(1, claim("c-a").to_comment()),
            by("alice", 3, end("c-a", Outcome::Done).to_comment()),
            bot(2, end("c-a", Outcome::Recovered).to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert!(o.owner.is_none());
        let ClaimState::Ended { end, .. } = o.state("c-a") else {
            panic!()
        };
        assert_eq!(end.record.outcome, Outcome::Recovered);
        assert_eq!(
            o.problems[0].kind,
            ProblemKind::DuplicateEnd {
                claim_id: "c-a".into(),
                first_comment_id: BASE + 2
            }
        );
    }

    #[test]
    fn end_for_unknown_claim_is_reported() {
        let comments = [bot(1, end("c-gone", Outcome::Swept).to_comment())];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(
            o.problems[0].kind,
            ProblemKind::EndForUnknownClaim {
                claim_id: "c-gone".into()
            }
        );
        assert!(o.problems[0].to_string().contains("`c-gone`"));
    }

    #[test]
    fn the_same_comment_listed_twice_counts_once() {
        let c = bot(1, claim("c-a").to_comment());
        let o = Ownership::of(ISSUE, &[c.clone(), c], &trust());
        assert_eq!(owner_id(&o), Some("c-a"));
        assert!(o.problems.is_empty());
    }

    #[test]
    fn cancel_requests_do_not_affect_ownership_and_are_pending_while_their_claim_is_active() {
        // given a claim, a trusted cancel for it, and a stranger's cancel for it before that
        let cancel = |request_id: &str, claim_id: &str| CancelRecord {
            request_id: request_id.into(),
            claim_id: claim_id.into(),
            ..sample_cancel()
        };
        let comments = [
            bot(1, claim("c-a").to_comment()),
            by("mallory", 2, cancel("cx-evil", "c-a").to_comment()),
            bot(3, cancel("cx-1", "c-a").to_comment()),
            bot(4, cancel("cx-2", "c-a").to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        // then the claim still owns, the first trusted cancel is pending, the stranger's is
        // reported and never counts
        assert_eq!(owner_id(&o), Some("c-a"));
        let pending = o.pending_cancel("c-a").expect("pending");
        assert_eq!(pending.record.request_id, "cx-1");
        assert_eq!(pending.comment_id, BASE + 3);
        assert_eq!(o.cancels.len(), 2);
        assert_eq!(
            o.problems[0].to_string(),
            format!(
                "comment {} by @mallory: cancel record from an untrusted author, ignored",
                BASE + 2
            )
        );
        assert_eq!(o.pending_cancel("c-other"), None);
    }

    #[test]
    fn cancel_for_an_ended_claim_is_not_pending_and_one_for_another_issue_is_ignored() {
        let elsewhere = CancelRecord {
            issue: 7,
            claim_id: "c-b".into(),
            ..sample_cancel()
        };
        let mine = CancelRecord {
            claim_id: "c-a".into(),
            ..sample_cancel()
        };
        let comments = [
            bot(1, claim("c-a").to_comment()),
            bot(2, claim("c-b").to_comment()),
            bot(3, mine.to_comment()),
            bot(4, end("c-a", Outcome::Cancelled).to_comment()),
            bot(5, elsewhere.to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(owner_id(&o), Some("c-b"));
        assert_eq!(o.pending_cancel("c-a"), None);
        assert_eq!(o.pending_cancel("c-b"), None);
        assert_eq!(
            o.problems[0].kind,
            ProblemKind::WrongIssue { record_issue: 7 }
        );
    }

    #[test]
    fn other_record_kinds_do_not_affect_ownership() {
        let view = encode(Kind::View, &serde_json::json!({"registry": true}));
        let comments = [bot(1, claim("c-a").to_comment()), bot(2, view)];
        let o = Ownership::of(ISSUE, &comments, &trust());
        assert_eq!(owner_id(&o), Some("c-a"));
        assert!(o.problems.is_empty());
    }

    #[test]
    fn problems_are_listed_in_comment_order() {
        let comments = [
            bot(5, end("c-x", Outcome::Done).to_comment()),
            by("mallory", 1, claim("c-m").to_comment()),
        ];
        let o = Ownership::of(ISSUE, &comments, &trust());
        let order: Vec<u64> = o.problems.iter().map(|p| p.comment_id - BASE).collect();
        assert_eq!(order, [1, 5]);
    }

    #[test]
    fn an_end_is_a_thirdshift_commands_by_the_facts_it_carries_never_by_its_id() {
        // given two ends naming no claim comment: one carrying a Command's facts, one not, each
        // with an id that does not look like the other kind's
        let evidence = crate::protocol::record::AdoptedEvidence {
            host: "build-01".into(),
            machine_id: "m1".into(),
            record: "acme/widgets/commands/issue/42-x.command.json".into(),
            pid: 4242,
            process_start: "b:1".into(),
        };
        let theirs = EndRecord {
            run: crate::protocol::record::RunOf::thirdshift_of(evidence),
            ..end("c-looks-ours", Outcome::Recovered)
        };
        let comments = [
            bot(1, theirs.to_comment()),
            bot(
                2,
                end("ts-00000000000000a7", Outcome::Recovered).to_comment(),
            ),
        ];
        // when ownership is read
        let o = Ownership::of(ISSUE, &comments, &trust());
        // then the one with the facts is a Command's end, and the other ends no known claim
        let adopted: Vec<&str> = o
            .adopted_ends
            .iter()
            .map(|e| e.record.claim_id.as_str())
            .collect();
        assert_eq!(adopted, ["c-looks-ours"]);
        assert!(matches!(
            &o.problems[..],
            [Problem { kind: ProblemKind::EndForUnknownClaim { claim_id }, .. }]
                if claim_id == "ts-00000000000000a7"
        ));
    }
}
