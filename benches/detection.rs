//! How long a Run killed outright keeps its Claim (issue #32): real Runs of the real binary on
//! the emulator, each SIGKILLed with its command's whole session, timed from the SIGKILL to its
//! end record on the emulator. Like with like: in the first two ways the same N Runs are alive
//! at once and killed at the same moments, spread over one period of the documented crontab
//! (`observe --reconcile` every 5 minutes, docs/operations.md); once with each Run's companion
//! and nobody starting a pass, once with companions off and that crontab alone, the baseline (a
//! host set up as documented before companions). The third way: the companion while the Run's
//! command (its Harness) outlives the Run by 5 s, timed from that command's exit (the Claim must
//! not end before it). Median and max of each, the targets beside them, the baseline/companion
//! ratio, and what the bench does not measure.
//!
//! `cargo bench --bench detection` runs 20 kills each with 50 ms per request
//! (`THIRDSHIFT_BENCH_LATENCY_MS`) and the 300 s crontab period (`THIRDSHIFT_BENCH_LOOP_SECS`);
//! `-- --write` puts the table into docs/performance.md. Without `--bench` (as `cargo test
//! --all-targets` runs it) it is a smoke run: 2 kills each, no latency, a 2 s period, 1 s
//! outliving. Times are reported, never asserted; what is asserted is that every Claim ends and
//! none before its command exits.

#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/measure.rs"]
mod measure;

use std::time::{Duration, Instant};

use fleet::BOT;
use github_emulator::{Sim, SimServer};
use thirdshift_reconciler::host::signal_session;
use thirdshift_reconciler::protocol::record::{decode, Decoded, Ownership, Record};

/// What one setting of the bench runs with.
struct Setup {
    kills: usize,
    latency: Duration,
    loop_every: Duration,
    outlive: Duration,
}

/// The emulator and the host the Runs run on.
struct Bed {
    sim: Sim,
    server: SimServer,
    dir: tempfile::TempDir,
}

impl Bed {
    async fn new(latency: Duration) -> Bed {
        let (sim, server) = fleet::slow_sim(latency).await;
        Bed {
            sim,
            server,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The real binary as host h1, its companions on or off.
    fn cli(&self, companions: bool) -> tokio::process::Command {
        let state = self.dir.path().join("h1");
        fleet::host_binary(&self.sim, &self.server.url, &state, "h1", companions)
    }

    fn ownership(&self, issue: u64) -> Ownership {
        fleet::ownership_on(&self.sim, issue)
    }

    fn ended(&self, issue: u64) -> bool {
        self.sim
            .comments(issue)
            .iter()
            .any(|c| c.author == BOT && matches!(decode(&c.body), Decoded::Record(Record::End(_))))
    }
}

/// A Run started on a new Ready issue, once its claim records its command's session.
struct Run {
    issue: u64,
    child: tokio::process::Child,
    sid: u32,
}

async fn start(bed: &Bed, companions: bool) -> Run {
    let issue = bed
        .sim
        .create_issue(BOT, "detect", "b", &["ready-for-agent"]);
    let child = bed
        .cli(companions)
        .args([
            "run",
            "--issue",
            &issue.to_string(),
            "--",
            "sh",
            "-c",
            "sleep 600",
        ])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(sid) = bed.ownership(issue).owner.and_then(|o| o.record.session_id) {
            return Run { issue, child, sid };
        }
        assert!(
            Instant::now() < deadline,
            "the Run on #{issue} never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills the Run process only.
async fn kill_run(run: &mut Run) {
    let _ = run.child.start_kill();
    let _ = run.child.wait().await;
}

/// Waits until `issue`'s Claim is ended; how long that took from `since`.
async fn until_ended(bed: &Bed, issue: u64, since: Instant, limit: Duration) -> Duration {
    while !bed.ended(issue) {
        assert!(
            since.elapsed() < limit,
            "#{issue} not ended after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    since.elapsed()
}

/// Kills each of `runs` with its session, at moments spread over `period`, while a watcher notes
/// when each Claim's end record appears (every 10 ms, so an end seen late is never timed late);
/// how long each took, once all are ended (within `limit` of its kill).
async fn kill_spread(
    bed: &std::sync::Arc<Bed>,
    runs: &mut [Run],
    period: Duration,
    limit: Duration,
) -> Vec<Duration> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    let issues: Vec<u64> = runs.iter().map(|r| r.issue).collect();
    let seen: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let watcher = {
        let (bed, seen, issues) = (bed.clone(), seen.clone(), issues.clone());
        tokio::spawn(async move {
            loop {
                for &n in &issues {
                    if !seen.lock().unwrap().contains_key(&n) && bed.ended(n) {
                        seen.lock().unwrap().insert(n, Instant::now());
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let step = period / runs.len().max(1) as u32;
    let mut killed = Vec::new();
    for run in runs {
        tokio::time::sleep(step).await;
        kill_run(run).await;
        signal_session(run.sid, libc::SIGKILL);
        killed.push((run.issue, Instant::now()));
    }
    let mut took = Vec::new();
    for (issue, at) in killed {
        loop {
            if let Some(end) = seen.lock().unwrap().get(&issue) {
                took.push(end.saturating_duration_since(at));
                break;
            }
            assert!(at.elapsed() < limit, "#{issue} not ended after {limit:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    watcher.abort();
    took
}

/// With companions: N Runs alive at once, killed with their sessions at the baseline's moments;
/// nobody starts a pass.
async fn with_companion(s: &Setup) -> Vec<Duration> {
    let bed = std::sync::Arc::new(Bed::new(s.latency).await);
    let mut runs = Vec::new();
    for _ in 0..s.kills {
        runs.push(start(&bed, true).await);
    }
    kill_spread(&bed, &mut runs, s.loop_every, Duration::from_secs(120)).await
}

/// The baseline: companions off, a host running `observe --reconcile` every `loop_every` as the
/// documented crontab does; N Runs alive at once, killed at moments spread over one period.
async fn with_loop_alone(s: &Setup) -> Vec<Duration> {
    let bed = std::sync::Arc::new(Bed::new(s.latency).await);
    let mut runs = Vec::new();
    for _ in 0..s.kills {
        runs.push(start(&bed, false).await);
    }
    let looping = {
        let (bed, every) = (bed.clone(), s.loop_every);
        tokio::spawn(async move {
            loop {
                let next = Instant::now() + every;
                let _ = bed
                    .cli(false)
                    .args(["observe", "--reconcile"])
                    .status()
                    .await;
                tokio::time::sleep_until(next.into()).await;
            }
        })
    };
    let limit = s.loop_every * 3 + Duration::from_secs(60);
    let took = kill_spread(&bed, &mut runs, s.loop_every, limit).await;
    looping.abort();
    took
}

/// With companions, the Run's command outliving the Run by `outlive`: timed from the command's
/// exit; the Claim must still be active until then.
async fn with_outliving_harness(s: &Setup) -> Vec<Duration> {
    let bed = Bed::new(s.latency).await;
    let mut took = Vec::new();
    for _ in 0..s.kills {
        let mut run = start(&bed, true).await;
        kill_run(&mut run).await;
        tokio::time::sleep(s.outlive).await;
        assert!(
            !bed.ended(run.issue),
            "#{} ended while its command ran",
            run.issue
        );
        signal_session(run.sid, libc::SIGKILL);
        let at = Instant::now();
        took.push(until_ended(&bed, run.issue, at, Duration::from_secs(120)).await);
    }
    took
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let smoke = !args.iter().any(|a| a == "--bench");
    let s = Setup {
        kills: if smoke { 2 } else { 20 },
        latency: Duration::from_millis(
            env_u64("THIRDSHIFT_BENCH_LATENCY_MS").unwrap_or(if smoke { 0 } else { 50 }),
        ),
        loop_every: Duration::from_secs(
            env_u64("THIRDSHIFT_BENCH_LOOP_SECS").unwrap_or(if smoke { 2 } else { 300 }),
        ),
        outlive: Duration::from_secs(if smoke { 1 } else { 5 }),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (companion, looped, outliving) = rt.block_on(async {
        (
            with_companion(&s).await,
            with_loop_alone(&s).await,
            with_outliving_harness(&s).await,
        )
    });
    let ratio = measure::median(&looped).as_secs_f64()
        / measure::median(&companion).as_secs_f64().max(1e-3);
    let table = format!(
        "{} kills each, {} ms per request; the first two rows: {} Runs alive at once, killed \
         with their sessions at the same moments spread over {} s; from SIGKILL of the Run and its \
         session (the last row: from its command's exit, {} s after the Run's) to the end record \
         on the emulator.\n\n\
         | how | median | max | target |\n|---|---:|---:|---|\n\
         | the Run's companion, no pass started | {} | {} | median ≤ 3 s, max ≤ 10 s |\n\
         | baseline: companions off, the documented crontab (`observe --reconcile` every {} s) | {} | {} | — |\n\
         | the companion, command outliving the Run | {} | {} | never before the command exits |\n\n\
         The baseline takes {ratio:.0}× as long as the companion at the median. Not measured: \
         cron's own start delay, GitHub's real latency beyond {} ms a request and its queues, \
         the scheduled Action (often tens of minutes late), a host that is down (its Claims end \
         at its next boot, docs/operations.md), a kill that takes the companion too.",
        s.kills,
        s.latency.as_millis(),
        s.kills,
        s.loop_every.as_secs(),
        s.outlive.as_secs(),
        measure::secs(measure::median(&companion)),
        measure::secs(*companion.iter().max().unwrap()),
        s.loop_every.as_secs(),
        measure::secs(measure::median(&looped)),
        measure::secs(*looped.iter().max().unwrap()),
        measure::secs(measure::median(&outliving)),
        measure::secs(*outliving.iter().max().unwrap()),
        s.latency.as_millis(),
    );
    println!("{table}");
    if args.iter().any(|a| a == "--write") {
        measure::write_section("detection", &table, "--write");
    }
}
