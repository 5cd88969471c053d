//! The README's hand-run example, run as a new user would run it: its shell block read from the
//! README and run exactly as written by bash, in a fresh copy of the repository's files, with a
//! home of its own. The Run's command calls `thirdshift-reconciler stage …` by name, so this
//! fails unless a Run puts its own binary on its command's PATH (issue #38).
//!
//! The copy builds with the repository's own target folder (`CARGO_TARGET_DIR`), so only this
//! crate is compiled again for the copy's path, not its dependencies.
//!
//! And every relative link of the README and of docs/ names a file a user's clone has; and
//! docs/commands.md's by-hand command, run as written, is answered.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::harness::exit_within;
use thirdshift_reconciler::github::{Client, Comment};
use thirdshift_reconciler::protocol::record::{decode, Decoded, Record};

/// The first `sh` block after `marker` in the README.
fn readme_block(marker: &str) -> String {
    doc_block("README.md", marker)
}

/// The first `sh` block after `marker` in `page` (a path from the repository's root).
fn doc_block(page: &str, marker: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(page))
        .expect("the page");
    let after = &readme[readme.find(marker).expect("the page's example")..];
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
const EXAMPLE_LIMIT: Duration = Duration::from_secs(900);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_run_example_records_its_stage_and_runs_again_when_run_as_written() {
    // Given the README's example and a fresh copy of the repository, with a home of its own
    let block = readme_block("Try a Run against the emulator by hand:");
    let dir = tempfile::tempdir().unwrap();
    let (clone, home) = (dir.path().join("clone"), dir.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    fresh_copy(&clone);
    let (cargo_home, rustup_home) = tool_homes();
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    // When bash runs it exactly as written, twice in a row, stopping at the first failure (and
    // stopping the emulator it started, whatever happens)
    let twice = format!("set -e\ntrap 'kill $sim 2>/dev/null || true' EXIT\n{block}\n{block}");
    let mut bash = Command::new("bash");
    bash.args(["-c", &twice])
        .current_dir(&clone)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("CARGO_HOME", &cargo_home)
        .env("RUSTUP_HOME", &rustup_home)
        .env("CARGO_TARGET_DIR", &target);
    // (its output to files, not pipes: an emulator left running by a failure must not hold
    // the test until its deadline; the group is stopped as soon as bash ends)
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    bash.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .process_group(0);
    let mut child = bash.spawn().expect("bash runs");
    let group = child.id() as i32;
    let what = "the README's example";
    let status = tokio::task::spawn_blocking(move || exit_within(&mut child, EXAMPLE_LIMIT, what))
        .await
        .unwrap();
    // SAFETY: kill(2) of the process group this test started (anything the example left).
    unsafe { libc::kill(-group, libc::SIGTERM) };
    // Then both times the Run ended well and its Claim shows the stage its command recorded
    let text = std::fs::read_to_string(&out_path).unwrap();
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert!(status.success(), "{what} failed: {status}\n{text}\n{err}");
    assert_eq!(text.matches("\nclaim c-").count(), 2, "{text}");
    assert_eq!(
        text.matches("  stage implementing since").count(),
        2,
        "{text}"
    );
}

/// The targets of the Markdown links in `text` (`[label](target)`), without their `#anchor`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for (at, _) in text.match_indices("](") {
        let rest = &text[at + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = rest[..end].split('#').next().unwrap_or_default().trim();
        if !target.is_empty() {
            targets.push(target.to_string());
        }
    }
    targets
}

#[test]
fn every_relative_link_of_the_readme_and_the_docs_names_a_file_in_the_repository() {
    // Given the README and every page of docs/, as a user's clone holds them
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let mut pages = vec![root.join("README.md")];
    for dir in [root.join("docs"), root.join("docs/adr")] {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "md") {
                pages.push(entry.path());
            }
        }
    }
    // Then every link that is not a web address names a file or folder inside the repository
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let path = page.parent().unwrap().join(&target);
            let found = path.canonicalize().ok();
            let inside = found.as_ref().is_some_and(|p| p.starts_with(&root));
            assert!(
                inside,
                "{}: {target} is not a file of the repository",
                page.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "relative links checked: {checked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commands_pages_by_hand_example_is_answered_when_run_as_written() {
    // Given docs/commands.md's example, the binary on PATH, in a folder and a home of its own
    let block = doc_block("docs/commands.md", "Try a command by hand");
    let dir = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_thirdshift-reconciler"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // When bash runs it exactly as written, in its own process group
    let mut bash = Command::new("bash");
    bash.args(["-c", &block])
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.path());
    let what = "docs/commands.md's example";
    let comments = run_then_read_issue_1(bash, 8086, what, Duration::from_secs(60)).await;
    let replies = comments
        .iter()
        .filter(|c| matches!(decode(c.text()), Decoded::Record(Record::Reply(_))))
        .count();
    assert_eq!(replies, 1);
}

/// Runs `bash` (an example's block) in its own process group within `limit`, reads issue #1's
/// comments from the emulator the example started on `port`, stops that emulator, and asserts
/// the example ended well.
async fn run_then_read_issue_1(
    mut bash: Command,
    port: u16,
    what: &'static str,
    limit: Duration,
) -> Vec<Comment> {
    let mut child = bash.process_group(0).spawn().expect("bash runs");
    let group = child.id() as i32;
    let status = tokio::task::spawn_blocking(move || exit_within(&mut child, limit, what))
        .await
        .unwrap();
    let client = Client::new(
        &format!("http://127.0.0.1:{port}"),
        Some("sim-admin-token".into()),
        "acme/widgets".parse().unwrap(),
    )
    .unwrap();
    let comments = client.list_issue_comments(1).await;
    // SAFETY: kill(2) of the process group this test started (the example's emulator).
    unsafe { libc::kill(-group, libc::SIGTERM) };
    assert!(status.success(), "{what} failed: {status}");
    comments.expect("the emulator answers")
}
