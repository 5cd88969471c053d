//! What the tool tells a GitHub Actions runner, only when it runs in one (`GITHUB_ACTIONS=true`):
//! the Action's outputs, appended to `$GITHUB_OUTPUT`, and annotations (`::error::`,
//! `::warning::`) a workflow run shows on its summary page. Values are escaped the way the
//! runner reads workflow commands, so no text (an error naming an issue title) can end an
//! annotation early or start another command. It decides nothing and reads nothing from GitHub.

use std::io::Write as _;

/// Whether this process runs in a GitHub Actions job.
pub fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// An annotation's level.
#[derive(Clone, Copy, Debug)]
pub enum Level {
    Error,
    Warning,
}

/// The workflow command for an annotation of `message` at `level`.
pub fn annotation(level: Level, message: &str) -> String {
    let word = match level {
        Level::Error => "error",
        Level::Warning => "warning",
    };
    format!("::{word} title=thirdshift-reconciler::{}", escape(message))
}

/// Prints an annotation to stdout (where the runner reads workflow commands), in a job only.
pub fn annotate(level: Level, message: &str) {
    if in_actions() {
        println!("{}", annotation(level, message));
    }
}

/// Appends `name=value` lines to `$GITHUB_OUTPUT`, when set. A failure to write is a warning:
/// the pass itself went as it went.
pub fn outputs(pairs: &[(&str, String)]) {
    let Some(path) = std::env::var_os("GITHUB_OUTPUT").filter(|p| !p.is_empty()) else {
        return;
    };
    let lines: String = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}\n", one_line(v)))
        .collect();
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut f| f.write_all(lines.as_bytes()));
    if let Err(e) = written {
        tracing::warn!("the Action's outputs were not written: {e}");
    }
}

/// `%`, CR and LF as the runner expects them inside a workflow command.
fn escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_annotation_cannot_be_ended_early_or_start_another_command() {
        let text = annotation(Level::Error, "100% broken\n::set-output name=x::y");
        assert_eq!(
            text,
            "::error title=thirdshift-reconciler::100%25 broken%0A::set-output name=x::y"
        );
        assert_eq!(text.lines().count(), 1);
    }
}
