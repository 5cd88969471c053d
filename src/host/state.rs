//! The local state folder: one JSON file per Claim this host took, written before the claim
//! comment is posted (so a kill -9 at any point leaves evidence on this machine) and updated as
//! the Claim moves on. Files are replaced atomically (write, fsync, rename). No GitHub here.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::protocol::record::ClaimRecord;

/// Numbers this process's temporary files, so no two writers share one.
static TMP_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Where a Claim is in its life, as this host knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalStatus {
    /// Written; the claim comment may or may not have been posted.
    Posting,
    /// Won: this host's Run holds the Claim.
    Active,
    /// Lost the race and withdrew.
    Lost,
    /// Ended (an end record was posted).
    Ended,
}

/// One Claim this host took.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LocalClaim {
    pub repo: String,
    pub api_url: String,
    pub comment_id: Option<u64>,
    pub status: LocalStatus,
    pub record: ClaimRecord,
    /// What salvage kept once the Claim was proven dead (salvage runs once per Claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salvage: Option<crate::protocol::record::Salvage>,
    /// How the Run ended by itself, kept before its end record is posted: if GitHub refuses
    /// that write, `observe` reports it and reconcile ends the Claim with this outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<crate::protocol::record::RunEnding>,
    /// The command the Run runs (its CMD after `--`), kept so its companion can start a
    /// Continuation the way the Run was started. Empty for a Claim taken by hand (`claim`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}

/// The folder of local Claim records.
#[derive(Clone, Debug)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// The folder given, or `$XDG_STATE_HOME/thirdshift`, or `~/.local/state/thirdshift`; an
    /// error when none is known (never a shared folder such as `/tmp`).
    pub fn resolve(explicit: Option<&Path>) -> anyhow::Result<StateDir> {
        let base = || {
            let home = || {
                std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/state"))
            };
            std::env::var_os("XDG_STATE_HOME")
                .filter(|x| !x.is_empty())
                .map(PathBuf::from)
                .or_else(home)
                .map(|b| b.join("thirdshift"))
        };
        match explicit.map(Path::to_path_buf).or_else(base) {
            Some(root) => Ok(StateDir { root }),
            None => Err(crate::exit::Exit::usage(
                "no state folder: HOME and XDG_STATE_HOME are unset; set --state-dir or \
                 THIRDSHIFT_STATE_DIR to a folder of this user's (a shared one such as /tmp is \
                 never used)",
            )
            .into()),
        }
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, claim_id: &str) -> PathBuf {
        self.root.join("claims").join(format!("{claim_id}.json"))
    }

    /// Writes (or replaces) the record of one Claim, durably (write, fsync, rename).
    pub fn save(&self, claim: &LocalClaim) -> anyhow::Result<()> {
        let text = serde_json::to_vec_pretty(claim)?;
        self.write(&self.path(&claim.record.claim_id), &text)
    }

    /// Where the salvage result of thirdshift Command `claim_id` is kept (not a Claim of ours:
    /// apart from `claims/`, so it never counts as one).
    fn adopted_path(&self, claim_id: &str) -> PathBuf {
        self.root.join("adopted").join(format!("{claim_id}.json"))
    }

    /// What this host's salvage kept of thirdshift Command `claim_id`, if it salvaged it.
    pub fn adopted_kept(&self, claim_id: &str) -> Option<crate::protocol::record::Salvage> {
        let text = fs::read(self.adopted_path(claim_id)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Keeps the salvage result of thirdshift Command `claim_id`, durably.
    pub fn save_adopted_kept(
        &self,
        claim_id: &str,
        kept: &crate::protocol::record::Salvage,
    ) -> anyhow::Result<()> {
        let text = serde_json::to_vec_pretty(kept)?;
        self.write(&self.adopted_path(claim_id), &text)
    }

    /// A note this host keeps about thirdshift Command `claim_id` (`adopted/<claim id>.<what>`):
    /// how its Pickup reservation was settled, the stop it asked for.
    pub fn adopted_note(&self, claim_id: &str, what: &str) -> Option<Vec<u8>> {
        fs::read(self.note_path(claim_id, what)).ok()
    }

    /// Keeps a note about thirdshift Command `claim_id`, durably.
    pub fn save_adopted_note(&self, claim_id: &str, what: &str, text: &[u8]) -> anyhow::Result<()> {
        self.write(&self.note_path(claim_id, what), text)
    }

    /// Every note of kind `what`, as (claim id, text), in claim id order.
    pub fn adopted_notes(&self, what: &str) -> Vec<(String, Vec<u8>)> {
        let Ok(dir) = fs::read_dir(self.root.join("adopted")) else {
            return Vec::new();
        };
        let suffix = format!(".{what}");
        let mut out: Vec<(String, Vec<u8>)> = dir
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                let id = name.strip_suffix(&suffix)?.to_string();
                Some((id, fs::read(e.path()).ok()?))
            })
            .collect();
        out.sort();
        out
    }

    fn note_path(&self, claim_id: &str, what: &str) -> PathBuf {
        self.root.join("adopted").join(format!("{claim_id}.{what}"))
    }

    /// Writes `text` to the file `name` directly in the state folder, as every file here.
    pub fn write_file(&self, name: &str, text: &[u8]) -> anyhow::Result<()> {
        self.write(&self.root.join(name), text)
    }

    /// Writes `text` to `path` under the state folder: folders 0700, file 0600, fsync, rename.
    fn write(&self, path: &Path, text: &[u8]) -> anyhow::Result<()> {
        let dir = path.parent().expect("a folder under the state folder");
        super::private::dir(&self.root)
            .and_then(|()| super::private::dir(dir))
            .with_context(|| format!("creating the state folder {}", dir.display()))?;
        // A name of its own per writer: a Run and its CMD's `stage` may save the same Claim at
        // once, and a shared temporary file would be renamed away under one of them.
        let seq = TMP_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = path.with_extension(format!("json.{}.{seq}.tmp", std::process::id()));
        let mut file =
            super::private::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
        file.write_all(text)?;
        file.sync_all()?;
        fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// Reads the record of one Claim.
    pub fn load(&self, claim_id: &str) -> anyhow::Result<LocalClaim> {
        let path = self.path(claim_id);
        let text = fs::read(&path).with_context(|| {
            format!(
                "no local record of claim {claim_id} in {} (is --state-dir / \
                 THIRDSHIFT_STATE_DIR the one the Run used?)",
                self.root.display()
            )
        })?;
        serde_json::from_slice(&text).with_context(|| format!("reading {}", path.display()))
    }

    /// Every Claim recorded here; unreadable files are skipped with a warning.
    pub fn all(&self) -> Vec<LocalClaim> {
        let Ok(dir) = fs::read_dir(self.root.join("claims")) else {
            return Vec::new();
        };
        let mut claims: Vec<LocalClaim> = dir
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let text = fs::read(e.path()).ok()?;
                serde_json::from_slice(&text)
                    .map_err(|err| tracing::warn!(path = %e.path().display(), %err, "skipping"))
                    .ok()
            })
            .collect();
        claims.sort_by_key(|c| c.record.claimed_at);
        claims
    }

    /// Updates one Claim's record in place with `change`.
    pub fn update(
        &self,
        claim_id: &str,
        change: impl FnOnce(&mut LocalClaim),
    ) -> anyhow::Result<LocalClaim> {
        let mut claim = self.load(claim_id)?;
        change(&mut claim);
        self.save(&claim)?;
        Ok(claim)
    }
}

/// The default cache file of a repository inside a state folder.
pub fn cache_path(state_root: &Path, repo: &str) -> PathBuf {
    let name: String = repo
        .chars()
        .map(|c| match c {
            '/' => '-',
            c if c.is_ascii_alphanumeric() || "-_.".contains(c) => c,
            _ => '_',
        })
        .collect();
    state_root
        .join("cache")
        .join(format!("{}.json", name.replacen('-', "--", 1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::claim::tests::sample_claim;

    #[test]
    fn writers_saving_one_claim_at_once_never_fail() {
        // Given a Claim recorded in a state folder
        let dir = tempfile::tempdir().expect("temp dir");
        let state = StateDir::resolve(Some(dir.path())).unwrap();
        let claim = LocalClaim {
            repo: "acme/widgets".into(),
            api_url: "http://127.0.0.1".into(),
            comment_id: Some(1),
            status: LocalStatus::Active,
            record: sample_claim(),
            salvage: None,
            finished: None,
            command: Vec::new(),
        };
        state.save(&claim).expect("first save");
        // When two writers (a Run and its CMD's `stage`) update it at the same moment, often
        let id = claim.record.claim_id.clone();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for i in 0..200 {
                        state
                            .update(&id, |c| c.comment_id = Some(i))
                            .expect("update");
                    }
                });
            }
        });
        // Then every write went through and the record is whole
        assert_eq!(state.load(&id).expect("load").record, claim.record);
    }
}
