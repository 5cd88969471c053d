//! A fleet on the emulator, as the benchmarks and the differential test seed it: N issues
//! labelled `in-progress`, each claimed by a Run on one of H hosts, with ordinary conversation
//! around the claim record; the registry issue with one report per host saying every Run is
//! alive. It also starts the real binary against it. It measures and asserts nothing.
#![allow(dead_code)]

use std::path::PathBuf;

use chrono::{TimeZone, Utc};
use github_emulator::{Permission, Sim, SimConfig, SimServer};
use thirdshift_reconciler::protocol::record::{
    encode, ClaimRecord, ClaimVerdict, DeathReason, HostReport, Kind, RunKind, Verdict,
};
use thirdshift_reconciler::text::ToComment;

pub const BOT: &str = "thirdshift-bot";
pub const BOT_TOKEN: &str = "bot-token";
pub const PERSON: &str = "alice";
pub const PERSON_TOKEN: &str = "alice-token";
pub const IN_PROGRESS: &str = "in-progress";
pub const REGISTRY_LABEL: &str = "thirdshift-registry";

/// The seeded world.
pub struct Fleet {
    pub sim: Sim,
    pub server: SimServer,
    pub dir: tempfile::TempDir,
    pub registry: u64,
    /// (issue, claim) for each claimed issue, in issue order.
    pub claims: Vec<(u64, ClaimRecord)>,
    /// (comment id, report) per host.
    pub reports: Vec<(u64, HostReport)>,
}

/// Host `k`'s name.
pub fn host(k: usize) -> String {
    format!("host-{k:02}")
}

/// The claim record a Run on host `k` posted on `issue`.
pub fn claim(issue: u64, k: usize) -> ClaimRecord {
    let t = Utc.with_ymd_and_hms(2026, 1, 5, 9, 0, 0).unwrap();
    ClaimRecord {
        claim_id: format!("c-{issue:016x}"),
        issue,
        host: host(k),
        machine_id: format!("machine-{k:02}"),
        boot_id: format!("boot-{k:02}"),
        pid: 10_000 + issue as u32,
        start_ticks: 1_000_000 + issue,
        session_id: Some(10_000 + issue as u32),
        session_start_ticks: None,
        kind: RunKind::Ticket,
        harness: Some("claude-code".into()),
        model: None,
        agent_session: Some(format!("sess-{issue}")),
        branch: Some(format!("issue-{issue}")),
        worktree: Some(format!("/work/wt-issue-{issue}")),
        logs: Vec::new(),
        stage: "implementing".into(),
        stage_since: t,
        claimed_at: t,
        removed_ready: true,
    }
}

/// Host `k`'s report: every given claim alive.
pub fn report(k: usize, claims: &[&ClaimRecord]) -> HostReport {
    let mut verdicts: Vec<ClaimVerdict> = claims
        .iter()
        .map(|c| ClaimVerdict {
            claim_id: c.claim_id.clone(),
            issue: c.issue,
            verdict: Verdict::Alive,
            kept: None,
            run: Default::default(),
            finished: None,
            watched: false,
        })
        .collect();
    verdicts.sort_by(|a, b| a.claim_id.cmp(&b.claim_id));
    HostReport {
        host: host(k),
        machine_id: format!("machine-{k:02}"),
        boot_id: format!("boot-{k:02}"),
        claims: verdicts,
        capacity: Some(4),
        slots_used: Some(claims.len() as u32),
        booted_at: None,
        refresh_secs: None,
        written_at: None,
    }
}

/// `report` with the verdict on `claim_id` turned into a death (PID gone).
pub fn with_death(report: &HostReport, claim_id: &str) -> HostReport {
    let mut r = report.clone();
    for v in &mut r.claims {
        if v.claim_id == claim_id {
            v.verdict = Verdict::Dead {
                reason: DeathReason::PidGone,
                evidence: "no process has PID (benchmark)".into(),
            };
        }
    }
    r
}

/// An ordinary comment's text.
pub fn chatter(issue: u64, k: usize) -> String {
    format!(
        "Progress note {k} on #{issue}: looked at the failing test, the fixture needs the new \
         field; will push after lunch. Nothing for the bot here."
    )
}

impl Fleet {
    /// `n` claimed issues over `h` hosts, `ordinary` comments each (half before the claim),
    /// written an hour apart per 50 issues and ending two days ago; `rate_limit` per token and hour.
    pub async fn seed(n: usize, h: usize, ordinary: usize, rate_limit: u32) -> Fleet {
        let sim = Sim::new(SimConfig {
            rate_limit,
            ..SimConfig::default()
        });
        sim.add_user(BOT, BOT_TOKEN, Permission::Admin);
        sim.add_user(PERSON, PERSON_TOKEN, Permission::Write);
        let server = sim
            .serve("127.0.0.1:0".parse().unwrap())
            .await
            .expect("emulator starts");
        let body = format!(
            "{}\n\n{}",
            thirdshift_reconciler::text::registry_body(),
            encode(Kind::View, &serde_json::json!({ "registry": true }))
        );
        let registry = sim.create_issue(
            BOT,
            thirdshift_reconciler::text::REGISTRY_TITLE,
            &body,
            &[REGISTRY_LABEL],
        );
        let mut claims = Vec::with_capacity(n);
        for i in 0..n {
            let number = sim.create_issue(PERSON, &format!("task {i}"), "please", &[IN_PROGRESS]);
            for k in 0..ordinary / 2 {
                sim.add_comment(number, PERSON, &chatter(number, k));
            }
            let c = claim(number, i % h.max(1));
            sim.add_comment(number, BOT, &c.to_comment());
            for k in ordinary / 2..ordinary {
                sim.add_comment(number, PERSON, &chatter(number, k));
            }
            claims.push((number, c));
            if i % 50 == 49 {
                // spread the history: every 50 issues are an hour older than the next 50
                sim.backdate(std::time::Duration::from_secs(3600));
            }
        }
        sim.backdate(std::time::Duration::from_secs(3600));
        let mut reports = Vec::with_capacity(h);
        for k in 0..h {
            let mine: Vec<&ClaimRecord> = claims
                .iter()
                .map(|(_, c)| c)
                .filter(|c| c.host == host(k))
                .collect();
            let r = report(k, &mine);
            let id = sim.add_comment(registry, BOT, &r.to_comment());
            reports.push((id, r));
        }
        sim.backdate(std::time::Duration::from_secs(2 * 24 * 3600));
        Fleet {
            sim,
            server,
            dir: tempfile::tempdir().expect("temp dir"),
            registry,
            claims,
            reports,
        }
    }

    /// The reconciler's state folder.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("reconciler")
    }

    /// The real binary as the reconcile job runs it, with the bot's token.
    pub fn cli(&self, args: &[&str]) -> std::process::Command {
        self.cli_as("reconciler", args)
    }

    /// The real binary as host `host`, with its own state folder (`<dir>/<host>`), the bot's
    /// token and no Run companions.
    pub fn cli_as(&self, host: &str, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GITHUB_TOKEN", BOT_TOKEN)
            .env("THIRDSHIFT_RETRY_BASE_MS", "5")
            .env("RUST_LOG", "warn")
            .env("THIRDSHIFT_COMPANION", "off")
            .arg("--repo")
            .arg(self.sim.repo_full_name())
            .arg("--api-url")
            .arg(&self.server.url)
            .arg("--host")
            .arg(host)
            .arg("--state-dir")
            .arg(self.dir.path().join(host))
            .args(args)
            .current_dir(self.dir.path());
        cmd
    }
}

/// Who owns `issue` on `sim`, as a reader trusting only the bot sees it.
pub fn ownership_on(sim: &Sim, issue: u64) -> thirdshift_reconciler::protocol::record::Ownership {
    use thirdshift_reconciler::protocol::record::{Ownership, RawComment, Trust};
    let raw: Vec<RawComment> = sim
        .comments(issue)
        .into_iter()
        .map(|c| RawComment {
            id: c.id,
            author: c.author,
            body: c.body,
        })
        .collect();
    Ownership::of(issue, &raw, &Trust::new([BOT]))
}

/// The real binary as host `host` on `sim` (served at `url`), with the bot's token, its state
/// folder `state`, its companions on or off, and its output dropped: a Run's host in the
/// latency benchmarks.
pub fn host_binary(
    sim: &Sim,
    url: &str,
    state: &std::path::Path,
    host: &str,
    companions: bool,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GITHUB_TOKEN", BOT_TOKEN)
        .env("RUST_LOG", "error")
        .env(
            "THIRDSHIFT_COMPANION",
            if companions { "on" } else { "off" },
        )
        .arg("--repo")
        .arg(sim.repo_full_name())
        .arg("--api-url")
        .arg(url)
        .arg("--host")
        .arg(host)
        .arg("--state-dir")
        .arg(state)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// An emulator with the bot as admin, no rate limit to speak of, and `latency` on every
/// request, served on a free local port.
pub async fn slow_sim(latency: std::time::Duration) -> (Sim, SimServer) {
    let sim = Sim::new(SimConfig {
        rate_limit: 1_000_000,
        ..SimConfig::default()
    });
    sim.add_user(BOT, BOT_TOKEN, Permission::Admin);
    sim.set_faults(github_emulator::Faults {
        latency: (!latency.is_zero()).then_some(latency),
        ..github_emulator::Faults::default()
    });
    let server = sim.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    (sim, server)
}
