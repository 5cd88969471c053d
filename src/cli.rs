//! The command line, as the design's Interface names it, on top of every other layer: the clap
//! definitions here (no behaviour), dispatch to the use cases (`app`), the generated manual
//! (`manual`), what a GitHub Actions runner is told (`workflow`) and, with the default
//! `emulator` feature, the `demo`.

pub mod app;
mod companion;
#[cfg(feature = "emulator")]
pub mod demo;
pub mod manual;
pub mod workflow;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// What every command's help ends with: exit codes and the environment it reads.
pub const FOOTER: &str = "\
Exit codes: 0 ok, 1 error, 2 usage, 3 claim lost (claim), 4 the Claim is no longer ours (stage);
`run` passes its command's status through (see `run --help`).

Environment: GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_TOKEN or GH_TOKEN (a token), or
THIRDSHIFT_APP_ID + THIRDSHIFT_APP_KEY (PEM or path) [+ THIRDSHIFT_INSTALLATION_ID] (a GitHub App,
which wins); THIRDSHIFT_HOST, THIRDSHIFT_STATE_DIR, THIRDSHIFT_CONFIG, THIRDSHIFT_CACHE;
RUST_LOG (log filter, as -v/-q), NO_COLOR. Docs: docs/config.md, docs/operations.md.";

/// Self-healing, visible agent Runs on GitHub issues.
#[derive(Debug, Parser)]
#[command(
    name = "thirdshift-reconciler",
    version,
    about,
    long_about = None,
    after_help = FOOTER
)]
pub struct Cli {
    #[command(flatten)]
    pub globals: Globals,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command understands.
#[derive(Clone, Debug, Default, Args)]
pub struct Globals {
    /// The repository, OWNER/NAME.
    #[arg(long, global = true, env = "GITHUB_REPOSITORY", help_heading = GLOBAL)]
    pub repo: Option<String>,
    /// The GitHub API base URL (GitHub Enterprise or the emulator).
    #[arg(long, global = true, env = "GITHUB_API_URL", help_heading = GLOBAL)]
    pub api_url: Option<String>,
    /// The config file (default: .github/thirdshift.yml when present).
    #[arg(long, global = true, env = "THIRDSHIFT_CONFIG", help_heading = GLOBAL)]
    pub config: Option<PathBuf>,
    /// This host's name in claim records (default: the system host name).
    #[arg(long, global = true, env = "THIRDSHIFT_HOST", help_heading = GLOBAL)]
    pub host: Option<String>,
    /// The folder of this host's local Claim records.
    #[arg(long, global = true, env = "THIRDSHIFT_STATE_DIR", help_heading = GLOBAL)]
    pub state_dir: Option<PathBuf>,
    /// The cache kept between passes (default: cache/OWNER--NAME.json in the state folder).
    #[arg(long, global = true, env = "THIRDSHIFT_CACHE", help_heading = GLOBAL)]
    pub cache: Option<PathBuf>,
    /// Read every issue's comments in full, without the cache (the baseline it is measured by).
    #[arg(long, global = true, conflicts_with = "cache", help_heading = GLOBAL)]
    pub no_cache: bool,
    /// Log more: -v what each pass does, -vv every request (RUST_LOG, when set, wins).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// Log only errors (RUST_LOG, when set, wins).
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    pub quiet: bool,
}

/// The help heading of the options every command understands.
const GLOBAL: &str = "Global options";

impl Globals {
    /// What names the repository, the API, the config, this host and its state folder.
    pub fn options(&self) -> crate::context::Options {
        crate::context::Options {
            repo: self.repo.clone(),
            api_url: self.api_url.clone(),
            config: self.config.clone(),
            host: self.host.clone(),
            state_dir: self.state_dir.clone(),
            cache: self.cache.clone(),
            no_cache: self.no_cache,
        }
    }

    /// The first option given that `command` does not use (`sim` and `demo` use none of the
    /// repository's), for a usage error rather than an option silently ignored.
    pub fn unused_by(&self, command: &Command) -> Option<&'static str> {
        if !matches!(command, Command::Sim { .. } | Command::Demo) {
            return None;
        }
        [
            (self.repo.is_some(), "--repo"),
            (self.api_url.is_some(), "--api-url"),
            (self.config.is_some(), "--config"),
            (self.host.is_some(), "--host"),
            (self.state_dir.is_some(), "--state-dir"),
            (self.cache.is_some(), "--cache"),
            (self.no_cache, "--no-cache"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Take the Claim on an issue, run CMD in its own session, end the Claim when CMD exits.
    ///
    /// Exit status: 0 when CMD exited 0 (the Claim ended done). CMD's own status passes through
    /// when it is 1 to 239 (128+N when signal N killed CMD or stopped the Run); CMD statuses 240
    /// to 255 exit 240, the exact one is in the end record. The Run's own outcomes never collide
    /// with those: 241 CMD could not be started (the Claim ended failed, labels back as it found
    /// them), 242 the Claim was not taken, 243 the Claim stopped being ours, 244 wrong usage or
    /// a value readers would refuse, 245 any other error (network, permissions).
    Run(RunArgs),
    /// Take the Claim on an issue for the calling process; prints the claim id. Exit 0 won, 3 lost.
    Claim(ClaimArgs),
    /// Inside a Run: report a stage (re-checks ownership; exit 4 if the Claim is no longer ours).
    Stage(StageArgs),
    /// End a Claim: inside a Run, or with --claim ID.
    Release(ReleaseArgs),
    /// Claim Ready issues up to this host's free capacity, one detached Run each, then exit.
    Pickup(PickupArgs),
    /// Check this host's Claims and write its host report.
    Observe {
        /// Also run a reconcile pass afterwards.
        #[arg(long)]
        reconcile: bool,
    },
    /// End Claims whose owner is proven dead, answer waiting commands, write the live view.
    Reconcile {
        /// Read and plan, print what the pass would write, and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Ask the owning host to stop the Run on an issue: posts a cancel request (once) that the
    /// host's next `observe` carries out; the issue then waits for a person (or `--requeue`).
    /// Exit 0, also when there is nothing to cancel.
    Cancel {
        /// The issue whose Run to stop.
        #[arg(long, value_parser = issue_number)]
        issue: u64,
        /// Why, in a sentence, for the request and the end record.
        #[arg(long)]
        reason: Option<String>,
        /// Put the issue straight back in the queue once the Run has stopped. Without it the
        /// cancel holds the issue: pickup leaves it until a person puts the ready label back.
        #[arg(long)]
        requeue: bool,
    },
    /// Handle one issue_comment event payload: a `/thirdshift` command in a new comment.
    Command {
        /// The event payload file (in an Action: $GITHUB_EVENT_PATH).
        #[arg(long, value_name = "FILE")]
        event: PathBuf,
    },
    /// Show every active Run on every machine, the hosts and the last recoveries: a table on
    /// the terminal, `--json` for scripts (docs/status.schema.json), `--html FILE` for a static
    /// page, or `--issue N` for one issue's Claim history.
    Status {
        /// Print JSON (schema: docs/status.schema.json) instead of the table.
        #[arg(long, conflicts_with = "issue")]
        json: bool,
        /// Write a self-contained HTML page to FILE.
        #[arg(long, value_name = "FILE", conflicts_with = "issue")]
        html: Option<PathBuf>,
        /// Show one issue's Claim history instead.
        #[arg(long, value_name = "N", value_parser = issue_number)]
        issue: Option<u64>,
    },
    /// The whole story on the built-in emulator, no token needed.
    #[cfg_attr(not(feature = "emulator"), command(hide = true))]
    Demo,
    /// Started by each Run, in a session of its own: waits for the Run's process to end, then
    /// passes (observe, reconcile) until its Claim is ended. Not for people.
    #[command(hide = true)]
    Companion {
        /// The Run's claim id.
        #[arg(long)]
        claim: String,
        /// The Run's process, `PID:START_TICKS`.
        #[arg(long)]
        run: String,
        /// For a thirdshift Command's companion (started by `observe`): the Command's issue.
        #[arg(long)]
        issue: Option<u64>,
    },
    /// Print a completion script for SHELL (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `thirdshift-reconciler man > thirdshift-reconciler.1`; with
    /// `--out-dir DIR`, write it and one page per subcommand there instead.
    Man {
        /// Write thirdshift-reconciler.1 and thirdshift-reconciler-SUBCOMMAND.1 pages here.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// Serve the GitHub emulator for people and scripts.
    #[cfg_attr(not(feature = "emulator"), command(hide = true))]
    Sim {
        /// Port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// YAML file with the repository, users and issues to start with.
        #[arg(long)]
        seed: Option<PathBuf>,
    },
}

/// The kind of a Run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// An ordinary issue delivered as a pull request.
    Ticket,
    /// A specification issue.
    Spec,
}

impl From<KindArg> for crate::protocol::record::RunKind {
    fn from(k: KindArg) -> Self {
        match k {
            KindArg::Ticket => crate::protocol::record::RunKind::Ticket,
            KindArg::Spec => crate::protocol::record::RunKind::Spec,
        }
    }
}

/// `run` arguments.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub claim: ClaimArgs,
    /// The command to run, after `--`.
    #[arg(last = true, required = true, num_args = 1..)]
    pub cmd: Vec<String>,
}

/// What a Claim records about the Run that takes it (`claim` arguments).
#[derive(Debug, Args)]
pub struct ClaimArgs {
    /// The issue to claim.
    #[arg(long, value_parser = issue_number)]
    pub issue: u64,
    /// What the Run works on: an ordinary ticket or a specification.
    #[arg(long, value_enum, default_value_t = KindArg::Ticket)]
    pub kind: KindArg,
    /// The agent Harness (claude, codex, …), recorded in the claim.
    #[arg(long)]
    pub harness: Option<String>,
    /// The agent session id, when known up front.
    #[arg(long)]
    pub session: Option<String>,
    /// The Run's git worktree, so a dead Run's work can be salvaged there.
    #[arg(long)]
    pub worktree: Option<std::path::PathBuf>,
    /// The Issue branch the Run works on (default: the branch the worktree has checked out,
    /// else `issue-N`); a salvage pushes exactly this branch.
    #[arg(long)]
    pub branch: Option<String>,
}

/// `stage` arguments.
#[derive(Debug, Args)]
pub struct StageArgs {
    /// The stage name, e.g. `implementing`.
    pub name: String,
    /// The agent session id, once known.
    #[arg(long)]
    pub session: Option<String>,
    /// A log path or URL to add to the claim record.
    #[arg(long)]
    pub log: Option<String>,
    /// The Run's git worktree, once it exists (its checked-out branch becomes the Claim's,
    /// unless `--branch` names one).
    #[arg(long)]
    pub worktree: Option<std::path::PathBuf>,
    /// The Issue branch the Run works on now.
    #[arg(long)]
    pub branch: Option<String>,
    /// The Claim (default: `THIRDSHIFT_CLAIM_ID`, set inside a Run).
    #[arg(long, env = "THIRDSHIFT_CLAIM_ID")]
    pub claim: Option<String>,
}

/// How a Claim ends, for `release`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReleaseOutcome {
    /// The work is delivered.
    Done,
    /// The Run failed; its issue goes by the label conventions.
    Failed,
    /// The Run stops and gives the issue back.
    HandedBack,
}

/// `release` arguments.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// How the Claim ends: done, failed or handed-back.
    #[arg(long, value_enum)]
    pub outcome: ReleaseOutcome,
    /// The Claim (default: `THIRDSHIFT_CLAIM_ID`, set inside a Run).
    #[arg(long, env = "THIRDSHIFT_CLAIM_ID")]
    pub claim: Option<String>,
    /// Why, in a sentence, for the end record.
    #[arg(long)]
    pub reason: Option<String>,
}

/// `pickup` arguments.
#[derive(Debug, Args)]
pub struct PickupArgs {
    /// Start at most this many Runs in this pass (fewer when fewer slots are free).
    #[arg(long)]
    pub max: Option<u32>,
    /// The kind of the Runs it starts (passed to each `run`; default ticket).
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// The agent Harness of the Runs it starts (passed to each `run`, recorded in the claim).
    #[arg(long)]
    pub harness: Option<String>,
    /// The command each Run runs, after `--`.
    #[arg(last = true, num_args = 1..)]
    pub cmd: Vec<String>,
}

/// The global options that take a value as the next word.
const GLOBALS_WITH_VALUE: [&str; 6] = [
    "--repo",
    "--api-url",
    "--config",
    "--host",
    "--state-dir",
    "--cache",
];

/// Whether the command line `args` (without the program name) asks for `run`: its first word
/// that is neither a global option nor an option's value. For `run`'s own usage exit code.
pub fn is_run(args: impl IntoIterator<Item = String>) -> bool {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if !arg.starts_with('-') {
            return arg == "run";
        }
        if GLOBALS_WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_command_line_asking_for_run_is_told_apart_from_option_values() {
        assert!(is_run(words("run --issue 3 -- true")));
        assert!(is_run(words("--repo o/r --no-cache run")));
        assert!(is_run(words("--host=h run")));
        assert!(!is_run(words("--host run claim --issue 3")));
        assert!(!is_run(words("claim --issue 3")));
        assert!(!is_run(words("--no-cache")));
    }
}

#[cfg(test)]
mod help_tests {
    use super::*;
    use clap::CommandFactory as _;

    /// Every visible subcommand and option of `cmd`, with where it is.
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        if cmd
            .get_about()
            .is_none_or(|a| a.to_string().trim().is_empty())
        {
            out.push(format!("{path}: no description"));
        }
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if arg.is_hide_set() || id == "help" || id == "version" {
                continue;
            }
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if help.trim().is_empty() {
                out.push(format!("{path} --{id}: no description"));
            }
        }
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_command_and_option_has_a_description_and_none_is_not_yet_built() {
        let cmd = Cli::command();
        let mut missing = Vec::new();
        walk(&cmd, "thirdshift-reconciler", &mut missing);
        assert!(missing.is_empty(), "{missing:#?}");
        let mut all = cmd.clone();
        let help = all.render_long_help().to_string();
        assert!(!help.contains("not yet built"), "{help}");
        for sub in cmd.get_subcommands() {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            assert!(
                !about.contains("not yet built"),
                "{}: {about}",
                sub.get_name()
            );
        }
        assert!(
            help.contains("Exit codes:") && help.contains("GITHUB_TOKEN"),
            "{help}"
        );
        assert!(help.contains("Global options"), "{help}");
    }
}

/// An issue number as `--issue` takes it: GitHub numbers issues from 1, so 0 or anything else is
/// refused before any request is made.
fn issue_number(value: &str) -> Result<u64, String> {
    match value.parse::<u64>() {
        Ok(0) => Err("issue numbers start at 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err("not an issue number (a whole number, 1 or more)".to_string()),
    }
}
