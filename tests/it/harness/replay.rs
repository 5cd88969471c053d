//! The chaos soak's fault-free replay: the same Runs (by issue and host, in the order their
//! claims were posted) and the same issues put back in the queue, on a fresh emulator with no
//! fault, no stale list and no pass killed, each stopped at the same gate the same way
//! (`gates.rs`), one at a time, its issue settled by `observe --reconcile` on its host and a
//! `reconcile` before the next. And each issue's final state and history in words, so the soak's
//! and the replay's can be compared. An issue whose replayed Run cannot take the Claim its soak
//! Run took has diverged: the replay says why and plays nothing more on it. It asserts nothing
//! about the soak; it panics only when the replay itself cannot be driven (a Run that took its
//! Claim never reaches its gate).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use thirdshift_reconciler::protocol::record::{ClaimView, EndView};

use super::*;

impl Soak<'_> {
    /// Replays `fates` and `requeues` (another soak's) on this soak's fresh World, one Run at a
    /// time, in the order of the claims they follow. Returns the issues that diverged: a Run the
    /// soak let take its Claim could not take it here, with why.
    pub async fn replay(
        &mut self,
        fates: &[Fate],
        requeues: &[(u64, u64)],
        takeovers: &[Takeover],
    ) -> BTreeMap<u64, String> {
        // (after this claim comment, what, issue): 0 a Run, 1 a requeue, 2 a takeover.
        let mut events: Vec<(u64, u8, Option<&Fate>, u64)> = fates
            .iter()
            .map(|f| (f.claim_comment, 0, Some(f), f.issue))
            .chain(requeues.iter().map(|&(n, after)| (after, 1, None, n)))
            .chain(takeovers.iter().map(|t| (t.after_claim, 2, None, t.issue)))
            .collect();
        // A requeue or takeover follows the claim it names, before any later claim.
        events.sort_by_key(|&(at, what, _, _)| (at, what));
        let mut diverged = BTreeMap::new();
        for (_, what, fate, n) in events {
            if diverged.contains_key(&n) {
                continue;
            }
            if let Some(f) = fate {
                if let Err(why) = self.replay_one(f).await {
                    diverged.insert(n, why);
                }
                continue;
            }
            let ended = self.world.ownership(n).ended;
            let last = ended.iter().map(|(c, _)| c.comment_id).max().unwrap_or(0);
            if what == 1 {
                requeue(self.world, n);
                self.requeues.push((n, last));
            } else {
                let removed = take_over(self.world, n);
                self.takeovers.push(Takeover {
                    issue: n,
                    after_claim: last,
                    removed,
                });
            }
        }
        diverged
    }

    /// Replays one Run; `Err` says why it could not take the Claim its soak Run took.
    async fn replay_one(&mut self, f: &Fate) -> Result<(), String> {
        let script = self.gates.script();
        let log = self
            .world
            .dir
            .path()
            .join(format!("replay-{}.log", f.claim_id));
        let err = std::fs::File::create(&log).expect("log created");
        let mut run = self
            .cli(&f.host)
            .args(["run", "--issue", &f.issue.to_string(), "--", "sh", "-c"])
            .arg(&script)
            .stdout(std::process::Stdio::null())
            .stderr(err)
            .spawn()
            .expect("run starts");
        let Some(mut w) = self.wait_at(&mut run, f.issue, Stage::Claimed).await else {
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            let said = said.lines().last().unwrap_or_default().to_string();
            return Err(format!(
                "the soak's Run {} on {} took #{} ({:?}, {:?}), the replay's could not: {said}",
                f.claim_id, f.host, f.issue, f.stage, f.end
            ));
        };
        if f.stage == Stage::Working {
            self.gates.open(&w, "go");
            let at = self.wait_at(&mut run, f.issue, Stage::Working).await;
            w = at
                .unwrap_or_else(|| panic!("replay: the Run on #{} exited before working", f.issue));
        }
        let owner = self.world.ownership(f.issue).owner;
        let owner = owner.filter(|o| o.record.claim_id == w.claim_id);
        let owner = owner.unwrap_or_else(|| panic!("replay: #{} not owned by its Run", f.issue));
        self.end_run(&w, f.end, &owner);
        if f.end == End::Kill(Kill::RunOnly) {
            self.stops.clear();
            self.gates.stop(&w);
        }
        let _ = run.wait().await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while !writers(w.sid, &w.claim_id).is_empty() {
            assert!(
                Instant::now() < deadline,
                "replay: #{} session lives",
                f.issue
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for _ in 0..5 {
            if self.ends().contains_key(&w.claim_id) {
                return Ok(());
            }
            self.exec_ok(&f.host, &["observe", "--reconcile"]).await;
            self.exec_ok("reconciler", &["reconcile"]).await;
        }
        panic!("replay: #{} claim {} never ended", f.issue, w.claim_id);
    }

    /// Waits until the one Run of `issue` waits at `stage`; `None` if its Run exits first.
    async fn wait_at(
        &self,
        run: &mut tokio::process::Child,
        issue: u64,
        stage: Stage,
    ) -> Option<Waiting> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut found = self.gates.waiting().into_iter();
            if let Some(w) = found.find(|w| w.issue == issue && w.stage == stage) {
                return Some(w);
            }
            if let Ok(Some(_)) = run.try_wait() {
                return None;
            }
            assert!(
                Instant::now() < deadline,
                "replay: #{issue} never {stage:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Runs `args` on `host` with the soak's config, to exit 0.
    pub async fn exec_ok(&self, host: &str, args: &[&str]) {
        let out = self.cli(host).args(args).output().await.expect("runs");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }

    /// Each issue's final state in words: open or closed, labels, the ends of the Runs in `fates`
    /// (their claim ids named `run1`, `run2`… in claim order), and the Issue branch on origin
    /// (commit subjects and files). Timing-specific details (ids, times, reasons) are left out.
    pub fn end_states(&self, fates: &[Fate]) -> BTreeMap<u64, String> {
        let mut names = run_names(fates);
        let mut out = BTreeMap::new();
        for &n in &self.issues {
            out.insert(n, self.end_state(n, &names.remove(&n).unwrap_or_default()));
        }
        out
    }

    fn end_state(&self, n: u64, ids: &[String]) -> String {
        let issue = self.world.sim.issue(n).expect("issue exists");
        let mut labels = issue.labels.clone();
        labels.sort();
        let ends: Vec<String> = self
            .world
            .ownership(n)
            .ended
            .iter()
            .filter_map(|(claim, end)| {
                let k = ids.iter().position(|id| *id == claim.record.claim_id)?;
                Some(format!("run{} {}", k + 1, end_in_words(claim, end)))
            })
            .collect();
        let branch = format!("refs/heads/issue-{n}");
        let log = self.origin_git(&["log", "--reverse", "--format=%s", &branch]);
        let files = self.origin_git(&["ls-tree", "-r", "--name-only", &branch]);
        let name = |text: &str| {
            let mut text = text.to_string();
            for (k, id) in ids.iter().enumerate() {
                text = text.replace(id.as_str(), &format!("run{}", k + 1));
            }
            text
        };
        let mut files: Vec<String> = files.lines().map(name).collect();
        files.sort();
        format!(
            "{} {labels:?} | {} | commits: {} | files: {}",
            issue.state,
            ends.join(", "),
            name(&log.replace('\n', "; ")),
            files.join(" ")
        )
    }

    /// Issue `n`'s every ended claim in comment order, in words with the labels it left (Runs of
    /// `fates` named as in [`Soak::end_states`], others `lost`), and where `requeues` put it
    /// back in the queue: what a person reads to see where a soak and its replay parted.
    pub fn history(&self, n: u64, fates: &[Fate], requeues: &[(u64, u64)]) -> String {
        let ids = run_names(fates).remove(&n).unwrap_or_default();
        let mut own = self.world.ownership(n).ended;
        own.sort_by_key(|(c, _)| c.comment_id);
        let mut out = Vec::new();
        for (claim, end) in &own {
            let k = ids.iter().position(|id| *id == claim.record.claim_id);
            let name = k.map_or("lost".to_string(), |k| format!("run{}", k + 1));
            let after = end.record.labels_after.clone().unwrap_or_default();
            out.push(format!("{name} {} -> {after:?}", end_in_words(claim, end)));
            let again = requeues
                .iter()
                .any(|&(m, at)| m == n && at == claim.comment_id);
            if again {
                out.push("requeued".to_string());
            }
            if self
                .takeovers
                .iter()
                .any(|t| t.issue == n && t.after_claim == claim.comment_id)
            {
                out.push("taken over by a person".to_string());
            }
        }
        out.join("; ")
    }

    /// Issue `n`'s comments and label changes in the order they were made, one line each: what
    /// a divergence prints so that the soak's run of events can be read after the fact.
    pub fn timeline(&self, n: u64) -> String {
        use thirdshift_reconciler::protocol::record::{decode, Decoded, Record};
        let comments = self.world.sim.comments(n).into_iter().map(|c| {
            let what = match decode(&c.body) {
                Decoded::Record(Record::Claim(r)) => format!("claim {} by {}", r.claim_id, r.host),
                Decoded::Record(Record::End(e)) => {
                    format!("end {} {}", e.claim_id, e.outcome.as_str())
                }
                Decoded::Record(r) => format!("{:?} record", r.kind()),
                _ => "comment".to_string(),
            };
            (c.created_at, format!("#{} {} {what}", c.id, c.author))
        });
        let mut all: Vec<_> = comments.chain(self.world.sim.label_history(n)).collect();
        all.sort_by_key(|(at, _)| *at);
        let lines = all
            .iter()
            .map(|(at, what)| format!("    {} {what}", at.format("%H:%M:%S%.3f")));
        lines.collect::<Vec<_>>().join("\n")
    }

    /// git in the bare origin; empty when it fails (no such branch).
    fn origin_git(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.origin.bare)
            .args(args)
            .output()
            .expect("git runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Claims of the soak no fate names (Runs that lost a race), by outcome.
    pub fn unreplayed(&self) -> BTreeMap<&'static str, u64> {
        let mut out = BTreeMap::new();
        for (id, outcome) in self.ends() {
            if !self.fates.iter().any(|f| f.claim_id == id) {
                *out.entry(outcome.as_str()).or_default() += 1;
            }
        }
        out
    }
}

/// Each issue's Runs in `fates`, by claim id in claim order.
fn run_names(fates: &[Fate]) -> BTreeMap<u64, Vec<String>> {
    let mut names: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    for f in fates {
        names
            .entry(f.issue)
            .or_default()
            .push((f.claim_comment, f.claim_id.clone()));
    }
    names
        .into_iter()
        .map(|(n, mut runs)| {
            runs.sort();
            (n, runs.into_iter().map(|(_, id)| id).collect())
        })
        .collect()
}

/// One ended claim in words: its host, its outcome and what its host kept.
fn end_in_words(claim: &ClaimView, end: &EndView) -> String {
    let kept = end.record.kept.as_ref().map(|s| {
        let commit = if s.salvage_commit.is_some() {
            " +commit"
        } else {
            ""
        };
        let (pushed, n, dirty) = (s.pushed, s.commits.len(), s.dirty_files);
        format!(" kept(pushed {pushed}, {n} commits, {dirty} dirty{commit})")
    });
    let outcome = end.record.outcome.as_str();
    format!(
        "{} {outcome}{}",
        claim.record.host,
        kept.unwrap_or_default()
    )
}
