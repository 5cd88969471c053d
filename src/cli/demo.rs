//! `demo`: the whole story on the built-in emulator, with no token and no network. Two simulated
//! hosts (own names and state folders, one machine) race for an issue and one Run wins; then a
//! Run on each host works, one is killed with SIGKILL, and its companion (the small process each
//! Run leaves) ends its Claim within seconds through its host's `observe` and a reconcile pass on
//! that evidence (with companions off, the demo runs those passes itself and says so); the live
//! Run is left alone. It prints what happened, read back from the emulator, never what should
//! have. Every Run, observe and reconcile is a real child process of this binary talking HTTP to
//! the emulator. It asserts nothing: the tests do.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;

use crate::host::signal_session;
use crate::protocol::record::{decode, Decoded, Record};
use github_emulator::{Permission, Sim, SimConfig};

const TOKEN: &str = "demo-token";
const BOT: &str = "thirdshift-demo[bot]";
const READY: &str = "ready-for-agent";

/// Runs the demo; returns the exit code.
pub async fn run() -> anyhow::Result<i32> {
    let dir = std::env::temp_dir().join(format!("thirdshift-demo-{}", std::process::id()));
    let sim = Sim::new(SimConfig::default());
    sim.add_bot(BOT, TOKEN, Permission::Admin);
    let server = sim.serve("127.0.0.1:0".parse()?).await?;
    println!(
        "GitHub emulator serving {} at {}\n",
        sim.repo_full_name(),
        server.url
    );
    let demo = Demo {
        sim: &sim,
        url: &server.url,
        dir: &dir,
    };
    demo.race().await?;
    demo.recovery().await?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(crate::exit::OK)
}

struct Demo<'a> {
    sim: &'a Sim,
    url: &'a str,
    dir: &'a std::path::Path,
}

impl Demo<'_> {
    /// This binary, as host `host`, pointed at the emulator.
    fn cli(&self, host: &str) -> anyhow::Result<tokio::process::Command> {
        let exe = std::env::current_exe().context("finding this program")?;
        let mut cmd = tokio::process::Command::new(exe);
        let token = [("GITHUB_TOKEN".to_string(), TOKEN.to_string())];
        crate::github::hand_over(cmd.as_std_mut(), &token).context("handing over the token")?;
        cmd.env("THIRDSHIFT_RETRY_BASE_MS", "20")
            .env_remove("GH_TOKEN")
            .env_remove("THIRDSHIFT_CONFIG")
            .args(["--repo", &self.sim.repo_full_name(), "--api-url", self.url])
            .args(["--host", host, "--state-dir"])
            .arg(self.dir.join(host))
            .kill_on_drop(true);
        Ok(cmd)
    }

    fn spawn_run(
        &self,
        host: &str,
        issue: u64,
        script: &str,
    ) -> anyhow::Result<tokio::process::Child> {
        let mut cmd = self.cli(host)?;
        cmd.args([
            "run",
            "--issue",
            &issue.to_string(),
            "--harness",
            "demo",
            "--",
        ])
        .args(["sh", "-c", script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        cmd.spawn().context("starting a Run")
    }

    /// Runs `observe` or `reconcile` as `host` and prints its output, indented.
    async fn pass(&self, host: &str, args: &[&str]) -> anyhow::Result<()> {
        let out = self.cli(host)?.args(args).output().await?;
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            println!("   {line}");
        }
        Ok(())
    }

    async fn race(&self) -> anyhow::Result<()> {
        let issue = self
            .sim
            .create_issue(BOT, "Add retries to the uploader", "", &[READY]);
        println!(
            "1. Hosts alpha and beta race for issue #{issue}; the claim protocol lets one Run in."
        );
        let exe = std::env::current_exe()?;
        let work = format!("'{}' stage implementing && sleep 1", exe.display());
        let alpha = self.spawn_run("alpha", issue, &work)?;
        let beta = self.spawn_run("beta", issue, &work)?;
        let (a, b) = (
            alpha.wait_with_output().await?,
            beta.wait_with_output().await?,
        );
        for (host, out) in [("alpha", a), ("beta", b)] {
            let err = String::from_utf8_lossy(&out.stderr);
            let note = err.lines().last().unwrap_or("");
            println!(
                "   {host}: exit {} {}",
                out.status.code().unwrap_or(-1),
                short(note)
            );
        }
        self.show(issue);
        Ok(())
    }

    async fn recovery(&self) -> anyhow::Result<()> {
        let doomed = self
            .sim
            .create_issue(BOT, "Fix the flaky parser", "", &[READY]);
        let steady = self
            .sim
            .create_issue(BOT, "Upgrade the database", "", &[READY]);
        println!(
            "2. A Run on alpha takes #{doomed}, a Run on beta takes #{steady}; both work. Each Run \
             leaves a companion: a small process that waits for its Run to end."
        );
        let mut victim = self.spawn_run("alpha", doomed, "sleep 120")?;
        let mut survivor = self.spawn_run("beta", steady, "sleep 120")?;
        let sid = self.wait_for_session(doomed).await?;
        self.wait_for_session(steady).await?;
        self.show_claims(&[doomed, steady]);
        println!(
            "3. alpha's Run is killed outright: SIGKILL to the Run and its command's session. \
             It writes no end record; #{doomed} is in-progress with nobody on it."
        );
        victim.start_kill()?;
        victim.wait().await?;
        signal_session(sid, libc::SIGKILL);
        let killed = std::time::Instant::now();
        if self.wait_for_end(doomed, Duration::from_secs(30)).await {
            println!(
                "\n4. alpha's companion saw its Run die and ran alpha's observe (the evidence: \
                 the Run's process is gone, same PID, start time and boot) and a reconcile pass, \
                 which ended the Claim {:.1} s after the kill:\n",
                killed.elapsed().as_secs_f64()
            );
        } else {
            println!(
                "\n4. No companion ended it (THIRDSHIFT_COMPANION=off?): alpha observes its \
                 Claims and reports the evidence, and reconcile ends the Claim proven dead:"
            );
            self.pass("alpha", &["observe"]).await?;
            self.pass("alpha", &["reconcile"]).await?;
            println!();
        }
        self.show(doomed);
        println!(
            "5. Both hosts observe and a reconcile pass runs: beta's live Run is reported alive, \
             so nothing else is ended."
        );
        self.pass("alpha", &["observe"]).await?;
        self.pass("beta", &["observe"]).await?;
        self.pass("alpha", &["reconcile"]).await?;
        println!(
            "   #{steady}, the live Run's issue, keeps its Claim: labels {:?}",
            self.labels(steady)
        );
        survivor.start_kill()?;
        survivor.wait().await?;
        println!(
            "\nThe killed Run's Claim was ended on the evidence its own host recorded, never on a \
             timer, and its end record says so; the live Run kept its Claim."
        );
        Ok(())
    }

    /// Waits up to `limit` for an end record on `issue`; whether one came.
    async fn wait_for_end(&self, issue: u64, limit: Duration) -> bool {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            let ended = self
                .sim
                .comments(issue)
                .iter()
                .any(|c| matches!(decode(&c.body), Decoded::Record(Record::End(_))));
            if ended {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    /// Waits until the Run on `issue` recorded its command's session; returns the session id.
    async fn wait_for_session(&self, issue: u64) -> anyhow::Result<u32> {
        for _ in 0..500 {
            if let Some(sid) = self.claims(issue).iter().find_map(|c| c.session_id) {
                return Ok(sid);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        anyhow::bail!("the Run on #{issue} did not start")
    }

    fn claims(&self, issue: u64) -> Vec<crate::protocol::record::ClaimRecord> {
        self.sim
            .comments(issue)
            .into_iter()
            .filter_map(|c| match decode(&c.body) {
                Decoded::Record(Record::Claim(r)) => Some(r),
                _ => None,
            })
            .collect()
    }

    fn show_claims(&self, issues: &[u64]) {
        for &issue in issues {
            for c in self.claims(issue) {
                println!(
                    "   #{issue}: claim {} on host {} (pid {}, session {}), stage {}",
                    c.claim_id,
                    c.host,
                    c.pid,
                    c.session_id.unwrap_or(0),
                    c.stage
                );
            }
        }
        println!();
    }

    fn labels(&self, issue: u64) -> Vec<String> {
        self.sim.issue(issue).map(|i| i.labels).unwrap_or_default()
    }

    fn show(&self, issue: u64) {
        println!("   issue #{issue}:");
        for c in self.sim.comments(issue) {
            let first = c.body.lines().next().unwrap_or("");
            println!("     comment {} by @{}: {}", c.id, c.author, short(first));
            if let Decoded::Record(Record::End(e)) = decode(&c.body) {
                for line in wrapped(&format!("evidence: {}", e.reason), 92) {
                    println!("       {line}");
                }
            }
        }
        println!("     labels now: {:?}\n", self.labels(issue));
    }
}

/// `s` in lines of at most `width` characters, broken only between words.
fn wrapped(s: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// `s` on one line, at most 110 characters, cut only between words (`…` marks a cut).
fn short(s: &str) -> String {
    let lines = wrapped(s, 110);
    match lines.as_slice() {
        [one] => one.clone(),
        [first, ..] => format!("{first} …"),
        [] => String::new(),
    }
}
