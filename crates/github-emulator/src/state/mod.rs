//! The emulator's data model: users, issues (pull requests included: a pull request is an issue
//! with a `pull` part), comments, labels, reactions, seeded branches and the path of a git
//! origin, rate budgets, the request log and the fault PRNG, with the mutations GitHub performs
//! on them (ids, timestamps, comment counts, `updated_at` bumps, labels created on first use).
//! This file holds the types, users, id counters and rate budgets; `issues.rs`, `labels.rs`
//! and `pulls.rs` hold the mutations, `apps.rs` the GitHub Apps and their installation tokens.
//!
//! It knows nothing of HTTP, JSON or permissions: routes decide who may do what and `json`
//! decides how things look on the wire.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Instant;

use chrono::{DateTime, SubsecRound, Utc};

mod apps;
mod issues;
mod labels;
mod pulls;

pub(crate) use apps::App;
pub use apps::SimApp;

pub(crate) use pulls::{fake_sha, Pull};

use super::rng::Rng;
use super::{Faults, Permission, RequestLogEntry, SimComment, SimConfig, SimIssue};

/// Issue and comment ids start above 2^32 so 32-bit truncation shows.
const FIRST_OBJECT_ID: u64 = 5_000_000_000;
/// The colour GitHub gives a label created implicitly by naming it.
pub(crate) const DEFAULT_LABEL_COLOR: &str = "ededed";

/// Now, at second precision (GitHub's timestamps have no fraction).
pub(crate) fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(0)
}

#[derive(Clone, Debug)]
pub(crate) struct User {
    pub id: u64,
    pub login: String,
    pub token: Option<String>,
    pub permission: Permission,
    pub bot: bool,
    pub created_at: DateTime<Utc>,
}

/// One `labeled` or `unlabeled` issue event, as GitHub records it for every label change.
#[derive(Clone, Debug)]
pub(crate) struct LabelEvent {
    pub id: u64,
    pub issue: u64,
    /// `labeled` or `unlabeled`.
    pub event: &'static str,
    pub actor: String,
    pub label: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Debug)]
pub(crate) struct Issue {
    pub number: u64,
    pub id: u64,
    pub title: String,
    pub body: String,
    pub open: bool,
    pub state_reason: Option<String>,
    /// Canonical label names, in the order they were added.
    pub labels: Vec<String>,
    pub author: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub closed_by: Option<String>,
    pub comments: u64,
    /// Set when this issue is a pull request.
    pub pull: Option<Pull>,
}

impl Issue {
    pub(crate) fn snapshot(&self) -> SimIssue {
        SimIssue {
            number: self.number,
            id: self.id,
            title: self.title.clone(),
            body: self.body.clone(),
            state: if self.open { "open" } else { "closed" }.to_string(),
            labels: self.labels.clone(),
            author: self.author.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Comment {
    pub id: u64,
    pub issue: u64,
    pub author: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Left out of list responses until this instant (`Faults::stale_list_reads`).
    pub listed_from: Option<Instant>,
    /// How long after its creation that is.
    pub listed_after: Option<std::time::Duration>,
    /// Left out of this many more list reads (`Sim::lag_next_comments`).
    pub hidden_reads: u32,
}

impl Comment {
    /// Whether list responses show this comment yet.
    pub(crate) fn listed(&self) -> bool {
        self.hidden_reads == 0 && self.listed_from.is_none_or(|t| Instant::now() >= t)
    }

    pub(crate) fn snapshot(&self) -> SimComment {
        SimComment {
            id: self.id,
            issue: self.issue,
            author: self.author.clone(),
            body: self.body.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            listed_after: self.listed_after,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Label {
    pub id: u64,
    pub name: String,
    pub color: String,
    pub description: Option<String>,
}

/// What a reaction is attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Issue(u64),
    Comment(u64),
}

#[derive(Clone, Debug)]
pub(crate) struct Reaction {
    pub id: u64,
    pub target: Target,
    pub user: String,
    pub content: String,
    pub created_at: DateTime<Utc>,
}

/// One token's hourly window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    pub used: u32,
    /// Epoch seconds at which the window resets.
    pub reset: i64,
}

pub(crate) struct State {
    pub config: SimConfig,
    pub repo_id: u64,
    pub created_at: DateTime<Utc>,
    pub users: Vec<User>,
    pub issues: BTreeMap<u64, Issue>,
    pub comments: BTreeMap<u64, Comment>,
    pub labels: Vec<Label>,
    pub reactions: Vec<Reaction>,
    /// Label events (`labeled`, `unlabeled`) of every issue, in the order they happened.
    pub events: Vec<LabelEvent>,
    /// Branches seeded by `Sim::add_branch`: name to sha.
    pub branches: BTreeMap<String, String>,
    /// A bare git repository whose `refs/heads/*` are branches too (they win on a clash).
    pub git_origin: Option<PathBuf>,
    next_object_id: u64,
    next_number: u64,
    next_user_id: u64,
    next_label_id: u64,
    next_reaction_id: u64,
    pub budgets: HashMap<String, Budget>,
    pub log: Vec<RequestLogEntry>,
    pub faults: Faults,
    pub rng: Rng,
    pub request_seq: u64,
    /// The latest instant a stale comment becomes listed: no later comment is listed earlier.
    pub list_horizon: Option<Instant>,
    /// Scripted faults and list lags (`script.rs`).
    pub script: crate::script::Script,
    /// GitHub Apps installed on the repository (`apps.rs`).
    pub apps: Vec<App>,
    /// When set, every comment, label event and issue change is stamped with this time, as if
    /// they all happened in one second (`Sim::freeze_clock`).
    pub clock: Option<DateTime<Utc>>,
    pub installation_tokens: HashMap<String, apps::InstallationToken>,
    pub installation_token_lifetime: chrono::Duration,
    /// The bodies of `POST .../access_tokens` requests, in order.
    pub token_requests: Vec<serde_json::Value>,
    /// How often injected faults took effect.
    pub fault_counts: crate::FaultCounts,
}

impl State {
    /// Now, at second precision, or the frozen time (`clock`).
    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.unwrap_or_else(now)
    }

    pub(crate) fn new(config: SimConfig) -> State {
        let rng = Rng::new(config.seed);
        State {
            config,
            repo_id: 4_300_000_001,
            created_at: now(),
            users: Vec::new(),
            issues: BTreeMap::new(),
            comments: BTreeMap::new(),
            labels: Vec::new(),
            reactions: Vec::new(),
            events: Vec::new(),
            branches: BTreeMap::new(),
            git_origin: None,
            next_object_id: FIRST_OBJECT_ID,
            next_number: 1,
            next_user_id: 1001,
            next_label_id: 6_000_000_001,
            next_reaction_id: 7_000_000_001,
            budgets: HashMap::new(),
            log: Vec::new(),
            faults: Faults::default(),
            rng,
            request_seq: 0,
            list_horizon: None,
            script: Default::default(),
            apps: Vec::new(),
            clock: None,
            installation_tokens: HashMap::new(),
            installation_token_lifetime: apps::default_token_lifetime(),
            token_requests: Vec::new(),
            fault_counts: crate::FaultCounts::default(),
        }
    }

    /// The user with this login (case-insensitive, like GitHub).
    pub(crate) fn user(&self, login: &str) -> Option<&User> {
        self.users
            .iter()
            .find(|u| u.login.eq_ignore_ascii_case(login))
    }

    pub(crate) fn user_by_token(&self, token: &str) -> Option<&User> {
        self.users
            .iter()
            .find(|u| u.token.as_deref() == Some(token))
    }

    /// Adds a user or updates the token, role and kind of an existing one; returns the id.
    pub(crate) fn add_user(
        &mut self,
        login: &str,
        token: Option<&str>,
        permission: Permission,
        bot: bool,
    ) -> u64 {
        if let Some(u) = self
            .users
            .iter_mut()
            .find(|u| u.login.eq_ignore_ascii_case(login))
        {
            u.token = token.map(str::to_string).or(u.token.take());
            u.permission = permission;
            u.bot = bot;
            return u.id;
        }
        let id = self.next_user_id;
        self.next_user_id += 1;
        self.users.push(User {
            id,
            login: login.to_string(),
            token: token.map(str::to_string),
            permission,
            bot,
            created_at: now(),
        });
        id
    }

    /// Makes sure a login exists (seeded authors need not be registered); returns its login
    /// as stored.
    pub(crate) fn ensure_user(&mut self, login: &str) -> String {
        if let Some(u) = self.user(login) {
            return u.login.clone();
        }
        let bot = login.ends_with("[bot]");
        self.add_user(login, None, Permission::None, bot);
        login.to_string()
    }

    fn next_object_id(&mut self) -> u64 {
        let id = self.next_object_id;
        self.next_object_id += 1;
        id
    }

    /// This key's budget window, renewed when the hour is over.
    pub(crate) fn budget(&mut self, key: &str, now_epoch: i64) -> Budget {
        let b = self.budgets.entry(key.to_string()).or_insert(Budget {
            used: 0,
            reset: now_epoch + 3600,
        });
        if now_epoch >= b.reset {
            *b = Budget {
                used: 0,
                reset: now_epoch + 3600,
            };
        }
        *b
    }

    /// Charges one request to this key's budget.
    pub(crate) fn charge(&mut self, key: &str, now_epoch: i64) {
        self.budget(key, now_epoch);
        if let Some(b) = self.budgets.get_mut(key) {
            b.used = b.used.saturating_add(1);
        }
    }

    /// (login, token, role, bot) of every user with a token, for printing.
    pub(crate) fn user_lines(&self) -> Vec<(String, String, &'static str, bool)> {
        self.users
            .iter()
            .filter_map(|u| {
                let token = u.token.clone()?;
                Some((u.login.clone(), token, u.permission.role_name(), u.bot))
            })
            .collect()
    }
}
