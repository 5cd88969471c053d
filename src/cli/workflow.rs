//! What the tool tells a GitHub Actions runner, only when it runs in one (`GITHUB_ACTIONS=true`):
//! the Action's outputs, appended to `$GITHUB_OUTPUT`, and annotations (`::error::`,
//! `::warning::`) a workflow run shows on its summary page. Values are escaped the way the
//! runner reads workflow commands, so no text (an error naming an issue title) can end an
//! annotation early or start another command. It decides nothing and reads nothing from GitHub.

use std::io::Write as _;

/// Whether this process runs in a GitHub Actions job.
pub fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// An annotation's level.
#[derive(Clone, Copy, Debug)]
pub enum Level {
    Error,
    Warning,
}

/// The workflow command for an annotation of `message` at `level`.
pub fn annotation(level: Level, message: &str) -> String {
    let word = match level {
        Level::Error => "error",
        Level::Warning => "warning",
    };
    format!("::{word} title=thirdshift-reconciler::{}", escape(message))
}

/// Prints an annotation to stdout (where the runner reads workflow commands), in a job only.
pub fn annotate(level: Level, message: &str) {
    if in_actions() {
        println!("{}", annotation(level, message));
    }
}

/// Appends `name=value` lines to `$GITHUB_OUTPUT`, when set. A failure to write is a warning:
/// the pass itself went as it went.
pub fn outputs(pairs: &[(&str, String)]) {
    let lines: String = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}\n", one_line(v)))
        .collect();
    if let Err(e) = append_to("GITHUB_OUTPUT", &lines) {
        tracing::warn!("the Action's outputs were not written: {e}");
    }
}

/// Appends `text` to the file the runner names in variable `var` (`GITHUB_OUTPUT`,
/// `GITHUB_STEP_SUMMARY`); nothing when it names none.
fn append_to(var: &str, text: &str) -> std::io::Result<()> {
    let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// Set by the Action's run step: this process also puts what it prints on stdout into the step
/// summary, as a `text` block under `#### thirdshift-reconciler <args>`. The step `exec`s the
/// binary so that no other process of the step holds the credentials (docs/operations.md), so
/// nothing else is left to copy the output there.
pub const SUMMARY_OUTPUT_VAR: &str = "THIRDSHIFT_SUMMARY_OUTPUT";

/// This process's stdout, copied as it is written (a pipe read by a thread that writes each
/// chunk on to the real stdout and keeps it), for the step summary.
pub struct Mirror {
    saved: std::os::fd::OwnedFd,
    kept: std::sync::mpsc::Receiver<Vec<u8>>,
}

/// Starts copying stdout when the Action asked for it ([`SUMMARY_OUTPUT_VAR`] and
/// `$GITHUB_STEP_SUMMARY` set); `None` otherwise, or when the descriptors cannot be set up.
pub fn mirror_stdout() -> Option<Mirror> {
    use std::io::Read as _;
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
    std::env::var_os(SUMMARY_OUTPUT_VAR)?;
    std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty())?;
    let mut fds = [0; 2];
    // SAFETY: plain descriptor calls; every descriptor made here is owned below.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return None;
        }
        let (read, write) = (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]));
        let saved = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if saved < 0 || libc::dup2(write.as_raw_fd(), 1) < 0 {
            return None;
        }
        let saved = OwnedFd::from_raw_fd(saved);
        let mut out = std::fs::File::from(saved.try_clone().ok()?);
        let mut read = std::fs::File::from(read);
        let (tx, kept) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = read.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let _ = out.write_all(&buf[..n]);
                let _ = tx.send(buf[..n].to_vec());
            }
        });
        Some(Mirror { saved, kept })
    }
}

impl Mirror {
    /// Puts stdout back, and appends what was printed to the step summary under `title`.
    pub fn finish(self, title: &str) {
        use std::os::fd::AsRawFd as _;
        let _ = std::io::stdout().flush();
        // SAFETY: restores stdout; the pipe's write end at 1 is closed by dup2, ending the copy.
        unsafe { libc::dup2(self.saved.as_raw_fd(), 1) };
        let mut text = Vec::new();
        // A child that kept the pipe open must not hold the step: wait a little, then go on.
        while let Ok(chunk) = self.kept.recv_timeout(std::time::Duration::from_secs(2)) {
            text.extend(chunk);
        }
        let block = format!(
            "#### {title}\n\n````text\n{}\n````\n",
            String::from_utf8_lossy(&text).trim_end()
        );
        if let Err(e) = append_to("GITHUB_STEP_SUMMARY", &block) {
            eprintln!("thirdshift-reconciler: the step summary was not written: {e}");
        }
    }
}

/// `%`, CR and LF as the runner expects them inside a workflow command.
fn escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_annotation_cannot_be_ended_early_or_start_another_command() {
        let text = annotation(Level::Error, "100% broken\n::set-output name=x::y");
        assert_eq!(
            text,
            "::error title=thirdshift-reconciler::100%25 broken%0A::set-output name=x::y"
        );
        assert_eq!(text.lines().count(), 1);
    }
}
