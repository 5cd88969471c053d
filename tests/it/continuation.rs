//! A killed Run carries on by itself: with `recovery.on_dead: continue`, the companion of a Run
//! killed outright ends its Claim as a Continuation and starts the Continuation on its own host
//! with the dead Run's own command, within seconds and with no pass or pickup started by anyone;
//! the new Run resumes the agent session in the same worktree. Never while the dead Run's command
//! lives, exactly one Continuation when another host's pickup races for the issue, and a Run
//! that dies at once every time stops at the failure limit with the issue handed to people.

use crate::agent_script::{kill_outright, pickup_with_the_script, stand_in_harness};
use crate::harness::*;
#[allow(dead_code)]
use crate::support::{origin, schema};

use std::path::{Path, PathBuf};
use std::time::Duration;

use origin::Origin;
use thirdshift_reconciler::host::signal_session;
use thirdshift_reconciler::protocol::record::{ClaimRecord, Outcome, Record, StartedBy, Verdict};

/// A config with the continue policy and one slot on each of h1 and h2.
fn continue_config(world: &World) -> PathBuf {
    let config = world.dir.path().join("continue.yml");
    let text =
        "hosts:\n  h1:\n    capacity: 1\n  h2:\n    capacity: 1\nrecovery:\n  on_dead: continue\n";
    std::fs::write(&config, text).unwrap();
    config
}

/// The Claim owning `issue` now, when it is not `than`.
fn newer_owner(world: &World, issue: u64, than: &str) -> Option<ClaimRecord> {
    let owner = world.ownership(issue).owner?;
    (owner.record.claim_id != than).then_some(owner.record)
}

/// SIGTERM to a Run: it stops its command and hands the issue back itself (no Continuation).
async fn hand_back(world: &World, issue: u64, claim: &ClaimRecord) {
    // SAFETY: kill(2) with a PID and a signal number; no memory is shared.
    unsafe { libc::kill(claim.pid as i32, libc::SIGTERM) };
    wait_until("the Run to hand the issue back", STEP, || {
        ends(world, issue)
            .iter()
            .any(|e| e.claim_id == claim.claim_id)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_pickup_run_carries_on_resuming_its_session_with_no_pass_started_by_anyone() {
    // Given the continue policy and a pickup-started Run of the reference script whose
    // (stand-in) Harness recorded its agent session and works in its worktree
    let world = World::with_companions().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let issue = world.ready_issue("carried on");
    let mark = world.dir.path().join("harness-started");
    let harness = stand_in_harness(world.dir.path(), &mark);
    let config = continue_config(&world);
    let first = pickup_with_the_script(&world, &origin, &config, &harness, &mark, issue).await;
    let session = first.agent_session.clone().expect("the first session");
    std::fs::remove_file(&mark).unwrap();
    // When the Run and its command are killed outright, and nobody starts a pass or a pickup
    kill_outright(&first).await;
    // Then a new Run holds the issue, and its Harness resumed the session in the same worktree
    // on the same branch
    let mut next = None;
    wait_until("a Continuation to hold the issue", STEP, || {
        next = newer_owner(&world, issue, &first.claim_id).filter(|_| mark.exists());
        next.is_some()
    })
    .await;
    let next = next.unwrap();
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Continued);
    assert_eq!(next.worktree, first.worktree);
    assert_eq!(next.branch, first.branch);
    assert_eq!(next.host, "h1");
    assert_eq!(
        std::fs::read_to_string(&mark).unwrap(),
        format!("{session} 1")
    );
    // and the end record says where and by whom the Continuation was started, and the live
    // view shows the chain
    let mut started = None;
    wait_until("the start noted in the end record", STEP, || {
        let end = ends(&world, issue).into_iter().next();
        started = end.and_then(|e| e.continuation?.started);
        started.is_some()
    })
    .await;
    let started = started.unwrap();
    assert_eq!(started.claim_id, next.claim_id);
    assert_eq!(started.host, "h1");
    assert_eq!(started.by, StartedBy::Companion);
    let observed = world.exec("h1", &["observe"]).await;
    assert_eq!(observed.status.code(), Some(0), "{}", stderr(&observed));
    let out = world.exec("h1", &["status", "--json"]).await;
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &view["runs"][0];
    assert_eq!(row["claim_id"], next.claim_id.as_str(), "{view}");
    assert_eq!(row["watched"], true, "its companion watches it; {view}");
    assert_eq!(row["continues"]["number"], 1);
    assert_eq!(row["continues"]["claim_id"], first.claim_id.as_str());
    assert_eq!(row["continues"]["started_by"], "companion");
    let schema = std::fs::read_to_string(Path::new(ROOT).join("docs/status.schema.json"));
    let schema: serde_json::Value = serde_json::from_str(&schema.unwrap()).unwrap();
    let checked = schema::Validator::new(&schema).validate(&schema, &view);
    assert!(checked.is_ok(), "{}", schema::report(&checked.unwrap_err()));
    hand_back(&world, issue, &next).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_command_lives_on_is_carried_on_only_after_the_command_exits() {
    // Given the continue policy and a Run with an agent session, its command writing a line
    // per start
    let world = World::with_companions().await;
    let issue = world.ready_issue("writers first");
    let config = continue_config(&world);
    let starts = world.dir.path().join("starts");
    let script = format!(
        "echo \"${{THIRDSHIFT_RESUME_SESSION:-fresh}}\" >> '{}'; exec sleep 600",
        starts.display()
    );
    let config_arg = config.to_str().unwrap();
    let options = ["--config", config_arg, "--session", "sess-9"];
    let mut run = start_run_with(&world, "h1", issue, &options, &script).await;
    // When only the Run is killed: its command lives on
    run.kill_run_only().await;
    wait_until("the companion to report writers alive", STEP, || {
        host_reports(&world).iter().any(|r| {
            matches!(r, Record::HostReport(h) if h.claims.iter()
                .any(|v| matches!(v.verdict, Verdict::WritersAlive { .. })))
        })
    })
    .await;
    // Then nothing carries it on while the command runs
    assert!(ends(&world, issue).is_empty(), "not while its command runs");
    assert_eq!(lines(&starts), ["fresh"]);
    // When the command exits too, the Continuation starts, resuming the session
    signal_session(run.sid, libc::SIGKILL);
    wait_until("the Continuation's command to start", STEP, || {
        lines(&starts).len() == 2
    })
    .await;
    assert_eq!(lines(&starts), ["fresh", "sess-9"]);
    let next = newer_owner(&world, issue, &run.claim_id).expect("the Continuation's claim");
    hand_back(&world, issue, &next).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_with_free_slots_start_exactly_one_continuation() {
    // Given the continue policy, a Run on h1, and h2 with a free slot
    let world = World::with_companions().await;
    let issue = world.ready_issue("raced continuation");
    let config = continue_config(&world);
    let config_arg = config.to_str().unwrap();
    let script = "exec sleep 600";
    let run = start_run_with(&world, "h1", issue, &["--config", config_arg], script).await;
    let first = world.ownership(issue).owner.unwrap().record;
    // When the Run is killed outright, and once its Continuation end is posted, h1's companion
    // and h2's pickup both go for the issue (their claims held by a slow GitHub until both are
    // posting)
    run.kill_all().await;
    wait_until("the Continuation end", STEP, || {
        !ends(&world, issue).is_empty()
    })
    .await;
    let claims = "/repos/{owner}/{repo}/issues/{issue_number}/comments";
    world.sim.stall("POST", claims);
    wait_until("the issue to be Ready again", STEP, || {
        world.labels(issue).contains(&READY.to_string())
    })
    .await;
    let mut pickup = world.cli("h2");
    pickup.args(["--config", config_arg, "pickup", "--", "sh", "-c", script]);
    let pickup = tokio::spawn(pickup.output());
    wait_until("both hosts to post a claim", STEP, || {
        world.sim.stalled() == 2
    })
    .await;
    world.sim.release_stalls();
    let out = pickup.await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    wait_until("h1's companion to finish", STEP, || {
        !companion_running(&first.claim_id)
    })
    .await;
    // Then exactly one Continuation holds the issue, and one Run works on it
    let own = world.ownership(issue);
    let owner = own.owner.as_ref().expect("a Continuation").record.clone();
    assert_ne!(owner.claim_id, first.claim_id);
    assert!(own.superseded.is_empty(), "{:?}", own.superseded);
    // (the dead Run's own local record is left as it was: only its end on GitHub counts)
    let live: Vec<_> = ["h1", "h2"]
        .iter()
        .flat_map(|h| active_records(&world, h))
        .filter(|id| *id != first.claim_id)
        .collect();
    assert_eq!(live, vec![owner.claim_id.clone()], "one Run works on it");
    hand_back(&world, issue, &owner).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_dies_at_once_every_time_stops_at_the_limit_and_goes_to_people() {
    // Given the continue policy (one Continuation after a death, by the default failure limit)
    // and a command that kills its own Run at once
    let world = World::with_companions().await;
    let issue = world.ready_issue("dies at once");
    let config = continue_config(&world);
    let config_arg = config.to_str().unwrap();
    let script = "kill -9 $PPID; sleep 0.2";
    let mut run = world.cli("h1");
    run.args(["--config", config_arg, "run", "--issue", &issue.to_string()]);
    let _run = run.args(["--", "sh", "-c", script]).spawn().unwrap();
    // When each Run dies at once
    // Then the Continuations stop at the limit and the issue goes to people
    let hand_off = "ready-for-human".to_string();
    wait_until("the issue to go to people", Duration::from_secs(60), || {
        world.labels(issue).contains(&hand_off)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let outcomes: Vec<Outcome> = ends(&world, issue).iter().map(|e| e.outcome).collect();
    assert_eq!(outcomes, [Outcome::Continued, Outcome::Recovered]);
    let own = world.ownership(issue);
    assert!(own.owner.is_none(), "no Run holds it");
    assert_eq!(world.labels(issue), vec![hand_off]);
}

fn lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().map(str::to_string).collect()
}

/// Every host report on the registry issue.
fn host_reports(world: &World) -> Vec<Record> {
    (1..=8)
        .flat_map(|n| world.records(n))
        .filter(|r| matches!(r, Record::HostReport(_)))
        .collect()
}

/// The claim ids of `host`'s local records that say active.
fn active_records(world: &World, host: &str) -> Vec<String> {
    let dir = world.state_dir(host);
    let Ok(state) = thirdshift_reconciler::host::StateDir::resolve(Some(&dir)) else {
        return Vec::new();
    };
    state
        .all()
        .into_iter()
        .filter(|c| c.status == thirdshift_reconciler::host::LocalStatus::Active)
        .map(|c| c.record.claim_id)
        .collect()
}

/// Whether the companion of `claim_id` still runs.
fn companion_running(claim_id: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        text.contains(" companion ") && text.contains(claim_id)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_free_slot_the_continuation_waits_for_a_pickup() {
    // Given the continue policy, h1 with one slot taken by a live Run on another issue, and a
    // second Run on h1 (started by hand, over capacity)
    let world = World::with_companions().await;
    let busy = world.ready_issue("keeps the slot");
    let issue = world.ready_issue("no slot to carry on");
    let config = continue_config(&world);
    let config_arg = config.to_str().unwrap();
    let script = "exec sleep 600";
    let _live = start_run_with(&world, "h1", busy, &["--config", config_arg], script).await;
    let run = start_run_with(&world, "h1", issue, &["--config", config_arg], script).await;
    let first = world.ownership(issue).owner.unwrap().record;
    // When the second Run is killed outright
    run.kill_all().await;
    wait_until("the Continuation end", STEP, || {
        !ends(&world, issue).is_empty()
    })
    .await;
    wait_until("h1's companion to finish", STEP, || {
        !companion_running(&first.claim_id)
    })
    .await;
    // Then h1 starts nothing (its one slot is taken) and the issue waits, Ready, for a pickup
    assert!(
        world.ownership(issue).owner.is_none(),
        "nothing started on h1"
    );
    assert!(world.labels(issue).contains(&READY.to_string()));
    // And h2's pickup takes it as a Continuation
    let mut pickup = world.cli("h2");
    pickup.args(["--config", config_arg, "pickup", "--", "sh", "-c", script]);
    let out = pickup.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let next = newer_owner(&world, issue, &first.claim_id).expect("h2's Continuation");
    assert_eq!(next.host, "h2");
    let started = ends(&world, issue)[0].continuation.clone().unwrap().started;
    assert_eq!(started.map(|s| s.by), Some(StartedBy::Pickup));
    hand_back(&world, issue, &next).await;
    let live = world.ownership(busy).owner.unwrap().record;
    hand_back(&world, busy, &live).await;
}
