//! The words of keeping a stopped Run's work (`crate::ending::keep`): the reason in a salvage commit's
//! subject (`thirdshift: failed run (<reason>)`) for each way a Run stops without delivering, and
//! the report when salvage was not attempted because writers of the Run still ran. No decisions
//! and no IO here; the commit message around the reason is `salvage/commit.rs`.

use super::signal_abbrev;
use crate::protocol::record::DeathReason;

/// A Run proven dead by its host: `killed` or `rebooted`.
pub fn reason_dead(reason: DeathReason) -> String {
    match reason {
        DeathReason::Rebooted => "rebooted",
        DeathReason::PidGone | DeathReason::PidReused => "killed",
    }
    .to_string()
}

/// A Run whose command failed by itself: `exit status 1`, or `killed by SIGKILL`.
pub fn reason_failed(exit_code: Option<i32>, signal: Option<i32>) -> String {
    match (exit_code, signal) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by {}", signal_word(s)),
        (None, None) => "command failed".to_string(),
    }
}

/// A Run stopped by a signal to the Run itself (handed back): `stopped by SIGTERM`.
pub fn reason_stopped(signal: i32) -> String {
    format!("stopped by {}", signal_word(signal))
}

/// `SIGKILL`, or `signal 40` for one without a common name.
fn signal_word(sig: i32) -> String {
    signal_abbrev(sig).map_or_else(|| format!("signal {sig}"), str::to_string)
}

/// A Run stopped by its host on a cancel request (`recover` for `/thirdshift recover --kill`).
pub fn reason_cancelled(recover: bool) -> String {
    if recover {
        "killed on request".to_string()
    } else {
        "cancelled".to_string()
    }
}

/// Why a worktree named on GitHub was left alone: the host has no record of the Claim.
pub fn not_recorded_here(claim_id: &str) -> String {
    format!(
        "this host has no local record of claim {claim_id}: it touches no worktree on GitHub's \
         copy alone, so the worktree named there is left as it is"
    )
}

/// Why a thirdshift Command's worktree was left alone: the path its Command log names at `path`
/// is not where thirdshift makes one (`why`), so nothing was committed or pushed anywhere.
pub fn not_believed(host: &str, path: &str, why: &str) -> String {
    format!(
        "the work was left on host {host}: the worktree {path} named in the Command log is not \
         believed ({why}), so nothing was committed or pushed"
    )
}

/// Why the Run did not salvage its worktree: processes that may still write there outlived the
/// grace period; the work stays where it is.
pub fn writers_left(pids: &[u32], grace_secs: u64) -> String {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!(
        "{} process(es) of the Run's command ({}) still ran {grace_secs} s after it ended and \
         might still write: salvage not attempted",
        pids.len(),
        pids.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_salvage_reason() {
        let lines = [
            reason_dead(DeathReason::PidGone),
            reason_dead(DeathReason::PidReused),
            reason_dead(DeathReason::Rebooted),
            reason_failed(Some(1), None),
            reason_failed(None, Some(9)),
            reason_failed(None, None),
            reason_failed(None, Some(40)),
            reason_stopped(15),
            reason_cancelled(false),
            reason_cancelled(true),
            writers_left(&[4301, 4302], 10),
            not_believed("h1", "/w/widgets-issue-7", "its clone has no origin"),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }
}
