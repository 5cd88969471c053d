//! The live view as GitHub Markdown: the registry issue's body (the dashboard) and the Action's
//! step summary. Its fixed phrases live here, snapshot-tested, rather than in `crate::text`,
//! because they are only ever rendered around this model. No clock: stage starts and reports are
//! absolute UTC times, so an unchanged world renders byte-identical text and no pass rewrites
//! the body for nothing. Untrusted text (titles, stage names, paths) is escaped for a table cell.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::model::{
    Attention, Continues, HostRow, Recovery, RunHealth, RunRow, UntrustedAuthor, View,
};
use super::{code_spans, joined, log_list};

/// The most Run rows written (GitHub caps an issue body at 65,536 characters).
pub const MAX_ROWS: usize = 120;

/// The dashboard: Runs, hosts, last recoveries.
pub fn render(view: &View) -> String {
    let mut out = String::from(
        "# 🗂️ thirdshift: Runs and hosts\n\n\
         Every active Run on every machine, as the last reconcile pass saw it. Rewritten by \
         reconcile only when something changed; each host keeps one report comment below. \
         Please keep this issue open and do not edit the hidden line at the end.\n\n",
    );
    needs_you(&mut out, view);
    runs(&mut out, view);
    hosts(&mut out, &view.hosts);
    recoveries(&mut out, &view.recoveries);
    untrusted(&mut out, &view.untrusted);
    out
}

/// A colour mark for each health word (the word itself is always written next to it).
pub fn mark(h: RunHealth) -> &'static str {
    match h {
        RunHealth::Alive => "🟢",
        RunHealth::Starting => "🌱",
        RunHealth::WritersAlive => "🟡",
        RunHealth::AwaitingHost => "⏳",
        RunHealth::HostMismatch => "🟠",
        RunHealth::Superseded => "⚪",
        RunHealth::Unowned => "🔴",
        RunHealth::Dead => "💀",
        RunHealth::IssueClosed => "⚫",
        RunHealth::HostSilent => "🔕",
        RunHealth::Colliding => "💥",
    }
}

/// The Runs that wait on a person, each with its next step and the exact comment to write:
/// always first, so an empty list says so.
fn needs_you(out: &mut String, view: &View) {
    let rows: Vec<&RunRow> = (view.runs.iter())
        .filter(|r| r.health.attention() == Attention::NeedsYou)
        .collect();
    let _ = writeln!(out, "## ⚠️ Needs you ({})\n", rows.len());
    if rows.is_empty() {
        out.push_str("Nothing needs you: no Run waits on a person.\n\n");
        return;
    }
    for r in rows.iter().take(MAX_ROWS) {
        let step = super::next_step::of(r);
        let says = (step.as_ref()).map_or(String::new(), |s| code_spans(&s.says, code, cell));
        let _ = write!(
            out,
            "- {} — {} {}: {says}",
            issue_link(r.issue, &r.title, &r.issue_url),
            mark(r.health),
            r.health.word(),
        );
        if let Some(command) = step.as_ref().and_then(|s| s.command.as_deref()) {
            let _ = write!(out, " {}", code(command));
        }
        out.push('\n');
    }
    out.push('\n');
}

fn runs(out: &mut String, view: &View) {
    let _ = writeln!(out, "## Runs ({})\n", view.runs.len());
    if view.runs.is_empty() {
        out.push_str("No active Runs.\n\n");
        return;
    }
    out.push_str(
        "| Issue | Host | Stage | Harness · session | Health | Last evidence | Logs |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in view.runs.iter().take(MAX_ROWS) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} {} | {} | {} |",
            issue_link(r.issue, &r.title, &r.issue_url),
            host_cell(r),
            stage(r),
            harness(r),
            mark(r.health),
            health_word(r),
            cell(&r.evidence),
            logs(&r.logs),
        );
    }
    if view.runs.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "\n…and {} more; `thirdshift-reconciler status` lists them all.",
            view.runs.len() - MAX_ROWS
        );
    }
    out.push('\n');
}

/// The health word, with "being recovered" for a Run reconcile ends by itself.
fn health_word(r: &RunRow) -> String {
    match r.health.attention() {
        Attention::BeingRecovered => format!("{} · being recovered", r.health.word()),
        _ => r.health.word().to_string(),
    }
}

fn stage(r: &RunRow) -> String {
    let stage = match (&r.stage, r.stage_since) {
        (Some(s), Some(t)) => format!("{} since {}", code(s), time(t)),
        (Some(s), None) => code(s),
        _ => "—".into(),
    };
    match &r.continues {
        Some(c) => format!("{stage} · {}", continues(c)),
        None => stage,
    }
}

/// `Continuation N of `c-…`, started by …`: the chain of the issue's Runs.
pub(super) fn continues(c: &Continues) -> String {
    let by = c
        .started_by
        .map(|b| format!(", started by {}", crate::text::started_by(b)));
    format!(
        "Continuation {} of {}{}",
        c.number,
        code(&c.claim_id),
        by.unwrap_or_default()
    )
}

fn harness(r: &RunRow) -> String {
    joined(
        r.harness.as_deref().map(cell),
        r.session.as_deref().map(code),
    )
}

fn logs(logs: &[String]) -> String {
    log_list(logs, |n, url| format!("[log {n}]({url})"), code)
}

/// The host, `thirdshift` for a thirdshift Command, and `companion` when one watches the Run.
fn host_cell(r: &RunRow) -> String {
    let host = r.host.as_deref().map_or("—".into(), code);
    let host = match r.thirdshift_record {
        Some(_) => format!("{host} · thirdshift"),
        None => host,
    };
    if r.watched {
        format!("{host} · companion")
    } else {
        host
    }
}

fn hosts(out: &mut String, hosts: &[HostRow]) {
    let _ = writeln!(out, "## Hosts ({})\n", hosts.len());
    if hosts.is_empty() {
        out.push_str("No host has reported yet.\n\n");
        return;
    }
    out.push_str(
        "| Host | Booted | Capacity | Slots used | Runs | Last report |\n\
         |---|---|---|---|---|---|\n",
    );
    for h in hosts {
        let mut last = match (h.last_report, &h.report_url) {
            (Some(t), Some(u)) => format!("[{}]({u})", time(t)),
            (Some(t), None) => time(t),
            (None, _) => "never reported".into(),
        };
        if h.silent {
            last.push_str(" · 🔕 **silent**");
        }
        let mut used = h.slots_used.map_or("—".into(), |c| c.to_string());
        if h.over_capacity {
            used.push_str(" · ⚠️ **over capacity**");
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            code(&h.name),
            h.booted_at.map_or("—".into(), time),
            h.capacity.map_or("—".into(), |c| c.to_string()),
            used,
            h.runs,
            last
        );
    }
    out.push('\n');
}

fn recoveries(out: &mut String, recoveries: &[Recovery]) {
    out.push_str("## Last recoveries\n\n");
    if recoveries.is_empty() {
        out.push_str("None yet.\n\n");
        return;
    }
    out.push_str(
        "| Issue | Claim | Host | Outcome | Cause | Ended | End record |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in recoveries {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | [end record]({}) |",
            issue_link(r.issue, &r.title, without_anchor(&r.end_url)),
            code(&r.claim_id),
            r.host.as_deref().map_or("—".into(), code),
            super::outcome_of(r),
            super::cause_of(r),
            time(r.ended_at),
            r.end_url
        );
    }
    out.push('\n');
}

/// Logins whose records were ignored, each with the config line that would trust it; nothing
/// when there are none. Logins are shown as code, never as @-mentions.
fn untrusted(out: &mut String, authors: &[UntrustedAuthor]) {
    if authors.is_empty() {
        return;
    }
    out.push_str(
        "## Records not trusted\n\n\
         These authors' records were ignored: their Claims, ends and reports are not believed, \
         so their Runs show as unowned. If one is the identity your hosts or workflows write as, \
         add its line to `.github/thirdshift.yml`; if not, someone is forging records.\n\n\
         | Login | Records ignored | To trust it |\n|---|---|---|\n",
    );
    for a in authors {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            code(&a.login),
            a.records,
            code(&a.trust_line)
        );
    }
    out.push('\n');
}

/// A comment URL without its `#issuecomment-…`: the issue's.
fn without_anchor(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

fn issue_link(n: u64, title: &str, url: &str) -> String {
    format!("[#{n}]({url}) {}", cell(&super::clip(title, 80)))
}

/// `2025-03-04 05:06 UTC`.
pub fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// Text made safe for one table cell: on one line, pipes, brackets and HTML escaped, mentions
/// and issue references defused so the dashboard pings nobody.
pub fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '|' | '[' | ']' | '*' | '_' | '`' | '\\' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '@' => out.push_str("@\u{200b}"),
            '#' => out.push_str("#\u{200b}"),
            c => out.push(c),
        }
    }
    out
}

/// Inline code for a table cell: backticks and pipes cannot break out of it.
fn code(s: &str) -> String {
    let v: String = s
        .chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            '`' => '\'',
            c => c,
        })
        .collect();
    format!("`{}`", v.replace('|', "\\|"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixture;

    #[test]
    fn a_continuations_run_names_the_claim_it_carries_on_and_its_starter() {
        // given a Run carrying on the issue's first Continuation, started by the companion
        let c = Continues {
            number: 1,
            claim_id: "c-00000000000000a1".into(),
            started_by: Some(crate::protocol::record::StartedBy::Companion),
        };
        // then its stage cell names the chain; without a noted starter it names the claim only
        assert_eq!(
            continues(&c),
            "Continuation 1 of `c-00000000000000a1`, started by the dead Run's companion"
        );
        let unnoted = Continues {
            started_by: None,
            ..c
        };
        assert_eq!(
            continues(&unnoted),
            "Continuation 1 of `c-00000000000000a1`"
        );
    }

    #[test]
    fn dashboard_after_a_pass_over_three_hosts() {
        // given live, orphaned, dead, superseded, awaiting-host and unowned Runs on three hosts,
        // and a pass that ended the dead and the superseded claim
        // when the dashboard is rendered
        let view = fixture::view(&fixture::ended());
        // then it shows every remaining Run with its health, the hosts and the recoveries
        insta::assert_snapshot!(render(&view));
    }

    #[test]
    fn dashboard_of_an_empty_repository() {
        let view = View {
            repository: fixture::REPO.into(),
            registry_issue: Some(1),
            registry_url: None,
            runs: vec![],
            hosts: vec![],
            recoveries: vec![],
            untrusted: vec![],
        };
        insta::assert_snapshot!(render(&view));
    }

    #[test]
    fn dashboard_names_each_untrusted_login_with_the_line_that_would_trust_it() {
        // given a read that ignored records by two logins it does not trust
        let mut view = fixture::view(&[]);
        view.untrusted = ["alice", "github-actions[bot]"]
            .iter()
            .zip([3, 1])
            .map(|(login, records)| crate::view::model::UntrustedAuthor {
                login: login.to_string(),
                records,
                trust_line: crate::text::trust::trust_line(login),
            })
            .collect();
        // when the dashboard is rendered
        let text = render(&view);
        // then its last section names each, as code (never an @-mention), with its line
        let section = &text[text.find("## Records not trusted").expect("the section")..];
        insta::assert_snapshot!(section);
        assert!(!section.contains('@'), "{section}");
    }

    #[test]
    fn cell_text_cannot_break_the_table_or_ping_anyone() {
        assert_eq!(
            cell("a|b\n[x](y) @octo #3 <b>"),
            "a\\|b \\[x\\](y) @\u{200b}octo #\u{200b}3 &lt;b&gt;"
        );
        assert_eq!(code("a`b|c"), "`a'b\\|c`");
    }
}
