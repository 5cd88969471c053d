//! Issue and label calls: read one issue, add or remove one label at a time (never replacing the
//! whole set, which would race with people and other writers). No decisions here.

use http::Method;
use serde_json::json;

use super::error::{GhResult, GithubError};
use super::models::{Issue, IssueEvent};
use super::transport::Retry;
use super::Client;

impl Client {
    /// `GET /repos/{o}/{r}/issues/{n}`.
    pub async fn get_issue(&self, number: u64) -> GhResult<Issue> {
        let url = self.repo_url(&format!("/issues/{number}"));
        let resp = self.send(Method::GET, &url, None, Retry::Safe).await?;
        self.decode(&Method::GET, &url, &resp)
    }

    /// Every issue in `state` (`open`, `closed`, `all`) carrying all of `labels` (comma-separated),
    /// in number order. Pull requests are left out.
    pub async fn list_issues(&self, state: &str, labels: Option<&str>) -> GhResult<Vec<Issue>> {
        let mut url = self.repo_url(&format!("/issues?state={state}&sort=created&direction=asc"));
        if let Some(labels) = labels {
            url.push_str(&format!("&labels={}", encode_segment(labels)));
        }
        let mut issues: Vec<Issue> = self.get_all(&url).await?;
        issues.retain(|i| i.pull_request.is_none());
        issues.sort_by_key(|i| i.number);
        Ok(issues)
    }

    /// `POST /repos/{o}/{r}/issues`, sent once (see `create_comment`).
    pub async fn create_issue(&self, title: &str, body: &str, labels: &[&str]) -> GhResult<Issue> {
        let url = self.repo_url("/issues");
        let payload = json!({ "title": title, "body": body, "labels": labels });
        let resp = self
            .send(Method::POST, &url, Some(&payload), Retry::Once)
            .await?;
        self.decode(&Method::POST, &url, &resp)
    }

    /// Closes an issue (`PATCH` with `state: closed`; safe to repeat).
    pub async fn close_issue(&self, number: u64) -> GhResult<()> {
        let url = self.repo_url(&format!("/issues/{number}"));
        let payload = json!({ "state": "closed", "state_reason": "not_planned" });
        self.send(Method::PATCH, &url, Some(&payload), Retry::Safe)
            .await
            .map(drop)
    }

    /// Replaces an issue's body (`PATCH` with `body`; a whole new body, so safe to repeat).
    pub async fn update_issue_body(&self, number: u64, body: &str) -> GhResult<()> {
        let url = self.repo_url(&format!("/issues/{number}"));
        let payload = json!({ "body": body });
        self.send(Method::PATCH, &url, Some(&payload), Retry::Safe)
            .await
            .map(drop)
    }

    /// Adds one label to an issue (`POST .../labels`); adding a label already there changes
    /// nothing, so this is safe to repeat.
    pub async fn add_label(&self, number: u64, label: &str) -> GhResult<()> {
        let url = self.repo_url(&format!("/issues/{number}/labels"));
        let body = json!({ "labels": [label] });
        self.send(Method::POST, &url, Some(&body), Retry::Safe)
            .await
            .map(drop)
    }

    /// Removes one label from an issue; a label that is not there counts as removed.
    pub async fn remove_label(&self, number: u64, label: &str) -> GhResult<()> {
        let url = self.repo_url(&format!(
            "/issues/{number}/labels/{}",
            encode_segment(label)
        ));
        match self.send(Method::DELETE, &url, None, Retry::Safe).await {
            Ok(_) | Err(GithubError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `GET .../issues/{n}/events`, every page, oldest first: who changed which label when.
    pub async fn issue_events(&self, number: u64) -> GhResult<Vec<IssueEvent>> {
        let url = self.repo_url(&format!("/issues/{number}/events?per_page=100"));
        self.get_all(&url).await
    }
}

/// Percent-encodes one path segment (label names may hold spaces and other characters).
pub(crate) fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_names_with_spaces_are_encoded_for_the_path() {
        assert_eq!(encode_segment("in progress"), "in%20progress");
        assert_eq!(encode_segment("ready-for-agent"), "ready-for-agent");
        assert_eq!(encode_segment("a/b"), "a%2Fb");
    }
}
