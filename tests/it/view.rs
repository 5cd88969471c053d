//! The live view with real processes and real HTTP: the registry issue's body as the dashboard
//! (edited only when it changed), the step summary, and `status` as a table, as JSON that
//! validates against `docs/status.schema.json`, as one issue's history, and as an HTML page that
//! headless Chromium renders (DOM checked, screenshots kept under `target/test-artifacts/`).

use crate::harness;
/// The conformance test's schema validator, on its own (the rest of `support` is not needed).
use crate::support::schema;

use std::path::{Path, PathBuf};
use std::process::Output;

use harness::*;
use serde_json::Value;

const ISSUE_ROUTE: &str = "/repos/{owner}/{repo}/issues/{issue_number}";

/// The registry issue (made by a host's first `observe`).
pub(crate) fn registry(world: &World) -> u64 {
    (1..=50)
        .find(|n| {
            world
                .sim
                .issue(*n)
                .is_some_and(|i| i.labels.iter().any(|l| l == "thirdshift-registry"))
        })
        .expect("a registry issue")
}

/// `PATCH`es of issue `n` (its body) since the request log was cleared.
fn body_edits(world: &World, n: u64) -> usize {
    let path = format!("/issues/{n}");
    world
        .sim
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH" && r.route == ISSUE_ROUTE && r.path.ends_with(&path))
        .count()
}

async fn ok(world: &World, host: &str, args: &[&str]) -> Output {
    let out = world.exec(host, args).await;
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_is_edited_once_when_a_run_starts_and_not_over_ten_idle_passes() {
    let world = World::new().await;
    // Given a registry issue made by h1's first observe, and a pass that wrote the empty view
    ok(&world, "h1", &["observe"]).await;
    ok(&world, "r1", &["reconcile"]).await;
    let registry = registry(&world);
    let body = world.sim.issue(registry).unwrap().body;
    assert!(body.contains("No active Runs."), "{body}");
    world.sim.clear_requests();
    // When a Run starts on h1, h1 observes it and reconcile passes
    let issue = world.ready_issue("Teach the parser tabs");
    let options = ["--harness", "claude-code", "--session", "sess-4711"];
    let run = start_run_with(&world, "h1", issue, &options, "sleep 300").await;
    ok(&world, "h1", &["observe"]).await;
    let out = ok(&world, "r1", &["reconcile"]).await;
    // Then the dashboard is edited once, showing the Run alive with its session
    assert_eq!(body_edits(&world, registry), 1, "{}", stdout(&out));
    let body = world.sim.issue(registry).unwrap().body;
    for needle in [
        "Teach the parser tabs",
        "`h1`",
        "🟢 alive",
        "sess-4711",
        "Runs (1)",
    ] {
        assert!(body.contains(needle), "{needle} missing from:\n{body}");
    }
    assert!(stdout(&out).contains("dashboard on #"), "{}", stdout(&out));
    // And ten idle passes (observe, then reconcile) write nothing at all
    world.sim.clear_requests();
    for _ in 0..10 {
        ok(&world, "h1", &["observe"]).await;
        let out = ok(&world, "r1", &["reconcile"]).await;
        assert!(stdout(&out).contains("unchanged"), "{}", stdout(&out));
    }
    assert_eq!(writes(&world), Vec::<String>::new());
    // And hosts still find the registry issue by its marker
    ok(&world, "h2", &["observe"]).await;
    assert_eq!(registry, self::registry(&world));
    assert_eq!(
        (1..=50).filter_map(|n| world.sim.issue(n)).count(),
        2,
        "no second registry issue"
    );
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_writes_the_dashboard_to_the_step_summary() {
    let world = World::new().await;
    // Given a Run on h1 that h1 reported, in an Action with a step summary file
    let issue = world.ready_issue("Summarise me");
    let run = start_run(&world, "h1", issue, "sleep 300").await;
    ok(&world, "h1", &["observe"]).await;
    let summary = world.dir.path().join("summary.md");
    // When reconcile passes
    let out = world
        .cli("r1")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .arg("reconcile")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the summary holds the same Markdown as the registry issue's body
    let text = std::fs::read_to_string(&summary).expect("summary written");
    assert!(
        text.contains("Summarise me") && text.contains("alive"),
        "{text}"
    );
    let body = world.sim.issue(registry(&world)).unwrap().body;
    assert!(body.starts_with(text.trim_end()), "{text}\n---\n{body}");
    run.kill_all().await;
}

/// A repository with Runs in every state a person sees: on h1 a live Run and one whose Run
/// process died while its command writes on, one killed outright and recovered; a claim of a
/// host that never reported; an issue `in-progress` by hand; h2 reporting with nothing to do.
struct Busy {
    world: World,
    live: LiveRun,
    orphan: LiveRun,
    /// (issue, title) of every Run the view must show.
    rows: Vec<(u64, &'static str, &'static str)>,
    recovered: u64,
}

async fn busy() -> Busy {
    let world = World::new().await;
    let options = ["--harness", "claude-code", "--session", "sess-live"];
    let live_issue = world.ready_issue("Live: add retries to the uploader");
    let live = start_run_with(&world, "h1", live_issue, &options, "sleep 300").await;
    let orphan_issue = world.ready_issue("Orphaned: writers outlive their Run");
    let mut orphan = start_run(&world, "h1", orphan_issue, "sleep 300").await;
    orphan.kill_run_only().await;
    let dead_issue = world.ready_issue("Dead: killed outright");
    start_run(&world, "h1", dead_issue, "sleep 300")
        .await
        .kill_all()
        .await;
    let ghost_issue = world.ready_issue("Awaiting: a host that never reports");
    let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
    let nobody = thirdshift_reconciler::host::ProcessIdentity {
        pid: u32::MAX - 7,
        start_ticks: 1,
    };
    posted_claim(&world, ghost_issue, "ghost", nobody, &boot);
    let unowned = world
        .sim
        .create_issue(BOT, "Unowned: in-progress by hand", "", &[IN_PROGRESS]);
    observe_reconcile(&world, "h1").await;
    ok(&world, "h2", &["observe"]).await;
    Busy {
        world,
        live,
        orphan,
        rows: vec![
            (live_issue, "Live: add retries", "alive"),
            (orphan_issue, "Orphaned: writers", "writers alive"),
            (ghost_issue, "Awaiting: a host", "awaiting host"),
            (unowned, "Unowned: in-progress", "unowned"),
        ],
        recovered: dead_issue,
    }
}

impl Busy {
    async fn end(self) {
        self.live.kill_all().await;
        self.orphan.kill_all().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_prints_every_run_with_its_health_in_a_plain_table_within_100_columns() {
    let busy = busy().await;
    // When status runs with its output captured (not a terminal)
    let out = ok(&busy.world, "h3", &["status"]).await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // Then every Run is there with its health in words, without colour, within 100 columns
    for (issue, _, health) in &busy.rows {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("#{issue} ")))
            .unwrap_or_else(|| panic!("no row for #{issue}:\n{text}"));
        assert!(row.contains(health), "{row}");
    }
    assert!(!text.contains('\x1b'), "no colour off a terminal:\n{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "too wide: {line}");
    }
    for host in ["h1 ", "h2 ", "ghost "] {
        assert!(text.lines().any(|l| l.starts_with(host)), "{host}:\n{text}");
    }
    assert!(text.contains("LAST RECOVERIES"), "{text}");
    // And the Runs that wait on a person come first, under NEEDS YOU, with their next step and
    // the comment to write; evidence and steps are wrapped, never cut
    let needs = text.find("NEEDS YOU (3)").expect("needs you first");
    let running = text.find("RUNNING (1)").expect("then the running ones");
    let live = text.find(&format!("#{} ", busy.rows[0].0)).unwrap();
    assert!(needs < running && running < live, "{text}");
    let orphan = busy.rows[1].0;
    assert!(
        text.contains(&format!("on #{orphan}: /thirdshift recover --kill")),
        "{text}"
    );
    let notes = text
        .lines()
        .filter(|l| l.trim_start().starts_with(['└', '→']));
    for l in notes {
        assert!(!l.ends_with('…'), "cut: {l}");
    }
    // And one issue's history shows its claim and how it ended
    let recovered = busy.recovered.to_string();
    let out = ok(&busy.world, "h3", &["status", "--issue", &recovered]).await;
    let history = stdout(&out);
    assert!(history.contains("claim c-"), "{history}");
    assert!(
        history.contains("ended recovered by reconcile@h1"),
        "{history}"
    );
    busy.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_json_validates_against_its_published_schema() {
    let busy = busy().await;
    // Given the schema in docs/, which uses only keywords the validator checks
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/status.schema.json"),
        )
        .expect("docs/status.schema.json"),
    )
    .expect("the schema is JSON");
    assert_only_checked_keywords(&schema);
    // When status --json runs
    let out = ok(&busy.world, "h3", &["status", "--json"]).await;
    let json: Value = serde_json::from_slice(&out.stdout).expect("status --json prints JSON");
    // Then it validates, names its schema version, and carries every Run and the recovery
    let validator = schema::Validator::new(&schema);
    if let Err(v) = validator.validate(&schema, &json) {
        panic!(
            "status --json departs from its schema:\n{}",
            schema::report(&v)
        );
    }
    assert_eq!(json["schema_version"], 1);
    let runs = json["runs"].as_array().unwrap();
    for (issue, _, health) in &busy.rows {
        let run = runs.iter().find(|r| r["issue"] == *issue).expect("run");
        assert_eq!(run["health"], health.replace(' ', "-"));
    }
    assert_eq!(json["recoveries"][0]["issue"], busy.recovered);
    // And a value the schema forbids is caught (the check is not vacuous)
    let mut broken = json.clone();
    broken["runs"][0]["health"] = 42.into();
    assert!(validator.validate(&schema, &broken).is_err());
    let mut missing = json.clone();
    missing["runs"][0].as_object_mut().unwrap().remove("issue");
    assert!(validator.validate(&schema, &missing).is_err());
    // And what the version policy allows within version 1 is allowed: a new field, a new health
    let mut later = json.clone();
    later["runs"][0]["a_field_added_later"] = "x".into();
    later["runs"][0]["health"] = "a-health-word-added-later".into();
    assert!(validator.validate(&schema, &later).is_ok());
    assert_eq!(schema["$id"], "urn:thirdshift-reconciler:status-schema:1");
    // And asked for JSON and a page at once, stdout holds the JSON alone
    let page = busy.world.dir.path().join("both.html");
    let out = ok(
        &busy.world,
        "h3",
        &["status", "--json", "--html", page.to_str().unwrap()],
    )
    .await;
    let both: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON alone");
    assert_eq!(both["schema_version"], 1);
    assert!(page.exists());
    busy.end().await;
}

/// Fails if the schema uses a keyword `support::schema` does not check (it would be ignored).
fn assert_only_checked_keywords(schema: &Value) {
    const CHECKED: &[&str] = &[
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "title",
        "description",
        "type",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "enum",
        "format",
    ];
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                assert!(CHECKED.contains(&key.as_str()), "unchecked keyword {key}");
                match key.as_str() {
                    "properties" | "$defs" => {
                        for child in value.as_object().unwrap().values() {
                            assert_only_checked_keywords(child);
                        }
                    }
                    "items" | "additionalProperties" => assert_only_checked_keywords(value),
                    _ => {}
                }
            }
        }
        Value::Bool(_) => {}
        other => panic!("not a schema: {other}"),
    }
}

/// `target/test-artifacts/`.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_page_renders_every_run_with_its_health_in_a_real_browser() {
    let busy = busy().await;
    let dir = artifacts();
    let page = dir.join("status.html");
    // When status writes the page
    let path = page.to_string_lossy().into_owned();
    ok(&busy.world, "h3", &["status", "--html", &path]).await;
    // Then headless Chromium renders a row for every Run, its health written as a word in a
    // coloured badge
    let dom = chromium_run(&page, &["--dump-dom".to_string()]);
    assert!(dom.contains("<h1>thirdshift: Runs and hosts of"), "{dom}");
    for (issue, title, health) in &busy.rows {
        let start = dom
            .find(&format!("data-issue=\"{issue}\""))
            .unwrap_or_else(|| panic!("no row for #{issue}"));
        let row = &dom[start..start + dom[start..].find("</tr>").unwrap()];
        assert!(row.contains(title), "{row}");
        let slug = health.replace(' ', "-");
        let badge = format!("<span class=\"health h-{slug}\">{health}</span>");
        assert!(row.contains(&badge), "{badge} in {row}");
        assert!(
            dom.contains(&format!(".h-{slug}{{--hc:#")),
            "a colour for {slug}"
        );
    }
    assert!(dom.contains("<section id=\"hosts\">") && dom.contains("never reported"));
    assert!(
        dom.contains("end record"),
        "the recovery links its end record"
    );
    // And "Needs you" comes first, each of its rows with a next step, the exact comment to
    // write for those a command resolves
    let main = &dom[dom.find("<main>").expect("main")..];
    assert!(
        main[6..]
            .trim_start()
            .starts_with("<section id=\"needs-you\">"),
        "{main}"
    );
    let needs_you = &main[..main.find("</section>").unwrap()];
    for (issue, _, health) in &busy.rows {
        let row = needs_you
            .find(&format!("data-issue=\"{issue}\""))
            .map(|i| &needs_you[i..i + needs_you[i..].find("</tr>").unwrap()]);
        match (*health, row) {
            ("alive", None) => {}
            ("alive", Some(row)) => panic!("a live Run in needs you: {row}"),
            (_, None) => panic!("#{issue} ({health}) not in needs you: {needs_you}"),
            (_, Some(row)) => assert!(
                row.contains("class=\"step\"><span class=\"says\">"),
                "{row}"
            ),
        }
    }
    assert!(needs_you.contains("<code class=\"cmd\">/thirdshift recover --kill</code>"));
    assert!(needs_you.contains("<code class=\"cmd\">/thirdshift recover --force</code>"));
    // And at a wide screen and at a phone's width, no copyable command, resume command or date
    // is broken across lines (measured in Chromium's layout), and screenshots are kept
    for (w, h) in [(1280, 900), (400, 900)] {
        let lines = laid_out_lines(&page, w, h);
        assert!(
            lines
                .iter()
                .any(|(_, t)| t.starts_with("/thirdshift recover")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|(_, t)| t.contains("--resume sess-live")),
            "{lines:?}"
        );
        for (n, text) in &lines {
            assert_eq!(*n, 1, "at {w} px, broken across {n} lines: {text}");
        }
        let shot = dir.join(format!("status-{w}x{h}.png"));
        let _ = std::fs::remove_file(&shot);
        chromium_run(
            &page,
            &[
                format!("--screenshot={}", shot.display()),
                format!("--window-size={w},{h}"),
            ],
        );
        let png = std::fs::read(&shot).expect("screenshot written");
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 10_000,
            "{}",
            shot.display()
        );
        assert_eq!(png_size(&png), (w, h), "{}", shot.display());
    }
    busy.end().await;
}

/// How many lines Chromium lays out each copyable command, resume command and date of `page`
/// on at a `w`×`h` window: a copy of the page with a measuring script (the page itself runs
/// none) counts the distinct line tops of each one's text, and writes them into the DOM.
fn laid_out_lines(page: &Path, w: u32, h: u32) -> Vec<(usize, String)> {
    const MEASURE: &str = "<script>\
        const out = [];\
        for (const e of document.querySelectorAll('code.cmd, code.resume, time')) {\
          const r = document.createRange(); r.selectNodeContents(e);\
          const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));\
          out.push(tops.size + '\\t' + e.textContent);\
        }\
        const pre = document.createElement('pre'); pre.id = 'measured';\
        pre.textContent = out.join('\\n'); document.body.appendChild(pre);\
        </script>";
    let html = std::fs::read_to_string(page).unwrap();
    let measured = page.with_file_name(format!("status-measured-{w}.html"));
    std::fs::write(
        &measured,
        html.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let dom = chromium_run(
        &measured,
        &["--dump-dom".to_string(), format!("--window-size={w},{h}")],
    );
    let start = dom.find("<pre id=\"measured\">").expect("the script ran") + 19;
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    text.lines()
        .map(|l| {
            let (n, t) = l.split_once('\t').expect("count and text");
            (
                n.parse().unwrap(),
                t.replace("&amp;", "&").replace("&gt;", ">"),
            )
        })
        .collect()
}

/// Width and height from a PNG's IHDR.
fn png_size(png: &[u8]) -> (u32, u32) {
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_prints_no_terminal_escape_from_a_title_or_a_forged_record() {
    let world = World::new().await;
    // Given a Run on an issue whose title holds terminal escapes, and a stranger's broken record
    // holding more of them
    let title = "fix \u{1b}]0;owned\u{7}\u{1b}[2J\rreal title";
    let issue = world.sim.create_issue(BOT, title, "b", &[READY]);
    let run = start_run(&world, "h1", issue, "sleep 300").await;
    world.sim.add_comment(
        issue,
        STRANGER,
        "<!-- thirdshift:v1:claim {\"claim_id\":\"\u{1b}[31mx\"} -->",
    );
    ok(&world, "h1", &["observe", "--reconcile"]).await;
    // When status is printed as a table and as the issue's history
    let table = ok(&world, "h2", &["status"]).await;
    let history = ok(&world, "h2", &["status", "--issue", &issue.to_string()]).await;
    // Then neither holds an escape, a bell or a carriage return, and the title still shows
    for out in [&table, &history] {
        let text = stdout(out);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\r']), "{text:?}");
    }
    assert!(
        stdout(&history).contains("real title"),
        "{}",
        stdout(&history)
    );
    run.kill_all().await;
}

/// `status` for `args` as host h3 with `config`; its stdout.
async fn status_with(world: &World, config: &Path, args: &[&str]) -> String {
    let c = config.to_str().unwrap();
    let all = [&["--config", c, "status"][..], args].concat();
    stdout(&ok(world, "h3", &all).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_stopped_reporting_shows_silent_everywhere_and_its_runs_come_first() {
    // Given hosts that refresh their reports every 10 minutes: h1 with one live Run, h2 with
    // two live Runs and a capacity of one
    let world = World::new().await;
    let config = world.dir.path().join("thirdshift.yml");
    std::fs::write(
        &config,
        "observe:\n  refresh_mins: 10\nhosts:\n  h2:\n    capacity: 1\n",
    )
    .unwrap();
    let c = config.to_str().unwrap();
    let quiet = world.ready_issue("Quiet host's Run");
    let mut runs = vec![start_run(&world, "h1", quiet, "sleep 300").await];
    for title in ["Busy host's first Run", "Busy host's second Run"] {
        let issue = world.ready_issue(title);
        runs.push(start_run(&world, "h2", issue, "sleep 300").await);
    }
    ok(&world, "h1", &["--config", c, "observe"]).await;
    ok(&world, "h2", &["--config", c, "observe"]).await;
    // When an hour passes in which h1's observe never runs, while h2's does
    world.sim.backdate(std::time::Duration::from_secs(3600));
    ok(&world, "h2", &["--config", c, "observe"]).await;
    // Then status --json shows h1 silent and its Run `host-silent`, first; h2 over capacity
    let json: Value = serde_json::from_str(&status_with(&world, &config, &["--json"]).await)
        .expect("status --json prints JSON");
    let host = |name: &str| {
        json["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no host {name}: {json:#}"))
    };
    assert_eq!(host("h1")["silent"], true, "{json:#}");
    assert_eq!(host("h2")["silent"], false, "{json:#}");
    assert_eq!(host("h2")["over_capacity"], true, "{json:#}");
    assert_eq!(json["runs"][0]["issue"], quiet, "{json:#}");
    assert_eq!(json["runs"][0]["health"], "host-silent");
    assert_eq!(json["runs"][1]["health"], "alive");
    // And the terminal table says so
    let table = status_with(&world, &config, &[]).await;
    let line = |start: &str| {
        table
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start}:\n{table}"))
            .to_string()
    };
    assert!(
        line(&format!("#{quiet} ")).contains("host silent"),
        "{table}"
    );
    assert!(line("h1 ").contains("SILENT"), "{table}");
    assert!(line("h2 ").contains("OVER CAPACITY"), "{table}");
    assert!(!line("h2 ").contains("SILENT"), "{table}");
    // And the HTML page, as Chromium renders it
    let page = artifacts().join("status-silent.html");
    status_with(&world, &config, &["--html", page.to_str().unwrap()]).await;
    let dom = chromium_run(&page, &["--dump-dom".to_string()]);
    let row = |marker: &str| {
        let start = dom.find(marker).unwrap_or_else(|| panic!("no {marker}"));
        dom[start..start + dom[start..].find("</tr>").unwrap()].to_string()
    };
    assert!(row("data-host=\"h1\"").contains("flag-silent"), "{dom}");
    assert!(row("data-host=\"h2\"").contains("over capacity"), "{dom}");
    let quiet_row = row(&format!("data-issue=\"{quiet}\""));
    assert!(
        quiet_row.contains("h-host-silent\">host silent"),
        "{quiet_row}"
    );
    let first = dom.find("data-issue=").unwrap();
    assert!(dom[first..].starts_with(&format!("data-issue=\"{quiet}\"")));
    for run in runs {
        run.kill_all().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_host_report_is_rewritten_once_its_refresh_interval_has_passed() {
    // Given a host that has reported, with nothing changed since
    let world = World::new().await;
    ok(&world, "h1", &["observe"]).await;
    world.sim.clear_requests();
    ok(&world, "h1", &["observe"]).await;
    let edits = |world: &World| {
        world
            .sim
            .requests()
            .iter()
            .filter(|r| r.method == "PATCH" && r.path.contains("/issues/comments/"))
            .count()
    };
    assert_eq!(edits(&world), 0, "an unchanged report is not rewritten");
    // When its report is older than the refresh interval (an hour by default)
    world.sim.backdate(std::time::Duration::from_secs(3600));
    ok(&world, "h1", &["observe"]).await;
    // Then it is rewritten once, and not again by the next pass
    assert_eq!(edits(&world), 1);
    ok(&world, "h1", &["observe"]).await;
    assert_eq!(edits(&world), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_just_started_reads_starting_before_its_host_observes_again() {
    let world = World::new().await;
    // Given host h1, which has reported, and then a Run started on it
    ok(&world, "h1", &["observe"]).await;
    let issue = world.ready_issue("just started");
    let run = start_run(&world, "h1", issue, "sleep 30").await;
    // When status is asked 3 s later, with no observe since
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let out = ok(&world, "h2", &["status", "--json"]).await;
    // Then the Run reads `starting`, which needs no person, as JSON and as the table
    let view: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = view["runs"].as_array().unwrap();
    let row = runs.iter().find(|r| r["issue"] == issue).expect("the Run");
    assert_eq!(row["health"], "starting", "{row:#}");
    let table = stdout(&ok(&world, "h2", &["status"]).await);
    let line = table.lines().find(|l| l.contains("just started")).unwrap();
    assert!(line.contains("starting"), "{table}");
    // And once its host observes, it reads alive
    ok(&world, "h1", &["observe"]).await;
    let out = ok(&world, "h2", &["status", "--json"]).await;
    let view: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = view["runs"].as_array().unwrap();
    let row = runs.iter().find(|r| r["issue"] == issue).expect("the Run");
    assert_eq!(row["health"], "alive", "{row:#}");
    run.kill_all().await;
}
