//! The GitHub emulator: an in-process (tests, demo, benchmark) or standalone HTTP server that
//! speaks the subset of GitHub's REST API (and the one GraphQL query) thirdshift-reconciler
//! uses, so its real client (octocrab and its own `github` module) can be exercised over real
//! HTTP without a network or a token. A crate of its own so that a production build carries no
//! test server: the product depends on it only through its default `emulator` feature (the
//! `sim` and `demo` commands), its tests through a dev-dependency. It depends on nothing of the
//! product's.
//!
//! This file is the public face: [`Sim`] (a cheap handle on shared state), its seeding and
//! inspection methods, and the small types tests use. Everything behind it lives in one module
//! per concern, none of them in an import cycle with another (tests/it/architecture.rs): `state`
//! (data model), `call` (what a handler reads of its request), `json` and `json_refs` (GitHub's
//! JSON shapes), `origin` (branches, read from a real bare git repository), `http` (auth, rate
//! limits, ETags, faults, the request log), `page` (pagination), `permission` (roles), `routes/`
//! (one file per resource), `server` (binding and shutting down), `seed` (the standalone `sim`
//! command and its seed file).
//!
//! What it does not do: create, merge or review pull requests over HTTP (they are seeded), git
//! data endpoints, webhooks, GraphQL beyond the one query, search, organisations, forks, private repositories, or
//! anything GitHub does that the project never calls. Link headers point
//! at the `/repos/{owner}/{repo}/...` path that was requested (real GitHub sometimes writes
//! `/repositories/{id}/...`). See `docs/sim.md` for the behaviour contract.

mod call;
mod error;
mod http;
mod json;
mod json_refs;
mod jwt;
mod origin;
mod page;
mod permission;
mod rng;
mod routes;
mod script;
mod seed;
mod server;
mod stall;
mod state;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

pub use permission::Permission;
pub use routes::graphql::serves as serves_graphql_query;
pub use seed::run_cli;
pub use server::SimServer;
pub use state::SimApp;

use state::State;

/// A handle on one emulated repository and its users. Clones share the same state.
#[derive(Clone)]
pub struct Sim {
    inner: Arc<Mutex<State>>,
    pub(crate) stalls: stall::Stalls,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("repo", &self.repo_full_name())
            .finish_non_exhaustive()
    }
}

/// The emulated repository and its budgets.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub owner: String,
    pub name: String,
    /// Requests per token per hour (anonymous callers get 60, like GitHub).
    pub rate_limit: u32,
    /// Seed of the fault-injection PRNG, so faulted runs are reproducible.
    pub seed: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            owner: "acme".to_string(),
            name: "widgets".to_string(),
            rate_limit: 5000,
            seed: 1,
        }
    }
}

/// How often the faults took effect, so a test can show the fault it injects happened (a 502
/// or a secondary limit is in the request log by its status; these are not).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// List responses that left out at least one comment they would show when fresh.
    pub stale_lists: usize,
    /// Comments left out of list responses, summed over responses.
    pub hidden_comments: usize,
    /// Writes applied before the 5xx or dropped connection that answered them.
    pub applied_then_failed: usize,
}

/// Faults injected into requests (never into `GET /rate_limit`). Rates are fractions in 0..=1.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Fraction of requests answered 502 Bad Gateway.
    pub server_error_rate: f64,
    /// Of the faulted writes, the fraction applied first and then answered 502.
    pub applied_before_error: f64,
    /// Fraction answered as a secondary rate limit, with `retry-after: 1`: 429, or GitHub's
    /// other form of it, 403 (see `secondary_as_403`).
    pub rate_limited_rate: f64,
    /// Of the secondary limits, the fraction answered 403 rather than 429 (GitHub sends both).
    pub secondary_as_403: f64,
    /// Fraction whose connection breaks after the status line, before the body (of the faulted
    /// writes, `applied_before_error` are applied first), as a dropped connection does.
    pub dropped_rate: f64,
    /// Stale list reads: a comment created while this is set is left out of comment lists (per
    /// issue and repo-wide) for a random part of this window, drawn per comment from the seeded
    /// PRNG, and never listed before an earlier comment (replicas apply writes in order).
    /// `GET .../issues/comments/{id}` always sees it. `None`: lists are never stale.
    pub stale_list_reads: Option<std::time::Duration>,
    /// GitHub being far away: every request (`GET /rate_limit` included) waits this long before
    /// it is answered. Requests wait concurrently, as they would on the network.
    pub latency: Option<std::time::Duration>,
}

/// The state a seeded pull request is put in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullState {
    Open,
    /// Closed without merging.
    Closed,
    /// Merged (and so closed), by its author.
    Merged,
}

/// An issue as the emulator holds it.
#[derive(Clone, Debug)]
pub struct SimIssue {
    pub number: u64,
    pub id: u64,
    pub title: String,
    pub body: String,
    /// `open` or `closed`.
    pub state: String,
    pub labels: Vec<String>,
    pub author: String,
}

/// An issue comment as the emulator holds it.
#[derive(Clone, Debug)]
pub struct SimComment {
    pub id: u64,
    pub issue: u64,
    pub author: String,
    pub body: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// Under `Faults::stale_list_reads`: how long after its creation lists first show it.
    pub listed_after: Option<std::time::Duration>,
}

/// One request as the emulator saw it, faulted, refused and 304 ones included.
#[derive(Clone, Debug)]
pub struct RequestLogEntry {
    pub method: String,
    /// The axum route template that matched, e.g. `/repos/{owner}/{repo}/issues`; empty when
    /// no route matched.
    pub route: String,
    pub path: String,
    pub query: String,
    /// The status sent; 0 when the connection was dropped (`Faults::dropped_rate`).
    pub status: u16,
    /// The caller's login; `None` for anonymous or unknown-token requests.
    pub login: Option<String>,
}

impl Sim {
    /// A fresh repository `config.owner/config.name` with no users, issues or labels.
    pub fn new(config: SimConfig) -> Sim {
        Sim {
            inner: Arc::new(Mutex::new(State::new(config))),
            stalls: stall::Stalls::default(),
        }
    }

    /// Locks the state; a poisoned lock is recovered (the data stays consistent per call).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds (or updates) a user of type `User`; returns its id.
    pub fn add_user(&self, login: &str, token: &str, permission: Permission) -> u64 {
        self.lock().add_user(login, Some(token), permission, false)
    }

    /// Adds (or updates) a user of type `Bot`, e.g. `thirdshift[bot]`; returns its id.
    pub fn add_bot(&self, login: &str, token: &str, permission: Permission) -> u64 {
        self.lock().add_user(login, Some(token), permission, true)
    }

    /// Installs a GitHub App on the repository (replacing one with the same id) and adds its
    /// bot user; returns the installation id. JWTs signed with the App's private key then
    /// reach the App endpoints, and the installation tokens they get act as `<slug>[bot]`.
    ///
    /// # Errors
    /// When the public key is not an RSA public key in PEM form.
    pub fn add_app(&self, app: SimApp) -> anyhow::Result<u64> {
        let key = jsonwebtoken::DecodingKey::from_rsa_pem(app.public_key_pem.as_bytes()).map_err(
            |e| anyhow::anyhow!("App {}: not an RSA public key in PEM form: {e}", app.id),
        )?;
        let mut st = self.lock();
        Ok(st.add_app(app.id, &app.slug, &app.name, key, app.permission))
    }

    /// How often injected faults took effect so far.
    pub fn fault_counts(&self) -> FaultCounts {
        self.lock().fault_counts
    }

    /// The bodies of every installation-token request so far (repositories, permissions).
    pub fn token_requests(&self) -> Vec<serde_json::Value> {
        self.lock().token_requests.clone()
    }

    /// How long installation tokens made from now on live (default one hour, as on GitHub);
    /// a request with an expired one is 401 `Bad credentials`.
    pub fn set_installation_token_lifetime(&self, lifetime: std::time::Duration) {
        let lifetime = chrono::Duration::from_std(lifetime).unwrap_or(chrono::Duration::MAX);
        self.lock().installation_token_lifetime = lifetime;
    }

    /// Opens an issue by `author` (created as a user without a token if unknown); labels are
    /// created on first use. Returns the issue number.
    pub fn create_issue(&self, author: &str, title: &str, body: &str, labels: &[&str]) -> u64 {
        let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        self.lock().create_issue(author, title, body, &labels)
    }

    /// Adds a comment by `author` (any login, e.g. a stranger forging records).
    /// Returns the comment id.
    ///
    /// # Panics
    /// If the issue does not exist: seeding a comment on nothing is a bug in the test.
    pub fn add_comment(&self, issue: u64, author: &str, body: &str) -> u64 {
        match self.lock().add_comment(issue, author, body) {
            Some(id) => id,
            None => panic!("Sim::add_comment: issue #{issue} does not exist"),
        }
    }

    /// Edits a comment's body as its author would (`updated_at` moves, the issue's does not).
    /// Returns whether the comment exists.
    pub fn edit_comment(&self, id: u64, body: &str) -> bool {
        self.lock().edit_comment(id, body)
    }

    /// Deletes a comment as its author would. Returns whether it existed.
    pub fn delete_comment(&self, id: u64) -> bool {
        self.lock().delete_comment(id)
    }

    /// Closes an issue as completed, by its author (no-op when it does not exist or is
    /// closed).
    pub fn close_issue(&self, issue: u64) {
        let mut st = self.lock();
        let Some(author) = st.issues.get(&issue).map(|i| i.author.clone()) else {
            return;
        };
        st.set_state(issue, false, Some("completed"), &author);
    }

    /// Replaces an issue's labels, as a person editing the issue would: the repository's owner
    /// (seeding helper; GitHub records the label events).
    pub fn set_labels(&self, issue: u64, labels: &[&str]) {
        let owner = self.lock().config.owner.clone();
        self.set_labels_as(issue, labels, &owner);
    }

    /// Replaces an issue's labels as `actor` (a person, or another tool's login).
    pub fn set_labels_as(&self, issue: u64, labels: &[&str], actor: &str) {
        let names: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        self.lock().set_labels(issue, &names, actor);
    }

    /// Serves the `refs/heads/*` of the bare git repository at `path` as the repository's
    /// branches, read at each request (so pushes show at once); they win over
    /// [`Sim::add_branch`] ones of the same name. An unreadable repository makes branch and
    /// pull requests answer 500 with git's error.
    pub fn set_git_origin(&self, path: PathBuf) {
        self.lock().git_origin = Some(path);
    }

    /// Adds a branch pointing at `sha` (or moves it there), without any git repository.
    pub fn add_branch(&self, name: &str, sha: &str) {
        self.lock()
            .branches
            .insert(name.to_string(), sha.to_string());
    }

    /// Opens a pull request by `author` from `head_branch` into `main`, in `state`, and returns
    /// its number (from the issue number sequence: it is an issue too, listed by `GET /issues`
    /// with a `pull_request` key). The head and base shas are their branches' at this moment;
    /// a branch that does not exist (deleted, say) gets a made-up sha.
    ///
    /// # Panics
    /// If the git origin is set but unreadable: a misconfigured test.
    pub fn create_pull(
        &self,
        author: &str,
        head_branch: &str,
        title: &str,
        state: PullState,
    ) -> u64 {
        let branches = origin::branches(self)
            .unwrap_or_else(|e| panic!("Sim::create_pull: reading the git origin: {e}"));
        let sha = |name: &str| {
            branches
                .get(name)
                .cloned()
                .unwrap_or_else(|| state::fake_sha(&format!("branch:{name}")))
        };
        let pull = state::Pull::new(head_branch, &sha(head_branch), "main", &sha("main"));
        self.lock().create_pull(author, title, pull, state)
    }

    /// A snapshot of one issue.
    pub fn issue(&self, number: u64) -> Option<SimIssue> {
        self.lock().issues.get(&number).map(|i| i.snapshot())
    }

    /// The comments of one issue, in id order.
    pub fn comments(&self, issue: u64) -> Vec<SimComment> {
        let st = self.lock();
        st.comments
            .values()
            .filter(|c| c.issue == issue)
            .map(|c| c.snapshot())
            .collect()
    }

    /// The label changes of one issue, in order, as `(when, "+label by actor")` (`-` when
    /// taken off): what a test prints to explain how an issue got its labels.
    pub fn label_history(&self, issue: u64) -> Vec<(chrono::DateTime<chrono::Utc>, String)> {
        let st = self.lock();
        st.events
            .iter()
            .filter(|e| e.issue == issue)
            .map(|e| {
                let sign = if e.event == "labeled" { '+' } else { '-' };
                (e.created_at, format!("{sign}{} by {}", e.label, e.actor))
            })
            .collect()
    }

    /// The reactions on one comment, as `(login, content)` in the order they were made.
    pub fn comment_reactions(&self, comment_id: u64) -> Vec<(String, String)> {
        let st = self.lock();
        st.reactions
            .iter()
            .filter(|r| r.target == state::Target::Comment(comment_id))
            .map(|r| (r.user.clone(), r.content.clone()))
            .collect()
    }

    /// Every request seen since the start or the last [`Sim::clear_requests`].
    pub fn requests(&self) -> Vec<RequestLogEntry> {
        self.lock().log.clone()
    }

    /// How many logged requests had this method and route template.
    pub fn count(&self, method: &str, route: &str) -> usize {
        let st = self.lock();
        st.log
            .iter()
            .filter(|e| e.method.eq_ignore_ascii_case(method) && e.route == route)
            .count()
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        self.lock().log.clear();
    }

    /// Stamps every comment, label event and issue change from now on with `at` (to the second),
    /// as GitHub's one-second timestamps make many things happen "at once"; `None` lets the
    /// clock run again.
    pub fn freeze_clock(&self, at: Option<chrono::DateTime<chrono::Utc>>) {
        use chrono::SubsecRound as _;
        self.lock().clock = at.map(|t| t.trunc_subsecs(0));
    }

    /// Moves every issue's and comment's timestamps `by` into the past, as if the history seeded
    /// so far had been written earlier (benchmarks seed days of history in a second).
    pub fn backdate(&self, by: std::time::Duration) {
        let by = chrono::Duration::from_std(by).unwrap_or(chrono::Duration::zero());
        let mut st = self.lock();
        for c in st.comments.values_mut() {
            c.created_at -= by;
            c.updated_at -= by;
        }
        for i in st.issues.values_mut() {
            i.created_at -= by;
            i.updated_at -= by;
        }
        for e in st.events.iter_mut() {
            e.created_at -= by;
        }
    }

    /// Replaces the injected faults (the PRNG keeps its position).
    pub fn set_faults(&self, faults: Faults) {
        self.lock().faults = faults;
    }

    /// Holds every later `method` request to `route` (a route template as in the request log)
    /// until `release_stalls`: GitHub being slow, so a client can be killed mid-operation.
    pub fn stall(&self, method: &str, route: &str) {
        self.stalls.add(method, route);
    }

    /// Lets every held request go on and stops holding new ones.
    pub fn release_stalls(&self) {
        self.stalls.release_all();
    }

    /// How many requests are held by a stall right now.
    pub fn stalled(&self) -> usize {
        self.stalls.held()
    }

    /// What is left of this token's hourly budget (an unused token has the full budget).
    pub fn rate_remaining(&self, token: &str) -> u32 {
        let mut st = self.lock();
        let limit = st.config.rate_limit;
        let now = chrono::Utc::now().timestamp();
        let budget = st.budget(token, now);
        limit.saturating_sub(budget.used)
    }

    /// Spends `n` requests of this token's hourly budget, as other jobs sharing the token do.
    pub fn spend(&self, token: &str, n: u32) {
        let mut st = self.lock();
        let now = chrono::Utc::now().timestamp();
        st.budget(token, now);
        if let Some(b) = st.budgets.get_mut(token) {
            b.used = b.used.saturating_add(n);
        }
    }

    /// `owner/name`.
    pub fn repo_full_name(&self) -> String {
        let st = self.lock();
        format!("{}/{}", st.config.owner, st.config.name)
    }

    /// Binds `addr` (port 0 picks one) and serves on the current tokio runtime until the
    /// returned [`SimServer`] is dropped or shut down.
    pub async fn serve(&self, addr: std::net::SocketAddr) -> std::io::Result<SimServer> {
        server::serve(self.clone(), addr).await
    }
}
