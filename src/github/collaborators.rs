//! The collaborator-permission read and comment reactions, the two calls `/thirdshift` commands
//! need beyond comments. The permission answer is read into our own struct: octocrab's model
//! fails on `write`, `read` and `none`, and only `role_name` says `maintain` or `triage`.
//! It decides nothing about who may do what (`reconcile::plan::answers` does).

use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::error::{GhResult, GithubError};
use super::issues::encode_segment;
use super::transport::Retry;
use super::Client;
use crate::protocol::config::Role;

/// `GET .../collaborators/{username}/permission`, the fields we read.
#[derive(Debug, Deserialize)]
struct PermissionAnswer {
    permission: String,
    #[serde(default)]
    role_name: Option<String>,
}

impl PermissionAnswer {
    /// `role_name` when it is a role GitHub defines (custom roles are not), else `permission`.
    fn role(&self) -> Role {
        self.role_name
            .as_deref()
            .and_then(Role::from_word)
            .or_else(|| Role::from_word(&self.permission))
            .unwrap_or(Role::None)
    }
}

impl Client {
    /// The repository role of `login`; a user GitHub does not know has `none`.
    pub async fn role_of(&self, login: &str) -> GhResult<Role> {
        let url = self.repo_url(&format!(
            "/collaborators/{}/permission",
            encode_segment(login)
        ));
        match self.send(Method::GET, &url, None, Retry::Safe).await {
            Ok(resp) => Ok(self
                .decode::<PermissionAnswer>(&Method::GET, &url, &resp)?
                .role()),
            Err(GithubError::NotFound { .. }) => Ok(Role::None),
            Err(e) => Err(e),
        }
    }

    /// `POST .../issues/comments/{id}/reactions`: safe to repeat (GitHub answers 200 when the
    /// reaction is there already).
    pub async fn react_to_comment(&self, id: u64, content: &str) -> GhResult<()> {
        let url = self.repo_url(&format!("/issues/comments/{id}/reactions"));
        let payload = json!({ "content": content });
        self.send(Method::POST, &url, Some(&payload), Retry::Safe)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(permission: &str, role_name: Option<&str>) -> Role {
        PermissionAnswer {
            permission: permission.into(),
            role_name: role_name.map(String::from),
        }
        .role()
    }

    #[test]
    fn maintain_and_triage_are_read_from_role_name() {
        assert_eq!(answer("write", Some("maintain")), Role::Maintain);
        assert_eq!(answer("read", Some("triage")), Role::Triage);
        assert_eq!(answer("admin", Some("admin")), Role::Admin);
        // a custom role falls back to the legacy word; an unknown word is no role
        assert_eq!(answer("write", Some("security-manager")), Role::Write);
        assert_eq!(answer("none", None), Role::None);
        assert_eq!(answer("owner", None), Role::None);
    }
}
