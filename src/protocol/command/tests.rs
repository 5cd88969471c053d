//! Parser table tests: the grammar, its errors, and hostile input (huge lines, control
//! characters, shell metacharacters, Markdown tricks, forged records), none of which may crash
//! the parser or be read as something it is not.

use super::*;

fn recover(continue_: bool, force: bool, kill: bool) -> Parsed {
    Parsed::Command(Command::Recover(Recover {
        continue_,
        force,
        kill,
    }))
}

#[test]
fn every_command_and_flag_parses_from_the_first_line() {
    let table: &[(&str, Parsed)] = &[
        ("/thirdshift recover", recover(false, false, false)),
        (
            "/thirdshift recover --continue",
            recover(true, false, false),
        ),
        ("/thirdshift recover --force", recover(false, true, false)),
        ("/thirdshift recover --kill", recover(false, false, true)),
        (
            "/thirdshift recover --kill --continue --force",
            recover(true, true, true),
        ),
        (
            "/thirdshift cancel",
            Parsed::Command(Command::Cancel(Cancel::default())),
        ),
        (
            "/thirdshift cancel --requeue",
            Parsed::Command(Command::Cancel(Cancel { requeue: true })),
        ),
        ("/thirdshift status", Parsed::Command(Command::Status)),
        ("/thirdshift help", Parsed::Command(Command::Help)),
        // blank lines before it, spaces around it, CRLF, text on later lines
        (
            "\n  \r\n   /thirdshift   status  \r\nthanks!",
            Parsed::Command(Command::Status),
        ),
        (
            "/thirdshift\tcancel\nplease stop",
            Parsed::Command(Command::Cancel(Cancel::default())),
        ),
    ];
    for (body, want) in table {
        assert_eq!(&parse(body), want, "{body:?}");
    }
}

#[test]
fn comments_not_addressed_to_thirdshift_are_not_commands() {
    let table = [
        "",
        "   \n\n",
        "thanks, looks good",
        "please run /thirdshift recover",
        "/thirdshiftrecover",
        "/thirdshift-recover",
        "/ThirdShift recover",
        "hello\n/thirdshift recover",
        // Markdown that shows the command rather than giving it
        "> /thirdshift recover --force",
        ">/thirdshift recover",
        "`/thirdshift recover`",
        "```\n/thirdshift recover\n```",
        "~~~\n/thirdshift cancel\n~~~",
        "    /thirdshift recover",
        "\t/thirdshift recover",
        "<!-- /thirdshift recover -->",
        "<!--\n/thirdshift recover\n-->",
        "**/thirdshift recover**",
        "[/thirdshift recover](https://example.com)",
        "- /thirdshift recover",
    ];
    for body in table {
        assert_eq!(parse(body), Parsed::NotACommand, "{body:?}");
    }
}

#[test]
fn mistakes_are_errors_with_a_suggestion_when_one_is_close() {
    let table: &[(&str, ParseError)] = &[
        ("/thirdshift", ParseError::MissingVerb),
        ("/thirdshift   \nrecover", ParseError::MissingVerb),
        (
            "/thirdshift recovr",
            ParseError::UnknownVerb {
                word: "recovr".into(),
                suggestion: Some(Verb::Recover),
            },
        ),
        (
            "/thirdshift Status",
            ParseError::UnknownVerb {
                word: "Status".into(),
                suggestion: Some(Verb::Status),
            },
        ),
        (
            "/thirdshift deploy",
            ParseError::UnknownVerb {
                word: "deploy".into(),
                suggestion: None,
            },
        ),
        (
            "/thirdshift recover --forse",
            ParseError::UnknownFlag {
                verb: Verb::Recover,
                flag: "--forse".into(),
                suggestion: Some(Flag::Force),
            },
        ),
        (
            "/thirdshift recover -f",
            ParseError::UnknownFlag {
                verb: Verb::Recover,
                flag: "-f".into(),
                suggestion: None,
            },
        ),
        (
            "/thirdshift cancel --force",
            ParseError::UnknownFlag {
                verb: Verb::Cancel,
                flag: "--force".into(),
                suggestion: None,
            },
        ),
        (
            "/thirdshift recover --force --force",
            ParseError::DuplicateFlag {
                verb: Verb::Recover,
                flag: Flag::Force,
            },
        ),
        (
            "/thirdshift status now",
            ParseError::UnexpectedArgument {
                verb: Verb::Status,
                word: "now".into(),
            },
        ),
    ];
    for (body, want) in table {
        assert_eq!(parse(body), Parsed::Invalid(want.clone()), "{body:?}");
    }
}

#[test]
fn hostile_input_is_read_as_data_and_never_crashes() {
    // a 64 KiB line, a 64 KiB word, and a 1 MiB comment of one line
    let long_line = format!("/thirdshift recover {}", "--force ".repeat(8 * 1024));
    assert!(matches!(
        parse(&long_line),
        Parsed::Invalid(ParseError::DuplicateFlag { .. })
    ));
    let long_word = format!("/thirdshift {}", "x".repeat(64 * 1024));
    let Parsed::Invalid(ParseError::UnknownVerb { word, suggestion }) = parse(&long_word) else {
        panic!("a long word is an unknown verb");
    };
    assert_eq!(word.chars().count(), MAX_WORD_CHARS + 1, "clipped with …");
    assert_eq!(suggestion, None);
    assert_eq!(parse(&"a".repeat(1 << 20)), Parsed::NotACommand);

    // control characters, shell metacharacters and Markdown are kept as data in the error
    let table = [
        "/thirdshift recover\u{0}",
        "/thirdshift \u{1b}[31mrecover",
        "/thirdshift recover$(rm -rf /)",
        "/thirdshift `reboot`",
        "/thirdshift recover;shutdown",
        "/thirdshift <!--",
        "/thirdshift @everyone",
        "/thirdshift ../../etc/passwd",
        "/thirdshift recover --force=$(id)",
        "/thirdshift recover --kill|sh",
        "/thirdshift 💥",
    ];
    for body in table {
        assert!(
            matches!(parse(body), Parsed::Invalid(_)),
            "{body:?}: {:?}",
            parse(body)
        );
    }
    // a multi-byte character at the clipping point is not split
    let wide = format!("/thirdshift {}", "é".repeat(100));
    assert!(matches!(parse(&wide), Parsed::Invalid(_)));
}

#[test]
fn a_forged_record_in_a_command_comment_is_not_part_of_the_command() {
    // given a command whose later lines hold a forged reply and end record
    let body = "/thirdshift recover --force\n\
                <!-- thirdshift:v1:reply {\"command_comment_id\":1,\"issue\":1} -->\n\
                <!-- thirdshift:v1:end {\"claim_id\":\"c-x\"} -->";
    // then the command is what its first line says, and nothing else
    assert_eq!(parse(body), recover(false, true, false));
    // and a record line as the first line is not a command at all
    let forged = "<!-- thirdshift:v1:reply {\"command_comment_id\":1} -->\n/thirdshift recover";
    assert_eq!(parse(forged), Parsed::NotACommand);
}

#[test]
fn canonical_spelling_orders_flags() {
    let Parsed::Command(c) = parse("/thirdshift recover --kill --continue") else {
        panic!()
    };
    assert_eq!(c.canonical(), "recover --continue --kill");
    assert_eq!(Command::Help.canonical(), "help");
}

#[test]
fn edit_distance_counts_insertions_deletions_and_substitutions() {
    assert_eq!(distance("recover", "recover"), 0);
    assert_eq!(distance("recovr", "recover"), 1);
    assert_eq!(distance("cancle", "cancel"), 2);
    assert_eq!(distance("", "help"), 4);
}
