//! The repository's `.github/thirdshift.yml`: read, checked and turned into types, so a typo is
//! an error naming the file, line and column rather than a setting silently ignored.
//!
//! It does not read the environment or command line (the CLI picks the path and passes it to
//! [`Config::load`]), and it does not add the token's own login to the trusted authors: callers
//! do, because only they know who the token is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod labels;
mod observe;
mod run;
mod yaml_words;
pub use labels::{After, Ending as LabelEnding, Labels, Preset, AGENT_FAILED, NEEDS_TRIAGE};
pub use observe::{ObserveConfig, SILENT_AFTER_REFRESHES};
pub use run::{Forward, KindRun, Kinds, RunConfig, StopPolicy};

/// The whole configuration file. Every key is optional; see `docs/config.md`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub labels: Labels,
    /// Logins whose records are believed, besides the token's own login or App bot.
    pub trusted_authors: Vec<String>,
    /// The issue whose body holds the live view and whose comments hold host reports.
    pub registry_issue: Option<u64>,
    pub run: RunConfig,
    pub recovery: Recovery,
    /// Per-host settings, by host name (as `--host`/`THIRDSHIFT_HOST` or the system names it).
    pub hosts: BTreeMap<String, HostConfig>,
    pub pickup: PickupConfig,
    pub commands: CommandsConfig,
    pub thirdshift: ThirdshiftConfig,
    pub budget: BudgetConfig,
    pub observe: ObserveConfig,
}

/// The API rate budget (docs/config.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    /// Requests kept back for Runs' own end records: every other pass (observe, reconcile,
    /// pickup, status, commands, a Claim being taken) stops once GitHub says no more than this
    /// is left. Default 100: about ten Runs' ends, a tenth of a job token's hourly 1,000.
    pub reserve: u64,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig { reserve: 100 }
    }
}

/// thirdshift's own Runs on this host (docs/thirdshift.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ThirdshiftConfig {
    /// Read thirdshift's Command records when its logs folder exists (default on).
    pub adopt: bool,
    /// thirdshift's logs folder (default `~/.thirdshift/logs`, thirdshift's own default).
    pub logs_dir: Option<std::path::PathBuf>,
    /// The thirdshift binary `cancel` stops a Command with (default `thirdshift` on `PATH`).
    pub bin: Option<std::path::PathBuf>,
    /// What happens to the issue of a thirdshift Command proven dead: `fail` ends it as
    /// thirdshift's own Failed run labels it; `continue` hands it back for thirdshift's own
    /// Pickup to continue its Issue branch, once its work is on origin and its worktree moved
    /// aside, up to `recovery.max_continuations` times per issue (docs/thirdshift.md).
    pub on_dead: OnDead,
    /// What the host of a Run that collides with another on its issue does (a later one, by
    /// the issue's records): `show` only shows it under "Needs you"; `stop` stops it on its
    /// host, its work kept on a branch of its own, the issue's labels left to the Run that
    /// keeps it (docs/thirdshift.md, "Two Runs on one issue").
    pub on_collision: OnCollision,
}

/// What a host does with its Run that collides with another on its issue.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum OnCollision {
    /// Show it, in every view, for a person to stop.
    #[default]
    Show,
    /// Stop it on its host, its work kept on a branch of its own.
    Stop,
}

impl Default for ThirdshiftConfig {
    fn default() -> Self {
        ThirdshiftConfig {
            adopt: true,
            logs_dir: None,
            bin: None,
            on_dead: OnDead::Fail,
            on_collision: OnCollision::Show,
        }
    }
}

/// A repository role, lowest first, as the collaborator-permission API names them (`maintain` and
/// `triage` only in its `role_name`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    None,
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::None => "none",
            Role::Read => "read",
            Role::Triage => "triage",
            Role::Write => "write",
            Role::Maintain => "maintain",
            Role::Admin => "admin",
        }
    }

    /// The role a word names (`role_name` or the legacy `permission`), if it is one GitHub
    /// defines; custom repository roles are not.
    pub fn from_word(word: &str) -> Option<Role> {
        [
            Role::None,
            Role::Read,
            Role::Triage,
            Role::Write,
            Role::Maintain,
            Role::Admin,
        ]
        .into_iter()
        .find(|r| r.as_str() == word)
    }
}

/// Who may give `/thirdshift` commands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CommandsConfig {
    /// The lowest role that may give any command.
    pub permission: Role,
    /// The lowest role that may `recover --force` (end the Claim of a silent host).
    pub force_permission: Role,
}

impl Default for CommandsConfig {
    fn default() -> CommandsConfig {
        CommandsConfig {
            permission: Role::Write,
            force_permission: Role::Maintain,
        }
    }
}

/// One host's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// How many Runs this host carries at once (1 or more).
    pub capacity: u32,
}

/// The order in which `pickup` takes Ready issues.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PickupOrder {
    /// Lowest issue number first (the oldest issue).
    #[default]
    LowestFirst,
    /// Highest issue number first (the newest issue).
    HighestFirst,
}

/// Which Ready issues `pickup` takes, and in what order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PickupConfig {
    /// Issues carrying any of these labels are left alone, besides `labels.in_progress` and
    /// `labels.hand_off`, which are always skipped.
    pub skip_labels: Vec<String>,
    pub order: PickupOrder,
    /// This host's Failure limit: pickup takes nothing while this many open issues, whose last
    /// Run was this host's, were handed to people for failing (as thirdshift's Failure limit).
    pub failure_limit: u32,
}

impl Default for PickupConfig {
    fn default() -> PickupConfig {
        PickupConfig {
            skip_labels: ["needs-triage", "needs-info", "ready-for-human", "wontfix"]
                .map(String::from)
                .to_vec(),
            order: PickupOrder::LowestFirst,
            failure_limit: 3,
        }
    }
}

/// What happens to the issue of a Run proven dead.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum OnDead {
    /// End it as a failed run: back to the queue if nothing was kept, else to people.
    #[default]
    Fail,
    /// Re-queue it as a Continuation that resumes the agent session, up to
    /// `max_continuations` times per issue; then as `fail`.
    Continue,
}

/// The recovery policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Recovery {
    pub on_dead: OnDead,
    /// Continuations per issue, counted from its end records.
    pub max_continuations: u32,
    /// An issue whose last this many Runs failed, died or were cancelled with nothing on origin
    /// is handed to people rather than queued or continued again, counted from its end records.
    pub max_failures: u32,
}

impl Default for Recovery {
    fn default() -> Recovery {
        Recovery {
            on_dead: OnDead::Fail,
            max_continuations: 2,
            max_failures: 2,
        }
    }
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {} does not exist", path.display())]
    NotFound { path: PathBuf },
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// YAML that does not fit the schema; `line`/`column` are 1-based when known.
    #[error("{}: {message}", place(origin, *location))]
    Parse {
        origin: String,
        location: Option<(usize, usize)>,
        message: String,
    },
    /// Well-formed settings that cannot work together.
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

fn place(origin: &str, location: Option<(usize, usize)>) -> String {
    match location {
        Some((line, column)) => format!("{origin}:{line}:{column}"),
        None => origin.to_string(),
    }
}

/// GitHub's limit on a label name's length.
const MAX_LABEL_CHARS: usize = 50;

impl Config {
    /// Whether an issue whose labels `has` says it carries is kept off agents by a person's
    /// label: the hand-off label or one of `pickup.skip_labels`.
    pub fn keeps_agents_off(&self, has: impl Fn(&str) -> bool) -> bool {
        has(&self.labels.hand_off) || self.pickup.skip_labels.iter().any(|l| has(l))
    }

    pub const DEFAULT_PATH: &'static str = ".github/thirdshift.yml";

    /// The JSON Schema of the config file, from these types (docs/config.schema.json: editors
    /// read it to complete and check `.github/thirdshift.yml`).
    pub fn json_schema() -> serde_json::Value {
        let mut schema = serde_json::to_value(schemars::schema_for!(Config)).unwrap_or_default();
        schema["$id"] = "urn:thirdshift-reconciler:config-schema".into();
        schema["title"] = ".github/thirdshift.yml".into();
        schema
    }

    /// Parses and checks `text`; `origin` names it in errors (usually the path).
    /// An empty file, or one holding only comments, gives the defaults.
    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let parse_error = |e: yaml_serde::Error| ConfigError::Parse {
            origin: origin.to_string(),
            location: e.location().map(|l| (l.line(), l.column())),
            message: yaml_words::describe(&e),
        };
        // An empty document deserialises to the defaults (every struct is `default`).
        let config: Config = yaml_serde::from_str(text).map_err(parse_error)?;
        config.validate().map_err(|message| ConfigError::Invalid {
            origin: origin.to_string(),
            message,
        })?;
        Ok(config)
    }

    /// Reads `explicit`, which must exist; without it, [`Config::DEFAULT_PATH`] under the
    /// current directory if that exists; else the defaults.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        Config::load_in(explicit, Path::new(""))
    }

    /// [`Config::load`] with the default path taken under `dir`.
    fn load_in(explicit: Option<&Path>, dir: &Path) -> Result<Config, ConfigError> {
        let path = match explicit {
            Some(p) if !p.exists() => {
                return Err(ConfigError::NotFound {
                    path: p.to_path_buf(),
                })
            }
            Some(p) => p.to_path_buf(),
            None => {
                let p = dir.join(Config::DEFAULT_PATH);
                if !p.exists() {
                    return Ok(Config::default());
                }
                p
            }
        };
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// The checks the schema cannot express.
    fn validate(&self) -> Result<(), String> {
        let l = &self.labels;
        for (key, name) in [
            ("ready", &l.ready),
            ("in_progress", &l.in_progress),
            ("hand_off", &l.hand_off),
        ] {
            if name.trim().is_empty() {
                return Err(format!("labels.{key} must not be empty"));
            }
            if name.chars().count() > MAX_LABEL_CHARS {
                return Err(format!(
                    "labels.{key} `{name}` is longer than GitHub's {MAX_LABEL_CHARS} characters"
                ));
            }
        }
        for (key, list) in l.after.given() {
            if let Some(bad) = list
                .iter()
                .find(|n| n.trim().is_empty() || n.chars().count() > MAX_LABEL_CHARS)
            {
                return Err(format!(
                    "labels.after.{key} holds `{bad}`, which is not a label name (1 to \
                     {MAX_LABEL_CHARS} characters)"
                ));
            }
        }
        // GitHub label names ignore case.
        for (key, other) in [("ready", &l.ready), ("hand_off", &l.hand_off)] {
            if other.eq_ignore_ascii_case(&l.in_progress) {
                return Err(format!(
                    "labels.{key} and labels.in_progress are both `{other}`: \
                     they must differ, or a Claim could not be told from its absence"
                ));
            }
        }
        for login in &self.trusted_authors {
            check_login(login)?;
        }
        if self.registry_issue == Some(0) {
            return Err("registry_issue must be an issue number (1 or more)".into());
        }
        for (name, host) in &self.hosts {
            if name.trim().is_empty() {
                return Err("hosts holds an empty host name".into());
            }
            if host.capacity == 0 {
                return Err(format!(
                    "hosts.{name}.capacity must be 1 or more (leave the host out to derive it \
                     from its cores and memory)"
                ));
            }
        }
        let c = &self.commands;
        if c.permission == Role::None || c.force_permission < c.permission {
            return Err(format!(
                "commands.permission must be read or more, and commands.force_permission at \
                 least as high (found {} and {})",
                c.permission.as_str(),
                c.force_permission.as_str()
            ));
        }
        if self.observe.refresh_mins == 0 {
            return Err(
                "observe.refresh_mins must be 1 or more (minutes between rewrites of an \
                 unchanged host report)"
                    .into(),
            );
        }
        let most = crate::protocol::record::end::MAX_FAILURES_LISTED;
        if !(1..=most).contains(&(self.recovery.max_failures as usize)) {
            return Err(format!(
                "recovery.max_failures must be from 1 to {most} (found {})",
                self.recovery.max_failures
            ));
        }
        if self.pickup.failure_limit == 0 {
            return Err(
                "pickup.failure_limit must be 1 or more (0 would never let pickup take an issue)"
                    .into(),
            );
        }
        if let Some(l) = self.pickup.skip_labels.iter().find(|l| l.trim().is_empty()) {
            return Err(format!(
                "pickup.skip_labels holds an empty label name ({l:?})"
            ));
        }
        Ok(())
    }
}

fn check_login(login: &str) -> Result<(), String> {
    if login.trim().is_empty() {
        return Err("trusted_authors holds an empty login".into());
    }
    if let Some(bare) = login.strip_prefix('@') {
        return Err(format!(
            "trusted_authors: write `{bare}` without the `@` (found `{login}`)"
        ));
    }
    if login.chars().any(char::is_whitespace) {
        return Err(format!("trusted_authors: `{login}` is not a GitHub login"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, ".github/thirdshift.yml")
    }

    #[test]
    fn command_permissions_default_to_write_and_maintain_and_must_be_ordered() {
        let d = Config::default().commands;
        assert_eq!(
            (d.permission, d.force_permission),
            (Role::Write, Role::Maintain)
        );
        let c = parse("commands:\n  permission: triage\n  force_permission: admin\n").unwrap();
        assert_eq!(
            (c.commands.permission, c.commands.force_permission),
            (Role::Triage, Role::Admin)
        );
        for bad in [
            "commands:\n  permission: admin\n  force_permission: write\n",
            "commands:\n  permission: none\n",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("commands.permission"), "{err}");
        }
        let err = parse("commands:\n  permission: owner\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            ".github/thirdshift.yml:2:15: commands.permission: unknown value `owner`, expected \
             one of `none`, `read`, `triage`, `write`, `maintain`, `admin`"
        );
        let err = parse("commands:\n  perm: write\n").unwrap_err().to_string();
        assert_eq!(
            err,
            ".github/thirdshift.yml:2:3: unknown key `commands.perm` (expected permission or \
             force_permission)"
        );
    }

    #[test]
    fn recovery_policy_reads_continue_and_refuses_unknown_words() {
        let c = parse("recovery:\n  on_dead: continue\n  max_continuations: 3\n").unwrap();
        assert_eq!(c.recovery.on_dead, OnDead::Continue);
        assert_eq!(c.recovery.max_continuations, 3);
        assert_eq!(Config::default().recovery.on_dead, OnDead::Fail);
        let err = parse("recovery:\n  on_dead: retry\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(".github/thirdshift.yml:2:") && err.contains("retry"),
            "{err}"
        );
    }

    #[test]
    fn empty_or_comment_only_file_gives_the_defaults() {
        for text in ["", "\n", "# nothing yet\n", "---\n"] {
            assert_eq!(parse(text).unwrap(), Config::default(), "{text:?}");
        }
        let d = Config::default();
        assert_eq!(d.labels.ready, "ready-for-agent");
        assert_eq!(d.labels.in_progress, "in-progress");
        assert_eq!(d.labels.hand_off, "ready-for-human");
        assert_eq!(d.run.kill_grace_secs, 10);
        assert_eq!(d.registry_issue, None);
        assert!(d.trusted_authors.is_empty());
    }

    #[test]
    fn every_key_is_read() {
        let text =
            "labels:\n  ready: agent-ok\n  in_progress: agent-busy\n  hand_off: needs-human\n\
                    trusted_authors:\n  - \"thirdshift-bot[bot]\"\n  - Alice\nregistry_issue: 7\n\
                    run:\n  kill_grace_secs: 30\n";
        let c = parse(text).unwrap();
        assert_eq!(c.labels.ready, "agent-ok");
        assert_eq!(c.labels.in_progress, "agent-busy");
        assert_eq!(c.labels.hand_off, "needs-human");
        assert_eq!(c.trusted_authors, ["thirdshift-bot[bot]", "Alice"]);
        assert_eq!(c.registry_issue, Some(7));
        assert_eq!(c.run.kill_grace_secs, 30);
    }

    #[test]
    fn example_in_the_docs_parses() {
        let doc = include_str!("../../docs/config.md");
        // every YAML block of the page parses
        for (i, block) in doc.split("```yaml\n").skip(1).enumerate() {
            let yaml = &block[..block.find("```").unwrap()];
            assert!(parse(yaml).is_ok(), "yaml block {i}: {yaml}");
        }
        // and the one under "## Example" says what it shows
        let example = &doc[doc.find("## Example").expect("an Example section")..];
        let start = example
            .find("```yaml\n")
            .expect("docs/config.md has a yaml example")
            + 8;
        let len = example[start..].find("```").unwrap();
        let c = parse(&example[start..start + len]).unwrap();
        assert_eq!(c.trusted_authors, ["thirdshift-app[bot]", "alice"]);
        assert_eq!(c.labels.in_progress, "in-progress");
        assert_eq!(c.hosts["builder-1"].capacity, 2);
        assert!(c.pickup.skip_labels.contains(&"blocked".to_string()));
    }

    #[test]
    fn thirdshift_adoption_is_on_by_default_and_its_logs_folder_can_be_named() {
        let c = parse("labels:\n  ready: x\n").unwrap();
        assert_eq!(c.thirdshift, ThirdshiftConfig::default());
        assert!(c.thirdshift.adopt);
        let c = parse("thirdshift:\n  adopt: false\n  logs_dir: /srv/ts-logs\n").unwrap();
        assert!(!c.thirdshift.adopt);
        assert_eq!(
            c.thirdshift.logs_dir.as_deref(),
            Some(Path::new("/srv/ts-logs"))
        );
        let err = parse("thirdshift:\n  logdir: x\n").unwrap_err().to_string();
        assert!(
            err.contains("2:3") && err.contains("thirdshift.logdir"),
            "{err}"
        );
    }

    #[test]
    fn a_dead_thirdshift_command_fails_by_default_and_can_be_handed_back_to_continue() {
        assert_eq!(Config::default().thirdshift.on_dead, OnDead::Fail);
        let c = parse("thirdshift:\n  on_dead: continue\n").unwrap();
        assert_eq!(c.thirdshift.on_dead, OnDead::Continue);
        let err = parse("thirdshift:\n  on_dead: resume\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":2:") && err.contains("resume"), "{err}");
    }

    #[test]
    fn a_colliding_run_is_shown_by_default_and_stopped_when_asked() {
        assert_eq!(Config::default().thirdshift.on_collision, OnCollision::Show);
        let c = parse("thirdshift:\n  on_collision: stop\n").unwrap();
        assert_eq!(c.thirdshift.on_collision, OnCollision::Stop);
        let err = parse("thirdshift:\n  on_collision: kill\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":2:") && err.contains("kill"), "{err}");
    }

    #[test]
    fn keys_left_out_keep_their_defaults() {
        let c = parse("labels:\n  hand_off: humans\nrun:\n").unwrap();
        assert_eq!(c.labels.ready, "ready-for-agent");
        assert_eq!(c.labels.hand_off, "humans");
        assert_eq!(c.run.kill_grace_secs, 10);
    }

    #[test]
    fn unknown_config_key_names_line_and_column() {
        // given a typo in a top-level key on line 3
        let text = "# settings\nregistry_issue: 7\nlables:\n  ready: x\n";
        // when it is parsed
        let err = parse(text).unwrap_err().to_string();
        // then the error names the file, line, column, the key and what is allowed
        assert_eq!(
            err,
            ".github/thirdshift.yml:3:1: unknown key `lables` \
             (expected one of labels, trusted_authors, registry_issue, run, recovery, hosts, \
             pickup, commands, thirdshift, budget, observe)"
        );
    }

    #[test]
    fn unknown_nested_key_is_named_with_its_path() {
        let err = parse("labels:\n  ready: x\n    \n  redy: y\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            ".github/thirdshift.yml:4:3: unknown key `labels.redy` \
             (expected one of ready, in_progress, hand_off, preset, after)"
        );
        let err = parse("run:\n    grace: 3\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            ".github/thirdshift.yml:2:5: unknown key `run.grace` \
             (expected one of kill_grace_secs, forward, kinds)"
        );
    }

    #[test]
    fn wrong_type_names_the_key_and_place() {
        let err = parse("run:\n  kill_grace_secs: -1\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(".github/thirdshift.yml:2:20: run.kill_grace_secs: "),
            "{err}"
        );
        assert!(
            err.ends_with("found the number `-1`, expected a whole number, 0 or more"),
            "{err}"
        );
    }

    #[test]
    fn broken_yaml_is_a_parse_error_with_a_place() {
        let err = parse("labels: [\n").unwrap_err();
        assert!(
            matches!(
                err,
                ConfigError::Parse {
                    location: Some(_),
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn empty_label_name_is_refused() {
        let err = parse("labels:\n  hand_off: '  '\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            ".github/thirdshift.yml: labels.hand_off must not be empty"
        );
    }

    #[test]
    fn ready_and_in_progress_must_differ_ignoring_case() {
        let err = parse("labels:\n  ready: Busy\n  in_progress: busy\n").unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains("labels.ready and labels.in_progress"),
            "{err}"
        );
    }

    #[test]
    fn label_longer_than_github_allows_is_refused() {
        let text = format!("labels:\n  ready: {}\n", "x".repeat(51));
        assert!(parse(&text)
            .unwrap_err()
            .to_string()
            .contains("50 characters"));
    }

    #[test]
    fn trusted_author_written_with_at_sign_gets_a_hint() {
        let err = parse("trusted_authors: ['@alice']\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("write `alice` without the `@`"), "{err}");
    }

    #[test]
    fn host_capacities_and_pickup_selection_are_read() {
        let text = "hosts:\n  h1:\n    capacity: 2\n  big-box:\n    capacity: 6\n\
                    pickup:\n  skip_labels: [blocked]\n  order: highest-first\n";
        let c = parse(text).unwrap();
        assert_eq!(c.hosts["h1"].capacity, 2);
        assert_eq!(c.hosts["big-box"].capacity, 6);
        assert_eq!(c.pickup.skip_labels, ["blocked"]);
        assert_eq!(c.pickup.order, PickupOrder::HighestFirst);
        let d = Config::default();
        assert!(d.hosts.is_empty());
        assert_eq!(d.pickup.order, PickupOrder::LowestFirst);
        assert!(d.pickup.skip_labels.contains(&"needs-triage".to_string()));
    }

    #[test]
    fn host_capacity_zero_or_a_typo_under_a_host_is_refused() {
        let err = parse("hosts:\n  h1:\n    capacity: 0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("hosts.h1.capacity must be 1 or more"), "{err}");
        let err = parse("hosts:\n  h1:\n    capacty: 2\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(".github/thirdshift.yml:3:5:") && err.contains("capacty"),
            "{err}"
        );
        let err = parse("pickup:\n  order: random\n").unwrap_err().to_string();
        assert!(err.contains("random"), "{err}");
    }

    #[test]
    fn registry_issue_zero_is_refused() {
        let err = parse("registry_issue: 0\n").unwrap_err().to_string();
        assert_eq!(
            err,
            ".github/thirdshift.yml: registry_issue must be an issue number (1 or more)"
        );
    }

    #[test]
    fn without_a_path_the_default_file_is_read_if_present() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Config::load_in(None, dir.path()).unwrap(),
            Config::default()
        );
        std::fs::create_dir(dir.path().join(".github")).unwrap();
        std::fs::write(dir.path().join(Config::DEFAULT_PATH), "registry_issue: 9\n").unwrap();
        assert_eq!(
            Config::load_in(None, dir.path()).unwrap().registry_issue,
            Some(9)
        );
    }

    #[test]
    fn explicit_path_that_does_not_exist_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.yml");
        let err = Config::load(Some(&missing)).unwrap_err();
        assert!(matches!(err, ConfigError::NotFound { .. }), "{err:?}");
        assert!(err.to_string().contains("nope.yml"), "{err}");
    }

    #[test]
    fn explicit_path_is_read_and_named_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.yml");
        std::fs::write(&path, "run:\n  kill_grace_secs: 3\n").unwrap();
        assert_eq!(Config::load(Some(&path)).unwrap().run.kill_grace_secs, 3);
        std::fs::write(&path, "bogus: 1\n").unwrap();
        let err = Config::load(Some(&path)).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}:1:1: unknown key `bogus`", path.display())),
            "{err}"
        );
    }
}
