//! `observe`'s verdicts on this host's Claims, cheap on a busy host. First only the claimed
//! PIDs are read (`/proc/PID/stat`, [`ProcessTable::read_pids`]): a Run whose process runs with
//! its recorded start ticks on this boot is alive, and that is the usual answer. Only a Claim
//! that is not alive that way needs the whole table (sessions and environments, to find its
//! surviving writers, environments only of processes started since the earliest claimed owner,
//! `ProcessTable::read_environ_from`); it is read then, once, and a Claim is reported dead only when a second,
//! fresh read of the whole table agrees. A PID that /proc does not show but the kernel still
//! knows (a process of another user behind `hidepid`) is never called gone.
//!
//! The verdicts are exactly those of judging every Claim on the whole table
//! ([`liveness::judge`]): "alive" depends only on the owner's PID, start ticks and the boot id,
//! which the small read gives as exactly. It writes nothing and decides nothing beyond verdicts.

use anyhow::Context as _;

use super::liveness::judge;
use super::table::ProcessTable;
use super::{LocalClaim, LocalStatus, StateDir};
use crate::protocol::record::{ClaimRecord, DeathReason, Verdict};

/// Judges Claims from one moment's process table, read as little as the verdicts need.
pub struct Judge {
    boot_id: String,
    /// The claimed PIDs only.
    lean: ProcessTable,
    /// The earliest start (ticks since boot) of a claimed owner: no older process can carry a
    /// Claim's marker, so whole reads skip their environments.
    environ_from: u64,
    /// The whole table, read on the first Claim that is not alive.
    first: Option<ProcessTable>,
    /// The whole table again, read on the first Claim the first one finds dead.
    second: Option<ProcessTable>,
}

impl Judge {
    /// Reads the processes `owners` (PID and start ticks of the owners of the Claims to judge,
    /// local ones included).
    pub fn new(owners: impl IntoIterator<Item = (u32, u64)>) -> anyhow::Result<Judge> {
        let owners: Vec<(u32, u64)> = owners.into_iter().collect();
        let pids = owners.iter().map(|(pid, _)| *pid);
        Ok(Judge {
            boot_id: super::identity::boot_id().unwrap_or_default(),
            lean: ProcessTable::read_pids(pids).context("reading this host's processes")?,
            environ_from: owners.iter().map(|(_, ticks)| *ticks).min().unwrap_or(0),
            first: None,
            second: None,
        })
    }

    /// How many whole-table reads the verdicts so far needed (0, 1 or 2).
    pub fn full_reads(&self) -> usize {
        usize::from(self.first.is_some()) + usize::from(self.second.is_some())
    }

    fn whole(&mut self) -> anyhow::Result<&ProcessTable> {
        if self.first.is_none() {
            let table = ProcessTable::read_environ_from(self.environ_from)
                .context("reading this host's process table")?;
            self.first = Some(table);
        }
        Ok(self.first.as_ref().expect("read above"))
    }

    /// This host's verdict on `claim`.
    pub fn verdict(&mut self, claim: &ClaimRecord) -> anyhow::Result<Verdict> {
        let quick = judge(claim, &self.boot_id, &self.lean);
        if quick == Verdict::Alive {
            return Ok(quick);
        }
        let boot_id = self.boot_id.clone();
        let first = judge(claim, &boot_id, self.whole()?);
        if !matches!(first, Verdict::Dead { .. }) {
            return Ok(first);
        }
        if self.second.is_none() {
            let table = ProcessTable::read_environ_from(self.environ_from)
                .context("reading the process table again")?;
            self.second = Some(table);
        }
        let second = judge(claim, &boot_id, self.second.as_ref().expect("read above"));
        if matches!(
            second,
            Verdict::Dead {
                reason: DeathReason::PidGone,
                ..
            }
        ) && hidden_but_alive(claim.pid)
        {
            return Ok(Verdict::WritersAlive {
                pids: vec![claim.pid],
                evidence: format!(
                    "PID {} is not visible in /proc but the kernel still knows it (another \
                     user's process behind hidepid?): not provably gone",
                    claim.pid
                ),
            });
        }
        Ok(second)
    }

    /// This host's local Claims (every repository) whose Run is alive or has writers alive,
    /// as `capacity::live_claims` counts them; the whole table is read only when some local
    /// Claim is not alive on the claimed PIDs alone.
    pub fn live_claims(&mut self, state: &StateDir) -> anyhow::Result<Vec<LocalClaim>> {
        let active = state
            .all()
            .into_iter()
            .filter(|c| matches!(c.status, LocalStatus::Posting | LocalStatus::Active))
            .count();
        let quick = super::capacity::live_claims(state, &self.lean, &self.boot_id);
        if quick.len() == active {
            return Ok(quick);
        }
        let boot_id = self.boot_id.clone();
        Ok(super::capacity::live_claims(state, self.whole()?, &boot_id))
    }
}

/// Whether `pid` exists although /proc does not show it (the kernel answers EPERM, not ESRCH).
fn hidden_but_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return false;
    }
    // SAFETY: signal 0 only checks for existence and permission; nothing is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::ProcessIdentity;
    use crate::protocol::record::claim::tests::sample_claim;

    fn claim_of(pid: u32, start_ticks: u64) -> ClaimRecord {
        ClaimRecord {
            pid,
            start_ticks,
            session_id: None,
            session_start_ticks: None,
            boot_id: crate::host::identity::boot_id().unwrap_or_default(),
            ..sample_claim()
        }
    }

    #[test]
    fn a_running_owner_is_alive_without_reading_the_whole_table() {
        // given a Claim owned by this very process
        let me = ProcessIdentity::current();
        let mut judge = Judge::new([(me.pid, me.start_ticks)]).expect("reads /proc");
        // when it is judged, then it is alive and only its PID was read
        assert_eq!(
            judge
                .verdict(&claim_of(me.pid, me.start_ticks))
                .expect("a verdict"),
            Verdict::Alive
        );
        assert_eq!(judge.full_reads(), 0);
    }

    #[test]
    fn an_owner_with_other_start_ticks_sends_the_judge_to_the_whole_table() {
        // given a Claim naming this PID but another start: the PID was reused
        let me = ProcessIdentity::current();
        let mut judge = Judge::new([(me.pid, me.start_ticks)]).expect("reads /proc");
        // when it is judged
        let verdict = judge
            .verdict(&claim_of(me.pid, me.start_ticks + 1))
            .expect("a verdict");
        // then the whole table was read twice and the Run proven dead, PID reused
        assert!(
            matches!(
                verdict,
                Verdict::Dead {
                    reason: DeathReason::PidReused,
                    ..
                }
            ),
            "{verdict:?}"
        );
        assert_eq!(judge.full_reads(), 2);
    }
}
