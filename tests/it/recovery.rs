//! Crash recovery with real processes, real signals and real HTTP: a Run killed outright is
//! proven dead by its own host (`observe`) and its Claim ended by `reconcile`, on evidence only;
//! live Runs and silent hosts are never touched; concurrent or interrupted passes converge.

use crate::harness;

use harness::*;
use thirdshift_reconciler::host::{HostIdentity, ProcessIdentity};
use thirdshift_reconciler::protocol::record::Outcome;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_run_is_ended_in_one_pass_and_later_passes_write_nothing() {
    let world = World::new().await;
    // Given a Run whose command runs, killed with SIGKILL together with its whole session
    let issue = world.ready_issue("killed");
    let run = start_run(&world, "h1", issue, "sleep 300").await;
    let claim_id = run.claim_id.clone();
    run.kill_all().await;
    // When its host runs one observe --reconcile pass
    let out = observe_reconcile(&world, "h1").await;
    // Then the Claim is ended once, with the evidence, and the issue is Ready again
    let ends = ends(&world, issue);
    assert_eq!(ends.len(), 1, "{}", stdout(&out));
    assert_eq!(ends[0].claim_id, claim_id);
    assert_eq!(ends[0].outcome, Outcome::Recovered);
    assert!(ends[0].reason.contains("PID gone"), "{}", ends[0].reason);
    let labels = world.labels(issue);
    assert!(!labels.contains(&IN_PROGRESS.to_string()), "{labels:?}");
    assert!(
        labels.contains(&READY.to_string()),
        "nothing was started: {labels:?}"
    );
    // And a second and a third pass write nothing at all
    world.sim.clear_requests();
    observe_reconcile(&world, "h1").await;
    observe_reconcile(&world, "h1").await;
    assert_eq!(writes(&world), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_run_that_started_work_is_handed_to_people() {
    let world = World::new().await;
    let issue = world.ready_issue("half done then killed");
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    // Given a Run that reported a stage and was then killed outright
    let script = format!("'{bin}' stage implementing && sleep 300");
    let run = start_run(&world, "h1", issue, &script).await;
    wait_until("the Run's stage `implementing` on GitHub", STEP, || {
        world
            .ownership(issue)
            .owner
            .is_some_and(|o| o.record.stage == "implementing")
    })
    .await;
    run.kill_all().await;
    // When its host passes
    observe_reconcile(&world, "h1").await;
    // Then the issue goes to people, not back to the queue
    let labels = world.labels(issue);
    assert!(
        labels.contains(&"ready-for-human".to_string()),
        "{labels:?}"
    );
    assert!(!labels.contains(&READY.to_string()) && !labels.contains(&IN_PROGRESS.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reused_pid_and_other_boot_are_proven_dead() {
    let world = World::new().await;
    let boot = HostIdentity::detect(None).boot_id;
    // Given a live process whose PID a claim names, but with another start time
    let mut other = tokio::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    let live = ProcessIdentity::of(other.id().unwrap()).unwrap();
    let reused = world.ready_issue("pid reused");
    let stale = ProcessIdentity {
        pid: live.pid,
        start_ticks: live.start_ticks + 1,
    };
    posted_claim(&world, reused, "h1", stale, &boot);
    // And a claim from an earlier boot of this host, naming a PID that is alive now
    let rebooted = world.ready_issue("rebooted");
    posted_claim(&world, rebooted, "h1", live, "00000000-earlier-boot");
    // When the host passes
    observe_reconcile(&world, "h1").await;
    // Then both are dead, each with its reason, and the live process was not touched
    let reused_end = &ends(&world, reused)[0];
    assert!(
        reused_end.reason.contains("PID reused"),
        "{}",
        reused_end.reason
    );
    let reboot_end = &ends(&world, rebooted)[0];
    assert!(
        reboot_end.reason.contains("rebooted"),
        "{}",
        reboot_end.reason
    );
    assert!(
        other.try_wait().unwrap().is_none(),
        "the unrelated process still runs"
    );
    other.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_killed_while_its_command_writes_is_not_ended_until_the_writer_exits() {
    let world = World::new().await;
    let issue = world.ready_issue("writers");
    // Given a Run killed with SIGKILL while its command (in its own session) keeps running
    let mut run = start_run(&world, "h1", issue, "sleep 300").await;
    run.kill_run_only().await;
    // When its host passes
    let out = observe_reconcile(&world, "h1").await;
    // Then the Claim is not ended: writers are alive
    assert!(ends(&world, issue).is_empty(), "{}", stdout(&out));
    assert!(stdout(&out).contains("writers alive"), "{}", stdout(&out));
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
    // When the writer exits and the host passes again
    run.kill_all().await;
    observe_reconcile(&world, "h1").await;
    // Then the Claim is ended
    assert_eq!(ends(&world, issue).len(), 1);
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Recovered);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_that_never_reports_keeps_its_claims_awaiting_host() {
    let world = World::new().await;
    // Given a claim by a host that has never reported (its PID is meaningless here)
    let issue = world.ready_issue("silent host");
    let boot = HostIdentity::detect(None).boot_id;
    let nobody = ProcessIdentity {
        pid: u32::MAX - 7,
        start_ticks: 1,
    };
    posted_claim(&world, issue, "ghost", nobody, &boot);
    // When other hosts and reconcile pass many times
    for _ in 0..20 {
        let out = world.exec("h1", &["reconcile"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).contains("awaiting host"), "{}", stdout(&out));
    }
    observe_reconcile(&world, "h2").await;
    // Then the claim is still active
    assert!(ends(&world, issue).is_empty());
    assert!(world.ownership(issue).owner.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_issue_is_created_once_when_two_hosts_start_together() {
    let world = World::new().await;
    // Given a repository without a registry issue, and GitHub holding issue creation so both
    // hosts decide to create it before either sees the other's
    world.sim.stall("POST", "/repos/{owner}/{repo}/issues");
    // When two hosts observe at the same moment
    let (mut h1, mut h2) = (world.cli("h1"), world.cli("h2"));
    let first = h1.arg("observe").output();
    let second = h2.arg("observe").output();
    let release = async {
        wait_until("both hosts to try to create it", STEP, || {
            world.sim.stalled() == 2
        })
        .await;
        world.sim.release_stalls();
    };
    let (x, y, ()) = tokio::join!(first, second, release);
    let (x, y) = (x.unwrap(), y.unwrap());
    assert_eq!(x.status.code(), Some(0), "{}", stderr(&x));
    assert_eq!(y.status.code(), Some(0), "{}", stderr(&y));
    // And they keep observing
    for _ in 0..2 {
        assert_eq!(world.exec("h1", &["observe"]).await.status.code(), Some(0));
        assert_eq!(world.exec("h2", &["observe"]).await.status.code(), Some(0));
    }
    // Then exactly one registry issue stays open, holding one report per host
    let registries: Vec<u64> = (1..=10)
        .filter_map(|n| world.sim.issue(n))
        .filter(|i| i.state == "open" && i.labels.iter().any(|l| l == "thirdshift-registry"))
        .map(|i| i.number)
        .collect();
    assert_eq!(registries.len(), 1, "{registries:?}");
    let reports: Vec<String> = world
        .sim
        .comments(registries[0])
        .into_iter()
        .filter_map(
            |c| match thirdshift_reconciler::protocol::record::decode(&c.body) {
                thirdshift_reconciler::protocol::record::Decoded::Record(
                    thirdshift_reconciler::protocol::record::Record::HostReport(r),
                ) => Some(r.host),
                _ => None,
            },
        )
        .collect();
    let mut sorted = reports.clone();
    sorted.sort();
    assert_eq!(sorted, ["h1", "h2"], "one report per host: {reports:?}");
    let closed = (1..=10)
        .filter_map(|n| world.sim.issue(n))
        .filter(|i| i.state == "closed")
        .count();
    assert_eq!(
        closed, 1,
        "the second registry issue was closed by its creator"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_observe_spends_no_rate_budget() {
    let world = World::new().await;
    // Given a host with a live Run that has observed before (its report written, its login and
    // its conditional pages kept in its state folder)
    let issue = world.ready_issue("at work");
    let run = start_run(&world, "h1", issue, "sleep 30").await;
    observe_reconcile(&world, "h1").await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When it observes again with nothing changed
    world.sim.clear_requests();
    let before = world.sim.rate_remaining(BOT_TOKEN);
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then every read is answered 304 (free), no login is asked again, nothing is written
    let spent = before - world.sim.rate_remaining(BOT_TOKEN);
    let log = request_log(&world);
    assert_eq!(spent, 0, "{log:#?}");
    assert!(log.iter().all(|l| l.starts_with("304 GET")), "{log:#?}");
    assert!(!log.iter().any(|l| l.ends_with("/user")), "{log:#?}");
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_pass_reads_every_claimed_issue_in_one_graphql_request_and_still_ends_a_dead_claim()
{
    let world = World::new().await;
    // Given three Claims on one host, a pass that wrote the view, and then one of the Runs
    // killed outright and seen dead by its host
    let mut issues = Vec::new();
    let mut runs = Vec::new();
    for k in 0..3 {
        let issue = world.ready_issue(&format!("at work {k}"));
        runs.push(start_run(&world, "h1", issue, "sleep 30").await);
        issues.push(issue);
    }
    let out = world.exec("ci", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    runs.remove(0).kill_all().await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When a reconcile runs with no local cache (a new machine, an evicted Actions cache)
    std::fs::remove_dir_all(world.state_dir("ci").join("cache")).unwrap();
    world.sim.clear_requests();
    let out = world.exec("ci", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the claimed issues were read in one GraphQL request: the live ones never on their
    // own, the dead one only by the end written to it
    let log = request_log(&world);
    let graphql = log.iter().filter(|l| l.ends_with("POST /graphql")).count();
    assert_eq!(graphql, 1, "{log:#?}");
    for n in &issues[1..] {
        let own = format!("GET /repos/acme/widgets/issues/{n}/comments");
        assert!(!log.iter().any(|l| l.ends_with(&own)), "{log:#?}");
    }
    // And the dead Claim is ended, the live ones are not
    assert_eq!(ends(&world, issues[0]).len(), 1, "{}", stdout(&out));
    assert!(ends(&world, issues[1]).is_empty());
    assert!(ends(&world, issues[2]).is_empty());
    for run in runs {
        run.kill_all().await;
    }
}

/// `status method path` of each request since the log was cleared.
fn request_log(world: &World) -> Vec<String> {
    world
        .sim
        .requests()
        .iter()
        .map(|r| format!("{} {} {}", r.status, r.method, r.path))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_prints_the_end_of_a_dead_runs_claim_and_writes_nothing() {
    let world = World::new().await;
    // Given a Run killed outright whose host has reported it dead
    let issue = world.ready_issue("killed, awaiting its end");
    let run = start_run(&world, "h1", issue, "sleep 300").await;
    run.kill_all().await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When a dry run passes
    world.sim.clear_requests();
    let out = world.exec("ci", &["reconcile", "--dry-run"]).await;
    // Then it wrote nothing at all, and printed the end it would post and the labels
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(writes(&world), Vec::<String>::new());
    let said = stdout(&out);
    assert!(
        said.contains(&format!("would #{issue}: post an end record")),
        "{said}"
    );
    assert!(said.contains("remove label in-progress"), "{said}");
    assert!(ends(&world, issue).is_empty());
    // And the real pass afterwards ends it
    let out = world.exec("ci", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(ends(&world, issue).len(), 1);
}
