//! Credentials never pass through the environment or arguments of a process of ours: every
//! exec of this binary by this binary (the Run `pickup` starts, the Run's companion) is traced
//! with strace, as a watcher of the same user could read `/proc/PID/environ` before the process
//! makes itself undumpable; none carries the token. They still authenticate: the detached Run
//! claims, and its companion ends the Claim once the Run is killed outright. And credentials go
//! only to the API's own origin: a pass cache naming a next page elsewhere sends nothing there.

use crate::harness;

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::*;
use thirdshift_reconciler::protocol::record::Outcome;

const BIN: &str = env!("CARGO_BIN_EXE_thirdshift-reconciler");

/// Runs `cmd` (a `World::cli` command) under `strace -f`, every `execve` with its arguments and
/// whole environment written to `trace`; waits for every traced process to end.
async fn traced(cmd: tokio::process::Command, trace: &Path) -> std::process::Output {
    let std = cmd.as_std();
    let mut strace = tokio::process::Command::new("strace");
    strace
        .args(["-f", "-qq", "-v", "-s", "65536", "-e", "trace=execve", "-o"])
        .arg(trace)
        .arg("--")
        .arg(std.get_program())
        .args(std.get_args())
        .env_clear()
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (k, v) in std.get_envs() {
        if let Some(v) = v {
            strace.env(k, v);
        }
    }
    let out = strace.output();
    tokio::time::timeout(Duration::from_secs(120), out)
        .await
        .expect("every traced process ends within 2 minutes")
        .expect("strace runs (installed by .ci/run)")
}

/// The traced `execve` calls of this binary, after the first (the one a person started).
fn our_execs(trace: &str) -> Vec<&str> {
    let quoted = format!("execve(\"{BIN}\"");
    trace
        .lines()
        .filter(|l| l.contains(&quoted))
        .skip(1)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_process_of_ours_is_started_with_a_credential_and_each_still_authenticates() {
    let world = World::with_companions().await;
    let config = config(&world, &[("h1", 1)]);
    let issue = world.ready_issue("handed over");
    // Given a pickup started with the token in its environment, whose Run's command kills its
    // Run outright (so the Run's companion must end the Claim, talking to GitHub itself)
    let trace = world.dir.path().join("execve.trace");
    let cmd = pickup(&world, "h1", &config, &[], "kill -9 $PPID; sleep 1");
    // When it runs under strace to the end of every process it started
    let out = traced(cmd, &trace).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then this binary was started again by itself (the Run, its companion, the companion's
    // passes), and not one of those execs carries the token, in its environment or arguments
    let text = std::fs::read_to_string(&trace).unwrap();
    let execs = our_execs(&text);
    assert!(execs.len() >= 2, "the Run and its companion: {text}");
    for exec in &execs {
        assert!(!exec.contains(BOT_TOKEN), "a credential in: {exec}");
        assert!(exec.contains("THIRDSHIFT_CREDENTIALS_FD="), "{exec}");
    }
    println!(
        "{} execs of this binary by itself, none with a credential",
        execs.len()
    );
    // And the detached Run claimed the issue and its companion ended the Claim once it was killed
    wait_until("the killed Run's Claim to end", STEP, || {
        !ends(&world, issue).is_empty()
    })
    .await;
    assert_eq!(ends(&world, issue)[0].outcome, Outcome::Recovered);
}

/// A listener on a port of its own that keeps the head of every request it gets and answers
/// each with an empty list, as a page of another host would.
fn listener() -> (u16, Arc<Mutex<Vec<String>>>) {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    std::thread::spawn(move || {
        for stream in socket.incoming().flatten() {
            let mut stream = stream;
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\
                  connection: close\r\n\r\n[]",
            );
        }
    });
    (port, heads)
}

/// Given a pass's cache file whose every kept page names its next page on `port` of this
/// machine (another origin than the emulator's), when `pass` runs again, then nothing is sent
/// there (so no `Authorization`), the pass reads its pages afresh and succeeds, and the cache no
/// longer names that origin.
pub(crate) async fn a_poisoned_next_page_is_never_asked<F>(world: &World, pass: F)
where
    F: Fn() -> tokio::process::Command,
{
    let issue = world.ready_issue("listed");
    world.sim.set_labels(issue, &[IN_PROGRESS]);
    let out = pass().arg("reconcile").output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let repo = world.sim.repo_full_name();
    let file = thirdshift_reconciler::host::cache_path(&world.state_dir("h1"), &repo);
    let mut cache: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("the pass kept a cache")).unwrap();
    let (port, heads) = listener();
    let elsewhere = format!("http://127.0.0.1:{port}/repos/{repo}/issues?page=2");
    let pages = cache["pages"]["pages"].as_object_mut().expect("kept pages");
    assert!(!pages.is_empty(), "the pass kept list pages");
    for page in pages.values_mut() {
        page["next"] = elsewhere.clone().into();
    }
    std::fs::write(&file, serde_json::to_vec(&cache).unwrap()).unwrap();
    let out = pass().arg("reconcile").output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        heads.lock().unwrap().is_empty(),
        "requests sent to another origin: {:?}",
        heads.lock().unwrap()
    );
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(!after.contains(&format!(":{port}/")), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_next_page_on_another_origin_gets_no_token() {
    let world = World::new().await;
    a_poisoned_next_page_is_never_asked(&world, || world.cli("h1")).await;
}
