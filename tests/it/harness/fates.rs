//! What the chaos soak does to its Runs and issues between passes: moves Runs waiting at their
//! stage gates on (`gates.rs`), killing some, and keeps each owner Run's end as its [`Fate`]; and,
//! once few Ready issues are left, puts a worked issue back in the queue as a person would, so a
//! long soak keeps starting Runs. The fault-free replay (`replay.rs`) repeats both. It checks no
//! invariant (`chaos.rs` does).

use thirdshift_reconciler::protocol::record::{ClaimState, ClaimView};

use super::*;

/// Below this many Ready issues, a pass may put a worked issue back in the queue.
const FEW_READY: usize = 5;

impl Soak<'_> {
    /// Moves Runs waiting at a gate on, each with probability `pct`: a Run that does not own its
    /// issue goes on (its `stage` will refuse it); an owner at `claimed` is killed (1 in 5) or
    /// goes on; at `working` it is killed (1 in 3) or exits, 0 or (1 in 5) 1. A Run killed alone
    /// has its command stopped one or two passes later. Every owner's end is kept as a [`Fate`].
    pub fn advance(&mut self, pct: u64) {
        let pass = self.counts.passes;
        let due: Vec<Waiting> = self
            .stops
            .iter()
            .filter(|(at, _)| *at <= pass || pct == 100)
            .map(|(_, w)| w.clone())
            .collect();
        self.stops.retain(|(at, _)| *at > pass && pct < 100);
        due.iter().for_each(|w| self.gates.stop(w));
        for w in self.gates.waiting() {
            if due.contains(&w) || self.stops.iter().any(|(_, s)| *s == w) {
                continue;
            }
            if !self.rng.chance(pct) {
                continue;
            }
            let Some(owner) = self.world.ownership(w.issue).owner else {
                self.gates.open(&w, "go");
                continue;
            };
            if owner.record.claim_id != w.claim_id {
                self.gates.open(&w, "go");
                continue;
            }
            let end = self.choose(&w, pct == 100);
            let Some(end) = end else {
                self.gates.open(&w, "go");
                continue;
            };
            if matches!(end, End::Exit(_)) && pct < 100 && self.rng.chance(25) {
                self.refuse_posts_while_it_ends(&w);
            }
            self.end_run(&w, end, &owner);
        }
    }

    /// The end of an owner Run waiting as `w`: `None` lets it go on. `settling`: no kills.
    fn choose(&mut self, w: &Waiting, settling: bool) -> Option<End> {
        let kill = if settling {
            None
        } else if w.stage == Stage::Claimed {
            self.rng.chance(20).then(|| self.kind())
        } else {
            self.rng.chance(33).then(|| self.kind())
        };
        match (kill, w.stage) {
            (Some(how), _) => Some(End::Kill(how)),
            (None, Stage::Claimed) => None,
            (None, Stage::Working) if !settling && self.rng.chance(20) => Some(End::Exit(1)),
            (None, Stage::Working) => Some(End::Exit(0)),
        }
    }

    fn kind(&mut self) -> Kill {
        match self.rng.below(3) {
            0 => Kill::Whole,
            1 => Kill::RunOnly,
            _ => Kill::Child,
        }
    }

    /// The fate "Run finished behind a burst of refusals": every comment post is answered 502
    /// from now until the Run (about to exit by itself) is gone ([`Soak::end_refusals`]), so
    /// its own end record is refused for longer than its retries last.
    fn refuse_posts_while_it_ends(&mut self, w: &Waiting) {
        const COMMENTS: &str = "/repos/{owner}/{repo}/issues/{issue_number}/comments";
        self.world.sim.fail_next("POST", COMMENTS, u32::MAX, false);
        self.refusing.push((w.issue, w.claim_id.clone(), w.run_pid));
        self.counts.refused_ends += 1;
    }

    /// Waits until every Run finishing behind refusals is gone, then lets GitHub accept posts
    /// again; counts those whose own end was refused (left to their host's observe).
    pub async fn end_refusals(&mut self) {
        for (issue, claim_id, pid) in std::mem::take(&mut self.refusing) {
            wait_until(&format!("the Run {pid} of #{issue} to end"), STEP, || {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .map_or(true, |stat| stat.contains(") Z "))
            })
            .await;
            let ended = matches!(
                self.world.ownership(issue).state(&claim_id),
                ClaimState::Ended { .. }
            );
            if !ended {
                self.counts.ends_left_to_observe += 1;
            }
        }
        self.world.sim.clear_failures();
    }

    pub(super) fn end_run(&mut self, w: &Waiting, end: End, owner: &ClaimView) {
        self.gates.apply(w, end);
        self.fates.push(Fate {
            issue: w.issue,
            host: owner.record.host.clone(),
            claim_id: w.claim_id.clone(),
            claim_comment: owner.comment_id,
            stage: w.stage,
            end,
        });
        let End::Kill(how) = end else {
            return;
        };
        if how == Kill::RunOnly {
            let later = 1 + self.rng.below(2);
            self.stops.push((self.counts.passes + later, w.clone()));
        }
        *self.counts.runs_killed.entry(how.name()).or_default() += 1;
        self.killed.push(Killed {
            issue: w.issue,
            claim_id: w.claim_id.clone(),
            host: owner.record.host.clone(),
            how,
            dead_since_pass: None,
            reconciles_since: 0,
        });
    }

    /// Once fewer than [`FEW_READY`] issues are Ready, with probability `pct`: a person puts an
    /// open issue back in the queue whose Runs all ended (labels: the hand-off label removed,
    /// `ready-for-agent` added). Kept with its last claim, for the replay.
    pub fn maybe_requeue(&mut self, pct: u64) {
        let ready = self.issues.iter().filter(|n| self.is_ready(**n)).count();
        if ready >= FEW_READY || !self.rng.chance(pct) {
            return;
        }
        let worked: Vec<(u64, u64)> = self
            .issues
            .iter()
            .filter_map(|&n| self.requeueable(n).map(|last| (n, last)))
            .collect();
        if worked.is_empty() {
            return;
        }
        let (n, last) = worked[self.rng.below(worked.len() as u64) as usize];
        requeue(self.world, n);
        self.requeues.push((n, last));
        self.counts.requeues += 1;
    }

    fn is_ready(&self, n: u64) -> bool {
        self.world.labels(n).iter().any(|l| l == READY)
    }

    /// The last claim's comment id of an open issue, not Ready nor in progress, whose Claims
    /// all ended and whose Runs are all gone.
    fn requeueable(&self, n: u64) -> Option<u64> {
        let issue = self.world.sim.issue(n)?;
        let own = self.world.ownership(n);
        let busy = issue.labels.iter().any(|l| l == READY || l == IN_PROGRESS);
        if issue.state != "open" || busy || own.active().next().is_some() {
            return None;
        }
        if own.ended.iter().any(|(c, _)| alive(c)) {
            return None;
        }
        own.ended.iter().map(|(c, _)| c.comment_id).max()
    }
}

/// An ended issue a person took over by hand: they put `in-progress` on and took `removed` off.
#[derive(Clone, Debug)]
pub struct Takeover {
    pub issue: u64,
    /// The comment id of the issue's last claim when it was taken over.
    pub after_claim: u64,
    pub removed: Vec<String>,
}

impl Soak<'_> {
    /// At most [`MAX_TAKEOVERS`] times, with probability `pct`: a person takes an open issue
    /// whose Runs all ended over by hand (`in-progress` on, the labels our end set off, as
    /// `take_over` does), right after a pass that may still have been finishing its labels.
    pub fn maybe_take_over(&mut self, pct: u64) {
        if self.takeovers.len() >= MAX_TAKEOVERS || !self.rng.chance(pct) {
            return;
        }
        let worked: Vec<(u64, u64)> = self
            .issues
            .iter()
            .filter(|n| !self.takeovers.iter().any(|t| t.issue == **n))
            .filter_map(|&n| self.requeueable(n).map(|last| (n, last)))
            .collect();
        if worked.is_empty() {
            return;
        }
        let (n, last) = worked[self.rng.below(worked.len() as u64) as usize];
        let removed = take_over(self.world, n);
        self.takeovers.push(Takeover {
            issue: n,
            after_claim: last,
            removed,
        });
        self.counts.takeovers += 1;
    }
}

/// How many issues a soak's people take over (each then leaves the soak's queue for good).
const MAX_TAKEOVERS: usize = 3;

/// A person takes issue `n` over by hand: `in-progress` on, `ready-for-human` and
/// `ready-for-agent` off. Returns the labels taken off.
pub fn take_over(world: &World, n: u64) -> Vec<String> {
    let labels = world.labels(n);
    let ours = ["ready-for-human", READY];
    let removed: Vec<String> = labels
        .iter()
        .filter(|l| ours.contains(&l.as_str()))
        .cloned()
        .collect();
    let mut keep: Vec<&str> = labels
        .iter()
        .map(String::as_str)
        .filter(|l| !ours.contains(l))
        .collect();
    keep.push(IN_PROGRESS);
    world.sim.set_labels(n, &keep);
    removed
}

/// Puts issue `n` back in the queue as a person would: hand-off label off, Ready label on.
pub fn requeue(world: &World, n: u64) {
    let labels = world.labels(n);
    let mut keep: Vec<&str> = labels
        .iter()
        .map(String::as_str)
        .filter(|l| *l != "ready-for-human")
        .collect();
    keep.push(READY);
    world.sim.set_labels(n, &keep);
}
