//! Measuring one run of the real binary against the emulator: requests (from the emulator's
//! log), rate budget charged, writes, wall time, and the child's peak resident memory (from
//! `wait4`'s rusage); and writing a benchmark's table into docs/performance.md. It judges no
//! target.
#![allow(dead_code)]

use std::time::Instant;

use super::fleet::{Fleet, BOT_TOKEN};

/// What one run cost.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Requests, the process's one `GET /user` (who am I) left out.
    pub requests: usize,
    /// Rate budget charged (304s are free).
    pub budget: u32,
    /// Requests other than GET.
    pub writes: usize,
    pub wall_ms: u128,
    pub rss_mib: f64,
    /// The process's exit code.
    pub code: i32,
}

/// Runs the binary against a fleet and measures each run.
pub struct Meter<'a> {
    fleet: &'a Fleet,
}

impl<'a> Meter<'a> {
    pub fn new(fleet: &'a Fleet) -> Meter<'a> {
        Meter { fleet }
    }

    /// Runs the binary with `args` to its end and measures it.
    pub async fn pass(&self, args: &[&str]) -> Measured {
        let sim = &self.fleet.sim;
        sim.clear_requests();
        let before = sim.rate_remaining(BOT_TOKEN);
        let mut cmd = self.fleet.cli(args);
        cmd.stdout(std::process::Stdio::null());
        let start = Instant::now();
        let child = cmd.spawn().expect("the binary starts");
        let pid = child.id() as libc::pid_t;
        let (code, rss_kib) = tokio::task::spawn_blocking(move || wait(pid))
            .await
            .expect("wait task");
        let wall_ms = start.elapsed().as_millis();
        drop(child);
        let log = sim.requests();
        if std::env::var_os("THIRDSHIFT_BENCH_LOG").is_some() {
            eprintln!("{args:?}:");
            for e in &log {
                eprintln!("  {} {} {}?{}", e.status, e.method, e.path, e.query);
            }
        }
        let requests = log.iter().filter(|e| e.route != "/user").count();
        let writes = log
            .iter()
            .filter(|e| e.method != "GET" && e.route != "/graphql")
            .count();
        Measured {
            requests,
            budget: before.saturating_sub(sim.rate_remaining(BOT_TOKEN)),
            writes,
            wall_ms,
            rss_mib: rss_kib as f64 / 1024.0,
            code,
        }
    }
}

/// Waits for child `pid`; returns its exit code and peak resident memory in KiB.
pub fn wait(pid: libc::pid_t) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child; status and usage point to live locals.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss)
}

/// The machine, in one line: CPU model, cores, memory, kernel.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{model}, {cores} cores available, {mem_gib:.1} GiB, Linux {}",
        kernel.trim()
    )
}

/// Replaces the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in
/// docs/performance.md with `table`, the machine and the command.
pub fn write_section(name: &str, table: &str, args: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/performance.md");
    let doc = std::fs::read_to_string(&path).expect("docs/performance.md exists");
    let (begin, end) = (
        format!("<!-- {name}:begin -->"),
        format!("<!-- {name}:end -->"),
    );
    let (Some(a), Some(b)) = (doc.find(&begin), doc.find(&end)) else {
        panic!("docs/performance.md has no {begin} … {end} section");
    };
    let section = format!(
        "{begin}\nMachine: {}. Measured {}.\nCommand: `cargo bench --bench {name} -- {args}`\n\n{table}\n",
        machine(),
        chrono::Utc::now().format("%Y-%m-%d"),
    );
    let updated = format!("{}{section}{}", &doc[..a], &doc[b..]);
    std::fs::write(&path, updated).expect("docs/performance.md written");
}

/// The median of `v` (the upper one of an even count).
pub fn median(v: &[std::time::Duration]) -> std::time::Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

/// `d` in seconds, two decimals: `1.79 s`.
pub fn secs(d: std::time::Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}
