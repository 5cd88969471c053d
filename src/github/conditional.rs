//! Conditional list reads: every page of a list is sent with the ETag of its last answer in
//! `If-None-Match`, and a 304 (which costs no rate budget) reuses the page kept from then. The
//! kept pages live in a [`PageCache`] that the caller stores between passes (the reconcile
//! cache file). The repo-wide comment listings (with `since`, and every comment page by page)
//! live here too. It decides nothing about what a page means.
//!
//! An ETag only matches for the token that fetched it, so with a new token every page is a plain
//! 200 again: the cache can cost nothing but is never wrong.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, SecondsFormat, Utc};
use http::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::error::GhResult;
use super::issues::encode_segment;
use super::models::{Comment, Issue};
use super::transport::Retry;
use super::{next_link, Client};

/// List pages kept between passes, by URL.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PageCache {
    pages: BTreeMap<String, CachedPage>,
    /// Pages read (or confirmed by a 304) since this cache was loaded; the others are dropped
    /// by [`PageCache::prune`].
    #[serde(skip)]
    used: BTreeSet<String>,
}

/// One page as last answered with 200.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct CachedPage {
    etag: String,
    items: Vec<serde_json::Value>,
    next: Option<String>,
}

impl PageCache {
    /// Drops the pages no read of this pass asked for (lists that shrank, labels renamed).
    pub fn prune(&mut self) {
        let used = std::mem::take(&mut self.used);
        self.pages.retain(|url, _| used.contains(url));
        self.used = used;
    }

    /// How many pages are kept.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

impl Client {
    /// Every item of a paginated list, each page sent conditionally (see the module doc).
    /// Items are kept as `T` re-serialised, so only the fields this tool reads are stored.
    async fn get_all_conditional<T>(&self, first: &str, cache: &mut PageCache) -> GhResult<Vec<T>>
    where
        T: DeserializeOwned + Serialize,
    {
        let sep = if first.contains('?') { '&' } else { '?' };
        let mut url = Some(format!("{first}{sep}per_page=100"));
        let mut items = Vec::new();
        while let Some(current) = url.take() {
            // A kept page naming a next page on another origin is not ours: read it afresh.
            let kept = cache
                .pages
                .get(&current)
                .filter(|p| p.next.as_deref().is_none_or(|n| self.on_api_origin(n)));
            let etag = kept.map(|p| p.etag.as_str());
            let resp = self
                .send_if(Method::GET, &current, None, Retry::Safe, etag)
                .await?;
            let page = match kept {
                Some(p) if resp.status == http::StatusCode::NOT_MODIFIED => p.clone(),
                _ => {
                    let fresh: Vec<T> = self.decode(&Method::GET, &current, &resp)?;
                    let etag = resp
                        .headers
                        .get(http::header::ETAG)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string();
                    CachedPage {
                        etag,
                        items: fresh
                            .iter()
                            .filter_map(|i| serde_json::to_value(i).ok())
                            .collect(),
                        next: next_link(&resp.headers),
                    }
                }
            };
            for v in &page.items {
                items.push(T::deserialize(v).map_err(|e| super::GithubError::Decode {
                    repo: self.repo.to_string(),
                    method: "GET".into(),
                    path: self.path_of(&current),
                    detail: e.to_string(),
                })?);
            }
            url = page.next.clone();
            cache.used.insert(current.clone());
            if page.etag.is_empty() {
                cache.pages.remove(&current);
            } else {
                cache.pages.insert(current, page);
            }
        }
        Ok(items)
    }

    /// [`Client::list_issues`] with conditional pages.
    pub async fn list_issues_conditional(
        &self,
        state: &str,
        labels: Option<&str>,
        cache: &mut PageCache,
    ) -> GhResult<Vec<Issue>> {
        let mut url = self.repo_url(&format!("/issues?state={state}&sort=created&direction=asc"));
        if let Some(labels) = labels {
            url.push_str(&format!("&labels={}", encode_segment(labels)));
        }
        let mut issues: Vec<Issue> = self.get_all_conditional(&url, cache).await?;
        issues.retain(|i| i.pull_request.is_none());
        issues.sort_by_key(|i| i.number);
        Ok(issues)
    }

    /// [`Client::list_issue_comments`] with conditional pages.
    pub async fn list_issue_comments_conditional(
        &self,
        number: u64,
        cache: &mut PageCache,
    ) -> GhResult<Vec<Comment>> {
        let url = self.repo_url(&format!("/issues/{number}/comments"));
        self.get_all_conditional(&url, cache).await
    }

    /// Every comment of the repository created or edited at or after `since`
    /// (`GET /repos/{o}/{r}/issues/comments?since=`, ascending id), with conditional pages.
    pub async fn comments_since(
        &self,
        since: DateTime<Utc>,
        cache: &mut PageCache,
    ) -> GhResult<Vec<Comment>> {
        let since = since.to_rfc3339_opts(SecondsFormat::Secs, true);
        let url = self.repo_url(&format!("/issues/comments?since={since}"));
        self.get_all_conditional(&url, cache).await
    }

    /// Every comment of the repository (`GET /repos/{o}/{r}/issues/comments`, ascending id, every
    /// page), handed to `each` as its page arrives, so a caller that keeps a few of them never
    /// holds the rest. Plain requests: a listing made once per pass gains nothing from ETags.
    pub async fn each_repo_comment(&self, mut each: impl FnMut(Comment)) -> GhResult<()> {
        let mut url = Some(self.repo_url("/issues/comments?per_page=100"));
        while let Some(current) = url.take() {
            let resp = self.send(Method::GET, &current, None, Retry::Safe).await?;
            let page: Vec<Comment> = self.decode(&Method::GET, &current, &resp)?;
            page.into_iter().for_each(&mut each);
            url = next_link(&resp.headers);
        }
        Ok(())
    }
}
