//! thirdshift's own Runs recovered end to end with the real thirdshift binary (crates.io 0.19.0,
//! installed by `.ci/install-thirdshift.sh` into a cache folder outside the clone; this test
//! fails, never skips, when it is missing). Only the real binary shows that the adoption fits
//! what thirdshift does on a host: where and when it writes its Command record, which process
//! is the Command, what its worktree and branch are called, what it leaves when killed.
//!
//! Stand-ins only where no real part can run here (`tests/it/support/standins/`): `gh`, forwarding
//! thirdshift's calls to the emulator's REST API over HTTP, and the Claude Code CLI, whose
//! session writes a file in the worktree and stays at work. Each simulated host has its own
//! HOME (thirdshift's logs under `~/.thirdshift/logs`), its own launch clone of a real bare
//! origin (its origin URL `https://github.com/OWNER/REPO.git`, rewritten to the bare repository
//! with git's `url.<bare>.insteadOf`), and its own `--host` name for our tool; they share this
//! machine's system host name, as thirdshift records it (`gethostname`).

use crate::harness;
use crate::support::origin;

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use harness::*;
use origin::{git, Origin};
use thirdshift_reconciler::protocol::record::{Kind, Outcome, Verdict};

/// How long thirdshift may take from start to its Harness session on a loaded CI machine.
const TO_HARNESS: Duration = Duration::from_secs(120);

/// The real thirdshift 0.19.0: `THIRDSHIFT_BIN`, else where `.ci/install-thirdshift.sh` puts it.
pub(super) fn thirdshift_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("THIRDSHIFT_BIN") {
        return PathBuf::from(bin);
    }
    let cache = std::env::var_os("THIRDSHIFT_CI_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|c| Path::new(&c).join("thirdshift-reconciler"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/thirdshift-reconciler"))
        })
        .expect("HOME is set");
    let bin = cache.join("thirdshift-0.19.0/bin/thirdshift");
    assert!(
        bin.is_file(),
        "the real thirdshift 0.19.0 is needed and was not found at {}{}: run \
         `bash .ci/install-thirdshift.sh` (as .ci/test does) or set THIRDSHIFT_BIN",
        bin.display(),
        if std::env::var_os("CI").is_some() {
            " in CI"
        } else {
            ""
        }
    );
    bin
}

/// One simulated host running thirdshift: its HOME, its launch clone, our tool's name for it.
pub(super) struct Host {
    pub(super) name: &'static str,
    pub(super) home: PathBuf,
    pub(super) launch: PathBuf,
    pub(super) config: PathBuf,
}

impl Host {
    /// A host with its own HOME and a launch clone of `origin`, as a team's machine has one.
    pub(super) fn new(world: &World, origin: &Origin, name: &'static str) -> Host {
        let (owner, repo) = world
            .sim
            .repo_full_name()
            .split_once('/')
            .map(|(o, r)| (o.to_string(), r.to_string()))
            .unwrap();
        let root = world.dir.path().join(format!("thirdshift-{name}"));
        let (home, src) = (root.join("home"), root.join("src"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&src).unwrap();
        let launch = src.join(&repo);
        git(
            &src,
            &["clone", "--quiet", origin.bare.to_str().unwrap(), &repo],
        );
        let url = format!("https://github.com/{owner}/{repo}.git");
        git(&launch, &["remote", "set-url", "origin", &url]);
        let rewrite = format!("url.{}.insteadOf", origin.bare.display());
        git(&launch, &["config", &rewrite, &url]);
        git(&launch, &["config", "user.name", "Day Shift"]);
        git(&launch, &["config", "user.email", "day@example.org"]);
        let config = root.join("reconciler.yml");
        let logs = home.join(".thirdshift/logs");
        std::fs::write(
            &config,
            format!(
                "thirdshift:\n  logs_dir: {}\n  bin: {}\n",
                logs.display(),
                thirdshift_bin().display()
            ),
        )
        .unwrap();
        Host {
            name,
            home,
            launch,
            config,
        }
    }

    /// Where thirdshift 0.19.0 makes the worktree of a Run on `issue`'s first Issue branch: beside
    /// the launch clone, `<repo>-issue-<n>` (`src/worktree.rs` `sibling`).
    pub(super) fn worktree(&self, issue: u64) -> PathBuf {
        let repo = self.launch.file_name().unwrap().to_str().unwrap();
        self.launch
            .parent()
            .unwrap()
            .join(format!("{repo}-issue-{issue}"))
    }

    /// Starts a real Ticket run of thirdshift on `issue` from the launch clone, in a process
    /// group of its own (the test kills the group as kill -9 of a terminal's job would).
    pub(super) fn start(&self, world: &World, issue: u64) -> Child {
        self.start_with(world, &[&issue.to_string()])
    }

    /// Starts thirdshift with `args` from the launch clone, in a process group of its own.
    pub(super) fn start_with(&self, world: &World, args: &[&str]) -> Child {
        let standins = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/standins");
        let path = format!(
            "{}:{}",
            standins.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = std::fs::File::create(self.home.join("thirdshift.out")).unwrap();
        std::process::Command::new(thirdshift_bin())
            .args(args)
            .current_dir(&self.launch)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", path)
            .env("LANG", "C.UTF-8")
            .env("GH_TOKEN", BOT_TOKEN)
            .env("GH_REPO", world.sim.repo_full_name())
            .env("GH_STANDIN_API", &world.server.url)
            .env("GH_STANDIN_LOG", self.home.join("gh.log"))
            .env("CLAUDE_STANDIN_LOG", self.home.join("claude.log"))
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0)
            .spawn()
            .expect("thirdshift starts")
    }

    /// The PID of the Harness session thirdshift started (the Claude stand-in's session), once
    /// its file is in the worktree: thirdshift is then in its implementing stage.
    fn harness_pid(&self) -> Option<u32> {
        let log = std::fs::read_to_string(self.home.join("claude.log")).ok()?;
        let line = log.lines().find(|l| l.contains("stream-json"))?;
        let mut cols = line.split('\t');
        let pid: u32 = cols.next()?.parse().ok()?;
        let cwd = cols.next()?;
        Path::new(cwd)
            .join("half-done.txt")
            .is_file()
            .then_some(pid)
    }

    /// What thirdshift printed, for failure messages.
    pub(super) fn said(&self) -> String {
        let out = std::fs::read_to_string(self.home.join("thirdshift.out")).unwrap_or_default();
        let gh = std::fs::read_to_string(self.home.join("gh.log")).unwrap_or_default();
        format!("thirdshift said:\n{out}\ngh calls:\n{gh}")
    }

    /// One `observe --reconcile` of this host; what it printed.
    pub(super) async fn pass(&self, world: &World) -> String {
        // As the host's user, whose HOME holds thirdshift's config and records
        let out = world
            .cli(self.name)
            .env("HOME", &self.home)
            .arg("--config")
            .arg(&self.config)
            .args(["observe", "--reconcile"])
            .output()
            .await
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
        said
    }
}

/// Waits until `host`'s thirdshift has its Harness at work; returns the Harness's PID and how
/// long thirdshift took from its start.
pub(super) async fn until_harness(host: &Host, started: Instant) -> (u32, Duration) {
    let mut pid = None;
    let what = format!("thirdshift on {} to start its Harness", host.name);
    let deadline = Instant::now() + TO_HARNESS;
    while pid.is_none() {
        pid = host.harness_pid();
        assert!(
            Instant::now() < deadline,
            "waited {TO_HARNESS:?} for {what}; {}",
            host.said()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (pid.unwrap(), started.elapsed())
}

/// Process groups this test started, killed when it ends however it ends (a failed assertion
/// must not leave a Harness running for ten minutes).
pub(super) struct Groups(pub(super) Vec<u32>);

impl Drop for Groups {
    fn drop(&mut self) {
        for pgid in &self.0 {
            // SAFETY: kill(2) on a process group this test started; ESRCH when it is gone.
            unsafe { libc::kill(-(*pgid as i32), libc::SIGKILL) };
        }
    }
}

/// Waits until the process `pid` is gone (or a zombie).
pub(super) async fn until_gone(pid: u32) {
    wait_until("the Harness to be gone", STEP, || {
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    })
    .await;
}

pub(super) fn kill_group(pgid: u32) {
    // SAFETY: kill(2) on a process group this test started; no memory is shared.
    let rc = unsafe { libc::kill(-(pgid as i32), libc::SIGKILL) };
    assert_eq!(rc, 0, "kill -9 of group {pgid}");
}

fn verdict_of(world: &World, host: &str, issue: u64) -> Option<Verdict> {
    (1..=20)
        .flat_map(|n| world.sim.comments(n))
        .find_map(
            |c| match thirdshift_reconciler::protocol::record::decode(&c.body) {
                thirdshift_reconciler::protocol::record::Decoded::Record(
                    thirdshift_reconciler::protocol::record::Record::HostReport(r),
                ) if r.host == host => Some(r),
                _ => None,
            },
        )?
        .claims
        .into_iter()
        .find(|v| v.issue == issue && !v.run.is_ours())
        .map(|v| v.verdict)
}

/// A real thirdshift Ticket run on `issue` from host `a`, once its Harness is at work and one
/// pass of `a` reported it alive: thirdshift's process, the groups to kill when the test ends,
/// and its Harness's PID.
async fn seen_alive(world: &World, a: &Host, issue: u64) -> (Child, Groups, u32) {
    let run = a.start(world, issue);
    let mut groups = Groups(vec![run.id()]);
    let (harness, _) = until_harness(a, Instant::now()).await;
    groups.0.push(harness);
    a.pass(world).await;
    assert_eq!(verdict_of(world, "ha", issue), Some(Verdict::Alive));
    (run, groups, harness)
}

/// An emulator on a real bare origin, and two hosts running thirdshift from clones of it.
pub(super) async fn two_hosts() -> (World, Origin, Host, Host) {
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let (a, b) = (
        Host::new(&world, &origin, "ha"),
        Host::new(&world, &origin, "hb"),
    );
    (world, origin, a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_thirdshift_run_killed_outright_is_recovered_and_a_live_one_left_alone() {
    let test_started = Instant::now();
    let (world, origin, a, b) = two_hosts().await;
    let killed = world.ready_issue("killed mid-implementation");
    let live = world.ready_issue("still at work");
    // Given a real thirdshift Ticket run on each host, each with its Harness at work
    let started = Instant::now();
    let mut run_a = a.start(&world, killed);
    let mut groups = Groups(vec![run_a.id()]);
    let (harness_a, to_harness) = until_harness(&a, started).await;
    groups.0.push(harness_a);
    let mut run_b = b.start(&world, live);
    groups.0.push(run_b.id());
    let (harness_b, _) = until_harness(&b, Instant::now()).await;
    groups.0.push(harness_b);
    assert_eq!(world.labels(killed), [IN_PROGRESS], "thirdshift's Claim");
    // When thirdshift's process group on host a is killed outright
    kill_group(run_a.id());
    run_a.wait().unwrap();
    // Then its Harness lives on, and passes leave the Claim alone: writers alive
    for _ in 0..3 {
        a.pass(&world).await;
        let v = verdict_of(&world, "ha", killed).expect("host a reports the Command");
        assert!(
            matches!(v, Verdict::WritersAlive { ref pids, .. } if pids.contains(&harness_a)),
            "{v:?}"
        );
        assert!(world.ownership(killed).adopted_ends.is_empty());
        assert_eq!(world.labels(killed), [IN_PROGRESS]);
    }
    // When the Harness's process group is killed outright too, and host a passes once
    kill_group(harness_a);
    until_gone(harness_a).await;
    a.pass(&world).await;
    // Then the Claim ends as thirdshift's own Failed run labels the issue: its dirty file was
    // pushed to its Issue branch, so the Claim stays and the issue is labelled agent-failed
    let branch = format!("issue-{killed}");
    let pushed = on_origin(&origin, &format!("refs/heads/{branch}"));
    assert!(pushed.is_some(), "{branch} is not on origin; {}", a.said());
    let files = git(&origin.bare, &["ls-tree", "--name-only", &branch]);
    assert!(files.contains("half-done.txt"), "{files}; {}", a.said());
    assert_eq!(origin.log(&branch)[0], "thirdshift: failed run (killed)");
    let mut labels = world.labels(killed);
    labels.sort();
    assert_eq!(labels, ["agent-failed", IN_PROGRESS]);
    let ends = world.ownership(killed).adopted_ends;
    assert_eq!(ends.len(), 1, "one trusted end record");
    assert_eq!(ends[0].record.outcome, Outcome::Recovered);
    let evidence = ends[0].record.run.thirdshift().expect("its evidence");
    assert_eq!(evidence.host, "ha");
    // And it names the agent session its Session log holds, and the command that resumes it
    // from the worktree, for a person
    let session = format!("standin-session-{harness_a}");
    assert_eq!(ends[0].record.session.as_deref(), Some(session.as_str()));
    let worktree = a.worktree(killed);
    let resume = format!("cd {} && claude --resume {session}", worktree.display());
    assert_eq!(ends[0].record.resume.as_deref(), Some(resume.as_str()));
    // And the live Run on host b is never touched over 20 passes, and shows alive
    for _ in 0..20 {
        b.pass(&world).await;
        a.pass(&world).await;
    }
    assert_eq!(world.labels(live), [IN_PROGRESS]);
    let only_its_place = world.record_kinds(live) == [Kind::Adopt];
    assert!(only_its_place, "nothing but its adoption on #{live}");
    assert_eq!(verdict_of(&world, "hb", live), Some(Verdict::Alive));
    let out = world.exec("hb", &["status", "--json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["issue"] == live)
        .cloned()
        .expect("the live Run is listed");
    assert_eq!(
        (row["host"].as_str(), row["health"].as_str()),
        (Some("hb"), Some("alive")),
        "{row:#}"
    );
    eprintln!(
        "figures: thirdshift reached its Harness {:.1} s after its start; this test took {:.1} s",
        to_harness.as_secs_f64(),
        test_started.elapsed().as_secs_f64()
    );
    drop(groups);
    run_b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_thirdshift_run_killed_after_one_observe_is_ended_by_its_companion_with_no_pass() {
    // Given host a with companions on, and a real thirdshift Ticket run with its Harness at work,
    // seen alive by one `observe`
    let world = World::with_companions().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let a = Host::new(&world, &origin, "ha");
    let issue = world.ready_issue("killed while watched");
    let (mut run, _groups, harness) = seen_alive(&world, &a, issue).await;
    // When thirdshift and its Harness are killed outright, and nobody starts a pass
    let killed = Instant::now();
    kill_group(run.id());
    run.wait().unwrap();
    kill_group(harness);
    // Then its companion ends it as thirdshift's own Failed run labels the issue
    wait_until("the Command's end", STEP, || {
        world.labels(issue).iter().any(|l| l == "agent-failed")
    })
    .await;
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1, "one trusted end record; {}", a.said());
    assert_eq!(ends[0].record.outcome, Outcome::Recovered);
    eprintln!(
        "figures: ended {:.1} s after the kill, with no pass started",
        killed.elapsed().as_secs_f64()
    );
}

/// The sha of `reference` on origin, if it is there.
pub(super) fn on_origin(origin: &Origin, reference: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&origin.bare)
        .args(["rev-parse", "--verify", "--quiet", reference])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_real_pickups_reservation_is_released_on_evidence_and_a_live_ones_never() {
    let (world, origin, a, b) = two_hosts().await;
    let (first, second) = (world.ready_issue("first"), world.ready_issue("second"));
    // (labelled Ready ten minutes ago: thirdshift's Pickup takes only settled issues)
    world.sim.backdate(Duration::from_secs(600));
    // Given a real thirdshift Pickup on each host, each holding its issue's reservation on
    // origin with its Harness at work
    let mut pickup_a = a.start_with(&world, &["pickup"]);
    let mut groups = Groups(vec![pickup_a.id()]);
    let (harness_a, _) = until_harness(&a, Instant::now()).await;
    groups.0.push(harness_a);
    let mut pickup_b = b.start_with(&world, &["pickup"]);
    groups.0.push(pickup_b.id());
    let (harness_b, _) = until_harness(&b, Instant::now()).await;
    groups.0.push(harness_b);
    let (held_a, held_b) = (
        format!("refs/heads/thirdshift/pickup/{first}"),
        format!("refs/heads/thirdshift/pickup/{second}"),
    );
    let sha_b = on_origin(&origin, &held_b).unwrap_or_else(|| panic!("{}", b.said()));
    assert!(on_origin(&origin, &held_a).is_some(), "{}", a.said());
    // When host a's Pickup, and its Harness, are killed outright
    kill_group(pickup_a.id());
    pickup_a.wait().unwrap();
    // Then while its Harness still writes, the reservation stays
    a.pass(&world).await;
    assert!(on_origin(&origin, &held_a).is_some(), "writers alive: kept");
    kill_group(harness_a);
    wait_until("the Harness to be gone", STEP, || {
        std::fs::read_to_string(format!("/proc/{harness_a}/stat"))
            .map_or(true, |s| s.contains(") Z "))
    })
    .await;
    // And once no writer is left, host a's next pass releases it on the evidence of its commit
    let said = a.pass(&world).await;
    assert_eq!(on_origin(&origin, &held_a), None, "{said}");
    assert!(said.contains(&format!("released {held_a}")), "{said}");
    assert_eq!(
        world.ownership(first).adopted_ends.len(),
        1,
        "its Claim ended too"
    );
    // And the live Pickup's reservation is never touched, over passes of both hosts
    for _ in 0..5 {
        a.pass(&world).await;
        b.pass(&world).await;
    }
    assert_eq!(on_origin(&origin, &held_b), Some(sha_b));
    assert_eq!(world.labels(second), [IN_PROGRESS]);
    drop(groups);
    pickup_b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_of_a_live_real_thirdshift_run_stops_it_through_thirdshift_stop_requeue() {
    let (world, origin, a, _b) = two_hosts().await;
    let issue = world.ready_issue("cancel me");
    // Given a real thirdshift Ticket run with its Harness at work, reported alive by its host
    let (mut run, groups, _harness) = seen_alive(&world, &a, issue).await;
    // When a person cancels it
    let out = world
        .exec("hr", &["cancel", "--issue", &issue.to_string()])
        .await;
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
    assert!(
        said.contains("cancel requested for thirdshift's Command"),
        "{said}"
    );
    // Then its host's next pass has thirdshift stop it, and thirdshift ends it itself
    let said = a.pass(&world).await;
    assert!(
        said.contains("thirdshift asked to stop its Command"),
        "{said}"
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < TO_HARNESS,
            "thirdshift never ended; {}",
            a.said()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // as its own cleanup does: its work preserved on its Issue branch, the issue back in the
    // queue (`--requeue`), and its outcome `interrupted`
    let branch = format!("refs/heads/issue-{issue}");
    assert!(on_origin(&origin, &branch).is_some(), "{}", a.said());
    assert_eq!(world.labels(issue), [READY], "{}", a.said());
    // And the pass after records how it ended: cancelled, with thirdshift's own outcome
    let said = a.pass(&world).await;
    assert!(
        said.contains("stopped on request: interrupted"),
        "{said}; exit {status}"
    );
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1, "{said}");
    let end = &ends[0].record;
    assert_eq!(end.outcome, Outcome::Cancelled);
    assert_eq!(end.labels_after, Some(vec![READY.to_string()]));
    assert!(
        end.reason.contains("thirdshift recorded: interrupted"),
        "{}",
        end.reason
    );
    // and later passes write nothing more
    world.sim.clear_requests();
    a.pass(&world).await;
    assert_eq!(writes(&world), Vec::<String>::new());
    drop(groups);
}
