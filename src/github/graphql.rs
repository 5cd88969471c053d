//! The one GraphQL read the tool makes: the comments of up to 100 issues in one request
//! (`nodes(ids:)` with the issues' `node_id`s), so that a pass with no local cache reads its
//! claimed issues at ceil(N/100) requests instead of N. GitHub charges such a query one point.
//!
//! The answer is turned into the REST `issue-comment` shape the rest of the tool reads, with
//! one difference GitHub has between its APIs smoothed over: GraphQL names a GitHub App's bot
//! `slug`, REST `slug[bot]`; records are trusted by the REST login, so `[bot]` is put back.
//!
//! It does not decide what to read, and it does not fall back: an issue whose comments do not
//! fit in one page, or that GitHub could not resolve, is left out of the answer, and an answer
//! without data is an error, for the caller to read the REST way instead.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::error::{GhResult, GithubError};
use super::models::{Comment, User};
use super::transport::Retry;
use super::Client;

/// GitHub's cap on `nodes(ids:)`, and on `comments(first:)`.
pub const BATCH: usize = 100;

/// The query, checked against GitHub's published schema by the conformance test.
pub const ISSUE_COMMENTS_QUERY: &str = "query($ids: [ID!]!) { nodes(ids: $ids) { ... on Issue { \
number comments(first: 100) { totalCount pageInfo { hasNextPage } nodes { fullDatabaseId body \
url createdAt updatedAt author { __typename login } reactionGroups { content reactors { \
totalCount } } } } } } }";

#[derive(Deserialize)]
struct Answer {
    data: Option<Data>,
    #[serde(default)]
    errors: Vec<QueryError>,
}

#[derive(Deserialize)]
struct QueryError {
    message: String,
}

#[derive(Deserialize)]
struct Data {
    nodes: Vec<Option<IssueNode>>,
}

#[derive(Deserialize)]
struct IssueNode {
    number: Option<u64>,
    comments: Option<Connection>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    page_info: PageInfo,
    nodes: Vec<CommentNode>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageInfo {
    has_next_page: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommentNode {
    /// A `BigInt`, which GitHub sends as a string.
    full_database_id: String,
    body: String,
    url: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    author: Option<Author>,
    #[serde(default)]
    reaction_groups: Option<Vec<ReactionGroup>>,
}

/// One kind of reaction on a comment and how many gave it.
#[derive(Deserialize)]
struct ReactionGroup {
    content: String,
    reactors: Reactors,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reactors {
    total_count: u64,
}

#[derive(Deserialize)]
struct Author {
    #[serde(rename = "__typename")]
    typename: String,
    login: String,
}

impl Client {
    /// The GraphQL endpoint beside this client's REST API (`/api/graphql` on GitHub
    /// Enterprise Server, whose REST API is under `/api/v3`).
    pub fn graphql_url(&self) -> String {
        match self.api_url.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{}/graphql", self.api_url),
        }
    }

    /// Every comment of each issue in `issues` (number, `node_id`), oldest first, in
    /// requests of [`BATCH`] issues. An issue with more comments than one page holds, or that
    /// GitHub did not return, is absent from the map.
    pub async fn issue_comments_batched(
        &self,
        issues: &[(u64, String)],
    ) -> GhResult<BTreeMap<u64, Vec<Comment>>> {
        let mut out = BTreeMap::new();
        for chunk in issues.chunks(BATCH) {
            let ids: Vec<&str> = chunk.iter().map(|(_, id)| id.as_str()).collect();
            out.extend(self.one_batch(&ids).await?);
        }
        Ok(out)
    }

    async fn one_batch(&self, ids: &[&str]) -> GhResult<BTreeMap<u64, Vec<Comment>>> {
        let url = self.graphql_url();
        let payload = json!({ "query": ISSUE_COMMENTS_QUERY, "variables": { "ids": ids } });
        let resp = self
            .send(Method::POST, &url, Some(&payload), Retry::Safe)
            .await?;
        let answer: Answer = self.decode(&Method::POST, &url, &resp)?;
        let refused = |detail: String| GithubError::Decode {
            repo: self.repo.to_string(),
            method: "POST".into(),
            path: self.path_of(&url),
            detail,
        };
        // with data, an error names a node left `null` (a deleted issue): read it the REST way
        let Some(data) = answer.data else {
            let first = answer.errors.first().map(|e| e.message.as_str());
            return Err(refused(format!(
                "GraphQL error: {}",
                first.unwrap_or("an answer without data")
            )));
        };
        let mut out = BTreeMap::new();
        for node in data.nodes.into_iter().flatten() {
            let (Some(number), Some(conn)) = (node.number, node.comments) else {
                continue;
            };
            if conn.page_info.has_next_page {
                continue;
            }
            let comments = conn
                .nodes
                .into_iter()
                .map(|c| self.rest_comment(number, c))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| refused(format!("a comment id on #{number} is not a number")))?;
            out.insert(number, comments);
        }
        Ok(out)
    }

    /// The REST shape of a GraphQL comment (`None` when its id is not a number).
    fn rest_comment(&self, number: u64, c: CommentNode) -> Option<Comment> {
        let user = c.author.map(|a| {
            let bot = a.typename == "Bot";
            User {
                login: if bot && !a.login.ends_with("[bot]") {
                    format!("{}[bot]", a.login)
                } else {
                    a.login
                },
                id: 0,
                kind: Some(if bot { "Bot" } else { "User" }.to_string()),
            }
        });
        Some(Comment {
            id: c.full_database_id.parse().ok()?,
            user,
            body: Some(c.body),
            html_url: c.url,
            issue_url: self.repo_url(&format!("/issues/{number}")),
            created_at: c.created_at,
            updated_at: c.updated_at,
            reactions: c
                .reaction_groups
                .map(|groups| crate::github::models::Reactions {
                    minus_one: groups
                        .iter()
                        .filter(|g| g.content == "THUMBS_DOWN")
                        .map(|g| g.reactors.total_count)
                        .sum(),
                }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(api: &str) -> Client {
        Client::new(api, None, "acme/widgets".parse().unwrap()).unwrap()
    }

    #[tokio::test]
    async fn graphql_sits_beside_the_rest_api_on_github_and_on_enterprise_server() {
        assert_eq!(
            client("https://api.github.com").graphql_url(),
            "https://api.github.com/graphql"
        );
        assert_eq!(
            client("https://ghe.example/api/v3").graphql_url(),
            "https://ghe.example/api/graphql"
        );
    }

    #[tokio::test]
    async fn a_bot_author_gets_the_rest_login_with_its_bot_suffix() {
        let c = client("https://api.github.com");
        let node = CommentNode {
            full_database_id: "9000000001".into(),
            body: "b".into(),
            url: "u".into(),
            created_at: Utc::now(),
            updated_at: Utc::now(),
            author: Some(Author {
                typename: "Bot".into(),
                login: "thirdshift".into(),
            }),
            reaction_groups: Some(vec![
                ReactionGroup {
                    content: "THUMBS_UP".into(),
                    reactors: Reactors { total_count: 3 },
                },
                ReactionGroup {
                    content: "THUMBS_DOWN".into(),
                    reactors: Reactors { total_count: 2 },
                },
            ]),
        };
        let rest = c.rest_comment(7, node).unwrap();
        assert_eq!(rest.reactions.as_ref().map(|r| r.minus_one), Some(2));
        assert_eq!(rest.author(), "thirdshift[bot]");
        assert_eq!(rest.id, 9_000_000_001);
        assert_eq!(rest.issue_number(), Some(7));
    }
}
