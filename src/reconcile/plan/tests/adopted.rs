//! Table tests of thirdshift's own Commands in the plan: a dead one is ended as thirdshift's
//! Failed run labels the issue (released with nothing on origin, else kept and `agent-failed`),
//! a live one is left alone, and an ended one's labels are finished without taking its kept
//! Claim off. No HTTP.

use super::*;
use crate::text::ToComment;

const AGENT_FAILED: &str = "agent-failed";
pub(super) const TS: &str = "ts-00000000000000a7";
/// The record `record::report::tests::sample_adopted_run` names.
const RECORD: &str = "o/r/commands/issue/7-20261204T100000+0000~0123456789abcdef.command.json";

/// What a host reports of a thirdshift Command on issue 7 working on `branch`.
pub(super) fn command(verdict: Verdict, branch: &str) -> ClaimVerdict {
    ClaimVerdict {
        claim_id: TS.into(),
        issue: 7,
        verdict,
        kept: None,
        run: crate::protocol::record::RunOf::thirdshift_of(
            crate::protocol::record::report::tests::sample_adopted_run(branch),
        ),
        finished: None,
        watched: false,
    }
}

/// Issue 7 as thirdshift claimed it: `in-progress` alone, no claim comment.
pub(super) fn claimed_by_thirdshift() -> Issue {
    issue(7, &[IN_PROGRESS, "bug"], vec![])
}

pub(super) fn labels_of(world: &Repository) -> Vec<String> {
    let mut labels = world.issues[0].labels.clone();
    labels.sort();
    labels
}

#[test]
fn a_dead_command_with_nothing_on_origin_is_released_to_the_queue() {
    // given a Command its host proved dead, nothing of it on origin, nothing kept
    let mut i = claimed_by_thirdshift();
    i.origin = origin(None, &[]);
    let mut world = Repository::with(vec![i], vec![report(vec![command(dead(), "issue-7")])]);
    // when a pass plans
    let plan = world.plan();
    // then it ends the Command with the evidence, and releases the Claim as thirdshift would
    let end = end_of_plan(&plan);
    assert_eq!(
        (end.claim_id.as_str(), end.outcome),
        (TS, Outcome::Recovered)
    );
    assert_eq!(end.claim_comment_id, None);
    let evidence = end.run.thirdshift().expect("the evidence");
    assert_eq!(
        (
            evidence.host.as_str(),
            evidence.record.as_str(),
            evidence.pid
        ),
        (HOST, RECORD, 4242)
    );
    assert_eq!(evidence.process_start, "b-2:987654");
    assert_eq!(end.labels_after, Some(vec![READY.to_string()]));
    assert_eq!(plan.actions[1..], [add(7, READY), remove(7, IN_PROGRESS)]);
    assert_eq!(healths(&plan), [(7, Some(TS), &Health::Recovered)]);
    // and once applied, the next pass plans nothing: the end record is read back as thirdshift's
    world.apply(&plan);
    assert_eq!(labels_of(&world), ["bug", READY]);
    assert!(world.plan().actions.is_empty(), "{:?}", world.plan());
}

#[test]
fn a_dead_command_whose_work_is_on_origin_keeps_its_claim_labelled_agent_failed() {
    // given dead Commands whose work reached origin in each way thirdshift counts, or was kept
    let with_branch = {
        let mut i = claimed_by_thirdshift();
        i.origin = origin(Some("abc123"), &[]);
        (i, command(dead(), "issue-7"))
    };
    let later_branch = (claimed_by_thirdshift(), command(dead(), "issue-7-branch-3"));
    let kept_work = (
        claimed_by_thirdshift(),
        ClaimVerdict {
            kept: Some(kept(false, true)),
            ..command(dead(), "issue-7")
        },
    );
    let security_fix = (
        issue(7, &[IN_PROGRESS, "security-fix"], vec![]),
        command(dead(), "issue-7"),
    );
    for (i, v) in [with_branch, later_branch, kept_work, security_fix] {
        let mut world = Repository::with(vec![i], vec![report(vec![v])]);
        // when a pass plans
        let plan = world.plan();
        // then the Claim stays and the issue is labelled agent-failed, nothing taken off
        let end = end_of_plan(&plan);
        assert_eq!(
            end.labels_after,
            Some(vec![IN_PROGRESS.to_string(), AGENT_FAILED.to_string()])
        );
        assert_eq!(end.resume.as_deref(), Some("thirdshift resume 7"));
        assert_eq!(plan.actions[1..], [add(7, AGENT_FAILED)]);
        // and once applied, the next pass writes nothing, so never takes in-progress off (the plan
        // is a function of the world, which it leaves as it is: one pass stands for all later)
        world.apply(&plan);
        assert!(labels_of(&world).contains(&AGENT_FAILED.to_string()));
        assert!(labels_of(&world).contains(&IN_PROGRESS.to_string()));
        let again = world.plan();
        assert!(again.actions.is_empty(), "{again:?}");
    }
}

#[test]
fn a_pass_killed_after_the_end_record_is_finished_by_the_next() {
    // given a dead Command ended by a pass that was killed before its labels
    let mut world = Repository::with(
        vec![claimed_by_thirdshift()],
        vec![report(vec![command(dead(), "issue-7-branch-2")])],
    );
    let plan = world.plan();
    let only_the_end = Plan {
        actions: plan.actions[..1].to_vec(),
        findings: vec![],
    };
    world.apply(&only_the_end);
    // when the next pass plans
    let next = world.plan();
    // then it adds the label the end record states, and posts no second end
    assert_eq!(next.actions, [add(7, AGENT_FAILED)]);
    assert_eq!(healths(&next), [(7, Some(TS), &Health::LabelsFinished)]);
}

#[test]
fn live_commands_and_issues_no_longer_in_progress_are_left_alone() {
    let writers = Verdict::WritersAlive {
        pids: vec![99],
        evidence: "its Harness runs".into(),
    };
    for v in [Verdict::Alive, writers] {
        // given a Command alive (or with writers alive), beside a dead one on the same issue
        let dead_too = ClaimVerdict {
            claim_id: "ts-00000000000000b8".into(),
            ..command(dead(), "issue-7")
        };
        let world = Repository::with(
            vec![claimed_by_thirdshift()],
            vec![report(vec![command(v.clone(), "issue-7"), dead_too])],
        );
        // then nothing is written
        let plan = world.plan();
        assert!(plan.actions.is_empty(), "{plan:?}");
        assert_eq!(plan.findings.len(), 1, "the live Command only");
    }
    // given a dead Command on an issue a person took in-progress off
    let world = Repository::with(
        vec![issue(7, &[READY], vec![])],
        vec![report(vec![command(dead(), "issue-7")])],
    );
    // then nothing is written either
    assert!(world.plan().actions.is_empty());
}

#[test]
fn an_end_record_naming_a_thirdshift_command_needs_its_evidence_and_a_trusted_author() {
    // given end records for a `ts-` claim: one without evidence, one by a stranger
    let mut world = Repository::with(
        vec![claimed_by_thirdshift()],
        vec![report(vec![command(dead(), "issue-7")])],
    );
    let mut end = world.plan();
    let Action::PostEnd { end: record, .. } = &mut end.actions[0] else {
        panic!("an end first")
    };
    let forged = comment("mallory", 1, record.to_comment());
    record.run = Default::default();
    let bare = bot(2, record.to_comment());
    world.issues[0].comments = vec![forged, bare];
    // when a pass plans
    let plan = world.plan();
    // then neither counts: the Command is ended by this pass
    assert!(matches!(&plan.actions[0], Action::PostEnd { end, .. } if end.claim_id == TS));
}

/// `/thirdshift cancel` by a writer, comment `BASE + id` on issue 7.
fn cancel_comment(id: u64) -> crate::snapshot::CommandView {
    crate::snapshot::CommandView {
        pending: crate::protocol::command::Pending {
            issue: 7,
            comment_id: BASE + id,
            author: "bob".into(),
            html_url: format!("https://github.com/o/r/issues/7#issuecomment-{}", BASE + id),
            parsed: crate::protocol::command::parse("/thirdshift cancel"),
            edited: false,
            refused: false,
        },
        role: crate::protocol::config::Role::Write,
    }
}

fn plan_cancel(world: &Repository, id: u64) -> Vec<String> {
    let mut snapshot = world.snapshot();
    snapshot.commands = vec![cancel_comment(id)];
    let p = plan(&snapshot, &Config::default(), &input());
    p.actions.iter().map(shape).collect()
}

#[test]
fn cancel_of_a_live_command_asks_its_host_once_and_of_a_dead_one_asks_nothing() {
    // given a live thirdshift Command on issue 7
    let report_of = |v| vec![report(vec![command(v, "issue-7")])];
    let mut world = Repository::with(vec![claimed_by_thirdshift()], report_of(Verdict::Alive));
    // when a writer asks to cancel it
    let shapes = plan_cancel(&world, 5);
    // then one request naming the Command is posted for its host, and the labels stay its own
    let request = format!("#7 cancel cx-cmd-{} {TS}", BASE + 5);
    let want = [
        "#7 react eyes 5",
        &request,
        "#7 reply 5 cancel-requested",
        "#7 react +1 5",
    ];
    assert_eq!(shapes, want);
    // given the request posted, a second cancel only answers
    let mut snapshot = world.snapshot();
    snapshot.commands = vec![cancel_comment(5)];
    let p = plan(&snapshot, &Config::default(), &input());
    let Some(Action::PostCancel { cancel, .. }) = p.actions.get(1) else {
        panic!("{:?}", p.actions)
    };
    world.issues[0].comments.push(bot(6, cancel.to_comment()));
    let again = [
        "#7 react eyes 8",
        "#7 reply 8 already-requested",
        "#7 react +1 8",
    ];
    assert_eq!(plan_cancel(&world, 8), again);
    // and of a dead Command there is nothing to stop: the pass ends it as before
    let world = Repository::with(vec![claimed_by_thirdshift()], report_of(dead()));
    let shapes = plan_cancel(&world, 9);
    assert!(
        shapes.contains(&"#7 reply 9 nothing-to-do".to_string()),
        "{shapes:?}"
    );
    assert!(!shapes.iter().any(|s| s.contains(" cancel ")), "{shapes:?}");
}

/// Two live Commands on issue 7: [`TS`] reported first, `ts-…b2` second but placed first.
fn two_live_commands_the_second_placed_first() -> Repository {
    let mut second = command(Verdict::Alive, "issue-7");
    second.claim_id = "ts-00000000000000b2".into();
    let reports = vec![report(vec![command(Verdict::Alive, "issue-7"), second])];
    let mut world = Repository::with(vec![claimed_by_thirdshift()], reports);
    for (id, claim) in [(2, "ts-00000000000000b2"), (3, TS)] {
        let mut a = crate::protocol::record::adopt::tests::sample_adopt();
        (a.issue, a.claim_id) = (7, claim.into());
        world.issues[0].comments.push(bot(id, a.to_comment()));
    }
    world
}

#[test]
fn cancel_with_two_live_commands_stops_the_one_that_keeps_the_issue() {
    // given two live Commands on issue 7, the one reported second placed on the issue first
    let world = two_live_commands_the_second_placed_first();
    // when a writer asks to cancel, then the request names the Command placed first
    let shapes = plan_cancel(&world, 5);
    let request = format!("#7 cancel cx-cmd-{} ts-00000000000000b2", BASE + 5);
    assert!(shapes.contains(&request), "{shapes:?}");
}

#[test]
fn of_two_live_commands_the_later_placed_one_is_found_colliding_and_nothing_is_written() {
    // given two live Commands on issue 7, the one reported second placed first
    let world = two_live_commands_the_second_placed_first();
    // when the pass plans
    let plan = world.plan();
    // then nothing is written, the one placed first is alive and the other collides with it
    assert!(plan.actions.is_empty(), "{plan:?}");
    let found: Vec<(&str, &Health)> = (plan.findings.iter())
        .map(|f| (f.claim_id.as_deref().unwrap(), &f.health))
        .collect();
    assert_eq!(
        found,
        [
            (TS, &Health::Colliding),
            ("ts-00000000000000b2", &Health::Alive)
        ]
    );
    assert!(plan.findings[0].note.contains("`ts-00000000000000b2`"));
}
