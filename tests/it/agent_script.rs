//! The reference agent script, `examples/agent.sh`, as the docs run it: `pickup` in the launch
//! clone (a real clone of a real bare origin the emulator reads branches from) with a stand-in
//! Harness (the coding agent's CLI cannot run here) that commits a step, leaves a half-written
//! file and works on. The Run is killed with kill -9; its host's pass pushes the worktree's work
//! to the Issue branch.

use crate::action::{as_cron, cron_host};
use crate::harness::*;
#[allow(dead_code)]
use crate::support::origin;

use std::path::Path;

use origin::Origin;
use thirdshift_reconciler::host::{session_members, signal_session};
use thirdshift_reconciler::protocol::record::{ClaimRecord, Outcome};

/// A stand-in Harness: in the worktree it is started in, one commit and a file left dirty, then
/// its session id written to `mark` and a long sleep (the agent at work).
pub(crate) fn stand_in_harness(dir: &Path, mark: &Path) -> std::path::PathBuf {
    let path = dir.join("harness.sh");
    let _ = std::fs::remove_file(mark);
    let script = format!(
        "#!/bin/sh\nset -e\necho \"run $THIRDSHIFT_RESUMING\" >> step.txt\ngit add step.txt\n\
         git -c user.name=Agent -c user.email=agent@example.com -c commit.gpgSign=false \
         commit -q -m 'agent step'\necho half > draft.txt\n\
         printf '%s %s' \"$THIRDSHIFT_SESSION\" \"$THIRDSHIFT_RESUMING\" > '{}'\nexec sleep 600\n",
        mark.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// `pickup` on h1 in the launch clone with `config`, the reference script and `harness`; waits
/// until the Harness has started (its `mark` written) and returns the Run's claim.
pub(crate) async fn pickup_with_the_script(
    world: &World,
    origin: &Origin,
    config: &Path,
    harness: &Path,
    mark: &Path,
    issue: u64,
) -> ClaimRecord {
    let script = Path::new(ROOT).join("examples/agent.sh");
    let out = world
        .cli("h1")
        .current_dir(&origin.work)
        .arg("--config")
        .arg(config)
        .args(["pickup", "--harness", "claude", "--"])
        .arg(&script)
        .arg(harness)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    wait_until("the Harness to start", STEP, || mark.exists()).await;
    world
        .ownership(issue)
        .owner
        .expect("the Run's Claim")
        .record
}

/// kill -9 of a Run and of its command's whole session, as an OOM kill or a reboot leaves it.
pub(crate) async fn kill_outright(claim: &ClaimRecord) {
    // SAFETY: kill(2) with a PID and a signal number; no memory is shared.
    unsafe { libc::kill(claim.pid as i32, libc::SIGKILL) };
    let sid = claim.session_id.expect("the command's session");
    signal_session(sid, libc::SIGKILL);
    wait_until("the session to be gone", STEP, || {
        session_members(sid).is_empty()
    })
    .await;
}

/// kill -9 of the Run and its command's session, then its host's pass with `config`.
async fn kill_and_pass(world: &World, claim: &ClaimRecord, config: &Path) {
    kill_outright(claim).await;
    let mut pass = world.cli("h1");
    pass.arg("--config")
        .arg(config)
        .args(["observe", "--reconcile"]);
    let out = pass.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// An emulator reading branches from a real origin, a Ready issue, and the stand-in Harness.
async fn given() -> (World, Origin, u64, std::path::PathBuf, std::path::PathBuf) {
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let issue = world.ready_issue("worked by the reference script");
    let mark = world.dir.path().join("harness-started");
    let harness = stand_in_harness(world.dir.path(), &mark);
    (world, origin, issue, harness, mark)
}

/// The pickup line of docs/operations.md's crontab blocks, without its schedule.
fn documented_pickup_command() -> String {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/operations.md")).unwrap();
    let line = (doc.split("```crontab\n").skip(1))
        .flat_map(|block| block.split("```").next().unwrap_or("").lines())
        .find(|line| line.contains(" pickup "))
        .expect("a crontab line running pickup")
        .to_string();
    line.splitn(6, ' ').last().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_pickup_line_with_the_reference_script_has_a_killed_runs_work_pushed() {
    // Given a host set up as docs/operations.md says: the binary, the env file, the launch clone
    // in ~/widgets, the reference script and a (stand-in) Harness in ~/.local/share/thirdshift
    let (world, origin, issue, harness, mark) = given().await;
    let home = cron_host(&world, "h1");
    let shared = home.join(".local/share/thirdshift");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("examples/agent.sh"),
        shared.join("agent.sh"),
    )
    .unwrap();
    std::fs::copy(&harness, shared.join("harness")).unwrap();
    let clone = std::process::Command::new("git")
        .arg("clone")
        .arg("--quiet")
        .arg(&origin.bare)
        .arg(home.join("widgets"))
        .output()
        .unwrap();
    assert!(clone.status.success(), "{}", stderr(&clone));
    // When cron runs the documented pickup line
    let out = as_cron(&home, &documented_pickup_command()).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    wait_until("the Harness to start", STEP, || mark.exists()).await;
    // Then the Claim records the script's worktree, on the Issue branch, and the new session
    let claim = world
        .ownership(issue)
        .owner
        .expect("the Run's Claim")
        .record;
    let worktree = home.join(format!("widgets.worktrees/issue-{issue}"));
    assert_eq!(claim.worktree.as_deref(), Some(worktree.to_str().unwrap()));
    assert_eq!(
        claim.branch.as_deref(),
        Some(format!("issue-{issue}").as_str())
    );
    let session = claim
        .agent_session
        .clone()
        .expect("the session in the Claim");
    assert_eq!(
        std::fs::read_to_string(&mark).unwrap(),
        format!("{session} 0")
    );
    // When the Run and its command's session are killed with kill -9, and its host passes
    let config = config(&world, &[("h1", 1)]);
    kill_and_pass(&world, &claim, &config).await;
    // Then origin's Issue branch holds the Harness's commit and the half-written file
    let log = origin.log(&format!("issue-{issue}"));
    assert_eq!(
        log[..2],
        ["thirdshift: failed run (killed)", "agent step"],
        "{log:?}"
    );
    let end = &ends(&world, issue)[0];
    let kept = end.kept.as_ref().expect("kept work in the end record");
    assert!(kept.pushed, "{kept:?}");
    assert_eq!(end.session.as_deref(), Some(session.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_picked_up_by_the_reference_script_resumes_the_session_in_its_worktree() {
    // Given the continue policy, and a Run of the reference script killed and re-queued
    let (world, origin, issue, harness, mark) = given().await;
    let config = world.dir.path().join("continue.yml");
    let text = "hosts:\n  h1:\n    capacity: 1\nrecovery:\n  on_dead: continue\n";
    std::fs::write(&config, text).unwrap();
    let first = pickup_with_the_script(&world, &origin, &config, &harness, &mark, issue).await;
    kill_and_pass(&world, &first, &config).await;
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Continued);
    // When pickup takes the issue again
    std::fs::remove_file(&mark).unwrap();
    let next = pickup_with_the_script(&world, &origin, &config, &harness, &mark, issue).await;
    // Then the new Run works in the dead Run's worktree and resumes its agent session
    assert_ne!(next.claim_id, first.claim_id);
    assert_eq!(next.worktree, first.worktree);
    let session = first.agent_session.clone().expect("the first session");
    assert_eq!(next.agent_session.as_deref(), Some(session.as_str()));
    assert_eq!(
        std::fs::read_to_string(&mark).unwrap(),
        format!("{session} 1")
    );
    // and the end record notes that pickup started it on h1, as the new claim
    let started = ends(&world, issue)[0].continuation.clone().unwrap().started;
    let started = started.expect("the start noted");
    assert_eq!(started.claim_id, next.claim_id);
    assert_eq!(started.host, "h1");
    assert_eq!(
        started.by,
        thirdshift_reconciler::protocol::record::StartedBy::Pickup
    );
    kill_and_pass(&world, &next, &config).await;
}
