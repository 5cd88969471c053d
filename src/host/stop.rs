//! Stopping one of this host's Runs on a cancel request: SIGTERM to the Run process and to every
//! process of its command's session (and to any process that left the session but carries the
//! Claim in its environment), a grace period, then SIGKILL to whatever of the session is left, a
//! second grace for the Run process to hand its issue back by itself, then SIGKILL to the Run.
//!
//! Only processes proven to be the Run's are signalled: the Run process by PID *and* start
//! ticks in this boot, the session only while a member carries the Claim's id in its environment
//! (or is the Run's child), strays only by the Claim's id. A PID or session id now used by
//! someone else is never touched. Deciding whom to signal is pure (`plan`); `stop` sends the
//! signals and waits. Nothing here talks to GitHub or ends the Claim (`crate::observe::cancel` does).
//! `kill` and `stop_processes` stop processes a caller proved its own (a colliding thirdshift
//! Command and its Harness, `crate::observe::stop_collided`), each only while it is that process.

use std::time::Duration;

use anyhow::Context as _;

use super::liveness::judge;
use super::process::{session_members, signal_session, ProcessIdentity, Stat};
use super::table::{ProcessEntry, ProcessTable};
use crate::protocol::config::{Forward, StopPolicy};
use crate::protocol::record::{ClaimRecord, Verdict};

/// How often a stop looks again whether the processes are gone.
const POLL: Duration = Duration::from_millis(50);
/// How long SIGKILL is given to take effect before the survivors are reported.
const AFTER_KILL: Duration = Duration::from_secs(5);

/// The processes of one Run that a stop signals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StopPlan {
    /// The Run process, when it still runs (same PID, same start ticks, same boot).
    pub run: Option<ProcessIdentity>,
    /// CMD's session, when it still has a member that is provably the Run's.
    pub session: Option<u32>,
    /// Processes outside that session carrying the Claim's id in their environment.
    pub strays: Vec<ProcessIdentity>,
}

/// What a stop did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stopped {
    /// Nothing of the Run ran: no signal was sent.
    pub nothing_ran: bool,
    /// Processes still running after the grace periods, sent SIGKILL.
    pub killed: usize,
    /// Processes that survived SIGKILL too (uninterruptible sleep): the stop is not finished.
    pub left: Vec<u32>,
}

impl StopPlan {
    /// Whether nothing of the Run runs.
    pub fn is_empty(&self) -> bool {
        self.run.is_none() && self.session.is_none() && self.strays.is_empty()
    }

    fn run_alive(&self) -> bool {
        self.run.is_some_and(alive)
    }

    /// Whether CMD's session or any stray still runs.
    fn rest_alive(&self) -> bool {
        self.session
            .is_some_and(|sid| !session_members(sid).is_empty())
            || self.strays.iter().any(|p| alive(*p))
    }

    /// Signals the Run process (first, so it forwards the signal and hands its issue back rather
    /// than seeing its command die), then the session and the strays. Returns how many live
    /// processes were signalled.
    fn signal_all(&self, sig: i32) -> usize {
        let run = self.run.map_or(0, |p| send(p, sig));
        run + self.signal_rest(sig)
    }

    /// `forward: leader`: signals the Run process, which forwards the signal to its command
    /// alone; when the Run is gone, the command (its session's leader) itself, if it still
    /// runs. Returns how many processes were signalled.
    fn signal_leader(&self, sig: i32) -> usize {
        if let Some(run) = self.run.filter(|p| alive(*p)) {
            return send(run, sig);
        }
        match self.session {
            Some(sid) if session_members(sid).contains(&sid) => {
                let Some(pid) = crate::host::process::signallable(sid) else {
                    return 0;
                };
                // SAFETY: kill(2) of the session's leader, a member of the session `plan`
                // proved the Run's.
                usize::from(unsafe { libc::kill(pid, sig) } == 0)
            }
            _ => 0,
        }
    }

    fn signal_rest(&self, sig: i32) -> usize {
        // Counted before sending: a process killed at once no longer shows as a member.
        let session = self.session.map_or(0, |sid| {
            let members = session_members(sid).len();
            signal_session(sid, sig);
            members
        });
        session + self.strays.iter().map(|p| send(*p, sig)).sum::<usize>()
    }

    /// PIDs of the planned processes that still run.
    fn survivors(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .run
            .iter()
            .copied()
            .filter(|p| alive(*p))
            .map(|p| p.pid)
            .collect();
        if let Some(sid) = self.session {
            pids.extend(session_members(sid));
        }
        pids.extend(self.strays.iter().filter(|p| alive(**p)).map(|p| p.pid));
        pids.sort_unstable();
        pids.dedup();
        pids
    }
}

/// Whom a stop of `claim`'s Run signals, judged on this host (boot `boot_id`) from `table`.
/// Empty when the Run is proven dead with no writer left, or nothing can be proven its own.
pub fn plan(claim: &ClaimRecord, boot_id: &str, table: &ProcessTable) -> StopPlan {
    if matches!(judge(claim, boot_id, table), Verdict::Dead { .. }) {
        return StopPlan::default();
    }
    let run = table
        .get(claim.pid)
        .filter(|p| p.start_ticks == claim.start_ticks)
        .map(|p| ProcessIdentity {
            pid: p.pid,
            start_ticks: p.start_ticks,
        });
    let session = claim
        .session_id
        .filter(|sid| *sid != 0 && session_is_the_runs(claim, run.is_some(), table, *sid));
    let members = session.map(|sid| table.in_session(sid)).unwrap_or_default();
    let strays = table
        .with_claim_env(&claim.claim_id)
        .into_iter()
        .filter(|pid| Some(*pid) != run.map(|r| r.pid) && !members.contains(pid))
        .filter_map(|pid| table.get(pid))
        .map(|p| ProcessIdentity {
            pid: p.pid,
            start_ticks: p.start_ticks,
        })
        .collect();
    StopPlan {
        run,
        session,
        strays,
    }
}

/// Whether session `sid` is still the Run's: a member carries the Claim's id, or (while the Run
/// runs) a member is the Run's child. A session id is only reused once all its members are gone,
/// so this tells the Run's session from a later one that got the same number.
fn session_is_the_runs(
    claim: &ClaimRecord,
    run_alive: bool,
    table: &ProcessTable,
    sid: u32,
) -> bool {
    table
        .in_session(sid)
        .into_iter()
        .filter_map(|pid| table.get(pid))
        .any(|p| {
            p.claim_id.as_deref() == Some(claim.claim_id.as_str())
                || (run_alive && p.parent_pid == claim.pid)
        })
}

/// Whether `me` (the stopping process) belongs to the Run it would stop: stopping it would stop
/// itself half-way.
fn is_inside(claim: &ClaimRecord, plan: &StopPlan, me: Option<&ProcessEntry>) -> bool {
    me.is_some_and(|me| {
        plan.session == Some(me.session_id)
            || me.claim_id.as_deref() == Some(claim.claim_id.as_str())
    })
}

/// Stops `claim`'s Run: SIGTERM to all of it (with `forward: leader`, to the Run process only,
/// which forwards it to its command alone; to the command itself when the Run is gone), up to
/// the grace for the session to leave, SIGKILL to what is left of it, up to the grace more for
/// the Run process to hand back and exit, SIGKILL to the Run process.
pub async fn stop(claim: &ClaimRecord, policy: StopPolicy) -> anyhow::Result<Stopped> {
    let grace = policy.grace();
    let boot = super::identity::boot_id().unwrap_or_default();
    let table = ProcessTable::read().context("reading this host's process table")?;
    let plan = plan(claim, &boot, &table);
    if plan.is_empty() {
        return Ok(Stopped {
            nothing_ran: true,
            ..Stopped::default()
        });
    }
    if is_inside(claim, &plan, table.get(std::process::id())) {
        anyhow::bail!(
            "this process runs inside the Run of claim {} that it is asked to stop: run observe \
             outside the Run",
            claim.claim_id
        );
    }
    tracing::info!(claim = %claim.claim_id, ?plan, "cancel: sending SIGTERM");
    match policy.forward {
        Forward::Session => plan.signal_all(libc::SIGTERM),
        Forward::Leader => plan.signal_leader(libc::SIGTERM),
    };
    let mut killed = 0;
    if !wait_until(grace, || !plan.rest_alive()).await {
        killed += plan.signal_rest(libc::SIGKILL);
    }
    if !wait_until(grace, || !plan.run_alive()).await {
        killed += plan.run.map_or(0, |p| send(p, libc::SIGKILL));
    }
    if killed > 0 {
        tracing::warn!(claim = %claim.claim_id, killed, "cancel: SIGKILL after the grace");
    }
    wait_until(AFTER_KILL, || plan.survivors().is_empty()).await;
    Ok(Stopped {
        nothing_ran: false,
        killed,
        left: plan.survivors(),
    })
}

/// Stops the processes `ps`, each only while it still is that process: SIGTERM, up to `grace`
/// for them to exit, then SIGKILL to what is left, as a Run's session is stopped. Those still
/// there after SIGKILL are returned. For processes a caller proved to be one Run's (a dead
/// thirdshift Command's Harness); nothing is judged here.
pub async fn stop_processes(ps: &[ProcessIdentity], grace: Duration) -> Vec<u32> {
    let left = |ps: &[ProcessIdentity]| -> Vec<u32> {
        ps.iter().filter(|p| alive(**p)).map(|p| p.pid).collect()
    };
    for p in ps {
        send(*p, libc::SIGTERM);
    }
    if !wait_until(grace, || left(ps).is_empty()).await {
        for p in ps {
            send(*p, libc::SIGKILL);
        }
        wait_until(AFTER_KILL, || left(ps).is_empty()).await;
    }
    left(ps)
}

/// Sends SIGKILL to `p` while it still is that process (same PID and start ticks): a process
/// that must not run its own cleanup. When it leads its process group, the whole group gets it
/// (its own `git` or `gh` calls in flight, never a group it merely belongs to). Whether it was
/// sent.
pub fn kill(p: ProcessIdentity) -> bool {
    let Some(pid) = crate::host::process::signallable(p.pid) else {
        return false;
    };
    if !alive(p) {
        return false;
    }
    // SAFETY: getpgid(2) and kill(2) on the PID checked just above to be `p`.
    let leads = unsafe { libc::getpgid(pid) } == pid;
    let target = if leads { -pid } else { pid };
    unsafe { libc::kill(target, libc::SIGKILL) == 0 }
}

/// Waits until `done` holds or `limit` passes; whether it held.
async fn wait_until(limit: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether the process `p` still runs: same start ticks, not a zombie (a zombie has exited).
fn alive(p: ProcessIdentity) -> bool {
    Stat::read(p.pid)
        .is_some_and(|s| s.start_ticks == p.start_ticks && !matches!(s.state, 'Z' | 'X' | 'x'))
}

/// Sends `sig` to `p` if it still is that process; 1 when sent, else 0.
fn send(p: ProcessIdentity, sig: i32) -> usize {
    let Some(pid) = crate::host::process::signallable(p.pid) else {
        return 0;
    };
    if !alive(p) {
        return 0;
    }
    // SAFETY: kill(2) with a positive PID checked just above to be the planned process.
    usize::from(unsafe { libc::kill(pid, sig) } == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::claim::tests::sample_claim;

    const BOOT: &str = "8d1f0c2a-6b1e-4f7e-9a3b-2c5d7e9f1a3b";
    const CLAIM: &str = "c-0123456789abcdef";

    /// The sample claim: Run 4242 at tick 987654321, CMD's session 4243.
    fn claim() -> ClaimRecord {
        ClaimRecord {
            boot_id: BOOT.into(),
            ..sample_claim()
        }
    }

    fn p(pid: u32, ticks: u64, sid: u32, parent: u32, env: Option<&str>) -> ProcessEntry {
        ProcessEntry {
            pid,
            start_ticks: ticks,
            session_id: sid,
            parent_pid: parent,
            claim_id: env.map(str::to_string),
        }
    }

    fn id(pid: u32, start_ticks: u64) -> ProcessIdentity {
        ProcessIdentity { pid, start_ticks }
    }

    fn plan_of(entries: Vec<ProcessEntry>) -> StopPlan {
        plan(&claim(), BOOT, &ProcessTable::from_entries(entries))
    }

    #[test]
    fn live_run_its_session_and_a_stray_are_all_planned() {
        // given the Run, CMD leading session 4243 with a child, and a harness that left the
        // session but carries the claim
        let got = plan_of(vec![
            p(4242, 987_654_321, 100, 1, None),
            p(4243, 5, 4243, 4242, Some(CLAIM)),
            p(4250, 6, 4243, 4243, Some(CLAIM)),
            p(5000, 7, 5000, 4250, Some(CLAIM)),
        ]);
        // then the Run by identity, the session and the stray are stopped
        assert_eq!(
            got,
            StopPlan {
                run: Some(id(4242, 987_654_321)),
                session: Some(4243),
                strays: vec![id(5000, 7)],
            }
        );
    }

    #[test]
    fn session_of_a_live_run_counts_through_its_child_even_with_a_scrubbed_environment() {
        let got = plan_of(vec![
            p(4242, 987_654_321, 100, 1, None),
            p(4243, 5, 4243, 4242, None),
        ]);
        assert_eq!(got.session, Some(4243));
    }

    #[test]
    fn dead_run_with_writers_left_plans_only_the_writers() {
        // given the Run gone, its session still running with the claim in its environment
        let got = plan_of(vec![p(4250, 6, 4243, 1, Some(CLAIM))]);
        // then only the session is stopped; no PID of the Run is signalled
        assert_eq!(got.run, None);
        assert_eq!(got.session, Some(4243));
        assert!(got.strays.is_empty());
    }

    #[test]
    fn reused_pid_and_reused_session_id_are_never_signalled() {
        // given PID 4242 now held by another process (other start ticks), and session 4243 now
        // an unrelated session: no member carries the claim, none is the Run's child
        let got = plan_of(vec![
            p(4242, 1_000, 4242, 1, None),
            p(4243, 5, 4243, 1, None),
            p(4244, 6, 4243, 4243, Some("c-other")),
        ]);
        // then nothing is planned at all
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn run_from_another_boot_is_never_signalled() {
        // given a process in this boot matching the Run's PID, ticks and claim env
        let entries = vec![
            p(4242, 987_654_321, 100, 1, Some(CLAIM)),
            p(4243, 5, 4243, 4242, Some(CLAIM)),
        ];
        // when the claim was taken in another boot
        let other = ClaimRecord {
            boot_id: "0b7e55aa-1111-2222-3333-444455556666".into(),
            ..claim()
        };
        // then nothing is planned
        assert!(plan(&other, BOOT, &ProcessTable::from_entries(entries)).is_empty());
    }

    #[test]
    fn a_stopper_inside_the_run_is_told_apart() {
        let plan = StopPlan {
            session: Some(4243),
            ..StopPlan::default()
        };
        let inside_session = p(6000, 1, 4243, 4243, None);
        let carrying_claim = p(6000, 1, 6000, 1, Some(CLAIM));
        let outside = p(6000, 1, 6000, 1, Some("c-other"));
        assert!(is_inside(&claim(), &plan, Some(&inside_session)));
        assert!(is_inside(&claim(), &plan, Some(&carrying_claim)));
        assert!(!is_inside(&claim(), &plan, Some(&outside)));
        assert!(!is_inside(&claim(), &plan, None));
    }

    #[tokio::test]
    async fn stop_of_a_run_with_nothing_left_sends_nothing() {
        // given a claim naming a PID that does not exist in this boot
        let boot = crate::host::identity::boot_id().unwrap_or_default();
        let gone = ClaimRecord {
            boot_id: boot,
            pid: u32::MAX - 3,
            session_id: None,
            session_start_ticks: None,
            ..claim()
        };
        // then the stop reports that nothing ran, at once
        let policy = StopPolicy {
            forward: Forward::Session,
            kill_grace_secs: 30,
        };
        let stopped = stop(&gone, policy).await.unwrap();
        assert!(stopped.nothing_ran);
        assert_eq!(stopped.killed, 0);
    }

    /// A shell leading a process group of its own, with a `sleep` in that group: (shell, sleep).
    fn group_with_child() -> (std::process::Child, ProcessIdentity) {
        use std::io::BufRead as _;
        use std::os::unix::process::CommandExt as _;
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 600 & echo $!; wait; exec sleep 600"])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        let out = sh.stdout.take().unwrap();
        std::io::BufReader::new(out).read_line(&mut line).unwrap();
        let child = ProcessIdentity::of(line.trim().parse().unwrap()).unwrap();
        (sh, child)
    }

    fn gone(p: ProcessIdentity) -> bool {
        (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            !alive(p)
        })
    }

    #[test]
    fn kill_reaches_the_group_a_process_leads_and_no_group_it_only_belongs_to() {
        // given a process leading its group, with a child in that group
        let (mut leader, child) = group_with_child();
        // when it is killed, then its child is killed too
        assert!(kill(ProcessIdentity::of(leader.id()).unwrap()));
        leader.wait().unwrap();
        assert!(gone(child), "the group's other process runs on");
        // given a process in a group another leads
        let (mut leader, child) = group_with_child();
        // when it is killed, then only it is
        assert!(kill(child));
        assert!(gone(child));
        assert_eq!(
            leader.try_wait().unwrap(),
            None,
            "the group's leader was killed"
        );
        leader.kill().unwrap();
        leader.wait().unwrap();
    }
}
