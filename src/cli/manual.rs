//! The command line's own documentation, generated from its clap definitions (`cli.rs`), so it
//! never drifts from them: each subcommand's `--help` with its own options only (the global ones
//! are shown once, by the top-level `--help`), `completions SHELL` a completion script
//! (clap_complete), `man` the man page in roff, and `man --out-dir DIR` one page per subcommand
//! (clap_mangen). Nothing here reads GitHub or the config.

use std::path::{Path, PathBuf};

use clap::{CommandFactory as _, FromArgMatches as _};

use crate::cli::{Cli, Command};

/// The command line as parsed and documented: every global option is still accepted after any
/// subcommand, but listed once, in the top-level help (each subcommand holds a hidden copy, so
/// clap does not add a listed one to it).
pub fn command() -> clap::Command {
    let mut root = Cli::command();
    let globals: Vec<clap::Arg> = (root.get_arguments())
        .filter(|a| a.is_global_set())
        .map(|a| a.clone().hide(true))
        .collect();
    // What each subcommand's help says of the global options it does not list
    let names: Vec<String> = (globals.iter())
        .map(|a| match (a.get_short(), a.get_long()) {
            (Some(short), _) => format!("-{short}"),
            (None, long) => format!("--{}", long.unwrap_or_default()),
        })
        .collect();
    let once = format!(
        "Global options ({}) work here too: see `thirdshift-reconciler --help`.",
        names.join(", ")
    );
    let subcommands: Vec<String> = (root.get_subcommands())
        .map(|s| s.get_name().to_string())
        .collect();
    for name in subcommands {
        root = root.mut_subcommand(name, |sub| {
            let sub = sub.after_help(once.clone());
            globals.iter().fold(sub, |sub, a| sub.arg(a.clone()))
        });
    }
    root
}

/// Parses the process's arguments with [`command`].
pub fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os())
}

/// Parses `args` with [`command`]. `sim` and `demo` use none of the repository options: values
/// the environment gave them (`GITHUB_REPOSITORY` and the like, exported for the other
/// commands) are dropped, so only one given on their command line is refused.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if matches!(cli.command, Command::Sim { .. } | Command::Demo) {
        let sub = matches.subcommand().map(|(_, m)| m);
        let from_env = |id: &str| {
            let env = Some(clap::parser::ValueSource::EnvVariable);
            [Some(&matches), sub]
                .into_iter()
                .flatten()
                .any(|m| m.value_source(id) == env)
        };
        let g = &mut cli.globals;
        forget(&mut g.repo, from_env("repo"));
        forget(&mut g.api_url, from_env("api_url"));
        forget(&mut g.config, from_env("config"));
        forget(&mut g.host, from_env("host"));
        forget(&mut g.state_dir, from_env("state_dir"));
        forget(&mut g.cache, from_env("cache"));
    }
    Ok(cli)
}

fn forget<T>(v: &mut Option<T>, from_env: bool) {
    if from_env {
        *v = None;
    }
}

/// Writes the completion script for `shell` to `out`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "thirdshift-reconciler", out);
}

/// The command as its man pages document it: without clap's `help` subcommand, which has no
/// page, so the main page names none; built, so each subcommand carries its page's name
/// (`thirdshift-reconciler-observe`).
fn documented() -> clap::Command {
    let mut cmd = command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Writes the man page (roff) to `out`.
pub fn man(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(documented()).render(out)?;
    out.flush()
}

/// Writes `thirdshift-reconciler.1` and one page per subcommand
/// (`thirdshift-reconciler-observe.1`, …) to `dir`, the pages the main page's list names;
/// returns their paths.
pub fn man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let cmd = documented();
    let subcommands = cmd.get_subcommands().filter(|s| !s.is_hide_set());
    let mut pages = vec![clap_mangen::Man::new(cmd.clone()).generate_to(dir)?];
    for sub in subcommands {
        pages.push(clap_mangen::Man::new(sub.clone()).generate_to(dir)?);
    }
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_completion_and_the_man_page_name_every_command() {
        let mut script = Vec::new();
        completions(clap_complete::Shell::Bash, &mut script);
        let script = String::from_utf8(script).unwrap();
        let mut page = Vec::new();
        man(&mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.starts_with(".ie") || page.contains(".TH"), "{page}");
        for command in ["observe", "reconcile", "status", "completions"] {
            assert!(script.contains(command), "{command} in the completion");
            assert!(page.contains(command), "{command} in the man page");
        }
    }

    #[test]
    fn every_page_the_man_page_names_is_written_with_out_dir() {
        // Given the main page's list of subcommand pages (`thirdshift-reconciler-observe(1)`)
        let mut page = Vec::new();
        man(&mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        let named: Vec<String> = page
            .split("thirdshift\\-reconciler\\-")
            .skip(1)
            .map(|s| s.split(['(', '\\', ' ', '\n']).next().unwrap().to_string())
            .collect();
        assert!(named.iter().any(|n| n == "observe"), "{page}");
        // When every page is written to a folder
        let dir = tempfile::tempdir().unwrap();
        let pages = man_pages(dir.path()).unwrap();
        // Then each named page is there, and each subcommand's page lists its own options only
        for name in &named {
            let path = dir.path().join(format!("thirdshift-reconciler-{name}.1"));
            assert!(pages.contains(&path), "{name}: {pages:?}");
        }
        let page = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        let option = "\\fB\\-\\-state\\-dir\\fR";
        assert!(page("thirdshift-reconciler.1").contains(option));
        assert!(
            !page("thirdshift-reconciler-observe.1").contains(option),
            "globals once"
        );
    }

    #[test]
    fn the_emulator_ignores_repository_options_the_environment_gives_but_not_the_command_lines() {
        // Given GITHUB_REPOSITORY exported for the other commands (this test's process only)
        // SAFETY: no other test of this binary reads or writes GITHUB_REPOSITORY.
        unsafe { std::env::set_var("GITHUB_REPOSITORY", "acme/widgets") };
        let env = parse_from(["t", "sim", "--port", "8085"]).unwrap();
        let line = parse_from(["t", "sim", "--repo", "a/b"]).unwrap();
        let observe = parse_from(["t", "observe"]).unwrap();
        unsafe { std::env::remove_var("GITHUB_REPOSITORY") };
        // Then `sim` is not given the environment's, but is given (and refuses) the line's
        assert_eq!(env.globals.repo, None);
        assert_eq!(line.globals.repo.as_deref(), Some("a/b"));
        assert!(line.globals.unused_by(&line.command).is_some());
        // And every other command still reads it
        assert_eq!(observe.globals.repo.as_deref(), Some("acme/widgets"));
    }

    #[test]
    fn a_subcommands_help_lists_its_own_options_and_names_the_global_ones_once() {
        let mut cmd = command();
        let help = cmd
            .find_subcommand_mut("observe")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(!help.contains("--state-dir <"), "{help}");
        assert!(
            help.contains("see `thirdshift-reconciler --help`"),
            "{help}"
        );
        let top = command().render_long_help().to_string();
        assert!(top.contains("--state-dir <"), "{top}");
        // And a global option after a subcommand is still read
        let cli = Cli::from_arg_matches(
            &command()
                .try_get_matches_from(["t", "observe", "--host", "h9", "--repo", "a/b"])
                .unwrap(),
        )
        .unwrap();
        assert_eq!(cli.globals.host.as_deref(), Some("h9"));
    }
}
