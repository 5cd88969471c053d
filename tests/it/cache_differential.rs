//! The efficient pass decides exactly what a full read decides (issue #9): on seeded random
//! fleets, over several passes with random changes between them (new claims, ends, commands,
//! commands on idle issues, edits and deletions of records and conversation, deaths in host
//! reports, labels, forged records), the snapshot read through the cache and a naive full read give the same plan, and
//! the cache is really used (most issues come from it). Each pass then applies the plan, so our
//! own writes are part of the history the next pass reads. Under stale comment lists, what a
//! cached pass could not see yet is seen once the lists catch up.

use crate::fleet;

use chrono::Utc;
use fleet::{chatter, claim, with_death, Fleet, BOT, BOT_TOKEN, IN_PROGRESS, PERSON};
use thirdshift_reconciler::context::Ctx;
use thirdshift_reconciler::github::{Client, Repo};
use thirdshift_reconciler::host::{HostIdentity, StateDir};
use thirdshift_reconciler::protocol::config::Config;
use thirdshift_reconciler::protocol::record::{EndRecord, Outcome, Trust};
use thirdshift_reconciler::reconcile::{plan, read_and_plan, Plan, PlanInput};
use thirdshift_reconciler::snapshot::{read_cached, read_pass, CachedRead};
use thirdshift_reconciler::text::ToComment;

/// splitmix64: a seeded, dependency-free random source.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// What a pass would decide at one moment: from a naive full read, and from the cache alone.
struct PlansNow {
    input: PlanInput,
    full: Plan,
    through: CachedRead,
    cached: Plan,
}

async fn plans_now(cached: &Ctx, naive: &Ctx, path: &std::path::Path) -> PlansNow {
    let input = PlanInput {
        actor: "reconcile@reconciler".into(),
        now: Utc::now(),
    };
    let full = plan(
        &read_pass(naive).await.expect("full read"),
        &cached.config,
        &input,
    );
    let through = read_cached(cached, &[], path).await.expect("cached read");
    let cached = plan(&through.snapshot, &cached.config, &input);
    PlansNow {
        input,
        full,
        through,
        cached,
    }
}

fn ctx(fleet: &Fleet, cache: Option<std::path::PathBuf>) -> Ctx {
    let repo: Repo = fleet.sim.repo_full_name().parse().expect("repo");
    let client = Client::new(&fleet.server.url, Some(BOT_TOKEN.into()), repo).expect("client");
    Ctx {
        client,
        config: Config::default(),
        me: BOT.into(),
        trust: Trust::new([BOT]),
        host: HostIdentity {
            host: "reconciler".into(),
            machine_id: "m-reconciler".into(),
            boot_id: "b-reconciler".into(),
        },
        state: StateDir::resolve(Some(&fleet.state_dir())).unwrap(),
        cache,
        config_path: None,
    }
}

fn end_of(issue: u64, claim_id: &str) -> EndRecord {
    EndRecord {
        claim_id: claim_id.into(),
        issue,
        outcome: Outcome::Done,
        actor: "run@host-00".into(),
        reason: "exit code 0".into(),
        exit_code: Some(0),
        signal: None,
        cause: None,
        claim_comment_id: None,
        events_seen: None,
        labels_after: Some(Vec::new()),
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        run: Default::default(),
        failures: Vec::new(),
        ended_at: Utc::now(),
    }
}

/// One random change to the fleet.
fn change(fleet: &mut Fleet, rng: &mut Rng) {
    let sim = &fleet.sim;
    let (issue, c) = fleet.claims[rng.below(fleet.claims.len())].clone();
    match rng.below(11) {
        0 => {
            sim.add_comment(issue, PERSON, &chatter(issue, rng.below(99)));
        }
        1 => {
            let mut later = claim(issue, rng.below(fleet.reports.len()));
            later.claim_id = format!("c-{:016x}", rng.next());
            sim.add_comment(issue, BOT, &later.to_comment());
        }
        2 => {
            sim.add_comment(issue, BOT, &end_of(issue, &c.claim_id).to_comment());
        }
        3 => {
            let verb = ["status", "recover", "help", "cancel"][rng.below(4)];
            sim.add_comment(issue, PERSON, &format!("/thirdshift {verb}"));
        }
        4 | 5 => {
            let comments = sim.comments(issue);
            let victim = &comments[rng.below(comments.len())];
            if rng.below(2) == 0 {
                sim.delete_comment(victim.id);
            } else {
                let mut staged = c.clone();
                staged.stage = format!("stage-{}", rng.below(9));
                sim.edit_comment(victim.id, &staged.to_comment());
            }
        }
        6 => {
            let k = rng.below(fleet.reports.len());
            let (id, report) = fleet.reports[k].clone();
            let dead = with_death(&report, &c.claim_id);
            sim.edit_comment(id, &dead.to_comment());
            fleet.reports[k].1 = dead;
        }
        7 => {
            let labels = if rng.below(2) == 0 {
                vec![]
            } else {
                vec![IN_PROGRESS]
            };
            sim.set_labels(issue, &labels);
        }
        8 => {
            sim.add_comment(issue, "mallory", &claim(issue, 0).to_comment());
        }
        9 => {
            let idle = sim.create_issue(PERSON, "idle", "for later", &[]);
            let verb = ["status", "recover", "help", "cancel", "recovr"][rng.below(5)];
            sim.add_comment(idle, PERSON, &format!("/thirdshift {verb}"));
        }
        _ => {
            let n = sim.create_issue(PERSON, "late", "more", &[IN_PROGRESS]);
            let c = claim(n, rng.below(fleet.reports.len()));
            sim.add_comment(n, BOT, &c.to_comment());
            fleet.claims.push((n, c));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_and_full_reads_make_the_same_decisions_over_random_histories() {
    let (mut passes, mut from_cache) = (0, 0);
    for seed in 1..=10u64 {
        // given a random fleet
        let mut rng = Rng(seed);
        let mut fleet = Fleet::seed(4 + rng.below(8), 1 + rng.below(3), 4, 1_000_000).await;
        let path = fleet.dir.path().join("cache.json");
        let (cached, naive) = (ctx(&fleet, Some(path.clone())), ctx(&fleet, None));
        for pass in 0..6 {
            // when random things happen between passes
            for _ in 0..rng.below(5) {
                change(&mut fleet, &mut rng);
            }
            // then the plan from a full read, from the cache alone, and after confirming agree
            let now = plans_now(&cached, &naive, &path).await;
            let (input, full) = (now.input, now.full);
            let issues = now.through.snapshot.issues.len();
            from_cache += issues - now.through.fresh.len();
            assert_eq!(now.cached, full, "seed {seed} pass {pass}: cache alone");
            let (snapshot, decided) = read_and_plan(&cached, &input).await.expect("decided");
            assert_eq!(decided, full, "seed {seed} pass {pass}: confirmed");
            thirdshift_reconciler::reconcile::apply::apply(
                &cached,
                &decided.actions,
                &thirdshift_reconciler::reconcile::apply::Seen::of(&snapshot),
            )
            .await;
            passes += 1;
        }
    }
    // and the cache did the work it is there for
    assert!(
        from_cache > passes * 3,
        "only {from_cache} issue reads came from the cache in {passes} passes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comments_hidden_by_stale_lists_from_a_cached_pass_are_seen_once_lists_catch_up() {
    let window = std::time::Duration::from_millis(400);
    for seed in 11..=16u64 {
        // given a random fleet whose comment lists leave new comments out for a while
        let mut rng = Rng(seed);
        let mut fleet = Fleet::seed(4 + rng.below(6), 1 + rng.below(2), 4, 1_000_000).await;
        let path = fleet.dir.path().join("cache.json");
        let (cached, naive) = (ctx(&fleet, Some(path.clone())), ctx(&fleet, None));
        read_cached(&cached, &[], &path).await.expect("cold read");
        fleet.sim.set_faults(github_emulator::Faults {
            stale_list_reads: Some(window),
            ..Default::default()
        });
        let mut hidden = 0;
        for pass in 0..4 {
            // when things change and cached passes read while some of it is still hidden
            for _ in 0..1 + rng.below(4) {
                change(&mut fleet, &mut rng);
            }
            let before = fleet.sim.fault_counts().hidden_comments;
            read_cached(&cached, &[], &path)
                .await
                .expect("stale cached read");
            hidden += fleet.sim.fault_counts().hidden_comments - before;
            // then once every list shows everything, the cache alone plans as a full read does
            tokio::time::sleep(window + std::time::Duration::from_millis(100)).await;
            let now = plans_now(&cached, &naive, &path).await;
            assert_eq!(now.cached, now.full, "seed {seed} pass {pass}");
        }
        // and the stale reads did leave comments out: the cache had something to catch up on
        assert!(hidden > 0, "seed {seed}: no stale read hid a comment");
    }
}
