//! One thirdshift Command record (`<stamp>.command.json`), read as thirdshift 0.19.0 writes it
//! (`src/logs/command_record.rs`: a `CommandTree`, the top `CommandRecord` flattened with its
//! `dispatched` child records). The active record is the last dispatched one without an outcome,
//! else the top one (`CommandTree::active_ref`). Only the fields this tool uses are read, and
//! unknown ones are tolerated, so a newer thirdshift's extra fields do not break it.
//!
//! Pure: bytes in, a [`Found`] out. No file or process is touched here.

use chrono::{DateTime, Utc};
use serde::Deserialize;

/// What a Command record file holds, for this tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// An unfinished Command on an issue of the repository asked about.
    Command(Box<Command>),
    /// Finished, about no issue, or about another repository: nothing to judge.
    Irrelevant,
    /// Not a Command record this reader understands: reported, never acted on.
    Broken(String),
}

/// An unfinished thirdshift Command on an issue: the evidence to judge its process, and what
/// the live view shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// `Ticket`, `Spec`, `Pickup`, … (thirdshift's `kind` of the active record).
    pub kind: String,
    pub issue: u64,
    /// The system host name thirdshift recorded (`gethostname`).
    pub hostname: String,
    pub pid: u32,
    /// `process_start` as thirdshift wrote it: `<boot_id>:<start ticks>`.
    pub process_start: String,
    pub boot_id: String,
    pub start_ticks: u64,
    pub harness: String,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub started_at: String,
    /// The last stage begun, and when.
    pub stage: Option<(String, String)>,
    pub session_log: Option<String>,
    pub resume_command: Option<String>,
    pub issue_branch: Option<String>,
    pub pull_request: Option<String>,
}

/// The fields of thirdshift's `CommandRecord` this tool reads.
#[derive(Deserialize)]
struct Raw {
    kind: String,
    repository: String,
    issue: Option<RawIssue>,
    hostname: String,
    process_id: u32,
    process_start: String,
    harness: String,
    model: Option<String>,
    effort: Option<String>,
    started_at: String,
    #[serde(default)]
    stages: Vec<RawStage>,
    session_log: Option<String>,
    outcome: Option<String>,
    #[serde(default)]
    resume_command: Option<String>,
    issue_branch: Option<String>,
    pull_request: Option<String>,
}

#[derive(Deserialize)]
struct RawIssue {
    number: u64,
}

#[derive(Deserialize)]
struct RawStage {
    name: String,
    began_at: String,
}

/// Reads the record `bytes` for repository `repo` (`owner/name`, compared case-insensitively).
pub fn read(bytes: &[u8], repo: &str) -> Found {
    let tree: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Found::Broken(format!("not JSON: {e}")),
    };
    let top: Raw = match serde_json::from_value(tree.clone()) {
        Ok(r) => r,
        Err(e) => return Found::Broken(format!("not a thirdshift Command record: {e}")),
    };
    if !top.repository.eq_ignore_ascii_case(repo) {
        return Found::Irrelevant;
    }
    let dispatched = tree.get("dispatched").cloned().unwrap_or_default();
    let children: Vec<Raw> = match serde_json::from_value(dispatched) {
        Ok(c) => c,
        Err(e) => return Found::Broken(format!("its dispatched records: {e}")),
    };
    let active = children
        .into_iter()
        .rev()
        .find(|c| c.outcome.is_none())
        .unwrap_or(top);
    command_of(active)
}

fn command_of(raw: Raw) -> Found {
    let (Some(issue), None) = (&raw.issue, &raw.outcome) else {
        return Found::Irrelevant;
    };
    let Some((boot_id, ticks)) = raw.process_start.rsplit_once(':') else {
        return Found::Broken(format!(
            "process_start `{}` is not `<boot id>:<ticks>`",
            raw.process_start
        ));
    };
    let Ok(start_ticks) = ticks.parse::<u64>() else {
        return Found::Broken(format!("process_start ticks `{ticks}` are not a number"));
    };
    if raw.process_id <= 1 || boot_id.is_empty() {
        return Found::Broken(format!(
            "process {} started {} cannot be a Command's",
            raw.process_id, raw.process_start
        ));
    }
    let stage = raw
        .stages
        .last()
        .map(|s| (s.name.clone(), s.began_at.clone()));
    Found::Command(Box::new(Command {
        kind: raw.kind,
        issue: issue.number,
        hostname: raw.hostname,
        pid: raw.process_id,
        boot_id: boot_id.to_string(),
        start_ticks,
        process_start: raw.process_start.clone(),
        harness: raw.harness,
        model: raw.model,
        effort: raw.effort,
        started_at: raw.started_at,
        stage,
        session_log: raw.session_log,
        resume_command: raw.resume_command,
        issue_branch: raw.issue_branch,
        pull_request: raw.pull_request,
    }))
}

/// A time as thirdshift writes it (RFC 3339 with its local offset), in UTC.
pub fn utc(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The claim id of a Command: the same on every pass and every host that reads the same record
/// (`host`, the record's path under the logs folder, and its `process_start`), and a valid claim
/// id (`ts-` and 16 hex digits).
pub fn claim_id(host: &str, record: &str, process_start: &str) -> String {
    let h =
        crate::protocol::fingerprint::fnv1a64([host, record, process_start].join("\0").as_bytes());
    format!("ts-{h:016x}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record as thirdshift 0.19.0's recorder writes one (`CommandRecord::new`, then
    /// `start_record` sets hostname and process_start; `serde_json::to_vec_pretty` of a
    /// `CommandTree`), for a Ticket run on acme/widgets#7 at the stage `implementing`.
    pub(crate) fn ticket_record(outcome: Option<&str>, dispatched: &str) -> String {
        let outcome = outcome.map_or("null".to_string(), |o| format!("\"{o}\""));
        format!(
            r#"{{
  "version": 2,
  "kind": "Ticket",
  "repository": "acme/widgets",
  "name": "acme/widgets#7",
  "issue": {{ "number": 7, "url": "https://github.com/acme/widgets/issues/7", "title": null }},
  "hostname": "builder-1",
  "process_id": 4242,
  "process_start": "8d1f0c2a-6b1e-4f7e-9a3b-2c5d7e9f1a3b:987654",
  "harness": "claude",
  "model": "opus",
  "effort": null,
  "started_at": "2026-12-04T10:00:00+00:00",
  "ended_at": null,
  "stages": [
    {{ "name": "claiming", "began_at": "2026-12-04T10:00:01+00:00", "session_log": null }},
    {{ "name": "implementing", "began_at": "2026-12-04T10:00:05+00:00", "session_log": null }}
  ],
  "session_log": "/home/u/.thirdshift/logs/acme/widgets/commands/issue/7-x.log",
  "outcome": {outcome},
  "run_metrics": null,
  "cause": null,
  "issue_branch": "issue-7",
  "pull_request": null,
  "parent_record": null,
  "parent_dispatch": null,
  "tickets": [],
  "security_findings_waiting": false,
  "dispatched": [{dispatched}]
}}"#
        )
    }

    fn command(found: Found) -> Command {
        match found {
            Found::Command(c) => *c,
            other => panic!("expected a Command, got {other:?}"),
        }
    }

    #[test]
    fn an_unfinished_ticket_record_is_a_command_with_its_process_and_stage() {
        let c = command(read(ticket_record(None, "").as_bytes(), "Acme/Widgets"));
        assert_eq!((c.kind.as_str(), c.issue, c.pid), ("Ticket", 7, 4242));
        assert_eq!(c.boot_id, "8d1f0c2a-6b1e-4f7e-9a3b-2c5d7e9f1a3b");
        assert_eq!(c.start_ticks, 987_654);
        assert_eq!(c.hostname, "builder-1");
        let stage = c.stage.expect("a stage");
        assert_eq!(
            stage,
            ("implementing".into(), "2026-12-04T10:00:05+00:00".into())
        );
        assert_eq!(c.issue_branch.as_deref(), Some("issue-7"));
        assert_eq!(
            (c.harness.as_str(), c.model.as_deref()),
            ("claude", Some("opus"))
        );
    }

    #[test]
    fn a_finished_record_or_another_repositorys_is_nothing_to_judge() {
        let done = ticket_record(Some("merged"), "");
        assert_eq!(read(done.as_bytes(), "acme/widgets"), Found::Irrelevant);
        let open = ticket_record(None, "");
        assert_eq!(read(open.as_bytes(), "acme/gadgets"), Found::Irrelevant);
    }

    #[test]
    fn a_pickups_active_dispatched_record_is_the_command() {
        // given a Pickup whose first dispatched Run ended and whose second still runs
        let child = |n: u64, outcome: &str| {
            ticket_record(Some("x"), "")
                .replace("\"number\": 7", &format!("\"number\": {n}"))
                .replace("\"outcome\": \"x\"", &format!("\"outcome\": {outcome}"))
        };
        let dispatched = format!("{}, {}", child(8, "\"failed\""), child(9, "null"));
        let pickup = ticket_record(None, &dispatched)
            .replace("\"kind\": \"Ticket\"", "\"kind\": \"Pickup\"")
            .replacen("\"issue\": { \"number\": 7, \"url\": \"https://github.com/acme/widgets/issues/7\", \"title\": null }", "\"issue\": null", 1);
        // then the Command is the running child's, on its issue
        let c = command(read(pickup.as_bytes(), "acme/widgets"));
        assert_eq!(c.issue, 9);
    }

    #[test]
    fn what_is_not_a_command_record_is_broken_and_says_why() {
        let Found::Broken(why) = read(b"{not json", "acme/widgets") else {
            panic!("broken expected");
        };
        assert!(why.starts_with("not JSON"), "{why}");
        let Found::Broken(why) = read(br#"{"kind": "Ticket"}"#, "acme/widgets") else {
            panic!("broken expected");
        };
        assert!(why.contains("missing field"), "{why}");
        let bad_start = ticket_record(None, "").replace(":987654", ":soon");
        let Found::Broken(why) = read(bad_start.as_bytes(), "acme/widgets") else {
            panic!("broken expected");
        };
        assert!(why.contains("ticks `soon`"), "{why}");
        let init = ticket_record(None, "").replace("\"process_id\": 4242", "\"process_id\": 1");
        assert!(matches!(
            read(init.as_bytes(), "acme/widgets"),
            Found::Broken(_)
        ));
    }

    #[test]
    fn claim_ids_are_the_same_for_the_same_record_and_start_and_valid() {
        let a = claim_id("builder-1", "commands/issue/7-x.command.json", "b:1");
        assert_eq!(
            a,
            claim_id("builder-1", "commands/issue/7-x.command.json", "b:1")
        );
        assert_ne!(
            a,
            claim_id("builder-1", "commands/issue/7-x.command.json", "b:2")
        );
        assert_ne!(
            a,
            claim_id("builder-2", "commands/issue/7-x.command.json", "b:1")
        );
        assert!(crate::protocol::record::check_claim_id(&a).is_ok(), "{a}");
        assert!(a.starts_with("ts-") && a.len() == 19, "{a}");
    }
}
