//! `status --html FILE`: the view as one static, self-contained page a team can publish on
//! GitHub Pages. Inline CSS, no scripts, no external assets (the only URLs are links to GitHub
//! and to the Runs' own log URLs). Wide screens get tables; below 720px each row becomes a card.
//! Every health is written as a word inside a coloured badge, so it reads without colour too.
//! Everything taken from GitHub is HTML-escaped; only http(s) addresses become links.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::is_web_link;
use super::markdown::time;
use super::model::{HostRow, Recovery, RunHealth, RunRow, View};
use super::terminal::age;
use runs::issue_cell;

mod runs;

const STYLE: &str = r#"
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--card:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--bg:#0d1117;--card:#151b23}}
*{box-sizing:border-box}
body{margin:0;padding:16px;font:15px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
main,header{max-width:1400px;margin:0 auto}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 10px}
.meta{color:var(--muted);margin:0 0 12px}
a{color:#0969da}@media (prefers-color-scheme:dark){a{color:#4493f8}}
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
time{white-space:nowrap}
code.cmd,code.resume{display:block;width:max-content;max-width:100%;overflow-x:auto;white-space:pre;overflow-wrap:normal;word-break:normal;margin-top:2px;padding:2px 6px;border-radius:6px;background:var(--card);border:1px solid var(--line)}
.says{display:block}
#needs-you h2{color:#cf222e}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:8px 10px;border-bottom:1px solid var(--line);overflow-wrap:break-word}
th{font-size:13px;color:var(--muted);font-weight:600;white-space:nowrap}
tr.run td:first-child{border-left:6px solid var(--hc,var(--line))}
.since{display:block;color:var(--muted);font-size:13px}
.tally{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:8px}
.health{display:inline-block;padding:2px 10px;border-radius:999px;font-weight:600;font-size:13px;white-space:nowrap;border:1px solid var(--hc);background:var(--hb);color:var(--ht)}
.health::before{content:"\25CF\00A0";color:var(--hc)}
.h-alive{--hc:#1a7f37;--hb:#dafbe1;--ht:#116329}
.h-starting{--hc:#1a7f37;--hb:#dafbe1;--ht:#116329}
.h-writers-alive{--hc:#bf8700;--hb:#fff8c5;--ht:#7d4e00}
.h-awaiting-host{--hc:#9a6700;--hb:#fff1e5;--ht:#7d4e00}
.h-host-mismatch{--hc:#8250df;--hb:#fbefff;--ht:#6639ba}
.h-superseded{--hc:#6e7781;--hb:#eaeef2;--ht:#424a53}
.h-issue-closed{--hc:#6e7781;--hb:#eaeef2;--ht:#424a53}
.h-unowned{--hc:#cf222e;--hb:#ffebe9;--ht:#a40e26}
.h-dead{--hc:#cf222e;--hb:#ffebe9;--ht:#a40e26}
.h-host-silent{--hc:#bc4c00;--hb:#fff1e5;--ht:#953800}
.h-colliding{--hc:#8250df;--hb:#fbefff;--ht:#6639ba}
.flag{display:inline-block;margin-left:6px;padding:0 8px;border-radius:999px;font-size:12px;font-weight:600;color:#953800;background:#fff1e5;border:1px solid #bc4c00}
.empty{color:var(--muted)}
@media (max-width:720px){
 body{padding:10px}
 table.cards thead{display:none}
 table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
 table.cards tr{margin:0 0 12px;border:1px solid var(--line);border-radius:10px;background:var(--card);overflow:hidden}
 table.cards tr.run{border-left:6px solid var(--hc,var(--line))}
 tr.run td:first-child{border-left:none}
 table.cards td{border:none;padding:5px 12px 5px calc(12px + 7.5em);position:relative;min-height:1.9em;overflow-wrap:anywhere}
 table.cards td::before{content:attr(data-label);position:absolute;left:12px;width:7em;font-size:12px;line-height:1.9;color:var(--muted);font-weight:600}
}
"#;

/// The whole page.
pub fn render(view: &View, now: DateTime<Utc>) -> String {
    let mut out = String::new();
    let title = format!("thirdshift: Runs and hosts of {}", view.repository);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{}</h1>\n\
         <p class=\"meta\">Every active Run on every machine, as of {} (ages are as of then).</p>\n",
        esc(&title),
        esc(&title),
        when(now)
    );
    tally(&mut out, &view.runs);
    out.push_str("</header>\n<main>\n");
    runs::sections(&mut out, &view.runs, now);
    hosts(&mut out, &view.hosts, now);
    recoveries(&mut out, &view.recoveries);
    untrusted(&mut out, &view.untrusted);
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// How many Runs have each health, as badges.
fn tally(out: &mut String, runs: &[RunRow]) {
    out.push_str("<ul class=\"tally\" aria-label=\"Runs by health\">");
    for h in RunHealth::ALL {
        let n = runs.iter().filter(|r| r.health == h).count();
        if n > 0 {
            let _ = write!(
                out,
                "<li>{}</li>",
                badge_text(h, &format!("{n} {}", h.word()))
            );
        }
    }
    out.push_str("</ul>\n");
}

fn badge(h: RunHealth) -> String {
    badge_text(h, h.word())
}

fn badge_text(h: RunHealth, text: &str) -> String {
    format!("<span class=\"health h-{}\">{}</span>", h.slug(), esc(text))
}

fn hosts(out: &mut String, hosts: &[HostRow], now: DateTime<Utc>) {
    let _ = writeln!(
        out,
        "<section id=\"hosts\">\n<h2>Hosts ({})</h2>",
        hosts.len()
    );
    if hosts.is_empty() {
        out.push_str("<p class=\"empty\">No host has reported yet.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<table class=\"cards\">\n<thead><tr><th>Host</th><th>Booted</th><th>Capacity</th>\
         <th>Slots used</th><th>Runs</th><th>Last report</th></tr></thead>\n<tbody>\n",
    );
    for h in hosts {
        let opt = |v: Option<u32>| v.map_or("—".into(), |n| n.to_string());
        let mut last = match (h.last_report, &h.report_url) {
            (Some(t), Some(u)) if is_web_link(u) => {
                format!(
                    "<a href=\"{}\">{}</a> ({} ago)",
                    esc(u),
                    when(t),
                    age(now, t)
                )
            }
            (Some(t), _) => format!("{} ({} ago)", when(t), age(now, t)),
            (None, _) => "never reported".into(),
        };
        if h.silent {
            last.push_str(" <span class=\"flag flag-silent\">silent</span>");
        }
        let mut used = opt(h.slots_used);
        if h.over_capacity {
            used.push_str(" <span class=\"flag flag-over\">over capacity</span>");
        }
        let _ = writeln!(
            out,
            "<tr class=\"host{}\" data-host=\"{}\"><td data-label=\"Host\"><code>{}</code></td>\
             <td data-label=\"Booted\">{}</td><td data-label=\"Capacity\">{}</td>\
             <td data-label=\"Slots used\">{used}</td><td data-label=\"Runs\">{}</td>\
             <td data-label=\"Last report\">{last}</td></tr>",
            if h.silent { " silent" } else { "" },
            esc(&h.name),
            esc(&h.name),
            h.booted_at.map_or("—".into(), when),
            opt(h.capacity),
            h.runs,
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn recoveries(out: &mut String, recoveries: &[Recovery]) {
    out.push_str("<section id=\"recoveries\">\n<h2>Last recoveries</h2>\n");
    if recoveries.is_empty() {
        out.push_str("<p class=\"empty\">None yet.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<table class=\"cards\">\n<thead><tr><th>Issue</th><th>Claim</th><th>Host</th>\
         <th>Outcome</th><th>Cause</th><th>Ended</th><th>End record</th></tr></thead>\n<tbody>\n",
    );
    for r in recoveries {
        let issue_url = r.end_url.split('#').next().unwrap_or(&r.end_url);
        let _ = writeln!(
            out,
            "<tr class=\"recovery\"><td data-label=\"Issue\">{}</td>\
             <td data-label=\"Claim\"><code>{}</code></td><td data-label=\"Host\">{}</td>\
             <td data-label=\"Outcome\">{}</td>\
             <td data-label=\"Cause\" title=\"{}\">{}</td><td data-label=\"Ended\">{}</td>\
             <td data-label=\"End record\">{}</td></tr>",
            issue_cell(r.issue, &r.title, issue_url),
            esc(&r.claim_id),
            esc(r.host.as_deref().unwrap_or("—")),
            esc(&super::outcome_of(r)),
            esc(&super::cause_words_of(r)),
            esc(super::cause_of(r)),
            when(r.ended_at),
            link(&r.end_url, "end record"),
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// Logins whose records were ignored, with the config line that would trust each; nothing when
/// there are none.
fn untrusted(out: &mut String, authors: &[super::model::UntrustedAuthor]) {
    if authors.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"untrusted\">\n<h2>Records not trusted</h2>\n<p>These authors' records \
         were ignored: their Claims, ends and reports are not believed, so their Runs show as \
         unowned. If one is the identity your hosts or workflows write as, add its line to \
         <code>.github/thirdshift.yml</code>; if not, someone is forging records.</p>\n\
         <table>\n<thead><tr><th>Login</th><th>Records ignored</th><th>To trust it</th></tr>\
         </thead>\n<tbody>\n",
    );
    for a in authors {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td></tr>",
            esc(&a.login),
            a.records,
            esc(&a.trust_line)
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// A time as the page shows it, never broken across lines, with its machine-readable value.
fn when(t: DateTime<Utc>) -> String {
    format!("<time datetime=\"{}\">{}</time>", t.to_rfc3339(), time(t))
}

/// A link to an http(s) address; anything else is shown as text, never as a link.
fn link(url: &str, text: &str) -> String {
    if is_web_link(url) {
        format!("<a href=\"{}\">{}</a>", esc(url), esc(text))
    } else {
        esc(text)
    }
}

/// HTML-escapes text and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixture;

    fn page() -> String {
        let view = fixture::view(&[]);
        render(&view, fixture::now())
    }

    #[test]
    fn page_loads_nothing_from_elsewhere_and_runs_no_script() {
        let page = page();
        assert!(!page.contains("<script"), "no scripts");
        assert!(!page.contains("<link"), "no stylesheets");
        assert!(!page.contains("<img"), "no images");
        assert!(!page.contains("url("), "no CSS fetches");
        assert!(!page.contains("@import"), "no CSS imports");
        for href in page.split("href=\"").skip(1) {
            let url = href.split('"').next().unwrap();
            assert!(
                url.starts_with("https://github.com/")
                    || url.starts_with("https://ci.example.com/"),
                "{url}"
            );
        }
    }

    #[test]
    fn untrusted_text_is_escaped() {
        assert_eq!(esc("<b a=\"x\">&'"), "&lt;b a=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(link("javascript:alert(1)", "x"), "x");
    }
}
