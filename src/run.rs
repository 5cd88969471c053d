//! A Run: take the Claim, start CMD in a new session with the Claim in its environment, record
//! the session in the claim record, and end the Claim when CMD exits (done, or failed with its
//! exit status). SIGINT, SIGTERM and SIGHUP to the Run are forwarded to CMD's whole session, or
//! to CMD alone (`run.forward: leader`); after the grace (`run.kill_grace_secs`, both per kind)
//! the session is killed, and the issue is handed back. A Run that ends failed or
//! handed back keeps its worktree's work first (`ending::keep`: commit and push once its command's
//! processes are gone), and its end record says what was kept.
//! Taking and ending the Claim live in `run::claim` and `run::release`; this file supervises.

pub mod broker;
pub mod claim;
pub mod release;
pub mod stage;

use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::ExitStatus;
use std::time::Duration;

use anyhow::Context as _;
use tokio::signal::unix::{signal, SignalKind};

use crate::context::Ctx;
use crate::ending::Ending;
use crate::exit;
use crate::github::{APP_ID_VAR, APP_KEY_VAR, INSTALLATION_ID_VAR, TOKEN_VARS};
use crate::host::ProcessIdentity;
use crate::host::{session_members, signal_session};
use crate::protocol::config::{Forward, StopPolicy};
use crate::protocol::record::{Cause, OomMark, Outcome};
use crate::run::stage::{stage, StageUpdate};
use claim::{take, ClaimRequest, Held, STAGE_RUNNING};
use release::{end_own, not_started, say};

/// How CMD's life ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// CMD exited by itself.
    Exited(ExitStatus),
    /// The Run was asked to stop with signal `sig` and stopped CMD's session; `killed`: it did
    /// not stop within its grace and was killed (SIGKILL), by the Run or by its host.
    Stopped { sig: i32, killed: bool },
}

/// How a Run ended, for its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunExit {
    /// The Run's exit code.
    pub code: i32,
    /// The issue, when its command was killed (a signal or the OOM killer): the live view lists
    /// that end among the last recoveries with its cause, so the caller refreshes it.
    pub killed_on: Option<u64>,
}

/// Runs CMD under a Claim on `req.issue`; returns how the Run ended.
pub async fn run(
    ctx: &Ctx,
    req: &ClaimRequest,
    cmd: &[String],
    quiet: bool,
) -> anyhow::Result<RunExit> {
    let held = take(ctx, req).await?;
    let (issue, claim_id) = (held.record.issue, &held.record.claim_id);
    say(
        quiet,
        &crate::text::reasons::run_holds(issue, claim_id, &held.comment_url),
    );
    let watched = crate::context::companion::Watched::Run {
        claim_id: &held.record.claim_id,
    };
    crate::context::companion::start(ctx, watched);
    let mut signals = Signals::install()?;
    let oom_at_start = crate::host::oom_mark(Some(&held.record.claim_id));
    let mut child = match spawn(ctx, &held, cmd) {
        Ok(child) => child,
        Err(e) => {
            let code = not_started(ctx, &held, &e, quiet).await?;
            return Ok(RunExit {
                code,
                killed_on: None,
            });
        }
    };
    let sid = child
        .id()
        .context("CMD exited before it could be watched")?;
    let update = StageUpdate {
        name: STAGE_RUNNING.to_string(),
        session_id: Some(sid),
        session_start_ticks: ProcessIdentity::of(sid).map(|p| p.start_ticks),
        ..StageUpdate::default()
    };
    if let Err(e) = stage(ctx, &held.record.claim_id, &update).await {
        tracing::warn!("could not record CMD's session in the claim: {e:#}");
    }
    let watch = Watch {
        sid,
        claim_id: &held.record.claim_id,
        broker: &broker::folder(ctx.state.root(), &held.record.claim_id),
        policy: ctx.config.run.for_kind(held.record.kind),
    };
    let finish = supervise(ctx, &mut child, &watch, &mut signals).await?;
    let _ = std::fs::remove_dir_all(watch.broker);
    let oom = [oom_at_start, crate::host::oom_mark(None)];
    let (mut ending, code) = ending_of(finish, &oom);
    if let Some(reason) = salvage_reason(&ending) {
        ending.kept = crate::ending::own_run(ctx, &held.record.claim_id, sid, reason).await?;
    }
    end_own(ctx, &held, &ending, quiet).await?;
    let killed = Cause::killed_the_command(ending.outcome, ending.cause.as_ref());
    Ok(RunExit {
        code,
        killed_on: killed.then_some(issue),
    })
}

/// The reason for the salvage commit of a Run that ended this way, when its worktree is
/// salvaged at all: a failed Run and one stopped by a signal (handed back, or cancelled when a
/// request is pending) keep their work; a Run that finished (`done`) delivers its own.
fn salvage_reason(ending: &Ending) -> Option<String> {
    use crate::text::salvage::{reason_failed, reason_stopped};
    match (ending.outcome, ending.signal) {
        (Outcome::Failed, _) => Some(reason_failed(ending.exit_code, ending.signal)),
        (Outcome::HandedBack, Some(sig)) => Some(reason_stopped(sig)),
        _ => None,
    }
}

/// Starts CMD in its own session. Its environment names the Claim and the folder its `stage`
/// changes go through (`broker.rs`), and carries none of the App's credentials.
fn spawn(ctx: &Ctx, held: &Held, cmd: &[String]) -> anyhow::Result<tokio::process::Child> {
    let (program, args) = cmd.split_first().context("no command given after `--`")?;
    let dir = broker::folder(ctx.state.root(), &held.record.claim_id);
    broker::open(&dir)?;
    let me = ProcessIdentity::current();
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .env_remove(APP_ID_VAR)
        .env_remove(APP_KEY_VAR)
        .env_remove(INSTALLATION_ID_VAR)
        .envs(crate::github::taken(&TOKEN_VARS))
        .env(broker::BROKER_VAR, &dir)
        .env(broker::RUN_VAR, format!("{}:{}", me.pid, me.start_ticks))
        .env("THIRDSHIFT_CLAIM_ID", &held.record.claim_id)
        .env("THIRDSHIFT_ISSUE", held.record.issue.to_string())
        .env("THIRDSHIFT_CLAIM_COMMENT_ID", held.comment_id.to_string())
        .env("THIRDSHIFT_HOST", &ctx.host.host)
        .env("THIRDSHIFT_STATE_DIR", ctx.state.root())
        .env("GITHUB_REPOSITORY", ctx.client.repo().to_string())
        .env("GITHUB_API_URL", ctx.client.api_url());
    on_path(&mut command);
    if let Some(c) = &held.resume {
        let resume = crate::protocol::resume::resume_command(
            c.harness.as_deref(),
            c.agent_session.as_deref(),
            c.worktree.as_deref(),
        );
        let pairs = [
            ("THIRDSHIFT_RESUME_SESSION", &c.agent_session),
            ("THIRDSHIFT_RESUME_HARNESS", &c.harness),
            ("THIRDSHIFT_RESUME_WORKTREE", &c.worktree),
            ("THIRDSHIFT_RESUME_COMMAND", &resume),
            ("THIRDSHIFT_BRANCH", &c.branch),
        ];
        for (key, value) in pairs {
            if let Some(v) = value {
                command.env(key, v);
            }
        }
    }
    // SAFETY: setsid is async-signal-safe; it makes CMD the leader of a new session and process
    // group, so the whole session can be signalled and found again by its id.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = tokio::process::Command::from(command)
        .spawn()
        .with_context(|| format!("`{program}`"))?;
    tracing::info!(claim = %held.record.claim_id, pid = child.id(), "CMD started");
    Ok(child)
}

/// Gives CMD this binary: its path as `THIRDSHIFT_BIN`, and its folder first on `PATH`, so
/// `thirdshift-reconciler stage …` works from any Run, `cargo run` included.
fn on_path(command: &mut std::process::Command) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    command.env("THIRDSHIFT_BIN", &exe);
    if let Ok(path) = std::env::join_paths(crate::host::command_path(&exe)) {
        command.env("PATH", path);
    }
}

/// The signals that make a Run hand its issue back.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> anyhow::Result<Signals> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.int.recv() => libc::SIGINT,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

/// What `supervise` watches: CMD's session, and the folder its stage changes come through; and
/// how it stops CMD when asked to (`run.forward`, `run.kill_grace_secs`, per kind).
struct Watch<'a> {
    sid: u32,
    claim_id: &'a str,
    broker: &'a std::path::Path,
    policy: StopPolicy,
}

/// Waits for CMD to exit, carrying out its stage changes meanwhile (`broker.rs`), or for a
/// signal, which it forwards to CMD's session, or to CMD alone with `forward: leader` (then
/// grace, then KILL to the whole session).
async fn supervise(
    ctx: &Ctx,
    child: &mut tokio::process::Child,
    watch: &Watch<'_>,
    signals: &mut Signals,
) -> anyhow::Result<Finish> {
    let (sid, grace_secs) = (watch.sid, watch.policy.kill_grace_secs);
    let mut tick = tokio::time::interval(Duration::from_millis(25));
    let sig = loop {
        // A signal first: a stop asked of the Run stays a stop when CMD dies of it at once.
        tokio::select! {
            biased;
            sig = signals.next() => break sig,
            status = child.wait() => {
                let status = status?;
                match stop_behind(status, signals).await {
                    Some(sig) => break sig,
                    None => return Ok(Finish::Exited(status)),
                }
            }
            _ = tick.tick() => broker::serve(ctx, watch.claim_id, watch.broker).await,
        }
    };
    forward(sid, sig, watch.policy.forward);
    let grace = Duration::from_secs(grace_secs);
    let status = match tokio::time::timeout(grace, child.wait()).await {
        Ok(status) => status?,
        Err(_) => {
            tracing::warn!(
                session = sid,
                "CMD did not stop within {grace_secs}s; killing its session"
            );
            signal_session(sid, libc::SIGKILL);
            child.wait().await?
        }
    };
    // Killed by this Run after its grace, or by its host's stop after the host's grace
    let killed = status.signal() == Some(libc::SIGKILL);
    let stragglers_killed = stop_stragglers(sid, grace).await;
    Ok(Finish::Stopped {
        sig,
        killed: killed || stragglers_killed,
    })
}

/// Sends `sig` to CMD's session, or only to CMD (the session's leader, whose PID is the session
/// id: not reaped yet, so not reused) with `forward: leader`.
fn forward(sid: u32, sig: i32, to: Forward) {
    tracing::info!(
        signal = sig,
        session = sid,
        to = to.as_str(),
        "forwarding the stop"
    );
    match to {
        Forward::Session => {
            signal_session(sid, sig);
        }
        Forward::Leader => {
            // SAFETY: kill(2) of CMD, this Run's own unreaped child.
            unsafe { libc::kill(sid as libc::pid_t, sig) };
        }
    }
}

/// When CMD died of a stop signal, the signal the Run was sent with it (a stop on a cancel sends
/// the Run its signal first, then the session): the Run's own may reach it a moment after its
/// command's death, and the stop must still count as a stop. `None` after a short wait.
async fn stop_behind(status: ExitStatus, signals: &mut Signals) -> Option<i32> {
    const STOPS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];
    status.signal().filter(|s| STOPS.contains(s))?;
    tokio::time::timeout(Duration::from_millis(250), signals.next())
        .await
        .ok()
}

/// Waits for the rest of the session to leave after CMD exited; kills what remains after
/// `grace`. Returns whether it had to.
async fn stop_stragglers(sid: u32, grace: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + grace;
    while !session_members(sid).is_empty() {
        if tokio::time::Instant::now() >= deadline {
            signal_session(sid, libc::SIGKILL);
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The end record and the Run's exit code for how CMD finished; `oom` are the OOM marks taken
/// when CMD started and when it finished, which tell whether the OOM killer killed it.
pub fn ending_of(finish: Finish, oom: &[Option<OomMark>; 2]) -> (Ending, i32) {
    match finish {
        Finish::Exited(status) if status.success() => (
            Ending {
                outcome: Outcome::Done,
                reason: "the Run's command exited 0".to_string(),
                exit_code: Some(0),
                signal: None,
                cause: None,
                kept: None,
                started: true,
            },
            0,
        ),
        Finish::Exited(status) => {
            let code = status.code();
            let sig = status.signal();
            let reason = match (code, sig) {
                (Some(c), _) => format!("the Run's command exited with status {c}"),
                (None, Some(s)) => format!("the Run's command was killed by signal {s}"),
                _ => "the Run's command failed".to_string(),
            };
            let status = code.unwrap_or_else(|| 128 + sig.unwrap_or(0));
            let ending = Ending {
                outcome: Outcome::Failed,
                reason,
                exit_code: code,
                signal: sig,
                cause: sig.map(|s| Cause::of_signal(s, oom[0].as_ref(), oom[1].as_ref())),
                kept: None,
                started: true,
            };
            (ending, exit::run::of_cmd(status))
        }
        Finish::Stopped { sig, killed } => (
            Ending {
                outcome: Outcome::HandedBack,
                reason: crate::text::reasons::stopped_reason(sig, killed),
                exit_code: None,
                signal: Some(sig),
                cause: Some(Cause::of_signal(sig, oom[0].as_ref(), oom[1].as_ref())),
                kept: None,
                started: true,
            },
            exit::run::of_cmd(128 + sig),
        ),
    }
}
