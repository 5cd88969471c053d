//! The command line as a user meets it (issue #40): completions and a man page generated from
//! its definitions; the config file's JSON Schema (docs/config.schema.json) generated from the
//! config types, true to the documented example, refusing unknown keys; and a long pass showing
//! progress on a terminal but plain lines when piped; values a reader would refuse refused as
//! usage errors before any request (issue #61).

use crate::harness;
use crate::support;

use std::path::Path;

use harness::*;
use serde_json::Value;
use support::schema::{report, Validator};
use thirdshift_reconciler::protocol::config::Config;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_thirdshift-reconciler")
}

#[test]
fn completions_for_bash_and_the_man_page_are_printed() {
    // When a user asks for the bash completion and the man page
    let completion = std::process::Command::new(bin())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let man = std::process::Command::new(bin())
        .arg("man")
        .output()
        .unwrap();
    // Then both are printed, naming the commands
    assert!(completion.status.success() && man.status.success());
    let completion = String::from_utf8_lossy(&completion.stdout);
    assert!(completion.contains("complete -F"), "{completion}");
    assert!(completion.contains("reconcile"), "{completion}");
    let man = String::from_utf8_lossy(&man.stdout);
    assert!(man.contains(".TH thirdshift-reconciler"), "{man}");
    assert!(man.contains("observe"), "{man}");
}

#[test]
fn sim_and_demo_refuse_repository_options_they_would_ignore() {
    for (command, option) in [
        (["demo"].as_slice(), ["--repo", "acme/widgets"]),
        (["sim", "--port", "0"].as_slice(), ["--host", "h1"]),
    ] {
        let mut cmd = std::process::Command::new(bin());
        cmd.args(command).args(option);
        // (a sim that took the option would serve until killed: the wait has a deadline)
        let out = output_within(&mut cmd, std::time::Duration::from_secs(30), command[0]);
        assert_eq!(out.status.code(), Some(2), "{command:?} {option:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let said = format!("{} means nothing to this command", option[0]);
        assert!(err.contains(&said), "{err}");
    }
}

#[test]
fn demo_tells_what_happened_the_companion_included_with_nothing_cut_mid_word() {
    // When the demo runs, with companions on as outside tests
    let out = std::process::Command::new(bin())
        .arg("demo")
        .env_remove("THIRDSHIFT_COMPANION")
        .output()
        .unwrap();
    // Then it succeeds and tells its five steps in order
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let steps: Vec<&str> = text
        .lines()
        .filter_map(|l| l.get(..3).filter(|p| p.ends_with(". ")))
        .collect();
    assert_eq!(steps, ["1. ", "2. ", "3. ", "4. ", "5. "], "{text}");
    // And the killed Run's Claim was ended by its companion, which the story names
    assert!(text.contains("alpha's companion saw its Run die"), "{text}");
    assert!(text.contains("evidence: host alpha reports"), "{text}");
    // And no text is cut inside a word
    for (i, _) in text.match_indices('…') {
        assert!(text[..i].ends_with(' '), "cut mid-word: {}", &text[..i]);
    }
}

/// docs/config.schema.json, as committed.
fn committed_schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("docs/config.schema.json"))
        .expect("JSON")
}

#[test]
fn the_config_schema_is_the_one_the_config_types_give_and_judges_configs_as_the_tool_does() {
    // Given the schema the config types give, and the committed one
    let generated = Config::json_schema();
    let committed = committed_schema();
    // (THIRDSHIFT_WRITE_SCHEMA=1 writes the generated one to docs/ when they differ; the test
    // still fails then, on the committed one it read first, until the new one is committed)
    if committed != generated && std::env::var_os("THIRDSHIFT_WRITE_SCHEMA").is_some() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config.schema.json");
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(path, text).unwrap();
    }
    // Then the committed one is it
    assert_eq!(
        committed, generated,
        "docs/config.schema.json is stale: run with THIRDSHIFT_WRITE_SCHEMA=1, review, commit"
    );
    // And it accepts the documented example, and refuses an unknown key and a wrong type
    let doc = include_str!("../../docs/config.md");
    let example = &doc[doc.find("## Example").expect("an example")..];
    let start = example.find("```yaml\n").unwrap() + 8;
    let yaml = &example[start..start + example[start..].find("```").unwrap()];
    let value: Value = yaml_serde::from_str(yaml).expect("the example is YAML");
    let validator = Validator::new(&generated);
    if let Err(v) = validator.validate(&generated, &value) {
        panic!(
            "the documented example departs from the schema:\n{}",
            report(&v)
        );
    }
    let mut unknown = value.clone();
    unknown["labels"]["redy"] = "x".into();
    assert!(validator.validate(&generated, &unknown).is_err());
    let mut wrong = value;
    wrong["run"]["kill_grace_secs"] = "soon".into();
    assert!(validator.validate(&generated, &wrong).is_err());
    // And the tool itself names line and column for both
    let err = Config::parse("labels:\n  redy: x\n", "c.yml")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("c.yml:2:3: unknown key `labels.redy`"),
        "{err}"
    );
    let err = Config::parse("run:\n  kill_grace_secs: soon\n", "c.yml")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "c.yml:2:20: run.kill_grace_secs: found the text \"soon\", expected a whole number"
        ),
        "{err}"
    );
}

/// `word` quoted for sh.
fn sh_word(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_pass_shows_progress_on_a_terminal_and_plain_lines_when_piped() {
    // Given twelve issues in progress (a pass with no cache reads each in full)
    let world = World::new().await;
    for k in 0..12 {
        world
            .sim
            .create_issue(BOT, &format!("by hand {k}"), "", &[IN_PROGRESS]);
    }
    // When a pass runs with its output piped
    let out = world.exec("piped", &["reconcile"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Then it says what it reads in plain lines, with no carriage return or colour
    let err = stderr(&out);
    assert!(err.contains("reading 12 issues"), "{err}");
    assert!(err.contains("read 12 issues in"), "{err}");
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    // And when a pass runs on a terminal (a pseudo-terminal, as `script` gives it)
    let args = [
        bin().to_string(),
        "--repo".into(),
        world.sim.repo_full_name(),
        "--api-url".into(),
        world.server.url.clone(),
        "--host".into(),
        "tty".into(),
        "--state-dir".into(),
        world.state_dir("tty").display().to_string(),
        "reconcile".into(),
    ];
    let line: Vec<String> = args.iter().map(|a| sh_word(a)).collect();
    let out = tokio::process::Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GITHUB_TOKEN", BOT_TOKEN)
        .env("RUST_LOG", "warn")
        .env("THIRDSHIFT_COMPANION", "off")
        .env("TERM", "xterm")
        .output()
        .await
        .expect("script runs");
    // Then it draws a progress bar (redrawn in place), not the plain lines
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("reading issues ["), "{shown:?}");
    assert!(shown.contains("12/12"), "{shown:?}");
    assert!(!shown.contains("read 12 issues in"), "{shown:?}");
}

/// The binary run with `args` against an API address where nothing listens (a request would be
/// refused, and said so), no claim in its environment; its output, within 30 s.
fn offline(args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(bin());
    cmd.args(["--repo", "acme/widgets", "--api-url", "http://127.0.0.1:9"])
        .args(args)
        .env_remove("THIRDSHIFT_CLAIM_ID")
        .env("GITHUB_TOKEN", "a-token");
    output_within(&mut cmd, std::time::Duration::from_secs(30), args[0])
}

#[test]
fn an_issue_number_of_zero_is_a_usage_error_before_any_request() {
    // When a user gives issue 0 (or no number at all) to a command that takes an issue
    for args in [
        ["cancel", "--issue", "0"].as_slice(),
        &["status", "--issue", "0"],
        &["claim", "--issue", "0"],
        &["run", "--issue", "0", "--", "true"],
        &["cancel", "--issue", "seven"],
    ] {
        let out = offline(args);
        // Then it is a usage error saying what an issue number is, and no request was tried
        let err = String::from_utf8_lossy(&out.stderr);
        // (exit 2, or 244 for `run`, whose own codes stay clear of the wrapped command's)
        let usage = if args[0] == "run" { 244 } else { 2 };
        assert_eq!(out.status.code(), Some(usage), "{args:?}: {err}");
        assert!(
            err.contains("issue numbers start at 1") || err.contains("not an issue number"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("127.0.0.1"), "{args:?} made a request: {err}");
    }
}

#[test]
fn stage_and_release_outside_a_run_say_how_to_name_the_claim() {
    // When a user runs `stage` or `release` outside a Run, with no --claim
    for args in [
        ["stage", "implementing"].as_slice(),
        &["release", "--outcome", "done"],
    ] {
        let out = offline(args);
        // Then it is a usage error that says where the claim id comes from, not clap's raw
        // "required arguments were not provided"
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("runs inside a Run"), "{args:?}: {err}");
        assert!(err.contains("--claim ID"), "{args:?}: {err}");
        assert!(!err.contains("required arguments"), "{args:?}: {err}");
    }
}

#[test]
fn a_config_value_of_the_wrong_kind_is_a_usage_error_in_yaml_words_with_line_and_column() {
    // Given a config file whose refresh period is a word and whose labels are a list
    let dir = tempfile::tempdir().unwrap();
    for (yaml, place, said) in [
        (
            "observe:\n  refresh_mins: soon\n",
            ":2:",
            "found the text \"soon\", expected a whole number, 0 or more",
        ),
        (
            "labels: [a, b]\n",
            ":1:",
            "found a list, expected a mapping",
        ),
    ] {
        let file = dir.path().join("thirdshift.yml");
        std::fs::write(&file, yaml).unwrap();
        // When a command reads it
        let out = offline(&["--config", file.to_str().unwrap(), "status"]);
        // Then it is a usage error naming the file, line and column, in the YAML's words
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let at = format!("{}{place}", file.display());
        assert!(err.contains(&at), "{err}");
        assert!(err.contains(said), "{err}");
        for rust in ["u64", "struct", "sequence"] {
            assert!(!err.contains(rust), "{err}");
        }
    }
}
