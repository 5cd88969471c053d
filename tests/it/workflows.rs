//! The workflows as shipped: each one that uses its own repository's Action (`uses: ./`) checks
//! out everything that Action runs (its scripts, and the sources a build from source reads). The
//! checkout is made as actions/checkout makes it (git's sparse checkout, cone mode unless the
//! workflow says otherwise) from this repository's files, and the Action is run from it.

use std::path::{Path, PathBuf};

use crate::action::{cargo_stand_in, serve_files};
use crate::harness::*;
use yaml_serde::Value;

/// A workflow of this repository that uses `./`: its file name and what its checkout step
/// checks out (`sparse-checkout` lines, empty for everything; whether in cone mode).
struct LocalUse {
    name: String,
    sparse: Vec<String>,
    cone: bool,
}

fn workflows_using_the_local_action() -> Vec<LocalUse> {
    let dir = Path::new(ROOT).join(".github/workflows");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let doc = load(path.clone());
        for (_, job) in doc["jobs"].as_mapping().cloned().unwrap_or_default() {
            let steps = job["steps"].as_sequence().cloned().unwrap_or_default();
            let uses = |s: &Value| s["uses"].as_str().unwrap_or("").to_string();
            if !steps.iter().any(|s| uses(s) == "./") {
                continue;
            }
            let checkout = steps
                .iter()
                .find(|s| uses(s).starts_with("actions/checkout@"));
            let checkout = checkout.unwrap_or_else(|| panic!("{path:?}: uses ./ with no checkout"));
            let with = &checkout["with"];
            found.push(LocalUse {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                sparse: (with["sparse-checkout"].as_str().unwrap_or("").lines())
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty())
                    .collect(),
                cone: with["sparse-checkout-cone-mode"].as_bool().unwrap_or(true),
            });
        }
    }
    found
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "git {args:?}: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// This repository's files (tracked and new, as they are on disk) committed into a repository at
/// `dir`, then checked out as `how` says.
fn checkout(dir: &Path, how: &LocalUse) -> PathBuf {
    let listed = git(
        Path::new(ROOT),
        &["ls-files", "--cached", "--others", "--exclude-standard"],
    );
    for file in listed.lines() {
        let from = Path::new(ROOT).join(file);
        if from.is_file() {
            let to = dir.join(file);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&from, &to).unwrap();
        }
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the repository"]);
    if !how.sparse.is_empty() {
        let mode = if how.cone { "--cone" } else { "--no-cone" };
        let mut args = vec!["sparse-checkout", "set", mode];
        args.extend(how.sparse.iter().map(String::as_str));
        git(dir, &args);
    }
    dir.to_path_buf()
}

/// Every path under the Action's folder that action.yml or one of its scripts names as
/// `$GITHUB_ACTION_PATH/...`.
fn paths_the_action_names() -> Vec<String> {
    let mut texts = vec![std::fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap()];
    for e in std::fs::read_dir(Path::new(ROOT).join("scripts/action")).unwrap() {
        texts.push(std::fs::read_to_string(e.unwrap().path()).unwrap());
    }
    let mut paths = Vec::new();
    for text in texts {
        for (i, _) in text.match_indices("$GITHUB_ACTION_PATH/") {
            let rest = &text[i + "$GITHUB_ACTION_PATH/".len()..];
            let end = rest.find(|c: char| !(c.is_alphanumeric() || "._/-".contains(c)));
            paths.push(rest[..end.unwrap_or(rest.len())].to_string());
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_workflow_using_its_own_repositorys_action_checks_out_all_the_action_runs() {
    let world = World::new().await;
    let named = paths_the_action_names();
    assert!(named.iter().any(|p| p.ends_with("build.sh")), "{named:?}");
    // Given a cargo that reads the manifest a build from source would (cargo refuses one whose
    // workspace members or declared targets are missing) before the build's stand-in
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    // the runner's environment is not this one: cargo gets this one's toolchain and registry
    let toolchain: String = ["HOME", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}='{v}' ")))
        .collect();
    let fetch = format!(
        "env {toolchain}'{cargo}' fetch --offline --locked --target {host} \
         --manifest-path \"$MANIFEST\"",
        cargo = env!("CARGO"),
    );
    let (shim, _) = cargo_stand_in(&world, &fetch);
    let no_releases = serve_files(world.dir.path().join("no-releases")).await;
    let workflows = workflows_using_the_local_action();
    assert!(workflows.len() >= 3, "reconcile, commands, observe");
    for workflow in workflows {
        // When its checkout is made as actions/checkout makes it
        let dir = world.dir.path().join(format!("checkout-{}", workflow.name));
        std::fs::create_dir_all(&dir).unwrap();
        let checkout = checkout(&dir, &workflow);
        // Then every file the Action names is there
        for path in &named {
            assert!(
                checkout.join(path).exists(),
                "{}: the Action runs {path}, not checked out by {:?}",
                workflow.name,
                workflow.sparse
            );
        }
        // And the Action runs from it: with no cached binary and no release, it builds from
        // the checked-out sources, and the binary it built does its work
        let mut runner = Runner::new(&world, &workflow.name);
        runner.action_path = checkout;
        runner.cache_hit = false;
        runner.path_first = Some(shim.clone());
        let run = runner
            .run_action(&[("command", "status"), ("releases-url", &no_releases)])
            .await;
        assert_eq!(run.steps.len(), 3, "{}: {:#?}", workflow.name, run.steps);
        for step in &run.steps {
            assert_eq!(step.code, Some(0), "{}: {step:#?}", workflow.name);
        }
    }
}
