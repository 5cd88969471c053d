//! Two Runs on one issue (docs/thirdshift.md, "Two Runs on one issue"): thirdshift claims with the
//! `in-progress` label alone, so a direct `thirdshift <issue-url>` beside a Pickup, or two
//! machines, can both work one issue. Each Command's host posts its adoption record on the issue
//! the first time it sees it alive; the lowest comment id keeps the issue, the same for every host
//! and reader, and every later Run is shown colliding. Each machine here is a host of its own
//! name: its `observe` runs in a UTS namespace whose system host name is the one its thirdshift
//! records name (`World::cli_on_machine`), with its own state folder and logs folder.

use crate::harness;
use crate::support::origin::{git, Origin};
use crate::thirdshift::{
    command_process, harness_in, launch_clone, record, record_on, thirdshift_worktree,
    write_command_log, write_record,
};

use std::path::{Path, PathBuf};

use harness::*;
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::{decode, Decoded, Outcome, Record};

/// A machine running one live thirdshift-shaped Command on `issue`: its process and config file.
struct Machine {
    name: &'static str,
    process: std::process::Child,
    config: PathBuf,
}

impl Machine {
    fn start(world: &World, name: &'static str, issue: u64, config_extra: &str) -> Machine {
        let repo = world.sim.repo_full_name();
        let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
        let process = command_process();
        let p = ProcessIdentity::of(process.id()).expect("it runs");
        let logs = world.dir.path().join(name).join("logs");
        write_record(&logs, &repo, issue, &record(&repo, issue, name, p, &boot));
        let config = world.dir.path().join(name).join("thirdshift.yml");
        let yaml = format!(
            "thirdshift:\n  logs_dir: {}\n{config_extra}",
            logs.display()
        );
        std::fs::write(&config, yaml).unwrap();
        Machine {
            name,
            process,
            config,
        }
    }

    /// One pass of `args` on this machine, to exit 0; what it printed (stdout, then stderr).
    async fn pass(&self, world: &World, args: &[&str]) -> String {
        let out = world
            .cli_on_machine(self.name)
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).to_string() + &stderr(&out)
    }

    /// `status --json` as this machine reads it: the rows of `issue`.
    async fn rows(&self, world: &World, issue: u64) -> Vec<serde_json::Value> {
        let out = world
            .cli_on_machine(self.name)
            .args(["status", "--json"])
            .output()
            .await
            .unwrap();
        rows_of(&out, issue)
    }
}

/// A machine's Command with its work: a launch clone of `origin`, the worktree thirdshift makes
/// on `issue-N` (a file the Harness was writing in it), the Command log naming it, and the
/// Harness running there as thirdshift starts it.
struct Working {
    machine: Machine,
    worktree: PathBuf,
    harness: std::process::Child,
}

impl Working {
    fn start(
        world: &World,
        origin: &Origin,
        name: &'static str,
        issue: u64,
        extra: &str,
    ) -> Working {
        let repo = world.sim.repo_full_name();
        let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
        let branch = format!("issue-{issue}");
        let launch = launch_clone(
            &world.dir.path().join(name).join("src"),
            &origin.bare,
            &repo,
        );
        let worktree = thirdshift_worktree(&launch, &branch);
        let process = command_process();
        let p = ProcessIdentity::of(process.id()).expect("it runs");
        let logs = world.dir.path().join(name).join("logs");
        let text = record_on(&repo, issue, name, p, &boot, &branch);
        write_command_log(
            &write_record(&logs, &repo, issue, &text),
            &worktree,
            &branch,
        );
        let harness = harness_in(&worktree);
        let config = world.dir.path().join(name).join("thirdshift.yml");
        let yaml = format!("thirdshift:\n  logs_dir: {}\n{extra}", logs.display());
        std::fs::write(&config, yaml).unwrap();
        Working {
            machine: Machine {
                name,
                process,
                config,
            },
            worktree,
            harness,
        }
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        let _ = self.harness.kill();
        let _ = self.harness.wait();
    }
}

/// Whether the child still runs (not exited, not reaped).
fn runs(child: &mut std::process::Child) -> bool {
    matches!(child.try_wait(), Ok(None))
}

/// The uncommitted files of the worktree `wt`.
fn dirty(wt: &Path) -> String {
    git(wt, &["status", "--porcelain"])
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn rows_of(out: &std::process::Output, issue: u64) -> Vec<serde_json::Value> {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = json["runs"].as_array().unwrap().iter();
    rows.filter(|r| r["issue"] == issue).cloned().collect()
}

/// The hosts of the trusted adoption records on `issue`, in comment order.
fn adoptions(world: &World, issue: u64) -> Vec<String> {
    let comments = world.sim.comments(issue).into_iter();
    comments
        .filter_map(|c| match decode(&c.body) {
            Decoded::Record(Record::Adopt(a)) if c.author == BOT => Some(a.command.host),
            _ => None,
        })
        .collect()
}

/// The "Needs you" part of the dashboard on the registry issue.
fn needs_you(world: &World) -> String {
    let registry = world.sim.issue(crate::view::registry(world)).unwrap().body;
    let part = registry.split("## ⚠️ Needs you").nth(1).unwrap_or_default();
    part.split("\n## ").next().unwrap_or_default().to_string()
}

/// (host, health, the host it collides with) of each row, sorted by host.
fn seen(rows: &[serde_json::Value]) -> Vec<(String, String, Option<String>)> {
    let mut out: Vec<_> = rows
        .iter()
        .map(|r| {
            let with = r["collides_with"]["host"].as_str().map(str::to_string);
            let (host, health) = (r["host"].as_str(), r["health"].as_str());
            (host.unwrap().to_string(), health.unwrap().to_string(), with)
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_machines_commands_on_one_issue_collide_and_every_reader_names_the_same_owner() {
    let world = World::new().await;
    // Given an issue thirdshift claimed (in-progress alone) and a live Command on each of two
    // machines (numbered apart from other tests' issues, whose Harnesses run on `issue-N`)
    for _ in 0..6 {
        world.sim.create_issue(BOT, "filler", "b", &[]);
    }
    let issue = world
        .sim
        .create_issue(BOT, "two machines", "b", &[IN_PROGRESS]);
    let a = Machine::start(&world, "mach-a", issue, "");
    let b = Machine::start(&world, "mach-b", issue, "");
    // When each machine observes once, mach-a first, and mach-b's host runs a reconcile pass
    a.pass(&world, &["observe"]).await;
    b.pass(&world, &["observe"]).await;
    let passed = b.pass(&world, &["reconcile"]).await;
    // Then each Command's place is recorded once on the issue, mach-a's first
    assert_eq!(adoptions(&world, issue), ["mach-a", "mach-b"]);
    // And from either machine and from a third reader, mach-a's Command keeps the issue and
    // mach-b's collides with it, both hosts named
    let expected = vec![
        ("mach-a".to_string(), "alive".to_string(), None),
        (
            "mach-b".to_string(),
            "colliding".to_string(),
            Some("mach-a".to_string()),
        ),
    ];
    let third = world.exec("reader", &["status", "--json"]).await;
    for rows in [
        a.rows(&world, issue).await,
        b.rows(&world, issue).await,
        rows_of(&third, issue),
    ] {
        assert_eq!(seen(&rows), expected, "{rows:#?}");
        let later = rows.iter().find(|r| r["host"] == "mach-b").unwrap();
        assert_eq!(later["attention"], "needs-you", "{later:#}");
        let evidence = later["evidence"].as_str().unwrap();
        assert!(
            evidence.contains("`mach-a`") && evidence.contains("`mach-b`"),
            "{evidence}"
        );
    }
    // And the HTML page, as headless Chromium renders it, has it under "Needs you"
    let page = world.dir.path().join("status.html");
    let out = world
        .exec("reader", &["status", "--html", page.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dom = chromium_run(&page, &["--dump-dom".to_string()]);
    let start = dom
        .find("<section id=\"needs-you\">")
        .expect("a Needs you section");
    let section = &dom[start..start + dom[start..].find("</section>").unwrap()];
    assert!(
        section.contains("h-colliding") && section.contains("mach-a") && section.contains("mach-b"),
        "{section}"
    );
    // And the pass says so, naming the Run that keeps the issue
    let colliding = format!("#{issue} colliding: collides on this issue with `ts-");
    assert!(
        passed.contains(&colliding) && passed.contains("host `mach-a`"),
        "{passed}"
    );
    // And the dashboard mach-b's pass wrote lists the collision under "Needs you", and the one
    // mach-a's pass writes lists the same
    let by_b = needs_you(&world);
    assert!(
        by_b.contains("colliding") && by_b.contains("`ts-") && by_b.contains("`mach-a`"),
        "{by_b}"
    );
    a.pass(&world, &["reconcile"]).await;
    assert_eq!(needs_you(&world), by_b);
    // And passes after that post nothing more and change no label
    a.pass(&world, &["observe", "--reconcile"]).await;
    b.pass(&world, &["observe", "--reconcile"]).await;
    assert_eq!(adoptions(&world, issue), ["mach-a", "mach-b"]);
    assert_eq!(world.labels(issue), [IN_PROGRESS]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_on_collision_stop_the_later_command_is_stopped_its_work_on_its_own_branch_and_the_owner_untouched(
) {
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    for _ in 0..8 {
        world.sim.create_issue(BOT, "filler", "b", &[]);
    }
    // Given an issue thirdshift claimed, a Command on mach-a working on it (its Harness writing
    // in its worktree on issue-N, nothing pushed yet), and a later one on mach-b on the same
    // Issue branch name, both hosts set to stop a Run that collides
    let issue = world
        .sim
        .create_issue(BOT, "two machines", "b", &[IN_PROGRESS]);
    let stop = "  on_collision: stop\n";
    let mut a = Working::start(&world, &origin, "mach-a", issue, stop);
    a.machine.pass(&world, &["observe"]).await;
    let mut b = Working::start(&world, &origin, "mach-b", issue, stop);
    // When mach-b observes once, then both hosts pass with reconcile
    let said = b.machine.pass(&world, &["observe"]).await;
    a.machine.pass(&world, &["observe", "--reconcile"]).await;
    b.machine.pass(&world, &["observe", "--reconcile"]).await;
    // Then mach-b's Command and its Harness are stopped, and mach-a's run on
    assert!(
        !runs(&mut b.machine.process),
        "mach-b's Command still runs: {said}"
    );
    assert!(!runs(&mut b.harness), "mach-b's Harness still runs");
    let line = "stopped thirdshift's Command ts-";
    let owner = "on mach-a, which keeps the issue";
    assert!(said.contains(line) && said.contains(owner), "{said}");
    assert!(runs(&mut a.machine.process) && runs(&mut a.harness));
    // And mach-b's work is on a branch of its own on origin, never on the Issue branch
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1, "{ends:#?}");
    let end = &ends[0].record;
    let own = format!("thirdshift/salvage/{}", end.claim_id);
    let kept = end.kept.as_ref().expect("what was kept");
    assert!(kept.pushed && kept.branch == own, "{kept:?}");
    let files = git(&origin.bare, &["ls-tree", "--name-only", &own]);
    assert!(files.contains("half-done.txt"), "{files}");
    let heads = git(&origin.bare, &["branch", "--list"]);
    assert!(!heads.contains(&format!("issue-{issue}\n")), "{heads}");
    // And it ended superseded by mach-a's Command, stating no labels, naming both hosts
    assert_eq!(end.outcome, Outcome::Superseded);
    assert_eq!(end.labels_after, None);
    assert_eq!(end.run.thirdshift().unwrap().host, "mach-b");
    assert!(end.reason.contains("`mach-a`"), "{}", end.reason);
    // And the owner is untouched: its worktree's work still uncommitted, the issue in-progress
    assert!(dirty(&a.worktree).contains("half-done.txt"));
    assert_eq!(world.labels(issue), [IN_PROGRESS]);
    // And every reader shows mach-a's Command alone, alive
    let third = world.exec("reader", &["status", "--json"]).await;
    let rows = rows_of(&third, issue);
    assert_eq!(seen(&rows), [("mach-a".into(), "alive".into(), None)]);
    // And the issue's history lists both Commands in their order, the later one ended
    let out = world
        .exec("reader", &["status", "--issue", &issue.to_string()])
        .await;
    let history = String::from_utf8_lossy(&out.stdout).to_string();
    let (first, second) = (
        history.find("on mach-a (PID").expect("mach-a's place"),
        history.find("on mach-b (PID").expect("mach-b's place"),
    );
    assert!(first < second, "{history}");
    assert!(
        history[second..].contains("ended superseded by observe@mach-b"),
        "{history}"
    );
    // And passes after that change nothing more
    let records = world.records(issue).len();
    for _ in 0..3 {
        a.machine.pass(&world, &["observe", "--reconcile"]).await;
        b.machine.pass(&world, &["observe", "--reconcile"]).await;
    }
    assert_eq!(world.records(issue).len(), records);
    assert_eq!(world.labels(issue), [IN_PROGRESS]);
    assert!(runs(&mut a.machine.process) && runs(&mut a.harness));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_direct_run_started_on_an_issue_a_real_pickup_runs_is_shown_colliding() {
    use crate::thirdshift_real::{two_hosts, until_harness, Groups};
    use std::time::{Duration, Instant};
    let (world, _origin, a, b) = two_hosts().await;
    let issue = world.ready_issue("taken twice");
    // (labelled Ready ten minutes ago: thirdshift's Pickup takes only settled issues)
    world.sim.backdate(Duration::from_secs(600));
    // Given the real thirdshift's Pickup on host a at work on the issue, seen by its host
    let mut pickup = a.start_with(&world, &["pickup"]);
    let mut groups = Groups(vec![pickup.id()]);
    let (harness_a, _) = until_harness(&a, Instant::now()).await;
    groups.0.push(harness_a);
    a.pass(&world).await;
    // When a direct run of the real thirdshift is started on the same issue on host b (it
    // takes no reservation and does not refuse an issue already in-progress)
    let mut direct = b.start(&world, issue);
    groups.0.push(direct.id());
    let (harness_b, _) = until_harness(&b, Instant::now()).await;
    groups.0.push(harness_b);
    // and host b passes once
    b.pass(&world).await;
    // Then every view shows the direct run colliding with the Pickup, both hosts named
    let third = world.exec("reader", &["status", "--json"]).await;
    let rows = rows_of(&third, issue);
    let expected = vec![
        ("ha".to_string(), "alive".to_string(), None),
        (
            "hb".to_string(),
            "colliding".to_string(),
            Some("ha".to_string()),
        ),
    ];
    assert_eq!(
        seen(&rows),
        expected,
        "{rows:#?}\n{}\n{}",
        a.said(),
        b.said()
    );
    let later = rows.iter().find(|r| r["host"] == "hb").unwrap();
    assert_eq!(later["attention"], "needs-you");
    // and host a's pass, the one after, shows the same
    a.pass(&world).await;
    let again = world.exec("ha", &["status", "--json"]).await;
    assert_eq!(seen(&rows_of(&again, issue)), expected);
    drop(groups);
    pickup.wait().unwrap();
    direct.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_on_an_issue_our_run_keeps_collides_with_it_and_is_the_one_stopped() {
    let world = World::new().await;
    for _ in 0..10 {
        world.sim.create_issue(BOT, "filler", "b", &[]);
    }
    // Given a Run of ours holding an issue, seen alive by its host
    let issue = world.ready_issue("ours first");
    let mut ours = start_run(&world, "ours", issue, "sleep 600").await;
    world.exec("ours", &["observe"]).await;
    // and a thirdshift Command started later on the same issue on mach-b, shown only
    let b = Machine::start(&world, "mach-b", issue, "");
    b.pass(&world, &["observe", "--reconcile"]).await;
    // Then the Command collides with our Run, decided as among Commands: our claim came first
    let expected = vec![
        (
            "mach-b".to_string(),
            "colliding".to_string(),
            Some("ours".to_string()),
        ),
        ("ours".to_string(), "alive".to_string(), None),
    ];
    let third = world.exec("reader", &["status", "--json"]).await;
    assert_eq!(seen(&rows_of(&third, issue)), expected);
    // When mach-b is set to stop a Run that collides, and passes again
    let logs = world.dir.path().join("mach-b").join("logs");
    let yaml = format!(
        "thirdshift:\n  logs_dir: {}\n  on_collision: stop\n",
        logs.display()
    );
    std::fs::write(&b.config, yaml).unwrap();
    b.pass(&world, &["observe", "--reconcile"]).await;
    // Then the Command is stopped and ended superseded, and our Run goes on holding the issue
    let mut b = b;
    assert!(!runs(&mut b.process), "mach-b's Command still runs");
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1, "{ends:#?}");
    assert_eq!(ends[0].record.outcome, Outcome::Superseded);
    assert!(
        matches!(ours.child.try_wait(), Ok(None)),
        "our Run still runs"
    );
    assert_eq!(
        world.ownership(issue).owner.map(|o| o.record.claim_id),
        Some(ours.claim_id.clone())
    );
    assert_eq!(world.labels(issue), [IN_PROGRESS]);
    let third = world.exec("reader", &["status", "--json"]).await;
    assert_eq!(
        seen(&rows_of(&third, issue)),
        [("ours".to_string(), "alive".to_string(), None)]
    );
    ours.kill_all().await;
}
