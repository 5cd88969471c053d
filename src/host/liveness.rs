//! The liveness verdict on one of this host's Claims, judged from evidence only: the boot id, the
//! owning Run process's PID and exact start ticks, and which processes of the Run still run (its
//! session, and anything carrying its claim id in the environment, which finds a harness child
//! that left the session after its parent died).
//!
//! It is pure over a [`ProcessTable`] snapshot: no IO, no clock. Nothing here looks at an age, a
//! heartbeat or a timestamp; the only comparison that is not about processes is the boot id. It
//! does not act on a verdict (ending Claims is reconcile's job, salvage is `crate::ending::keep`'s) and does not
//! handle cancel requests.

use std::collections::BTreeSet;

use super::table::ProcessTable;
use crate::protocol::record::{ClaimRecord, DeathReason, Verdict};
use crate::text::evidence as text;

/// This host's verdict on `claim`, taken on this host (boot `current_boot_id`) from `table`.
///
/// - another boot: dead, rebooted (no process survives a reboot);
/// - owner PID running with the recorded start ticks: alive;
/// - otherwise the owner is dead (PID reused, or PID gone), and the Run is dead only when no
///   process of its session and none carrying its claim id runs; else its writers are alive.
pub fn judge(claim: &ClaimRecord, current_boot_id: &str, table: &ProcessTable) -> Verdict {
    if proves_reboot(&claim.boot_id, current_boot_id) {
        return Verdict::Dead {
            reason: DeathReason::Rebooted,
            evidence: text::rebooted(&claim.boot_id, current_boot_id),
        };
    }
    let pid = claim.pid;
    let (reason, how) = match table.get(pid) {
        Some(p) if p.start_ticks == claim.start_ticks => return Verdict::Alive,
        Some(_) => (
            DeathReason::PidReused,
            text::pid_reused(pid, claim.start_ticks),
        ),
        None => (DeathReason::PidGone, text::pid_gone(pid)),
    };
    let pids = writers(claim, table);
    if pids.is_empty() {
        return Verdict::Dead {
            reason,
            evidence: text::no_writer_left(pid, &how),
        };
    }
    let evidence = text::writers_left(pid, &how, &pids);
    Verdict::WritersAlive { pids, evidence }
}

/// A different boot id proves a reboot only when both ids are known.
fn proves_reboot(claimed: &str, current: &str) -> bool {
    let known = |id: &str| !id.trim().is_empty() && id != "unknown";
    known(claimed) && known(current) && claimed != current
}

/// Processes that may still write for the Run: its session's members and every process carrying
/// its claim id, ascending. A reused owner PID is in neither unless it really belongs to the Run.
pub fn writers(claim: &ClaimRecord, table: &ProcessTable) -> Vec<u32> {
    let mut pids = BTreeSet::new();
    // Session 0 holds the kernel's threads, never a Run's processes.
    if let Some(sid) = claim.session_id.filter(|sid| *sid != 0) {
        if !session_reused(claim, sid, table) {
            pids.extend(table.in_session(sid));
        }
    }
    pids.extend(table.with_claim_env(&claim.claim_id));
    pids.into_iter().collect()
}

/// Whether session `sid` is a later one that got the number of the Run's: its leader (PID `sid`)
/// runs but started at another tick than the Run's CMD. The kernel reuses a session's number only
/// once every process of that session is gone, so none of the Run's is left in it. Without the
/// recorded tick (older claims) a session is taken for the Run's.
fn session_reused(claim: &ClaimRecord, sid: u32, table: &ProcessTable) -> bool {
    match (claim.session_start_ticks, table.get(sid)) {
        (Some(ticks), Some(leader)) => leader.start_ticks != ticks,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::table::ProcessEntry;
    use crate::protocol::record::claim::tests::sample_claim;

    const BOOT: &str = "8d1f0c2a-6b1e-4f7e-9a3b-2c5d7e9f1a3b";
    const OTHER_BOOT: &str = "0b7e55aa-1111-2222-3333-444455556666";

    /// The sample claim: Run process 4242 started at tick 987654321, CMD's session 4243, claim
    /// `c-0123456789abcdef`, taken in boot `BOOT`.
    fn claim() -> ClaimRecord {
        ClaimRecord {
            boot_id: BOOT.into(),
            ..sample_claim()
        }
    }

    fn process(
        pid: u32,
        start_ticks: u64,
        session_id: u32,
        claim_id: Option<&str>,
    ) -> ProcessEntry {
        ProcessEntry {
            pid,
            start_ticks,
            session_id,
            parent_pid: 1,
            claim_id: claim_id.map(str::to_string),
        }
    }

    /// The Run process exactly as the claim names it.
    fn owner() -> ProcessEntry {
        process(4242, 987_654_321, 900, None)
    }

    fn table(entries: Vec<ProcessEntry>) -> ProcessTable {
        ProcessTable::from_entries(entries)
    }

    fn dead(verdict: &Verdict) -> (DeathReason, &str) {
        match verdict {
            Verdict::Dead { reason, evidence } => (*reason, evidence.as_str()),
            other => panic!("expected dead, got {other:?}"),
        }
    }

    #[test]
    fn claim_from_another_boot_is_dead_rebooted() {
        // given the claim's boot, and a process in this boot that happens to match its PID,
        // start ticks, session and claim id
        let t = table(vec![
            owner(),
            process(4300, 5, 4243, Some(&claim().claim_id)),
        ]);
        // when it is judged in another boot
        let verdict = judge(&claim(), OTHER_BOOT, &t);
        // then it is dead because the host rebooted, whatever the table says
        let (reason, evidence) = dead(&verdict);
        assert_eq!(reason, DeathReason::Rebooted);
        assert_eq!(
            evidence,
            "host booted since the claim (boot id 8d1f0c2a… → 0b7e55aa…)"
        );
    }

    #[test]
    fn unknown_boot_id_proves_no_reboot() {
        // given a live owner, and a host whose boot id could not be read
        let t = table(vec![owner()]);
        // when judged with an unknown current boot id
        // then the owner's process decides, not the missing boot id
        assert_eq!(judge(&claim(), "unknown", &t), Verdict::Alive);
        assert_eq!(judge(&claim(), "", &t), Verdict::Alive);
    }

    #[test]
    fn same_pid_same_start_is_alive() {
        // given the owner running with the recorded start ticks
        let t = table(vec![owner()]);
        // when judged in the same boot
        // then the Claim is alive
        assert_eq!(judge(&claim(), BOOT, &t), Verdict::Alive);
    }

    #[test]
    fn live_pid_with_other_start_ticks_is_dead_pid_reused() {
        // given PID 4242 held by a process that started at another tick, outside the Run
        let t = table(vec![process(4242, 1_000, 4242, None)]);
        // when judged
        let verdict = judge(&claim(), BOOT, &t);
        // then the owner is dead because its PID was reused; the evidence names the PID and the
        // Run's ticks, never the other process's (a forged record could reuse them)
        let (reason, evidence) = dead(&verdict);
        assert_eq!(reason, DeathReason::PidReused);
        assert!(evidence.contains("4242"), "{evidence}");
        assert!(!evidence.contains("1000"), "{evidence}");
        assert!(evidence.contains("987654321"), "{evidence}");
    }

    #[test]
    fn missing_pid_is_dead_pid_gone() {
        // given no process with the owner's PID, and nothing of its session or claim
        let t = table(vec![
            process(1, 1, 1, None),
            process(4300, 5, 4300, Some("c-other")),
        ]);
        // when judged
        let verdict = judge(&claim(), BOOT, &t);
        // then the owner is dead because its PID is gone
        let (reason, evidence) = dead(&verdict);
        assert_eq!(reason, DeathReason::PidGone);
        assert!(evidence.contains("4242"), "{evidence}");
    }

    #[test]
    fn dead_owner_with_live_session_member_has_writers_alive() {
        // given the owner gone, and two processes of CMD's session 4243 (no claim env) running
        let t = table(vec![
            process(4243, 7, 4243, None),
            process(4250, 9, 4243, None),
        ]);
        // when judged
        let verdict = judge(&claim(), BOOT, &t);
        // then its writers are alive, naming both
        let Verdict::WritersAlive { pids, evidence } = verdict else {
            panic!("expected writers alive, got {verdict:?}");
        };
        assert_eq!(pids, vec![4243, 4250]);
        assert_eq!(
            evidence,
            "Run process 4242 is gone (no process has PID 4242) but 2 processes of its session \
             still run: 4243, 4250"
        );
    }

    #[test]
    fn survivor_that_left_the_session_is_found_by_claim_env() {
        // given the owner gone, nothing left in session 4243, but a process in its own session
        // 5000 that carries the claim id
        let t = table(vec![process(5000, 7, 5000, Some(&claim().claim_id))]);
        // when judged
        let verdict = judge(&claim(), BOOT, &t);
        // then that process is a writer
        let Verdict::WritersAlive { pids, evidence } = verdict else {
            panic!("expected writers alive, got {verdict:?}");
        };
        assert_eq!(pids, vec![5000]);
        assert!(
            evidence.ends_with("1 process of its session still runs: 5000"),
            "{evidence}"
        );
    }

    #[test]
    fn reused_pid_of_unrelated_process_is_not_a_writer() {
        // given PID 4242 reused by an unrelated process (own session, no claim env), and no
        // other process of the Run
        let t = table(vec![process(4242, 1_000, 4242, Some("c-other"))]);
        // when judged
        let verdict = judge(&claim(), BOOT, &t);
        // then the Run is dead, not kept alive by the stranger holding its old PID
        assert_eq!(dead(&verdict).0, DeathReason::PidReused);
    }

    #[test]
    fn reused_pid_carrying_the_claim_is_a_writer() {
        // given PID 4242 reused by a process of the Run itself (it carries the claim id)
        let t = table(vec![process(4242, 1_000, 5000, Some(&claim().claim_id))]);
        // then it is a writer of the Run
        let verdict = judge(&claim(), BOOT, &t);
        assert!(
            matches!(&verdict, Verdict::WritersAlive { pids, .. } if pids == &vec![4242]),
            "{verdict:?}"
        );
    }

    #[test]
    fn claim_without_a_session_looks_only_at_the_claim_env() {
        // given a claim taken before CMD started (no session yet), the owner gone, and an
        // unrelated session 4243
        let claim = ClaimRecord {
            session_id: None,
            ..claim()
        };
        let t = table(vec![process(4243, 7, 4243, None)]);
        // then nothing is a writer
        assert_eq!(dead(&judge(&claim, BOOT, &t)).0, DeathReason::PidGone);
    }

    #[test]
    fn many_writers_are_all_kept_but_only_the_first_ten_spelled_out() {
        let t = table((0..12).map(|i| process(5000 + i, 1, 4243, None)).collect());
        let Verdict::WritersAlive { pids, evidence } = judge(&claim(), BOOT, &t) else {
            panic!("expected writers alive");
        };
        assert_eq!(pids.len(), 12);
        assert!(evidence.ends_with("5009 and 2 more"), "{evidence}");
        assert!(evidence.contains("12 processes"), "{evidence}");
    }

    #[test]
    fn a_later_session_that_got_the_runs_session_number_is_not_a_writer() {
        // given a dead Run whose CMD (session 4243) started at tick 555, and a later session
        // 4243 whose leader started at tick 9000, with a member
        let claim = ClaimRecord {
            session_start_ticks: Some(555),
            ..claim()
        };
        let t = table(vec![
            process(4243, 9_000, 4243, None),
            process(4300, 9_001, 4243, None),
        ]);
        // then the Run is dead: none of its processes runs
        let verdict = judge(&claim, BOOT, &t);
        assert!(matches!(verdict, Verdict::Dead { .. }), "{verdict:?}");
    }

    #[test]
    fn the_runs_own_session_with_its_leader_is_a_writer() {
        // given a dead Run whose CMD (session 4243, tick 555) still runs with a child
        let claim = ClaimRecord {
            session_start_ticks: Some(555),
            ..claim()
        };
        let t = table(vec![
            process(4243, 555, 4243, None),
            process(4300, 600, 4243, None),
        ]);
        // then both are its writers
        let verdict = judge(&claim, BOOT, &t);
        assert!(
            matches!(&verdict, Verdict::WritersAlive { pids, .. } if pids == &vec![4243, 4300]),
            "{verdict:?}"
        );
    }

    #[test]
    fn a_session_whose_leader_is_gone_still_counts_its_members() {
        // given a dead Run whose CMD (session 4243) exited, leaving a harness child in it
        let claim = ClaimRecord {
            session_start_ticks: Some(555),
            ..claim()
        };
        let t = table(vec![process(4300, 600, 4243, None)]);
        // then the child is a writer: the session's number cannot have been reused while it runs
        let verdict = judge(&claim, BOOT, &t);
        assert!(
            matches!(&verdict, Verdict::WritersAlive { pids, .. } if pids == &vec![4300]),
            "{verdict:?}"
        );
    }
}
