//! Table tests of `thirdshift.on_dead: continue` in the plan: a dead thirdshift Command whose
//! host kept its work on origin and moved its worktree aside is ended `continued` and its issue
//! handed back in thirdshift's order (`in-progress` off, then `ready-for-agent` on); anything
//! short of that, a person's label, or the limit ends it as thirdshift's Failed run; a pass
//! killed between the two label writes is finished; a Claim made since is never touched. No HTTP.

use super::adopted::{claimed_by_thirdshift, command, labels_of, TS};
use super::*;
use crate::protocol::config::OnDead;

fn carrying_on() -> Config {
    let mut c = Config::default();
    c.thirdshift.on_dead = OnDead::Continue;
    c
}

/// A dead Command `id` whose host kept its work on its Issue branch on origin and moved its
/// worktree aside.
fn moved_aside(id: &str) -> ClaimVerdict {
    let mut k = kept(false, true);
    k.moved_to = Some(format!("/work/wt/issue-7.dead-{id}"));
    ClaimVerdict {
        claim_id: id.into(),
        kept: Some(k),
        ..command(dead(), "issue-7")
    }
}

fn world_of(v: ClaimVerdict) -> Repository {
    Repository::with(vec![claimed_by_thirdshift()], vec![report(vec![v])])
}

#[test]
fn a_dead_command_whose_worktree_went_aside_is_handed_back_in_thirdshifts_order() {
    // given a dead Command whose work is on origin and whose worktree went aside
    let mut world = world_of(moved_aside(TS));
    // when a pass plans under `continue`
    let plan = world.plan_with(&carrying_on());
    // then it ends `continued`, naming the branch, the session, the path thirdshift reuses
    let end = end_of_plan(&plan);
    assert_eq!(end.outcome, Outcome::Continued);
    let c = end.continuation.as_deref().expect("a continuation");
    assert_eq!(
        (c.number, c.branch.as_deref(), c.worktree.as_deref()),
        (1, Some("issue-7"), Some("/work/wt/issue-7"))
    );
    let moved = end.kept.as_ref().and_then(|k| k.moved_to.as_deref());
    assert_eq!(moved, Some("/work/wt/issue-7.dead-ts-00000000000000a7"));
    assert!(end.reason.contains("moved aside"), "{}", end.reason);
    // and takes in-progress off before it puts ready-for-agent on
    assert_eq!(end.labels_after, Some(vec![READY.to_string()]));
    assert_eq!(plan.actions[1..], [remove(7, IN_PROGRESS), add(7, READY)]);
    // and once applied, the next pass writes nothing
    world.apply(&plan);
    assert_eq!(labels_of(&world), ["bug", READY]);
    let again = world.plan_with(&carrying_on());
    assert!(again.actions.is_empty(), "{again:?}");
}

#[test]
fn without_its_work_on_its_branch_or_its_worktree_aside_or_under_fail_it_ends_as_failed() {
    let not_pushed = {
        let mut v = moved_aside(TS);
        v.kept.as_mut().unwrap().pushed = false;
        (v, carrying_on())
    };
    let not_moved = (
        ClaimVerdict {
            kept: Some(kept(false, true)),
            ..command(dead(), "issue-7")
        },
        carrying_on(),
    );
    let another_branch = {
        let mut v = moved_aside(TS);
        v.kept.as_mut().unwrap().branch = "thirdshift/salvage/issue-7".into();
        (v, carrying_on())
    };
    let under_fail = (moved_aside(TS), Config::default());
    for (v, config) in [not_pushed, not_moved, another_branch, under_fail] {
        let plan = world_of(v).plan_with(&config);
        let end = end_of_plan(&plan);
        assert_eq!(end.outcome, Outcome::Recovered);
        assert_eq!(end.continuation, None);
        assert_eq!(plan.actions[1..], [add(7, "agent-failed")]);
    }
}

#[test]
fn a_persons_label_holds_the_issue_and_nothing_is_handed_back() {
    for held in ["ready-for-human", "needs-info"] {
        let mut world = world_of(moved_aside(TS));
        world.issues[0].labels.push(held.into());
        let end = end_of_plan(&world.plan_with(&carrying_on())).clone();
        assert_eq!(end.outcome, Outcome::Recovered, "{held}");
    }
}

#[test]
fn hand_backs_stop_at_max_continuations_and_the_next_death_ends_as_failed() {
    // given an issue whose Commands died and were handed back max_continuations (2) times
    let mut world = world_of(moved_aside("ts-00000000000000b1"));
    for id in ["ts-00000000000000b1", "ts-00000000000000b2"] {
        world.reports = vec![report(vec![moved_aside(id)])];
        let plan = world.plan_with(&carrying_on());
        assert_eq!(end_of_plan(&plan).outcome, Outcome::Continued, "{id}");
        world.apply(&plan);
        // (thirdshift's Pickup takes it again)
        world.issues[0].labels = vec![IN_PROGRESS.into(), "bug".into()];
        world.issues[0].since_end = None;
    }
    // when the third Command dies the same way
    world.reports = vec![report(vec![moved_aside("ts-00000000000000b3")])];
    let plan = world.plan_with(&carrying_on());
    // then it ends as thirdshift's Failed run, which thirdshift's own Failure limit counts
    let end = end_of_plan(&plan);
    assert_eq!(end.outcome, Outcome::Recovered);
    assert_eq!(plan.actions[1..], [add(7, "agent-failed")]);
}

#[test]
fn a_hand_back_killed_between_its_two_label_writes_is_finished_by_the_next_pass() {
    // given a hand-back whose pass was killed after taking in-progress off
    let mut world = world_of(moved_aside(TS));
    let plan = world.plan_with(&carrying_on());
    let cut = Plan {
        actions: plan.actions[..2].to_vec(),
        findings: vec![],
    };
    world.apply(&cut);
    assert_eq!(labels_of(&world), ["bug"]);
    // and no person touched the labels since
    world.issues[0].since_end = people(vec![]);
    // when the next pass plans
    let next = world.plan_with(&carrying_on());
    // then it puts ready-for-agent on, and posts no second end
    assert_eq!(next.actions, [add(7, READY)]);
    assert_eq!(healths(&next), [(7, Some(TS), &Health::LabelsFinished)]);
}

#[test]
fn an_issue_claimed_again_after_an_end_is_never_relabelled_for_that_end() {
    // given a handed-back issue that thirdshift's Pickup claimed again with the same trusted
    // login (in-progress on, ready-for-agent off), before any host reports its new Command
    let mut world = world_of(moved_aside(TS));
    let plan = world.plan_with(&carrying_on());
    world.apply(&plan);
    world.reports = vec![report(vec![])];
    world.issues[0].labels = vec![IN_PROGRESS.into(), "bug".into()];
    // (the events show in-progress taken off by the hand-back, then put on by thirdshift's
    // claim, with our own login: no person's change among them)
    world.issues[0].since_end = Some(crate::snapshot::SinceEnd {
        people: vec![],
        claimed_again: true,
    });
    // when passes plan
    for config in [carrying_on(), Config::default()] {
        let next = world.plan_with(&config);
        // then the new Claim's labels stand
        assert!(next.actions.is_empty(), "{next:?}");
        assert_eq!(healths(&next), [(7, Some(TS), &Health::PeoplesLabels)]);
    }
}
