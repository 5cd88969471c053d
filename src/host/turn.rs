//! A host's turns: an exclusive lock on a file in the state folder, so that two processes of
//! one host doing the same job take turns. `pickup` takes `pickup.lock` (two pickups never
//! count the same free slot); `observe` takes `observe.lock` (a Run's companion and the host's
//! own pass never salvage one worktree at once, which would make one of them fail on git's
//! `index.lock` and report work unpushed that the other pushed). A process that dies releases
//! its turn with it (flock). It decides nothing and does not talk to GitHub.

use std::os::fd::AsRawFd as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::time::Duration;

use anyhow::Context as _;

use super::StateDir;

/// How often a waiting process asks for the turn again.
const POLL: Duration = Duration::from_millis(50);

/// This host's turn at one job, held until dropped. The file is opened close-on-exec, so
/// processes started while it is held do not keep it.
pub struct Turn {
    _file: std::fs::File,
}

impl Turn {
    /// The turn of `job` if no other process holds it now; `None` when one does.
    pub fn try_take(state: &StateDir, job: &str) -> anyhow::Result<Option<Turn>> {
        let (file, path) = open(state, job)?;
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Some(Turn { _file: file }));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Ok(None);
        }
        Err(err).with_context(|| format!("locking {}", path.display()))
    }

    /// Whether another process holds the turn of `job` now (never creates its lock file).
    pub fn is_held(state: &StateDir, job: &str) -> bool {
        let exists = state.root().join(format!("{job}.lock")).exists();
        exists && matches!(Turn::try_take(state, job), Ok(None))
    }

    /// Waits for the turn of `job` (`<state>/<job>.lock`); says once that it waits.
    pub async fn take(state: &StateDir, job: &str) -> anyhow::Result<Turn> {
        let (file, path) = open(state, job)?;
        let mut told = false;
        loop {
            // SAFETY: flock on a file descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(Turn { _file: file });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err).with_context(|| format!("locking {}", path.display()));
            }
            if !told {
                tracing::info!("another {job} runs on this host; waiting for its turn");
                told = true;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Opens `<state>/<job>.lock` (made private), close-on-exec.
fn open(state: &StateDir, job: &str) -> anyhow::Result<(std::fs::File, std::path::PathBuf)> {
    let root = state.root();
    super::private::dir(root).with_context(|| format!("creating {}", root.display()))?;
    let path = root.join(format!("{job}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(super::private::FILE_MODE)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    Ok((file, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_processes_of_one_host_take_turns_at_a_job_but_not_across_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::resolve(Some(dir.path())).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            // given one pickup holding this host's turn
            let first = Turn::take(&state, "pickup").await.unwrap();
            // when a second asks for it, it waits; an observe does not
            let second = Turn::take(&state, "pickup");
            let waited = tokio::time::timeout(Duration::from_millis(200), second);
            assert!(waited.await.is_err(), "the second pickup waits");
            let other = Turn::take(&state, "observe");
            let other = tokio::time::timeout(Duration::from_millis(200), other);
            assert!(other.await.is_ok(), "another job does not wait");
            // then it gets the turn once the first is done
            drop(first);
            let again = tokio::time::timeout(Duration::from_secs(2), Turn::take(&state, "pickup"));
            assert!(again.await.is_ok(), "the turn passes on");
        });
    }
}
