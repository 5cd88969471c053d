//! The live view in a terminal (`status`): the Runs ("Needs you" first, each with its next
//! step; then those being recovered and those running), a hosts table and the last recoveries,
//! every line at most 100 columns (long titles cut with an ellipsis; evidence and next steps
//! wrapped, never cut), ages relative to the `now`
//! it is given. Colour (ANSI) only when the caller says so: stdout is a terminal and `NO_COLOR`
//! is unset, decided in the IO shell, not here. The health word is always written.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::clip;
use super::model::{Attention, HostRow, RunHealth, RunRow, View};

/// The widest line written.
pub const WIDTH: usize = 100;

/// Renders the view for a terminal.
pub fn render(view: &View, now: DateTime<Utc>, color: bool) -> String {
    let mut out = String::new();
    let head = format!(
        "{}: {} active Run(s) on {} host(s), as of {}",
        view.repository,
        view.runs.len(),
        view.hosts.len(),
        now.format("%Y-%m-%d %H:%M UTC")
    );
    line(&mut out, &head);
    out.push('\n');
    runs(&mut out, &view.runs, now, color);
    hosts(&mut out, &view.hosts, now);
    if !view.recoveries.is_empty() {
        out.push('\n');
        line(&mut out, "LAST RECOVERIES");
        for r in &view.recoveries {
            let text = format!(
                "#{:<5} {:<20} {:<12} {:<10} {:<10} {}  {}",
                r.issue,
                clip(&r.claim_id, 20),
                clip(r.host.as_deref().unwrap_or("-"), 12),
                r.outcome.as_str(),
                super::cause_of(r),
                r.ended_at.format("%Y-%m-%d %H:%M"),
                age(now, r.ended_at),
            );
            line(&mut out, &text);
        }
    }
    if !view.untrusted.is_empty() {
        out.push('\n');
        line(
            &mut out,
            "RECORDS NOT TRUSTED (ignored; a login that is yours: add its line to \
             .github/thirdshift.yml)",
        );
        for a in &view.untrusted {
            let text = format!(
                "{:<24} {:>5} record(s)  {}",
                clip(&a.login, 24),
                a.records,
                a.trust_line
            );
            line(&mut out, &text);
        }
    }
    out
}

/// ANSI colour of a health word.
fn paint(h: RunHealth) -> &'static str {
    match h {
        RunHealth::Alive | RunHealth::Starting => "\x1b[32m",
        RunHealth::WritersAlive | RunHealth::AwaitingHost => "\x1b[33m",
        RunHealth::HostMismatch | RunHealth::Colliding => "\x1b[35m",
        RunHealth::Superseded | RunHealth::IssueClosed => "\x1b[2m",
        RunHealth::Unowned | RunHealth::Dead => "\x1b[31;1m",
        RunHealth::HostSilent => "\x1b[33;1m",
    }
}

fn runs(out: &mut String, runs: &[RunRow], now: DateTime<Utc>, color: bool) {
    line(
        out,
        &format!(
            "{:<6} {:<24} {:<12} {:<14} {:>5} {:<13} {:<20}",
            "ISSUE", "TITLE", "HOST", "STAGE", "AGE", "HEALTH", "HARNESS/SESSION"
        ),
    );
    for attention in Attention::ALL {
        let rows: Vec<&RunRow> = runs
            .iter()
            .filter(|r| r.health.attention() == attention)
            .collect();
        if rows.is_empty() && attention != Attention::NeedsYou {
            continue;
        }
        let heading = attention.heading().to_uppercase();
        line(out, &format!("{heading} ({})", rows.len()));
        if rows.is_empty() {
            line(out, "  nothing: no Run waits on a person");
        }
        for r in rows {
            run(out, r, now, color);
        }
    }
    if runs.is_empty() {
        line(out, "No active Runs.");
    }
}

/// One Run's row, then its evidence and its next step wrapped (never cut) under it, and the
/// exact comment to write on its own line.
fn run(out: &mut String, r: &RunRow, now: DateTime<Utc>, color: bool) {
    let health = format!("{:<13}", r.health.word());
    let health = if color {
        format!("{}{health}\x1b[0m", paint(r.health))
    } else {
        health
    };
    let session = match (&r.harness, &r.session) {
        (Some(h), Some(s)) => format!("{h}/{s}"),
        (Some(x), None) | (None, Some(x)) => x.clone(),
        _ => "-".into(),
    };
    let row = format!(
        "{:<6} {:<24} {:<12} {:<14} {:>5} {health} {}",
        format!("#{}", r.issue),
        clip(&one_line(&r.title), 24),
        clip(r.host.as_deref().unwrap_or("-"), 12),
        clip(&one_line(r.stage.as_deref().unwrap_or("-")), 14),
        r.stage_since.map_or("-".into(), |t| age(now, t)),
        clip(&one_line(&session), 20),
    );
    out.push_str(row.trim_end());
    out.push('\n');
    if r.health != RunHealth::Alive {
        wrapped(out, "       └ ", &r.evidence);
    }
    if let Some(step) = super::next_step::of(r) {
        wrapped(out, "       → ", &step.says.replace('`', ""));
        if let Some(command) = &step.command {
            let _ = writeln!(out, "         on #{}: {command}", r.issue);
        }
    }
}

fn hosts(out: &mut String, hosts: &[HostRow], now: DateTime<Utc>) {
    out.push('\n');
    if hosts.is_empty() {
        line(out, "No host has reported yet.");
        return;
    }
    line(
        out,
        &format!(
            "{:<20} {:<17} {:>8} {:>5} {:>5}  {}",
            "HOST", "BOOTED", "CAPACITY", "USED", "RUNS", "LAST REPORT"
        ),
    );
    for h in hosts {
        let opt = |v: Option<u32>| v.map_or("-".into(), |n| n.to_string());
        let text = format!(
            "{:<20} {:<17} {:>8} {:>5} {:>5}  {}",
            clip(&h.name, 20),
            h.booted_at
                .map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M").to_string()),
            opt(h.capacity),
            opt(h.slots_used),
            h.runs,
            h.last_report
                .map_or("never reported".into(), |t| format!("{} ago", age(now, t))),
        );
        let flags: Vec<&str> = [(h.silent, "SILENT"), (h.over_capacity, "OVER CAPACITY")]
            .into_iter()
            .filter_map(|(on, word)| on.then_some(word))
            .collect();
        let text = if flags.is_empty() {
            text
        } else {
            format!("{text}  {}", flags.join(", "))
        };
        line(out, &text);
    }
}

/// `s` on one line.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Writes `text` after `lead`, word-wrapped to [`WIDTH`] columns with the following lines
/// indented as far as the text starts: nothing is cut (a word longer than a line gets a line of
/// its own).
fn wrapped(out: &mut String, lead: &str, text: &str) {
    let indent = " ".repeat(lead.chars().count());
    let mut current = lead.to_string();
    let mut empty = true;
    for word in one_line(text).split_whitespace() {
        let width = current.chars().count() + 1 + word.chars().count();
        if !empty && width > WIDTH {
            let _ = writeln!(out, "{current}");
            current = indent.clone();
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{}", current.trim_end());
}

/// Writes `text` cut to [`WIDTH`] columns.
fn line(out: &mut String, text: &str) {
    let _ = writeln!(out, "{}", clip(&one_line(text), WIDTH).trim_end());
}

/// A short age: `45s`, `12m`, `3h05m`, `4d`.
pub fn age(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixture;

    fn status_view() -> View {
        fixture::view(&[])
    }

    #[test]
    fn status_table_of_three_hosts() {
        // given live, orphaned, dead, superseded, awaiting-host and unowned Runs on three hosts,
        // looked at by `status` (which applies nothing)
        let view = status_view();
        // when it is rendered for a terminal without colour
        let text = render(&view, fixture::now(), false);
        // then every Run is there with its health in words, and no line is wider than 100
        insta::assert_snapshot!(text);
        for l in text.lines() {
            assert!(
                l.chars().count() <= WIDTH,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn colour_only_paints_the_health_word() {
        let view = status_view();
        let plain = render(&view, fixture::now(), false);
        let coloured = render(&view, fixture::now(), true);
        assert!(coloured.contains("\x1b[32malive"), "{coloured}");
        let stripped = coloured
            .replace("\x1b[0m", "")
            .replace("\x1b[32m", "")
            .replace("\x1b[33m", "")
            .replace("\x1b[35m", "")
            .replace("\x1b[2m", "")
            .replace("\x1b[31;1m", "")
            .replace("\x1b[33;1m", "");
        assert_eq!(stripped, plain);
    }

    #[test]
    fn ages_are_short() {
        let t = fixture::now();
        assert_eq!(age(t, t - chrono::Duration::seconds(5)), "5s");
        assert_eq!(age(t, t - chrono::Duration::minutes(12)), "12m");
        assert_eq!(age(t, t - chrono::Duration::minutes(185)), "3h05m");
        assert_eq!(age(t, t - chrono::Duration::days(3)), "3d");
    }
}
