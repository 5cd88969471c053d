//! Starting this binary again as a process of its own, for `pickup`'s Runs and each Run's
//! companion: the repository, API, host, state folder and config of this context as global
//! options, a new session (so no terminal hang-up, no signal to this process's group and no CI
//! job cleanup that follows this process reaches it), stdin from /dev/null, output appended to a
//! private log file, the credentials handed over an inherited socket (`github::hand_over`, never
//! the environment or arguments),
//! and no `RUNNER_TRACKING_ID`. The caller adds the command and its arguments. `program` starts
//! another program the same way, without this context's options or credentials (`thirdshift
//! stop` for a cancelled thirdshift Command).
//!
//! It decides nothing and waits for nothing; callers do.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context as _;

use crate::context::Ctx;

/// Another program, set up as above (a new session, stdin from /dev/null, output appended to
/// `log`, no `RUNNER_TRACKING_ID`) but with none of this context's options or credentials.
pub fn program(program: &Path, log: &Path) -> anyhow::Result<Command> {
    let mut command = Command::new(program);
    to_log(&mut command, log)?;
    new_session(&mut command);
    Ok(command)
}

fn to_log(command: &mut Command, log: &Path) -> anyhow::Result<()> {
    let dir = log.parent().expect("a log folder");
    crate::host::private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    let out = crate::host::append_private(log)
        .with_context(|| format!("opening the log {}", log.display()))?;
    command
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .env_remove("RUNNER_TRACKING_ID");
    Ok(())
}

fn new_session(command: &mut Command) {
    // SAFETY: setsid is async-signal-safe; the child leads a new session.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `exe --repo .. --api-url .. --host .. --state-dir .. [--config ..]`, set up as above, its
/// output appended to `log` (created 0600 in a 0700 folder).
pub fn command(
    ctx: &Ctx,
    exe: &Path,
    config: Option<&Path>,
    log: &Path,
) -> anyhow::Result<Command> {
    let mut command = Command::new(exe);
    command
        .arg("--repo")
        .arg(ctx.client.repo().to_string())
        .arg("--api-url")
        .arg(ctx.client.api_url())
        .arg("--host")
        .arg(&ctx.host.host)
        .arg("--state-dir")
        .arg(ctx.state.root());
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    to_log(&mut command, log)?;
    let credentials = crate::github::taken(&crate::github::CREDENTIAL_VARS);
    crate::github::hand_over(&mut command, &credentials).context("handing over credentials")?;
    new_session(&mut command);
    Ok(command)
}
