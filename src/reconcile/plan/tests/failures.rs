//! Table tests of the failure limit in the plan: a dead Run whose issue's earlier Run failed is
//! handed to people with both listed, and the limit stops a Continuation too. No HTTP.

use super::*;

/// Issue 7 with one earlier Claim ended `earlier`, and the Claim `c-now` whose Run died with
/// nothing anywhere.
fn after(earlier: Outcome) -> (ClaimRecord, Repository) {
    let old = fresh_claim(7, "c-old");
    let end = end_of(&old, earlier, Some(&[READY]));
    let c = fresh_claim(7, "c-now");
    let comments = vec![
        bot(1, old.to_comment()),
        bot(2, end.to_comment()),
        bot(3, c.to_comment()),
    ];
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], comments)],
        vec![report(vec![verdict(&c, dead())])],
    );
    (c, world)
}

#[test]
fn a_dead_run_after_a_failed_one_is_handed_to_people_with_both_listed() {
    // given an issue whose last Run failed, and whose next Run died with nothing anywhere
    let (_, world) = after(Outcome::Failed);
    // when the pass plans
    let plan = world.plan();
    // then the dead Run's Claim ends recovered, to people rather than back to the queue
    let end = end_of_plan(&plan);
    assert_eq!(end.outcome, Outcome::Recovered);
    assert_eq!(end.labels_after, Some(vec![HUMAN.to_string()]));
    let listed: Vec<_> = end.failures.iter().map(|f| f.claim_id.as_str()).collect();
    assert_eq!(listed, ["c-old", "c-now"]);
    assert!(plan.actions.contains(&add(7, HUMAN)), "{:?}", plan.actions);
    assert!(!plan.actions.contains(&add(7, READY)), "{:?}", plan.actions);
    // and after a done Run the same death goes back to the queue, nothing listed
    let (_, world) = after(Outcome::Done);
    let end = end_of_plan(&world.plan()).clone();
    assert_eq!(end.labels_after, Some(vec![READY.to_string()]));
    assert!(end.failures.is_empty());
}

#[test]
fn the_failure_limit_stops_a_continuation() {
    let config = Config {
        recovery: crate::protocol::config::Recovery {
            on_dead: crate::protocol::config::OnDead::Continue,
            max_continuations: 5,
            max_failures: 2,
        },
        ..Config::default()
    };
    // given an issue already continued once, whose Continuation died too
    let (_, world) = after(Outcome::Continued);
    // when the pass plans under `continue`
    let plan = plan(&world.snapshot(), &config, &input());
    // then it is not continued again: the issue goes to people
    let end = end_of_plan(&plan);
    assert_eq!(end.outcome, Outcome::Recovered);
    assert_eq!(end.continuation, None);
    assert_eq!(end.failures.len(), 2);
    assert_eq!(end.labels_after, Some(vec![HUMAN.to_string()]));
}
