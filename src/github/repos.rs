//! Branch and pull-request reads, so reconcile can tell whether anything of a dead Run reached
//! origin: the sha of its Issue branch on GitHub, and every pull request (any state) whose head
//! is that branch. One method per REST call, like the files beside it.
//!
//! It only reads: it never pushes, opens, closes or merges anything, and it decides nothing
//! about Claims. Pull requests from forks are not looked for (the head owner is the
//! repository's owner, where Runs push their Issue branches).

use http::Method;
use serde::Deserialize;

use super::error::{GhResult, GithubError};
use super::issues::encode_segment;
use super::transport::Retry;
use super::Client;

/// A pull request as reconcile needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullSummary {
    pub number: u64,
    /// `open` or `closed` (a merged pull request is `closed`).
    pub state: String,
    pub merged: bool,
    pub html_url: String,
}

/// `GET .../branches/{branch}`: only the head commit's sha matters.
#[derive(Deserialize)]
struct Branch {
    commit: BranchCommit,
}

#[derive(Deserialize)]
struct BranchCommit {
    sha: String,
    commit: GitCommit,
}

#[derive(Deserialize)]
struct GitCommit {
    message: String,
}

/// A branch's head commit: its sha and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadCommit {
    pub sha: String,
    pub message: String,
}

/// An item of `GET .../pulls` (`pull-request-simple`). It has no `merged` field: a non-null
/// `merged_at` is how a list tells a merged pull request from a closed one.
#[derive(Deserialize)]
struct PullItem {
    number: u64,
    state: String,
    #[serde(default)]
    merged_at: Option<String>,
    #[serde(default)]
    html_url: String,
    head: PullHead,
}

#[derive(Deserialize)]
struct PullHead {
    #[serde(rename = "ref")]
    name: String,
    #[serde(default)]
    label: Option<String>,
}

impl Client {
    /// `GET /repos/{o}/{r}/branches/{branch}`: the sha `branch` points at on GitHub, or `None`
    /// when GitHub answers 404 (no such branch; a repository the token cannot see also answers
    /// 404, but then every other call fails too).
    pub async fn branch_head(&self, branch: &str) -> GhResult<Option<String>> {
        let url = self.repo_url(&format!("/branches/{}", encode_segment(branch)));
        match self.send(Method::GET, &url, None, Retry::Safe).await {
            Ok(resp) => {
                let b: Branch = self.decode(&Method::GET, &url, &resp)?;
                Ok(Some(b.commit.sha))
            }
            Err(GithubError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `GET /repos/{o}/{r}/branches/{branch}`: the head commit's sha and message, `None` when
    /// there is no such branch.
    pub async fn branch_commit(&self, branch: &str) -> GhResult<Option<HeadCommit>> {
        let url = self.repo_url(&format!("/branches/{}", encode_segment(branch)));
        match self.send(Method::GET, &url, None, Retry::Safe).await {
            Ok(resp) => {
                let b: Branch = self.decode(&Method::GET, &url, &resp)?;
                Ok(Some(HeadCommit {
                    sha: b.commit.sha,
                    message: b.commit.commit.message,
                }))
            }
            Err(GithubError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `GET /repos/{o}/{r}/pulls?state=all&head={owner}:{branch}`, every page: each pull request
    /// in any state whose head is `branch` of this repository, in number order.
    ///
    /// GitHub ignores a `head` it cannot parse and has matched pull requests of another branch
    /// on the same commit, so the answers are also checked against the head's `ref` and label.
    pub async fn pulls_for_branch(&self, branch: &str) -> GhResult<Vec<PullSummary>> {
        let label = format!("{}:{branch}", self.repo.owner);
        let url = self.repo_url(&format!("/pulls?state=all&head={}", encode_segment(&label)));
        let items: Vec<PullItem> = self.get_all(&url).await?;
        let mut pulls: Vec<PullSummary> = items
            .into_iter()
            .filter(|p| p.head.name == branch)
            .filter(|p| {
                p.head
                    .label
                    .as_deref()
                    .is_none_or(|l| l.eq_ignore_ascii_case(&label))
            })
            .map(|p| PullSummary {
                number: p.number,
                state: p.state,
                merged: p.merged_at.is_some(),
                html_url: p.html_url,
            })
            .collect();
        pulls.sort_by_key(|p| p.number);
        pulls.dedup_by_key(|p| p.number);
        Ok(pulls)
    }
}
