//! Runs and passes for the recovery tests: a real Run started by the binary and killed with real
//! signals, claim records as a host's Run would have posted them, and `observe --reconcile`.

use std::time::Duration;

use thirdshift_reconciler::host::{session_members, signal_session};
use thirdshift_reconciler::host::{HostIdentity, ProcessIdentity};
use thirdshift_reconciler::protocol::record::{ClaimRecord, EndRecord, Record, RunKind};

use super::*;
use thirdshift_reconciler::text::ToComment;

/// A Run started by the real binary, once its command runs in its own session.
pub struct LiveRun {
    pub child: tokio::process::Child,
    pub claim_id: String,
    pub sid: u32,
}

impl LiveRun {
    /// kill -9 of the Run and of its command's whole session; reaps the Run.
    pub async fn kill_all(mut self) {
        // The Run first, so it cannot see its command die and end the Claim itself.
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
        signal_session(self.sid, libc::SIGKILL);
        let sid = self.sid;
        wait_until(
            &format!("session {sid} to be gone after SIGKILL"),
            STEP,
            || session_members(sid).is_empty(),
        )
        .await;
    }

    /// kill -9 of the Run process only; its command's session lives on.
    pub async fn kill_run_only(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// Starts `run` on `host` for `issue` with `script`, and waits until its claim records the
/// command's session.
pub async fn start_run(world: &World, host: &str, issue: u64, script: &str) -> LiveRun {
    start_run_with(world, host, issue, &[], script).await
}

/// `start_run` with more `run` options (e.g. `--worktree`, `--harness`, `--session`).
pub async fn start_run_with(
    world: &World,
    host: &str,
    issue: u64,
    options: &[&str],
    script: &str,
) -> LiveRun {
    let child = run_command(world, host, issue, options, script)
        .spawn()
        .expect("run starts");
    for _ in 0..500 {
        if let Some(owner) = world.ownership(issue).owner {
            if let Some(sid) = owner.record.session_id {
                return LiveRun {
                    child,
                    claim_id: owner.record.claim_id,
                    sid,
                };
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the Run on #{issue} never recorded its session");
}

/// `run --issue N [options] -- sh -c script` of `host`, not started yet.
pub fn run_command(
    world: &World,
    host: &str,
    issue: u64,
    options: &[&str],
    script: &str,
) -> tokio::process::Command {
    let mut cmd = world.cli(host);
    cmd.args(["run", "--issue", &issue.to_string()])
        .args(options)
        .args(["--", "sh", "-c", script]);
    cmd
}

pub fn ends(world: &World, issue: u64) -> Vec<EndRecord> {
    world
        .records(issue)
        .into_iter()
        .filter_map(|r| match r {
            Record::End(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// Writes (anything but GET and GraphQL queries) the emulator received since the log was
/// cleared.
pub fn writes(world: &World) -> Vec<String> {
    world
        .sim
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET" && r.route != "/graphql")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

pub async fn observe_reconcile(world: &World, host: &str) -> std::process::Output {
    let out = world.exec(host, &["observe", "--reconcile"]).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "pass on {host}: {}",
        stderr(&out)
    );
    out
}

/// A claim record of `host` on `machine_id` for `issue`, owned by `owner` in boot `boot`, as
/// our Runs write one (stage `running`, no session, worktree or logs).
pub fn claim_record(
    issue: u64,
    host: &str,
    machine_id: &str,
    owner: ProcessIdentity,
    boot: &str,
    claim_id: &str,
) -> ClaimRecord {
    let now = chrono::Utc::now();
    ClaimRecord {
        claim_id: claim_id.into(),
        issue,
        host: host.into(),
        machine_id: machine_id.into(),
        boot_id: boot.into(),
        pid: owner.pid,
        start_ticks: owner.start_ticks,
        session_id: None,
        session_start_ticks: None,
        kind: RunKind::Ticket,
        harness: None,
        model: None,
        agent_session: None,
        branch: None,
        worktree: None,
        logs: vec![],
        stage: "running".into(),
        stage_since: now,
        claimed_at: now,
        removed_ready: true,
    }
}

/// A claim record as a Run of `host` on this machine would have written it two hours ago (more
/// than a refresh interval: a host that has not reported on it since is awaited, no longer
/// `starting`), posted by the bot.
pub fn posted_claim(
    world: &World,
    issue: u64,
    host: &str,
    owner: ProcessIdentity,
    boot: &str,
) -> String {
    let id = HostIdentity::detect(Some(host));
    let claim_id = format!("c-{issue:016x}");
    let mut claim = claim_record(issue, host, &id.machine_id, owner, boot, &claim_id);
    claim.claimed_at -= chrono::TimeDelta::hours(2);
    claim.stage_since = claim.claimed_at;
    world.sim.add_comment(issue, BOT, &claim.to_comment());
    world.sim.set_labels(issue, &[IN_PROGRESS]);
    claim.claim_id
}

/// `cancel --issue N` from host h2, then one `observe` of h1 (with `config`).
pub async fn cancel_and_observe(world: &World, issue: u64, config: &std::path::Path) {
    let asked = world
        .exec("h2", &["cancel", "--issue", &issue.to_string()])
        .await;
    assert_eq!(asked.status.code(), Some(0), "{}", stderr(&asked));
    let out = world
        .cli("h1")
        .arg("--config")
        .arg(config)
        .arg("observe")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
