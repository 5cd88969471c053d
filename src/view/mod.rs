//! The live view (issue #7): one place that shows every active Run on every machine. `model.rs`
//! builds what is shown, purely, from the same snapshot reconcile reads and the plan's verdicts;
//! the renderers turn it into the registry issue's Markdown body (`markdown.rs`, also the step
//! summary), a terminal table (`terminal.rs`), versioned JSON (`json.rs`) and a static HTML page
//! (`html.rs`); `history.rs` renders one issue's Claim history. `record.rs` is the hidden view
//! record. The IO shell is `publish.rs` (write the body when it changed) and `status.rs` (the
//! `status` command). Nothing here decides about Claims, and nothing below `plan` imports it.

mod adopted;
mod collision;
mod history;
mod hosts;
mod html;
mod json;
mod markdown;
mod model;
mod next_step;
mod publish;
mod record;
mod row;
mod status;
mod summary;
mod terminal;

pub use publish::publish;
pub use status::{refresh, refresh_after, status, StatusRequest};
pub use summary::{action_outputs, budget, observed, pass as pass_summary, planned};

#[cfg(test)]
mod fixture;

/// `s` with its backticked spans rendered by `code` and the text between them by `text` (a next
/// step's sentence, as Markdown or HTML).
pub fn code_spans(s: &str, code: impl Fn(&str) -> String, text: impl Fn(&str) -> String) -> String {
    (s.split('`').enumerate())
        .map(|(i, part)| if i % 2 == 1 { code(part) } else { text(part) })
        .collect()
}

/// At most `max` characters of `s`, the last one an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A recovery's outcome as the views show it: `recovered`, or `recovered (forced by @alice)`.
pub(crate) fn outcome_of(r: &model::Recovery) -> String {
    match &r.forced_by {
        Some(login) => format!("{} (forced by @{login})", r.outcome.as_str()),
        None => r.outcome.as_str().to_string(),
    }
}

/// A recovery's cause as the views' column shows it: `OOM killer`, `reboot`, …; `—` when its
/// end record names none.
pub(crate) fn cause_of(r: &model::Recovery) -> &'static str {
    r.cause.as_ref().map_or("—", crate::text::cause::cause_kind)
}

/// A recovery's cause in words, for a tooltip or a detail line; empty when none.
pub(crate) fn cause_words_of(r: &model::Recovery) -> String {
    r.cause
        .as_ref()
        .map(crate::text::cause::cause_words)
        .unwrap_or_default()
}

/// `a · b`, either one alone, or `—` when neither is known.
pub(crate) fn joined(a: Option<String>, b: Option<String>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{a} · {b}"),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => "—".into(),
    }
}

/// Each log as `web(n, url)` (n from 1) when it is an http(s) address, else as `other(path)`,
/// joined by `<br>`; `—` for none.
pub(crate) fn log_list(
    logs: &[String],
    web: impl Fn(usize, &str) -> String,
    other: impl Fn(&str) -> String,
) -> String {
    if logs.is_empty() {
        return "—".into();
    }
    let parts: Vec<String> = logs
        .iter()
        .enumerate()
        .map(|(k, l)| {
            if is_web_link(l) {
                web(k + 1, l)
            } else {
                other(l)
            }
        })
        .collect();
    parts.join("<br>")
}

/// Whether `s` is an http(s) address safe to link (no spaces, brackets or pipes in it).
pub(crate) fn is_web_link(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://"))
        && !s
            .contains(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '(' | ')' | '|' | '"'))
}
