//! The chaos soak: 3 simulated hosts, 30 Ready issues, real Runs started by `pickup`, and for
//! hundreds of passes random SIGKILLs of Runs, of their commands' sessions, of both, and of
//! `observe --reconcile` and `reconcile` mid-pass, while the emulator answers 502s (some after
//! applying a write), secondary limits (429 and 403), drops connections and serves stale comment lists.
//! After every pass and at the end the invariants of issue 10 are checked (see
//! docs/reliability.md); the counts are printed. Bounded by count, loopback only.
//!
//! Runs are stopped at stages, not at moments (`harness/gates.rs`), so the final state is
//! compared twice: with what the kills alone decide (a Run killed is recovered, a Run whose
//! command was killed failed, a Run left alone done or failed), and issue by issue with a
//! fault-free replay of the same Runs stopped the same way (`harness/replay.rs`). Some Runs
//! finish while GitHub refuses every comment post for longer than their retries (`fates.rs`):
//! they must still end with their own outcome (`done` or `failed`), never `recovered`. A person
//! takes a few ended issues over by hand (`in-progress` on, our labels off): no pass may undo it.
//! thirdshift-shaped Commands (`harness/standins.rs`) take some Ready issues among our Runs and
//! are killed or finish: none is ended while it lives or once it finished, and every killed one
//! is ended once, recovered (those issues are left out of the replay, which has no thirdshift).
//!
//! Profiles: the short one (default) runs `CHAOS_PASSES` = 200 passes; a long one is
//! `CHAOS_PASSES=2000 CHAOS_SEED=7 cargo test --release --test it chaos:: -- --nocapture`.

use crate::harness;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use github_emulator::{Faults, SimConfig};
use harness::*;
use thirdshift_reconciler::protocol::record::Outcome;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(default)
}

fn faults() -> Faults {
    Faults {
        server_error_rate: 0.04,
        applied_before_error: 0.5,
        rate_limited_rate: 0.004,
        secondary_as_403: 0.5,
        dropped_rate: 0.02,
        stale_list_reads: Some(Duration::from_millis(200)),
        ..Faults::default()
    }
}

/// An emulator with a budget no soak exhausts: the soak measures safety, benches/ measure
/// request cost. `companions`: whether its Runs leave their companion, as Runs do outside tests.
async fn world(seed: u64, companions: bool) -> World {
    let world = World::with_config(SimConfig {
        rate_limit: 1_000_000,
        seed,
        ..SimConfig::default()
    })
    .await;
    World {
        companions,
        ..world
    }
}

/// One pass: maybe a pickup, maybe a kill, one host's `observe --reconcile` and a `reconcile`,
/// each maybe killed mid-pass. Returns whether a reconcile completed.
async fn pass(soak: &mut Soak<'_>) -> bool {
    if soak.rng.chance(35) {
        soak.pickup().await;
    }
    soak.advance(40);
    soak.end_refusals().await;
    soak.maybe_requeue(20);
    soak.maybe_take_over(10);
    soak.maybe_start_standin(8);
    soak.move_standins(15);
    let a = soak.pass_of(&["observe", "--reconcile"], 15).await;
    let b = soak.pass_of(&["reconcile"], 15).await;
    a || b
}

/// Lets every Run end (every gate opened, no more kills), then two passes per host without
/// faults or kills.
async fn settle(soak: &mut Soak<'_>) {
    soak.world.sim.set_faults(Faults::default());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        soak.advance(100);
        let busy = soak
            .issues
            .iter()
            .any(|n| soak.world.ownership(*n).active().any(alive));
        if !busy && soak.gates.waiting().is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "Runs still alive after 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    soak.kill_standins();
    for _ in 0..2 {
        for host in soak.hosts.clone() {
            soak.exec_ok(&host, &["observe", "--reconcile"]).await;
        }
        soak.exec_ok("reconciler", &["reconcile"]).await;
    }
}

/// The same Runs stopped the same way, replayed one at a time without faults on a fresh
/// emulator: every issue must end as it ended in the soak, and every Run the soak let take its
/// Claim must take it in the replay too. Returns the replay's duration.
async fn compare_with_replay(soak: &mut Soak<'_>, seed: u64) -> Duration {
    let started = Instant::now();
    let world = world(seed, false).await;
    let mut again = Soak::new(&world, soak.hosts.len(), soak.issues.len(), seed);
    let diverged = again
        .replay(&soak.fates, &soak.requeues, &soak.takeovers)
        .await;
    let (soaked, replayed) = (soak.end_states(&soak.fates), again.end_states(&again.fates));
    for (n, state) in &soaked {
        // An issue a thirdshift-shaped Command took has no replay: thirdshift is not replayed
        if soak.thirdshift_issues.contains(n) {
            continue;
        }
        let history = || {
            let theirs = again.history(*n, &again.fates, &again.requeues);
            format!(
                "\n  soak's history:   {}\n  replay's history: {theirs}",
                soak.history(*n, &soak.fates, &soak.requeues)
            )
        };
        let differs = if let Some(why) = diverged.get(n) {
            format!("#{n} diverged in the fault-free replay: {why}")
        } else if replayed.get(n) != Some(state) {
            let theirs = replayed.get(n).map_or("-", |s| s.as_str());
            format!(
                "#{n} differs from the fault-free replay:\n  soak:   {state}\n  replay: {theirs}"
            )
        } else {
            continue;
        };
        let line = format!(
            "end: {differs}{}\n  soak's timeline:\n{}",
            history(),
            soak.timeline(*n)
        );
        soak.counts.violations.push(line);
    }
    started.elapsed()
}

/// Whether the issue's last end is a dead thirdshift Command's that kept its Claim for people
/// (its work was on origin: `in-progress` and `agent-failed`, as thirdshift's own Failed run).
fn left_for_people(own: &thirdshift_reconciler::protocol::record::Ownership) -> bool {
    let last_ours = own
        .ended
        .iter()
        .map(|(_, e)| e.comment_id)
        .max()
        .unwrap_or(0);
    own.adopted_ends
        .iter()
        .max_by_key(|e| e.comment_id)
        .filter(|e| e.comment_id > last_ours)
        .and_then(|e| e.record.labels_after.as_ref())
        .is_some_and(|after| after.iter().any(|l| l == IN_PROGRESS))
}

/// Then, at the end: no issue stuck or lost, one end per claim, outcomes as the kills decide.
fn final_state(soak: &mut Soak<'_>) {
    let kills: BTreeMap<String, Kill> = soak
        .killed
        .iter()
        .map(|k| (k.claim_id.clone(), k.how))
        .collect();
    for n in soak.issues.clone() {
        let own = soak.world.ownership(n);
        let labels = soak.world.labels(n);
        let taken_over = soak.takeovers.iter().any(|t| t.issue == n);
        let claimed =
            labels.iter().any(|l| l == IN_PROGRESS) && !taken_over && !left_for_people(&own);
        if own.owner.is_some() || claimed {
            let timeline = soak.timeline(n);
            let v = &mut soak.counts.violations;
            v.push(format!(
                "end: #{n} still claimed: {labels:?}; timeline:\n{timeline}"
            ));
        }
        let v = &mut soak.counts.violations;
        let stray = own.problems.iter().map(|p| p.to_string());
        v.extend(stray.map(|p| format!("end: #{n}: {p}")));
        for (claim, end) in &own.ended {
            let id = &claim.record.claim_id;
            let outcome = end.record.outcome;
            let expected: &[Outcome] = match kills.get(id) {
                Some(Kill::Whole | Kill::RunOnly) => &[Outcome::Recovered, Outcome::Continued],
                Some(Kill::Child) => &[Outcome::Failed],
                None => &[Outcome::Done, Outcome::Failed],
            };
            let also = [Outcome::Withdrawn, Outcome::Superseded];
            if !expected.contains(&outcome) && !also.contains(&outcome) {
                v.push(format!(
                    "end: #{n} claim {id} ended {} after {:?}",
                    outcome.as_str(),
                    kills.get(id)
                ));
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chaos_soak_keeps_every_invariant_through_kills_and_faults() {
    let c = soak(env_u64("CHAOS_PASSES", 200), false).await;
    // And the soak did what it claims: Runs and passes were killed, faults injected, Runs
    // recovered
    assert!(
        c.runs_killed.values().sum::<u64>() >= 5,
        "{:?}",
        c.runs_killed
    );
    assert!(c.passes_killed >= 5 && c.recoveries >= 2, "{c:?}");
    assert!(c.faults.len() == 4, "{:?}", c.faults);
    assert!(c.salvages_pushed >= 1 && c.salvaged_commits >= 2, "{c:?}");
    assert!(c.ends_left_to_observe >= 1 && c.takeovers >= 1, "{c:?}");
    assert!(c.standins_killed >= 1 && c.standins_finished >= 1, "{c:?}");
}

/// The same soak with every Run's companion on, as outside tests: companions end killed Runs'
/// Claims between the passes, concurrently with them, and every invariant still holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chaos_soak_with_companions_keeps_every_invariant() {
    let c = soak(env_u64("CHAOS_COMPANION_PASSES", 100), true).await;
    assert!(
        c.runs_killed.values().sum::<u64>() >= 3 && c.recoveries >= 2,
        "{c:?}"
    );
    assert!(c.faults.len() == 4, "{:?}", c.faults);
}

/// Given 3 hosts, 30 Ready issues and GitHub failing, limiting, dropping and serving stale
/// lists, when `passes` passes run with Runs and passes killed at random, then every invariant
/// holds after every pass, at the end and against a fault-free replay. Returns the counts.
async fn soak(passes: u64, companions: bool) -> Counts {
    let seed = env_u64("CHAOS_SEED", 10);
    let started = Instant::now();
    let world = world(seed, companions).await;
    let mut soak = Soak::new(&world, 3, 30, seed);
    world.sim.set_faults(faults());
    for _ in 0..passes {
        let reconciled = pass(&mut soak).await;
        soak.counts.passes += 1;
        soak.check(reconciled);
        soak.check_standins(false);
    }
    settle(&mut soak).await;
    soak.check(true);
    soak.check_standins(true);
    final_state(&mut soak);
    soak.check_salvaged();
    soak.count_faults();
    let replay_took = compare_with_replay(&mut soak, seed).await;
    let c = &soak.counts;
    println!(
        "chaos seed {seed} (companions {companions}): {} passes in {:.0?}, {} pickups, Runs \
         started {} (owners {}, lost races {:?}), kills {:?}, requeued {}, passes killed {}, \
         faults {:?}, recoveries {}, commands failed under faults {}, transient duplicate ends \
         {}, salvages {} (pushed {}, commits on origin checked {}), finished behind refusals {} \
         (own end refused {}), taken over by a person {} (labels kept), thirdshift-shaped \
         Commands {} (killed {}, finished {}, killed ones recovered {}), fault-free replay \
         {:.0?}, violations {}",
        c.passes,
        started.elapsed(),
        c.pickups,
        soak.ends().len(),
        soak.fates.len(),
        soak.unreplayed(),
        c.runs_killed,
        c.requeues,
        c.passes_killed,
        c.faults,
        c.recoveries,
        c.failed_commands,
        c.transient_duplicates,
        c.salvages,
        c.salvages_pushed,
        c.salvaged_commits,
        c.refused_ends,
        c.ends_left_to_observe,
        c.takeovers,
        c.standins_started,
        c.standins_killed,
        c.standins_finished,
        c.standins_recovered,
        replay_took,
        c.violations.len()
    );
    assert!(
        c.violations.is_empty(),
        "violations:\n{}",
        c.violations.join("\n")
    );
    soak.counts
}
