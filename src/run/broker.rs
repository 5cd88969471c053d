//! Stage changes a Run's command asks for, carried out by the Run itself, so the command needs no
//! GitHub credentials: a Run gives its command neither the App's private key nor its id
//! (`run.rs`), and `stage` inside a Run hands its change to the Run through files in a folder the
//! Run made for its Claim (`THIRDSHIFT_BROKER`): `<key>.req` holds the change, the Run answers
//! with `<key>.res` (the exit code and message `stage` would have had). The Run carries out one
//! change at a time, fenced as every stage change is (`stage.rs`).
//!
//! It does not decide anything about the Claim; outside a Run (or for a Claim taken with
//! `claim`), `stage` talks to GitHub itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::context::Ctx;
use crate::exit::{code_of, Exit};
use crate::host::ProcessIdentity;
use crate::run::stage::{stage, StageUpdate};

/// The folder a Run serves its command's stage changes from.
pub const BROKER_VAR: &str = "THIRDSHIFT_BROKER";
/// The Run's PID and start ticks (`PID:TICKS`): an asker stops waiting once that process is gone.
pub const RUN_VAR: &str = "THIRDSHIFT_RUN";

/// A stage change as the command asked for it.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    name: String,
    agent_session: Option<String>,
    log: Option<String>,
    worktree: Option<String>,
    #[serde(default)]
    branch: Option<String>,
}

/// What `stage` would have ended with.
#[derive(Debug, Serialize, Deserialize)]
struct Answer {
    code: i32,
    message: String,
}

/// The folder of `claim_id`'s stage changes under the state folder `root`.
pub fn folder(root: &Path, claim_id: &str) -> PathBuf {
    root.join("broker").join(claim_id)
}

/// Makes the Run's folder, empty.
pub fn open(dir: &Path) -> anyhow::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    if let Some(parent) = dir.parent() {
        crate::host::private_dir(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    crate::host::private_dir(dir).with_context(|| format!("creating {}", dir.display()))
}

/// The folder to hand `claim_id`'s stage changes to, when this process runs inside that Claim's
/// Run (the Run set both variables for its command).
pub fn inside_run(claim_id: &str) -> Option<PathBuf> {
    let ours = std::env::var("THIRDSHIFT_CLAIM_ID").is_ok_and(|id| id == claim_id);
    let dir = std::env::var_os(BROKER_VAR).filter(|d| !d.is_empty())?;
    ours.then(|| PathBuf::from(dir))
}

/// Hands `update` to the Run serving `dir` and waits for its answer: `Ok` when recorded, else
/// the error `stage` would have returned (exit 4 when the Claim is no longer ours). Fails when
/// the Run is gone before it answered.
pub async fn ask(dir: &Path, update: &StageUpdate) -> anyhow::Result<()> {
    let request = Request {
        name: update.name.clone(),
        agent_session: update.agent_session.clone(),
        log: update.log.clone(),
        worktree: update.worktree.clone(),
        branch: update.branch.clone(),
    };
    let me = ProcessIdentity::current();
    let key = format!("{:020}-{}", chrono::Utc::now().timestamp_micros(), me.pid);
    let tmp = dir.join(format!("{key}.tmp"));
    crate::host::write_private(&tmp, &serde_json::to_vec(&request)?)
        .with_context(|| format!("writing the stage change to {}", dir.display()))?;
    std::fs::rename(&tmp, dir.join(format!("{key}.req")))?;
    let answer_file = dir.join(format!("{key}.res"));
    let run = run_identity();
    loop {
        if let Ok(text) = std::fs::read(&answer_file) {
            let _ = std::fs::remove_file(&answer_file);
            let answer: Answer =
                serde_json::from_slice(&text).context("reading the Run's answer")?;
            return match answer.code {
                0 => Ok(()),
                code => Err(Exit {
                    code,
                    message: answer.message,
                }
                .into()),
            };
        }
        if run.is_some_and(|r| ProcessIdentity::of(r.pid).is_none_or(|p| p != r)) {
            let _ = std::fs::remove_file(dir.join(format!("{key}.req")));
            anyhow::bail!(
                "the Run that holds this Claim is gone; the stage change was not recorded"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The Run's identity from [`RUN_VAR`].
fn run_identity() -> Option<ProcessIdentity> {
    let text = std::env::var(RUN_VAR).ok()?;
    let (pid, ticks) = text.split_once(':')?;
    Some(ProcessIdentity {
        pid: pid.parse().ok()?,
        start_ticks: ticks.parse().ok()?,
    })
}

/// Carries out every stage change waiting in `dir` for `claim_id`, oldest first, and answers
/// each. A request that cannot be read is answered with an error, never acted on.
pub async fn serve(ctx: &Ctx, claim_id: &str, dir: &Path) {
    for request in waiting(dir) {
        let answer = match read_request(&request) {
            Ok(update) => match stage(ctx, claim_id, &update).await {
                Ok(()) => Answer {
                    code: 0,
                    message: String::new(),
                },
                Err(e) => Answer {
                    code: code_of(&e),
                    message: format!("{e:#}"),
                },
            },
            Err(e) => Answer {
                code: crate::exit::USAGE,
                message: format!("{e:#}"),
            },
        };
        if let Err(e) = write_answer(&request, &answer) {
            tracing::warn!("could not answer {}: {e:#}", request.display());
        }
    }
}

/// The requests waiting in `dir`, oldest first (keys start with the time they were asked).
fn waiting(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "req"))
        .collect();
    out.sort();
    out
}

fn read_request(path: &Path) -> anyhow::Result<StageUpdate> {
    let text = std::fs::read(path).context("reading a stage change")?;
    let r: Request = serde_json::from_slice(&text).context("a stage change that is not ours")?;
    Ok(StageUpdate {
        name: r.name,
        agent_session: r.agent_session,
        log: r.log,
        worktree: r.worktree,
        branch: r.branch,
        ..StageUpdate::default()
    })
}

/// Writes the answer next to the request (atomically), then removes the request.
fn write_answer(request: &Path, answer: &Answer) -> anyhow::Result<()> {
    let tmp = request.with_extension("restmp");
    crate::host::write_private(&tmp, &serde_json::to_vec(answer)?)?;
    std::fs::rename(&tmp, request.with_extension("res"))?;
    std::fs::remove_file(request)?;
    Ok(())
}
