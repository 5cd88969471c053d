//! `/thirdshift` commands with the real binary, real processes and real HTTP: permissions
//! (collaborator-permission API), refusals with evidence, recovery of a dead Run, a forced
//! recover in the forcer's name, one reply however often a command is handled (its event twice,
//! its event and a pass), and a command whose event never came answered by the next pass, also
//! on an idle issue (neither `in-progress` nor named by a host report), with the cache and
//! without it.

use crate::harness;

use std::path::PathBuf;

use github_emulator::Permission;
use harness::*;
use thirdshift_reconciler::host::{HostIdentity, ProcessIdentity};
use thirdshift_reconciler::protocol::record::{
    decode, Answer, Decoded, Outcome, Record, ReplyRecord,
};

const ALICE: &str = "alice"; // maintain
const BOB: &str = "bob"; // write

async fn world() -> World {
    let world = World::new().await;
    world
        .sim
        .add_user(ALICE, "alice-token", Permission::Maintain);
    world.sim.add_user(BOB, "bob-token", Permission::Write);
    world
}

/// Given: `author` comments `body` on `issue`; returns the comment id.
fn say(world: &World, issue: u64, author: &str, body: &str) -> u64 {
    world.sim.add_comment(issue, author, body)
}

/// The `issue_comment` payload GitHub would deliver for comment `id`.
fn event_file(world: &World, issue: u64, id: u64, action: &str) -> PathBuf {
    let c = world
        .sim
        .comments(issue)
        .into_iter()
        .find(|c| c.id == id)
        .expect("comment exists");
    let payload = serde_json::json!({
        "action": action,
        "issue": {"number": issue},
        "comment": {
            "id": id,
            "body": c.body,
            "html_url": format!("https://github.com/acme/widgets/issues/{issue}#issuecomment-{id}"),
            "user": {"login": c.author, "type": "User"},
        },
    });
    let path = world.dir.path().join(format!("event-{id}-{action}.json"));
    std::fs::write(&path, payload.to_string()).unwrap();
    path
}

/// When: the command workflow runs `command --event` for comment `id`.
async fn deliver(world: &World, issue: u64, id: u64) -> String {
    let path = event_file(world, issue, id, "created");
    let out = world
        .exec("ci", &["command", "--event", path.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "command: {}", stderr(&out));
    stdout(&out)
}

/// When: a reconcile pass runs with the global options `flags` (e.g. `--no-cache`).
async fn reconcile_with(world: &World, flags: &[&str]) {
    let out = world.exec("ci", &[flags, &["reconcile"]].concat()).await;
    assert_eq!(out.status.code(), Some(0), "reconcile: {}", stderr(&out));
}

/// When: a reconcile pass runs whose comment posts GitHub refuses (every attempt of one post);
/// it fails.
async fn refused_reconcile(world: &World) {
    let comments = "/repos/{owner}/{repo}/issues/{issue_number}/comments";
    world.sim.fail_next("POST", comments, 8, false);
    let out = world.exec("ci", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// When: a reconcile pass runs with no cache. Then: every repo-wide comment listing it made
/// started at the view's mark (`since`), none at the repository's first comment.
async fn cold_reconcile(world: &World) {
    std::fs::remove_dir_all(world.state_dir("ci").join("cache")).unwrap();
    world.sim.clear_requests();
    world.reconcile_ok("ci").await;
    let listings: Vec<String> = world
        .sim
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/issues/comments"))
        .map(|r| r.query)
        .collect();
    assert!(!listings.is_empty());
    assert!(
        listings.iter().all(|q| q.contains("since=")),
        "{listings:?}"
    );
}

/// Given: an open issue nobody works on (no label, no Claim, no host report names it).
fn idle_issue(world: &World) -> u64 {
    world
        .sim
        .create_issue(BOB, "idle", "an idea for later", &[])
}

/// The requests since the log was cleared that name issue `n` itself (its comments, labels…).
fn requests_about(world: &World, n: u64) -> Vec<String> {
    let own = format!("/issues/{n}");
    world
        .sim
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with(&own) || r.path.contains(&format!("{own}/")))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

/// The bot's replies to comment `id`, with their text.
fn replies(world: &World, issue: u64, id: u64) -> Vec<(ReplyRecord, String)> {
    world
        .sim
        .comments(issue)
        .into_iter()
        .filter(|c| c.author == BOT)
        .filter_map(|c| match decode(&c.body) {
            Decoded::Record(Record::Reply(r)) if r.command_comment_id == id => Some((r, c.body)),
            _ => None,
        })
        .collect()
}

fn reactions(world: &World, id: u64) -> Vec<String> {
    let r = world.sim.comment_reactions(id);
    r.into_iter().map(|(_, content)| content).collect()
}

/// Given: an issue whose Claim names host `gone`, which never reports (a silent host).
fn silent_claim(world: &World) -> (u64, String) {
    let issue = world.ready_issue("host died for good");
    let me = ProcessIdentity::current();
    let boot = HostIdentity::detect(None).boot_id;
    let claim_id = posted_claim(world, issue, "gone", me, &boot);
    (issue, claim_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_by_a_reader_is_refused_and_by_a_maintainer_ends_the_claim_in_their_name() {
    let world = world().await;
    let (issue, claim_id) = silent_claim(&world);
    // Given a reader's `/thirdshift recover --force`
    let id = say(&world, issue, STRANGER, "/thirdshift recover --force");
    // When its event is handled
    deliver(&world, issue, id).await;
    // Then one refusal reply, eyes then -1, and nothing else changed
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].0.answer, Answer::NotPermitted);
    assert!(r[0].1.contains("@mallory has `read`"), "{}", r[0].1);
    assert_eq!(reactions(&world, id), ["eyes", "-1"]);
    assert!(ends(&world, issue).is_empty());
    assert_eq!(world.labels(issue), [IN_PROGRESS]);
    // Given a maintainer's identical comment, in a repository whose hosts report (a registry)
    let out = world.exec("h9", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = say(&world, issue, ALICE, "/thirdshift recover --force");
    deliver(&world, issue, id).await;
    // Then the Claim ends recovered with alice as the actor, and she gets one reply and +1
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].claim_id, claim_id);
    assert_eq!(ends[0].outcome, Outcome::Recovered);
    assert_eq!(ends[0].actor, ALICE);
    assert!(!world.labels(issue).contains(&IN_PROGRESS.to_string()));
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].0.answer, Answer::Forced);
    assert_eq!(reactions(&world, id), ["eyes", "+1"]);
    // And its end record says a person forced it, and no host proved anything
    let end = world.sim.comments(issue).into_iter().last().unwrap().body;
    let body = world
        .sim
        .comments(issue)
        .into_iter()
        .map(|c| c.body)
        .find(|b| b.contains("thirdshift:v1:end"))
        .unwrap_or(end);
    assert!(body.contains("**Recovered by force**: @alice"), "{body}");
    assert!(body.contains("no host proved the Run gone"), "{body}");
    // And it is among the last recoveries of `status --json` and of the HTML page, as forced
    let out = world.exec("ci", &["status", "--json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recovery = json["recoveries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["claim_id"] == claim_id.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("not among the recoveries: {json:#}"));
    assert_eq!(recovery["forced_by"], ALICE, "{recovery:#}");
    let page = world.dir.path().join("status.html");
    let out = world
        .exec("ci", &["status", "--html", page.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dom = chromium_run(&page, &["--dump-dom".to_string()]);
    let row = dom
        .split("<tr class=\"recovery\">")
        .find(|r| r.contains(&claim_id))
        .unwrap_or_else(|| panic!("no recovery row for {claim_id}: {dom}"));
    assert!(row.contains("recovered (forced by @alice)"), "{row}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_is_refused_while_the_run_lives_and_recovers_it_once_when_dead() {
    let world = world().await;
    let issue = world.ready_issue("recover me");
    // Given a live Run its host reports alive
    let run = start_run(&world, "h1", issue, "sleep 300").await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When a writer asks to recover it
    let live = say(&world, issue, BOB, "/thirdshift recover");
    deliver(&world, issue, live).await;
    // Then it is refused with the host's evidence, and the Claim stands
    let r = replies(&world, issue, live);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].0.answer, Answer::Refused);
    assert!(
        r[0].1.contains("reports claim") && r[0].1.contains("alive"),
        "{}",
        r[0].1
    );
    assert!(ends(&world, issue).is_empty());
    // Given the Run is killed outright and its host reports it dead (no reconcile yet)
    run.kill_all().await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When a writer asks again, and the event is delivered twice, then a pass runs too
    let dead = say(&world, issue, BOB, "/thirdshift recover");
    let first = deliver(&world, issue, dead).await;
    assert!(first.contains("recovered"), "{first}");
    world.sim.clear_requests();
    let again = deliver(&world, issue, dead).await;
    assert!(again.contains("already answered"), "{again}");
    world.reconcile_ok("ci").await;
    // Then the Claim ended once, the command was answered once, and the repeats wrote nothing
    // but the receipt reaction (and the pass its first live view into the registry issue)
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].outcome, Outcome::Recovered);
    assert_eq!(replies(&world, issue, dead).len(), 1);
    assert_eq!(replies(&world, issue, live).len(), 1);
    let registry = (1..=issue + 1)
        .find(|n| {
            world
                .sim
                .issue(*n)
                .is_some_and(|i| i.body.contains("thirdshift:v1:view"))
        })
        .expect("the registry issue");
    let view = format!(
        "PATCH /repos/{}/issues/{registry}",
        world.sim.repo_full_name()
    );
    let writes = writes(&world);
    assert!(
        writes
            .iter()
            .all(|w| w.ends_with("/reactions") || *w == view),
        "{writes:?}"
    );
    assert_eq!(reactions(&world, dead), ["eyes", "+1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistyped_command_on_a_dead_runs_issue_is_told_the_claim_was_ended_all_the_same() {
    let world = world().await;
    let issue = world.ready_issue("mistyped");
    // Given a Run killed outright, its host reporting it dead
    let run = start_run(&world, "h1", issue, "sleep 300").await;
    run.kill_all().await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When a writer mistypes recover and the command is handled
    let id = say(&world, issue, BOB, "/thirdshift recvoer");
    deliver(&world, issue, id).await;
    // Then the same handling ended the Claim, and the reply says so besides "not understood"
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1);
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].0.answer, Answer::Invalid);
    let said = &r[0].1;
    assert!(said.contains("not understood"), "{said}");
    let also = format!("This pass also ended the Claim `{}`", ends[0].claim_id);
    assert!(said.contains(&also), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_whose_event_never_came_is_answered_by_the_next_pass() {
    let world = world().await;
    let (issue, claim_id) = silent_claim(&world);
    // Given a maintainer's force whose workflow trigger was dropped
    let id = say(&world, issue, ALICE, "/thirdshift recover --force");
    // When the next reconcile pass runs
    world.reconcile_ok("ci").await;
    // Then it is handled: the Claim ended in alice's name and one reply answers the comment
    let first = ends(&world, issue);
    assert_eq!(first.len(), 1);
    assert_eq!(
        (first[0].claim_id.as_str(), first[0].actor.as_str()),
        (claim_id.as_str(), ALICE)
    );
    assert_eq!(replies(&world, issue, id).len(), 1);
    // And a late event and another pass write no second answer and no second end
    deliver(&world, issue, id).await;
    world.reconcile_ok("ci").await;
    assert_eq!(replies(&world, issue, id).len(), 1);
    assert_eq!(
        ends(&world, issue).len(),
        1,
        "read again after the second pass"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_bots_and_ordinary_comments_are_ignored_without_a_write() {
    let world = world().await;
    let (issue, _) = silent_claim(&world);
    let plain = say(&world, issue, BOB, "looks stuck to me");
    let by_bot = say(&world, issue, BOT, "/thirdshift recover --force");
    let edited = say(&world, issue, ALICE, "/thirdshift recover --force");
    world.sim.clear_requests();
    let cases = [
        (
            plain,
            "created",
            format!("comment {plain} on #{issue} is not a /thirdshift command"),
        ),
        (
            by_bot,
            "created",
            format!(
                "comment {by_bot} on #{issue} is by @{BOT}, a bot or this tool itself; ignored"
            ),
        ),
        (
            edited,
            "edited",
            format!(
                "comment {edited} on #{issue} was edited: only new comments are commands; ignored"
            ),
        ),
    ];
    for (id, action, said) in cases {
        let path = event_file(&world, issue, id, action);
        let out = world
            .exec("ci", &["command", "--event", path.to_str().unwrap()])
            .await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(stdout(&out), said);
    }
    assert_eq!(writes(&world), Vec::<String>::new());
    // and a payload that is not an event is a usage error naming the file
    let bad = world.dir.path().join("bad.json");
    std::fs::write(&bad, "{\"action\": 1}").unwrap();
    let out = world
        .exec("ci", &["command", "--event", bad.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.json"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_kill_has_the_owning_host_stop_the_live_run_and_end_it_recovered() {
    let world = world().await;
    let issue = world.ready_issue("stuck but alive");
    // Given a live Run its host reports alive
    let mut run = start_run(&world, "h1", issue, "sleep 300").await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When a writer asks `/thirdshift recover --kill`
    let id = say(&world, issue, BOB, "/thirdshift recover --kill");
    let said = deliver(&world, issue, id).await;
    assert!(said.contains("kill-requested"), "{said}");
    assert!(
        ends(&world, issue).is_empty(),
        "nothing ends before the host acts"
    );
    // And the owning host observes
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the Run is stopped and its Claim ends once, recovered, and the issue is Ready again
    tokio::time::timeout(std::time::Duration::from_secs(30), run.child.wait())
        .await
        .expect("the Run exits")
        .unwrap();
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0].outcome, Outcome::Recovered);
    assert!(
        ends[0].reason.contains(&format!("cx-cmd-{id}")),
        "{}",
        ends[0].reason
    );
    let labels = world.labels(issue);
    assert!(labels.contains(&READY.to_string()), "{labels:?}");
    assert!(!labels.contains(&IN_PROGRESS.to_string()), "{labels:?}");
    assert_eq!(replies(&world, issue, id).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_on_an_idle_issue_whose_event_never_came_is_answered_once_by_the_next_cached_pass() {
    let world = world().await;
    let issue = idle_issue(&world);
    // Given a pass that already left its cache (so the next one is warm)
    world.reconcile_ok("ci").await;
    // And a writer's `/thirdshift status` on the idle issue whose workflow trigger was dropped
    let id = say(&world, issue, BOB, "/thirdshift status");
    // When the next reconcile pass runs
    world.reconcile_ok("ci").await;
    // Then it answers: one reply saying nothing is active, eyes then +1
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0.answer, Answer::Answered);
    assert_eq!(reactions(&world, id), ["eyes", "+1"]);
    // When more passes run
    world.sim.clear_requests();
    world.reconcile_ok("ci").await;
    world.reconcile_ok("ci").await;
    // Then the command is not answered again, and the answered issue is not read again
    assert_eq!(replies(&world, issue, id).len(), 1);
    assert_eq!(requests_about(&world, issue), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_on_an_idle_issue_is_answered_once_by_passes_without_a_cache() {
    let world = world().await;
    let issue = idle_issue(&world);
    // Given a writer's `/thirdshift status` on an idle issue whose trigger was dropped
    let id = say(&world, issue, BOB, "/thirdshift status");
    // When two `--no-cache` passes run
    reconcile_with(&world, &["--no-cache"]).await;
    reconcile_with(&world, &["--no-cache"]).await;
    // Then the first answered it once and the second wrote nothing more
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0.answer, Answer::Answered);
    assert_eq!(reactions(&world, id), ["eyes", "+1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_pass_without_a_cache_file_answers_a_command_on_an_idle_issue() {
    let world = world().await;
    let issue = idle_issue(&world);
    // Given a `/thirdshift help` on an idle issue, older than any cache
    let id = say(&world, issue, BOB, "/thirdshift help");
    // When the first pass runs (a cold cache) and then a warm one
    world.reconcile_ok("ci").await;
    world.reconcile_ok("ci").await;
    // Then it was answered once, with the grammar
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].1.contains("/thirdshift recover"), "{}", r[0].1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strangers_command_on_an_idle_issue_is_refused_once_and_not_again() {
    let world = world().await;
    let issue = idle_issue(&world);
    world.reconcile_ok("ci").await;
    // Given a reader's `/thirdshift cancel` on an idle issue whose trigger was dropped
    let id = say(&world, issue, STRANGER, "/thirdshift cancel");
    // When passes run, with the cache and without
    world.reconcile_ok("ci").await;
    world.reconcile_ok("ci").await;
    reconcile_with(&world, &["--no-cache"]).await;
    // Then one refusal names the missing role, eyes then -1, and nothing else was written
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0.answer, Answer::NotPermitted);
    assert!(r[0].1.contains("@mallory has `read`"), "{}", r[0].1);
    assert_eq!(reactions(&world, id), ["eyes", "-1"]);
    assert!(world
        .records(issue)
        .iter()
        .all(|r| matches!(r, Record::Reply(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_on_an_issue_no_longer_in_progress_answers_nothing_to_do_once() {
    let world = world().await;
    let issue = world.ready_issue("finished");
    // Given an issue whose Run finished (its Claim ended done, `in-progress` removed)
    let out = world
        .exec("h1", &["run", "--issue", &issue.to_string(), "--", "true"])
        .await;
    assert_eq!(out.status.code(), Some(0), "run: {}", stderr(&out));
    assert!(!world.labels(issue).contains(&IN_PROGRESS.to_string()));
    world.reconcile_ok("ci").await;
    // And a writer's `/thirdshift recover` there whose trigger was dropped
    let id = say(&world, issue, BOB, "/thirdshift recover");
    // When passes run
    world.reconcile_ok("ci").await;
    world.reconcile_ok("ci").await;
    // Then one reply says there is nothing to do and how the last Claim ended; nothing ended
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0.answer, Answer::NothingToDo);
    assert!(r[0].1.contains("done"), "{}", r[0].1);
    assert_eq!(reactions(&world, id), ["eyes", "-1"]);
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].outcome, Outcome::Done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_a_pass_saw_but_could_not_answer_is_answered_later_from_the_cache() {
    let world = world().await;
    let issue = idle_issue(&world);
    world.reconcile_ok("ci").await;
    // Given a `/thirdshift status` on an idle issue, and a pass whose reply GitHub refuses
    let id = say(&world, issue, BOB, "/thirdshift status");
    refused_reconcile(&world).await;
    assert!(replies(&world, issue, id).is_empty());
    // And time passes: the command is long older than anything the next listing shows
    world.sim.backdate(std::time::Duration::from_secs(3600));
    // When the next pass runs
    world.reconcile_ok("ci").await;
    // Then the cache still knew the command, and it is answered once
    assert_eq!(replies(&world, issue, id).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_older_than_the_views_mark_but_still_waiting_is_answered_by_a_cold_pass() {
    let world = world().await;
    let issue = idle_issue(&world);
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    world.reconcile_ok("ci").await;
    // Given a `/thirdshift status` on an idle issue whose replies GitHub refuses, pass after pass
    let id = say(&world, issue, BOB, "/thirdshift status");
    refused_reconcile(&world).await;
    // And a later pass, still refused, that wrote the view (a new Run changed it): its mark's
    // watermark is after the command, which it names as waiting
    let claimed = world.ready_issue("claimed after the command");
    let run = start_run(&world, "h1", claimed, "sleep 30").await;
    refused_reconcile(&world).await;
    assert!(replies(&world, issue, id).is_empty());
    // And the command now long older than that watermark
    world.sim.backdate(std::time::Duration::from_secs(3600));
    // When a pass runs with no cache (its listing starts at the watermark, after the command)
    cold_reconcile(&world).await;
    // Then it listed only since the mark, and the command is answered once all the same
    assert_eq!(replies(&world, issue, id).len(), 1);
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answered_command_edited_long_after_is_read_once_and_not_answered_again() {
    let world = world().await;
    let issue = idle_issue(&world);
    world.reconcile_ok("ci").await;
    // Given a `/thirdshift status` on an idle issue answered by its event, long ago
    let id = say(&world, issue, BOB, "/thirdshift status");
    deliver(&world, issue, id).await;
    world.sim.backdate(std::time::Duration::from_secs(3600));
    // And passes since that saw only newer comments elsewhere
    let elsewhere = idle_issue(&world);
    say(&world, elsewhere, BOB, "an unrelated note");
    world.reconcile_ok("ci").await;
    world.reconcile_ok("ci").await;
    // And its author edits it now (the listing shows the edit, not the old reply)
    world
        .sim
        .edit_comment(id, "/thirdshift status\n\nstill stuck?");
    world.sim.clear_requests();
    // When three passes run
    for _ in 0..3 {
        world.reconcile_ok("ci").await;
    }
    // Then the issue was read once (the issue and its comments), and nothing was answered again
    let about = requests_about(&world, issue);
    assert_eq!(about.len(), 2, "{about:#?}");
    assert!(about.iter().all(|r| r.starts_with("GET ")), "{about:#?}");
    assert_eq!(replies(&world, issue, id).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_on_the_registry_issue_whose_event_never_came_is_answered_once() {
    let world = world().await;
    // Given a host that observed once (so the registry issue exists)
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let registry = (1..=3)
        .find(|n| {
            let label = thirdshift_reconciler::store::registry::REGISTRY_LABEL;
            (world.sim.issue(*n)).is_some_and(|i| i.labels.iter().any(|l| l == label))
        })
        .expect("the registry issue");
    // And a writer's `/thirdshift help` there whose trigger was dropped
    let id = say(&world, registry, BOB, "/thirdshift help");
    // When passes run, with the cache and without
    world.reconcile_ok("ci").await;
    world.reconcile_ok("ci").await;
    reconcile_with(&world, &["--no-cache"]).await;
    // Then it was answered once, and the host's report is untouched
    assert_eq!(replies(&world, registry, id).len(), 1);
    assert_eq!(reactions(&world, id), ["eyes", "+1"]);
    let reports = world.records(registry);
    let reports = reports
        .iter()
        .filter(|r| matches!(r, Record::HostReport(_)));
    assert_eq!(reports.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maintainers_command_edited_by_a_writer_is_not_run_with_the_maintainers_role() {
    let world = world().await;
    let (issue, claim_id) = silent_claim(&world);
    // Given a maintainer's harmless command that no pass has answered yet
    let id = say(&world, issue, ALICE, "/thirdshift status");
    // When a writer edits it into `recover --force` (a second later, as GitHub's timestamps
    // count seconds) through the API, as GitHub lets any write collaborator do
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let repo: thirdshift_reconciler::github::Repo = world.sim.repo_full_name().parse().unwrap();
    let bob = thirdshift_reconciler::github::Client::new(
        &world.server.url,
        Some("bob-token".into()),
        repo,
    )
    .unwrap();
    bob.update_comment(id, "/thirdshift recover --force")
        .await
        .expect("a writer may edit any comment");
    // And a pass handles waiting commands
    world.reconcile_ok("ci").await;
    // Then it is answered as not run, saying why, and the Claim stands
    let r = replies(&world, issue, id);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].0.answer, Answer::NotPermitted);
    assert!(r[0].1.contains("edited"), "{}", r[0].1);
    assert!(ends(&world, issue).is_empty());
    assert_eq!(
        world
            .ownership(issue)
            .owner
            .expect("still owned")
            .record
            .claim_id,
        claim_id
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_pass_reads_since_the_views_watermark_and_misses_no_command_or_claim_after_it() {
    let world = world().await;
    // Given a repository whose hosts report, some old conversation, and a pass that wrote the
    // dashboard with its listing mark
    let old = idle_issue(&world);
    for k in 0..5 {
        world.sim.add_comment(old, BOB, &format!("old talk {k}"));
    }
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    world.reconcile_ok("ci").await;
    // And after it: a command on an idle issue and a new Claim
    let idle = idle_issue(&world);
    let id = say(&world, idle, BOB, "/thirdshift status");
    let claimed = world.ready_issue("claimed after the mark");
    let run = start_run(&world, "h1", claimed, "sleep 30").await;
    observe_reconcile(&world, "h1").await;
    // When a pass runs with no cache (a new machine, an evicted Actions cache)
    cold_reconcile(&world).await;
    // Then it listed the repository's comments only since the mark, never from the start
    // And it missed neither the command (answered once) nor the Claim (in the view)
    assert_eq!(replies(&world, idle, id).len(), 1);
    let out = world.exec("ci", &["status", "--json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert!(runs.iter().any(|r| r["issue"] == claimed), "{json:#}");
    run.kill_all().await;
}

/// Three reconcile passes on `world` after `spam` (called before each with the pass number)
/// adds its comments; the requests they sent.
async fn three_passes(world: &World, spam: impl Fn(usize)) -> usize {
    let before = world.sim.requests().len();
    for pass in 0..3 {
        spam(pass);
        world.reconcile_ok("ci").await;
    }
    world.sim.requests().len() - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_readers_twenty_commands_get_one_reply_and_cost_a_bounded_budget() {
    // Given two idle issues, in a world with a reader and in a twin world without one
    let (quiet, spammed) = (world().await, world().await);
    for w in [&quiet, &spammed] {
        w.sim.add_user("mallory", "mallory-token", Permission::Read);
        w.ready_issue("one");
        w.ready_issue("two");
        w.reconcile_ok("ci").await;
    }
    let baseline = three_passes(&quiet, |_| {}).await;
    // When the reader writes 20 commands on them across 3 passes (7, 7 and 6)
    let spent = three_passes(&spammed, |pass| {
        let count = if pass == 2 { 6 } else { 7 };
        for i in 0..count {
            let issue = 1 + (i % 2) as u64;
            say(&spammed, issue, "mallory", "/thirdshift recover --force");
        }
    })
    .await;
    // Then the reader got one reply in all, and every command a `-1` reaction
    let replies: Vec<ReplyRecord> = [1, 2]
        .iter()
        .flat_map(|n| spammed.records(*n))
        .filter_map(|r| match r {
            Record::Reply(r) if r.author == "mallory" => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(replies.len(), 1, "{replies:#?}");
    assert_eq!(replies[0].answer, Answer::NotPermitted);
    let reactions = spammed
        .sim
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.route.ends_with("/reactions"))
        .count();
    // (eyes and -1 on the replied one, -1 on each other)
    assert_eq!(
        reactions, 21,
        "one reaction per command, two on the replied one"
    );
    // And what they cost beyond three idle passes stays within 2 requests per command (one
    // reaction each, the reply, a role check and a read of their issues per pass)
    let cost = spent - baseline;
    println!(
        "20 reader commands over 3 passes: {spent} requests, {baseline} for 3 idle passes, \
         {cost} for the commands ({:.2} per command); 1 reply",
        cost as f64 / 20.0
    );
    assert!(cost <= 40, "the reader's 20 commands cost {cost} requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_told_on_one_issue_is_not_told_again_within_the_hour_on_another() {
    let world = world().await;
    world
        .sim
        .add_user("mallory", "mallory-token", Permission::Read);
    // Given a registry issue (a host observed) and a reader refused by a reply on #one
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (one, two) = (world.ready_issue("one"), world.ready_issue("two"));
    say(&world, one, "mallory", "/thirdshift status");
    world.reconcile_ok("ci").await;
    // and passes since, which no longer read #one (its command is answered)
    world.reconcile_ok("ci").await;
    world.reconcile_ok("ci").await;
    // When the reader writes a command on #two, seen by a cached pass and by a cold one
    let second = say(&world, two, "mallory", "/thirdshift status");
    world.reconcile_ok("ci").await;
    world.reconcile_ok("cold").await;
    // Then the reader was told once in all, and the second command got a `-1` reaction only
    let replies: Vec<ReplyRecord> = [one, two]
        .iter()
        .flat_map(|n| world.records(*n))
        .filter_map(|r| match r {
            Record::Reply(r) if r.author == "mallory" => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(replies.len(), 1, "{replies:#?}");
    assert_eq!(replies[0].issue, one);
    let reacted = world.sim.requests().iter().any(|r| {
        r.method == "POST"
            && r.route.ends_with("/reactions")
            && r.path.contains(&second.to_string())
    });
    assert!(reacted, "the second command has its -1");
}
