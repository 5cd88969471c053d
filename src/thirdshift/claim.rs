//! A thirdshift Command as a Claim of this host: the claim record our liveness rules judge
//! (`host::judge`), made from the Command record's own evidence, so an adopted Run is
//! judged alive, dead (PID gone, PID reused, rebooted) or writers alive exactly as ours are.
//!
//! Pure: it makes a record; nothing is read or written. Whether the Command is this host's
//! (its recorded host name against this machine's) is the caller's check, before any verdict.

use crate::host::HostIdentity;
use crate::protocol::record::{ClaimRecord, RunKind};
use crate::protocol::thirdshift::{utc, Command};

/// The claim record `command` stands for on `host`, under the claim id `claim_id`
/// ([`super::claim_id`]). thirdshift's Claim removed `ready-for-agent` (it claims only Ready
/// issues), and it records no session of its Harness, so writers are found by its marker.
pub fn as_claim(command: &Command, host: &HostIdentity, claim_id: &str) -> ClaimRecord {
    // A time that does not parse is the epoch: shown, never used to decide anything.
    let time = |text: &str| utc(text).unwrap_or_default();
    let started = time(&command.started_at);
    let (stage, since) = match &command.stage {
        Some((name, at)) => (name.clone(), time(at)),
        None => ("started".to_string(), started),
    };
    ClaimRecord {
        claim_id: claim_id.to_string(),
        issue: command.issue,
        host: host.host.clone(),
        machine_id: host.machine_id.clone(),
        boot_id: command.boot_id.clone(),
        pid: command.pid,
        start_ticks: command.start_ticks,
        session_id: None,
        session_start_ticks: None,
        kind: if command.kind == "Spec" {
            RunKind::Spec
        } else {
            RunKind::Ticket
        },
        harness: Some(command.harness.clone()).filter(|h| !h.is_empty()),
        model: command.model.clone(),
        agent_session: None,
        branch: command.issue_branch.clone(),
        worktree: None,
        logs: command.session_log.iter().cloned().collect(),
        stage,
        stage_since: since,
        claimed_at: started,
        removed_ready: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{judge, ProcessIdentity, ProcessTable};
    use crate::protocol::record::{DeathReason, Verdict};
    use crate::protocol::thirdshift::tests::ticket_record;
    use crate::protocol::thirdshift::{read, Found};

    /// The record of a Command whose process is `p` in boot `boot`.
    fn command_of(p: ProcessIdentity, boot: &str) -> Command {
        let text = ticket_record(None, "")
            .replace(
                "\"process_id\": 4242",
                &format!("\"process_id\": {}", p.pid),
            )
            .replace(
                "8d1f0c2a-6b1e-4f7e-9a3b-2c5d7e9f1a3b:987654",
                &format!("{boot}:{}", p.start_ticks),
            );
        match read(text.as_bytes(), "acme/widgets") {
            Found::Command(c) => *c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_commands_process_is_judged_alive_then_dead_as_our_runs_are() {
        // given a Command whose process runs on this machine in this boot
        let host = HostIdentity::detect(Some("builder-1"));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let p = ProcessIdentity::of(child.id()).expect("it runs");
        let claim = as_claim(&command_of(p, &host.boot_id), &host, "ts-0000000000000001");
        assert!(claim.validate().is_ok(), "a valid claim record");
        assert_eq!(claim.stage, "implementing");
        // then it is alive while the process runs
        let table = ProcessTable::read().unwrap();
        assert_eq!(judge(&claim, &host.boot_id, &table), Verdict::Alive);
        // and dead, its PID gone, once it was killed
        child.kill().unwrap();
        child.wait().unwrap();
        let table = ProcessTable::read().unwrap();
        let verdict = judge(&claim, &host.boot_id, &table);
        assert!(
            matches!(
                verdict,
                Verdict::Dead {
                    reason: DeathReason::PidGone,
                    ..
                }
            ),
            "{verdict:?}"
        );
        // and dead, rebooted, when its process_start names another boot
        let other = as_claim(
            &command_of(p, "00000000-other-boot"),
            &host,
            "ts-0000000000000002",
        );
        let verdict = judge(&other, &host.boot_id, &table);
        assert!(
            matches!(
                verdict,
                Verdict::Dead {
                    reason: DeathReason::Rebooted,
                    ..
                }
            ),
            "{verdict:?}"
        );
    }
}
