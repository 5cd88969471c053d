//! What `observe`'s verdicts cost on a busy host (issue #9, target 4): P real sleeping
//! processes (each in its own session, as Runs are), the last 50 started owning Claims (a host's
//! other processes, daemons and shells, were there before its Runs). It measures the
//! verdicts as `observe` takes them (`host::verdicts::Judge`: the claimed PIDs only, the whole
//! table only for a Claim that is not alive) with every Run alive and with one Run dead, beside
//! one read of the whole table (what `observe` read on every pass before). Median of 7 rounds.
//!
//! `cargo bench --bench observe_cost` runs P = 2,000; `THIRDSHIFT_BENCH_PROCS` chooses;
//! `-- --write` puts the table into docs/performance.md. Without `--bench` (as
//! `cargo test --all-targets` runs it) it is a smoke run with P = 100 that fails when a live
//! Run needed the whole table. Times are reported, never asserted.

#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/measure.rs"]
mod measure;

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use thirdshift_reconciler::host::boot_id;
use thirdshift_reconciler::host::judge;
use thirdshift_reconciler::host::Judge;
use thirdshift_reconciler::host::ProcessTable;
use thirdshift_reconciler::host::Stat;
use thirdshift_reconciler::protocol::record::{ClaimRecord, Verdict};

const CLAIMS: usize = 50;
const ROUNDS: usize = 7;

/// `sleep 600` in a session of its own.
fn sleeper() -> Child {
    let mut cmd = Command::new("sleep");
    cmd.arg("600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().expect("sleep starts")
}

/// The claim a Run owning process `pid` would have posted.
fn claim_of(pid: u32, k: usize) -> ClaimRecord {
    let stat = Stat::read(pid).expect("the sleeper runs");
    ClaimRecord {
        pid,
        start_ticks: stat.start_ticks,
        session_id: Some(stat.session),
        boot_id: boot_id().unwrap_or_default(),
        ..fleet::claim(k as u64 + 1, 0)
    }
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// Times `f` over the rounds; returns the median and the last result.
fn timed<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        last = Some(f());
        times.push(start.elapsed());
    }
    (median(times), last.expect("rounds ran"))
}

/// Takes `observe`'s verdicts; returns how many were alive and how many whole-table reads.
fn verdicts(claims: &[ClaimRecord]) -> (usize, usize) {
    let mut j = Judge::new(claims.iter().map(|c| (c.pid, c.start_ticks))).expect("reads /proc");
    let alive = claims
        .iter()
        .filter(|c| j.verdict(c).expect("a verdict") == Verdict::Alive)
        .count();
    (alive, j.full_reads())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let smoke = !args.iter().any(|a| a == "--bench");
    let procs: usize = std::env::var("THIRDSHIFT_BENCH_PROCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if smoke { 100 } else { 2000 });
    let mut children: Vec<Child> = (0..procs).map(|_| sleeper()).collect();
    let mut claims: Vec<ClaimRecord> = children
        .iter()
        .skip(procs.saturating_sub(CLAIMS))
        .enumerate()
        .map(|(k, c)| claim_of(c.id(), k))
        .collect();
    let on_host = ProcessTable::read().expect("reads /proc").len();

    let (lean, (alive, full_reads)) = timed(|| verdicts(&claims));
    let (whole, _) = timed(|| {
        let table = ProcessTable::read().expect("reads /proc");
        let boot = boot_id().unwrap_or_default();
        claims
            .iter()
            .filter(|c| judge(c, &boot, &table) == Verdict::Alive)
            .count()
    });
    // one Run dies: its process is killed and reaped
    let victim = claims[0].pid;
    let child = children
        .iter_mut()
        .find(|c| c.id() == victim)
        .expect("victim");
    child.kill().expect("kill");
    child.wait().expect("reap");
    let (one_dead, (alive_after, reads_after)) = timed(|| verdicts(&claims));
    claims.clear();
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }

    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    let table = format!(
        "{procs} sleeping processes started ({on_host} on the host in all), {CLAIMS} Claims \
         owned by the last {CLAIMS} started; median of {ROUNDS} rounds.\n\n\
         | verdicts on {CLAIMS} Claims | ms | alive | whole-table reads |\n|---|---:|---:|---:|\n\
         | observe now, every Run alive | {} | {alive} | {full_reads} |\n\
         | observe now, one Run dead | {} | {alive_after} | {reads_after} |\n\
         | the whole table once (every process's stat and environment) | {} | | 1 |\n\n\
         | target | measured | goal | |\n|---|---|---|---|\n\
         | 4 observe, {CLAIMS} Claims on {procs} processes | {} ms (one dead: {} ms) | < 100 ms | {} |\n",
        ms(lean),
        ms(one_dead),
        ms(whole),
        ms(lean),
        ms(one_dead),
        if lean.max(one_dead) < Duration::from_millis(100) {
            "met"
        } else {
            "MISSED"
        },
    );
    println!("{table}");
    if args.iter().any(|a| a == "--write") {
        measure::write_section("observe_cost", &table, "--write");
    }
    if smoke {
        assert_eq!(full_reads, 0, "live Runs needed the whole process table");
        assert_eq!(alive, CLAIMS.min(procs));
        assert_eq!(alive_after + 1, alive, "the killed Run is not alive");
        assert!(reads_after >= 1, "a dead Run is judged on the whole table");
    }
}
