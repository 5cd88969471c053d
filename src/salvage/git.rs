//! Running `git` for salvage, the one way every salvage step does it: `git -C <worktree>` from a
//! cleared environment with a short allowlist (no credential of ours reaches a program the
//! worktree's configuration makes git start, and a `GIT_DIR` from whoever started `observe` does
//! not redirect us to another repository), `LC_ALL=C` so messages can be matched, no terminal
//! prompts, hooks, fsmonitor and automatic gc off, stdin closed, and a deadline after which the
//! whole process group (git and any ssh or credential helper it started) is killed.
//!
//! It does not interpret results beyond "exit 0 or not"; the caller decides what a failure means.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Deadline for commands that only touch the local repository.
pub(crate) const LOCAL_TIMEOUT: Duration = Duration::from_secs(300);
/// Deadline for commands that talk to the remote (fetch, push): a hanging remote must not block
/// `observe` for ever.
pub(crate) const NETWORK_TIMEOUT: Duration = Duration::from_secs(60);

/// The only variables a git command of ours inherits: where to find programs and the user's own
/// git configuration, and how to reach a remote (ssh agent, askpass, proxy, CA). Everything else
/// (a token, an App key, `GIT_DIR` from whoever started `observe`) stays out: the Run's worktree
/// is the agent's, and its configuration can make git start programs (`core.fsmonitor`, filters,
/// `core.sshCommand`) that see whatever git's environment holds.
const KEPT_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
];

/// Options given to every command, before the subcommand.
const GLOBAL_OPTIONS: &[&str] = &[
    "--no-optional-locks",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
];

/// A git work tree to run commands in.
pub(crate) struct Git {
    dir: PathBuf,
}

impl Git {
    pub(crate) fn new(dir: &Path) -> Self {
        Git {
            dir: dir.to_path_buf(),
        }
    }

    /// Runs a local command; its stdout on exit 0, else a message naming the command.
    pub(crate) fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<String, String> {
        self.run_within(args, LOCAL_TIMEOUT)
    }

    /// Runs a command with the given deadline; its stdout on exit 0, else a message.
    pub(crate) fn run_within<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        timeout: Duration,
    ) -> Result<String, String> {
        let name = subcommand(args);
        let out = output(self.command(args), timeout).map_err(|e| format!("git {name}: {e}"))?;
        if out.success {
            Ok(out.stdout)
        } else {
            Err(format!("git {name} failed: {}", summarize(&out.stderr)))
        }
    }

    /// The full sha `rev` names, if it names a commit, tree or blob that exists.
    pub(super) fn sha(&self, rev: &str) -> Option<String> {
        let out = self
            .run(&["rev-parse", "--verify", "--quiet", "--end-of-options", rev])
            .ok()?;
        let sha = out.trim();
        (!sha.is_empty()).then(|| sha.to_string())
    }

    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new("git");
        cmd.env_clear().envs(kept(std::env::vars_os()));
        cmd.env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .args(GLOBAL_OPTIONS)
            .arg("-C")
            .arg(&self.dir)
            .args(args);
        cmd
    }
}

/// The variables of `parent` a git command keeps ([`KEPT_VARIABLES`]).
fn kept(
    parent: impl Iterator<Item = (OsString, OsString)>,
) -> impl Iterator<Item = (OsString, OsString)> {
    parent.filter(|(key, _)| key.to_str().is_some_and(|k| KEPT_VARIABLES.contains(&k)))
}

/// The first argument that is not an option or an option's value, for messages.
fn subcommand<S: AsRef<OsStr>>(args: &[S]) -> String {
    let mut skip = false;
    for arg in args.iter().map(|a| a.as_ref().to_string_lossy()) {
        if std::mem::take(&mut skip) {
            continue;
        }
        if arg == "-c" {
            skip = true;
        } else if !arg.starts_with('-') {
            return arg.into_owned();
        }
    }
    String::new()
}

/// Git's stderr in one line for a person: hints dropped, at most a few hundred characters.
pub(super) fn summarize(stderr: &str) -> String {
    let text = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .collect::<Vec<_>>()
        .join(" / ");
    let text = if text.is_empty() {
        "no message".to_string()
    } else {
        text
    };
    match text.char_indices().nth(400) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Entries in `git status --porcelain=v1 -z` output (a rename or copy carries a second path).
pub(super) fn count_status_entries(text: &str) -> usize {
    let mut fields = text.split('\0').filter(|f| !f.is_empty());
    let mut count = 0;
    while let Some(entry) = fields.next() {
        count += 1;
        if entry.starts_with(['R', 'C']) {
            fields.next();
        }
    }
    count
}

/// What a finished command printed.
struct Output {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` in its own process group, killing the group if it outlives `timeout`.
fn output(mut cmd: Command, timeout: Duration) -> Result<Output, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start: {e}"))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Ok(None) => break Err(format!("timed out after {} s", timeout.as_secs())),
            Err(e) => break Err(format!("cannot wait: {e}")),
        }
    };
    if status.is_err() {
        kill_group(child.id());
        let _ = child.wait();
    }
    let (stdout, stderr) = (collect(stdout), collect(stderr));
    let status = status.map_err(|e| format!("{e}: {}", summarize(&stderr)))?;
    Ok(Output {
        success: status.success(),
        stdout,
        stderr,
    })
}

/// Reads a pipe to its end on a thread; the text arrives on the returned channel.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        let read = move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
        };
        // Without a thread the text is lost, never the salvage.
        let _ = std::thread::Builder::new()
            .name("salvage-git-pipe".into())
            .spawn(read);
    }
    rx
}

/// The drained text, waiting a little for a helper that still holds the pipe open.
fn collect(rx: mpsc::Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default()
}

fn kill_group(pid: u32) {
    if let Some(pgid) = crate::host::signallable(pid) {
        // SAFETY: kill(2) with a negative pid signals the process group we created for the child.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_command_keeps_only_the_variables_git_needs_to_reach_a_remote() {
        // given a parent environment with credentials and variables pointing git elsewhere
        let parent = [
            ("GITHUB_TOKEN", "ghs_secret"),
            ("THIRDSHIFT_APP_KEY", "-----BEGIN"),
            ("GIT_DIR", "/elsewhere"),
            ("GIT_INDEX_FILE", "/elsewhere/index"),
            ("GIT_SSH_COMMAND", "ssh -i key"),
            ("HOME", "/home/runner"),
            ("PATH", "/usr/bin"),
            ("https_proxy", "http://proxy:3128"),
        ];
        let pairs = parent
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        // when the command's environment is made
        let mut names: Vec<String> = kept(pairs)
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        names.sort();
        // then only the transport, home and path ones are left
        assert_eq!(names, ["GIT_SSH_COMMAND", "HOME", "PATH", "https_proxy"]);
    }

    #[test]
    fn a_hanging_command_is_killed_at_its_deadline() {
        // given a command that would run for a minute, with a child of its own
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 60 & sleep 60"]);
        // when it runs with a short deadline
        let started = Instant::now();
        let result = output(cmd, Duration::from_millis(200));
        // then it is reported as timed out promptly
        assert!(result.is_err_and(|e| e.contains("timed out")));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn subcommand_skips_config_options() {
        assert_eq!(subcommand(&["-c", "user.name=x", "commit", "-m"]), "commit");
        assert_eq!(subcommand(&["--quiet", "push", "origin"]), "push");
    }

    #[test]
    fn summary_drops_hints_and_joins_lines() {
        let stderr = "error: failed to push\nhint: Updates were rejected\n\n! [rejected] x\n";
        assert_eq!(summarize(stderr), "error: failed to push / ! [rejected] x");
        assert_eq!(summarize(""), "no message");
        assert!(summarize(&"x".repeat(1000)).ends_with('…'));
    }
    #[test]
    fn status_entries_count_a_rename_once() {
        let text = "R  new.txt\0old.txt\0 M a.txt\0?? dir/b.txt\0A  c.txt\0";
        assert_eq!(count_status_entries(text), 4);
        assert_eq!(count_status_entries(""), 0);
    }
}
