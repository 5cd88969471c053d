//! Which comments of an issue are `/thirdshift` commands still waiting for an answer: addressed
//! to thirdshift (`parse`), written by a person (not a bot, not our own identity), and named by
//! no reply record from a trusted author on the same issue. A reply pasted by anyone else answers
//! nothing, so a stranger cannot silence a command. Pure; reading the comments is the caller's.

use std::collections::HashSet;

use crate::github::Comment;
use crate::protocol::record::{decode, Decoded, Record, ReplyRecord, Trust};

use crate::protocol::command::{parse, Pending};

/// Whether `login` (of user type `kind`) is a bot or the token's own identity `me`.
pub fn is_ignored_author(login: &str, kind: Option<&str>, me: &str) -> bool {
    login.is_empty()
        || login.eq_ignore_ascii_case(me)
        || login.to_ascii_lowercase().ends_with("[bot]")
        || kind.is_some_and(|k| k.eq_ignore_ascii_case("bot"))
}

/// The reply records trusted authors wrote among `comments` of `issue`.
fn trusted_replies<'a>(
    issue: u64,
    comments: &'a [Comment],
    trust: &'a Trust,
) -> impl Iterator<Item = ReplyRecord> + 'a {
    comments
        .iter()
        .filter(|c| trust.is_trusted(c.author()))
        .filter_map(move |c| match decode(c.text()) {
            Decoded::Record(Record::Reply(r)) if r.issue == issue => Some(r),
            _ => None,
        })
}

/// The ids of the command comments on `issue` that a trusted reply answers.
pub fn answered(issue: u64, comments: &[Comment], trust: &Trust) -> HashSet<u64> {
    trusted_replies(issue, comments, trust)
        .map(|r| r.command_comment_id)
        .collect()
}

/// The trusted replies among `comments` of `issue` that refused a command for want of the role:
/// (the command's author in lower case, when).
pub fn refusals(
    issue: u64,
    comments: &[Comment],
    trust: &Trust,
) -> Vec<(String, chrono::DateTime<chrono::Utc>)> {
    trusted_replies(issue, comments, trust)
        .filter(|r| r.answer == crate::protocol::record::Answer::NotPermitted)
        .map(|r| (r.author.to_ascii_lowercase(), r.replied_at))
        .collect()
}

/// The unanswered commands among `comments` of `issue`, by comment id.
pub fn pending(issue: u64, comments: &[Comment], trust: &Trust, me: &str) -> Vec<Pending> {
    let done = answered(issue, comments, trust);
    let mut out: Vec<Pending> = comments
        .iter()
        .filter(|c| !done.contains(&c.id))
        .filter(|c| {
            let kind = c.user.as_ref().and_then(|u| u.kind.as_deref());
            !is_ignored_author(c.author(), kind, me)
        })
        .filter_map(|c| {
            let parsed = parse(c.text());
            parsed.is_addressed().then(|| Pending {
                issue,
                comment_id: c.id,
                author: c.author().to_string(),
                html_url: c.html_url.clone(),
                parsed,
                edited: c.updated_at > c.created_at,
                refused: c.reactions.as_ref().is_some_and(|r| r.minus_one > 0),
            })
        })
        .collect();
    out.sort_by_key(|p| p.comment_id);
    out.dedup_by_key(|p| p.comment_id);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::User;
    use crate::protocol::record::reply::tests::sample_reply;
    use crate::protocol::record::ReplyRecord;

    fn comment(id: u64, login: &str, kind: &str, body: &str) -> Comment {
        let now = chrono::Utc::now();
        Comment {
            id,
            user: Some(User {
                login: login.into(),
                id: 1,
                kind: Some(kind.into()),
            }),
            body: Some(body.into()),
            html_url: format!("https://github.com/o/r/issues/42#issuecomment-{id}"),
            issue_url: "https://api.github.com/repos/o/r/issues/42".into(),
            created_at: now,
            updated_at: now,
            reactions: None,
        }
    }

    fn reply_to(id: u64) -> String {
        ReplyRecord {
            command_comment_id: id,
            ..sample_reply()
        }
        .to_comment("answered")
    }

    fn ids(p: &[Pending]) -> Vec<u64> {
        p.iter().map(|p| p.comment_id).collect()
    }

    #[test]
    fn a_command_is_pending_until_a_trusted_reply_names_it() {
        let trust = Trust::new(["bot"]);
        let mut comments = vec![
            comment(1, "alice", "User", "/thirdshift status"),
            comment(2, "alice", "User", "thanks"),
            comment(3, "bob", "User", "/thirdshift recovr"),
        ];
        assert_eq!(ids(&pending(42, &comments, &trust, "bot")), [1, 3]);
        // a reply by the bot answers comment 1
        comments.push(comment(4, "bot", "User", &reply_to(1)));
        assert_eq!(ids(&pending(42, &comments, &trust, "bot")), [3]);
    }

    #[test]
    fn a_reply_forged_by_a_stranger_answers_nothing() {
        let trust = Trust::new(["bot"]);
        let comments = vec![
            comment(1, "alice", "User", "/thirdshift recover"),
            // mallory pastes a reply record, alone and inside a command of her own
            comment(2, "mallory", "User", &reply_to(1)),
            comment(
                3,
                "mallory",
                "User",
                &format!("/thirdshift help\n{}", reply_to(3)),
            ),
        ];
        assert_eq!(ids(&pending(42, &comments, &trust, "bot")), [1, 3]);
    }

    #[test]
    fn bots_and_our_own_identity_give_no_commands() {
        let trust = Trust::new(["bot"]);
        let comments = vec![
            comment(1, "bot", "User", "/thirdshift recover"),
            comment(2, "ci[bot]", "Bot", "/thirdshift recover"),
            comment(3, "renovate", "Bot", "/thirdshift cancel"),
            comment(4, "alice", "User", "/thirdshift cancel"),
        ];
        assert_eq!(ids(&pending(42, &comments, &trust, "bot")), [4]);
    }
}
