//! Table tests of `/thirdshift` commands in the plan: permissions, each command's decision from
//! the same evidence a pass uses, and that a command and a pass never decide differently. No HTTP.

use super::*;
use crate::protocol::command::{parse, Pending};
use crate::protocol::config::Role;
use crate::snapshot::CommandView;
use crate::text::ToComment;

/// A command comment `id` by `author` (of `role`) on issue `n`.
fn cmd(n: u64, id: u64, author: &str, role: Role, body: &str) -> CommandView {
    CommandView {
        pending: Pending {
            issue: n,
            comment_id: BASE + id,
            author: author.into(),
            html_url: format!(
                "https://github.com/o/r/issues/{n}#issuecomment-{}",
                BASE + id
            ),
            parsed: parse(body),
            edited: false,
            refused: false,
        },
        role,
    }
}

fn plan_with(world: &Repository, commands: Vec<CommandView>) -> Plan {
    let mut snapshot = world.snapshot();
    snapshot.commands = commands;
    plan(&snapshot, &Config::default(), &input())
}

fn shapes(p: &Plan) -> Vec<String> {
    p.actions.iter().map(shape).collect()
}

fn ends(p: &Plan) -> Vec<&EndRecord> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::PostEnd { end, .. } => Some(end.as_ref()),
            _ => None,
        })
        .collect()
}

/// Issue 7 claimed by `c-a` (a Run that started work), with `verdicts` from its host.
fn claimed(verdicts: Option<Verdict>) -> (Repository, ClaimRecord) {
    let c = claim(7, "c-a");
    let reports = verdicts.map(|v| vec![report(vec![verdict(&c, v)])]);
    let world = Repository::with(
        vec![issue(7, &[IN_PROGRESS], vec![bot(1, c.to_comment())])],
        reports.unwrap_or_default(),
    );
    (world, c)
}

#[test]
fn force_from_a_reader_is_refused_and_changes_nothing() {
    // given a Claim whose host never reported, and a reader asking to force it
    let (world, _) = claimed(None);
    let p = plan_with(
        &world,
        vec![cmd(
            7,
            5,
            "mallory",
            Role::Read,
            "/thirdshift recover --force",
        )],
    );
    // then the only writes are the acknowledgement, one refusal and its reaction
    assert_eq!(
        shapes(&p),
        [
            "#7 react eyes 5",
            "#7 reply 5 not-permitted",
            "#7 react -1 5"
        ]
    );
}

#[test]
fn force_from_a_writer_needs_maintain_by_default() {
    let (world, _) = claimed(None);
    let p = plan_with(
        &world,
        vec![cmd(7, 5, "bob", Role::Write, "/thirdshift recover --force")],
    );
    assert!(ends(&p).is_empty(), "{:?}", shapes(&p));
    assert!(shapes(&p).contains(&"#7 reply 5 not-permitted".to_string()));
}

#[test]
fn force_from_a_maintainer_ends_the_silent_claim_in_their_name() {
    let (world, c) = claimed(None);
    let p = plan_with(
        &world,
        vec![cmd(
            7,
            5,
            "alice",
            Role::Maintain,
            "/thirdshift recover --force",
        )],
    );
    // then the Claim ends recovered, alice named as the actor, work to people, then the reply
    assert_eq!(
        shapes(&p),
        [
            "#7 react eyes 5",
            "#7 end c-a recovered",
            &format!("#7 add {HUMAN}"),
            &format!("#7 remove {IN_PROGRESS}"),
            "#7 reply 5 forced",
            "#7 react +1 5",
        ]
    );
    let end = ends(&p)[0];
    assert_eq!(
        (end.actor.as_str(), end.claim_id.as_str()),
        ("alice", c.claim_id.as_str())
    );
    assert!(end.reason.contains("@alice forced"), "{}", end.reason);
}

#[test]
fn recover_of_a_live_run_is_refused_with_the_evidence_and_kill_asks_its_host() {
    for live in [
        Verdict::Alive,
        Verdict::WritersAlive {
            pids: vec![9],
            evidence: "pid 9 still runs".into(),
        },
    ] {
        let (world, _) = claimed(Some(live));
        // plain recover: refused, the reply carries the host's verdict
        let p = plan_with(
            &world,
            vec![cmd(7, 5, "bob", Role::Write, "/thirdshift recover")],
        );
        assert_eq!(
            shapes(&p),
            ["#7 react eyes 5", "#7 reply 5 refused", "#7 react -1 5"]
        );
        let Action::PostReply { body, .. } = &p.actions[1] else {
            panic!()
        };
        assert!(body.contains("host build-01 reports"), "{body}");
        // with --kill: a cancel request that recovers, keyed by the command comment
        let p = plan_with(
            &world,
            vec![cmd(7, 5, "bob", Role::Write, "/thirdshift recover --kill")],
        );
        assert_eq!(
            shapes(&p),
            [
                "#7 react eyes 5",
                &format!("#7 cancel cx-cmd-{} c-a recover", BASE + 5),
                "#7 reply 5 kill-requested",
                "#7 react +1 5",
            ]
        );
    }
}

#[test]
fn recover_of_a_dead_run_decides_exactly_as_a_pass() {
    // given a dead owner
    let (world, _) = claimed(Some(dead()));
    let pass = world.plan();
    // when a writer asks to recover it, twice (two comments) in the same pass
    let p = plan_with(
        &world,
        vec![
            cmd(7, 5, "bob", Role::Write, "/thirdshift recover"),
            cmd(7, 6, "alice", Role::Admin, "/thirdshift recover"),
        ],
    );
    // then the Claim is ended once, with the very end record a pass writes
    assert_eq!(ends(&p), ends(&pass));
    assert_eq!(p.findings, pass.findings);
    let s = shapes(&p);
    assert!(s.contains(&"#7 reply 5 recovered".to_string()), "{s:?}");
    assert!(
        s.contains(&"#7 reply 6 already-requested".to_string()),
        "{s:?}"
    );
}

#[test]
fn recover_continue_requeues_a_dead_run_as_a_continuation() {
    let (world, _) = claimed(Some(dead()));
    let p = plan_with(
        &world,
        vec![cmd(
            7,
            5,
            "bob",
            Role::Write,
            "/thirdshift recover --continue",
        )],
    );
    let end = ends(&p)[0];
    assert_eq!(end.outcome, Outcome::Continued);
    assert_eq!(end.continuation.as_ref().map(|c| c.number), Some(1));
    assert!(shapes(&p).contains(&format!("#7 add {READY}")));
    assert!(shapes(&p).contains(&"#7 reply 5 continued".to_string()));
}

#[test]
fn cancel_posts_one_request_and_a_pending_one_is_not_repeated() {
    let (world, c) = claimed(Some(Verdict::Alive));
    let p = plan_with(
        &world,
        vec![cmd(7, 5, "bob", Role::Write, "/thirdshift cancel")],
    );
    assert_eq!(
        shapes(&p),
        [
            "#7 react eyes 5",
            &format!("#7 cancel cx-cmd-{} c-a", BASE + 5),
            "#7 reply 5 cancel-requested",
            "#7 react +1 5",
        ]
    );
    // given the request posted, a second cancel only answers
    let Action::PostCancel { cancel, .. } = &p.actions[1] else {
        panic!()
    };
    let mut world = world.clone();
    world.issues[0].comments.push(bot(6, cancel.to_comment()));
    let p = plan_with(
        &world,
        vec![cmd(7, 8, "bob", Role::Write, "/thirdshift cancel")],
    );
    assert_eq!(
        shapes(&p),
        [
            "#7 react eyes 8",
            "#7 reply 8 already-requested",
            "#7 react +1 8"
        ]
    );
    assert_eq!(cancel.claim_id, c.claim_id);
}

#[test]
fn status_help_and_mistakes_only_answer() {
    let (world, _) = claimed(Some(Verdict::Alive));
    for (body, answer) in [
        ("/thirdshift status", "answered +1"),
        ("/thirdshift help", "answered +1"),
        ("/thirdshift recovr", "invalid -1"),
    ] {
        let p = plan_with(&world, vec![cmd(7, 5, "bob", Role::Write, body)]);
        let (word, reaction) = answer.split_once(' ').unwrap();
        assert_eq!(
            shapes(&p),
            [
                "#7 react eyes 5".to_string(),
                format!("#7 reply 5 {word}"),
                format!("#7 react {reaction} 5"),
            ],
            "{body}"
        );
    }
}

#[test]
fn recover_with_no_active_claim_answers_how_the_last_one_ended() {
    let c = claim(7, "c-a");
    let world = Repository::with(
        vec![issue(
            7,
            &[READY],
            vec![
                bot(1, c.to_comment()),
                bot(2, end_of(&c, Outcome::Done, Some(&[])).to_comment()),
            ],
        )],
        vec![],
    );
    let p = plan_with(
        &world,
        vec![cmd(7, 5, "bob", Role::Write, "/thirdshift recover")],
    );
    assert_eq!(
        shapes(&p),
        [
            "#7 react eyes 5",
            "#7 reply 5 nothing-to-do",
            "#7 react -1 5"
        ]
    );
}

#[test]
fn a_strangers_commands_get_one_reply_an_hour_and_then_a_reaction_each() {
    // given three commands by a reader on issue 7, the last one already refused by a reaction,
    // and one by a writer
    let (world, _) = claimed(None);
    let mut marked = cmd(7, 8, "mallory", Role::Read, "/thirdshift status");
    marked.pending.refused = true;
    let commands = vec![
        cmd(7, 5, "mallory", Role::Read, "/thirdshift status"),
        cmd(7, 6, "Mallory", Role::Read, "/thirdshift help"),
        marked.clone(),
        cmd(7, 9, "alice", Role::Write, "/thirdshift help"),
    ];
    // then the first gets the reply, the second a reaction only, the marked one nothing, and
    // the writer's command its answer as ever
    let p = plan_with(&world, commands.clone());
    assert_eq!(
        shapes(&p),
        [
            "#7 react eyes 5",
            "#7 react eyes 9",
            "#7 react -1 6",
            "#7 reply 5 not-permitted",
            "#7 react -1 5",
            "#7 reply 9 answered",
            "#7 react +1 9",
        ]
    );
    // and when a refusal was replied to that author within the hour, none gets a reply
    let mut snapshot = world.snapshot();
    snapshot.commands = commands;
    let now = input().now;
    snapshot
        .refusals
        .insert("mallory".into(), now - chrono::TimeDelta::minutes(59));
    let p = plan(&snapshot, &Config::default(), &input());
    assert!(!shapes(&p)
        .iter()
        .any(|s| s.contains("reply 5") || s.contains("reply 6")));
    // but an hour later one does
    snapshot
        .refusals
        .insert("mallory".into(), now - chrono::TimeDelta::minutes(61));
    let p = plan(&snapshot, &Config::default(), &input());
    assert!(shapes(&p).contains(&"#7 reply 5 not-permitted".to_string()));
    // and a writer's command carrying a `-1` reaction (anyone may add one) is still answered
    let mut silenced = cmd(7, 9, "alice", Role::Write, "/thirdshift help");
    silenced.pending.refused = true;
    let p = plan_with(&world, vec![silenced]);
    assert!(shapes(&p).contains(&"#7 reply 9 answered".to_string()));
}
