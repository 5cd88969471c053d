//! thirdshift-shaped Commands among the chaos soak's Runs (`tests/it/support/standins/
//! thirdshift-command`): started on a Ready issue of a random host as thirdshift claims one (its
//! record in the host's thirdshift logs folder, `in-progress` in place of `ready-for-agent`), and
//! then killed outright or finished as a delivered run. The invariants on them: no end record for
//! a Command whose process lives; a finished one is never ended by us; every killed one is ended
//! exactly once, recovered, and its issue leaves `in-progress`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::Outcome;

use super::*;

/// How a thirdshift-shaped Command ended, if it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandinEnd {
    Running,
    Killed,
    Finished,
}

/// One thirdshift-shaped Command the soak started.
#[derive(Debug)]
pub struct Standin {
    pub issue: u64,
    pub host: String,
    pub process: ProcessIdentity,
    pub child: std::process::Child,
    /// Its record, relative to the host's logs folder (what an end record's evidence names).
    pub record: String,
    pub finish: PathBuf,
    pub end: StandinEnd,
}

/// The thirdshift logs folder of chaos host `host`.
pub fn logs_dir(world: &World, host: &str) -> PathBuf {
    world.dir.path().join(format!("thirdshift-logs-{host}"))
}

impl Soak<'_> {
    /// With probability `pct`: a thirdshift-shaped Command on the lowest Ready issue no Run of
    /// ours has waiting at a gate, on a random host; returns once it has claimed.
    pub fn maybe_start_standin(&mut self, pct: u64) {
        if !self.rng.chance(pct)
            || self
                .standins
                .iter()
                .filter(|s| s.end == StandinEnd::Running)
                .count()
                >= 2
        {
            return;
        }
        let busy: BTreeSet<u64> = self.gates.waiting().iter().map(|w| w.issue).collect();
        let ready = self.issues.iter().copied().find(|n| {
            let labels = self.world.labels(*n);
            labels.iter().any(|l| l == READY)
                && !labels.iter().any(|l| l == IN_PROGRESS)
                && !busy.contains(n)
                && self.world.ownership(*n).active().next().is_none()
        });
        let Some(issue) = ready else {
            return;
        };
        let host = self.hosts[self.rng.below(self.hosts.len() as u64) as usize].clone();
        let standin = start(self.world, &host, issue, self.standins.len());
        self.thirdshift_issues.insert(issue);
        self.counts.standins_started += 1;
        self.standins.push(standin);
    }

    /// Each running Command, with probability `pct`: killed outright or finished, two kills for
    /// each finish in turn.
    pub fn move_standins(&mut self, pct: u64) {
        for i in 0..self.standins.len() {
            if self.standins[i].end != StandinEnd::Running || !self.rng.chance(pct) {
                continue;
            }
            // Two kills for each finish, in turn: both fates in every soak, however few moves
            let c = &self.counts;
            let kill = c.standins_killed < 2 * c.standins_finished + 1;
            let s = &mut self.standins[i];
            if kill {
                let _ = s.child.kill();
                let _ = s.child.wait();
                s.end = StandinEnd::Killed;
                self.counts.standins_killed += 1;
            } else {
                std::fs::write(&s.finish, "").unwrap();
                let status = s.child.wait().unwrap();
                assert!(
                    status.success(),
                    "a thirdshift-shaped Command failed to finish"
                );
                s.end = StandinEnd::Finished;
                self.counts.standins_finished += 1;
            }
        }
    }

    /// Settling: every Command still running is killed.
    pub fn kill_standins(&mut self) {
        for s in self
            .standins
            .iter_mut()
            .filter(|s| s.end == StandinEnd::Running)
        {
            let _ = s.child.kill();
            let _ = s.child.wait();
            s.end = StandinEnd::Killed;
            self.counts.standins_killed += 1;
        }
    }

    /// After every pass: no Command ended while its process lives, no finished one ended.
    pub fn check_standins(&mut self, at_end: bool) {
        let pass = self.counts.passes;
        let mut found = Vec::new();
        for s in &self.standins {
            let ends: Vec<_> = self
                .world
                .ownership(s.issue)
                .adopted_ends
                .into_iter()
                .filter(|e| {
                    e.record
                        .run
                        .thirdshift()
                        .is_some_and(|a| a.record == s.record && a.pid == s.process.pid)
                })
                .collect();
            let v = &mut found;
            match s.end {
                StandinEnd::Running | StandinEnd::Finished if !ends.is_empty() => v.push(format!(
                    "pass {pass}: #{} thirdshift Command {} ({:?}) was ended: {}",
                    s.issue, s.record, s.end, ends[0].record.reason
                )),
                StandinEnd::Killed if at_end => {
                    let outcomes: Vec<Outcome> = ends.iter().map(|e| e.record.outcome).collect();
                    if outcomes != [Outcome::Recovered] {
                        v.push(format!(
                            "end: #{} killed thirdshift Command {} on {} ended {outcomes:?}; \
                             labels {:?}; timeline:\n{}",
                            s.issue,
                            s.record,
                            s.host,
                            self.world.labels(s.issue),
                            self.timeline(s.issue)
                        ));
                    }
                }
                _ => {}
            }
        }
        self.counts.violations.extend(found);
        if at_end {
            self.counts.standins_recovered = self
                .standins
                .iter()
                .filter(|s| s.end == StandinEnd::Killed)
                .count() as u64;
        }
    }
}

/// Starts the stand-in on `issue` for `host`, and waits until it has claimed.
fn start(world: &World, host: &str, issue: u64, n: usize) -> Standin {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/standins/thirdshift-command");
    let logs = logs_dir(world, host);
    let finish = world.dir.path().join(format!("standin-{n}.finish"));
    let mut child = std::process::Command::new(script)
        .arg(&logs)
        .arg(world.sim.repo_full_name())
        .arg(issue.to_string())
        .arg(&world.server.url)
        .arg(DAY_SHIFT_TOKEN)
        .arg(&finish)
        .stdout(Stdio::piped())
        .spawn()
        .expect("the thirdshift-shaped Command starts");
    let what = format!("the thirdshift-shaped Command on #{issue} to claim");
    let line = super::first_line_within(&mut child, super::STEP, &what);
    let path = line.trim().strip_prefix("claimed ").unwrap_or_else(|| {
        panic!("the thirdshift-shaped Command on #{issue} did not claim: {line:?}")
    });
    let record = Path::new(path)
        .strip_prefix(&logs)
        .unwrap()
        .display()
        .to_string();
    Standin {
        issue,
        host: host.to_string(),
        process: ProcessIdentity::of(child.id()).expect("it runs"),
        child,
        record,
        finish,
        end: StandinEnd::Running,
    }
}
