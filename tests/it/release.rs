//! The Action runs the binary its tagged source names, and no other: the release tooling's sums
//! (scripts/release/sums.sh) committed into a checkout of the Action, its install step checking
//! every download and every binary the cache restores against them, cache keys that keep hosted
//! runners and each self-hosted runner apart, a release workflow that replaces nothing, and one
//! place naming the repository. Real scripts, the release's own packaging, a local HTTP server
//! serving the release downloads, the Action's steps run as a runner runs them.

use crate::action::serve_files;
use crate::harness;

use std::path::{Path, PathBuf};

use harness::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const TARGET: &str = "x86_64-unknown-linux-musl";
const INSTALL: &str = "Install the binary unless restored";

/// Packages `binary` as the release asset of this version for the test runner's platform (Linux
/// X64) with the release's own script, under `dir/v<version>/`; the path of the archive.
fn package(binary: &Path, dir: &Path) -> PathBuf {
    let made = std::process::Command::new("bash")
        .arg(Path::new(ROOT).join("scripts/release/package.sh"))
        .arg(binary)
        .args([VERSION, TARGET])
        .arg(dir.join(format!("v{VERSION}")))
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    PathBuf::from(String::from_utf8_lossy(&made.stdout).trim())
}

/// The release assets made from the binary under test.
fn release_assets(dir: &Path) -> PathBuf {
    package(Path::new(env!("CARGO_BIN_EXE_thirdshift-reconciler")), dir)
}

/// Copies `from` into `to`, folders whole.
fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    }
}

/// A checkout of the Action as its release tags it: this repository's Action and sources, with
/// the sums the release tooling writes from the assets in `assets/v<version>/`.
fn tagged_checkout(dir: &Path, assets: &Path) -> PathBuf {
    let checkout = dir.join("action");
    for part in ["action.yml", "Cargo.toml", "Cargo.lock", "scripts", "src"] {
        copy_tree(&Path::new(ROOT).join(part), &checkout.join(part));
    }
    let wrote = std::process::Command::new("bash")
        .arg(checkout.join("scripts/release/sums.sh"))
        .arg(VERSION)
        .arg(assets.join(format!("v{VERSION}")))
        .output()
        .unwrap();
    assert!(wrote.status.success(), "{}", stderr(&wrote));
    checkout
}

fn sha256(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_string()
}

/// Every file under `dir` (none when it does not exist).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk(&p)
            } else {
                vec![p]
            }
        })
        .collect()
}

/// Whether any binary was put in the job's binary folder.
fn installed_any(runner: &Runner) -> bool {
    walk(&runner.temp().join("thirdshift-reconciler"))
        .iter()
        .any(|p| p.ends_with("thirdshift-reconciler"))
}

/// Given a release of this version and the Action's tagged checkout with its sums, served as
/// GitHub serves release downloads: the world, the assets folder, the checkout, the server URL.
async fn released() -> (World, PathBuf, PathBuf, String) {
    let world = World::new().await;
    let assets = world.dir.path().join("releases");
    release_assets(&assets);
    let checkout = tagged_checkout(world.dir.path(), &assets);
    let url = serve_files(assets.clone()).await;
    (world, assets, checkout, url)
}

/// Asserts the Action's install step exited `code` and said `text`.
fn install_said(run: &ActionRun, code: i32, text: &str) {
    let install = run.step(INSTALL);
    assert_eq!(install.code, Some(code), "{install:#?}");
    assert!(install.stdout.contains(text), "{}", install.stdout);
}

/// The Action run from `checkout` with nothing in its cache, its assets from `url`.
async fn uncached<'w>(
    world: &'w World,
    checkout: &Path,
    command: &str,
    url: &str,
) -> (Runner<'w>, ActionRun) {
    let mut runner = Runner::new(world, "ci");
    runner.action_path = checkout.to_path_buf();
    runner.cache_hit = false;
    let run = runner
        .run_action(&[("command", command), ("releases-url", url)])
        .await;
    (runner, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sums_the_release_tooling_commits_are_the_ones_the_install_step_checks() {
    // Given a release and the Action's tagged checkout holding the sums the tooling wrote
    let (world, _, checkout, url) = released().await;
    let sums = std::fs::read_to_string(checkout.join("scripts/action/SHA256SUMS")).unwrap();
    let binary = sha256(Path::new(env!("CARGO_BIN_EXE_thirdshift-reconciler")));
    assert!(sums.contains(&binary), "{sums}");
    // When the Action runs with nothing in its cache
    let (_, run) = uncached(&world, &checkout, "reconcile", &url).await;
    // Then it installed the release's binary, checked against the committed sum, built nothing,
    // and the pass ran with it
    install_said(&run, 0, "verified against the committed sum");
    let install = run.step(INSTALL);
    assert!(!install.stdout.contains("building"), "{}", install.stdout);
    assert_eq!(run.step("Run thirdshift-reconciler").code, Some(0));
    assert_eq!(run.outputs["runs-seen"], "0", "{:?}", run.outputs);
    // And a job whose cache restores that same binary uses it, as committed
    let mut runner = Runner::new(&world, "ci-2");
    runner.action_path = checkout;
    let run = runner.run_action(&[("command", "status")]).await;
    install_said(&run, 0, "as committed for");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asset_and_its_sha256_both_replaced_on_the_release_are_refused_and_nothing_installed() {
    // Given a release whose asset and its .sha256 were both replaced after the Action's tag
    // committed the genuine sums (release assets are mutable): another program, packaged and
    // summed as the release packages and sums
    let (world, assets, checkout, url) = released().await;
    let committed = sha256(&assets.join(format!(
        "v{VERSION}/thirdshift-reconciler-v{VERSION}-{TARGET}.tar.gz"
    )));
    let forged = package(Path::new("/bin/true"), &assets);
    let forged_sum = std::fs::read_to_string(forged.with_extension("gz.sha256")).unwrap();
    assert!(forged_sum.starts_with(&sha256(&forged)), "{forged_sum}");
    // When the Action runs with nothing in its cache
    let (runner, run) = uncached(&world, &checkout, "status", &url).await;
    // Then the install step fails with an error saying what differed, and nothing ran or was
    // installed
    let said = format!(
        "::error title=thirdshift-reconciler::checksum mismatch for \
         thirdshift-reconciler-v{VERSION}-{TARGET}.tar.gz: this checkout of the Action commits \
         {committed}, the download is {}",
        sha256(&forged)
    );
    install_said(&run, 1, &said);
    assert!(run
        .steps
        .iter()
        .all(|s| s.name != "Run thirdshift-reconciler"));
    assert!(!installed_any(&runner), "a binary was installed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asset_changed_after_its_release_is_refused_with_an_annotation() {
    // Given a release whose archive was changed after the Action's tag committed its sum
    let (world, assets, checkout, url) = released().await;
    let archive = assets.join(format!(
        "v{VERSION}/thirdshift-reconciler-v{VERSION}-{TARGET}.tar.gz"
    ));
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes.extend_from_slice(b"tampered");
    std::fs::write(&archive, bytes).unwrap();
    // When the Action runs with nothing in its cache
    let (runner, run) = uncached(&world, &checkout, "status", &url).await;
    // Then the install step fails with an error annotation naming the mismatch
    install_said(
        &run,
        1,
        "::error title=thirdshift-reconciler::checksum mismatch",
    );
    assert!(!installed_any(&runner), "a binary was installed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_binary_that_differs_from_the_committed_sum_is_refused_and_replaced_by_a_verified_one(
) {
    // Given a release and its tagged checkout, and a cache whose binary an agent rewrote (it
    // still runs)
    let (world, _, checkout, url) = released().await;
    let rewritten = world.dir.path().join("rewritten");
    let mut bytes = std::fs::read(env!("CARGO_BIN_EXE_thirdshift-reconciler")).unwrap();
    bytes.extend_from_slice(b"\0planted");
    std::fs::write(&rewritten, bytes).unwrap();
    std::fs::set_permissions(
        &rewritten,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let genuine = sha256(Path::new(env!("CARGO_BIN_EXE_thirdshift-reconciler")));
    // When the Action runs and the cache restores it
    let mut runner = Runner::new(&world, "self-hosted-1");
    runner.action_path = checkout;
    runner.cached = Some(rewritten.clone());
    let run = runner
        .run_action(&[("command", "status"), ("releases-url", &url)])
        .await;
    // Then the install step refused it with a warning saying what differed, and installed the
    // release's binary, verified, in its place; the pass ran with that one
    let said = format!(
        "::warning title=thirdshift-reconciler::the cached binary's sha256 is {}, not the {genuine} \
         this checkout of the Action commits",
        sha256(&rewritten)
    );
    install_said(&run, 0, &said);
    install_said(&run, 0, "verified against the committed sum");
    let folder = run
        .step("Cache key of this version of the binary")
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("binary cache: "))
        .map(PathBuf::from)
        .expect("the key step names the binary's folder");
    let used = folder.join("thirdshift-reconciler");
    assert_eq!(sha256(&used), genuine);
    assert_eq!(run.step("Run thirdshift-reconciler").code, Some(0));
}

/// The `key` key.sh gives a runner of `environment` named `name`.
fn cache_key(environment: &str, name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    let out = std::process::Command::new("bash")
        .arg(Path::new(ROOT).join("scripts/action/key.sh"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GITHUB_ACTION_PATH", ROOT)
        .env("GITHUB_OUTPUT", &output)
        .env("RUNNER_TEMP", dir.path())
        .env("RUNNER_ENVIRONMENT", environment)
        .env("RUNNER_NAME", name)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let written = std::fs::read_to_string(&output).unwrap();
    written
        .lines()
        .find_map(|l| l.strip_prefix("key="))
        .expect("a key output")
        .to_string()
}

#[test]
fn hosted_runners_share_a_binary_cache_and_each_self_hosted_runner_has_its_own() {
    // Given runners of this version of the Action, hosted and self-hosted
    // When the Action names their binary's cache
    let hosted = [
        cache_key("github-hosted", "GitHub Actions 1"),
        cache_key("github-hosted", "GitHub Actions 2"),
    ];
    let builders = [
        cache_key("self-hosted", "builder-1"),
        cache_key("self-hosted", "builder-2"),
    ];
    // Then hosted runners share one, and no self-hosted runner shares one with a hosted runner
    // or another host (what an agent writes into its host's cache reaches no other job)
    assert_eq!(hosted[0], hosted[1]);
    assert_ne!(builders[0], builders[1]);
    for b in &builders {
        assert_ne!(b, &hosted[0]);
    }
    assert_eq!(builders[0], cache_key("self-hosted", "builder-1"));
}

#[test]
fn the_release_is_started_by_hand_and_replaces_nothing() {
    // Given the release workflow and its scripts
    let root = Path::new(ROOT);
    let workflow = std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap();
    let doc: yaml_serde::Value = yaml_serde::from_str(&workflow).unwrap();
    // Then no tag push starts it (re-pointing a tag must not rebuild and replace assets)
    let on = doc["on"].as_mapping().expect("on");
    let triggers: Vec<&str> = on.keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(triggers, ["workflow_dispatch"]);
    // And nothing it runs replaces an asset, and it publishes through publish.sh, which writes
    // the sums with sums.sh and creates the tag's ref (refused by GitHub when it exists)
    let publish = std::fs::read_to_string(root.join("scripts/release/publish.sh")).unwrap();
    for text in [&workflow, &publish] {
        assert!(!text.contains("--clobber"), "an upload that replaces");
        assert!(!text.contains("git push"), "a push that could move a tag");
    }
    assert!(workflow.contains("bash scripts/release/publish.sh"));
    assert!(publish.contains("scripts/release/sums.sh"));
    assert!(publish.contains("git/refs"));
}

/// The repository Cargo.toml names: `OWNER/NAME`.
fn cargo_repository() -> String {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find_map(|l| l.strip_prefix("repository = \""))
        .expect("Cargo.toml names its repository");
    let url = line.trim_end_matches('"');
    url.strip_prefix("https://github.com/")
        .expect("a GitHub repository")
        .to_string()
}

#[test]
fn the_docs_workflows_and_release_tooling_name_the_repository_cargo_toml_names() {
    // Given the repository Cargo.toml names (cargo binstall finds the assets from it)
    let repository = cargo_repository();
    let name = repository.split('/').nth(1).expect("OWNER/NAME");
    assert_eq!(name, "thirdshift-reconciler");
    // Then every mention of this project's repository in the README, the docs and the
    // workflows names that one
    let root = Path::new(ROOT);
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", ".github/workflows"] {
        files.extend(walk(&root.join(dir)));
    }
    let mut seen = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (at, _) in text.match_indices("/thirdshift-reconciler") {
            let before = &text[..at];
            let owner_at = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .map_or(0, |i| i + 1);
            let owner = &before[owner_at..];
            if owner.is_empty() || before[..owner_at].ends_with('.') {
                continue; // a path such as target/…/thirdshift-reconciler, or a folder
            }
            let after = &text[at + "/thirdshift-reconciler".len()..];
            let is_repo = after.starts_with('@') || before[..owner_at].ends_with("github.com/");
            if is_repo {
                seen += 1;
                assert_eq!(
                    format!("{owner}/thirdshift-reconciler"),
                    repository,
                    "{}",
                    file.display()
                );
            }
        }
    }
    assert!(seen >= 3, "mentions found: {seen}");
    // And the release tooling refuses to publish under another repository
    let publish = std::fs::read_to_string(root.join("scripts/release/publish.sh")).unwrap();
    assert!(
        publish.contains("Cargo.toml"),
        "publish.sh reads Cargo.toml's repository"
    );
}
