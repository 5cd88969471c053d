//! A Run from claim to end: CMD's exit decides the end record and labels; signals to the Run stop
//! CMD's whole session and hand the issue back; `stage` is fenced by ownership.

use crate::harness;

use std::time::Duration;

use harness::*;
use thirdshift_reconciler::host::session_members;
use thirdshift_reconciler::protocol::record::{EndRecord, Outcome, Record};
use thirdshift_reconciler::text::ToComment;

fn end_records(world: &World, issue: u64) -> Vec<EndRecord> {
    world
        .records(issue)
        .into_iter()
        .filter_map(|r| match r {
            Record::End(e) => Some(e),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_exits_0_ends_done_without_in_progress() {
    let world = World::new().await;
    // Given a Ready issue
    let issue = world.ready_issue("works");
    // When a Run's command succeeds
    let out = world
        .exec("h", &["run", "--issue", &issue.to_string(), "--", "true"])
        .await;
    // Then the Claim ends `done` and the issue is no longer in progress
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ends = end_records(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].outcome, Outcome::Done);
    assert!(!world.labels(issue).contains(&IN_PROGRESS.to_string()));
    assert!(world.ownership(issue).owner.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_exits_1_ends_failed_with_the_status() {
    let world = World::new().await;
    let issue = world.ready_issue("fails");
    // When the Run's command exits 1 before reporting any stage
    let out = world
        .exec(
            "h",
            &[
                "run",
                "--issue",
                &issue.to_string(),
                "--",
                "sh",
                "-c",
                "exit 1",
            ],
        )
        .await;
    // Then the Run exits 1, the end record says failed with status 1, and since nothing was
    // started the issue is Ready again
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let ends = end_records(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].outcome, Outcome::Failed);
    assert_eq!(ends[0].exit_code, Some(1));
    let labels = world.labels(issue);
    assert!(!labels.contains(&IN_PROGRESS.to_string()));
    assert!(labels.contains(&READY.to_string()), "{labels:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_says_one_line_when_it_holds_the_claim_and_one_when_it_ends_it_unless_quiet() {
    let world = World::new().await;
    let (told, quiet) = (world.ready_issue("told"), world.ready_issue("quiet"));
    // When a Run's command exits 3, at the default log level
    let n = told.to_string();
    let out = world
        .exec("h", &["run", "--issue", &n, "--", "sh", "-c", "exit 3"])
        .await;
    // Then stderr holds two lines: the Claim it holds (issue, claim, its comment), and its end
    // (outcome, how the command ended, the end record)
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let claim = ends(&world, told)[0].claim_id.clone();
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    let held = format!("thirdshift-reconciler: holding issue #{told} as claim {claim} (");
    assert!(lines[0].starts_with(&held), "{err}");
    assert!(lines[0].contains("#issuecomment-"), "{err}");
    let ended = format!(
        "thirdshift-reconciler: claim {claim} on #{told} ended `failed` (the command exited 3): "
    );
    assert!(lines[1].starts_with(&ended), "{err}");
    assert!(lines[1].contains("#issuecomment-"), "{err}");
    // And with -q the Run says nothing, and still ends its Claim
    let n = quiet.to_string();
    let out = world
        .exec("h", &["-q", "run", "--issue", &n, "--", "true"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert_eq!(ends(&world, quiet)[0].outcome, Outcome::Done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_run_that_reported_work_is_handed_to_people() {
    let world = World::new().await;
    let issue = world.ready_issue("half done");
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    // When the Run's command reports a stage (its env carries the Claim) and then fails
    let script = format!("'{bin}' stage implementing --session sess-1 && exit 7");
    let out = world
        .exec(
            "h",
            &[
                "run",
                "--issue",
                &issue.to_string(),
                "--",
                "sh",
                "-c",
                &script,
            ],
        )
        .await;
    // Then the failure hands the issue to people instead of the queue
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let labels = world.labels(issue);
    assert!(
        labels.contains(&"ready-for-human".to_string()),
        "{labels:?}"
    );
    assert!(!labels.contains(&READY.to_string()));
    let claim = world.records(issue).into_iter().find_map(|r| match r {
        Record::Claim(c) => Some(c),
        _ => None,
    });
    let claim = claim.expect("claim record");
    assert_eq!(claim.stage, "implementing");
    assert_eq!(claim.agent_session.as_deref(), Some("sess-1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_to_the_run_stops_the_whole_session_and_hands_the_issue_back() {
    let world = World::new().await;
    let issue = world.ready_issue("interrupted");
    let mark = world.dir.path().join("started");
    // Given a Run whose command started two background writers and waits
    let script = format!(
        "sleep 300 & sleep 300 & echo $$ > '{}'; wait",
        mark.display()
    );
    let mut run = world
        .cli("h")
        .args([
            "run",
            "--issue",
            &issue.to_string(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .spawn()
        .expect("run starts");
    let sid = wait_for_session(&mark).await;
    assert!(session_members(sid).len() >= 3, "sh and two sleeps run");
    // When the Run gets SIGTERM
    unsafe { libc::kill(run.id().unwrap() as i32, libc::SIGTERM) };
    let status = tokio::time::timeout(Duration::from_secs(30), run.wait())
        .await
        .expect("run stops")
        .unwrap();
    // Then every process of CMD's session is gone and the issue is Ready again
    assert_eq!(status.code(), Some(128 + libc::SIGTERM));
    assert!(
        session_members(sid).is_empty(),
        "left: {:?}",
        session_members(sid)
    );
    let ends = end_records(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].outcome, Outcome::HandedBack);
    let labels = world.labels(issue);
    assert!(labels.contains(&READY.to_string()), "{labels:?}");
    assert!(!labels.contains(&IN_PROGRESS.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_that_ignores_sigterm_is_killed_after_the_grace() {
    let world = World::new().await;
    let issue = world.ready_issue("stubborn");
    let config = world.dir.path().join("thirdshift.yml");
    std::fs::write(&config, "run:\n  kill_grace_secs: 1\n").unwrap();
    let mark = world.dir.path().join("stubborn");
    // Given a Run whose command ignores SIGTERM
    let script = format!(
        "trap '' INT TERM HUP; echo $$ > '{}'; while :; do sleep 0.1; done",
        mark.display()
    );
    let mut run = world
        .cli("h")
        .arg("--config")
        .arg(&config)
        .args([
            "run",
            "--issue",
            &issue.to_string(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .spawn()
        .expect("run starts");
    let sid = wait_for_session(&mark).await;
    // When the Run is interrupted
    let asked = std::time::Instant::now();
    unsafe { libc::kill(run.id().unwrap() as i32, libc::SIGINT) };
    let status = tokio::time::timeout(Duration::from_secs(30), run.wait())
        .await
        .expect("run stops")
        .unwrap();
    // Then the session had its 1 s grace (SIGTERM ignored), was killed after it, long before a
    // default grace of 10 s would have ended, and the issue was handed back
    let took = asked.elapsed();
    assert!(
        took >= Duration::from_secs(1),
        "the grace was kept: {took:?}"
    );
    assert!(
        took < Duration::from_secs(9),
        "the configured grace decided: {took:?}"
    );
    assert_eq!(status.code(), Some(128 + libc::SIGINT));
    assert!(session_members(sid).is_empty());
    assert_eq!(end_records(&world, issue)[0].outcome, Outcome::HandedBack);
}

/// The end record another pass writes when it finds `claim_id` (comment `comment`) superseded.
fn superseded(issue: u64, claim_id: &str, comment: u64) -> EndRecord {
    EndRecord {
        claim_id: claim_id.to_string(),
        issue,
        outcome: Outcome::Superseded,
        actor: "reconcile".into(),
        reason: "another Run took the issue".into(),
        exit_code: None,
        signal: None,
        cause: None,
        claim_comment_id: Some(comment),
        events_seen: None,
        labels_after: None,
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        run: Default::default(),
        failures: Vec::new(),
        ended_at: chrono::Utc::now(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stage_after_our_claim_was_ended_exits_4_and_says_why() {
    let world = World::new().await;
    let issue = world.ready_issue("fenced");
    // Given a Claim we hold
    let out = world
        .exec("h", &["claim", "--issue", &issue.to_string()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let claim_id = stdout(&out);
    // And another pass ended it (as a reconcile would when taking ownership elsewhere)
    let ours = world.ownership(issue).owner.expect("we own it");
    let end = superseded(issue, &claim_id, ours.comment_id);
    world.sim.add_comment(issue, BOT, &end.to_comment());
    // When the Run reports a stage
    let out = world
        .exec("h", &["stage", "implementing", "--claim", &claim_id])
        .await;
    // Then it is told to stop, with exit 4 and the reason
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("was ended") && err.contains("another Run took the issue"),
        "{err}"
    );
    // And the claim record was not edited
    let own = world.ownership(issue);
    assert_eq!(own.ended.len(), 1, "{own:#?}");
    let claim = own.ended[0].0.record.clone();
    assert_eq!(claim.stage, "claimed");
}

/// Waits until CMD wrote its PID (its session id: CMD leads its own session).
async fn wait_for_session(mark: &std::path::Path) -> u32 {
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(mark) {
            if let Ok(pid) = text.trim().parse::<u32>() {
                tokio::time::sleep(Duration::from_millis(200)).await;
                return pid;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("CMD never started");
}

/// Stage requests (`*.req`) waiting in the Runs' broker folders under `broker`.
fn requests_in(broker: &std::path::Path) -> usize {
    let folders = std::fs::read_dir(broker).into_iter().flatten().flatten();
    folders
        .flat_map(|f| std::fs::read_dir(f.path()).into_iter().flatten().flatten())
        .filter(|e| e.path().extension().is_some_and(|x| x == "req"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stage_at_the_first_instant_keeps_both_the_stage_and_the_session() {
    let world = World::new().await;
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    let edits = "/repos/{owner}/{repo}/issues/comments/{comment_id}";
    for round in 0..3 {
        // Given GitHub holding comment edits, so the Run's edit recording its command's session
        // is still in flight when the command reports its first stage
        world.sim.stall("PATCH", edits);
        let issue = world.ready_issue(&format!("eager {round}"));
        let script = format!("'{bin}' stage implementing && sleep 0.2");
        let mut run = world
            .cli("h")
            .args([
                "run",
                "--issue",
                &issue.to_string(),
                "--",
                "sh",
                "-c",
                &script,
            ])
            .spawn()
            .unwrap();
        // And the command's stage request waiting for its Run, which is held on that edit
        wait_until("the Run's session edit to be held", STEP, || {
            world.sim.stalled() > 0
        })
        .await;
        let broker = world.state_dir("h").join("broker");
        wait_until("the command's stage request", STEP, || {
            requests_in(&broker) > 0
        })
        .await;
        world.sim.release_stalls();
        let status = run.wait().await.unwrap();
        assert_eq!(status.code(), Some(0));
        // Then neither the Run's record of its session nor the command's stage was lost
        let claim = world.records(issue).into_iter().find_map(|r| match r {
            Record::Claim(c) => Some(c),
            _ => None,
        });
        let claim = claim.expect("claim record");
        assert_eq!(claim.stage, "implementing", "round {round}");
        assert!(claim.session_id.is_some(), "round {round}: session lost");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_records_its_commands_session_and_start_tick() {
    let world = World::new().await;
    // Given a Ready issue and a command that, once its Run recorded its session, writes its own
    // PID and start tick (field 22 of /proc/PID/stat)
    let issue = world.ready_issue("session identity");
    let out_file = world.dir.path().join("cmd-identity");
    let script = format!(
        "i=0; while [ $i -lt 200 ] && ! grep -qs '\"session_start_ticks\"' \
         \"$THIRDSHIFT_STATE_DIR/claims/$THIRDSHIFT_CLAIM_ID.json\"; do sleep 0.05; i=$((i+1)); \
         done; echo \"$$ $(cut -d' ' -f22 /proc/$$/stat)\" > '{}'",
        out_file.display()
    );
    // When a Run runs it
    let n = issue.to_string();
    let out = world
        .exec("h", &["run", "--issue", &n, "--", "sh", "-c", &script])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then the claim record names the command's session and the tick its leader started at, so
    // a later session that gets the same number is told apart
    let claim = world.records(issue).into_iter().find_map(|r| match r {
        Record::Claim(c) => Some(c),
        _ => None,
    });
    let claim = claim.expect("claim record");
    let written = std::fs::read_to_string(&out_file).expect("the command wrote its identity");
    let (pid, ticks) = written.trim().split_once(' ').expect("pid and tick");
    assert_eq!(claim.session_id, Some(pid.parse().unwrap()));
    assert_eq!(claim.session_start_ticks, Some(ticks.parse().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stage_inside_a_run_whose_claim_was_ended_exits_4_with_the_reason() {
    let world = World::new().await;
    let issue = world.ready_issue("ended under the command");
    // Given a Run whose command reports a stage once told to, then exits with stage's code
    let go = world.dir.path().join("go");
    let code = world.dir.path().join("code");
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    let script = format!(
        "i=0; until [ -e '{}' ] || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done; \
         '{bin}' stage implementing; echo $? > '{}'",
        go.display(),
        code.display()
    );
    let n = issue.to_string();
    let run = world
        .cli("h")
        .args(["run", "--issue", &n, "--", "sh", "-c", &script])
        .output();
    let run = tokio::spawn(run);
    wait_until("the Run to record its session", STEP, || {
        world
            .ownership(issue)
            .owner
            .is_some_and(|o| o.record.session_id.is_some())
    })
    .await;
    let owner = world
        .ownership(issue)
        .owner
        .expect("the Run took the Claim");
    // When another pass ends its Claim, and then the command reports its stage
    let end = superseded(issue, &owner.record.claim_id, owner.comment_id);
    world.sim.add_comment(issue, BOT, &end.to_comment());
    std::fs::write(&go, "").unwrap();
    let out = run.await.unwrap().unwrap();
    // Then the command's stage exits 4 and says why, and the claim record keeps its stage
    let written = std::fs::read_to_string(&code).expect("the command wrote stage's code");
    assert_eq!(written.trim(), "4", "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("another Run took the issue"), "{err}");
    let own = world.ownership(issue);
    assert_eq!(own.ended[0].0.record.stage, "running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stage_readers_would_refuse_exits_2_and_the_claim_stays_valid() {
    let world = World::new().await;
    let issue = world.ready_issue("refused stages");
    // Given a Run whose command reports an empty stage (an unset variable) and a stage of
    // 70,000 characters, writes both exit codes, then works on until told to stop
    let go = world.dir.path().join("go");
    let codes = world.dir.path().join("codes");
    let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
    let script = format!(
        "'{bin}' stage \"$UNSET\" 2> '{c}.empty'; a=$?; \
         '{bin}' stage \"$(printf '%070000d' 0)\" 2> '{c}.long'; b=$?; \
         echo \"$a $b\" > '{c}'; i=0; until [ -e '{g}' ] || [ $i -ge 600 ]; do sleep 0.05; \
         i=$((i+1)); done",
        c = codes.display(),
        g = go.display()
    );
    let mut run = start_run(&world, "h", issue, &script).await;
    wait_until("the command to write stage's exit codes", STEP, || {
        codes.exists()
    })
    .await;
    // Then both stages exit 2 and say why nothing was recorded
    let written = std::fs::read_to_string(&codes).expect("the command wrote stage's codes");
    assert_eq!(written.trim(), "2 2");
    let empty = std::fs::read_to_string(codes.with_extension("empty")).unwrap();
    assert!(
        empty.contains("is not recorded") && empty.contains("unchanged"),
        "{empty}"
    );
    let long = std::fs::read_to_string(codes.with_extension("long")).unwrap();
    assert!(long.contains("limit of 256"), "{long}");
    // And the Claim is still valid: its record keeps its stage, a pass sees the Run alive
    let owner = world
        .ownership(issue)
        .owner
        .expect("the Claim is still ours");
    assert_eq!(owner.record.claim_id, run.claim_id);
    assert_eq!(owner.record.stage, "running");
    observe_reconcile(&world, "h").await;
    let out = world.exec("h2", &["status", "--json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    let row = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["issue"] == issue);
    assert_eq!(
        row.expect("the Run is listed")["health"],
        "alive",
        "{json:#}"
    );
    // And a second host's pickup does not take the issue
    let config = config(&world, &[("h2", 2)]);
    let out = pickup(&world, "h2", &config, &[], "true")
        .output()
        .await
        .unwrap();
    assert!(taken_lines(&[("h2".into(), out)]).is_empty());
    assert!(world.labels(issue).contains(&IN_PROGRESS.to_string()));
    assert!(!world.labels(issue).contains(&READY.to_string()));
    std::fs::write(&go, "").unwrap();
    assert_eq!(run.child.wait().await.unwrap().code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_whose_command_cannot_be_started_ends_failed_with_the_labels_as_found() {
    let world = World::new().await;
    let not_exec = world.dir.path().join("agent.sh");
    std::fs::write(&not_exec, "#!/bin/sh\nexit 0\n").unwrap();
    let cases = [
        ("/no/such/agent".to_string(), "No such file"),
        (not_exec.display().to_string(), "ermission denied"),
    ];
    for (program, why) in cases {
        // Given a Ready issue that also carries a label of its own
        let issue = world
            .sim
            .create_issue(BOT, "agent missing", "do it", &[READY, "bug"]);
        // When a Run is asked to start a command that is not there or not executable
        let out = world
            .exec("h", &["run", "--issue", &issue.to_string(), "--", &program])
            .await;
        // Then the Run exits with its own code for it and says so
        assert_eq!(out.status.code(), Some(241), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("could not be started"),
            "{}",
            stderr(&out)
        );
        // And the Claim ended failed at once, saying the command could not be started and why
        let ends = end_records(&world, issue);
        assert_eq!(ends.len(), 1);
        assert_eq!(ends[0].outcome, Outcome::Failed);
        assert!(
            ends[0].reason.contains("could not be started")
                && ends[0].reason.contains(&program)
                && ends[0].reason.contains(why),
            "{}",
            ends[0].reason
        );
        assert!(world.ownership(issue).owner.is_none());
        // And the labels are as the Claim found them
        let mut labels = world.labels(issue);
        labels.sort();
        assert_eq!(labels, vec!["bug".to_string(), READY.to_string()]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_exiting_3_and_a_lost_claim_give_different_exit_codes() {
    let world = World::new().await;
    // Given one Ready issue, and one another host already holds
    let free = world.ready_issue("exits 3");
    let held = world.ready_issue("held");
    let out = world
        .exec("other", &["claim", "--issue", &held.to_string()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // When a Run's command exits 3, and a Run is started on the held issue
    let exits_3 = world
        .exec(
            "h",
            &[
                "run",
                "--issue",
                &free.to_string(),
                "--",
                "sh",
                "-c",
                "exit 3",
            ],
        )
        .await;
    let lost = world
        .exec("h", &["run", "--issue", &held.to_string(), "--", "true"])
        .await;
    // Then the first passes its command's 3 through and the second exits with run's own code
    assert_eq!(exits_3.status.code(), Some(3), "{}", stderr(&exits_3));
    assert_eq!(end_records(&world, free)[0].exit_code, Some(3));
    assert_eq!(lost.status.code(), Some(242), "{}", stderr(&lost));
    assert!(end_records(&world, held).is_empty());
    // And a Run started with wrong arguments exits with run's own usage code, not clap's 2
    let usage = world.exec("h", &["run", "--", "true"]).await;
    assert_eq!(usage.status.code(), Some(244), "{}", stderr(&usage));
    assert!(stderr(&usage).contains("--issue"), "{}", stderr(&usage));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_with_a_value_readers_would_refuse_writes_nothing() {
    let world = World::new().await;
    let issue = world.ready_issue("bad harness");
    // When a claim is asked with an empty Harness (an unset variable), and a Run with a Harness
    // name of two lines
    let claim = world
        .exec(
            "h",
            &["claim", "--issue", &issue.to_string(), "--harness", ""],
        )
        .await;
    let n = issue.to_string();
    let run = world
        .exec(
            "h",
            &["run", "--issue", &n, "--harness", "a\nb", "--", "true"],
        )
        .await;
    // Then both are usage errors naming the field, and nothing was written on the issue
    assert_eq!(claim.status.code(), Some(2), "{}", stderr(&claim));
    assert!(
        stderr(&claim).contains("`harness` must not be empty"),
        "{}",
        stderr(&claim)
    );
    assert_eq!(run.status.code(), Some(244), "{}", stderr(&run));
    assert!(stderr(&run).contains("`harness`"), "{}", stderr(&run));
    assert!(world.records(issue).is_empty());
    assert_eq!(world.labels(issue), vec![READY.to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_own_end_sets_its_labels_though_a_losing_racers_claim_it_read_is_still_open() {
    let world = World::new().await;
    let issue = world.ready_issue("raced");
    let mark = world.dir.path().join("racer-posted");
    // Given a Run that owns the issue, and a later claim from h2 (a racer that lost) posted
    // while the Run works and not yet withdrawn
    let wait = format!(
        "while [ ! -f '{}' ]; do sleep 0.05; done; exit 1",
        mark.display()
    );
    let mut cmd = world.cli("h");
    cmd.args([
        "run",
        "--issue",
        &issue.to_string(),
        "--",
        "sh",
        "-c",
        &wait,
    ]);
    let run = tokio::spawn(cmd.output());
    wait_until("the Run to own the issue", STEP, || {
        world.ownership(issue).owner.is_some()
    })
    .await;
    let me = thirdshift_reconciler::host::ProcessIdentity::current();
    let racer = harness::claim_record(issue, "h2", "m-h2", me, "boot-h2", "c-00000000000000c2");
    world.sim.add_comment(issue, BOT, &racer.to_comment());
    std::fs::write(&mark, "").unwrap();
    // When the Run's command fails before starting anything
    let out = run.await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Then its end puts the issue back in the queue: the racer's claim, which the end read,
    // does not hold the labels back (only a Claim taken after the end read them would)
    let labels = world.labels(issue);
    assert!(!labels.contains(&IN_PROGRESS.to_string()), "{labels:?}");
    assert!(labels.contains(&READY.to_string()), "{labels:?}");
    let ends = end_records(&world, issue);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].outcome, Outcome::Failed);
}
