//! Claims under contention: many claimants race for one Ready issue and exactly one wins, with
//! or without GitHub failing under them; the ownership rule ignores strangers' records; an issue
//! taken off the queue while a claim is being posted is withdrawn from.

use crate::harness;

use github_emulator::Faults;
use harness::*;
use thirdshift_reconciler::protocol::record::{Outcome, Record};
use thirdshift_reconciler::text::ToComment;

/// Then: exactly one winner whose claim owns the issue, the rest lost with exit 3.
fn assert_one_owner(world: &World, issue: u64, results: &[(String, std::process::Output)]) {
    let winners: Vec<_> = results
        .iter()
        .filter(|(_, o)| o.status.code() == Some(0))
        .collect();
    let losers = results
        .iter()
        .filter(|(_, o)| o.status.code() == Some(3))
        .count();
    let others: Vec<_> = results
        .iter()
        .filter(|(_, o)| !matches!(o.status.code(), Some(0) | Some(3)))
        .map(|(h, o)| format!("{h}: {:?} {}", o.status, stderr(o)))
        .collect();
    assert!(
        others.is_empty(),
        "unexpected exits on #{issue}: {others:#?}"
    );
    assert_eq!(winners.len(), 1, "winners on #{issue}");
    assert_eq!(losers, results.len() - 1);
    let own = world.ownership(issue);
    let owner = own.owner.as_ref().expect("an owner");
    assert_eq!(
        owner.record.claim_id,
        stdout(&winners[0].1),
        "the winner owns it"
    );
    assert_eq!(owner.record.host, winners[0].0);
    assert!(
        own.superseded.is_empty(),
        "later claims withdrew: {:?}",
        own.superseded
    );
    let labels = world.labels(issue);
    assert_eq!(labels.iter().filter(|l| *l == IN_PROGRESS).count(), 1);
    assert!(
        !labels.contains(&READY.to_string()),
        "ready-for-agent removed"
    );
}

/// Then: no claimant wrote its claim or end record twice.
fn assert_no_duplicates(world: &World, issue: u64) {
    let mut claims = std::collections::HashMap::<String, usize>::new();
    let mut ends = std::collections::HashMap::<String, usize>::new();
    for record in world.records(issue) {
        match record {
            Record::Claim(c) => *claims.entry(c.host).or_default() += 1,
            Record::End(e) => *ends.entry(e.claim_id).or_default() += 1,
            _ => {}
        }
    }
    assert!(
        claims.values().all(|n| *n == 1),
        "claims per host: {claims:?}"
    );
    assert!(ends.values().all(|n| *n == 1), "ends per claim: {ends:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_claims_leave_exactly_one_owner_twenty_times() {
    let world = World::new().await;
    for round in 0..20 {
        // Given a Ready issue
        let issue = world.ready_issue(&format!("race {round}"));
        // When eight hosts claim it at once
        let results = world.race_claims(issue, 8).await;
        // Then one wins, seven lose, and in-progress was set once
        assert_one_owner(&world, issue, &results);
        assert_eq!(
            world.label_posts(issue),
            1,
            "in-progress set once on #{issue}"
        );
        assert_no_duplicates(&world, issue);
        let withdrawn = world
            .records(issue)
            .iter()
            .filter(|r| matches!(r, Record::End(e) if e.outcome == Outcome::Withdrawn))
            .count();
        let posted = world
            .records(issue)
            .iter()
            .filter(|r| matches!(r, Record::Claim(_)))
            .count();
        assert_eq!(withdrawn, posted - 1, "every losing poster withdrew");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_race_under_thirty_percent_502s_still_has_one_owner_and_no_duplicates() {
    let world = World::new().await;
    // Given GitHub answering 30% of requests with 502, half of the failed writes applied anyway
    world.sim.set_faults(Faults {
        server_error_rate: 0.3,
        applied_before_error: 0.5,
        ..Faults::default()
    });
    for round in 0..5 {
        let issue = world.ready_issue(&format!("flaky race {round}"));
        // When eight hosts claim it at once
        let results = world.race_claims(issue, 8).await;
        // Then there is still exactly one owner and nobody posted a record twice
        assert_one_owner(&world, issue, &results);
        assert_no_duplicates(&world, issue);
    }
    let faulted = world
        .sim
        .requests()
        .iter()
        .filter(|r| r.status == 502)
        .count();
    assert!(faulted > 20, "faults were injected ({faulted})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_posted_again_after_a_lost_reply_leaves_one_copy_even_when_lists_are_stale() {
    let world = World::new().await;
    // Given 30% of requests answered 502 (half of the failed writes applied anyway), and comment
    // lists that leave a new comment out for up to 300 ms, so the check after an unknown outcome
    // can miss a post that landed
    world.sim.set_faults(Faults {
        server_error_rate: 0.3,
        applied_before_error: 0.5,
        stale_list_reads: Some(std::time::Duration::from_millis(300)),
        ..Faults::default()
    });
    for round in 0..5 {
        let issue = world.ready_issue(&format!("stale flaky race {round}"));
        // When four hosts claim it at once
        let results = world.race_claims(issue, 4).await;
        // Then there is one owner, and GitHub holds one copy of every record
        assert_one_owner(&world, issue, &results);
        assert_no_duplicates(&world, issue);
    }
    // And what the test is named for happened: writes were applied and their replies lost,
    // lists left comments out, and a record posted again had its later copy removed
    let faults = world.sim.fault_counts();
    assert!(faults.applied_then_failed > 0, "{faults:?}");
    assert!(faults.stale_lists > 0, "{faults:?}");
    let removed = world
        .sim
        .requests()
        .iter()
        .filter(|r| r.method == "DELETE" && r.route.ends_with("/issues/comments/{comment_id}"))
        .filter(|r| r.status == 204)
        .count();
    assert!(
        removed > 0,
        "no record was posted twice and settled: {faults:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_posted_after_two_lost_replies_leaves_one_copy_when_the_list_shows_only_the_first() {
    let world = World::new().await;
    // Given a Ready issue; GitHub applies the next two comment posts but answers them 502, and
    // its lists lag: the first copy is left out of one list read, the second out of three (so
    // the list read after the second post shows the first copy and not the second)
    let issue = world.ready_issue("two lost replies");
    world.sim.fail_next(
        "POST",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        2,
        true,
    );
    world.sim.lag_next_comments(&[1, 3]);
    // When one host claims it
    let out = world
        .exec("h", &["claim", "--issue", &issue.to_string()])
        .await;
    // Then it owns the issue, and GitHub holds one copy of its claim record
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(world.ownership(issue).owner.unwrap().record.host, "h");
    assert_no_duplicates(&world, issue);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_record_by_a_stranger_is_ignored_and_reported() {
    let world = World::new().await;
    // Given a Ready issue on which a stranger posted a forged claim record
    let issue = world.ready_issue("forged");
    let forged = forged_claim(issue);
    world.sim.add_comment(issue, STRANGER, &forged);
    // When the bot's host claims it
    let out = world
        .exec("honest", &["claim", "--issue", &issue.to_string()])
        .await;
    // Then the forged claim did not own the issue, and the stranger's record was reported
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(world.ownership(issue).owner.unwrap().record.host, "honest");
    let err = stderr(&out);
    assert!(
        err.contains(STRANGER) && err.contains("untrusted"),
        "reported: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_without_ready_label_is_not_claimed() {
    let world = World::new().await;
    // Given an issue that is not Ready
    let issue = world
        .sim
        .create_issue(BOT, "not ready", "", &["needs-triage"]);
    // When a host claims it
    let out = world
        .exec("h", &["claim", "--issue", &issue.to_string()])
        .await;
    // Then it loses with a reason and writes nothing
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("not Ready"), "{}", stderr(&out));
    assert!(world.sim.comments(issue).is_empty());
}

/// A claim record as a stranger would forge it, copied from what our own Runs write.
fn forged_claim(issue: u64) -> String {
    let owner = thirdshift_reconciler::host::ProcessIdentity {
        pid: 1,
        start_ticks: 1,
    };
    let mut claim = claim_record(issue, "evil", "m", owner, "b", "c-forged00000000");
    claim.stage = "claimed".into();
    claim.to_comment()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_taken_off_the_queue_while_claiming_is_withdrawn_from() {
    let world = World::new().await;
    // Given a Ready issue and a claimant held by GitHub just before its claim is posted
    let issue = world.ready_issue("unreadied");
    world.sim.stall(
        "POST",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    );
    let claim = world
        .cli("h")
        .args(["claim", "--issue", &issue.to_string()])
        .output();
    let claimant = tokio::spawn(claim);
    wait_until("the claim post to be held", STEP, || {
        world.sim.stalled() == 1
    })
    .await;
    // When a person takes the issue off the queue meanwhile, and the post goes through
    world.sim.set_labels(issue, &["needs-triage"]);
    world.sim.release_stalls();
    let out = claimant.await.expect("joined").expect("claim runs");
    // Then the claimant withdraws and loses, and leaves the labels as the person set them
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("not Ready"), "{}", stderr(&out));
    assert_eq!(world.labels(issue), ["needs-triage"]);
    assert!(world.ownership(issue).owner.is_none());
    let withdrawn = world
        .records(issue)
        .iter()
        .any(|r| matches!(r, Record::End(e) if e.outcome == Outcome::Withdrawn));
    assert!(withdrawn, "the claim was withdrawn");
}
