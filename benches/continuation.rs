//! How long a Run killed outright takes to carry on by itself (issue #54): real Runs of the real
//! binary on the emulator, with `recovery.on_dead: continue` and the Run companion, each
//! SIGKILLed with its command's whole session; timed from the SIGKILL to the Continuation's
//! command running (its first act: a file named for the agent session it was handed to resume).
//! Nobody starts a pass or a pickup: the dead Run's companion ends its Claim as a Continuation and
//! starts the next Run with the dead Run's own command. Each Continuation is then handed back
//! (SIGTERM), so the host's one slot is free for the next kill.
//!
//! `cargo bench --bench continuation` runs 20 kills with 50 ms per request
//! (`THIRDSHIFT_BENCH_LATENCY_MS`); `-- --write` puts the table into docs/performance.md. Without
//! `--bench` (as `cargo test --all-targets` runs it) it is a smoke run: 2 kills, no latency.
//! Times are reported, never asserted; what is asserted is that every killed Run is carried on,
//! with the session it had.

#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/measure.rs"]
mod measure;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fleet::BOT;
use github_emulator::{Sim, SimServer};
use thirdshift_reconciler::host::signal_session;
use thirdshift_reconciler::protocol::record::{decode, ClaimRecord, Decoded, Ownership, Record};

/// How long one Continuation may take before the bench calls it lost.
const LIMIT: Duration = Duration::from_secs(120);

/// The emulator, the host's config (the continue policy, one slot) and its folders.
struct Bed {
    sim: Sim,
    server: SimServer,
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Bed {
    async fn new(latency: Duration) -> Bed {
        let (sim, server) = fleet::slow_sim(latency).await;
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("continue.yml");
        let text = "hosts:\n  h1:\n    capacity: 1\nrecovery:\n  on_dead: continue\n";
        std::fs::write(&config, text).unwrap();
        Bed {
            sim,
            server,
            dir,
            config,
        }
    }

    /// The real binary as host h1, with its companions, reading the continue config.
    fn cli(&self) -> tokio::process::Command {
        let state = self.dir.path().join("h1");
        let mut cmd = fleet::host_binary(&self.sim, &self.server.url, &state, "h1", true);
        cmd.arg("--config").arg(&self.config);
        cmd
    }

    fn ownership(&self, issue: u64) -> Ownership {
        fleet::ownership_on(&self.sim, issue)
    }

    fn ends(&self, issue: u64) -> usize {
        let end = |body: &str| matches!(decode(body), Decoded::Record(Record::End(_)));
        let comments = self.sim.comments(issue);
        comments
            .iter()
            .filter(|c| c.author == BOT && end(&c.body))
            .count()
    }

    /// The file a Run's command on `issue` writes first, named for the session it resumes.
    fn started(&self, issue: u64, session: &str) -> PathBuf {
        self.dir.path().join(format!("started-{issue}-{session}"))
    }
}

/// The command every Run runs: note the session it was handed, then work.
fn command(dir: &Path) -> String {
    format!(
        "touch '{}/started-'\"$THIRDSHIFT_ISSUE-${{THIRDSHIFT_RESUME_SESSION:-fresh}}\"; \
         exec sleep 600",
        dir.display()
    )
}

/// Waits for `done`, at most [`LIMIT`] from `since`; how long it took.
async fn until(what: &str, since: Instant, mut done: impl FnMut() -> bool) -> Duration {
    while !done() {
        assert!(since.elapsed() < LIMIT, "{what}: not after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    since.elapsed()
}

/// One kill: a Run with agent session `sess-N` on a new Ready issue, killed outright once its
/// command runs; the time to its Continuation's command running. The Continuation is then
/// handed back.
async fn one(bed: &Bed, n: usize) -> Duration {
    let issue = bed
        .sim
        .create_issue(BOT, "carry on", "b", &["ready-for-agent"]);
    let session = format!("sess-{n}");
    let mut run = bed
        .cli()
        .args(["run", "--issue", &issue.to_string(), "--session", &session])
        .args(["--", "sh", "-c", &command(bed.dir.path())])
        .spawn()
        .unwrap();
    let began = Instant::now();
    let mut claim: Option<ClaimRecord> = None;
    until("the first Run", began, || {
        claim = bed.ownership(issue).owner.map(|o| o.record);
        claim.as_ref().is_some_and(|c| c.session_id.is_some())
            && bed.started(issue, "fresh").exists()
    })
    .await;
    let sid = claim.as_ref().and_then(|c| c.session_id).unwrap();
    let _ = run.start_kill();
    let _ = run.wait().await;
    signal_session(sid, libc::SIGKILL);
    let killed = Instant::now();
    let took = until("the Continuation's command", killed, || {
        bed.started(issue, &session).exists()
    })
    .await;
    hand_back(bed, issue).await;
    took
}

/// SIGTERM to the Run holding `issue`; waits for its own end record (the slot is free again).
async fn hand_back(bed: &Bed, issue: u64) {
    let since = Instant::now();
    let mut owner = None;
    until("the Continuation's claim", since, || {
        owner = bed.ownership(issue).owner.map(|o| o.record.pid);
        owner.is_some()
    })
    .await;
    // SAFETY: kill(2) with a PID and a signal number; no memory is shared.
    unsafe { libc::kill(owner.unwrap() as i32, libc::SIGTERM) };
    until("the Continuation handed back", since, || {
        bed.ends(issue) == 2
    })
    .await;
    until("the Run to leave its slot", since, || {
        bed.ownership(issue).owner.is_none()
    })
    .await;
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let smoke = !args.iter().any(|a| a == "--bench");
    let kills = if smoke { 2 } else { 20 };
    let latency = std::env::var("THIRDSHIFT_BENCH_LATENCY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if smoke { 0 } else { 50 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let took = rt.block_on(async {
        let bed = Bed::new(Duration::from_millis(latency)).await;
        let mut took = Vec::new();
        for n in 0..kills {
            took.push(one(&bed, n).await);
        }
        took
    });
    let (mid, max) = (measure::median(&took), *took.iter().max().unwrap());
    let table = format!(
        "{kills} kills, {latency} ms per request; from SIGKILL of the Run and its command's \
         session to the Continuation's command running with the session it resumes, nobody \
         starting a pass or a pickup.\n\n\
         | how | median | max | target |\n|---|---:|---:|---|\n\
         | the dead Run's companion starts the Continuation | {} | {} | median < 5 s (moonshot < 2 s) |\n\n\
         Before, the Continuation waited for the next `pickup` cron line: with one every minute, \
         30 s after the end at the median (half its period, an estimate, not measured here), \
         {:.0}× this.",
        measure::secs(mid),
        measure::secs(max),
        30.0 / mid.as_secs_f64().max(1e-3),
    );
    println!("{table}");
    if args.iter().any(|a| a == "--write") {
        measure::write_section("continuation", &table, "--write");
    }
}
