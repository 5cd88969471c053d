//! `pickup` with real processes against the emulator: hosts fill their capacity with detached
//! Runs and never more, every Ready issue is taken exactly once across hosts, a host at capacity
//! asks GitHub nothing, a lost race moves on to the next issue, only issues a Run may take are
//! taken, and Runs outlive pickup in their own session without the CI runner's tracking id.

use crate::harness;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::*;
use thirdshift_reconciler::host::boot_id;
use thirdshift_reconciler::host::live_claims;
use thirdshift_reconciler::host::Stat;
use thirdshift_reconciler::host::{LocalStatus, ProcessTable, StateDir};
use thirdshift_reconciler::protocol::record::{HostReport, Outcome, Record, RunKind};

const BIN: &str = env!("CARGO_BIN_EXE_thirdshift-reconciler");
const COMMENTS_ROUTE: &str = "/repos/{owner}/{repo}/issues/{issue_number}/comments";

fn done_ends(world: &World, issue: u64) -> usize {
    ends(world, issue)
        .iter()
        .filter(|e| e.outcome == Outcome::Done)
        .count()
}

/// For a failure message: the issue's labels, records and every host's Run logs of it.
fn story(world: &World, issue: u64, hosts: &[&str]) -> String {
    let mut out = format!("labels {:?}\n", world.labels(issue));
    for r in world.records(issue) {
        out.push_str(&format!("{r:?}\n"));
    }
    for host in hosts {
        let Ok(dir) = std::fs::read_dir(world.state_dir(host).join("logs")) else {
            continue;
        };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("issue-{issue}-")) {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                out.push_str(&format!("--- {host} {name}\n{text}"));
            }
        }
    }
    out
}

/// What the watcher saw while the hosts worked.
#[derive(Default)]
struct Watched {
    /// Most live Runs (claiming or holding a Claim) seen at once on each host.
    most: BTreeMap<String, usize>,
    violations: Vec<String>,
    samples: usize,
}

/// Samples every host's live Runs from its state folder and the process table until `stop`:
/// never more than `capacity` on a host, never two Runs holding a Claim on one issue.
fn watch(dirs: Vec<(String, PathBuf)>, capacity: usize, stop: Arc<AtomicBool>) -> Watched {
    let boot = boot_id().unwrap_or_default();
    let mut seen = Watched::default();
    while !stop.load(Ordering::Relaxed) {
        let table = ProcessTable::read().expect("process table");
        let mut holders = BTreeMap::<u64, Vec<String>>::new();
        for (host, dir) in &dirs {
            let live = live_claims(&StateDir::resolve(Some(dir)).unwrap(), &table, &boot);
            let most = seen.most.entry(host.clone()).or_default();
            *most = (*most).max(live.len());
            if live.len() > capacity {
                seen.violations
                    .push(format!("{host}: {} live Runs", live.len()));
            }
            for c in live.iter().filter(|c| c.status == LocalStatus::Active) {
                holders
                    .entry(c.record.issue)
                    .or_default()
                    .push(host.clone());
            }
        }
        for (issue, hosts) in holders.into_iter().filter(|(_, h)| h.len() > 1) {
            seen.violations
                .push(format!("#{issue}: live Runs on {hosts:?}"));
        }
        seen.samples += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    seen
}

/// A Run's command that leaves evidence in `marks`: `runs/N` made once per issue (a second Run
/// of the issue finds it and says so), `running/HOST/N` while it works (a host holding more than
/// `capacity` at once says so); it reports a stage and works half a second.
///
/// It reports its stage only once the Run has recorded CMD's session in the local record: the
/// Run's own stage update and CMD's first `stage` race otherwise (both rewrite the claim comment
/// and the local record; see the report of this branch), which is not what this test is about.
fn marking_script(marks: &Path, capacity: usize) -> String {
    let m = marks.display();
    format!(
        "mkdir '{m}/runs/'$THIRDSHIFT_ISSUE 2>/dev/null || echo \"#$THIRDSHIFT_ISSUE ran twice\" >> '{m}/violations'
         mkdir -p '{m}/running/'$THIRDSHIFT_HOST && touch '{m}/running/'$THIRDSHIFT_HOST/$THIRDSHIFT_ISSUE
         n=$(ls '{m}/running/'$THIRDSHIFT_HOST | wc -l)
         [ $n -le {capacity} ] || echo \"$THIRDSHIFT_HOST ran $n at once\" >> '{m}/violations'
         i=0; while [ $i -lt 200 ] && ! grep -qs '\"session_id\"' \"$THIRDSHIFT_STATE_DIR/claims/$THIRDSHIFT_CLAIM_ID.json\"; do sleep 0.05; i=$((i+1)); done
         '{BIN}' stage working || {{ rm '{m}/running/'$THIRDSHIFT_HOST/$THIRDSHIFT_ISSUE; exit 9; }}
         sleep 0.5
         rm '{m}/running/'$THIRDSHIFT_HOST/$THIRDSHIFT_ISSUE"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hosts_of_capacity_two_take_twenty_issues_each_once_never_over_capacity() {
    let world = World::new().await;
    // Given three hosts of capacity 2 and 20 Ready issues
    let hosts = ["h1", "h2", "h3"];
    let config = config(&world, &hosts.map(|h| (h, 2)));
    let issues: Vec<u64> = (0..20)
        .map(|i| world.ready_issue(&format!("task {i}")))
        .collect();
    let marks = world.dir.path().join("marks");
    std::fs::create_dir_all(marks.join("runs")).unwrap();
    let script = marking_script(&marks, 2);
    let stop = Arc::new(AtomicBool::new(false));
    let dirs = hosts.map(|h| (h.to_string(), world.state_dir(h))).to_vec();
    let watcher = std::thread::spawn({
        let stop = stop.clone();
        move || watch(dirs, 2, stop)
    });
    // When pickup passes run concurrently on all three hosts until no Ready issue is left
    let started = Instant::now();
    let passes = hosts.map(|h| pickup_until_empty(&world, h, &config, &script, &issues));
    let [a, b, c] = passes;
    let (a, b, c) = tokio::join!(a, b, c);
    let outs: Vec<_> = [a, b, c].concat();
    for (host, out) in &outs {
        assert_eq!(out.status.code(), Some(0), "{host}: {}", stderr(out));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while issues.iter().any(|n| done_ends(&world, *n) == 0) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let seen = watcher.join().expect("watcher");
    eprintln!(
        "20 issues on 3 hosts in {:?}, {} pickup passes, {} samples, most live per host {:?}",
        started.elapsed(),
        outs.len(),
        seen.samples,
        seen.most
    );
    let unfinished: Vec<String> = issues
        .iter()
        .filter(|n| done_ends(&world, **n) != 1)
        .map(|n| format!("#{n}: {}", story(&world, *n, &hosts)))
        .collect();
    assert!(unfinished.is_empty(), "{}", unfinished.join("\n"));
    // Then no host ever had more than 2 live Runs, and no issue two Runs holding a Claim
    assert_eq!(seen.violations, Vec::<String>::new());
    let violations = std::fs::read_to_string(marks.join("violations")).unwrap_or_default();
    assert_eq!(violations, "", "the Runs' own evidence");
    assert!(
        seen.most.values().any(|n| *n == 2),
        "some host was full at some point: {:?}",
        seen.most
    );
    // And every issue was taken exactly once and ended done, by the host that said it took it
    let taken = taken_lines(&outs);
    for n in &issues {
        assert_eq!(
            done_ends(&world, *n),
            1,
            "#{n} ended done once\n{}",
            story(&world, *n, &hosts)
        );
        assert!(marks.join("runs").join(n.to_string()).is_dir(), "#{n} ran");
        let won: Vec<_> = world
            .records(*n)
            .into_iter()
            .filter_map(|r| match r {
                Record::Claim(c) => Some(c),
                _ => None,
            })
            .filter(|c| {
                !ends(&world, *n)
                    .iter()
                    .any(|e| e.claim_id == c.claim_id && e.outcome == Outcome::Withdrawn)
            })
            .collect();
        assert_eq!(won.len(), 1, "#{n} has one claim that was not withdrawn");
        assert_eq!(taken.get(n), Some(&vec![won[0].host.clone()]), "#{n}");
        assert!(!world
            .labels(*n)
            .iter()
            .any(|l| l == IN_PROGRESS || l == READY));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_at_capacity_skips_pickup_with_a_clear_line_and_touches_nothing_on_github() {
    let world = World::new().await;
    // Given host h1 of capacity 2 with two live Runs, and a third Ready issue
    let config = config(&world, &[("h1", 2)]);
    let first = start_run(&world, "h1", world.ready_issue("one"), "sleep 30").await;
    let second = start_run(&world, "h1", world.ready_issue("two"), "sleep 30").await;
    let third = world.ready_issue("three");
    world.sim.clear_requests();
    // When pickup runs on h1
    let out = pickup(&world, "h1", &config, &[], "true")
        .output()
        .await
        .expect("pickup runs");
    // Then it exits 0 saying the host is at capacity, and GitHub received no request at all
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "host h1 is at capacity (2 of 2 slots in use, capacity configured); pickup skipped"
    );
    let requests: Vec<String> = world
        .sim
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(requests, Vec::<String>::new());
    assert_eq!(world.labels(third), [READY]);
    assert!(world.sim.comments(third).is_empty());
    first.kill_all().await;
    second.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_race_moves_on_to_the_next_issue() {
    let world = World::new().await;
    // Given two hosts of capacity 1, two Ready issues, and GitHub holding new comments, so both
    // hosts' Runs reach the claim post of the lowest issue before either lands
    let config = config(&world, &[("h1", 1), ("h2", 1)]);
    let low = world.ready_issue("low");
    let high = world.ready_issue("high");
    world.sim.stall("POST", COMMENTS_ROUTE);
    // When both hosts pick up at once
    let script = "sleep 1";
    let h1 = pickup(&world, "h1", &config, &[], script).output();
    let h2 = pickup(&world, "h2", &config, &[], script).output();
    let release = async {
        let deadline = Instant::now() + Duration::from_secs(20);
        while world.sim.stalled() < 2 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(world.sim.stalled(), 2, "both Runs post a claim on #{low}");
        world.sim.release_stalls();
    };
    let (h1, h2, ()) = tokio::join!(h1, h2, release);
    let outs = [
        ("h1".to_string(), h1.unwrap()),
        ("h2".to_string(), h2.unwrap()),
    ];
    // Then the loser said so and moved on: each host took a different issue
    for (host, out) in &outs {
        assert_eq!(out.status.code(), Some(0), "{host}: {}", stderr(out));
    }
    let taken = taken_lines(&outs);
    assert_eq!(taken.keys().copied().collect::<Vec<_>>(), [low, high]);
    assert_ne!(taken[&low], taken[&high], "{taken:?}");
    let loser = &taken[&high][0];
    let loser_out = &outs.iter().find(|(h, _)| h == loser).unwrap().1;
    assert!(
        stdout(loser_out).contains(&format!("#{low}: lost (lost the race for issue #{low}")),
        "{}",
        stdout(loser_out)
    );
    assert_eq!(
        world.ownership(low).owner.unwrap().record.host,
        taken[&low][0]
    );
    assert_eq!(world.ownership(high).owner.unwrap().record.host, *loser);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_issues_a_run_may_take_are_taken_lowest_first_up_to_max() {
    let world = World::new().await;
    // Given issues that are Ready but for triage, in progress, handed to people, or claimed by
    // another host's Run still posting its labels; then three plain Ready issues
    let config = config(&world, &[("h1", 5)]);
    let triage = world
        .sim
        .create_issue(BOT, "triage", "", &[READY, "needs-triage"]);
    let busy = world
        .sim
        .create_issue(BOT, "busy", "", &[READY, IN_PROGRESS]);
    let human = world
        .sim
        .create_issue(BOT, "human", "", &[READY, "ready-for-human"]);
    let claimed = world.ready_issue("claimed");
    let me = thirdshift_reconciler::host::ProcessIdentity::current();
    posted_claim(&world, claimed, "h9", me, "b");
    world.sim.set_labels(claimed, &[READY]);
    let plain: Vec<u64> = (0..3)
        .map(|i| world.ready_issue(&format!("plain {i}")))
        .collect();
    // When h1 picks up at most two
    let out = pickup(&world, "h1", &config, &["--max", "2"], "sleep 0.3")
        .output()
        .await
        .expect("pickup runs");
    // Then it took the two lowest plain issues, skipped the claimed one, and left the rest
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let taken = taken_lines(&[("h1".to_string(), out.clone())]);
    assert_eq!(taken.keys().copied().collect::<Vec<_>>(), plain[..2]);
    assert!(
        stdout(&out).contains(&format!("#{claimed}: skipped, claimed by host h9")),
        "{}",
        stdout(&out)
    );
    for n in [triage, busy, human, plain[2]] {
        assert!(
            world.ownership(n).owner.is_none() && ends(&world, n).is_empty(),
            "#{n} untouched"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_started_by_pickup_record_the_harness_and_kind_it_was_given() {
    let world = World::new().await;
    // Given two Ready issues and a host with room for both
    let config = config(&world, &[("h1", 2)]);
    let issues = [world.ready_issue("spec one"), world.ready_issue("spec two")];
    // When the host's runner picks them up as spec Runs of the claude Harness
    let extra = ["--kind", "spec", "--harness", "claude"];
    let out = pickup(&world, "h1", &config, &extra, "sleep 0.5")
        .output()
        .await
        .expect("pickup runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then each Run's claim record names that Harness and kind
    for n in issues {
        let claims: Vec<_> = world
            .records(n)
            .into_iter()
            .filter_map(|r| match r {
                Record::Claim(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(claims.len(), 1, "#{n}: {claims:?}");
        assert_eq!(claims[0].harness.as_deref(), Some("claude"), "#{n}");
        assert_eq!(claims[0].kind, RunKind::Spec, "#{n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_outlive_pickup_in_their_own_session_without_the_runner_tracking_id() {
    let world = World::new().await;
    // Given a Ready issue and a pickup started by a CI job (RUNNER_TRACKING_ID in its env)
    let config = config(&world, &[("h1", 1)]);
    let issue = world.ready_issue("detached");
    let env_file = world.dir.path().join("env");
    let script = format!(
        "echo \"${{RUNNER_TRACKING_ID:-none}}\" > '{f}.tmp' && mv '{f}.tmp' '{f}'; sleep 2",
        f = env_file.display()
    );
    let out = pickup(&world, "h1", &config, &[], &script)
        .env("RUNNER_TRACKING_ID", "github_job_42")
        .output()
        .await
        .expect("pickup runs");
    // When pickup has exited
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let owner = world.ownership(issue).owner.expect("claimed");
    // Then the Run still runs, leading its own session, and its command never saw the id
    let run = Stat::read(owner.record.pid).expect("the Run outlives pickup");
    assert_eq!(
        run.session, owner.record.pid,
        "the Run leads its own session"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !env_file.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = std::fs::read_to_string(&env_file).expect("the command ran");
    assert_eq!(seen.trim(), "none");
    let logs: BTreeSet<_> = std::fs::read_dir(world.state_dir("h1").join("logs"))
        .expect("logs folder")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        logs.iter()
            .any(|l| l.starts_with(&format!("issue-{issue}-"))),
        "{logs:?}"
    );
}

/// The host reports on the registry issue, by host.
fn host_reports(world: &World) -> BTreeMap<String, HostReport> {
    let mut reports = BTreeMap::new();
    for n in (1..=20).filter(|n| world.sim.issue(*n).is_some()) {
        for r in world.records(n) {
            if let Record::HostReport(r) = r {
                reports.insert(r.host.clone(), r);
            }
        }
    }
    reports
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_report_shows_capacity_and_slots_in_use_and_is_not_rewritten_unchanged() {
    let world = World::new().await;
    // Given host h1 of capacity 3 carrying one live Run
    let config = config(&world, &[("h1", 3)]);
    let run = start_run(&world, "h1", world.ready_issue("one"), "sleep 30").await;
    let observe = |world: &World| {
        let mut cmd = world.cli("h1");
        cmd.arg("--config").arg(&config).arg("observe");
        cmd.output()
    };
    // When h1 observes
    let out = observe(&world).await.expect("observe runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then its report says 1 of 3 slots in use, in its readable part too
    let report = host_reports(&world).remove("h1").expect("h1 reported");
    assert_eq!((report.capacity, report.slots_used), (Some(3), Some(1)));
    let registry = (1..=5)
        .find(|n| {
            world
                .sim
                .comments(*n)
                .iter()
                .any(|c| c.body.contains("Host report"))
        })
        .expect("registry issue");
    let text = world.sim.comments(registry)[0].body.clone();
    assert!(
        text.contains("1 Claim on this host; 1 of 3 slots in use."),
        "{text}"
    );
    // And observing the unchanged host again writes nothing
    world.sim.clear_requests();
    let again = observe(&world).await.expect("observe runs");
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(writes(&world), Vec::<String>::new());
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pickup_with_a_command_that_cannot_start_names_it_and_claims_nothing() {
    let world = World::new().await;
    let issue = world.ready_issue("would be taken");
    let config = config(&world, &[("h1", 1)]);
    for command in ["/no/such/agent", "agnt-script"] {
        // When pickup is given a command that is not there (a typo)
        let out = world
            .cli("h1")
            .arg("--config")
            .arg(&config)
            .args(["pickup", "--", command])
            .output()
            .await
            .unwrap();
        // Then it is a usage error naming the command, and nothing reached GitHub
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let said = stderr(&out);
        assert!(said.contains(&format!("`{command}`")), "{said}");
        assert!(said.contains("nothing is claimed"), "{said}");
        assert!(
            world.sim.requests().is_empty(),
            "{:?}",
            world.sim.requests()
        );
        assert!(world.records(issue).is_empty());
        assert_eq!(world.labels(issue), [READY]);
    }
}
