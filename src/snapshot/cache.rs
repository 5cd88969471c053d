//! The local cache kept between passes (`docs/performance.md`): for each issue a pass read, the
//! ids of all its comments and the full text of the ones that can matter (any comment that
//! mentions thirdshift: records, commands, replies); the same texts of idle issues that hold or
//! held a `/thirdshift` command (`waiting.rs`), so a command waits until it is answered; the
//! watermark of the repo-wide comment listing; and the ETags and pages of the conditional list
//! reads. One JSON file, by default in
//! the state folder (`cache/OWNER--NAME.json`), written whole by rename so a reader never sees
//! half of it; two processes sharing it simply keep the last complete pass.
//!
//! It holds no decisions and no credentials. A missing, unreadable, foreign (another API URL or
//! repository) or older-format file is an empty cache: the pass is then a full read, as correct
//! as ever, only dearer.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::github::{Comment, PageCache};

/// Bumped when the file's meaning changes; another version is read as an empty cache. Version 2
/// keeps idle issues' commands: a version 1 file never kept them, so its watermark may already
/// be past a command still waiting, and only a cold pass (which lists every comment) finds it.
const VERSION: u32 = 2;

/// What the cache keeps.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Cache {
    version: u32,
    api_url: String,
    repo: String,
    /// The newest `updated_at` a repo-wide comment listing showed: the next listing asks for
    /// everything since this minus the safety margin. `None`: no listing yet (a cold pass).
    pub watermark: Option<DateTime<Utc>>,
    /// The comments of each issue the last pass read, by issue number.
    pub issues: BTreeMap<u64, CachedIssue>,
    /// Issues outside the usual read (not `in-progress`, named by no host report) whose comments
    /// a listing showed holding a command: their relevant comments as far as known (not every
    /// comment: their ids are not counted), by issue number (`waiting.rs`).
    #[serde(default)]
    pub idle: BTreeMap<u64, Vec<Comment>>,
    /// Conditional list pages (the `in-progress` list, the registry's comments, `since`).
    pub pages: PageCache,
}

/// One issue's comments as last known.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CachedIssue {
    /// Every comment id, ascending (to tell new comments from edits and to count them).
    pub ids: Vec<u64>,
    /// The comments that can matter to a pass, ascending id.
    pub relevant: Vec<Comment>,
}

/// Whether a comment can matter to a pass: every record carries the `thirdshift:` marker and
/// every command starts with `/thirdshift`; the rest is conversation.
pub fn relevant(c: &Comment) -> bool {
    let text = c.text();
    text.len() >= 10
        && text
            .as_bytes()
            .windows(10)
            .any(|w| w.eq_ignore_ascii_case(b"thirdshift"))
}

impl CachedIssue {
    /// The cached form of a full list of an issue's comments.
    pub fn from_comments(comments: Vec<Comment>) -> CachedIssue {
        let mut ids: Vec<u64> = comments.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        let mut relevant: Vec<Comment> = comments.into_iter().filter(relevant).collect();
        relevant.sort_by_key(|c| c.id);
        CachedIssue { ids, relevant }
    }

    /// Applies comments a repo-wide listing showed for this issue (new ones and edits).
    pub fn merge(&mut self, changed: &[&Comment]) {
        for c in changed {
            if let Err(at) = self.ids.binary_search(&c.id) {
                self.ids.insert(at, c.id);
            }
        }
        merge_relevant(&mut self.relevant, changed);
    }
}

/// Applies listed comments (new ones and edits) to `kept`, the relevant comments of one issue in
/// ascending id: relevant ones are put in or replaced, ones edited into plain text taken out.
pub fn merge_relevant(kept: &mut Vec<Comment>, changed: &[&Comment]) {
    for c in changed {
        let at = kept.binary_search_by_key(&c.id, |r| r.id);
        match (at, relevant(c)) {
            (Ok(i), true) => kept[i] = (*c).clone(),
            (Ok(i), false) => {
                kept.remove(i);
            }
            (Err(i), true) => kept.insert(i, (*c).clone()),
            (Err(_), false) => {}
        }
    }
}

impl Cache {
    /// An empty cache for this API URL and repository.
    pub fn empty(api_url: &str, repo: &str) -> Cache {
        Cache {
            version: VERSION,
            api_url: api_url.to_string(),
            repo: repo.to_string(),
            ..Cache::default()
        }
    }

    /// The cache at `path` if it is one for this API URL and repository; else an empty one.
    pub fn load(path: &Path, api_url: &str, repo: &str) -> Cache {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Cache::empty(api_url, repo)
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), "cache unreadable, reading everything: {e}");
                return Cache::empty(api_url, repo);
            }
        };
        match serde_json::from_slice::<Cache>(&text) {
            Ok(c) if c.version == VERSION && c.api_url == api_url && c.repo == repo => c,
            Ok(_) => Cache::empty(api_url, repo),
            Err(e) => {
                tracing::warn!(path = %path.display(), "cache unreadable, reading everything: {e}");
                Cache::empty(api_url, repo)
            }
        }
    }

    /// Writes the cache to `path` whole (a temporary file renamed over it).
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        use anyhow::Context as _;
        if let Some(dir) = path.parent() {
            crate::host::private_dir(dir)
                .with_context(|| format!("creating the cache folder {}", dir.display()))?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let text = serde_json::to_vec(self).context("encoding the cache")?;
        crate::host::write_private(&tmp, &text)
            .with_context(|| format!("writing the cache {}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("replacing the cache {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(id: u64, body: &str) -> Comment {
        serde_json::from_value(serde_json::json!({
            "id": id, "user": {"login": "bot"}, "body": body,
            "issue_url": "https://api.github.com/repos/o/r/issues/7",
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        }))
        .expect("a comment")
    }

    #[test]
    fn only_comments_mentioning_thirdshift_keep_their_text() {
        // given a conversation with a record and a command among ordinary comments
        let cached = CachedIssue::from_comments(vec![
            comment(3, "looks good"),
            comment(1, "x <!-- thirdshift:v1:claim {} -->"),
            comment(2, "/ThirdShift status"),
        ]);
        // then every id is kept but only the two that can matter keep their text
        assert_eq!(cached.ids, vec![1, 2, 3]);
        let kept: Vec<u64> = cached.relevant.iter().map(|c| c.id).collect();
        assert_eq!(kept, vec![1, 2]);
        assert_eq!(comment(4, "42").issue_number(), Some(7));
    }

    #[test]
    fn merging_adds_new_comments_and_applies_edits_both_ways() {
        // given an issue with one record and one ordinary comment
        let mut cached =
            CachedIssue::from_comments(vec![comment(1, "thirdshift record"), comment(2, "hi")]);
        // when the record is edited into plain text, the plain one into a command, and one added
        let (a, b, c) = (
            comment(1, "nothing now"),
            comment(2, "/thirdshift help"),
            comment(5, "new"),
        );
        cached.merge(&[&a, &b, &c]);
        // then the ids grow by the new one and only the command keeps its text
        assert_eq!(cached.ids, vec![1, 2, 5]);
        assert_eq!(cached.relevant, vec![b]);
    }

    #[test]
    fn a_foreign_or_broken_file_is_an_empty_cache() {
        // given a cache saved for one repository, and a broken file
        let dir = tempfile::tempdir().expect("temp dir");
        let path = crate::host::cache_path(dir.path(), "acme/widgets");
        let mut cache = Cache::empty("http://h", "acme/widgets");
        cache.watermark = Some(Utc::now());
        cache.save(&path).expect("saved");
        // then it loads for its own repository only
        assert!(Cache::load(&path, "http://h", "acme/widgets")
            .watermark
            .is_some());
        assert!(Cache::load(&path, "http://h", "acme/other")
            .watermark
            .is_none());
        std::fs::write(&path, "{not json").expect("written");
        assert!(Cache::load(&path, "http://h", "acme/widgets")
            .watermark
            .is_none());
        assert!(path.ends_with("cache/acme--widgets.json"));
    }
}
