//! Liveness verdicts on real processes killed with real signals: a Run process started in a new
//! session with `THIRDSHIFT_CLAIM_ID` (as `run.rs` starts CMD), judged from a fresh read of this
//! host's process table. PID gone, PID reused, rebooted, writers alive through the session or
//! through the claim id in the environment, and zombies counted as gone.
//!
//! This test process makes itself a child subreaper, so that children orphaned by a killed owner
//! are reparented to it and can be reaped here instead of lingering as zombies.

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use chrono::Utc;
use thirdshift_reconciler::host::boot_id;
use thirdshift_reconciler::host::Stat;
use thirdshift_reconciler::host::{judge, ProcessIdentity, ProcessTable};
use thirdshift_reconciler::protocol::record::{
    new_claim_id, ClaimRecord, DeathReason, RunKind, Verdict,
};

/// A process this test started (or adopted as subreaper); killed and reaped on drop unless the
/// test already reaped it, so a failing test leaves nothing running.
struct Proc {
    pid: u32,
    reaped: bool,
}

impl Proc {
    fn kill9(&self) {
        assert!(!self.reaped, "{} was already reaped", self.pid);
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
    }

    /// Blocks until the process has exited, leaving it a zombie (not reaped).
    fn wait_until_zombie(&self) {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOWAIT;
        let rc = unsafe { libc::waitid(libc::P_PID, self.pid, &mut info, flags) };
        assert_eq!(
            rc,
            0,
            "waitid {}: {}",
            self.pid,
            std::io::Error::last_os_error()
        );
    }

    fn reap(&mut self) {
        let rc = unsafe { libc::waitpid(self.pid as libc::pid_t, std::ptr::null_mut(), 0) };
        assert_eq!(rc, self.pid as libc::pid_t, "reaping {}", self.pid);
        self.reaped = true;
    }

    /// Kills it and waits until it is a zombie, then reaps it.
    fn kill_and_reap(&mut self) {
        self.kill9();
        self.wait_until_zombie();
        self.reap();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if !self.reaped {
            unsafe {
                libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
                libc::waitpid(self.pid as libc::pid_t, std::ptr::null_mut(), 0);
            }
        }
    }
}

fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        assert_eq!(rc, 0, "prctl: {}", std::io::Error::last_os_error());
    });
}

/// Starts `argv` as the leader of a new session, with `claim_id` in `THIRDSHIFT_CLAIM_ID` when
/// given. Returns it and, if `reads_pid`, the PID its first output line names.
// `Proc` reaps it with waitpid, so that a test can look at it as a zombie first.
#[allow(clippy::zombie_processes)]
fn start(argv: &[&str], claim_id: Option<&str>, reads_pid: bool) -> (Proc, Option<Proc>) {
    become_subreaper();
    let mut command = Command::new(argv[0]);
    command
        .args(&argv[1..])
        .env_remove("THIRDSHIFT_CLAIM_ID")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if let Some(id) = claim_id {
        command.env("THIRDSHIFT_CLAIM_ID", id);
    }
    // SAFETY: setsid is async-signal-safe; this is how run.rs starts CMD.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().expect("spawn");
    let leader = Proc {
        pid: child.id(),
        reaped: false,
    };
    let stdout = child.stdout.take().expect("piped stdout");
    let other = reads_pid.then(|| {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("reads");
        Proc {
            pid: line.trim().parse().expect("a PID on the first line"),
            reaped: false,
        }
    });
    (leader, other)
}

/// Polls `cond` (setup only, never a verdict) until it holds, or fails naming `what`.
fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn this_boot() -> String {
    boot_id().expect("this test needs /proc/sys/kernel/random/boot_id")
}

/// A claim record naming `owner` (its real start ticks) as its Run process, taken in this boot.
fn claim_for(owner: &Proc, session_id: Option<u32>, claim_id: &str) -> ClaimRecord {
    let identity = ProcessIdentity::of(owner.pid).expect("owner is running");
    ClaimRecord {
        claim_id: claim_id.to_string(),
        issue: 7,
        host: "this-host".into(),
        machine_id: "m".into(),
        boot_id: this_boot(),
        pid: identity.pid,
        start_ticks: identity.start_ticks,
        session_id,
        session_start_ticks: None,
        kind: RunKind::Ticket,
        harness: None,
        model: None,
        agent_session: None,
        branch: None,
        worktree: None,
        logs: vec![],
        stage: "running".into(),
        stage_since: Utc::now(),
        claimed_at: Utc::now(),
        removed_ready: true,
    }
}

/// The verdict from a fresh read of this host's process table.
fn verdict(claim: &ClaimRecord) -> Verdict {
    let table = ProcessTable::read().expect("reads the process table");
    judge(claim, &this_boot(), &table)
}

fn assert_dead(verdict: &Verdict, want: DeathReason) -> String {
    match verdict {
        Verdict::Dead { reason, evidence } if *reason == want => evidence.clone(),
        other => panic!("expected dead ({want:?}), got {other:?}"),
    }
}

#[test]
fn owner_killed_with_nothing_left_is_dead_pid_gone_even_while_a_zombie() {
    // given a Run process alone in its new session, carrying its claim id
    let claim_id = new_claim_id();
    let (mut owner, _) = start(&["sleep", "1000"], Some(&claim_id), false);
    let claim = claim_for(&owner, Some(owner.pid), &claim_id);
    assert_eq!(verdict(&claim), Verdict::Alive);
    // when it is killed with SIGKILL and not yet reaped
    owner.kill9();
    owner.wait_until_zombie();
    assert_eq!(Stat::read(owner.pid).map(|s| s.state), Some('Z'));
    // then its zombie does not count as alive: the Claim is dead, PID gone
    let evidence = assert_dead(&verdict(&claim), DeathReason::PidGone);
    assert!(evidence.contains(&owner.pid.to_string()), "{evidence}");
    // and once reaped it is still dead, PID gone
    owner.reap();
    assert_dead(&verdict(&claim), DeathReason::PidGone);
}

#[test]
fn killed_owner_with_a_live_session_member_has_writers_alive_until_it_dies() {
    // given a Run process whose child runs in its session without the claim id in its
    // environment (so only the session can find it)
    let claim_id = new_claim_id();
    let script = "env -u THIRDSHIFT_CLAIM_ID sleep 1000 & echo $!; wait";
    let (mut owner, child) = start(&["sh", "-c", script], Some(&claim_id), true);
    let mut child = child.expect("child PID");
    wait_for("the child to exec sleep", || comm(child.pid) == "sleep");
    assert_eq!(Stat::read(child.pid).map(|s| s.session), Some(owner.pid));
    let claim = claim_for(&owner, Some(owner.pid), &claim_id);
    // when the Run process is killed with SIGKILL (and reaped)
    owner.kill_and_reap();
    // then the Claim is not dead: its session's writer is alive
    match verdict(&claim) {
        Verdict::WritersAlive { pids, evidence } => {
            assert_eq!(pids, vec![child.pid], "{evidence}");
            assert!(evidence.contains(&owner.pid.to_string()), "{evidence}");
        }
        other => panic!("expected writers alive, got {other:?}"),
    }
    // and when the child is killed too, the Claim is dead, PID gone
    child.kill9();
    child.wait_until_zombie();
    assert_dead(&verdict(&claim), DeathReason::PidGone);
    child.reap();
    assert_dead(&verdict(&claim), DeathReason::PidGone);
}

#[test]
fn survivor_that_left_the_session_is_found_by_its_claim_id() {
    // given a Run process whose child called setsid (left the session) but keeps the claim id
    let claim_id = new_claim_id();
    let script = "setsid sleep 1000 & echo $!; wait";
    let (mut owner, child) = start(&["sh", "-c", script], Some(&claim_id), true);
    let mut child = child.expect("child PID");
    wait_for("the child to be sleep in its own session", || {
        comm(child.pid) == "sleep" && Stat::read(child.pid).is_some_and(|s| s.session == child.pid)
    });
    let claim = claim_for(&owner, Some(owner.pid), &claim_id);
    // when the Run process is killed with SIGKILL
    owner.kill_and_reap();
    // then the child outside the session is still found as a writer
    match verdict(&claim) {
        Verdict::WritersAlive { pids, .. } => assert_eq!(pids, vec![child.pid]),
        other => panic!("expected writers alive, got {other:?}"),
    }
    // and when it dies, the Claim is dead
    child.kill_and_reap();
    assert_dead(&verdict(&claim), DeathReason::PidGone);
}

#[test]
fn live_process_with_other_start_ticks_is_dead_pid_reused() {
    // given a running process that does not belong to any Run
    let (stranger, _) = start(&["sleep", "1000"], None, false);
    // and a claim naming its PID but another start time (the Run's, before the PID was reused)
    let mut claim = claim_for(&stranger, None, &new_claim_id());
    let real_ticks = claim.start_ticks;
    claim.start_ticks = real_ticks.saturating_sub(1);
    // when judged
    let evidence = assert_dead(&verdict(&claim), DeathReason::PidReused);
    // then the evidence names the PID and the Run's start time, never the other process's (a
    // forged record could reuse it)
    assert!(evidence.contains(&stranger.pid.to_string()), "{evidence}");
    assert!(!evidence.contains(&real_ticks.to_string()), "{evidence}");
    assert!(
        evidence.contains(&claim.start_ticks.to_string()),
        "{evidence}"
    );
}

#[test]
fn claim_from_another_boot_is_dead_rebooted_even_if_its_pid_runs() {
    // given a live Run process carrying its claim id, in its own session
    let claim_id = new_claim_id();
    let (owner, _) = start(&["sleep", "1000"], Some(&claim_id), false);
    // and a claim naming it but taken in another boot
    let claim = ClaimRecord {
        boot_id: "00000000-0000-4000-8000-000000000000".into(),
        ..claim_for(&owner, Some(owner.pid), &claim_id)
    };
    // when judged in this boot
    let evidence = assert_dead(&verdict(&claim), DeathReason::Rebooted);
    // then it is dead because the host rebooted
    assert!(evidence.contains("00000000…"), "{evidence}");
}

#[test]
fn the_reading_process_is_never_a_writer_of_its_own_session() {
    // given a claim whose session is this test process's own, and whose owner is gone
    let (mut gone, _) = start(&["true"], None, false);
    let own_session = Stat::read(std::process::id()).expect("own stat").session;
    let mut claim = claim_for(&gone, Some(own_session), &new_claim_id());
    gone.reap();
    // when judged from a table this process read
    // then this process is not among the writers, whatever else runs in its session
    match verdict(&claim) {
        Verdict::WritersAlive { pids, .. } => assert!(!pids.contains(&std::process::id())),
        Verdict::Dead { reason, .. } => assert_eq!(reason, DeathReason::PidGone),
        Verdict::Alive => panic!("the owner was reaped"),
    }
    claim.session_id = None;
    assert_dead(&verdict(&claim), DeathReason::PidGone);
}
