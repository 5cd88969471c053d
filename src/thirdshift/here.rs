//! This host's thirdshift Commands for one repository, ready for `observe`: the records under
//! thirdshift's logs folder (`thirdshift.logs_dir`, else `~/.thirdshift/logs`; none when
//! `thirdshift.adopt` is off or the folder is not there), each unfinished Command recorded by
//! this machine as the claim record it is judged by and the facts the report shows. A record
//! that does not parse, or that another host name recorded, is logged and never acted on.
//!
//! The agent session id is read from the Command's Session log (`protocol::session_log`), line by
//! line up to the first id and at most [`SESSION_LOG_BYTES`] of it: the id is in the first
//! events, and a log can grow large (it is read on every pass while the Command lives).
//!
//! It reads files only; judging is `observe`'s.

use crate::host::HostIdentity;
use crate::protocol::config::ThirdshiftConfig;
use crate::protocol::record::{AdoptedRun, ClaimRecord};

use super::{as_claim, claim_id, commands, default_logs_dir};
use crate::protocol::thirdshift::Found;

/// One of this host's thirdshift Commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adopted {
    pub claim: ClaimRecord,
    /// The system host name thirdshift recorded (this machine's).
    pub hostname: String,
    /// The record file, whose Command log beside it names the worktree.
    pub path: std::path::PathBuf,
    pub facts: AdoptedRun,
}

impl Adopted {
    /// What identifies this Command in our records (adoption, end): this host, its record, PID
    /// and `process_start`.
    pub fn evidence(&self, host: &HostIdentity) -> crate::protocol::record::AdoptedEvidence {
        crate::protocol::record::AdoptedEvidence {
            host: host.host.clone(),
            machine_id: host.machine_id.clone(),
            record: self.facts.record.clone(),
            pid: self.facts.pid,
            process_start: self.facts.process_start.clone(),
        }
    }
}

/// This machine's unfinished thirdshift Commands on repository `owner/name`.
pub fn on_this_host(
    config: &ThirdshiftConfig,
    host: &HostIdentity,
    system_hostname: &str,
    (owner, name): (&str, &str),
) -> Vec<Adopted> {
    if !config.adopt {
        return Vec::new();
    }
    let Some(logs) = config.logs_dir.clone().or_else(default_logs_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for scanned in commands(&logs, owner, name) {
        let command = match scanned.found {
            Found::Command(c) => c,
            Found::Irrelevant => continue,
            Found::Broken(why) => {
                tracing::warn!(record = %scanned.path.display(), "thirdshift record ignored: {why}");
                continue;
            }
        };
        if command.hostname != system_hostname {
            tracing::warn!(
                record = %scanned.path.display(),
                recorded = %command.hostname,
                "thirdshift record of another host ignored"
            );
            continue;
        }
        let id = claim_id(&host.host, &scanned.relative, &command.process_start);
        out.push(Adopted {
            claim: as_claim(&command, host, &id),
            hostname: command.hostname.clone(),
            path: scanned.path,
            facts: AdoptedRun {
                record: scanned.relative,
                kind: command.kind.clone(),
                pid: command.pid,
                process_start: command.process_start.clone(),
                stage: command.stage.as_ref().map(|(n, _)| n.clone()),
                stage_since: command.stage.as_ref().map(|(_, at)| at.clone()),
                harness: Some(command.harness.clone()).filter(|h| !h.is_empty()),
                model: command.model.clone(),
                effort: command.effort.clone(),
                branch: command.issue_branch.clone(),
                pull_request: command.pull_request.clone(),
                session_log: command.session_log.clone(),
                resume: command.resume_command.clone(),
                session: session_of(&command.harness, command.session_log.as_deref()),
            },
        });
    }
    out
}

/// How much of a Session log is read for its session id.
pub const SESSION_LOG_BYTES: u64 = 4 << 20;

/// The session id the Session log at `log` names for `harness`, if it is there and readable.
fn session_of(harness: &str, log: Option<&str>) -> Option<String> {
    use std::io::{BufRead as _, Read as _};
    let file = std::fs::File::open(log?).ok()?;
    let lines = std::io::BufReader::new(file.take(SESSION_LOG_BYTES)).lines();
    crate::protocol::session_log::session_id(harness, lines.map_while(Result::ok))
}
