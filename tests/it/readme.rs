//! The README's hand-run example, run as a new user would run it: its shell block read from the
//! README and run exactly as written by bash, in a fresh copy of the repository's files, with a
//! home of its own. The Run's command calls `thirdshift-reconciler stage …` by name, so this
//! fails unless a Run puts its own binary on its command's PATH (issue #38).
//!
//! The copy builds with the repository's own target folder (`CARGO_TARGET_DIR`), so only this
//! crate is compiled again for the copy's path, not its dependencies.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::exit_within;
use thirdshift_reconciler::github::Client;
use thirdshift_reconciler::protocol::record::{decode, Decoded, Record};

/// The first `sh` block after `marker` in the README.
fn readme_block(marker: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let after = &readme[readme.find(marker).expect("the README's example")..];
    let start = after.find("```sh\n").expect("a sh block") + 6;
    let len = after[start..].find("```").expect("the block's end");
    after[start..start + len].to_string()
}

/// The repository's files as a commit would hold them now (tracked, and new ones not ignored),
/// copied into `dest`: a fresh clone's tree.
fn fresh_copy(dest: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .expect("git ls-files");
    assert!(out.status.success());
    for name in out.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let rel = Path::new(std::str::from_utf8(name).unwrap());
        let (from, to) = (root.join(rel), dest.join(rel));
        if !from.is_file() {
            continue; // deleted in the work tree, not yet committed
        }
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
}

/// Where the user's cargo and rustup live (a new `HOME` must not hide them).
fn tool_homes() -> (PathBuf, PathBuf) {
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let cargo = std::env::var_os("CARGO_HOME").map_or(home.join(".cargo"), PathBuf::from);
    let rustup = std::env::var_os("RUSTUP_HOME").map_or(home.join(".rustup"), PathBuf::from);
    (cargo, rustup)
}

/// How long the README's example may take: it builds the binary in release mode (cached in the
/// shared target folder after the first time) and runs one Run.
const EXAMPLE_LIMIT: std::time::Duration = std::time::Duration::from_secs(900);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_run_example_records_its_stage_when_run_as_written() {
    // Given the README's example and a fresh copy of the repository, with a home of its own
    let block = readme_block("Try a Run against the emulator by hand:");
    let dir = tempfile::tempdir().unwrap();
    let (clone, home) = (dir.path().join("clone"), dir.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    fresh_copy(&clone);
    let (cargo_home, rustup_home) = tool_homes();
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    // When bash runs it exactly as written, in its own process group
    let mut child = Command::new("bash")
        .args(["-c", &block])
        .current_dir(&clone)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("CARGO_HOME", &cargo_home)
        .env("RUSTUP_HOME", &rustup_home)
        .env("CARGO_TARGET_DIR", &target)
        .process_group(0)
        .spawn()
        .expect("bash runs");
    let group = child.id() as i32;
    let what = "the README's example";
    let status = tokio::task::spawn_blocking(move || exit_within(&mut child, EXAMPLE_LIMIT, what))
        .await
        .unwrap();
    // Then the Run ended well, and its claim record shows the stage its command recorded
    let client = Client::new(
        "http://127.0.0.1:8085",
        Some("sim-admin-token".into()),
        "acme/widgets".parse().unwrap(),
    )
    .unwrap();
    let comments = client.list_issue_comments(1).await;
    // SAFETY: kill(2) of the process group this test started (the example's emulator).
    unsafe { libc::kill(-group, libc::SIGTERM) };
    assert!(status.success(), "the example failed: {status}");
    let stages: Vec<String> = comments
        .expect("the emulator answers")
        .iter()
        .filter_map(|c| match decode(c.text()) {
            Decoded::Record(Record::Claim(claim)) => Some(claim.stage),
            _ => None,
        })
        .collect();
    assert_eq!(stages, ["implementing"]);
}
