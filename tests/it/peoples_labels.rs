//! A pass never undoes a label change a person made after our end record: before it finishes an
//! end record's label changes it reads who changed which label when (the issue's events, served
//! by the emulator as GitHub does), and leaves what a person changed since as they set it. A pass
//! killed between an end record and its labels is still finished by the next one. A person whose
//! login is trusted (a host writing with their token) is seen by what they did: a take-over by
//! hand is a new Claim by the events' order.

use crate::harness;

use harness::*;
use thirdshift_reconciler::protocol::record::Outcome;

const LABEL: &str = "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}";

fn sorted(mut labels: Vec<String>) -> Vec<String> {
    labels.sort();
    labels
}

/// A Run on a new Ready issue whose command exits `code`, run to its end.
async fn ended_run(world: &World, code: i32) -> u64 {
    let issue = world.ready_issue("worked");
    let mut run = start_run(world, "h1", issue, &format!("sleep 0.2; exit {code}")).await;
    run.child.wait().await.unwrap();
    assert_eq!(ends(world, issue).len(), 1, "the Run ended its Claim");
    issue
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_a_person_adds_after_our_end_are_kept_over_three_passes() {
    let world = World::new().await;
    // Given a Run that ended done, its labels finished
    let issue = ended_run(&world, 0).await;
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Done);
    // When a person puts in-progress, ready-for-agent and a label of their own on it
    world
        .sim
        .set_labels(issue, &[IN_PROGRESS, READY, "needs-design"]);
    // Then three passes leave all three as the person set them
    for _ in 0..3 {
        observe_reconcile(&world, "h1").await;
        assert_eq!(
            sorted(world.labels(issue)),
            [IN_PROGRESS, "needs-design", READY]
        );
    }
    assert_eq!(ends(&world, issue).len(), 1, "nothing more written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_a_person_removes_after_our_end_stays_removed() {
    let world = World::new().await;
    // Given a Run that failed: its end put ready-for-agent back
    let issue = ended_run(&world, 1).await;
    let end = &ends(&world, issue)[0];
    assert_eq!(end.labels_after.as_deref(), Some(&[READY.to_string()][..]));
    // When a person takes ready-for-agent off and marks the issue in-progress to work it
    world.sim.set_labels(issue, &[IN_PROGRESS]);
    // Then three passes put nothing back and take nothing off
    for _ in 0..3 {
        let out = observe_reconcile(&world, "h1").await;
        assert_eq!(world.labels(issue), [IN_PROGRESS]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(said.contains("a person's labels"), "{said}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_killed_between_the_end_record_and_its_labels_is_finished_by_the_next() {
    let world = World::new().await;
    let issue = world.ready_issue("killed Run");
    let run = start_run(&world, "h1", issue, "sleep 600").await;
    run.kill_all().await;
    // Given a pass that writes the end record of the dead Run, but none of its labels
    world.sim.fail_next("DELETE", LABEL, 1_000, false);
    world.sim.fail_next("POST", LABELS_ROUTE, 1_000, false);
    let out = world.exec("h1", &["observe", "--reconcile"]).await;
    assert_ne!(out.status.code(), Some(0), "its label writes failed");
    assert_eq!(ends(&world, issue).len(), 1, "the end record was written");
    assert_eq!(world.labels(issue), [IN_PROGRESS]);
    // When GitHub takes writes again and the next pass runs
    world.sim.clear_failures();
    observe_reconcile(&world, "h1").await;
    // Then it finishes the labels the end record states
    let end = &ends(&world, issue)[0];
    let expected = end
        .labels_after
        .clone()
        .expect("an owner's end states labels");
    assert_eq!(sorted(world.labels(issue)), sorted(expected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_persons_take_over_by_hand_is_kept_by_the_next_passes() {
    const ALICE_TOKEN: &str = "alice-token";
    let world = World::new().await;
    world
        .sim
        .add_user("alice", ALICE_TOKEN, github_emulator::Permission::Write);
    let config = world.dir.path().join("alice-trusted.yml");
    std::fs::write(
        &config,
        "trusted_authors: [\"alice\", \"thirdshift-bot\"]\n",
    )
    .unwrap();
    let as_alice = |args: &[&str]| {
        let mut cmd = world.cli("h1");
        cmd.env("GITHUB_TOKEN", ALICE_TOKEN)
            .arg("--config")
            .arg(&config)
            .args(args);
        cmd
    };
    // Given a host writing with the token of alice, a person listed in trusted_authors, whose
    // Run failed with nothing kept: its end put ready-for-agent back
    let issue = world.ready_issue("alice's host");
    let code = as_alice(&["run", "--issue", &issue.to_string(), "--", "false"])
        .status()
        .await
        .unwrap();
    assert_eq!(code.code(), Some(1));
    assert_eq!(world.labels(issue), [READY]);
    // When alice takes the issue over by hand: ready-for-agent off, in-progress on
    world.sim.set_labels_as(issue, &[IN_PROGRESS], "alice");
    // Then the next passes keep her labels, though her login is the one the host writes as
    for _ in 0..3 {
        let out = as_alice(&["observe", "--reconcile"])
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        labels_are(&world, issue, &[IN_PROGRESS]);
    }
}

/// Asserts issue `issue` carries `want`, printing its label history when not.
fn labels_are(world: &World, issue: u64, want: &[&str]) {
    assert_eq!(world.labels(issue), want, "{}", history(world, issue));
}

/// The issue's label changes, for a failure message.
fn history(world: &World, issue: u64) -> String {
    let lines: Vec<String> = world
        .sim
        .label_history(issue)
        .into_iter()
        .map(|(at, c)| format!("{} {c}", at.format("%H:%M:%S")))
        .collect();
    lines.join("; ")
}

/// The route the fence reads an issue by, before it writes that issue's labels.
const ISSUE: &str = "/repos/{owner}/{repo}/issues/{issue_number}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_take_over_between_a_passs_read_and_its_labels_in_the_ends_second_stands() {
    let world = World::new().await;
    let issue = world.ready_issue("taken over mid-pass");
    start_run(&world, "h1", issue, "sleep 600")
        .await
        .kill_all()
        .await;
    observe(&world, "h1").await;
    // Given GitHub's clock at one second for all that follows, as its timestamps make it
    world.sim.freeze_clock(Some(chrono::Utc::now()));
    // And a pass that read the issue with its dead owner and posted the end record, held by a
    // slow GitHub before its labels
    world.sim.stall("GET", ISSUE);
    let pass = tokio::spawn(world.cli("r1").arg("reconcile").output());
    wait_until("the pass to be held", STEP, || world.sim.stalled() > 0).await;
    assert_eq!(
        ends(&world, issue).len(),
        1,
        "the end record was posted first"
    );
    // When another writer sets the end's labels and a person takes the issue over, in that
    // second: the labels are again exactly the ones the held pass read (A-B-A), only the
    // issue's events tell
    world.sim.set_labels_as(issue, &[READY], BOT);
    world.sim.set_labels_as(issue, &[IN_PROGRESS], "acme");
    world.sim.release_stalls();
    let out = pass.await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the person's labels stand, and over three more passes
    labels_are(&world, issue, &[IN_PROGRESS]);
    for _ in 0..3 {
        observe_reconcile(&world, "h1").await;
        labels_are(&world, issue, &[IN_PROGRESS]);
    }
    assert_eq!(ends(&world, issue).len(), 1, "nothing more written");
}

async fn observe(world: &World, host: &str) {
    let out = world.exec(host, &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
