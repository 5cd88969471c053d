//! thirdshift's own Runs, seen with no wrapper: a Command record written in thirdshift 0.19.0's
//! own format for a real process, under its logs folder, becomes a Claim in this host's report,
//! judged on the same evidence as our Runs. The record's shape is thirdshift's `CommandTree`
//! (`src/logs/command_record.rs`: `CommandRecord` fields, flattened, plus `dispatched`), its
//! `hostname` from `gethostname` and `process_start` `<boot_id>:<ticks>` as `start_record` sets
//! them (`src/logs/recording.rs`, `src/logs/process_identity.rs` `start`), at
//! `<logs>/<owner>/<repo>/commands/issue/<n>-<stamp>~<random>.command.json`
//! (`src/logs/owner.rs`). A Command's Harness is started as thirdshift starts it: a process group
//! of its own with `THIRDSHIFT_SESSION` in its environment, in the worktree
//! (`src/process/session.rs` `mark`); its worktree is a sibling of the launch repository named
//! `<repo>-<branch>`, made from `main`, and its Command log beside the record (named as the
//! record up to its first `.`, `src/logs/owner.rs` `record_log`) holds the line thirdshift prints
//! making it (`src/worktree.rs` `add`: `creating worktree {path} on {branch} from {source}`,
//! stamped `thirdshift: HH:MM:SS` by `src/progress.rs` `progress_line`). A dead Command ends as
//! thirdshift's own Failed run labels the issue (`src/claim.rs` `Claimed::end`,
//! `release_if_nothing_on_origin`, `label_failed`; `src/branch.rs` `started`).

use crate::harness;
#[allow(dead_code)]
use crate::support::origin;

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

use harness::*;
use origin::{git, Origin};
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::{
    decode, ClaimVerdict, DeathReason, Decoded, Kind, Record, Verdict,
};

/// A Command record as thirdshift's recorder writes it, for `pid` on `issue` of `repo`.
pub(crate) fn record(
    repo: &str,
    issue: u64,
    hostname: &str,
    p: ProcessIdentity,
    boot: &str,
) -> String {
    record_on(repo, issue, hostname, p, boot, &format!("issue-{issue}"))
}

/// [`record`], its Issue branch `branch`.
pub(crate) fn record_on(
    repo: &str,
    issue: u64,
    hostname: &str,
    p: ProcessIdentity,
    boot: &str,
    branch: &str,
) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "version": 2,
        "kind": "Ticket",
        "repository": repo,
        "name": format!("{repo}#{issue}"),
        "issue": { "number": issue, "url": format!("https://github.com/{repo}/issues/{issue}"),
                   "title": null },
        "hostname": hostname,
        "process_id": p.pid,
        "process_start": format!("{boot}:{}", p.start_ticks),
        "harness": "claude",
        "model": "opus",
        "effort": "high",
        "started_at": "2026-12-04T10:00:00+00:00",
        "ended_at": null,
        "stages": [
            { "name": "claiming", "began_at": "2026-12-04T10:00:01+00:00", "session_log": null },
            { "name": "implementing", "began_at": "2026-12-04T10:00:05+00:00",
              "session_log": null }
        ],
        "session_log": null,
        "outcome": null,
        "run_metrics": null,
        "cause": null,
        "issue_branch": branch,
        "pull_request": null,
        "parent_record": null,
        "parent_dispatch": null,
        "tickets": [],
        "security_findings_waiting": false,
        "dispatched": []
    }))
    .unwrap()
}

/// Writes `text` as a record of `repo` under `logs`, named as thirdshift names them.
pub(crate) fn write_record(logs: &Path, repo: &str, issue: u64, text: &str) -> PathBuf {
    let dir = logs.join(repo).join("commands/issue");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "{issue}-20261204T100000+0000~0123456789abcdef.command.json"
    ));
    std::fs::write(&path, text).unwrap();
    path
}

/// A stand-in for thirdshift's process: a real process in a process group of its own.
pub(crate) fn command_process() -> std::process::Child {
    std::process::Command::new("sleep")
        .arg("600")
        .process_group(0)
        .spawn()
        .unwrap()
}

pub(crate) fn system_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// The verdicts `host` last reported on adopted thirdshift Commands.
pub(crate) fn adopted_verdicts(world: &World, host: &str) -> Vec<ClaimVerdict> {
    (1..=20)
        .flat_map(|n| world.sim.comments(n))
        .find_map(|c| match decode(&c.body) {
            Decoded::Record(Record::HostReport(r)) if r.host == host => Some(r),
            _ => None,
        })
        .expect("the host reported")
        .claims
        .into_iter()
        .filter(|c| !c.run.is_ours())
        .collect()
}

/// One `observe` of `host` with `config`; its stderr.
async fn observe(world: &World, host: &str, config: &Path) -> String {
    pass(world, host, config, &["observe"]).await
}

/// One `observe --reconcile` of `host` with `config`: the pass that ends what it proved dead.
pub(crate) async fn observe_reconcile(world: &World, host: &str, config: &Path) -> String {
    pass(world, host, config, &["observe", "--reconcile"]).await
}

async fn pass(world: &World, host: &str, config: &Path, args: &[&str]) -> String {
    let out = world
        .cli(host)
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stderr(&out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thirdshift_command_is_in_its_hosts_report_alive_then_dead_once_killed() {
    let world = World::new().await;
    let repo = world.sim.repo_full_name();
    // Given an issue thirdshift claimed (in-progress alone), its Command's process, and the
    // Command record thirdshift keeps for it; beside it a record another host wrote, and one
    // that does not parse
    // (numbered apart from the other test's issue: its Harness, running in this test process at
    // the same time on `issue-1`, would rightly count as a writer of a Command there)
    world.sim.create_issue(BOT, "filler", "b", &[]);
    world.sim.create_issue(BOT, "filler", "b", &[]);
    let issue = world
        .sim
        .create_issue(BOT, "thirdshift's", "b", &[IN_PROGRESS]);
    let other = world
        .sim
        .create_issue(BOT, "elsewhere", "b", &[IN_PROGRESS]);
    let logs = world.dir.path().join("thirdshift-logs");
    let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
    let mut process = command_process();
    let p = ProcessIdentity::of(process.id()).expect("it runs");
    write_record(
        &logs,
        &repo,
        issue,
        &record(&repo, issue, &system_hostname(), p, &boot),
    );
    write_record(
        &logs,
        &repo,
        other,
        &record(&repo, other, "not-this-host", p, &boot),
    );
    write_record(&logs, &repo, 99, "{\"kind\": \"Ticket\"");
    let config = world.dir.path().join("thirdshift.yml");
    let yaml = format!("thirdshift:\n  logs_dir: {}\n", logs.display());
    std::fs::write(&config, yaml).unwrap();
    // When the host observes
    let said = observe(&world, "h1", &config).await;
    // Then the record that does not parse and the other host's are reported, and left out
    assert!(said.contains("thirdshift record ignored"), "{said}");
    assert!(
        said.contains("thirdshift record of another host ignored"),
        "{said}"
    );
    // And its report holds the Command, alive, with what its record says, and nothing else
    let seen = adopted_verdicts(&world, "h1");
    assert_eq!(seen.len(), 1, "{seen:#?}");
    let facts = seen[0].run.thirdshift().cloned().unwrap();
    assert_eq!((seen[0].issue, &seen[0].verdict), (issue, &Verdict::Alive));
    assert!(seen[0].claim_id.starts_with("ts-"), "{}", seen[0].claim_id);
    assert_eq!(facts.kind, "Ticket");
    assert_eq!(facts.stage.as_deref(), Some("implementing"));
    assert_eq!(
        (facts.harness.as_deref(), facts.model.as_deref()),
        (Some("claude"), Some("opus"))
    );
    assert_eq!(facts.branch, Some(format!("issue-{issue}")));
    // And the live view shows it like our Runs, marked as thirdshift: in `status --json`
    let out = world.exec("h2", &["status", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["issue"] == issue)
        .cloned()
        .expect("the Command is listed");
    assert_eq!(row["host"], "h1");
    assert_eq!(row["stage"], "implementing");
    assert_eq!(
        (row["harness"].clone(), row["model"].clone()),
        ("claude".into(), "opus".into())
    );
    assert_eq!(row["health"], "alive", "{row:#}");
    assert!(row["thirdshift_record"]
        .as_str()
        .is_some_and(|r| r.ends_with(".command.json")));
    // and in the HTML page
    let page = world.dir.path().join("status.html");
    let out = world
        .exec("h2", &["status", "--html", page.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // (as headless Chromium renders it: the Command's row, its host, stage and health, and the tag)
    let dom = chromium_run(&page, &["--dump-dom".to_string()]);
    let start = dom
        .find(&format!("data-issue=\"{issue}\""))
        .unwrap_or_else(|| panic!("no row for #{issue}: {dom}"));
    let row = &dom[start..start + dom[start..].find("</tr>").unwrap()];
    assert!(
        row.contains("class=\"tag thirdshift\""),
        "marked as thirdshift: {row}"
    );
    assert!(
        row.contains("<code>h1</code>") && row.contains("implementing"),
        "{row}"
    );
    assert!(
        row.contains("<span class=\"health h-alive\">alive</span>"),
        "{row}"
    );
    // When its process is killed outright and the host observes again
    process.kill().unwrap();
    process.wait().unwrap();
    observe(&world, "h1", &config).await;
    // Then the same Claim is reported dead, its PID gone
    let after = adopted_verdicts(&world, "h1");
    assert_eq!(after.len(), 1);
    assert_eq!(
        after[0].claim_id, seen[0].claim_id,
        "the claim id is stable"
    );
    assert!(
        matches!(
            after[0].verdict,
            Verdict::Dead {
                reason: DeathReason::PidGone,
                ..
            }
        ),
        "{:?}",
        after[0].verdict
    );
    // When the host passes with reconcile
    observe_reconcile(&world, "h1", &config).await;
    // Then the dead Command is ended (released: nothing of it anywhere), while the issue the
    // other host's record names is never acted on
    assert_eq!(world.ownership(issue).adopted_ends.len(), 1);
    assert_eq!(world.labels(issue), [READY]);
    assert_eq!(world.labels(other), [IN_PROGRESS]);
    assert!(
        world.records(other).is_empty(),
        "nothing written on #{other}"
    );
}

/// A stand-in for a Command's Harness, as thirdshift starts one (`src/process/session.rs`
/// `mark`): a process group of its own, thirdshift's session marker in its environment, the
/// worktree `wt` as its working directory.
pub(crate) fn harness_in(wt: &Path) -> std::process::Child {
    std::process::Command::new("sleep")
        .arg("600")
        .current_dir(wt)
        .env("THIRDSHIFT_SESSION", "0123456789abcdef0123456789abcdef")
        .process_group(0)
        .spawn()
        .unwrap()
}

/// A clone of `repo` (its origin on GitHub) with a linked worktree on `branch`, as thirdshift
/// makes one for a Command.
pub(crate) fn worktree_on(dir: &Path, repo: &str, branch: &str) -> PathBuf {
    let (main, wt) = (dir.join("repo"), dir.join(format!("wt-{branch}")));
    std::fs::create_dir_all(&main).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&main)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["commit", "-q", "--allow-empty", "-m", "first"]);
    let origin = format!("https://github.com/{repo}.git");
    git(&["remote", "add", "origin", &origin]);
    git(&["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()]);
    wt
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_command_whose_harness_lives_on_in_its_worktree_has_writers_alive_until_it_exits()
{
    let world = World::new().await;
    let repo = world.sim.repo_full_name();
    let issue = world
        .sim
        .create_issue(BOT, "harness lives on", "b", &[IN_PROGRESS]);
    let logs = world.dir.path().join("thirdshift-logs");
    let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
    // Given a Command, and its Harness: a process of its own carrying thirdshift's session marker
    // in the Command's worktree on its Issue branch
    let mut command = command_process();
    let p = ProcessIdentity::of(command.id()).expect("it runs");
    write_record(
        &logs,
        &repo,
        issue,
        &record(&repo, issue, &system_hostname(), p, &boot),
    );
    let wt = worktree_on(world.dir.path(), &repo, &format!("issue-{issue}"));
    let mut harness = harness_in(&wt);
    let config = world.dir.path().join("thirdshift.yml");
    let yaml = format!("thirdshift:\n  logs_dir: {}\n", logs.display());
    std::fs::write(&config, yaml).unwrap();
    // When the Command's process group is killed outright and the host observes five times
    unsafe { libc::kill(-(p.pid as i32), libc::SIGKILL) };
    command.wait().unwrap();
    for _ in 0..5 {
        let seen = observe_reconcile(&world, "h1", &config).await;
        // Then each time the Command has writers alive, naming its Harness, and is not ended
        let verdicts = adopted_verdicts(&world, "h1");
        match &verdicts[0].verdict {
            Verdict::WritersAlive { pids, .. } => assert_eq!(pids, &vec![harness.id()]),
            other => panic!("expected writers alive, got {other:?}: {seen}"),
        }
        assert!(world.ownership(issue).adopted_ends.is_empty());
        assert_eq!(world.labels(issue), [IN_PROGRESS]);
    }
    // When the Harness exits too, the next pass finds the Command dead and ends it
    harness.kill().unwrap();
    harness.wait().unwrap();
    observe_reconcile(&world, "h1", &config).await;
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1, "one end record");
    let why = &ends[0].record.reason;
    assert!(why.contains("dead (PID gone)"), "{why}");
    // (its worktree holds no work and its branch is not on origin: released as thirdshift would)
    assert_eq!(world.labels(issue), [READY]);
}

/// A launch clone of `origin` as a team's machine has one: `<dir>/<name>` for repository
/// `repo` (`owner/name`), its origin URL on GitHub (`https://github.com/<repo>.git`, rewritten
/// to the bare repository with git's `url.<bare>.insteadOf`, so pushes reach `origin`).
pub(crate) fn launch_clone(dir: &Path, bare: &Path, repo: &str) -> PathBuf {
    let name = repo.split_once('/').unwrap().1;
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["clone", "--quiet", bare.to_str().unwrap(), name]);
    let launch = dir.join(name);
    let url = format!("https://github.com/{repo}.git");
    git(&launch, &["remote", "set-url", "origin", &url]);
    let rewrite = format!("url.{}.insteadOf", bare.display());
    git(&launch, &["config", &rewrite, &url]);
    launch
}

/// A Command's worktree as thirdshift makes one (`src/worktree.rs` `add`, `sibling`): beside the
/// launch clone `launch`, named `<repo>-<branch>`, on `branch` from `main`, with a file the
/// Harness was writing.
pub(crate) fn thirdshift_worktree(launch: &Path, branch: &str) -> PathBuf {
    let name = launch.file_name().unwrap().to_str().unwrap();
    let wt = launch.with_file_name(format!("{name}-{branch}"));
    git(
        launch,
        &[
            "worktree",
            "add",
            "--quiet",
            "-b",
            branch,
            wt.to_str().unwrap(),
            "main",
        ],
    );
    std::fs::write(wt.join("half-done.txt"), "the Harness was writing this").unwrap();
    wt
}

/// The Command log beside `record`, holding the line thirdshift prints making `wt`
/// (`src/worktree.rs` `add`: `creating worktree {path} on {branch} from {source}`, stamped by
/// `src/progress.rs`).
pub(crate) fn write_command_log(record: &Path, wt: &Path, branch: &str) {
    let name = record.file_name().unwrap().to_str().unwrap();
    let log = record.with_file_name(format!("{}.log", name.split('.').next().unwrap()));
    let text = format!(
        "thirdshift: 10:00:01 labelling #7 in-progress, in place of ready-for-agent\n\
         thirdshift: 10:00:03 creating worktree {} on {branch} from origin/main\n",
        wt.display()
    );
    std::fs::write(log, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_command_is_ended_as_thirdshifts_failed_run_with_its_work_on_its_issue_branch() {
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let repo = world.sim.repo_full_name();
    let logs = world.dir.path().join("thirdshift-logs");
    let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
    // (numbered apart from the other tests' issues, whose Harnesses run in this process too)
    for _ in 0..4 {
        world.sim.create_issue(BOT, "filler", "b", &[]);
    }
    // Given a Command on its issue's second Issue branch, its Harness writing in its worktree
    let issue = world.sim.create_issue(BOT, "killed", "b", &[IN_PROGRESS]);
    let branch = format!("issue-{issue}-branch-2");
    let launch = launch_clone(&world.dir.path().join("src"), &origin.bare, &repo);
    let wt = thirdshift_worktree(&launch, &branch);
    let mut command = command_process();
    let p = ProcessIdentity::of(command.id()).expect("it runs");
    let text = record_on(&repo, issue, &system_hostname(), p, &boot, &branch);
    let path = write_record(&logs, &repo, issue, &text);
    write_command_log(&path, &wt, &branch);
    let mut harness = harness_in(&wt);
    // and a live Command on another issue of the same host
    let live_issue = world.sim.create_issue(BOT, "alive", "b", &[IN_PROGRESS]);
    let mut live = command_process();
    let q = ProcessIdentity::of(live.id()).expect("it runs");
    write_record(
        &logs,
        &repo,
        live_issue,
        &record(&repo, live_issue, &system_hostname(), q, &boot),
    );
    let config = world.dir.path().join("thirdshift.yml");
    std::fs::write(
        &config,
        format!("thirdshift:\n  logs_dir: {}\n", logs.display()),
    )
    .unwrap();
    // When its process and its Harness's process group are killed outright
    unsafe { libc::kill(-(p.pid as i32), libc::SIGKILL) };
    unsafe { libc::kill(-(harness.id() as i32), libc::SIGKILL) };
    command.wait().unwrap();
    harness.wait().unwrap();
    // and its host passes once
    observe_reconcile(&world, "h1", &config).await;
    // Then the dirty file is committed and pushed on its own Issue branch on origin
    let log = origin.log(&branch);
    assert_eq!(
        log[..2],
        ["thirdshift: failed run (killed)", "initial"],
        "{log:?}"
    );
    let files = git(&origin.bare, &["ls-tree", "--name-only", &branch]);
    assert!(files.contains("half-done.txt"), "{files}");
    // and the issue is labelled as thirdshift's own Failed run labels it: Claim kept, agent-failed
    let mut labels = world.labels(issue);
    labels.sort();
    assert_eq!(labels, ["agent-failed", IN_PROGRESS]);
    // and a trusted end record names the evidence and where the work is
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1);
    let end = &ends[0].record;
    assert_eq!(
        end.outcome,
        thirdshift_reconciler::protocol::record::Outcome::Recovered
    );
    let evidence = end.run.thirdshift().expect("the evidence");
    assert_eq!((evidence.host.as_str(), evidence.pid), ("h1", p.pid));
    assert_eq!(evidence.process_start, format!("{boot}:{}", p.start_ticks));
    assert!(evidence.record.ends_with(".command.json"), "{evidence:?}");
    let kept = end.kept.as_ref().expect("what was kept");
    assert!(kept.pushed && kept.branch == branch, "{kept:?}");
    // When the host passes 20 times more
    for _ in 0..20 {
        observe_reconcile(&world, "h1", &config).await;
    }
    // Then the ended Command is ended once, and the live Command is never touched: its issue
    // holds its adoption record alone (its place among the issue's Runs)
    assert_eq!(world.ownership(issue).adopted_ends.len(), 1);
    assert_eq!(world.labels(live_issue), [IN_PROGRESS]);
    assert_eq!(world.record_kinds(live_issue), [Kind::Adopt]);
    let seen = adopted_verdicts(&world, "h1");
    assert_eq!(
        seen.len(),
        1,
        "the ended Command left the report: {seen:#?}"
    );
    assert_eq!(
        (seen[0].issue, &seen[0].verdict),
        (live_issue, &Verdict::Alive)
    );
    live.kill().unwrap();
    live.wait().unwrap();
}
