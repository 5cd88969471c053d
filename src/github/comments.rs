//! Issue comment calls: list every comment of an issue, create, edit and fetch one. Creating is
//! the one write that is not safe to repeat, so it is sent once and an unknown outcome is
//! returned to the caller, who checks for its record id before posting again.

use http::Method;
use serde_json::json;

use super::error::GhResult;
use super::models::Comment;
use super::transport::Retry;
use super::Client;

impl Client {
    /// Every comment of an issue, oldest first (all pages).
    pub async fn list_issue_comments(&self, number: u64) -> GhResult<Vec<Comment>> {
        let url = self.repo_url(&format!("/issues/{number}/comments"));
        self.get_all(&url).await
    }

    /// `POST .../issues/{n}/comments`, sent once: on `GithubError::Uncertain` the comment may
    /// exist; look for it before posting again.
    pub async fn create_comment(&self, number: u64, body: &str) -> GhResult<Comment> {
        let url = self.repo_url(&format!("/issues/{number}/comments"));
        let payload = json!({ "body": body });
        let resp = self
            .send(Method::POST, &url, Some(&payload), Retry::Once)
            .await?;
        self.decode(&Method::POST, &url, &resp)
    }

    /// `PATCH .../issues/comments/{id}` with the whole new body (safe to repeat).
    pub async fn update_comment(&self, id: u64, body: &str) -> GhResult<Comment> {
        let url = self.repo_url(&format!("/issues/comments/{id}"));
        let payload = json!({ "body": body });
        let resp = self
            .send(Method::PATCH, &url, Some(&payload), Retry::Safe)
            .await?;
        self.decode(&Method::PATCH, &url, &resp)
    }

    /// Deletes a comment; one already gone counts as deleted.
    pub async fn delete_comment(&self, id: u64) -> GhResult<()> {
        let url = self.repo_url(&format!("/issues/comments/{id}"));
        match self.send(Method::DELETE, &url, None, Retry::Safe).await {
            Ok(_) | Err(super::GithubError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `GET .../issues/comments/{id}`.
    pub async fn get_comment(&self, id: u64) -> GhResult<Comment> {
        let url = self.repo_url(&format!("/issues/comments/{id}"));
        let resp = self.send(Method::GET, &url, None, Retry::Safe).await?;
        self.decode(&Method::GET, &url, &resp)
    }
}
