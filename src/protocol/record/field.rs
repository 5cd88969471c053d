//! One rule per kind of record field, shared by readers and writers: a record's `validate`
//! applies these to what it decodes, and every writer asks the same `validate` (through
//! [`write_refusal`]) before anything is written, so a value a reader would refuse is a
//! usage error at the writer, naming the field and the limit, and never reaches GitHub.
//!
//! [`write_refusal`] is the writers' check of a whole comment: the readers' decoding (so these
//! rules) and GitHub's limit on a body. It does not decide what a value means.

/// Names and ids a person or a script gives: stage, host, harness, model, agent session,
/// branch, actor, labels.
pub const MAX_NAME_CHARS: usize = 256;
/// Paths, URLs and commands: worktree, log paths and URLs, the resume command.
pub const MAX_PATH_CHARS: usize = 2048;
/// Free text that explains: the reason of an end or cancel record.
pub const MAX_TEXT_CHARS: usize = 4096;
/// Log paths or URLs one claim record lists.
pub const MAX_LOGS: usize = 8;

/// A process or session id a host may signal: above 1, since `kill(0)` and `kill(-1)` reach
/// every process of a group or of the user, and 1 is init.
pub fn pid(field: &str, value: u32) -> Result<(), String> {
    if value <= 1 {
        return Err(format!(
            "`{field}` is {value}: a process id must be above 1 (0 and 1 would reach every \
             process of the user or init)"
        ));
    }
    Ok(())
}

/// A required name: one line, not blank, at most [`MAX_NAME_CHARS`].
pub fn name(field: &str, value: &str) -> Result<(), String> {
    one_line(field, value, MAX_NAME_CHARS)
}

/// A required path, URL or command: one line, not blank, at most [`MAX_PATH_CHARS`].
pub fn path(field: &str, value: &str) -> Result<(), String> {
    one_line(field, value, MAX_PATH_CHARS)
}

/// An optional name: absent, or a valid [`name`].
pub fn opt_name(field: &str, value: Option<&str>) -> Result<(), String> {
    value.map_or(Ok(()), |v| name(field, v))
}

/// An optional path: absent, or a valid [`path`].
pub fn opt_path(field: &str, value: Option<&str>) -> Result<(), String> {
    value.map_or(Ok(()), |v| path(field, v))
}

/// Free text: may span lines, at most [`MAX_TEXT_CHARS`], no control character but line breaks
/// and tabs. It may be empty.
pub fn text(field: &str, value: &str) -> Result<(), String> {
    too_long(field, value, MAX_TEXT_CHARS)?;
    let bad = value
        .chars()
        .position(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'));
    match bad {
        Some(i) => Err(format!(
            "`{field}` holds a control character at character {}",
            i + 1
        )),
        None => Ok(()),
    }
}

/// A list of paths: at most `max` entries, each a valid [`path`].
pub fn paths(field: &str, values: &[String], max: usize) -> Result<(), String> {
    if values.len() > max {
        return Err(format!(
            "`{field}` holds {} entries, more than the limit of {max}",
            values.len()
        ));
    }
    values.iter().try_for_each(|v| path(field, v))
}

fn one_line(field: &str, value: &str, max: usize) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("`{field}` must not be empty"));
    }
    too_long(field, value, max)?;
    match value.chars().position(char::is_control) {
        Some(i) => Err(format!(
            "`{field}` holds a line break or other control character at character {}; it must \
             be one line of text",
            i + 1
        )),
        None => Ok(()),
    }
}

fn too_long(field: &str, value: &str, max: usize) -> Result<(), String> {
    let chars = value.chars().count();
    if chars > max {
        return Err(format!(
            "`{field}` is {chars} characters, more than the limit of {max}"
        ));
    }
    Ok(())
}

/// `value` cut to at most `max` characters, marked as cut: for texts the program makes itself
/// (a reason quoting a long error), which must still be written.
pub fn fit(value: &str, max: usize) -> String {
    if value.chars().count() <= max {
        return value.to_string();
    }
    let head: String = value.chars().take(max.saturating_sub(1)).collect();
    format!("{head}…")
}

/// Text the program makes itself (a reason quoting an error) made valid for [`text`]: control
/// characters other than line breaks and tabs shown as `\u{fffd}`, and cut to the limit.
pub fn fit_text(value: &str) -> String {
    let clean: String = value
        .chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => c,
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect();
    fit(&clean, MAX_TEXT_CHARS)
}

/// GitHub's limit on a comment body, in characters.
pub const MAX_COMMENT_CHARS: usize = 65_536;

/// Why a comment body about to be written would not be read back as one valid record, if it
/// would not: the readers' own checks ([`decode`](super::decode), so each field's rule here) and
/// GitHub's limit on a body. Every writer
/// asks this before a write, so nothing is written that a reader would refuse.
pub fn write_refusal(body: &str) -> Option<String> {
    match super::decode(body) {
        super::Decoded::Record(_) => {}
        super::Decoded::NotARecord => {
            return Some("the comment would hold no record line".to_string())
        }
        super::Decoded::Invalid(super::RecordError::Malformed { reason, .. }) => {
            return Some(reason)
        }
        super::Decoded::Invalid(e) => return Some(e.to_string()),
    }
    let chars = body.chars().count();
    (chars > MAX_COMMENT_CHARS).then(|| {
        format!(
            "the comment would be {chars} characters, more than GitHub's limit of \
             {MAX_COMMENT_CHARS}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_must_be_one_non_blank_line_within_its_limit() {
        assert!(name("stage", "implementing").is_ok());
        let empty = name("stage", "  ").unwrap_err();
        assert_eq!(empty, "`stage` must not be empty");
        let long = name("stage", &"x".repeat(MAX_NAME_CHARS + 1)).unwrap_err();
        assert!(
            long.contains("257 characters") && long.contains("256"),
            "{long}"
        );
        assert!(name("stage", &"é".repeat(MAX_NAME_CHARS)).is_ok());
        assert!(name("stage", "two\nlines")
            .unwrap_err()
            .contains("one line"));
    }

    #[test]
    fn a_pid_of_0_or_1_is_refused() {
        assert!(pid("pid", 2).is_ok());
        assert!(pid("session_id", 1)
            .unwrap_err()
            .contains("`session_id` is 1"));
        assert!(pid("pid", 0).is_err());
    }

    #[test]
    fn text_may_span_lines_but_holds_no_other_control_character() {
        assert!(text("reason", "").is_ok());
        assert!(text("reason", "first\r\nsecond\tthird").is_ok());
        assert!(text("reason", "bell\u{7}")
            .unwrap_err()
            .contains("character 5"));
        assert!(text("reason", &"x".repeat(MAX_TEXT_CHARS + 1)).is_err());
    }

    #[test]
    fn a_list_of_paths_has_a_limit_on_entries() {
        let logs = vec!["/var/log/a".to_string(); MAX_LOGS + 1];
        let why = paths("logs", &logs, MAX_LOGS).unwrap_err();
        assert!(
            why.contains("9 entries") && why.contains("limit of 8"),
            "{why}"
        );
        assert!(paths("logs", &logs[..MAX_LOGS], MAX_LOGS).is_ok());
    }

    #[test]
    fn fit_cuts_long_text_to_its_limit_and_marks_the_cut() {
        assert_eq!(fit("short", 10), "short");
        let cut = fit(&"é".repeat(20), 10);
        assert_eq!(cut.chars().count(), 10);
        assert!(cut.ends_with('…'));
        let made = fit_text(&format!(
            "\u{1b}[31mred\u{7}\n{}",
            "x".repeat(MAX_TEXT_CHARS)
        ));
        assert!(text("reason", &made).is_ok());
        assert!(made.starts_with("\u{fffd}[31mred\u{fffd}\n"), "{made}");
    }
}
