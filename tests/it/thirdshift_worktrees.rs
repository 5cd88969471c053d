//! Where a dead thirdshift Command's work is, when its agent is hostile: thirdshift 0.19.0 keeps
//! the agent's own tool use in the Command log beside its own steps (a Bash call is logged as
//! `thirdshift: HH:MM:SS <stage>: $ <first line>`, `src/progress.rs` `bash`), so an agent can
//! print any `creating worktree <path> on <branch> from <x>`. Only thirdshift's own step names the
//! Command's worktree, and only where thirdshift makes one (`<launch parent>/<repo>-<branch>`, a
//! linked worktree of a clone of this repository on GitHub); a Harness that switched branch there
//! is still a writer. Everything is real: git repositories, bare origins, processes and signals.

use crate::harness;
use crate::support::origin;
use crate::thirdshift::{
    adopted_verdicts, command_process, harness_in, launch_clone, observe_reconcile, record_on,
    system_hostname, thirdshift_worktree, write_command_log, write_record,
};

use std::path::{Path, PathBuf};

use harness::*;
use origin::{git, Origin};
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::Verdict;

/// A world on a real bare origin, a thirdshift config reading `logs`, and `fillers` issues first
/// (the tests' Harnesses run in this one test process: numbering each test's issue apart keeps
/// one test's Harness from being a writer of another's Command on a branch of the same name).
async fn world_with(fillers: usize) -> (World, Origin, PathBuf, PathBuf) {
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    for _ in 0..fillers {
        world.sim.create_issue(BOT, "filler", "b", &[]);
    }
    let logs = world.dir.path().join("thirdshift-logs");
    let config = world.dir.path().join("thirdshift.yml");
    let yaml = format!("thirdshift:\n  logs_dir: {}\n", logs.display());
    std::fs::write(&config, yaml).unwrap();
    (world, origin, logs, config)
}

/// A running Command of this host on `issue`'s `branch`, its record under `logs`: the process
/// and the record's path.
fn command_on(
    world: &World,
    logs: &Path,
    issue: u64,
    branch: &str,
) -> (std::process::Child, ProcessIdentity, PathBuf) {
    let repo = world.sim.repo_full_name();
    let boot = thirdshift_reconciler::host::HostIdentity::detect(None).boot_id;
    let process = command_process();
    let p = ProcessIdentity::of(process.id()).expect("it runs");
    let text = record_on(&repo, issue, &system_hostname(), p, &boot, branch);
    (process, p, write_record(logs, &repo, issue, &text))
}

/// A running Command of this host on a new `in-progress` issue, its worktree made as thirdshift
/// makes one (beside a launch clone of `origin`, with work in progress there) and named by its
/// Command log.
struct Running {
    issue: u64,
    branch: String,
    wt: PathBuf,
    command: std::process::Child,
    p: ProcessIdentity,
    record: PathBuf,
}

fn running(world: &World, origin: &Origin, logs: &Path, title: &str) -> Running {
    let repo = world.sim.repo_full_name();
    let issue = world.sim.create_issue(BOT, title, "b", &[IN_PROGRESS]);
    let branch = format!("issue-{issue}");
    let launch = launch_clone(&world.dir.path().join("src"), &origin.bare, &repo);
    let wt = thirdshift_worktree(&launch, &branch);
    let (command, p, record) = command_on(world, logs, issue, &branch);
    write_command_log(&record, &wt, &branch);
    Running {
        issue,
        branch,
        wt,
        command,
        p,
        record,
    }
}

/// Kills the Command's process group outright, as kill -9 of thirdshift would.
fn kill(mut command: std::process::Child, p: ProcessIdentity) {
    unsafe { libc::kill(-(p.pid as i32), libc::SIGKILL) };
    command.wait().unwrap();
}

/// Appends `line` to the Command log beside `record`, as thirdshift keeps each progress line.
fn log_line(record: &Path, line: &str) {
    use std::io::Write as _;
    let name = record.file_name().unwrap().to_str().unwrap();
    let log = record.with_file_name(format!("{}.log", name.split('.').next().unwrap()));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

/// `git status --porcelain` and HEAD of the work tree `dir`: what salvage would change.
fn state_of(dir: &Path) -> (String, String) {
    (
        git(dir, &["status", "--porcelain"]),
        git(dir, &["rev-parse", "HEAD"]),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_worktree_line_naming_another_repositorys_checkout_leaves_it_untouched() {
    let (world, origin, logs, config) = world_with(6).await;
    // Given a Command with its worktree as thirdshift made it, work in progress there
    let Running {
        issue,
        branch,
        wt,
        command,
        p,
        record,
    } = running(&world, &origin, &logs, "hostile");
    // and another repository's checkout on a branch of the same name, a secret uncommitted there
    let other = Origin::new();
    git(&other.work, &["switch", "--quiet", "-c", &branch]);
    std::fs::write(other.work.join(".env"), "TOKEN=secret").unwrap();
    let before = state_of(&other.work);
    // and the agent's Bash call, logged by thirdshift, naming that checkout as a worktree
    log_line(
        &record,
        &format!(
            "thirdshift: 10:00:09 implementing: $ echo creating worktree {} on {branch} from x",
            other.work.display()
        ),
    );
    // When the Command is killed outright and its host passes
    kill(command, p);
    observe_reconcile(&world, "h1", &config).await;
    // Then the other repository and its origin are untouched
    assert_eq!(state_of(&other.work), before);
    assert!(
        other.log(&branch).is_empty(),
        "nothing pushed to its origin"
    );
    // And the Command's own work is kept on its own Issue branch
    assert_eq!(origin.log(&branch)[0], "thirdshift: failed run (killed)");
    let files = git(&origin.bare, &["ls-tree", "--name-only", &branch]);
    assert!(files.contains("half-done.txt"), "{files}");
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1);
    let kept = ends[0].record.kept.clone().expect("what was kept");
    assert!(kept.pushed, "{kept:?}");
    assert_eq!(
        std::fs::canonicalize(&kept.worktree).unwrap(),
        std::fs::canonicalize(&wt).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harness_that_switched_branch_in_its_commands_worktree_is_still_a_writer() {
    let (world, origin, logs, config) = world_with(8).await;
    // Given a Command and its Harness at work in its worktree
    let Running {
        issue,
        branch,
        wt,
        command,
        p,
        ..
    } = running(&world, &origin, &logs, "switched");
    let mut harness = harness_in(&wt);
    // and the agent switched the worktree to a branch of its own, as agents do
    git(&wt, &["switch", "--quiet", "-c", "scratch"]);
    // When the Command is killed outright and its host passes three times
    kill(command, p);
    for _ in 0..3 {
        let said = observe_reconcile(&world, "h1", &config).await;
        // Then each time its Harness is a writer alive, and nothing is ended or relabelled
        match &adopted_verdicts(&world, "h1")[0].verdict {
            Verdict::WritersAlive { pids, .. } => assert_eq!(pids, &vec![harness.id()]),
            other => panic!("expected writers alive, got {other:?}: {said}"),
        }
        assert!(world.ownership(issue).adopted_ends.is_empty());
        assert_eq!(world.labels(issue), [IN_PROGRESS]);
    }
    assert!(
        origin.log(&branch).is_empty(),
        "nothing pushed while it writes"
    );
    // When the Harness exits, the next pass ends the Command once
    harness.kill().unwrap();
    harness.wait().unwrap();
    observe_reconcile(&world, "h1", &config).await;
    observe_reconcile(&world, "h1", &config).await;
    assert_eq!(world.ownership(issue).adopted_ends.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_that_cannot_be_believed_ends_the_claim_with_nothing_committed() {
    let (world, origin, logs, config) = world_with(10).await;
    let repo = world.sim.repo_full_name();
    let issue = world
        .sim
        .create_issue(BOT, "unbelieved", "b", &[IN_PROGRESS]);
    let branch = format!("issue-{issue}");
    // Given a Command whose log's worktree step names a clone of this repository on its Issue
    // branch, at the right name, but a clone of its own: not a worktree thirdshift made
    let src = world.dir.path().join("src");
    launch_clone(&src, &origin.bare, &repo);
    let name = repo.split_once('/').unwrap().1;
    let elsewhere = world.dir.path().join("elsewhere");
    let odd = launch_clone(&elsewhere, &origin.bare, &repo);
    let odd = {
        let renamed = elsewhere.join(format!("{name}-{branch}"));
        std::fs::rename(&odd, &renamed).unwrap();
        renamed
    };
    git(&odd, &["switch", "--quiet", "-c", &branch]);
    std::fs::write(odd.join("half-done.txt"), "someone's work").unwrap();
    let before = state_of(&odd);
    let (command, p, record) = command_on(&world, &logs, issue, &branch);
    write_command_log(&record, &odd, &branch);
    // When the Command is killed outright and its host passes
    kill(command, p);
    observe_reconcile(&world, "h1", &config).await;
    // Then the Claim ends, nothing committed or pushed anywhere
    assert_eq!(state_of(&odd), before);
    assert!(origin.log(&branch).is_empty(), "nothing pushed");
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1, "the Claim is ended");
    // And the end record says the work was left on this host, and why
    let kept = ends[0].record.kept.clone().expect("what was kept");
    let why = kept.error.clone().unwrap_or_default();
    assert!(why.contains("left on host h1"), "{why}");
    assert!(why.contains("not a linked git worktree"), "{why}");
    assert!(!kept.pushed && kept.salvage_commit.is_none(), "{kept:?}");
    // And the issue is labelled as a failed run with work kept, for a person to look
    let mut labels = world.labels(issue);
    labels.sort();
    assert_eq!(labels, ["agent-failed", IN_PROGRESS]);
}
