//! thirdshift's own Runs carried on by thirdshift's own Pickup (`thirdshift.on_dead: continue`),
//! with the real thirdshift 0.19.0 (as `thirdshift_real.rs`, whose hosts and stand-ins it uses):
//! a Ticket run killed outright has its work kept on its Issue branch, its worktree moved aside
//! and its issue handed back the way thirdshift's Pickup recognises a hand-back; the next real
//! Pickup pass then continues that branch in the path the dead Run had.

use crate::harness::*;
use crate::support::origin::{git, Origin};
use crate::thirdshift_real::{kill_group, on_origin, until_gone, until_harness, Groups, Host};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use thirdshift_reconciler::protocol::record::Outcome;

/// How long the real Pickup may take from its start to its Harness on a loaded CI machine.
const TO_CONTINUATION: Duration = Duration::from_secs(120);

/// Every Harness session the Claude stand-in on `host` started, oldest first: its PID and the
/// folder it ran in.
fn sessions(host: &Host) -> Vec<(u32, PathBuf)> {
    let log = std::fs::read_to_string(host.home.join("claude.log")).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains("stream-json"))
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let pid = cols.next()?.parse().ok()?;
            Some((pid, PathBuf::from(cols.next()?)))
        })
        .collect()
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_real_ticket_run_is_handed_back_and_the_real_pickup_continues_its_branch() {
    // Given a host whose thirdshift Commands carry on when they die
    let world = World::new().await;
    let origin = Origin::new();
    world.sim.set_git_origin(origin.bare.clone());
    let a = Host::new(&world, &origin, "ha");
    let mut config = std::fs::read_to_string(&a.config).unwrap();
    config.push_str("  on_dead: continue\n");
    std::fs::write(&a.config, config).unwrap();
    let issue = world.ready_issue("killed mid-implementation, to be carried on");
    // And a real thirdshift Ticket run with its Harness at work, which left a note of its own
    let mut run = a.start(&world, issue);
    let mut groups = Groups(vec![run.id()]);
    let (harness, _) = until_harness(&a, Instant::now()).await;
    groups.0.push(harness);
    let worktree = canonical(&a.worktree(issue));
    std::fs::write(
        worktree.join("scratch.md"),
        "what the agent meant to do next\n",
    )
    .unwrap();
    // When thirdshift and its Harness are killed outright, and the host passes once
    kill_group(run.id());
    run.wait().unwrap();
    kill_group(harness);
    until_gone(harness).await;
    a.pass(&world).await;
    // Then the dead Run's work is on its Issue branch on origin
    let branch = format!("issue-{issue}");
    let pushed = on_origin(&origin, &format!("refs/heads/{branch}"))
        .unwrap_or_else(|| panic!("{branch} is not on origin; {}", a.said()));
    let files = git(&origin.bare, &["ls-tree", "--name-only", &branch]);
    assert!(
        files.contains("half-done.txt") && files.contains("scratch.md"),
        "{files}"
    );
    // And its end record hands the issue back, naming where the worktree went
    let ends = world.ownership(issue).adopted_ends;
    assert_eq!(ends.len(), 1, "one trusted end record; {}", a.said());
    let end = &ends[0].record;
    assert_eq!(end.outcome, Outcome::Continued, "{}", end.reason);
    let kept = end.kept.as_ref().expect("what its host kept");
    let moved = PathBuf::from(kept.moved_to.as_deref().expect("where the worktree went"));
    // And the moved-aside worktree still holds everything the dead Run left, at the pushed commit
    assert!(!worktree.exists(), "the dead Run's path is free");
    let left = |f: &str| std::fs::read_to_string(moved.join(f)).unwrap();
    assert_eq!(left("half-done.txt"), "half-written by the agent\n");
    assert_eq!(left("scratch.md"), "what the agent meant to do next\n");
    assert_eq!(git(&moved, &["rev-parse", "HEAD"]), pushed);
    // And it names the agent session and the command that resumes it where the work now is
    let session = format!("standin-session-{harness}");
    assert_eq!(end.session.as_deref(), Some(session.as_str()));
    let resume = format!("cd {} && claude --resume {session}", moved.display());
    assert_eq!(end.resume.as_deref(), Some(resume.as_str()));
    // And the hand-back is in thirdshift's order: in-progress off, then ready-for-agent on
    let history: Vec<String> = world
        .sim
        .label_history(issue)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    let last_two = &history[history.len() - 2..];
    assert_eq!(
        last_two,
        [
            format!("-{IN_PROGRESS} by {BOT}"),
            format!("+{READY} by {BOT}")
        ],
        "{history:?}"
    );
    assert_eq!(world.labels(issue), [READY]);

    // When the issue has settled (thirdshift's Pickup waits 5 minutes after a ready label) and
    // the real thirdshift Pickup passes on the same host
    world.sim.backdate(Duration::from_secs(600));
    let mut pickup = a.start_with(&world, &["pickup"]);
    groups.0.push(pickup.id());
    let deadline = Instant::now() + TO_CONTINUATION;
    let (pid, cwd) = loop {
        if let Some(s) = sessions(&a).get(1) {
            break s.clone();
        }
        assert!(Instant::now() < deadline, "no Continuation; {}", a.said());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    groups.0.push(pid);
    // Then it continues that branch (not a fresh one) in the path the dead Run had
    assert_eq!(canonical(&cwd), worktree, "{}", a.said());
    assert_eq!(git(&worktree, &["branch", "--show-current"]), branch);
    let base = git(&worktree, &["merge-base", "HEAD", &pushed]);
    assert_eq!(
        base, pushed,
        "the Continuation builds on the dead Run's work"
    );
    assert!(worktree.join("scratch.md").is_file());
    let fresh = on_origin(&origin, &format!("refs/heads/{branch}-branch-2"));
    assert_eq!(fresh, None, "no fresh Issue branch");
    assert_eq!(world.labels(issue), [IN_PROGRESS]);
    drop(groups);
    pickup.wait().unwrap();
}
