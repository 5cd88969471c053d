use super::*;

fn change(sign: char, label: &str, by: &str) -> LabelChange {
    LabelChange {
        label: label.into(),
        added: sign == '+',
        by: by.into(),
    }
}

fn since(changes: &[(char, &str, &str)]) -> SinceEnd {
    let all = changes.iter().map(|(s, l, b)| change(*s, l, b)).collect();
    SinceEnd::of(all, &Trust::new(["bot"]), "in-progress", None)
}

#[test]
fn a_claim_after_the_end_is_told_by_the_events_order_whoever_made_it() {
    // the hand-back, then thirdshift's claim with our own login
    let handed_back = since(&[
        ('-', "in-progress", "bot"),
        ('+', "ready-for-agent", "bot"),
        ('+', "in-progress", "bot"),
        ('-', "ready-for-agent", "bot"),
    ]);
    assert!(handed_back.claimed_again);
    assert!(handed_back.people.is_empty());
    // a person's take-over
    let person = since(&[('-', "in-progress", "bot"), ('+', "In-Progress", "alice")]);
    assert!(person.claimed_again);
    assert_eq!(person.people, [change('+', "In-Progress", "alice")]);
}

#[test]
fn the_ended_claims_own_label_in_the_ends_second_is_not_a_new_claim() {
    // a Run killed at once: its claim's in-progress carries the end record's second
    let killed_at_once = since(&[('+', "in-progress", "bot"), ('-', "ready-for-agent", "bot")]);
    assert!(!killed_at_once.claimed_again);
    // and an end that only took in-progress off
    assert!(!since(&[('-', "in-progress", "bot")]).claimed_again);
}

/// The plan of an end that puts ready-for-agent back and takes in-progress off.
fn requeue() -> Vec<String> {
    vec!["ready-for-agent".to_string()]
}

fn since_planned(changes: &[(char, &str, &str)], labels_after: &[String]) -> SinceEnd {
    let all = changes.iter().map(|(s, l, b)| change(*s, l, b)).collect();
    let planned = Planned {
        labels_after,
        in_progress: "in-progress",
    };
    SinceEnd::of(all, &Trust::new(["bot"]), "in-progress", Some(planned))
}

#[test]
fn after_the_events_its_writer_saw_a_trusted_change_the_end_did_not_plan_is_a_persons() {
    // given the end's own writes, then the trusted login taking ready-for-agent off by hand
    let since = since_planned(
        &[
            ('+', "ready-for-agent", "bot"),
            ('-', "in-progress", "bot"),
            ('-', "ready-for-agent", "bot"),
            ('+', "needs-design", "bot"),
        ],
        &requeue(),
    );
    // then the end's writes are ours, the rest is a person's, whatever the login
    assert_eq!(
        since.people,
        [
            change('-', "ready-for-agent", "bot"),
            change('+', "needs-design", "bot")
        ]
    );
    assert!(!since.claimed_again);
}

#[test]
fn an_end_that_keeps_in_progress_plans_no_removal_of_it() {
    let kept = vec!["in-progress".to_string(), "agent-failed".to_string()];
    let since = since_planned(
        &[('+', "agent-failed", "bot"), ('-', "in-progress", "bot")],
        &kept,
    );
    assert_eq!(since.people, [change('-', "in-progress", "bot")]);
}
