//! The Runs of the HTML page, in the view's three sections: "Needs you" (each row with its next
//! step and the exact `/thirdshift` comment to write), "Being recovered" and "Running". A
//! copyable command, a resume command and a date are each kept on one line (they scroll
//! rather than break). It only renders rows; what they say is the model's.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::super::model::{Attention, RunRow};
use super::super::terminal::age;
use super::super::{code_spans, joined, log_list};
use super::{badge, esc, link, when};

/// The Runs in three sections, "Needs you" first (always there, so an empty one says so), then
/// those being recovered and those running (each only when it has Runs).
pub(super) fn sections(out: &mut String, runs: &[RunRow], now: DateTime<Utc>) {
    for attention in Attention::ALL {
        let rows: Vec<&RunRow> = runs
            .iter()
            .filter(|r| r.health.attention() == attention)
            .collect();
        let empty = match attention {
            Attention::NeedsYou => Some("Nothing needs you: no Run waits on a person."),
            Attention::Running if runs.is_empty() => Some("No active Runs."),
            _ => None,
        };
        if rows.is_empty() && empty.is_none() {
            continue;
        }
        let id = match attention {
            Attention::NeedsYou => "needs-you",
            Attention::BeingRecovered => "being-recovered",
            Attention::Running => "runs",
        };
        let _ = writeln!(
            out,
            "<section id=\"{id}\">\n<h2>{} ({})</h2>",
            attention.heading(),
            rows.len()
        );
        match empty {
            Some(text) if rows.is_empty() => {
                let _ = writeln!(out, "<p class=\"empty\">{text}</p>");
            }
            _ => table(out, &rows, attention != Attention::Running, now),
        }
        out.push_str("</section>\n");
    }
}

/// One section's table; `steps` adds the next-step column after the issue.
fn table(out: &mut String, runs: &[&RunRow], steps: bool, now: DateTime<Utc>) {
    let step_head = if steps { "<th>Next step</th>" } else { "" };
    let _ = writeln!(
        out,
        "<table class=\"cards\">\n<thead><tr><th>Issue</th>{step_head}<th>Host</th><th>Stage</th>\
         <th>Harness · session</th><th>Health</th><th>Last evidence</th><th>Logs</th></tr></thead>\n<tbody>",
    );
    for r in runs {
        let claim = r.claim_id.as_deref().unwrap_or("none");
        let step = if steps {
            format!(
                "<td data-label=\"Next step\" class=\"step\">{}</td>",
                step_cell(r)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<tr class=\"run h-{slug}\" id=\"run-{}-{}\" data-issue=\"{}\" data-health=\"{slug}\">\
             <td data-label=\"Issue\">{}</td>{step}<td data-label=\"Host\">{}</td>\
             <td data-label=\"Stage\">{}</td><td data-label=\"Session\">{}</td>\
             <td data-label=\"Health\">{}</td><td data-label=\"Last evidence\">{}</td>\
             <td data-label=\"Logs\">{}</td></tr>",
            r.issue,
            esc(claim),
            r.issue,
            issue_cell(r.issue, &r.title, &r.issue_url),
            host_cell(r),
            stage_cell(r, now),
            harness_cell(r),
            badge(r.health),
            esc(&r.evidence),
            logs_cell(&r.logs),
            slug = r.health.slug(),
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The next step: its sentence (backticked words as code), then the exact comment to write on
/// the issue, on a line of its own that never breaks.
fn step_cell(r: &RunRow) -> String {
    let Some(step) = super::super::next_step::of(r) else {
        return "—".into();
    };
    let says = code_spans(&step.says, |c| format!("<code>{}</code>", esc(c)), esc);
    let mut cell = format!("<span class=\"says\">{says}</span>");
    if let Some(command) = &step.command {
        let _ = write!(
            cell,
            "<span class=\"since\">on {}:</span><code class=\"cmd\">{}</code>",
            link(&r.issue_url, &format!("#{}", r.issue)),
            esc(command)
        );
    }
    cell
}

/// The host, tagged `thirdshift` for a thirdshift Command (its record's path as the title) and
/// `companion` when one watches the Run.
fn host_cell(r: &RunRow) -> String {
    let host = r
        .host
        .as_deref()
        .map_or("—".into(), |h| format!("<code>{}</code>", esc(h)));
    let host = match &r.thirdshift_record {
        Some(record) => format!(
            "{host} <span class=\"tag thirdshift\" title=\"{}\">thirdshift</span>",
            esc(record)
        ),
        None => host,
    };
    if r.watched {
        let title = "a companion watches it: its death is acted on within seconds";
        format!("{host} <span class=\"tag companion\" title=\"{title}\">companion</span>")
    } else {
        host
    }
}

pub(super) fn issue_cell(n: u64, title: &str, url: &str) -> String {
    format!("{} {}", link(url, &format!("#{n}")), esc(title))
}

fn stage_cell(r: &RunRow, now: DateTime<Utc>) -> String {
    let stage = stage_since(r, now);
    match &r.continues {
        Some(c) => {
            let by = c
                .started_by
                .map(|b| format!(", started by {}", esc(crate::text::started_by(b))));
            format!(
                "{stage}<span class=\"since continues\">Continuation {} of <code>{}</code>{}</span>",
                c.number,
                esc(&c.claim_id),
                by.unwrap_or_default()
            )
        }
        None => stage,
    }
}

fn stage_since(r: &RunRow, now: DateTime<Utc>) -> String {
    match (&r.stage, r.stage_since) {
        (Some(s), Some(t)) => format!(
            "<code>{}</code><span class=\"since\">since {} ({})</span>",
            esc(s),
            when(t),
            age(now, t)
        ),
        (Some(s), None) => format!("<code>{}</code>", esc(s)),
        _ => "—".into(),
    }
}

fn harness_cell(r: &RunRow) -> String {
    let session = r
        .session
        .as_deref()
        .map(|s| format!("<code>{}</code>", esc(s)));
    let cell = joined(r.harness.as_deref().map(esc), session);
    match &r.resume {
        Some(cmd) => format!(
            "{cell}<span class=\"since\">resume: <code class=\"resume\">{}</code></span>",
            esc(cmd)
        ),
        None => cell,
    }
}

fn logs_cell(logs: &[String]) -> String {
    log_list(
        logs,
        |n, url| link(url, &format!("log {n}")),
        |path| format!("<code>{}</code>", esc(path)),
    )
}
