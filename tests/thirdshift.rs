//! thirdshift's own Runs, seen with no wrapper: a Command record written in thirdshift 0.19.0's
//! own format for a real process, under its logs folder, becomes a Claim in this host's report,
//! judged on the same evidence as our Runs. The record's shape is thirdshift's `CommandTree`
//! (`src/logs/command_record.rs`: `CommandRecord` fields, flattened, plus `dispatched`), its
//! `hostname` from `gethostname` and `process_start` `<boot_id>:<ticks>` as `start_record` sets
//! them (`src/logs/recording.rs`, `src/logs/process_identity.rs` `start`), at
//! `<logs>/<owner>/<repo>/commands/issue/<n>-<stamp>~<random>.command.json`
//! (`src/logs/owner.rs`).

mod harness;

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

use harness::*;
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::record::{decode, ClaimVerdict, DeathReason, Decoded, Record, Verdict};

/// A Command record as thirdshift's recorder writes it, for `pid` on `issue` of `repo`.
fn record(repo: &str, issue: u64, hostname: &str, p: ProcessIdentity, boot: &str) -> String {
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
        "issue_branch": format!("issue-{issue}"),
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
fn write_record(logs: &Path, repo: &str, issue: u64, text: &str) -> PathBuf {
    let dir = logs.join(repo).join("commands/issue");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "{issue}-20261204T100000+0000~0123456789abcdef.command.json"
    ));
    std::fs::write(&path, text).unwrap();
    path
}

/// A stand-in for thirdshift's process: a real process in a process group of its own.
fn command_process() -> std::process::Child {
    std::process::Command::new("sleep")
        .arg("600")
        .process_group(0)
        .spawn()
        .unwrap()
}

fn system_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// The verdicts `host` last reported on adopted thirdshift Commands.
fn adopted_verdicts(world: &World, host: &str) -> Vec<ClaimVerdict> {
    (1..=20)
        .flat_map(|n| world.sim.comments(n))
        .find_map(|c| match decode(&c.body) {
            Decoded::Record(Record::HostReport(r)) if r.host == host => Some(r),
            _ => None,
        })
        .expect("the host reported")
        .claims
        .into_iter()
        .filter(|c| c.thirdshift.is_some())
        .collect()
}

/// One `observe` of `host` with `config`; its stderr.
async fn observe(world: &World, host: &str, config: &Path) -> String {
    let out = world
        .cli(host)
        .arg("--config")
        .arg(config)
        .arg("observe")
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
    let facts = seen[0].thirdshift.clone().unwrap();
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
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("class=\"tag thirdshift\""),
        "marked as thirdshift"
    );
    assert!(html.contains("<code>h1</code>") && html.contains("implementing"));
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
}

/// A repository with a linked worktree on `branch`, as thirdshift makes one for a Command.
fn worktree_on(dir: &Path, branch: &str) -> PathBuf {
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
    let wt = worktree_on(world.dir.path(), &format!("issue-{issue}"));
    let mut harness = std::process::Command::new("sleep")
        .arg("600")
        .current_dir(&wt)
        .env("THIRDSHIFT_SESSION", "0123456789abcdef0123456789abcdef")
        .process_group(0)
        .spawn()
        .unwrap();
    let config = world.dir.path().join("thirdshift.yml");
    let yaml = format!("thirdshift:\n  logs_dir: {}\n", logs.display());
    std::fs::write(&config, yaml).unwrap();
    // When the Command's process group is killed outright and the host observes five times
    unsafe { libc::kill(-(p.pid as i32), libc::SIGKILL) };
    command.wait().unwrap();
    for _ in 0..5 {
        observe(&world, "h1", &config).await;
        // Then each time the Command has writers alive, naming its Harness
        let seen = adopted_verdicts(&world, "h1");
        match &seen[0].verdict {
            Verdict::WritersAlive { pids, .. } => assert_eq!(pids, &vec![harness.id()]),
            other => panic!("expected writers alive, got {other:?}"),
        }
    }
    // When the Harness exits too, the next pass finds the Command dead
    harness.kill().unwrap();
    harness.wait().unwrap();
    observe(&world, "h1", &config).await;
    let seen = adopted_verdicts(&world, "h1");
    assert!(
        matches!(
            seen[0].verdict,
            Verdict::Dead {
                reason: DeathReason::PidGone,
                ..
            }
        ),
        "{:?}",
        seen[0].verdict
    );
}
