//! Collision safety beyond the happy path: GitHub's comment lists can be stale for a while after a
//! write (the emulator's `Faults::stale_list_reads`), and GitHub fails requests. Concurrent
//! claimants and Runs on one issue must still never both pass a `stage`: a loser withdraws, a
//! superseded Run gets exit 4 at its next `stage`, and after a reconcile exactly one active
//! claim remains.

mod harness;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::*;
use thirdshift_reconciler::record::{Outcome, Record};
use thirdshift_reconciler::sim::Faults;

/// How long a new comment may stay out of comment lists.
const WINDOW: Duration = Duration::from_millis(300);

const COMMENT_LIST: &str = "/repos/{owner}/{repo}/issues/{issue_number}/comments";
/// Read (once) whenever a comment list does not show the reader's own claim yet.
const ONE_COMMENT: &str = "/repos/{owner}/{repo}/issues/comments/{comment_id}";

/// Stale lists plus 20% of requests answered 502 (half of the failed writes applied anyway).
fn stale_and_flaky() -> Faults {
    Faults {
        server_error_rate: 0.2,
        applied_before_error: 0.5,
        stale_list_reads: Some(WINDOW),
        ..Faults::default()
    }
}

/// The (host, claim id) of every `claim` that exited 0; panics on exits other than 0 and 3.
fn winners(issue: u64, results: &[(String, Output)]) -> Vec<(String, String)> {
    let odd: Vec<_> = results
        .iter()
        .filter(|(_, o)| !matches!(o.status.code(), Some(0) | Some(3)))
        .map(|(h, o)| format!("{h}: {:?} {}", o.status, stderr(o)))
        .collect();
    assert!(odd.is_empty(), "unexpected exits on #{issue}: {odd:#?}");
    results
        .iter()
        .filter(|(_, o)| o.status.code() == Some(0))
        .map(|(h, o)| (h.clone(), stdout(o)))
        .collect()
}

/// Runs `stage NAME --claim ID` for every (host, claim) at once; returns (host, claim, exit).
async fn stage_all(world: &World, claims: &[(String, String)], name: &str) -> Vec<Staged> {
    let mut set = tokio::task::JoinSet::new();
    for (host, claim) in claims {
        let child = world
            .cli(host)
            .args(["stage", name, "--claim", claim])
            .output();
        let (host, claim) = (host.clone(), claim.clone());
        set.spawn(async move { (host, claim, child.await.expect("stage runs")) });
    }
    set.join_all().await
}

type Staged = (String, String, Output);

/// Reconcile passes until one applies all its actions (a failed action is retried by the next
/// pass, as under GitHub's 502s it can be).
async fn reconcile(world: &World) {
    for _ in 0..5 {
        let out = world.exec("reconciler", &["reconcile"]).await;
        match out.status.code() {
            Some(0) => return,
            Some(1) => continue,
            _ => panic!("reconcile: {}", stderr(&out)),
        }
    }
    panic!("five reconcile passes all had failed actions");
}

/// The claim ids still active on `issue` as GitHub holds them (not as a stale list shows them).
fn active_claims(world: &World, issue: u64) -> Vec<String> {
    let own = world.ownership(issue);
    own.active().map(|c| c.record.claim_id.clone()).collect()
}

/// The claim ids posted on `issue`, in comment order.
fn posted_claims(world: &World, issue: u64) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for r in world.records(issue) {
        if let Record::Claim(c) = r {
            if !ids.contains(&c.claim_id) {
                ids.push(c.claim_id);
            }
        }
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_claimants_under_stale_lists_and_502s_never_both_pass_a_stage_ten_times() {
    let world = World::new().await;
    // Given comment lists up to 300 ms stale and 20% of requests failing with 502
    world.sim.set_faults(stale_and_flaky());
    let started = Instant::now();
    for round in 0..10 {
        let issue = world.ready_issue(&format!("stale race {round}"));
        // When eight hosts claim it at once and every winner reports a stage right away
        let results = world.race_claims(issue, 8).await;
        let won = winners(issue, &results);
        let staged = stage_all(&world, &won, "working").await;
        // Then at most one passed its stage; every other winner was told to stop (exit 4)
        let passed: Vec<&Staged> = staged
            .iter()
            .filter(|(_, _, o)| o.status.code() == Some(0))
            .collect();
        for (host, _, o) in &staged {
            let code = o.status.code();
            assert!(matches!(code, Some(0) | Some(4)), "{host}: {}", stderr(o));
        }
        assert!(
            passed.len() <= 1,
            "two claimants passed a stage: {passed:?}"
        );
        // And the claim that passed is the one owning the issue, the first posted
        let posted = posted_claims(&world, issue);
        assert_eq!(
            passed.len(),
            1,
            "the owner passed its stage (round {round})"
        );
        assert_eq!(passed[0].1, posted[0], "the first claim posted passed");
        // And no claimant believed it won without owning the issue
        assert_eq!(won.len(), 1, "winners of #{issue}: {won:?}");
        // When a reconcile runs once the lists have caught up
        tokio::time::sleep(WINDOW).await;
        reconcile(&world).await;
        // Then exactly one active claim remains: the one that passed its stage
        assert_eq!(active_claims(&world, issue), [passed[0].1.clone()]);
    }
    let faulted = world
        .sim
        .requests()
        .iter()
        .filter(|r| r.status == 502)
        .count();
    let lists = world.sim.count("GET", COMMENT_LIST);
    let stale = world.sim.count("GET", ONE_COMMENT);
    eprintln!(
        "10 rounds x 8 claimants: {faulted} requests answered 502, {lists} comment-list reads, \
         {stale} of them missing the reader's own claim, {:?}",
        started.elapsed()
    );
    assert!(faulted > 20, "faults were injected ({faulted})");
}

/// A CMD that reports `n` stages through the real binary, logging each one that passed as
/// `ISSUE CLAIM START_NS END_NS` to `log`, and stops with the exit code of the first refused.
fn staging_script(n: u32, log: &Path) -> String {
    format!(
        "i=0; while [ $i -lt {n} ]; do t0=$(date +%s%N); \
         '{bin}' stage step-$i || exit $?; \
         echo \"$THIRDSHIFT_ISSUE $THIRDSHIFT_CLAIM_ID $t0 $(date +%s%N)\" >> '{log}'; \
         i=$((i+1)); sleep 0.02; done",
        bin = env!("CARGO_BIN_EXE_thirdshift-reconciler"),
        log = log.display(),
    )
}

/// Per issue, per claim: the span from the start of its first passed stage to the end of its
/// last one, in nanoseconds.
type Spans = BTreeMap<u64, BTreeMap<String, (u128, u128)>>;

fn spans(log: &Path) -> Spans {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut spans = Spans::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [issue, claim, t0, t1] = parts[..] else {
            panic!("bad log line {line:?}");
        };
        let (t0, t1) = (t0.parse().expect("ns"), t1.parse().expect("ns"));
        let per_issue = spans.entry(issue.parse().expect("issue")).or_default();
        let span = per_issue.entry(claim.to_string()).or_insert((t0, t1));
        *span = (span.0.min(t0), span.1.max(t1));
    }
    spans
}

/// The records on `issue`, one line each, for failure messages.
fn history(world: &World, issue: u64) -> Vec<String> {
    let line = |r: Record| match r {
        Record::Claim(c) => format!("claim {} by {}", c.claim_id, c.host),
        Record::End(e) => format!("end {} {} by {}", e.claim_id, e.outcome.as_str(), e.actor),
        other => format!("{other:?}"),
    };
    world.records(issue).into_iter().map(line).collect()
}

/// Then: on every issue, no two claims passed stages in overlapping time, and only the first
/// claim posted there (the owner by the lowest comment id) passed any.
fn assert_one_worker_per_issue(world: &World, spans: &Spans) {
    for (issue, claims) in spans {
        let mut sorted: Vec<&(u128, u128)> = claims.values().collect();
        sorted.sort();
        assert!(
            sorted.windows(2).all(|w| w[0].1 < w[1].0),
            "two Runs passed stages at the same time on #{issue}: {claims:?}"
        );
        let first = posted_claims(world, *issue).first().cloned();
        let workers: Vec<&String> = claims.keys().collect();
        let history = history(world, *issue);
        assert_eq!(
            workers,
            [&first.expect("a claim")],
            "stages passed on #{issue}: {claims:?} {history:#?}"
        );
    }
}

/// Starts `run` of `script` on `issue` from `host`.
fn start_run(world: &World, host: &str, issue: u64, script: &str) -> RunFuture {
    let mut cmd = world.cli(host);
    cmd.args([
        "run",
        "--issue",
        &issue.to_string(),
        "--",
        "sh",
        "-c",
        script,
    ]);
    Box::pin(async move { cmd.output().await.expect("run runs") })
}

type RunFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Output> + Send>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_runs_staging_in_a_loop_under_stale_lists_never_work_at_the_same_time() {
    let world = World::new().await;
    // Given comment lists up to 300 ms stale and 20% of requests failing with 502
    world.sim.set_faults(stale_and_flaky());
    for round in 0..5 {
        let issue = world.ready_issue(&format!("two runs {round}"));
        let log = world.dir.path().join(format!("stages-{round}.log"));
        // When two hosts run it at once, each CMD reporting six stages
        let script = staging_script(6, &log);
        let (left, right) = tokio::join!(
            start_run(&world, "left", issue, &script),
            start_run(&world, "right", issue, &script)
        );
        let said: Vec<String> = [&left, &right]
            .iter()
            .map(|o| format!("{:?}: {}", o.status, stderr(o)))
            .collect();
        // Then the two Runs never passed stages in overlapping time; only the owner's passed any
        let spans = spans(&log);
        assert_eq!(spans.len(), 1, "no Run worked: {said:#?}");
        assert_one_worker_per_issue(&world, &spans);
        // And it finished its work while the other lost the race or stopped at exit 4
        let mut codes = [left.status.code(), right.status.code()];
        codes.sort();
        let expected = [[Some(0), Some(3)], [Some(0), Some(4)]];
        assert!(expected.contains(&codes), "exit codes: {said:#?}");
        // And once a reconcile ran, no claim is left active and the owner's Run ended done
        tokio::time::sleep(WINDOW).await;
        reconcile(&world).await;
        assert!(active_claims(&world, issue).is_empty());
        let done = world
            .records(issue)
            .into_iter()
            .any(|r| matches!(r, Record::End(e) if e.outcome == Outcome::Done));
        assert!(done, "the owner's Run ended done");
    }
}

/// What one host's slots have tried, shared between them as a host's pickup would know it.
type Tried = Arc<std::sync::Mutex<Vec<u64>>>;

/// One of a host's Run slots, as a pickup would drive it: runs the first issue that is Ready,
/// not in progress and not yet tried on this host, again and again, until there is none.
/// Returns the Runs' exit codes.
async fn slot(world: Arc<World>, host: String, tried: Tried, issues: Vec<u64>) -> Vec<i32> {
    let script = staging_script(2, &world.dir.path().join("stages.log"));
    let mut codes = Vec::new();
    loop {
        let next = {
            let mut tried = tried.lock().expect("tried");
            let next = issues.iter().copied().find(|n| {
                let labels = world.labels(*n);
                let ready = labels.iter().any(|l| l == READY);
                ready && !labels.iter().any(|l| l == IN_PROGRESS) && !tried.contains(n)
            });
            tried.extend(next);
            next
        };
        let Some(issue) = next else {
            return codes;
        };
        let out = start_run(&world, &host, issue, &script).await;
        codes.push(out.status.code().unwrap_or(-1));
    }
}

/// Three hosts with two Run slots each work through `issues` at once, each Run's CMD logging
/// its stages to `stages.log`; returns every exit code.
async fn three_hosts_two_slots(world: &Arc<World>, issues: &[u64]) -> Vec<i32> {
    let mut set = tokio::task::JoinSet::new();
    for host in ["alpha", "beta", "gamma"] {
        let tried = Tried::default();
        for _ in 0..2 {
            let (world, host, tried) = (world.clone(), host.to_string(), tried.clone());
            set.spawn(slot(world, host, tried, issues.to_vec()));
        }
    }
    set.join_all().await.concat()
}

/// One repetition of the pickup-like test in a world of its own; returns (runs, lost, list
/// reads missing the reader's own claim).
async fn pickup_repetition(rep: usize) -> (usize, usize, usize) {
    // Given twenty Ready issues, stale lists and 20% of requests failing with 502
    let world = Arc::new(World::new().await);
    let issues: Vec<u64> = (0..20)
        .map(|i| world.ready_issue(&format!("#{i}")))
        .collect();
    world.sim.set_faults(stale_and_flaky());
    // When three hosts with two slots each run every Ready issue they find, all at once
    let codes = three_hosts_two_slots(&world, &issues).await;
    // Then no issue was worked by two Runs at once, and only by its owner's Run
    let spans = spans(&world.dir.path().join("stages.log"));
    assert_one_worker_per_issue(&world, &spans);
    // And every issue was worked and done once; the other Runs lost the race (exit 3)
    assert_eq!(spans.len(), 20, "issues worked in repetition {rep}");
    let all_known = codes.iter().all(|c| [0, 3].contains(c));
    assert!(all_known, "exit codes {codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 20);
    // And after a reconcile no claim is left active anywhere
    tokio::time::sleep(WINDOW).await;
    reconcile(&world).await;
    for issue in &issues {
        assert!(active_claims(&world, *issue).is_empty(), "#{issue}");
    }
    let lost = codes.iter().filter(|c| **c == 3).count();
    (codes.len(), lost, world.sim.count("GET", ONE_COMMENT))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hosts_of_two_slots_on_twenty_issues_never_work_one_issue_twice_ten_times() {
    let started = Instant::now();
    let (mut runs, mut lost, mut stale) = (0, 0, 0);
    // Two repetitions at a time, each in a world of its own
    for pair in 0..5 {
        let (a, b) = tokio::join!(pickup_repetition(2 * pair), pickup_repetition(2 * pair + 1));
        for (r, l, s) in [a, b] {
            (runs, lost, stale) = (runs + r, lost + l, stale + s);
        }
    }
    eprintln!(
        "10 x (3 hosts x 2 slots, 20 issues): {runs} runs, {lost} lost the race, {stale} list \
         reads missing the reader's own claim, {:?}",
        started.elapsed()
    );
}
