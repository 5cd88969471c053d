//! Plan table tests: one test per decision of `plan`, on snapshots built by hand from real record
//! comments and the real ownership rule, with no HTTP. `Repository` stands for the repository so a
//! plan can be applied by hand and the next pass checked.

use chrono::TimeZone;

use super::*;
use crate::protocol::record::claim::tests::sample_claim;
use crate::protocol::record::DeathReason;
use crate::protocol::record::{
    ClaimRecord, ClaimVerdict, HostReport, Ownership, RawComment, Trust,
};
use crate::snapshot::ReportView;
use crate::snapshot::{Origin, Pull};
use crate::text::ToComment;

const READY: &str = "ready-for-agent";
const IN_PROGRESS: &str = "in-progress";
const HUMAN: &str = "ready-for-human";
const HOST: &str = "build-01";
/// `sample_claim()`'s machine id.
const MACHINE: &str = "4c4c4544003a";
/// Comment ids beyond 32 bits, as GitHub's are.
const BASE: u64 = 5_000_000_000;
const ACTOR: &str = "reconcile@ci";

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 5, 12, 0, 0).unwrap()
}

fn input() -> PlanInput {
    PlanInput {
        actor: ACTOR.into(),
        now: now(),
    }
}

/// A claim on issue `n` by a Run on `build-01` that reported a stage of its own and removed
/// `ready-for-agent`.
fn claim(n: u64, id: &str) -> ClaimRecord {
    ClaimRecord {
        claim_id: id.into(),
        issue: n,
        ..sample_claim()
    }
}

/// A claim whose Run never reported a stage of its own.
fn fresh_claim(n: u64, id: &str) -> ClaimRecord {
    ClaimRecord {
        stage: "claimed".into(),
        ..claim(n, id)
    }
}

/// What the issue's events say since the latest end: these changes by people, no claim since.
fn people(changes: Vec<crate::snapshot::LabelChange>) -> Option<crate::snapshot::SinceEnd> {
    Some(crate::snapshot::SinceEnd {
        people: changes,
        claimed_again: false,
    })
}

/// An end record as a Run or an earlier pass wrote it.
fn end_of(c: &ClaimRecord, outcome: Outcome, labels_after: Option<&[&str]>) -> EndRecord {
    EndRecord {
        claim_id: c.claim_id.clone(),
        issue: c.issue,
        outcome,
        actor: "run@build-01".into(),
        reason: "CMD exited with code 1".into(),
        exit_code: None,
        signal: None,
        cause: None,
        claim_comment_id: None,
        events_seen: None,
        labels_after: labels_after.map(|l| l.iter().map(|s| s.to_string()).collect()),
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        run: Default::default(),
        failures: Vec::new(),
        ended_at: now(),
    }
}

fn comment(author: &str, id: u64, body: String) -> RawComment {
    RawComment {
        id: BASE + id,
        author: author.into(),
        body,
    }
}

fn bot(id: u64, body: String) -> RawComment {
    comment("bot", id, body)
}

/// One issue as it is on GitHub.
#[derive(Clone)]
struct Issue {
    number: u64,
    open: bool,
    labels: Vec<String>,
    comments: Vec<RawComment>,
    origin: Option<Origin>,
    since_end: Option<crate::snapshot::SinceEnd>,
}

fn issue(number: u64, labels: &[&str], comments: Vec<RawComment>) -> Issue {
    Issue {
        number,
        open: true,
        labels: labels.iter().map(|l| l.to_string()).collect(),
        comments,
        origin: None,
        since_end: None,
    }
}

/// The repository as the tests see it.
#[derive(Clone, Default)]
struct Repository {
    issues: Vec<Issue>,
    reports: Vec<HostReport>,
    registry_issue: Option<u64>,
    duplicate_reports: Vec<u64>,
}

impl Repository {
    fn with(issues: Vec<Issue>, reports: Vec<HostReport>) -> Repository {
        Repository {
            issues,
            reports,
            ..Repository::default()
        }
    }

    fn snapshot(&self) -> Snapshot {
        let trust = Trust::new(["bot"]);
        let issues = self.issues.iter().map(|i| IssueSnapshot {
            number: i.number,
            title: format!("Issue {}", i.number),
            open: i.open,
            labels: i.labels.clone(),
            html_url: format!("https://github.com/o/r/issues/{}", i.number),
            ownership: Ownership::of(i.number, &i.comments, &trust),
            origin: i.origin.clone(),
            since_end: i.since_end.clone(),
        });
        let reports = self.reports.iter().enumerate().map(|(k, r)| ReportView {
            comment_id: BASE + 900 + k as u64,
            author: "bot".into(),
            updated_at: now(),
            report: r.clone(),
        });
        Snapshot {
            issues: issues.collect(),
            reports: reports.collect(),
            registry_issue: self.registry_issue,
            duplicate_reports: self.duplicate_reports.clone(),
            ..Snapshot::default()
        }
    }

    fn plan(&self) -> Plan {
        self.plan_with(&Config::default())
    }

    fn plan_with(&self, config: &Config) -> Plan {
        plan(&self.snapshot(), config, &input())
    }

    /// Does what `apply` would: posts end records as new comments, sets labels one at a time.
    fn apply(&mut self, plan: &Plan) {
        for action in &plan.actions {
            let n = action.issue();
            let i = self.issues.iter_mut().find(|i| i.number == n).unwrap();
            match action {
                Action::PostEnd { end, .. } => {
                    let id = i.comments.iter().map(|c| c.id).max().unwrap_or(BASE) + 1;
                    i.comments.push(RawComment {
                        id,
                        author: "bot".into(),
                        body: end.to_comment(),
                    });
                }
                Action::AddLabel { label, .. } => i.labels.push(label.clone()),
                Action::RemoveLabel { label, .. } => i.labels.retain(|l| l != label),
                Action::DeleteComment { comment_id, .. } => {
                    i.comments.retain(|c| c.id != *comment_id)
                }
                Action::React { .. } | Action::PostCancel { .. } | Action::PostReply { .. } => {}
            }
        }
    }
}

fn report(verdicts: Vec<ClaimVerdict>) -> HostReport {
    HostReport {
        host: HOST.into(),
        machine_id: MACHINE.into(),
        boot_id: "b-2".into(),
        claims: verdicts,
        capacity: None,
        slots_used: None,
        booted_at: None,
        refresh_secs: None,
        written_at: None,
    }
}

fn verdict(c: &ClaimRecord, verdict: Verdict) -> ClaimVerdict {
    ClaimVerdict {
        claim_id: c.claim_id.clone(),
        issue: c.issue,
        verdict,
        kept: None,
        run: Default::default(),
        finished: None,
        watched: false,
    }
}

fn dead() -> Verdict {
    Verdict::Dead {
        reason: DeathReason::PidGone,
        evidence: "PID 4242 is gone".into(),
    }
}

/// The end record this pass writes for a Claim `build-01` proved dead with `dead()`.
fn recovered(c: &ClaimRecord, comment_id: u64, label: &str) -> EndRecord {
    EndRecord {
        claim_id: c.claim_id.clone(),
        issue: c.issue,
        outcome: Outcome::Recovered,
        actor: ACTOR.into(),
        reason: format!(
            "host build-01 reports the Run of claim {} dead (PID gone): PID 4242 is gone",
            c.claim_id
        ),
        exit_code: None,
        signal: None,
        cause: Some(crate::protocol::record::Cause::Unknown),
        claim_comment_id: Some(comment_id),
        events_seen: None,
        labels_after: Some(vec![label.into()]),
        kept: None,
        pull_request: None,
        continuation: None,
        // A hand-off names the session and the command that resumes it from the worktree
        // (sample claims use claude in /work/wt-issue-42).
        resume: (label == HUMAN).then(|| "cd /work/wt-issue-42 && claude --resume sess-77".into()),
        session: (label == HUMAN).then(|| "sess-77".to_string()),
        run: Default::default(),
        failures: Vec::new(),
        ended_at: now(),
    }
}

fn post(end: EndRecord) -> Action {
    Action::PostEnd {
        issue: end.issue,
        end: Box::new(end),
    }
}

fn add(issue: u64, label: &str) -> Action {
    Action::AddLabel {
        issue,
        label: label.into(),
    }
}

fn remove(issue: u64, label: &str) -> Action {
    Action::RemoveLabel {
        issue,
        label: label.into(),
    }
}

fn healths(plan: &Plan) -> Vec<(u64, Option<&str>, &Health)> {
    let f = plan.findings.iter();
    f.map(|f| (f.issue, f.claim_id.as_deref(), &f.health))
        .collect()
}

#[test]
fn dead_owner_with_nothing_started_is_ended_and_requeued() {
    // given a Claim that removed ready-for-agent and never reported a stage, proved dead
    let c = fresh_claim(7, "c-a");
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![report(vec![verdict(&c, dead())])],
    );
    // when the pass plans
    let plan = world.plan();
    // then the Claim is ended as recovered and the issue goes back to the queue
    assert_eq!(
        plan.actions,
        [
            post(recovered(&c, BASE + 1, READY)),
            add(7, READY),
            remove(7, IN_PROGRESS)
        ]
    );
    assert_eq!(
        plan.findings,
        [Finding {
            issue: 7,
            claim_id: Some("c-a".into()),
            host: Some(HOST.into()),
            health: Health::Recovered,
            note: "host build-01 reports the Run of claim c-a dead (PID gone): PID 4242 is gone; \
                   the issue goes to ready-for-agent"
                .into(),
        }]
    );
}

/// Issue 7 claimed by `c-a`, a Run that started work and ended by itself with `outcome` and
/// status `code`, its process gone, whose host reports the outcome it kept because GitHub
/// refused its end record.
fn finished_run(outcome: Outcome, code: i32) -> Repository {
    let c = claim(7, "c-a");
    let finished = crate::protocol::record::RunEnding {
        outcome,
        reason: format!("the Run's command exited with status {code}"),
        exit_code: Some(code),
        signal: None,
        cause: None,
        kept: None,
        started: true,
    };
    let v = ClaimVerdict {
        finished: Some(Box::new(finished)),
        ..verdict(&c, dead())
    };
    Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![report(vec![v])],
    )
}

#[test]
fn a_run_that_ended_by_itself_but_could_not_write_its_end_is_ended_with_its_own_outcome() {
    for (outcome, code, labels) in [
        (Outcome::Done, 0, vec![]),
        (Outcome::Failed, 3, vec![HUMAN.to_string()]),
    ] {
        // given a Run that ended by itself (a stage of its own reported), whose host reports the
        // outcome it kept because GitHub refused its end record, and its process gone
        let world = finished_run(outcome, code);
        // when the pass plans
        let plan = world.plan();
        // then the Claim ends with the Run's own outcome and status, labelled as the Run would
        let end = end_of_plan(&plan);
        assert_eq!((end.outcome, end.exit_code), (outcome, Some(code)));
        assert_eq!(end.labels_after.as_ref(), Some(&labels));
        assert!(end.reason.contains("ended by itself"), "{}", end.reason);
        let mut expected: Vec<Action> = labels.iter().map(|l| add(7, l)).collect();
        expected.push(remove(7, IN_PROGRESS));
        assert_eq!(plan.actions[1..], expected);
        assert_eq!(healths(&plan), [(7, Some("c-a"), &Health::Finished)]);
    }
}

#[test]
fn a_pass_ending_a_finished_run_for_it_hands_off_as_the_run_itself_would() {
    // given a Run that failed by itself after starting work, whose end GitHub refused
    let world = finished_run(Outcome::Failed, 3);
    // when the pass ends it for the Run
    let plan = world.plan();
    // then its end names the agent session and how to resume it, as the Run's own end does
    let end = end_of_plan(&plan);
    assert_eq!(end.labels_after, Some(vec![HUMAN.to_string()]));
    assert_eq!(end.session.as_deref(), Some("sess-77"));
    assert_eq!(
        end.resume.as_deref(),
        Some("cd /work/wt-issue-42 && claude --resume sess-77")
    );
}

#[test]
fn dead_owner_that_started_work_is_handed_to_people() {
    // given a dead Run that had reported a stage of its own
    let c = claim(7, "c-a");
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![report(vec![verdict(&c, dead())])],
    );
    // when the pass plans
    let plan = world.plan();
    // then the issue goes to people
    assert_eq!(
        plan.actions,
        [
            post(recovered(&c, BASE + 1, HUMAN)),
            add(7, HUMAN),
            remove(7, IN_PROGRESS)
        ]
    );
    assert_eq!(healths(&plan), [(7, Some("c-a"), &Health::Recovered)]);
}

#[test]
fn dead_owner_whose_claim_did_not_remove_ready_goes_to_people() {
    // given a dead Run that started nothing, but whose Claim did not remove ready-for-agent
    // (the issue still carries it)
    let c = ClaimRecord {
        removed_ready: false,
        ..fresh_claim(7, "c-a")
    };
    let world = Repository::with(
        vec![issue(
            7,
            &[READY, IN_PROGRESS],
            vec![bot(1, c.to_comment())],
        )],
        vec![report(vec![verdict(&c, dead())])],
    );
    // when the pass plans
    let plan = world.plan();
    // then the issue goes to people, and only in-progress is removed
    assert_eq!(
        plan.actions,
        [
            post(recovered(&c, BASE + 1, HUMAN)),
            add(7, HUMAN),
            remove(7, IN_PROGRESS)
        ]
    );
}

#[test]
fn alive_owner_is_left_alone() {
    // given a Claim its host reports alive
    let c = claim(7, "c-a");
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![report(vec![verdict(&c, Verdict::Alive)])],
    );
    // when the pass plans
    let plan = world.plan();
    // then nothing is written, and the Claim is shown alive
    assert_eq!(plan.actions, []);
    assert_eq!(
        plan.findings,
        [Finding {
            issue: 7,
            claim_id: Some("c-a".into()),
            host: Some(HOST.into()),
            health: Health::Alive,
            note: "host build-01 reports claim c-a alive".into(),
        }]
    );
}

#[test]
fn writers_alive_is_left_alone_and_flagged() {
    // given a Claim whose Run died but whose harness child still writes
    let c = claim(7, "c-a");
    let writers = Verdict::WritersAlive {
        pids: vec![4250, 4251],
        evidence: "2 processes of session 4243 run".into(),
    };
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![report(vec![verdict(&c, writers)])],
    );
    // when the pass plans
    let plan = world.plan();
    // then nothing is written and the writers are named
    assert_eq!(plan.actions, []);
    let health = Health::WritersAlive {
        pids: vec![4250, 4251],
    };
    assert_eq!(healths(&plan), [(7, Some("c-a"), &health)]);
    assert_eq!(
        plan.findings[0].note,
        "host build-01 reports the Run of claim c-a gone but its writers alive: 2 processes of \
         session 4243 run"
    );
}

#[test]
fn host_that_never_reported_leaves_claim_awaiting_host() {
    // given a Claim taken a quarter of a century ago on a host that never reported
    let c = ClaimRecord {
        claimed_at: Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 0).unwrap(),
        ..fresh_claim(7, "c-a")
    };
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![],
    );
    // when the pass plans
    let plan = world.plan();
    // then age is no evidence: nothing is written, the Claim awaits its host
    assert_eq!(plan.actions, []);
    assert_eq!(
        plan.findings,
        [Finding {
            issue: 7,
            claim_id: Some("c-a".into()),
            host: Some(HOST.into()),
            health: Health::AwaitingHost,
            note: "host build-01 has not reported on claim c-a since it was taken".into(),
        }]
    );
}

#[test]
fn a_claim_taken_since_its_hosts_last_report_is_starting_for_one_refresh_interval() {
    // given, on a host that has not reported since, a Claim taken 3 seconds ago and one taken
    // two hours ago (the default refresh interval is one hour)
    let young = ClaimRecord {
        claimed_at: now() - chrono::TimeDelta::seconds(3),
        ..fresh_claim(7, "c-young")
    };
    let old = ClaimRecord {
        claimed_at: now() - chrono::TimeDelta::hours(2),
        ..fresh_claim(8, "c-old")
    };
    let world = Repository::with(
        vec![
            issue(7, &[IN_PROGRESS], vec![bot(1, young.to_comment())]),
            issue(8, &[IN_PROGRESS], vec![bot(2, old.to_comment())]),
        ],
        vec![],
    );
    // when the pass plans
    let plan = world.plan();
    // then the young one is starting, which needs no person; the old one awaits its host;
    // neither is written to
    assert_eq!(plan.actions, []);
    assert_eq!(
        healths(&plan),
        [
            (7, Some("c-young"), &Health::Starting),
            (8, Some("c-old"), &Health::AwaitingHost)
        ]
    );
}

#[test]
fn report_without_this_claim_is_awaiting_host() {
    // given the host's report, which proves other Claims dead but not this one: one with another
    // claim id, and one with this claim id on another issue
    let c = claim(7, "c-a");
    let other = claim(7, "c-other");
    let elsewhere = claim(8, "c-a");
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![report(vec![
            verdict(&elsewhere, dead()),
            verdict(&other, dead()),
        ])],
    );
    // when the pass plans
    let plan = world.plan();
    // then the Claim awaits its host
    assert_eq!(plan.actions, []);
    assert_eq!(healths(&plan), [(7, Some("c-a"), &Health::AwaitingHost)]);
}

#[test]
fn report_from_another_machine_with_same_host_name_is_not_evidence() {
    // given a report under the Claim's host name from another machine, saying the Claim is dead
    let c = claim(7, "c-a");
    let impostor = HostReport {
        machine_id: "9f9f9f9f".into(),
        ..report(vec![verdict(&c, dead())])
    };
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![impostor],
    );
    // when the pass plans
    let plan = world.plan();
    // then nothing is ended and the mismatch is shown
    assert_eq!(plan.actions, []);
    assert_eq!(healths(&plan), [(7, Some("c-a"), &Health::HostMismatch)]);
    assert_eq!(
        plan.findings[0].note,
        "the report of host build-01 comes from machine 9f9f9f9f, but claim c-a was taken on \
         machine 4c4c4544003a: not evidence"
    );
}

#[test]
fn report_of_the_claims_machine_counts_when_another_machine_shares_the_host_name() {
    // given two machines reporting under one host name, the claim's own machine saying it is dead
    let c = claim(7, "c-a");
    let other = HostReport {
        machine_id: "9f9f9f9f".into(),
        ..report(vec![])
    };
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        vec![other, report(vec![verdict(&c, dead())])],
    );
    // when the pass plans
    let plan = world.plan();
    // then the claim's own machine is the evidence: it is recovered
    assert_eq!(healths(&plan), [(7, Some("c-a"), &Health::Recovered)]);
}

#[test]
fn superseded_later_claim_is_ended_without_labels() {
    // given an owner its host reports alive and a later active claim on the same issue
    let (a, b) = (claim(7, "c-a"), claim(7, "c-b"));
    let world = Repository::with(
        vec![issue(
            7,
            &[IN_PROGRESS],
            vec![bot(1, a.to_comment()), bot(2, b.to_comment())],
        )],
        vec![report(vec![verdict(&a, Verdict::Alive)])],
    );
    // when the pass plans
    let plan = world.plan();
    // then the later claim is ended as superseded, stating no labels, and no label moves
    let reason = format!(
        "claim c-b (comment {}) was taken while claim c-a (comment {}) owned issue #7: superseded",
        BASE + 2,
        BASE + 1
    );
    let end = EndRecord {
        claim_id: "c-b".into(),
        issue: 7,
        outcome: Outcome::Superseded,
        actor: ACTOR.into(),
        reason: reason.clone(),
        exit_code: None,
        signal: None,
        cause: None,
        claim_comment_id: Some(BASE + 2),
        events_seen: None,
        labels_after: None,
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        run: Default::default(),
        failures: Vec::new(),
        ended_at: now(),
    };
    assert_eq!(plan.actions, [post(end)]);
    assert_eq!(
        healths(&plan),
        [
            (7, Some("c-a"), &Health::Alive),
            (7, Some("c-b"), &Health::Superseded)
        ]
    );
    assert_eq!(plan.findings[1].note, reason);
}

#[test]
fn in_progress_without_claim_is_flagged_unowned() {
    // given an issue labelled in-progress by hand, and one whose only end record (a withdrawn
    // claim's) states no labels
    let lost = claim(8, "c-lost");
    let withdrawn = end_of(&lost, Outcome::Withdrawn, None);
    let world = Repository::with(
        vec![
            issue(7, &[IN_PROGRESS], vec![]),
            issue(
                8,
                &[IN_PROGRESS],
                vec![bot(1, lost.to_comment()), bot(2, withdrawn.to_comment())],
            ),
            issue(9, &[READY], vec![]),
        ],
        vec![],
    );
    // when the pass plans
    let plan = world.plan();
    // then both are left for people and flagged; the issue without in-progress is not mentioned
    assert_eq!(plan.actions, []);
    assert_eq!(
        healths(&plan),
        [(7, None, &Health::Unowned), (8, None, &Health::Unowned)]
    );
    assert_eq!(
        plan.findings[0].note,
        "issue #7 carries in-progress but no active claim and no end record stating its labels: \
         left for people"
    );
}

#[test]
fn closed_issue_with_active_claim_is_swept() {
    // given a closed issue with an owner (host silent) and a superseded claim
    let (a, b) = (claim(7, "c-a"), claim(7, "c-b"));
    let mut closed = issue(
        7,
        &["bug", IN_PROGRESS],
        vec![bot(1, a.to_comment()), bot(2, b.to_comment())],
    );
    closed.open = false;
    let world = Repository::with(vec![closed], vec![]);
    // when the pass plans
    let plan = world.plan();
    // then the owner is swept with no labels after, the later claim superseded, in-progress off
    let swept = EndRecord {
        claim_id: "c-a".into(),
        issue: 7,
        outcome: Outcome::Swept,
        actor: ACTOR.into(),
        reason: "issue #7 was closed while claim c-a was still active: swept".into(),
        exit_code: None,
        signal: None,
        cause: None,
        claim_comment_id: Some(BASE + 1),
        events_seen: None,
        labels_after: Some(vec![]),
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        run: Default::default(),
        failures: Vec::new(),
        ended_at: now(),
    };
    let superseded = EndRecord {
        claim_id: "c-b".into(),
        outcome: Outcome::Superseded,
        reason: format!(
            "claim c-b (comment {}) was taken while claim c-a (comment {}) owned issue #7: \
             superseded",
            BASE + 2,
            BASE + 1
        ),
        claim_comment_id: Some(BASE + 2),
        events_seen: None,
        labels_after: None,
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        ..swept.clone()
    };
    assert_eq!(
        plan.actions,
        [post(swept), post(superseded), remove(7, IN_PROGRESS)]
    );
    assert_eq!(
        healths(&plan),
        [
            (7, Some("c-a"), &Health::Swept),
            (7, Some("c-b"), &Health::Superseded)
        ]
    );
}

#[test]
fn end_record_with_unapplied_labels_is_finished() {
    // given a recovered end record whose pass was killed before it set the labels
    let c = fresh_claim(7, "c-a");
    let end = end_of(&c, Outcome::Recovered, Some(&[READY]));
    let world = Repository::with(
        vec![issue(
            7,
            &[IN_PROGRESS],
            vec![bot(1, c.to_comment()), bot(2, end.to_comment())],
        )],
        vec![],
    );
    // when the pass plans
    let plan = world.plan();
    // then the labels the end record states are finished
    assert_eq!(plan.actions, [add(7, READY), remove(7, IN_PROGRESS)]);
    assert_eq!(
        plan.findings,
        [Finding {
            issue: 7,
            claim_id: Some("c-a".into()),
            host: Some(HOST.into()),
            health: Health::LabelsFinished,
            note: "claim c-a ended recovered but its labels were not all applied: now \
                   ready-for-agent, without in-progress"
                .into(),
        }]
    );
}

#[test]
fn labels_a_person_changed_after_the_end_record_are_left_as_they_set_them() {
    // given an end record stating ready-for-human whose labels were not applied, and a person
    // who since removed ready-for-human and put in-progress back (the issue's events say so)
    let c = claim(7, "c-a");
    let end = end_of(&c, Outcome::Failed, Some(&[HUMAN]));
    let mut i = issue(
        7,
        &[IN_PROGRESS],
        vec![bot(1, c.to_comment()), bot(2, end.to_comment())],
    );
    let change = |label: &str, added| crate::snapshot::LabelChange {
        label: label.into(),
        added,
        by: "alice".into(),
    };
    i.since_end = people(vec![change(HUMAN, false), change(IN_PROGRESS, true)]);
    let mut world = Repository::with(vec![i], vec![]);
    // when the pass plans
    let plan = world.plan();
    // then it writes nothing and says the labels are a person's
    assert!(plan.actions.is_empty(), "{plan:?}");
    assert_eq!(healths(&plan), [(7, Some("c-a"), &Health::PeoplesLabels)]);
    // given only the removal of ready-for-human was a person's: in-progress still comes off
    world.issues[0].since_end = people(vec![change(HUMAN, false)]);
    assert_eq!(world.plan().actions, [remove(7, IN_PROGRESS)]);
    // given no person changed anything since: the end record's labels are finished
    world.issues[0].since_end = people(vec![]);
    assert_eq!(
        world.plan().actions,
        [add(7, HUMAN), remove(7, IN_PROGRESS)]
    );
}

#[test]
fn end_without_stated_labels_does_not_hide_an_unfinished_one() {
    // given an owner's unfinished recovered end, then a superseded claim's end stating nothing
    let (a, b) = (claim(7, "c-a"), claim(7, "c-b"));
    let comments = vec![
        bot(1, a.to_comment()),
        bot(2, b.to_comment()),
        bot(
            3,
            end_of(&a, Outcome::Recovered, Some(&[HUMAN])).to_comment(),
        ),
        bot(4, end_of(&b, Outcome::Superseded, None).to_comment()),
    ];
    let world = Repository::with(vec![issue(7, &[IN_PROGRESS], comments)], vec![]);
    // when the pass plans
    let plan = world.plan();
    // then the owner's labels are finished
    assert_eq!(plan.actions, [add(7, HUMAN), remove(7, IN_PROGRESS)]);
    assert_eq!(healths(&plan), [(7, Some("c-a"), &Health::LabelsFinished)]);
}

#[test]
fn closed_issue_whose_sweep_was_cut_short_loses_in_progress() {
    // given a closed issue swept by a pass killed before it removed in-progress
    let c = claim(9, "c-s");
    let swept = end_of(&c, Outcome::Swept, Some(&[]));
    let mut closed = issue(
        9,
        &["bug", IN_PROGRESS],
        vec![bot(1, c.to_comment()), bot(2, swept.to_comment())],
    );
    closed.open = false;
    // and a closed issue carrying in-progress with no end record stating labels
    let mut unknown = issue(10, &[IN_PROGRESS], vec![]);
    unknown.open = false;
    let world = Repository::with(vec![closed, unknown], vec![]);
    // when the pass plans
    let plan = world.plan();
    // then the sweep is finished, and the other closed issue is not flagged
    assert_eq!(plan.actions, [remove(9, IN_PROGRESS)]);
    assert_eq!(healths(&plan), [(9, Some("c-s"), &Health::LabelsFinished)]);
}

#[test]
fn second_pass_after_recovery_plans_nothing() {
    // given a dead owner, a superseded claim and a closed issue with a claim, on silent hosts
    // except for the dead verdict
    let (a, b) = (claim(7, "c-a"), claim(7, "c-b"));
    let s = claim(9, "c-s");
    let mut closed = issue(9, &[IN_PROGRESS], vec![bot(1, s.to_comment())]);
    closed.open = false;
    let mut world = Repository::with(
        vec![
            issue(
                7,
                &[IN_PROGRESS],
                vec![bot(1, a.to_comment()), bot(2, b.to_comment())],
            ),
            closed,
        ],
        vec![report(vec![verdict(&a, dead())])],
    );
    // when a first pass is applied
    let first = world.plan();
    assert_eq!(first.actions.len(), 6, "{:?}", first.actions);
    world.apply(&first);
    // then a second pass writes nothing and flags nothing
    let second = world.plan();
    assert_eq!(second, Plan::default());
    assert_eq!(world.issues[0].labels, [HUMAN]);
    assert!(world.issues[1].labels.is_empty());
}

#[test]
fn duplicate_end_records_are_deleted_keeping_the_first() {
    // given a claim ended three times (a retried POST, a second ender)
    let c = claim(7, "c-a");
    let done = end_of(&c, Outcome::Done, Some(&[]));
    let comments = vec![
        bot(1, c.to_comment()),
        bot(2, done.to_comment()),
        bot(3, done.to_comment()),
        bot(
            4,
            end_of(&c, Outcome::Recovered, Some(&[HUMAN])).to_comment(),
        ),
    ];
    let world = Repository::with(vec![issue(7, &[], comments)], vec![]);
    // when the pass plans
    let plan = world.plan();
    // then the later two are deleted and the first stays
    let delete = |id: u64| Action::DeleteComment {
        issue: 7,
        comment_id: BASE + id,
        reason: format!(
            "a later end record for claim c-a; comment {} ended it first",
            BASE + 2
        ),
    };
    assert_eq!(plan.actions, [delete(3), delete(4)]);
    assert_eq!(plan.findings, []);
}

#[test]
fn duplicate_host_reports_are_deleted_from_the_registry_issue() {
    // given later copies of host reports on registry issue #1
    let mut world = Repository::with(vec![], vec![]);
    world.duplicate_reports = vec![BASE + 20, BASE + 10];
    world.registry_issue = Some(1);
    // when the pass plans
    let plan = world.plan();
    // then they are deleted, in comment order
    let delete = |id: u64| Action::DeleteComment {
        issue: 1,
        comment_id: id,
        reason: "a later copy of a host's report; the first one counts".into(),
    };
    assert_eq!(plan.actions, [delete(BASE + 10), delete(BASE + 20)]);
    // and without a registry issue nothing is deleted
    world.registry_issue = None;
    assert_eq!(world.plan().actions, []);
}

#[test]
fn untrusted_dead_verdict_claim_is_ignored() {
    // given a stranger's claim and end records on an in-progress issue, and a dead verdict
    // naming the stranger's claim
    let evil = claim(7, "c-evil");
    let evil_end = end_of(&evil, Outcome::Done, Some(&[]));
    let comments = vec![
        comment("mallory", 1, evil.to_comment()),
        comment("mallory", 2, evil_end.to_comment()),
        comment("mallory", 3, evil_end.to_comment()),
    ];
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], comments)],
        vec![report(vec![verdict(&evil, dead())])],
    );
    // when the pass plans
    let plan = world.plan();
    // then nothing is ended, relabelled or deleted: the issue is unowned as far as we know
    assert_eq!(plan.actions, []);
    assert_eq!(healths(&plan), [(7, None, &Health::Unowned)]);
}

#[test]
fn actions_are_ordered_end_first_then_labels() {
    // given, listed out of number order: a closed issue #9 with a claim; issue #7 with a dead
    // owner, a superseded claim and a duplicate end; and a duplicate report on registry #1
    let (a, b, old) = (claim(7, "c-a"), claim(7, "c-b"), claim(7, "c-old"));
    let old_end = end_of(&old, Outcome::Done, Some(&[]));
    let s = claim(9, "c-s");
    let mut closed = issue(9, &[IN_PROGRESS], vec![bot(1, s.to_comment())]);
    closed.open = false;
    let seven = vec![
        bot(1, old.to_comment()),
        bot(2, old_end.to_comment()),
        bot(3, old_end.to_comment()),
        bot(4, a.to_comment()),
        bot(5, b.to_comment()),
    ];
    let mut world = Repository::with(
        vec![closed, issue(7, &[IN_PROGRESS], seven)],
        vec![report(vec![verdict(&a, dead())])],
    );
    world.registry_issue = Some(1);
    world.duplicate_reports = vec![BASE + 99];
    // when the pass plans
    let plan = world.plan();
    // then issues come in number order; within one: ends, labels added, removed, deletions
    let shape: Vec<String> = plan.actions.iter().map(shape).collect();
    assert_eq!(
        shape,
        [
            "#1 delete 99",
            "#7 end c-a recovered",
            "#7 end c-b superseded",
            "#7 add ready-for-human",
            "#7 remove in-progress",
            "#7 delete 3",
            "#9 end c-s swept",
            "#9 remove in-progress",
        ]
    );
}

/// One line per action, for tests about order.
fn shape(a: &Action) -> String {
    match a {
        Action::PostEnd { issue, end } => format!("#{issue} end {} {}", end.claim_id, end.outcome),
        Action::AddLabel { issue, label } => format!("#{issue} add {label}"),
        Action::RemoveLabel { issue, label } => format!("#{issue} remove {label}"),
        Action::DeleteComment {
            issue, comment_id, ..
        } => format!("#{issue} delete {}", comment_id - BASE),
        Action::React {
            issue,
            comment_id,
            content,
        } => format!("#{issue} react {content} {}", comment_id - BASE),
        Action::PostCancel { issue, cancel } => format!(
            "#{issue} cancel {} {}{}",
            cancel.request_id,
            cancel.claim_id,
            if cancel.recover { " recover" } else { "" }
        ),
        Action::PostReply { issue, reply, .. } => format!(
            "#{issue} reply {} {}",
            reply.command_comment_id - BASE,
            serde_json::to_value(reply.answer)
                .unwrap()
                .as_str()
                .unwrap()
        ),
    }
}

#[test]
fn same_snapshot_gives_the_same_plan() {
    // given a world with every kind of decision in it
    let (a, b) = (claim(7, "c-a"), claim(8, "c-b"));
    let c = claim(8, "c-c");
    let world = Repository::with(
        vec![
            issue(
                8,
                &[IN_PROGRESS],
                vec![bot(3, b.to_comment()), bot(4, c.to_comment())],
            ),
            issue(7, &[IN_PROGRESS], vec![bot(1, a.to_comment())]),
            issue(6, &[IN_PROGRESS], vec![]),
        ],
        vec![report(vec![
            verdict(&a, dead()),
            verdict(&b, Verdict::Alive),
        ])],
    );
    // when it is planned twice, and once more with the issues listed the other way round
    let first = world.plan();
    let second = world.plan();
    let mut reversed = world.clone();
    reversed.issues.reverse();
    // then the plans are identical
    assert_eq!(first, second);
    assert_eq!(first, reversed.plan());
    assert_eq!(first.actions.len(), 4, "{:?}", first.actions);
}

// ---- Keeping and continuing work (issue 4) ----

fn kept(nothing_to_keep: bool, pushed: bool) -> crate::protocol::record::Salvage {
    crate::protocol::record::Salvage {
        worktree: "/work/wt/issue-7".into(),
        branch: "issue-7".into(),
        head: Some("abc123".into()),
        salvage_commit: (!nothing_to_keep).then(|| "abc123".into()),
        commits: if nothing_to_keep {
            vec![]
        } else {
            vec!["abc123".into()]
        },
        pushed,
        dirty_files: if nothing_to_keep { 0 } else { 2 },
        unpushed_commits: if pushed || nothing_to_keep { 0 } else { 1 },
        worktree_missing: false,
        nothing_to_keep,
        error: (!pushed && !nothing_to_keep).then(|| "origin unreachable".into()),
        moved_to: None,
    }
}

fn dead_kept(c: &ClaimRecord, k: Option<crate::protocol::record::Salvage>) -> ClaimVerdict {
    ClaimVerdict {
        kept: k,
        ..verdict(c, dead())
    }
}

fn origin(head: Option<&str>, pulls: &[(u64, &str)]) -> Option<Origin> {
    Some(Origin {
        branch: "issue-7".into(),
        head: head.map(str::to_string),
        pulls: pulls
            .iter()
            .map(|(n, state)| Pull {
                number: *n,
                state: state.to_string(),
                merged: false,
                html_url: format!("https://github.com/o/r/pull/{n}"),
            })
            .collect(),
    })
}

fn end_of_plan(plan: &Plan) -> &EndRecord {
    match &plan.actions[0] {
        Action::PostEnd { end, .. } => end,
        other => panic!("first action is not an end record: {other:?}"),
    }
}

#[test]
fn dead_run_with_a_pull_request_is_handed_to_people_naming_it_and_the_resume_command() {
    // given a dead Run whose branch and a closed pull request are on origin
    let c = fresh_claim(7, "c-a");
    let mut i = issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())]);
    i.origin = origin(Some("abc123"), &[(9, "closed")]);
    let world = Repository::with(
        vec![i],
        vec![report(vec![dead_kept(&c, Some(kept(true, true)))])],
    );
    // when the pass plans
    let plan = world.plan();
    // then it goes to people, and the end record names the PR and how to resume
    let end = end_of_plan(&plan);
    assert_eq!(end.labels_after, Some(vec![HUMAN.to_string()]));
    assert_eq!(end.pull_request, Some(9));
    assert_eq!(
        end.resume.as_deref(),
        Some("cd /work/wt-issue-42 && claude --resume sess-77")
    );
    assert_eq!(plan.actions[1], add(7, HUMAN));
}

#[test]
fn dead_run_whose_work_could_not_be_pushed_is_not_requeued() {
    // given a dead Run with nothing on origin, but work its host kept and could not push
    let c = fresh_claim(7, "c-a");
    let mut i = issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())]);
    i.origin = origin(None, &[]);
    let k = kept(false, false);
    let world = Repository::with(vec![i], vec![report(vec![dead_kept(&c, Some(k.clone()))])]);
    // when the pass plans
    let plan = world.plan();
    // then it goes to people, and the end record says where the work is
    assert_eq!(end_of_plan(&plan).kept, Some(k));
    assert_eq!(
        end_of_plan(&plan).labels_after,
        Some(vec![HUMAN.to_string()])
    );
}

#[test]
fn dead_run_that_kept_nothing_is_requeued_even_after_reporting_a_stage() {
    // given a dead Run that reported a stage but left nothing on origin or on its host
    let c = claim(7, "c-a");
    let mut i = issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())]);
    i.origin = origin(None, &[]);
    let world = Repository::with(
        vec![i],
        vec![report(vec![dead_kept(&c, Some(kept(true, true)))])],
    );
    // when the pass plans
    let plan = world.plan();
    // then the issue is Ready again: the salvage, not the stage, says whether work exists
    assert_eq!(
        end_of_plan(&plan).labels_after,
        Some(vec![READY.to_string()])
    );
    assert_eq!(plan.actions[1], add(7, READY));
}

#[test]
fn continue_policy_requeues_as_a_continuation_until_the_limit() {
    let config = Config {
        recovery: crate::protocol::config::Recovery {
            on_dead: crate::protocol::config::OnDead::Continue,
            max_continuations: 2,
            max_failures: 10,
        },
        ..Config::default()
    };
    // given an issue continued `earlier` times whose latest Run died after pushing work
    for earlier in 0..3u64 {
        let mut comments = Vec::new();
        for k in 0..earlier {
            let old = claim(7, &format!("c-old{k}"));
            comments.push(bot(10 * k + 1, old.to_comment()));
            let end = end_of(&old, Outcome::Continued, Some(&[READY]));
            comments.push(bot(10 * k + 2, end.to_comment()));
        }
        let c = claim(7, "c-now");
        comments.push(bot(100, c.to_comment()));
        let mut i = issue(7, &[IN_PROGRESS], comments);
        i.origin = origin(Some("abc123"), &[]);
        let world = Repository::with(vec![i], vec![report(vec![verdict(&c, dead())])]);
        // when the pass plans
        let plan = plan(&world.snapshot(), &config, &input());
        let end = end_of_plan(&plan);
        // then the first two deaths are continued with the session to resume, the third is not
        if earlier < 2 {
            assert_eq!(end.outcome, Outcome::Continued, "after {earlier}");
            let cont = end.continuation.as_ref().expect("continuation");
            assert_eq!(cont.number, earlier as u32 + 1);
            assert_eq!(cont.agent_session.as_deref(), Some("sess-77"));
            assert_eq!(end.labels_after, Some(vec![READY.to_string()]));
        } else {
            assert_eq!(end.outcome, Outcome::Recovered, "after {earlier}");
            assert_eq!(end.continuation, None);
            assert_eq!(end.labels_after, Some(vec![HUMAN.to_string()]));
        }
    }
}

mod adopted;
mod answers;
mod failures;
mod hand_back;

#[test]
fn an_ending_whose_writer_has_not_read_the_labels_writes_its_end_then_every_label_it_lists() {
    // given a Run's own end, which reads the comments but not the labels: one that lists the
    // ready label, one that keeps `in-progress` (a thirdshift-style failed run), one that never
    // owned the labels
    let labels = Config::default().labels;
    let c = claim(5, "c-0000000000000005");
    let requeued = end_of(&c, Outcome::Failed, Some(&["ready-for-agent"]));
    let kept = end_of(&c, Outcome::Failed, Some(&["agent-failed", "in-progress"]));
    let superseded = end_of(&c, Outcome::Superseded, None);
    let unread = LabelsNow::Unread { issue: 5 };
    // when each is turned into its writes
    let writes = |end: &EndRecord| end_actions(&labels, end.clone(), unread);
    // then the end record comes first, every listed label is added and `in-progress` comes off
    // unless listed; an end stating no labels writes only itself
    assert_eq!(
        writes(&requeued),
        vec![
            post(requeued.clone()),
            add(5, "ready-for-agent"),
            remove(5, "in-progress")
        ]
    );
    assert_eq!(
        writes(&kept),
        vec![
            post(kept.clone()),
            add(5, "agent-failed"),
            add(5, "in-progress")
        ]
    );
    assert_eq!(writes(&superseded), vec![post(superseded.clone())]);
}
