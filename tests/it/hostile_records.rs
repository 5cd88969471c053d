//! Hostile records, end to end: what strangers and broken writers leave in an issue's comments
//! (forged claim, end, host-report and cancel records, a valid marker over broken JSON, a 1 MiB
//! comment, records of an unknown version, a reused claim id, a claim naming another machine under
//! this host's name) goes through the real `claim`, `observe` and `reconcile` processes. Each is
//! ignored or reported, never trusted, and never crashes a pass; a live Run is never touched.
//! The decoder's own cases are unit tests in `src/protocol/record/`; this file does not repeat them.

use crate::harness;

use harness::*;
use thirdshift_reconciler::host::{HostIdentity, ProcessIdentity};
use thirdshift_reconciler::protocol::record::{
    CancelRecord, ClaimRecord, ClaimVerdict, DeathReason, EndRecord, HostReport, Outcome, Record,
    Verdict,
};
use thirdshift_reconciler::text::ToComment;

/// The registry issue, as the bot's first `observe` made it.
const REGISTRY_LABEL: &str = "thirdshift-registry";

/// An end record for `claim_id` on `issue`, as a stranger would copy one of ours.
fn forged_end(issue: u64, claim_id: &str) -> String {
    EndRecord {
        claim_id: claim_id.into(),
        issue,
        outcome: Outcome::Recovered,
        actor: "reconcile".into(),
        reason: "PID gone".into(),
        exit_code: None,
        signal: None,
        cause: None,
        claim_comment_id: None,
        events_seen: None,
        labels_after: Some(vec![READY.into()]),
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        run: Default::default(),
        failures: Vec::new(),
        ended_at: chrono::Utc::now(),
    }
    .to_comment()
}

/// A host report for `host` on this machine saying `claim_id` on `issue` is dead.
fn dead_report(host: &str, issue: u64, claim_id: &str) -> String {
    let id = HostIdentity::detect(Some(host));
    HostReport {
        host: host.into(),
        machine_id: id.machine_id,
        boot_id: id.boot_id,
        claims: vec![ClaimVerdict {
            claim_id: claim_id.into(),
            issue,
            verdict: Verdict::Dead {
                reason: DeathReason::PidGone,
                evidence: "forged".into(),
            },
            kept: None,
            run: Default::default(),
            finished: None,
            watched: false,
        }],
        capacity: None,
        slots_used: None,
        booted_at: None,
        refresh_secs: None,
        written_at: None,
    }
    .to_comment()
}

/// A claim record of `host` on `machine_id` for `issue`, owned by `pid`, as our Runs write one.
fn claim_of(issue: u64, host: &str, machine_id: &str, pid: u32, claim_id: &str) -> ClaimRecord {
    let owner = ProcessIdentity {
        pid,
        start_ticks: 1,
    };
    let boot = HostIdentity::detect(None).boot_id;
    claim_record(issue, host, machine_id, owner, &boot, claim_id)
}

/// A PID no process has (above the kernel's pid_max).
const NO_PID: u32 = u32::MAX - 1;

fn forged_cancel(issue: u64, claim_id: &str, recover: bool) -> String {
    CancelRecord {
        request_id: "cx-00000000000000ff".into(),
        claim_id: claim_id.into(),
        issue,
        requested_by: STRANGER.into(),
        reason: Some("forged".into()),
        requested_at: chrono::Utc::now(),
        recover,
        requeue: false,
    }
    .to_comment()
}

/// The registry issue the bot's hosts use (made by an `observe`).
fn registry(world: &World) -> u64 {
    (1..200)
        .filter_map(|n| world.sim.issue(n))
        .find(|i| i.author == BOT && i.labels.iter().any(|l| l == REGISTRY_LABEL))
        .map(|i| i.number)
        .expect("the bot's registry issue")
}

/// Then: the live Run still owns its issue, untouched, and still passes its fencing.
async fn assert_untouched(world: &World, issue: u64, run: &mut LiveRun, host: &str) {
    assert!(
        run.child.try_wait().unwrap().is_none(),
        "the Run still runs"
    );
    assert!(ends(world, issue).is_empty(), "no end record by us");
    let own = world.ownership(issue);
    assert_eq!(own.owner.expect("an owner").record.claim_id, run.claim_id);
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
    let stage = world
        .exec(host, &["stage", "still-mine", "--claim", &run.claim_id])
        .await;
    assert_eq!(stage.status.code(), Some(0), "{}", stderr(&stage));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_record_forged_by_a_stranger_never_ends_a_live_claim() {
    let world = World::new().await;
    // Given a live Run on h1, and a stranger's well-formed end record for its Claim
    let issue = world.ready_issue("forged end");
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    world
        .sim
        .add_comment(issue, STRANGER, &forged_end(issue, &run.claim_id));
    // When h1 observes and reconciles, another host reconciles, and another host claims it
    let seen = observe_reconcile(&world, "h1").await;
    world.reconcile_ok("reconciler").await;
    let claim = world
        .exec("h2", &["claim", "--issue", &issue.to_string()])
        .await;
    // Then the stranger's end is reported and ignored; the Run keeps its Claim
    assert!(
        stderr(&seen).contains("by @mallory ignored"),
        "{}",
        stderr(&seen)
    );
    assert_eq!(claim.status.code(), Some(3), "{}", stderr(&claim));
    assert_untouched(&world, issue, &mut run, "h1").await;
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_record_forged_by_a_stranger_before_a_run_never_owns_the_issue() {
    let world = World::new().await;
    // Given a stranger's claim naming h1's real identity and a dead PID, posted first
    let issue = world.ready_issue("forged claim first");
    let machine = HostIdentity::detect(Some("h1")).machine_id;
    let forged = claim_of(issue, "h1", &machine, NO_PID, "c-forged0000000001");
    world.sim.add_comment(issue, STRANGER, &forged.to_comment());
    // When a Run starts on h1 and h1 observes and reconciles
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    let out = observe_reconcile(&world, "h1").await;
    // Then the Run owns the issue; h1 judged only its own Claim, not the forged one
    assert_ne!(run.claim_id, forged.claim_id);
    assert!(
        !stdout(&out).contains(&forged.claim_id),
        "not judged: {}",
        stdout(&out)
    );
    assert_untouched(&world, issue, &mut run, "h1").await;
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_report_forged_by_a_stranger_never_ends_a_claim() {
    let world = World::new().await;
    // Given a live Run on h1 that h1 has reported alive
    let issue = world.ready_issue("forged report");
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    observe_reconcile(&world, "h1").await;
    // And a claim of host "far", which never reported, whose process is alive here
    let far_issue = world.ready_issue("far host");
    let mut other = tokio::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let owner = ProcessIdentity::of(other.id().unwrap()).unwrap();
    let boot = HostIdentity::detect(None).boot_id;
    let far_claim = posted_claim(&world, far_issue, "far", owner, &boot);
    // And a stranger's reports on the registry issue calling both dead
    let reg = registry(&world);
    world
        .sim
        .add_comment(reg, STRANGER, &dead_report("h1", issue, &run.claim_id));
    world
        .sim
        .add_comment(reg, STRANGER, &dead_report("far", far_issue, &far_claim));
    // When another host reconciles twice
    let first = world.reconcile_ok("reconciler").await;
    world.reconcile_ok("reconciler").await;
    // Then nothing is ended: h1's Claim stays alive, far's awaits its host
    assert_untouched(&world, issue, &mut run, "h1").await;
    assert!(ends(&world, far_issue).is_empty());
    assert!(
        stdout(&first).contains("awaiting host"),
        "{}",
        stdout(&first)
    );
    assert!(
        stderr(&first).contains("by @mallory ignored"),
        "{}",
        stderr(&first)
    );
    run.kill_all().await;
    other.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_issue_forged_by_a_stranger_is_never_used() {
    let world = World::new().await;
    // Given a stranger's issue that looks like the registry, opened before any host's, holding a
    // forged dead report for the Claim that is about to be taken
    let forged_body = "registry\n\n<!-- thirdshift:v1:view {\"registry\":true} -->";
    let fake = world.sim.create_issue(
        STRANGER,
        "thirdshift registry",
        forged_body,
        &[REGISTRY_LABEL],
    );
    let issue = world.ready_issue("registry forged");
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    world
        .sim
        .add_comment(fake, STRANGER, &dead_report("h1", issue, &run.claim_id));
    // When h1 observes and reconciles, and another host reconciles
    observe_reconcile(&world, "h1").await;
    world.reconcile_ok("reconciler").await;
    // Then the hosts made and used their own registry; the forged one got nothing from them
    let reg = registry(&world);
    assert_ne!(reg, fake);
    assert!(world
        .sim
        .comments(fake)
        .iter()
        .all(|c| c.author == STRANGER));
    assert_eq!(world.sim.issue(fake).unwrap().body, forged_body);
    assert_untouched(&world, issue, &mut run, "h1").await;
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_forged_by_a_stranger_is_not_carried_out_by_reconcile() {
    let world = World::new().await;
    // Given a live Run on h1, and a stranger's recovering cancel request for its Claim
    let issue = world.ready_issue("forged cancel");
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    world
        .sim
        .add_comment(issue, STRANGER, &forged_cancel(issue, &run.claim_id, true));
    // When another host reconciles and then h1 observes and reconciles
    world.reconcile_ok("reconciler").await;
    let seen = observe_reconcile(&world, "h1").await;
    // Then the request was reported, not carried out: the Run and its Claim are untouched
    assert!(
        stderr(&seen).contains("by @mallory ignored"),
        "{}",
        stderr(&seen)
    );
    assert_untouched(&world, issue, &mut run, "h1").await;
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_record_with_broken_json_is_reported_and_never_acted_on() {
    let world = World::new().await;
    // Given a live Run on h1, then the bot's own comments with a valid marker over broken JSON:
    // a claim, an end for the Run's Claim, a cancel, and a host report on the registry issue
    let issue = world.ready_issue("broken json");
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    observe_reconcile(&world, "h1").await;
    let broken = [
        r#"<!-- thirdshift:v1:claim {"claim_id": "c-broken", "issue": -->"#.to_string(),
        format!(
            r#"<!-- thirdshift:v1:end {{"claim_id":"{}","issue":{issue},"outcome":"recovered" -->"#,
            run.claim_id
        ),
        format!(
            r#"<!-- thirdshift:v1:cancel {{"claim_id":"{}" -->"#,
            run.claim_id
        ),
        "<!-- thirdshift:v1:end not json at all -->".to_string(),
    ];
    for body in &broken {
        world.sim.add_comment(issue, BOT, body);
    }
    world.sim.add_comment(
        registry(&world),
        BOT,
        "<!-- thirdshift:v1:host-report {\"host\":\"h1\",\"claims\":[{] -->",
    );
    // When h1 observes and reconciles, and another host reconciles
    let seen = observe_reconcile(&world, "h1").await;
    world.reconcile_ok("reconciler").await;
    // Then each broken record was reported as malformed, and nothing acted on it
    let err = stderr(&seen);
    assert!(err.contains("malformed end record"), "{err}");
    assert!(err.contains("malformed claim record"), "{err}");
    assert_untouched(&world, issue, &mut run, "h1").await;
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn megabyte_comments_do_not_break_claim_observe_or_reconcile() {
    let world = World::new().await;
    let mib = 1 << 20;
    // Given 1 MiB comments on a Ready issue: plain text, and a record line with 1 MiB of JSON
    let issue = world.ready_issue("big comments");
    world.sim.add_comment(issue, STRANGER, &"a".repeat(mib));
    let huge = format!(
        "<!-- thirdshift:v1:claim {{\"x\":\"{}\"}} -->",
        "y".repeat(mib)
    );
    let seeded = world.sim.add_comment(issue, BOT, &huge);
    // And a 1 MiB `/thirdshift` command line by someone with write access
    world
        .sim
        .add_user("writer", "writer-token", github_emulator::Permission::Write);
    let command = format!("/thirdshift status {}", "z".repeat(mib));
    world.sim.add_comment(issue, "writer", &command);
    // When a Run claims it, its host observes and reconciles, and the registry gets one too
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    observe_reconcile(&world, "h1").await;
    let reg = registry(&world);
    world.sim.add_comment(reg, STRANGER, &huge);
    let seen = observe_reconcile(&world, "h1").await;
    world.reconcile_ok("reconciler").await;
    // Then the oversized record is refused unread, the Run owns the issue, and every comment
    // the bot wrote fits GitHub's 65,536 characters (the command's reply clipped its words)
    assert!(
        stderr(&seen).contains("more than the limit"),
        "{}",
        stderr(&seen)
    );
    assert_untouched(&world, issue, &mut run, "h1").await;
    let replied = world
        .records(issue)
        .into_iter()
        .any(|r| matches!(r, Record::Reply(_)));
    assert!(replied, "the command was answered");
    for n in [issue, reg] {
        let ours = world.sim.comments(n);
        for c in ours.iter().filter(|c| c.author == BOT && c.id != seeded) {
            assert!(
                c.body.chars().count() <= 65_536,
                "comment {} too long",
                c.id
            );
        }
    }
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_an_unknown_version_are_reported_and_never_acted_on() {
    let world = World::new().await;
    // Given an issue a newer writer claimed (a v2 claim, `in-progress`) and a v2 end beside it
    let other = world.ready_issue("from the future");
    let machine = HostIdentity::detect(Some("h1")).machine_id;
    let claim = claim_of(other, "h1", &machine, NO_PID, "c-future");
    let v2 = claim
        .to_comment()
        .replace("thirdshift:v1:claim", "thirdshift:v2:claim");
    world.sim.add_comment(other, BOT, &v2);
    world.sim.set_labels(other, &[IN_PROGRESS]);
    let v2_end = forged_end(other, "c-future").replace("thirdshift:v1:end", "thirdshift:v2:end");
    world.sim.add_comment(other, BOT, &v2_end);
    // When h1 observes and reconciles, another host reconciles, and a host tries to claim it
    world.sim.clear_requests();
    let seen = observe_reconcile(&world, "h1").await;
    world.reconcile_ok("reconciler").await;
    let claim = world
        .exec("h2", &["claim", "--issue", &other.to_string()])
        .await;
    // Then the v2 records are reported with advice to upgrade, and nothing touched the issue
    assert!(
        stderr(&seen).contains("newer than this reader (v1): upgrade"),
        "{}",
        stderr(&seen)
    );
    assert_eq!(claim.status.code(), Some(3), "{}", stderr(&claim));
    let touched: Vec<String> = writes(&world)
        .into_iter()
        .filter(|w| w.contains(&format!("/issues/{other}/")) || w.ends_with(&format!("/{other}")))
        .collect();
    assert_eq!(touched, Vec::<String>::new());
    assert_eq!(world.labels(other), [IN_PROGRESS]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_claim_id_naming_another_host_is_ignored() {
    let world = World::new().await;
    // Given a live Run on h1, and a later bot comment reusing its claim id for host h2 with a
    // PID that does not exist
    let issue = world.ready_issue("duplicate claim id");
    let mut run = start_run(&world, "h1", issue, "sleep 600").await;
    let mut dup = world.ownership(issue).owner.unwrap().record;
    dup.host = "h2".into();
    dup.machine_id = HostIdentity::detect(Some("h2")).machine_id;
    dup.pid = NO_PID;
    world.sim.add_comment(issue, BOT, &dup.to_comment());
    // When h2 observes and reconciles, then h1 does
    let h2 = observe_reconcile(&world, "h2").await;
    observe_reconcile(&world, "h1").await;
    // Then h2 judged nothing (the duplicate is not its Claim) and the Run keeps its Claim
    assert!(
        stdout(&h2).contains("observe h2: 0 claim(s)"),
        "{}",
        stdout(&h2)
    );
    assert!(stderr(&h2).contains("reuses claim id"), "{}", stderr(&h2));
    assert_untouched(&world, issue, &mut run, "h1").await;
    run.kill_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_naming_this_host_from_another_machine_is_not_judged_here() {
    let world = World::new().await;
    // Given a trusted claim naming host h1 but another machine, with a PID that does not exist
    let issue = world.ready_issue("other machine");
    let claim = claim_of(
        issue,
        "h1",
        "0123456789abcdef0123456789abcdef",
        NO_PID,
        "c-elsewhere",
    );
    world.sim.add_comment(issue, BOT, &claim.to_comment());
    world.sim.set_labels(issue, &[IN_PROGRESS]);
    // When h1 observes and reconciles, twice
    let first = observe_reconcile(&world, "h1").await;
    observe_reconcile(&world, "h1").await;
    // Then h1 gave no verdict on it and nothing ended it: it awaits its own machine
    assert!(
        stdout(&first).contains("observe h1: 0 claim(s)"),
        "{}",
        stdout(&first)
    );
    assert!(ends(&world, issue).is_empty());
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
}
