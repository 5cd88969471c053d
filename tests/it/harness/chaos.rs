//! The chaos soak's world (`tests/it/chaos.rs`): hosts that pick up Ready issues into real Runs, a
//! seeded chooser of what to break next (SIGKILL of a Run, of its command's session, of both, of
//! an `observe` or a `reconcile` mid-pass), and the invariants read from GitHub's state and this
//! machine's process table after every pass. It counts what it did; it asserts nothing itself:
//! the test decides what a violation costs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use thirdshift_reconciler::host::session_members;
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::{
    decode, ClaimView, Decoded, Outcome, Record, Verdict,
};

use super::*;

// The soak's bare origin; tests that also load `support` compile this file twice, harmlessly.
#[allow(clippy::duplicate_mod, dead_code)]
use crate::support::origin::Origin;

/// A small seeded PRNG (xorshift64*), so a soak is reproducible from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One Run the soak broke, and when its host first reported it dead.
#[derive(Clone, Debug)]
pub struct Killed {
    pub issue: u64,
    pub claim_id: String,
    pub host: String,
    pub how: Kill,
    pub dead_since_pass: Option<u64>,
    /// Reconcile passes completed since the dead report.
    pub reconciles_since: u64,
}

/// What the soak did and saw.
#[derive(Debug, Default)]
pub struct Counts {
    pub passes: u64,
    pub pickups: u64,
    pub runs_killed: BTreeMap<&'static str, u64>,
    pub passes_killed: u64,
    pub faults: BTreeMap<&'static str, u64>,
    pub recoveries: u64,
    pub failed_commands: u64,
    /// Worked issues put back in the queue (`fates.rs`).
    pub requeues: u64,
    pub transient_duplicates: u64,
    /// End records that say what salvage kept, those pushed, and the commits checked on origin.
    pub salvages: u64,
    pub salvages_pushed: u64,
    pub salvaged_commits: u64,
    /// Runs that finished behind a burst of refused comment posts (`fates.rs`), and those of
    /// them whose own end was refused, left to their host's observe.
    pub refused_ends: u64,
    pub ends_left_to_observe: u64,
    /// Ended issues a person took over by hand (`fates.rs`): their label changes must stand.
    pub takeovers: u64,
    /// thirdshift-shaped Commands started, killed, finished, and killed ones ended by us.
    pub standins_started: u64,
    pub standins_killed: u64,
    pub standins_finished: u64,
    pub standins_recovered: u64,
    pub violations: Vec<String>,
}

/// The person whose thirdshift runs the thirdshift-shaped Commands (not our bot: thirdshift
/// claims with its user's own `gh` login).
pub const DAY_SHIFT: &str = "day-shift";
pub const DAY_SHIFT_TOKEN: &str = "day-shift-token";

/// The config file of chaos host `host`: the soak's, with its own thirdshift logs folder.
fn host_config(world: &World, host: &str) -> PathBuf {
    world.dir.path().join(format!("chaos-{host}.yml"))
}

/// The soak: a World, its hosts, its issues, the gates its Runs wait at and what it did to them.
pub struct Soak<'w> {
    pub world: &'w World,
    pub hosts: Vec<String>,
    pub issues: Vec<u64>,
    pub config: PathBuf,
    pub gates: Gates,
    pub rng: Rng,
    pub killed: Vec<Killed>,
    /// Every owner Run's end, in the order the soak decided them.
    pub fates: Vec<Fate>,
    /// Commands of Runs killed alone, to stop at a pass.
    pub stops: Vec<(u64, Waiting)>,
    /// Issues a person put back in the queue: (issue, its last claim's comment id then).
    pub requeues: Vec<(u64, u64)>,
    pub counts: Counts,
    /// The bare origin the emulator reads branches from and Runs push to.
    pub origin: Origin,
    /// Runs finishing while every comment post is refused: (their issue, claim id, Run PID).
    pub refusing: Vec<(u64, String, u32)>,
    /// Issues a person took over by hand, after the claim they name (`fates.rs`).
    pub takeovers: Vec<Takeover>,
    /// thirdshift-shaped Commands among the Runs (`standins.rs`), and the issues they took.
    pub standins: Vec<Standin>,
    pub thirdshift_issues: BTreeSet<u64>,
}

impl<'w> Soak<'w> {
    pub fn new(world: &'w World, hosts: usize, issues: usize, seed: u64) -> Soak<'w> {
        let hosts: Vec<String> = (0..hosts).map(|i| format!("h{i}")).collect();
        let mut text = String::from("recovery:\n  on_dead: continue\n  max_continuations: 1\n");
        text.push_str("run:\n  kill_grace_secs: 1\nhosts:\n");
        for h in &hosts {
            text.push_str(&format!("  {h}:\n    capacity: 2\n"));
        }
        let config = world.dir.path().join("chaos.yml");
        std::fs::write(&config, &text).expect("config written");
        // Each host its own thirdshift logs folder, as each machine has its own
        for h in &hosts {
            let logs = logs_dir(world, h);
            let own = format!("{text}thirdshift:\n  logs_dir: {}\n", logs.display());
            std::fs::write(host_config(world, h), own).expect("config written");
        }
        world
            .sim
            .add_user(DAY_SHIFT, DAY_SHIFT_TOKEN, Permission::Write);
        let issues = (0..issues)
            .map(|i| world.ready_issue(&format!("chaos {i}")))
            .collect();
        let origin = Origin::new();
        world.sim.set_git_origin(origin.bare.clone());
        Soak {
            world,
            hosts,
            issues,
            config,
            gates: Gates::new(world.dir.path(), &origin.bare),
            rng: Rng(seed | 1),
            killed: Vec::new(),
            fates: Vec::new(),
            stops: Vec::new(),
            requeues: Vec::new(),
            counts: Counts::default(),
            origin,
            refusing: Vec::new(),
            takeovers: Vec::new(),
            standins: Vec::new(),
            thirdshift_issues: BTreeSet::new(),
        }
    }

    fn host(&mut self) -> String {
        let i = self.rng.below(self.hosts.len() as u64) as usize;
        self.hosts[i].clone()
    }

    pub fn cli(&self, host: &str) -> tokio::process::Command {
        let mut cmd = self.world.cli(host);
        if self.hosts.iter().any(|h| h == host) {
            cmd.arg("--config").arg(host_config(self.world, host));
        } else {
            cmd.arg("--config").arg(&self.config);
        }
        cmd
    }

    /// `pickup` on a random host; each Run's command waits at the gates of `gates.rs`.
    pub async fn pickup(&mut self) {
        let host = self.host();
        let script = self.gates.script();
        let out = self
            .cli(&host)
            .args(["pickup", "--", "sh", "-c", &script])
            .output()
            .await
            .expect("pickup runs");
        self.counts.pickups += 1;
        if out.status.code() != Some(0) {
            self.counts.failed_commands += 1;
        }
    }

    /// `args` on a random host, SIGKILLed after a random moment with probability `kill_pct`.
    /// Returns whether it ran to the end with exit 0.
    pub async fn pass_of(&mut self, args: &[&str], kill_pct: u64) -> bool {
        let host = if args[0] == "reconcile" {
            "reconciler".to_string()
        } else {
            self.host()
        };
        let mut child = self
            .cli(&host)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("pass starts");
        if self.rng.chance(kill_pct) {
            let after = Duration::from_millis(5 + self.rng.below(150));
            if tokio::time::timeout(after, child.wait()).await.is_err() {
                let _ = child.start_kill();
                let _ = child.wait().await;
                self.counts.passes_killed += 1;
                return false;
            }
        }
        let status = child.wait().await.expect("pass ends");
        if status.code() != Some(0) {
            self.counts.failed_commands += 1;
        }
        status.code() == Some(0)
    }

    /// Checks every invariant after a pass; `reconciled`: a reconcile pass completed in it.
    pub fn check(&mut self, reconciled: bool) {
        let pass = self.counts.passes;
        let dead = self.dead_reported();
        let ends = self.ends();
        for k in &mut self.killed {
            if ends.contains_key(&k.claim_id) {
                continue;
            }
            if k.dead_since_pass.is_none() && dead.contains(&k.claim_id) {
                k.dead_since_pass = Some(pass);
            } else if k.dead_since_pass.is_some() && reconciled {
                k.reconciles_since += 1;
            }
            if k.reconciles_since > 2 {
                let v = format!(
                    "pass {pass}: #{} claim {} ({:?}) reported dead by {} at pass {:?}, not \
                     ended after {} reconciles",
                    k.issue, k.claim_id, k.how, k.host, k.dead_since_pass, k.reconciles_since
                );
                self.counts.violations.push(v);
            }
        }
        for n in self.issues.clone() {
            self.check_issue(pass, n);
        }
        self.check_takeovers(pass);
    }

    /// No pass undoes a person's label change: a taken-over issue keeps `in-progress`, and the
    /// labels the person took off stay off.
    fn check_takeovers(&mut self, pass: u64) {
        for t in &self.takeovers {
            let labels = self.world.labels(t.issue);
            let undone = !labels.iter().any(|l| l == IN_PROGRESS)
                || t.removed.iter().any(|r| labels.contains(r));
            if undone {
                self.counts.violations.push(format!(
                    "pass {pass}: #{} a person's label change was undone: took off {:?} and put \
                     in-progress on, now {labels:?}",
                    t.issue, t.removed
                ));
            }
        }
    }

    fn check_issue(&mut self, pass: u64, n: u64) {
        let own = self.world.ownership(n);
        for (claim, end) in &own.ended {
            let by_others = matches!(end.record.outcome, Outcome::Recovered | Outcome::Continued);
            if by_others && alive(claim) {
                let how = self
                    .killed
                    .iter()
                    .find(|k| k.claim_id == claim.record.claim_id);
                self.counts.violations.push(format!(
                    "pass {pass}: #{n} claim {} ended {} while its Run lives (pid {} {:?}, its \
                     session's members {:?}, killed {:?}): {}",
                    claim.record.claim_id,
                    end.record.outcome.as_str(),
                    claim.record.pid,
                    std::fs::read_to_string(format!("/proc/{}/stat", claim.record.pid)),
                    claim
                        .record
                        .session_id
                        .map(|sid| writers(sid, &claim.record.claim_id)),
                    how.map(|k| k.how),
                    end.record.reason
                ));
            }
        }
        let working: Vec<&ClaimView> = own
            .active()
            .filter(|c| self.gates.passed_stage(n, &c.record.claim_id) && alive(c))
            .collect();
        if working.len() > 1 {
            self.counts.violations.push(format!(
                "pass {pass}: #{n} has {} live Runs past their stage: {:?}",
                working.len(),
                working
                    .iter()
                    .map(|c| &c.record.claim_id)
                    .collect::<Vec<_>>()
            ));
        }
        let dups = own
            .problems
            .iter()
            .filter(|p| format!("{}", p.kind).contains("another end record"))
            .count();
        self.counts.transient_duplicates += dups as u64;
    }

    /// Claim ids some trusted host report calls dead.
    fn dead_reported(&self) -> BTreeSet<String> {
        let mut dead = BTreeSet::new();
        for n in 1..=(self.issues.len() as u64 + 5) {
            let Some(issue) = self.world.sim.issue(n) else {
                continue;
            };
            if issue.author != BOT || !issue.labels.iter().any(|l| l == "thirdshift-registry") {
                continue;
            }
            for c in self
                .world
                .sim
                .comments(n)
                .iter()
                .filter(|c| c.author == BOT)
            {
                if let Decoded::Record(Record::HostReport(r)) = decode(&c.body) {
                    for v in r.claims {
                        if matches!(v.verdict, Verdict::Dead { .. }) {
                            dead.insert(v.claim_id);
                        }
                    }
                }
            }
        }
        dead
    }

    /// Every trusted end record, by claim id.
    pub fn ends(&self) -> BTreeMap<String, Outcome> {
        let mut out = BTreeMap::new();
        for n in &self.issues {
            for (claim, end) in self.world.ownership(*n).ended {
                out.insert(claim.record.claim_id, end.record.outcome);
            }
        }
        out
    }

    /// Checks that every commit a salvage reports pushed (its head, its salvage commit and the
    /// commits origin lacked before) is on origin's Issue branch; counts salvages and commits.
    pub fn check_salvaged(&mut self) {
        for n in self.issues.clone() {
            for (claim, end) in self.world.ownership(n).ended {
                let Some(kept) = end.record.kept else {
                    continue;
                };
                self.counts.salvages += 1;
                if !kept.pushed {
                    continue;
                }
                self.counts.salvages_pushed += 1;
                let tip = format!("refs/heads/{}", kept.branch);
                let shas = kept
                    .head
                    .iter()
                    .chain(&kept.salvage_commit)
                    .chain(&kept.commits);
                for sha in shas {
                    self.counts.salvaged_commits += 1;
                    let on_origin = std::process::Command::new("git")
                        .arg("-C")
                        .arg(&self.origin.bare)
                        .args(["merge-base", "--is-ancestor", sha, &tip])
                        .status()
                        .is_ok_and(|s| s.success());
                    if !on_origin {
                        self.counts.violations.push(format!(
                            "end: #{n} claim {}: salvaged commit {sha} not on origin's {tip}",
                            claim.record.claim_id
                        ));
                    }
                }
            }
        }
    }

    /// Tallies the faults the emulator injected, from its request log.
    pub fn count_faults(&mut self) {
        for r in self.world.sim.requests() {
            let kind = match r.status {
                502 => "502",
                429 => "429 secondary limit",
                403 => "403 secondary limit",
                0 => "dropped connection",
                _ => continue,
            };
            *self.counts.faults.entry(kind).or_default() += 1;
        }
        self.counts.recoveries = self
            .ends()
            .values()
            .filter(|o| matches!(o, Outcome::Recovered | Outcome::Continued))
            .count() as u64;
    }
}

/// Whether the claim's Run or any process of its command's session still runs here. A session
/// member counts only when it carries the claim's id in its environment, as every process of the
/// soak's commands does: over a long soak PIDs wrap, and a later Run's command can lead a new
/// session with the same number once the old one is gone.
pub fn alive(c: &ClaimView) -> bool {
    let owner = ProcessIdentity::of(c.record.pid)
        .is_some_and(|p| p.start_ticks == c.record.start_ticks && !zombie(p.pid));
    let writers = c
        .record
        .session_id
        .is_some_and(|sid| !writers(sid, &c.record.claim_id).is_empty());
    owner || writers
}

/// The live members of session `sid` that carry `claim_id` in their environment.
pub fn writers(sid: u32, claim_id: &str) -> Vec<u32> {
    let marker = format!("THIRDSHIFT_CLAIM_ID={claim_id}");
    session_members(sid)
        .into_iter()
        .filter(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            env.split(|b| *b == 0).any(|v| v == marker.as_bytes())
        })
        .collect()
}

/// Whether `pid` has exited but was not reaped yet (a killed Run whose parent is gone can stay a
/// zombie when PID 1 does not reap): it writes nothing.
fn zombie(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    matches!(state, Some('Z' | 'X' | 'x') | None)
}
