//! thirdshift's own Runs ended in seconds, with no wrapper: `observe` leaves a companion beside
//! each live thirdshift Command it reports, so a Command killed outright is ended (as
//! thirdshift's own Failed run would end it) with nobody starting a pass; never while its
//! Harness lives on; one companion however many passes see it; none left behind, and no end of
//! ours, when the Command ends normally. (The real thirdshift binary's case is in
//! `thirdshift_real.rs`.)

use crate::harness::*;
use crate::thirdshift::{
    adopted_verdicts, command_process, harness_in, record, system_hostname, worktree_on,
    write_record,
};

use std::path::{Path, PathBuf};

use thirdshift_reconciler::host::{HostIdentity, ProcessIdentity};
use thirdshift_reconciler::protocol::record::Verdict;

/// A thirdshift Command on a new `in-progress` issue of this host: its process (in a group of
/// its own) and its record under `logs`.
struct Command {
    issue: u64,
    process: std::process::Child,
    record: PathBuf,
    text: String,
}

fn command_on(world: &World, logs: &Path, title: &str) -> Command {
    let repo = world.sim.repo_full_name();
    let issue = world.sim.create_issue(BOT, title, "b", &[IN_PROGRESS]);
    let process = command_process();
    let p = ProcessIdentity::of(process.id()).expect("it runs");
    let boot = HostIdentity::detect(None).boot_id;
    let text = record(&repo, issue, &system_hostname(), p, &boot);
    let record = write_record(logs, &repo, issue, &text);
    Command {
        issue,
        process,
        record,
        text,
    }
}

/// Issues that only move the numbering on: a Harness of another test in this process, in a
/// worktree on its own `issue-N`, would rightly count as a writer of a Command on that number.
fn numbered_from(world: &World, first: u64) {
    while world.sim.create_issue(BOT, "filler", "b", &[]) + 1 < first {}
}

/// The config that points `observe` at `logs` as thirdshift's logs folder.
fn config_for(world: &World, logs: &Path) -> PathBuf {
    let config = world.dir.path().join("thirdshift.yml");
    std::fs::write(
        &config,
        format!("thirdshift:\n  logs_dir: {}\n", logs.display()),
    )
    .unwrap();
    config
}

async fn observe(world: &World, config: &Path) {
    let mut pass = world.cli("h1");
    let out = pass.arg("--config").arg(config).arg("observe").output();
    let out = out.await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// kill -9 of a Command's whole process group.
fn kill_group(c: &mut Command) {
    // SAFETY: kill(2) with a process group and a signal number; no memory is shared.
    unsafe { libc::kill(-(c.process.id() as i32), libc::SIGKILL) };
    c.process.wait().unwrap();
}

fn ended(world: &World, issue: u64) -> bool {
    !world.ownership(issue).adopted_ends.is_empty()
}

/// The companions watching `claim_id` now.
fn companions_of(claim_id: &str) -> usize {
    let procs = std::fs::read_dir("/proc").unwrap().flatten();
    procs
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            text.contains(" companion ") && text.contains(claim_id)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_killed_after_one_observe_is_ended_with_no_pass_and_a_live_one_is_left_alone() {
    // Given two thirdshift Commands on this host, seen alive by one `observe`
    let world = World::with_companions().await;
    numbered_from(&world, 6);
    let logs = world.dir.path().join("thirdshift-logs");
    let mut killed = command_on(&world, &logs, "killed");
    let mut live = command_on(&world, &logs, "lives");
    let config = config_for(&world, &logs);
    observe(&world, &config).await;
    // When one is killed outright, and nobody starts a pass
    kill_group(&mut killed);
    // Then it is ended as thirdshift's own Failed run ends it, and the live one is untouched
    wait_until("the killed Command's end", STEP, || {
        ended(&world, killed.issue)
    })
    .await;
    let why = &world.ownership(killed.issue).adopted_ends[0].record.reason;
    assert!(why.contains("dead (PID gone)"), "{why}");
    // (its labels follow its end record, written a moment after it)
    wait_until("the killed Command's labels", STEP, || {
        world.labels(killed.issue) == [READY]
    })
    .await;
    assert!(!ended(&world, live.issue), "the live Command is left alone");
    assert_eq!(world.labels(live.issue), [IN_PROGRESS]);
    kill_group(&mut live);
    wait_until("the second Command's end", STEP, || {
        ended(&world, live.issue)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_command_whose_harness_lives_on_is_ended_only_after_the_harness_exits() {
    // Given a Command with its Harness in its worktree, seen alive by one `observe`
    let world = World::with_companions().await;
    numbered_from(&world, 9);
    let logs = world.dir.path().join("thirdshift-logs");
    let mut c = command_on(&world, &logs, "harness lives on");
    let repo = world.sim.repo_full_name();
    let wt = worktree_on(world.dir.path(), &repo, &format!("issue-{}", c.issue));
    let mut harness = harness_in(&wt);
    let config = config_for(&world, &logs);
    observe(&world, &config).await;
    // When the Command is killed outright while its Harness works on
    kill_group(&mut c);
    // Then its companion holds it as writers alive, and nothing ends it
    wait_until("writers alive reported", STEP, || {
        adopted_verdicts(&world, "h1")
            .iter()
            .any(|v| matches!(v.verdict, Verdict::WritersAlive { .. }))
    })
    .await;
    assert!(!ended(&world, c.issue), "not while its Harness runs");
    // When the Harness exits too, the Command is ended
    harness.kill().unwrap();
    harness.wait().unwrap();
    wait_until("the Command's end", STEP, || ended(&world, c.issue)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_observes_start_one_companion_and_a_normal_end_leaves_none_and_no_end_of_ours() {
    // Given a live thirdshift Command
    let world = World::with_companions().await;
    numbered_from(&world, 12);
    let logs = world.dir.path().join("thirdshift-logs");
    let mut c = command_on(&world, &logs, "ends normally");
    let config = config_for(&world, &logs);
    // When the host observes ten times
    for _ in 0..10 {
        observe(&world, &config).await;
    }
    // Then one companion watches it
    let id = adopted_verdicts(&world, "h1")[0].claim_id.clone();
    wait_until("the companion", STEP, || companions_of(&id) > 0).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(companions_of(&id), 1);
    // and `status` shows it watched by a companion
    let out = world.exec("h2", &["status", "--json"]).await;
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = view["runs"].as_array().unwrap();
    let row = rows.iter().find(|r| r["claim_id"] == id.as_str()).unwrap();
    assert_eq!(row["watched"], true, "{row:#}");
    // When the Command ends normally: thirdshift records its outcome, then its process exits
    let done = c
        .text
        .replace("\"outcome\": null", "\"outcome\": \"Merged\"");
    std::fs::write(&c.record, done).unwrap();
    kill_group(&mut c);
    // Then its companion leaves, and no end record of ours is written
    wait_until("the companion to leave", STEP, || companions_of(&id) == 0).await;
    assert!(!ended(&world, c.issue));
    assert_eq!(world.labels(c.issue), [IN_PROGRESS]);
}
