//! Hosts and readers writing as different logins, the docs' zero-setup path gone wrong (a
//! person's token on a host, the workflow's own token in the Action) with no `trusted_authors`:
//! every pass names the login it ignored, how many records, and the exact config line that
//! would trust it; `status` shows them; no second registry issue is made beside one opened by
//! someone with write access (`hostile_records` covers a stranger's look-alike).

use crate::harness::*;
use github_emulator::Permission;

const ALICE: &str = "alice";
const ALICE_TOKEN: &str = "alice-token";

/// The open issues labelled as registries.
fn registry_issues(world: &World) -> Vec<u64> {
    (1..100)
        .filter_map(|n| world.sim.issue(n))
        .filter(|i| i.state == "open" && i.labels.iter().any(|l| l == "thirdshift-registry"))
        .map(|i| i.number)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_not_trusting_the_hosts_login_names_it_with_its_config_line_and_one_registry() {
    let world = World::new().await;
    world.sim.add_user(ALICE, ALICE_TOKEN, Permission::Write);
    // Given host h1 writing as alice: a Run holding an issue, and h1's report on the registry
    // issue alice opened
    let issue = world.ready_issue("claimed as alice");
    let mut run = world.cli("h1");
    run.env("GITHUB_TOKEN", ALICE_TOKEN).args([
        "run",
        "--issue",
        &issue.to_string(),
        "--",
        "sleep",
        "30",
    ]);
    let _run = run.spawn().expect("run starts");
    for _ in 0..500 {
        if world.ownership_trusting(issue, ALICE).owner.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let mut observe = world.cli("h1");
    observe.env("GITHUB_TOKEN", ALICE_TOKEN).arg("observe");
    let out = observe.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let registry = registry_issues(&world);
    assert_eq!(registry.len(), 1);
    let line = "`trusted_authors: [\"alice\"]`";

    // When host h2 observes as the bot, which trusts only itself
    let out = world.exec("h2", &["observe"]).await;
    // Then it fails saying whose registry issue it found (alice writes to the repository) and
    // the line that would trust her, and makes no second one
    assert_ne!(out.status.code(), Some(0));
    let said = stderr(&out);
    let found = format!("registry issue #{} was opened by @alice", registry[0]);
    assert!(said.contains(&found) && said.contains(line), "{said}");
    assert!(said.contains("no second registry issue is made"), "{said}");
    assert_eq!(registry_issues(&world), registry);

    // When the bot reconciles
    let out = world.exec("h2", &["reconcile"]).await;
    // Then the pass says once: alice, how many of its records it ignored, the line
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stderr(&out);
    let told: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("by @alice ignored"))
        .collect();
    assert_eq!(told.len(), 1, "{said}");
    assert!(told[0].contains("records by @alice ignored"), "{said}");
    assert!(told[0].contains(line), "{said}");

    // And `status --json` names alice with her records (the claim, the registry issue) and line
    let out = world.exec("h2", &["status", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let untrusted = view["untrusted"].as_array().expect("untrusted");
    assert_eq!(untrusted.len(), 1, "{view:#}");
    assert_eq!(untrusted[0]["login"], ALICE);
    assert!(untrusted[0]["records"].as_u64().unwrap() >= 2, "{view:#}");
    assert_eq!(untrusted[0]["trust_line"], "trusted_authors: [\"alice\"]");
    assert_eq!(registry_issues(&world), registry);
}
