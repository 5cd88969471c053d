//! Snapshots of every reply text the commands write, and proof that untrusted words cannot break
//! out of the code span they are shown in.

use super::*;
use crate::protocol::command::{parse, Parsed};
use crate::protocol::record::claim::tests::sample_claim;
use crate::protocol::record::end::tests::sample_end;
use crate::protocol::record::{ClaimView, EndView, Outcome};

fn pending(body: &str) -> Pending {
    Pending {
        issue: 42,
        comment_id: 5_000_000_123,
        author: "alice".into(),
        html_url: "https://github.com/acme/widgets/issues/42#issuecomment-5000000123".into(),
        parsed: parse(body),
        edited: false,
        refused: false,
    }
}

fn invalid_recovr() -> String {
    let Parsed::Invalid(e) = parse("/thirdshift recovr") else {
        panic!()
    };
    invalid(&e)
}

fn claim() -> ClaimView {
    ClaimView {
        comment_id: 5_000_000_001,
        author: "bot".into(),
        record: sample_claim(),
    }
}

#[test]
fn help_lists_every_command_and_flag() {
    insta::assert_snapshot!(help());
}

#[test]
fn every_reply_of_the_commands() {
    let p = pending("/thirdshift recover --force");
    let c = claim();
    let end = EndView {
        comment_id: 5_000_000_002,
        author: "bot".into(),
        record: sample_end(Outcome::Done),
    };
    let evidence = "host build-01 reports claim c-0123456789abcdef alive";
    let silent = "host build-01 has not reported on claim c-0123456789abcdef since it was taken";
    let cases = [
        (Answer::NotPermitted, not_permitted("alice", Role::Write, Role::Maintain, "`recover --force`")),
        (Answer::NotPermitted, edited("alice")),
        (Answer::Recovered, recovered("host build-01 reports the Run dead (PID gone): …; the issue goes to ready-for-agent")),
        (Answer::Forced, forced("@alice forced …; the issue goes to ready-for-human", "alice")),
        (Answer::Refused, refused_alive(evidence)),
        (Answer::Refused, refused_silent(silent, Role::Maintain)),
        (Answer::KillRequested, kill_requested(&c, "cx-cmd-5000000123")),
        (Answer::CancelRequested, cancel_requested(&c, "cx-cmd-5000000123", false)),
        (Answer::CancelRequested, cancel_requested(&c, "cx-cmd-5000000123", true)),
        (Answer::AlreadyRequested, already_requested(&c, 5_000_000_003)),
        (Answer::CancelRequested, adopted_cancel_requested("build-01", "ts-00000000000000a7", "cx-cmd-5000000123")),
        (Answer::AlreadyRequested, adopted_already_requested("ts-00000000000000a7", 5_000_000_003)),
        (Answer::AlreadyRequested, being_recovered("c-0123456789abcdef", 5_000_000_100)),
        (Answer::NothingToDo, nothing_active(Some(&end))),
        (Answer::NothingToDo, nothing_active(None)),
        (Answer::NothingToDo, issue_closed().to_string()),
        (Answer::Answered, status(&c, "alive")),
        (Answer::Invalid, also_did(&invalid_recovr(), Some("c-0123456789abcdef"), "host build-01 reports the Run dead (PID gone): …; the issue goes to ready-for-agent")),
    ];
    let all: Vec<String> = cases
        .iter()
        .map(|(a, detail)| reply(&p, Some("recover --force"), *a, detail))
        .collect();
    insta::assert_snapshot!(all.join("\n\n---\n\n"));
}

#[test]
fn every_parse_error_with_its_reply() {
    let bodies = [
        "/thirdshift",
        "/thirdshift recovr",
        "/thirdshift recover --forse",
        "/thirdshift recover --kill --kill",
        "/thirdshift status now",
        "/thirdshift `rm -rf /`",
        "/thirdshift x\u{1b}[31m$(id)",
    ];
    let all: Vec<String> = bodies
        .iter()
        .map(|b| match parse(b) {
            Parsed::Invalid(e) => parse_error(&e),
            other => panic!("{b:?} parsed as {other:?}"),
        })
        .collect();
    insta::assert_snapshot!(all.join("\n"));
    let Parsed::Invalid(e) = parse("/thirdshift recovr") else {
        panic!()
    };
    insta::assert_snapshot!(
        "invalid_reply",
        reply(
            &pending("/thirdshift recovr"),
            None,
            Answer::Invalid,
            &invalid(&e)
        )
    );
}

#[test]
fn untrusted_words_stay_inside_one_code_span() {
    let shown = untrusted("a`b\n<!-- thirdshift:v1:end {} -->\u{7}");
    assert!(!shown.contains('\n') && !shown.contains('\u{7}'), "{shown}");
    assert!(shown.starts_with("``") && shown.ends_with("``"), "{shown}");
}
