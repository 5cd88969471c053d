//! The Run companion: a Run killed outright has its Claim ended with no pass started by anyone,
//! on the same evidence as any pass; a Run whose command still runs is ended only once it exits;
//! a live Run is never ended; a Run that ends its own Claim leaves its companion nothing to do;
//! and a companion killed itself leaves the Claim to the next pass.
//! (The other test files run with companions off, `THIRDSHIFT_COMPANION=off` in the harness, so
//! their passes are the only actors they assert on.)

use crate::harness;

use harness::*;
use thirdshift_reconciler::host::{session_members, signal_session};
use thirdshift_reconciler::protocol::record::{Outcome, Record, Verdict};

/// A Run on `issue` of host h1 with its companion, as every Run has one.
async fn run_with_companion(world: &World, issue: u64, script: &str) -> LiveRun {
    assert!(world.companions);
    start_run(world, "h1", issue, script).await
}

/// The PID of the companion watching claim `claim_id`, once it runs.
async fn companion_of(claim_id: &str) -> u32 {
    let mut found = None;
    wait_until(&format!("the companion of {claim_id}"), STEP, || {
        found = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                text.contains(" companion ") && text.contains(claim_id)
            });
        found.is_some()
    })
    .await;
    found.unwrap()
}

fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_runs_claim_is_ended_with_no_pass_started_by_anyone() {
    let world = World::with_companions().await;
    let (killed, live) = (world.ready_issue("killed"), world.ready_issue("lives"));
    let run = run_with_companion(&world, killed, "sleep 600").await;
    let alive = run_with_companion(&world, live, "sleep 600").await;
    let companion = companion_of(&run.claim_id).await;
    let claim_id = run.claim_id.clone();
    // When the Run and its command's whole session are killed outright
    run.kill_all().await;
    // Then its Claim is ended, recovered, with no pass started by the test, and its companion
    // exits with the Claim
    wait_until("the killed Run's Claim to end", STEP, || {
        !ends(&world, killed).is_empty()
    })
    .await;
    wait_until("the companion to exit", STEP, || gone(companion)).await;
    let end = &ends(&world, killed)[0];
    assert_eq!(end.outcome, Outcome::Recovered, "{end:#?}");
    // And its log says what it did: the Run's end, the proof, the pass that ended the Claim
    let log = thirdshift_reconciler::context::companion::log_of(&world.state_dir("h1"), &claim_id);
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    for step in [
        "the Run's process",
        "observe: dead",
        "reconcile:",
        "recovered",
    ] {
        assert!(
            said.contains(step),
            "{step:?} not in {}: {said}",
            log.display()
        );
    }
    assert_eq!(
        world.labels(killed),
        [READY],
        "nothing started: back in the queue"
    );
    // while the live Run's Claim is untouched
    assert!(ends(&world, live).is_empty());
    assert_eq!(world.labels(live), [IN_PROGRESS]);
    alive.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_command_still_runs_is_ended_only_after_it_exits() {
    let world = World::with_companions().await;
    let issue = world.ready_issue("writers");
    let mut run = run_with_companion(&world, issue, "sleep 600").await;
    // When only the Run is killed: its command lives on, still writing
    run.kill_run_only().await;
    // Then its companion reports it writers alive, and nothing ends it
    let report = |world: &World| {
        (1..=4)
            .flat_map(|n| world.records(n))
            .find_map(|r| match r {
                Record::HostReport(h) if h.host == "h1" => Some(h),
                _ => None,
            })
    };
    wait_until("the companion to report writers alive", STEP, || {
        report(&world).is_some_and(|h| {
            h.claims
                .iter()
                .any(|v| matches!(v.verdict, Verdict::WritersAlive { .. }))
        })
    })
    .await;
    assert!(ends(&world, issue).is_empty(), "not while its command runs");
    // When the command exits too (killed), the companion ends the Claim
    signal_session(run.sid, libc::SIGKILL);
    let sid = run.sid;
    wait_until("the session to be gone", STEP, || {
        session_members(sid).is_empty()
    })
    .await;
    wait_until("the Claim to end", STEP, || !ends(&world, issue).is_empty()).await;
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Recovered);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_companion_leaves_the_claim_to_the_next_pass() {
    let world = World::with_companions().await;
    let issue = world.ready_issue("companion killed");
    let run = run_with_companion(&world, issue, "sleep 600").await;
    let companion = companion_of(&run.claim_id).await;
    // Given the companion is killed first, then the Run and its session
    // SAFETY: kill(2) of the companion this test found by its command line.
    unsafe { libc::kill(companion as i32, libc::SIGKILL) };
    wait_until("the companion to be gone", STEP, || gone(companion)).await;
    run.kill_all().await;
    // When the host only observes: the Run is reported dead, and nothing ends the Claim
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        ends(&world, issue).is_empty(),
        "no companion, no pass: nothing ended"
    );
    // Then the next pass ends it, as it always did
    observe_reconcile(&world, "h1").await;
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Recovered);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ends_normally_leaves_its_companion_nothing_to_do() {
    let world = World::with_companions().await;
    let issue = world.ready_issue("ends normally");
    // Given a Run whose command succeeds once told to, and its companion held stopped until the
    // Run's own requests are counted (so none of the companion's can slip in before the count)
    let go = world.dir.path().join("go");
    let script = format!("while [ ! -f {} ]; do sleep 0.05; done", go.display());
    let mut run = run_with_companion(&world, issue, &script).await;
    let companion = companion_of(&run.claim_id).await;
    // SAFETY: kill(2) of the companion process this test's Run started.
    assert_eq!(unsafe { libc::kill(companion as i32, libc::SIGSTOP) }, 0);
    // When the Run's command succeeds and the Run ends its own Claim
    std::fs::write(&go, "").unwrap();
    let status = run.child.wait().await.unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(ends(&world, issue).len(), 1);
    let requests_at_end = world.sim.requests().len();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(companion as i32, libc::SIGCONT) }, 0);
    // Then its companion exits without a single request to GitHub: no observe, no pass
    wait_until("the companion to exit", STEP, || gone(companion)).await;
    let after: Vec<String> = world.sim.requests()[requests_at_end..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(after.is_empty(), "the companion asked GitHub: {after:?}");
    assert_eq!(ends(&world, issue).len(), 1);
}
