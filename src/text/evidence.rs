//! The words of liveness evidence: what a host's verdict on one of its Runs says
//! (`host::liveness`), and what a pass notes about an owner from its host's report
//! (`reconcile::plan`) and answers to `/thirdshift status`. End records, replies and the live
//! view show them. It judges nothing: the verdicts are made where the evidence is.

use crate::protocol::record::Verdict;

/// At most this many PIDs are spelled out in a verdict's evidence; the verdict holds them all.
const PIDS_IN_EVIDENCE: usize = 10;

/// The host booted since the claim.
pub fn rebooted(claimed_boot_id: &str, current_boot_id: &str) -> String {
    format!(
        "host booted since the claim (boot id {} → {})",
        short(claimed_boot_id),
        short(current_boot_id)
    )
}

/// The Run's PID is another process's now. (That process's start ticks stay off GitHub: a
/// forged record could reuse them.)
pub fn pid_reused(pid: u32, start_ticks: u64) -> String {
    format!(
        "PID {pid} now belongs to another process, not the Run that started at tick {start_ticks}"
    )
}

/// No process has the Run's PID.
pub fn pid_gone(pid: u32) -> String {
    format!("no process has PID {pid}")
}

/// The Run's process is gone (`how`) and nothing of it runs.
pub fn no_writer_left(pid: u32, how: &str) -> String {
    format!(
        "Run process {pid} is gone ({how}) and no process of its session or with its claim in \
         the environment runs"
    )
}

/// The Run's process is gone (`how`) but processes of it (`pids`) still run.
pub fn writers_left(pid: u32, how: &str, pids: &[u32]) -> String {
    format!(
        "Run process {pid} is gone ({how}) but {}: {}",
        still_running(pids.len()),
        list(pids)
    )
}

/// A Claim taken after its host's last report: the host names it at its next `observe`.
pub fn starting(host: &str, claim_id: &str) -> String {
    format!(
        "claim {claim_id} was taken after host {host}'s last report: starting, named at the \
         host's next observe"
    )
}

/// An owner whose host has not reported on it.
pub fn not_reported(host: &str, claim_id: &str) -> String {
    format!("host {host} has not reported on claim {claim_id} since it was taken")
}

/// An owner whose host name reports from another machine than the claim's.
pub fn other_machine(host: &str, machine_id: &str, claim_id: &str, claimed_on: &str) -> String {
    format!(
        "the report of host {host} comes from machine {machine_id}, but claim {claim_id} was \
         taken on machine {claimed_on}: not evidence"
    )
}

/// An owner its host reports alive.
pub fn reported_alive(host: &str, claim_id: &str) -> String {
    format!("host {host} reports claim {claim_id} alive")
}

/// An owner its host reports gone with writers alive.
pub fn reported_writers_alive(host: &str, claim_id: &str, evidence: &str) -> String {
    format!(
        "host {host} reports the Run of claim {claim_id} gone but its writers alive: {evidence}"
    )
}

/// `/thirdshift status`: the owner was claimed after its host's last report.
pub fn status_starting() -> String {
    "starting: taken after its host's last report; the host names it at its next observe".into()
}

/// `/thirdshift status`: the owner's host has not reported on it.
pub fn status_awaiting_host() -> String {
    "awaiting host: its host has not reported on this Claim".into()
}

/// `/thirdshift status`: the report under the owner's host name comes from another machine.
pub fn status_host_mismatch(machine_id: &str) -> String {
    format!("host mismatch: the report under its host name comes from {machine_id}")
}

/// `/thirdshift status`: the verdict of the owner's host.
pub fn status_verdict(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Alive => "alive".to_string(),
        Verdict::WritersAlive { evidence, .. } => format!("writers alive: {evidence}"),
        Verdict::Dead { reason, evidence } => format!("dead ({}): {evidence}", reason.as_str()),
    }
}

/// `"1 process of its session still runs"` or `"N processes of its session still run"`.
fn still_running(n: usize) -> String {
    if n == 1 {
        "1 process of its session still runs".to_string()
    } else {
        format!("{n} processes of its session still run")
    }
}

/// `"7, 8, 9"`, or the first few and how many more.
fn list(pids: &[u32]) -> String {
    let shown: Vec<String> = pids
        .iter()
        .take(PIDS_IN_EVIDENCE)
        .map(u32::to_string)
        .collect();
    match pids.len().saturating_sub(PIDS_IN_EVIDENCE) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The first 8 characters of a boot id, marked as cut when longer.
fn short(id: &str) -> String {
    match id.char_indices().nth(8) {
        Some((at, _)) => format!("{}…", &id[..at]),
        None => id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::DeathReason;

    #[test]
    fn every_evidence_sentence() {
        // Given each kind of evidence, when its words are rendered, then they read as below
        let many: Vec<u32> = (101..=112).collect();
        let gone = pid_gone(42);
        let lines = [
            rebooted("0123456789abcdef", "short"),
            pid_reused(42, 123_456),
            gone.clone(),
            no_writer_left(42, &gone),
            writers_left(42, &gone, &[7]),
            writers_left(42, &gone, &many),
            not_reported("h1", "c-1"),
            other_machine("h1", "m-2", "c-1", "m-1"),
            reported_alive("h1", "c-1"),
            reported_writers_alive("h1", "c-1", "Run process 42 is gone"),
            status_awaiting_host(),
            status_host_mismatch("m-2"),
            status_verdict(&Verdict::Alive),
            status_verdict(&Verdict::WritersAlive {
                pids: vec![7],
                evidence: "1 left".into(),
            }),
            status_verdict(&Verdict::Dead {
                reason: DeathReason::PidGone,
                evidence: gone,
            }),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }
}
