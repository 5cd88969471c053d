//! The small slices of GitHub's JSON that this tool reads. Our own structs, not octocrab's models:
//! we read only what we use and tolerate fields GitHub may leave out. It holds no requests.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A user or bot as GitHub names it in an issue or comment.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct User {
    pub login: String,
    #[serde(default)]
    pub id: u64,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

/// A label on an issue (only its name matters to us).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct Label {
    pub name: String,
}

/// An issue as this tool needs it.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Issue {
    pub number: u64,
    /// GitHub's GraphQL id of the issue (what a batched comment read asks for).
    #[serde(default)]
    pub node_id: String,
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    pub state: String,
    #[serde(default)]
    pub labels: Vec<Label>,
    pub user: Option<User>,
    #[serde(default)]
    pub html_url: String,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
    /// How many comments the issue has (GitHub counts them as written, whatever a list shows).
    #[serde(default)]
    pub comments: u64,
}

impl Issue {
    /// Whether the issue carries the label `name` (GitHub compares label names case-insensitively).
    pub fn has_label(&self, name: &str) -> bool {
        self.labels
            .iter()
            .any(|l| l.name.eq_ignore_ascii_case(name))
    }

    /// Whether the issue is open.
    pub fn is_open(&self) -> bool {
        self.state == "open"
    }

    /// The login of the issue's author (empty when GitHub sends none, as for a deleted user).
    pub fn author(&self) -> &str {
        self.user.as_ref().map(|u| u.login.as_str()).unwrap_or("")
    }
}

/// An issue comment as this tool needs it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct Comment {
    pub id: u64,
    pub user: Option<User>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub html_url: String,
    /// The API URL of the comment's issue (`…/issues/N`); repo-wide listings need it.
    #[serde(default)]
    pub issue_url: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The reactions' counts GitHub sends with every comment (`reactions`, the rollup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reactions: Option<Reactions>,
}

/// The counts of a comment's reactions this tool reads. Who reacted is not in them.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct Reactions {
    #[serde(rename = "-1", default)]
    pub minus_one: u64,
}

impl Comment {
    /// The author's login, or an empty string for a deleted ("ghost") account.
    pub fn author(&self) -> &str {
        self.user.as_ref().map(|u| u.login.as_str()).unwrap_or("")
    }

    /// The number of the issue the comment is on, from `issue_url`.
    pub fn issue_number(&self) -> Option<u64> {
        self.issue_url.rsplit('/').next()?.parse().ok()
    }

    /// The body, or an empty string when GitHub sent none.
    pub fn text(&self) -> &str {
        self.body.as_deref().unwrap_or("")
    }
}

/// One event of an issue's timeline of changes (`GET .../issues/{n}/events`); only label events
/// (`labeled`, `unlabeled`) carry a label.
#[derive(Clone, Debug, Deserialize)]
pub struct IssueEvent {
    pub id: u64,
    pub event: String,
    /// `None` for a deleted ("ghost") account.
    #[serde(default)]
    pub actor: Option<User>,
    #[serde(default)]
    pub label: Option<EventLabel>,
    pub created_at: DateTime<Utc>,
}

/// The label a `labeled` or `unlabeled` event names.
#[derive(Clone, Debug, Deserialize)]
pub struct EventLabel {
    pub name: String,
}
