//! Why a Run died, in its end record (`cause`), from real kernel facts: a Run in a memory cgroup
//! made by the test with a 64 MiB limit (root in CI), whose command the kernel's OOM killer
//! kills, or that someone kills with SIGKILL; and a Claim of a previous boot. cgroup v1 (the
//! `memory` hierarchy) and v2 are both made; a machine where neither can be made fails the
//! test, never skips it.

use crate::harness::*;

use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use thirdshift_reconciler::protocol::record::{Cause, OomSeen, Outcome};

/// A memory cgroup made for one test below this process's own, removed when dropped.
struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    /// A child of this process's memory cgroup limited to `limit` bytes, without swap.
    fn limited(name: &str, limit: u64) -> MemoryCgroup {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let v1 = own.lines().find_map(|l| {
            let mut p = l.splitn(3, ':');
            let (_, ctl, path) = (p.next()?, p.next()?, p.next()?);
            ctl.split(',')
                .any(|c| c == "memory")
                .then(|| path.to_string())
        });
        let name = format!("{name}-{}", std::process::id());
        let dir = match &v1 {
            Some(path) => Path::new("/sys/fs/cgroup/memory")
                .join(path.trim_start_matches('/'))
                .join(name),
            None => {
                let path = own.lines().find_map(|l| l.strip_prefix("0::")).unwrap();
                Path::new("/sys/fs/cgroup")
                    .join(path.trim_start_matches('/'))
                    .join(name)
            }
        };
        std::fs::create_dir(&dir).unwrap_or_else(|e| {
            panic!(
                "this test makes a memory cgroup (root in CI): {}: {e}",
                dir.display()
            )
        });
        let write = |file: &str, value: &str| {
            std::fs::write(dir.join(file), value)
                .unwrap_or_else(|e| panic!("{}/{file}: {e}", dir.display()))
        };
        if v1.is_some() {
            write("memory.limit_in_bytes", &limit.to_string());
            if dir.join("memory.memsw.limit_in_bytes").exists() {
                write("memory.memsw.limit_in_bytes", &limit.to_string());
            }
        } else {
            write("memory.max", &limit.to_string());
            write("memory.swap.max", "0");
        }
        MemoryCgroup { dir }
    }

    /// Starts `run --issue N -- sh -c script` of host h1 inside this cgroup.
    fn start_run(&self, world: &World, issue: u64, script: &str) -> tokio::process::Child {
        let procs =
            std::ffi::CString::new(self.dir.join("cgroup.procs").as_os_str().as_bytes()).unwrap();
        let mut cmd = run_command(world, "h1", issue, &[], script);
        // SAFETY: between fork and exec only async-signal-safe calls (open, write, close) on
        // memory made before the fork: the child moves itself into the cgroup.
        unsafe {
            cmd.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, b"0\n".as_ptr().cast(), 2);
                libc::close(fd);
                if written != 2 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.spawn().expect("run starts")
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Waits for the Run to exit; its exit code.
async fn exit_of(mut run: tokio::process::Child) -> Option<i32> {
    tokio::time::timeout(STEP, run.wait())
        .await
        .expect("the Run ends")
        .unwrap()
        .code()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_command_the_oom_killer_killed_says_so() {
    // Given a Run in a memory cgroup limited to 64 MiB, whose command eats memory without end
    let world = World::new().await;
    let issue = world.ready_issue("a memory hog");
    // (on a host whose observe has made the registry issue, where the live view lives)
    observe_reconcile(&world, "h1").await;
    let cgroup = MemoryCgroup::limited("thirdshift-oom", 64 << 20);
    let run = cgroup.start_run(&world, issue, "exec tail /dev/zero");
    // When the kernel's OOM killer kills the command and the Run ends its Claim
    exit_of(run).await;
    // Then the end record names the OOM killer, with the cgroup's count before and after
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].outcome, Outcome::Failed);
    assert_eq!(ended[0].signal, Some(libc::SIGKILL));
    let Some(Cause::OomKiller {
        counter,
        before,
        after,
    }) = &ended[0].cause
    else {
        panic!("{:?}", ended[0].cause);
    };
    assert!(after > before, "{before} -> {after}");
    assert!(
        counter.starts_with(cgroup.dir.to_str().unwrap()),
        "{counter}"
    );
    // And its comment says it in words
    let comment = world.sim.comments(issue).last().unwrap().body.clone();
    assert!(
        comment.contains("- Cause: the kernel's OOM killer"),
        "{comment}"
    );
    // And `status --json` lists it among the last recoveries with its cause
    let out = world.exec("h1", &["status", "--json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = json["recoveries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["issue"] == issue)
        .cloned()
        .unwrap_or_else(|| panic!("not listed: {json:#}"));
    assert_eq!(listed["outcome"], "failed", "{listed:#}");
    assert_eq!(listed["cause"]["kind"], "oom_killer", "{listed:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_command_someone_killed_names_the_signal_and_not_the_oom_killer() {
    // Given the same Run in the same kind of cgroup, its command asleep
    let world = World::new().await;
    let issue = world.ready_issue("killed from outside");
    let cgroup = MemoryCgroup::limited("thirdshift-kill", 64 << 20);
    let run = cgroup.start_run(&world, issue, "exec sleep 600");
    let mut sid = None;
    wait_until("the Run to record its command's session", STEP, || {
        sid = world
            .ownership(issue)
            .owner
            .and_then(|o| o.record.session_id);
        sid.is_some()
    })
    .await;
    // When someone kills its command with SIGKILL
    // SAFETY: kill(2) on the command this test's Run started.
    assert_eq!(unsafe { libc::kill(sid.unwrap() as i32, libc::SIGKILL) }, 0);
    exit_of(run).await;
    // Then the end record names the signal, and says the OOM killer did not act
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1);
    let want = Cause::Signal {
        signal: libc::SIGKILL,
        oom: OomSeen::NotIt,
    };
    assert_eq!(ended[0].cause.as_ref(), Some(&want));
    let comment = world.sim.comments(issue).last().unwrap().body.clone();
    assert!(comment.contains("not the OOM killer"), "{comment}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_of_a_previous_boot_says_the_host_rebooted() {
    // Given a Claim host h1 took in an earlier boot, its PID alive in this one
    let world = World::new().await;
    let issue = world.ready_issue("claimed before the reboot");
    let alive = thirdshift_reconciler::host::ProcessIdentity::current();
    posted_claim(&world, issue, "h1", alive, "00000000-earlier-boot");
    // When h1 passes
    observe_reconcile(&world, "h1").await;
    // Then the end record says the host rebooted, and when its new boot began
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1);
    let Some(Cause::Reboot { booted_at }) = &ended[0].cause else {
        panic!("{:?}", ended[0].cause);
    };
    let booted = thirdshift_reconciler::host::boot_time().expect("this boot's time");
    let off = (booted_at.expect("the new boot's time") - booted)
        .num_seconds()
        .abs();
    assert!(off <= 1, "{booted_at:?} vs {booted}");
    let comment = world.sim.comments(issue).last().unwrap().body.clone();
    assert!(comment.contains("- Cause: the host rebooted"), "{comment}");
}
