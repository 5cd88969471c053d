//! The agent session of a thirdshift Command, read from its Session log, so the end record of a
//! dead Command names the session a person resumes (`protocol::resume` makes the command).
//! thirdshift 0.19.0 records no session id in its Command record; its Session log
//! (`<…>-<kind>.logs.jsonl`, `src/session/trace.rs` `Trace::record_at`) is OpenTelemetry JSON
//! lines, one `resourceLogs[].scopeLogs[].logRecords[]` per raw Harness event, the raw line in
//! `body.stringValue`. Older thirdshift kept the raw events themselves, one per line: both are
//! read. The id is the one thirdshift's own interpretation takes (`src/harness/interpretation`):
//! the first session event of the top conversation, per Harness —
//! claude and grok `session_id` (`type: system`, `subtype: init`; grok falls back to the first
//! event carrying one), codex `thread_id` (`type: thread.started`), agy `conversation_id`
//! (`event: init` naming one, not a child's, which carries `parent_tool_use_id`), muse
//! `stream.id` (`stream.kind: session`), opencode `sessionID`. (thirdshift keeps muse's and
//! opencode's last id; every event of one session carries the same one, and the first is
//! written before the agent has acted.)
//!
//! The log is a file the agent can write to, so the id is only ever shown to a person, and only
//! in the shape a session id has (letters, digits, `-`, `_`, `.`, `:`; at most
//! [`MAX_SESSION_ID_CHARS`]): nothing acts on it, and no forged id carries words into the command
//! a person pastes. Pure: lines in, an id out; the host reads the file (`thirdshift::here`).

use serde_json::Value;

/// The longest session id believed (the six Harnesses' ids are UUIDs or shorter).
pub const MAX_SESSION_ID_CHARS: usize = 128;

/// The agent session id of a `harness` session whose Session log holds `lines` (read no further
/// than the first believable id), if one is there in a believable shape: the first the Harness's own stream names (grok's, when no init event
/// names one, the first event that carries a `session_id`, as thirdshift falls back).
pub fn session_id<S: AsRef<str>>(
    harness: &str,
    lines: impl IntoIterator<Item = S>,
) -> Option<String> {
    let pick = picker(harness)?;
    let grok = harness.trim().eq_ignore_ascii_case("grok");
    let mut fallback = None;
    for event in lines.into_iter().flat_map(|l| raw_events(l.as_ref())) {
        if let Some(id) = pick(&event).filter(|id| believable(id)) {
            return Some(id);
        }
        if grok && fallback.is_none() {
            fallback = text(&event["session_id"]).filter(|id| believable(id));
        }
    }
    fallback
}

/// How one Harness's raw event names its session.
type Pick = fn(&Value) -> Option<String>;

fn picker(harness: &str) -> Option<Pick> {
    Some(match harness.trim().to_ascii_lowercase().as_str() {
        "claude" | "claude-code" | "grok" => system_init,
        "codex" => thread_started,
        "agy" => agy_init,
        "muse" => muse_stream,
        "opencode" => opencode_session,
        _ => return None,
    })
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn top_level(event: &Value) -> bool {
    event
        .get("parent_tool_use_id")
        .is_none_or(serde_json::Value::is_null)
}

fn system_init(e: &Value) -> Option<String> {
    (e["type"] == "system" && e["subtype"] == "init").then(|| text(&e["session_id"]))?
}

fn thread_started(e: &Value) -> Option<String> {
    (e["type"] == "thread.started")
        .then(|| text(&e["thread_id"]))
        .flatten()
}

fn agy_init(e: &Value) -> Option<String> {
    (e["event"] == "init" && top_level(e)).then(|| text(&e["conversation_id"]))?
}

fn muse_stream(e: &Value) -> Option<String> {
    (e["stream"]["kind"] == "session")
        .then(|| text(&e["stream"]["id"]))
        .flatten()
}

fn opencode_session(e: &Value) -> Option<String> {
    text(&e["sessionID"])
}

/// The raw Harness events one Session log line holds: the bodies of an OpenTelemetry log line,
/// or the line itself when it is a raw event.
fn raw_events(line: &str) -> Vec<Value> {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    let Some(resources) = value.get("resourceLogs").and_then(Value::as_array) else {
        return vec![value];
    };
    let bodies = resources
        .iter()
        .flat_map(|r| r["scopeLogs"].as_array().into_iter().flatten())
        .flat_map(|s| s["logRecords"].as_array().into_iter().flatten())
        .filter_map(|record| record["body"]["stringValue"].as_str());
    bodies
        .filter_map(|raw| serde_json::from_str(raw).ok())
        .collect()
}

fn believable(id: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.:".contains(c);
    !id.is_empty() && id.chars().count() <= MAX_SESSION_ID_CHARS && id.chars().all(allowed)
}

#[cfg(test)]
mod tests;
