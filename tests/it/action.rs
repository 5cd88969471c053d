//! The Action and the workflows as users run them: no workflow or Action step expands an
//! expression (comment text, titles, branch names) inside a shell line; the Action's own steps,
//! run the way a runner runs them against the emulator, observe and reconcile for a host and
//! write the step summary; a host without a runner gets the same from its crontab line in
//! docs/operations.md, and every host ends its previous boot's Claims from the `@reboot` line.

use crate::harness;

use std::path::{Path, PathBuf};

use harness::*;
use thirdshift_reconciler::protocol::record::{Outcome, Record};
use yaml_serde::Value;

/// Every `run:` script of a workflow or action document, with where it is.
fn run_scripts(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut steps: Vec<(String, Value)> = Vec::new();
    if let Some(jobs) = doc["jobs"].as_mapping() {
        for (job, spec) in jobs {
            let job = job.as_str().unwrap_or("?").to_string();
            for s in spec["steps"].as_sequence().cloned().unwrap_or_default() {
                steps.push((format!("job {job}"), s));
            }
        }
    }
    for s in doc["runs"]["steps"]
        .as_sequence()
        .cloned()
        .unwrap_or_default()
    {
        steps.push(("runs".to_string(), s));
    }
    for (place, step) in steps {
        if let Some(run) = step["run"].as_str() {
            let name = step["name"].as_str().unwrap_or("unnamed");
            found.push((format!("{place}, step {name:?}"), run.to_string()));
        }
    }
    found
}

/// The places in `doc` where a shell line holds an expression; those reaching event text
/// (`github.event.*`, `github.head_ref`, inputs) are named as such.
fn expressions_in_shell_lines(doc: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    for (place, script) in run_scripts(doc) {
        for (i, _) in script.match_indices("${{") {
            let expr: String = script[i..].chars().take_while(|c| *c != '\n').collect();
            bad.push(format!("{place}: {expr}"));
        }
    }
    bad
}

#[test]
fn no_workflow_or_action_step_expands_an_expression_inside_a_shell_line() {
    // Given a workflow that puts a comment's body into a shell line
    let hostile: Value = yaml_serde::from_str(
        "jobs:\n  a:\n    steps:\n      - run: echo \"${{ github.event.comment.body }}\"\n",
    )
    .unwrap();
    // Then the check sees it
    assert_eq!(expressions_in_shell_lines(&hostile).len(), 1);
    // And none of ours does it: every value reaches a script through `env:` only
    let mut files = vec![Path::new(ROOT).join("action.yml")];
    let workflows = std::fs::read_dir(Path::new(ROOT).join(".github/workflows")).unwrap();
    files.extend(workflows.map(|e| e.unwrap().path()));
    assert!(files.len() >= 5, "action.yml and four workflows: {files:?}");
    let mut scripts = 0;
    for file in files {
        let doc = load(file.clone());
        scripts += run_scripts(&doc).len();
        let bad = expressions_in_shell_lines(&doc);
        assert!(bad.is_empty(), "{}: {bad:#?}", file.display());
    }
    assert!(
        scripts >= 4,
        "the Action's and ci's run steps were read ({scripts})"
    );
}

/// Given a Run on host h1 killed with kill -9 (on a new issue titled `title`), when h1's
/// `runner` uses the Action with command observe and reconcile, as observe.yml does: the issue,
/// and what the Action's steps did, every one of which succeeded.
async fn killed_run_then_observe_step(
    world: &World,
    runner: &Runner<'_>,
    title: &str,
) -> (u64, ActionRun) {
    let issue = world.ready_issue(title);
    let run = start_run(world, "h1", issue, "sleep 30").await;
    run.kill_all().await;
    let used = runner
        .run_action(&[
            ("command", "observe"),
            ("reconcile", "true"),
            ("host", "h1"),
        ])
        .await;
    for step in &used.steps {
        assert_eq!(step.code, Some(0), "{step:#?}");
    }
    (issue, used)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_step_of_a_hosts_runner_reports_and_ends_its_killed_runs_claim() {
    let world = World::new().await;
    // Given a Run on host h1 killed with kill -9, when h1's runner uses the Action with command
    // observe and reconcile, as observe.yml does
    let runner = Runner::new(&world, "h1");
    let (issue, used) = killed_run_then_observe_step(&world, &runner, "killed on h1").await;
    // Then every step succeeded, the binary came from the cache, and the Claim was ended
    let build = used.step("Install the binary unless restored");
    assert!(build.stdout.starts_with("using the cached"), "{build:#?}");
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1, "{ended:#?}");
    assert_eq!(ended[0].outcome, Outcome::Recovered);
    assert!(!world.labels(issue).iter().any(|l| l == IN_PROGRESS));
    // And the step summary says what ran
    assert!(
        used.summary
            .contains("#### thirdshift-reconciler observe --reconcile"),
        "{}",
        used.summary
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_command_input_fails_the_step_with_the_commands_it_accepts() {
    let world = World::new().await;
    // When the Action is used with a command it does not have
    let used = Runner::new(&world, "h1")
        .run_action(&[("command", "rm -rf /")])
        .await;
    // Then the run step fails saying which commands exist, and GitHub was not asked anything
    let step = used.step("Run thirdshift-reconciler");
    assert_eq!(step.code, Some(2), "{step:#?}");
    assert!(
        step.stdout
            .contains("unknown command 'rm -rf /': use reconcile, observe, command or status"),
        "{step:#?}"
    );
    assert_eq!(world.sim.requests().len(), 0);
}

/// The crontab lines of docs/operations.md: the schedule of each and its command.
fn documented_crontab_lines() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/operations.md")).unwrap();
    let block = doc.split("```crontab\n").nth(1).expect("a crontab block");
    let block = block.split("```").next().unwrap();
    block
        .lines()
        .map(|line| {
            assert!(!line.contains('%'), "cron turns % into a newline: {line}");
            let fields = if line.starts_with('@') { 2 } else { 6 };
            let mut parts: Vec<&str> = line.splitn(fields, ' ').collect();
            let command = parts.pop().unwrap().to_string();
            (parts.join(" "), command)
        })
        .collect()
}

/// The command of the documented crontab line with schedule `schedule`.
fn documented_crontab_command(schedule: &str) -> String {
    let lines = documented_crontab_lines();
    let found = lines.iter().find(|(s, _)| s == schedule);
    found
        .unwrap_or_else(|| panic!("no {schedule} line: {lines:?}"))
        .1
        .clone()
}

/// Host `host` set up as docs/operations.md says: the binary in ~/.cargo/bin, the environment
/// file, and its state folder where its Runs keep their records. Returns its home.
pub(crate) fn cron_host(world: &World, host: &str) -> std::path::PathBuf {
    let home = world.dir.path().join(format!("home-{host}"));
    std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
    std::fs::create_dir_all(home.join(".config/thirdshift")).unwrap();
    std::fs::create_dir_all(home.join(".local/state")).unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_thirdshift-reconciler"),
        home.join(".cargo/bin/thirdshift-reconciler"),
    )
    .unwrap();
    std::fs::create_dir_all(world.state_dir(host)).unwrap();
    std::os::unix::fs::symlink(world.state_dir(host), home.join(".local/state/thirdshift"))
        .unwrap();
    let env = format!(
        "export GITHUB_REPOSITORY={}\nexport GITHUB_API_URL={}\nexport GH_TOKEN={BOT_TOKEN}\n\
         export THIRDSHIFT_HOST={host}\nexport THIRDSHIFT_RETRY_BASE_MS=5\n",
        world.sim.repo_full_name(),
        world.server.url
    );
    std::fs::write(home.join(".config/thirdshift/env"), env).unwrap();
    home
}

/// Runs `command` as cron runs a line: `/bin/sh -c` with cron's environment only.
pub(crate) async fn as_cron(home: &Path, command: &str) -> std::process::Output {
    tokio::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .env_clear()
        .env("HOME", home)
        .env("LOGNAME", "thirdshift")
        .env("SHELL", "/bin/sh")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crontab_line_of_a_host_without_a_runner_reports_and_ends_its_killed_runs_claim() {
    let world = World::new().await;
    // Given host h3 set up as docs/operations.md says
    let home = cron_host(&world, "h3");
    // And a Run on h3 killed with kill -9
    let issue = world.ready_issue("killed on h3");
    start_run(&world, "h3", issue, "sleep 30")
        .await
        .kill_all()
        .await;
    // When cron runs the documented line with cron's environment
    let out = as_cron(&home, &documented_crontab_command("*/5 * * * *")).await;
    // Then it succeeded, its log says what it did, and the killed Run's Claim was ended
    let log = std::fs::read_to_string(world.state_dir("h3").join("observe.log")).unwrap();
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(log.contains(&format!("#{issue}")), "{log}");
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1, "{log}");
    assert_eq!(ended[0].outcome, Outcome::Recovered);
    assert!(!world.labels(issue).iter().any(|l| l == IN_PROGRESS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_crontab_lines_work_from_a_fresh_home_with_only_the_binary_and_the_env_file() {
    for schedule in ["*/5 * * * *", "@reboot"] {
        let world = World::new().await;
        // Given a fresh home holding only the binary and the environment file, as a new host has
        let home = world.dir.path().join("fresh-home");
        std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
        std::fs::create_dir_all(home.join(".config/thirdshift")).unwrap();
        std::fs::copy(
            env!("CARGO_BIN_EXE_thirdshift-reconciler"),
            home.join(".cargo/bin/thirdshift-reconciler"),
        )
        .unwrap();
        let env = format!(
            "export GITHUB_REPOSITORY={}\nexport GITHUB_API_URL={}\nexport GH_TOKEN={BOT_TOKEN}\n\
             export THIRDSHIFT_HOST=fresh\nexport THIRDSHIFT_RETRY_BASE_MS=5\n",
            world.sim.repo_full_name(),
            world.server.url
        );
        std::fs::write(home.join(".config/thirdshift/env"), env).unwrap();
        // When cron runs the documented line (the @reboot one without its 20 s pause)
        let line = documented_crontab_command(schedule);
        let command = line.strip_prefix("sleep 20 && ").unwrap_or(&line);
        let out = as_cron(&home, command).await;
        // Then it succeeded, wrote its log, and the host's report is on GitHub
        let log = home.join(".local/state/thirdshift/observe.log");
        assert_eq!(out.status.code(), Some(0), "{schedule}: {}", stderr(&out));
        let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{schedule}: {e}"));
        let reported = (1..=3)
            .flat_map(|n| world.records(n))
            .any(|r| matches!(r, Record::HostReport(h) if h.host == "fresh"));
        assert!(reported, "{schedule}: no report of host fresh; log: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reboot_line_of_the_crontab_ends_the_previous_boots_claims_once_the_host_is_up() {
    let world = World::new().await;
    // Given host h3 set up as docs/operations.md says, and a Claim of h3 made in its previous
    // boot whose PID happens to be alive in this one
    let home = cron_host(&world, "h3");
    let issue = world.ready_issue("claimed before the reboot");
    let alive = thirdshift_reconciler::host::ProcessIdentity::current();
    posted_claim(&world, issue, "h3", alive, "00000000-earlier-boot");
    // When cron runs the documented @reboot line at boot: the same command as every 5 minutes,
    // after a pause that only lets the network come up (skipped here)
    let reboot = documented_crontab_command("@reboot");
    let command = reboot
        .strip_prefix("sleep 20 && ")
        .expect("a pause, then a command");
    assert_eq!(command, documented_crontab_command("*/5 * * * *"));
    let out = as_cron(&home, command).await;
    // Then the previous boot's Claim is ended: its owner is proven dead by the boot id
    let log = std::fs::read_to_string(world.state_dir("h3").join("observe.log")).unwrap();
    assert_eq!(out.status.code(), Some(0), "{log}");
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1, "{log}");
    assert_eq!(ended[0].outcome, Outcome::Recovered);
    assert!(ended[0].reason.contains("rebooted"), "{}", ended[0].reason);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_step_handles_a_recover_comment_from_its_event_file_and_runs_none_of_its_text() {
    let world = World::new().await;
    world
        .sim
        .add_user("alice", "alice-token", github_emulator::Permission::Write);
    // Given a Run on h1 killed with kill -9, and h1's report that it is dead
    let issue = world.ready_issue("killed, then recovered by a comment");
    start_run(&world, "h1", issue, "sleep 30")
        .await
        .kill_all()
        .await;
    let out = world.exec("h1", &["observe"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // And a writer's comment asking to recover it, with shell tricks on its second line
    let runner = Runner::new(&world, "ci");
    let trap = runner.workspace.join("pwned");
    let body = format!(
        "/thirdshift recover\n$(touch {t}) `touch {t}` \"; touch {t}; echo \"",
        t = trap.display()
    );
    let id = world.sim.add_comment(issue, "alice", &body);
    let event = serde_json::json!({
        "action": "created",
        "issue": {"number": issue},
        "comment": {
            "id": id,
            "body": body,
            "html_url": format!("https://github.com/acme/widgets/issues/{issue}#issuecomment-{id}"),
            "user": {"login": "alice", "type": "User"},
        },
    });
    let event_path = world.dir.path().join("event.json");
    std::fs::write(&event_path, event.to_string()).unwrap();
    // When commands.yml's job uses the Action with command `command` on that event
    let runner = Runner {
        event: Some(event_path),
        ..runner
    };
    let used = runner.run_action(&[("command", "command")]).await;
    // Then the step succeeded, the Claim ended recovered, and the comment got one reply and +1
    for step in &used.steps {
        assert_eq!(step.code, Some(0), "{step:#?}");
    }
    let ended = ends(&world, issue);
    assert_eq!(ended.len(), 1, "{used:#?}");
    assert_eq!(ended[0].outcome, Outcome::Recovered);
    let replies = world
        .sim
        .comments(issue)
        .into_iter()
        .filter(|c| c.author == BOT && c.body.contains("thirdshift:v1:reply"))
        .count();
    assert_eq!(replies, 1);
    let reactions: Vec<String> = world
        .sim
        .comment_reactions(id)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    assert_eq!(reactions, ["eyes", "+1"]);
    // And no part of the comment ran as a shell command
    assert!(!trap.exists(), "the comment's text ran in a shell");
}

#[test]
fn the_actions_binary_lives_in_the_jobs_temp_folder_never_under_the_runners_home() {
    // Given a runner's home, where an agent on a self-hosted host could plant a program between
    // jobs, and the job's RUNNER_TEMP, which the runner empties before every job
    let dir = tempfile::tempdir().unwrap();
    let (home, temp, output) = (
        dir.path().join("home"),
        dir.path().join("temp"),
        dir.path().join("output"),
    );
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&temp).unwrap();
    // When the Action's first step names the binary's folder
    let root = env!("CARGO_MANIFEST_DIR");
    let status = std::process::Command::new("bash")
        .arg(Path::new(root).join("scripts/action/key.sh"))
        .env("GITHUB_ACTION_PATH", root)
        .env("GITHUB_OUTPUT", &output)
        .env("HOME", &home)
        .env("RUNNER_TEMP", &temp)
        .status()
        .unwrap();
    assert!(status.success());
    // Then the binary is looked for in the job's temp folder, not under the home
    let out = std::fs::read_to_string(&output).unwrap();
    let folder = out
        .lines()
        .find_map(|l| l.strip_prefix("dir="))
        .expect("a dir output");
    assert!(Path::new(folder).starts_with(&temp), "{folder}");
}

/// A folder holding a stand-in `cargo` for the minutes-long release build: it runs `first` (a
/// shell line, `$MANIFEST` set to the `--manifest-path` given), records its arguments, and
/// leaves the binary under test where the build would. The folder, and the file of arguments.
pub(crate) fn cargo_stand_in(world: &World, first: &str) -> (PathBuf, PathBuf) {
    let shim = world.dir.path().join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let called = world.dir.path().join("cargo-args");
    let script = format!(
        "#!/bin/sh\nset -e\nprintf '%s\\n' \"$@\" > '{called}'\n\
         MANIFEST=$(printf '%s\\n' \"$@\" | sed -n '/^--manifest-path$/{{n;p;}}')\n{first}\n\
         while [ \"$1\" != --target-dir ]; do shift; done\n\
         mkdir -p \"$2/release\" && cp '{bin}' \"$2/release/thirdshift-reconciler\"\n",
        called = called.display(),
        bin = env!("CARGO_BIN_EXE_thirdshift-reconciler")
    );
    std::fs::write(shim.join("cargo"), script).unwrap();
    std::fs::set_permissions(
        shim.join("cargo"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    (shim, called)
}

/// A local HTTP server serving the files under `dir` (404 for anything else), as GitHub serves
/// release downloads; its base URL.
pub(crate) async fn serve_files(dir: std::path::PathBuf) -> String {
    use axum::extract::Path as UrlPath;
    use axum::http::StatusCode;
    let app = axum::Router::new().route(
        "/{*file}",
        axum::routing::get(move |UrlPath(file): UrlPath<String>| {
            let dir = dir.clone();
            async move {
                let safe = !file.split('/').any(|p| p == ".." || p.is_empty());
                match std::fs::read(dir.join(&file)) {
                    Ok(bytes) if safe => Ok(bytes),
                    _ => Err(StatusCode::NOT_FOUND),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_install_step_builds_from_source_when_its_version_has_no_release() {
    // Given no release asset for this version, and a runner with cargo: a stand-in for the
    // minutes-long `cargo build` that records how it was called and leaves the built binary
    let world = World::new().await;
    let url = serve_files(world.dir.path().join("no-releases")).await;
    let mut runner = Runner::new(&world, "ci");
    runner.cache_hit = false;
    let (shim, called) = cargo_stand_in(&world, "");
    runner.path_first = Some(shim);
    // When the Action runs
    let run = runner
        .run_action(&[("command", "status"), ("releases-url", &url)])
        .await;
    // Then it said there was no release, built the Action's own sources, locked, and ran
    let install = run.step("Install the binary unless restored");
    assert_eq!(install.code, Some(0), "{install:#?}");
    assert!(install.stdout.contains("::notice"), "{}", install.stdout);
    let args = std::fs::read_to_string(&called).expect("cargo was called");
    let manifest = format!("{}/Cargo.toml", env!("CARGO_MANIFEST_DIR"));
    for expected in ["build", "--release", "--locked", manifest.as_str()] {
        assert!(args.lines().any(|a| a == expected), "{expected}: {args}");
    }
    assert_eq!(run.step("Run thirdshift-reconciler").code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_pass_is_an_error_annotation_and_a_dry_run_input_writes_nothing() {
    let world = World::new().await;
    let runner = Runner::new(&world, "ci");
    // Given credentials GitHub refuses, when the Action runs a pass
    let run = runner
        .run_action(&[("command", "reconcile"), ("token", "not-a-token")])
        .await;
    // Then its step fails with an error annotation the run's summary page shows
    let step = run.step("Run thirdshift-reconciler");
    assert_ne!(step.code, Some(0));
    assert!(
        step.stdout
            .contains("::error title=thirdshift-reconciler::"),
        "{step:#?}"
    );
    // And given a killed Run that h1 reported dead, which a pass would end
    let issue = world.ready_issue("dead, for the dry run");
    start_run(&world, "h1", issue, "sleep 30")
        .await
        .kill_all()
        .await;
    let observed = world.exec("h1", &["observe"]).await;
    assert_eq!(observed.status.code(), Some(0), "{}", stderr(&observed));
    // When the Action runs a pass with the dry-run input
    world.sim.clear_requests();
    let run = runner
        .run_action(&[("command", "reconcile"), ("dry-run", "true")])
        .await;
    // Then it prints the end it would write, and writes nothing
    let step = run.step("Run thirdshift-reconciler");
    assert_eq!(step.code, Some(0), "{step:#?}");
    assert!(
        step.stdout.contains("reconcile --dry-run:") && step.stdout.contains(&format!("#{issue}")),
        "{}",
        step.stdout
    );
    assert_eq!(writes(&world), Vec::<String>::new());
    assert!(ends(&world, issue).is_empty());
    // And the same pass without it writes that end: there was something to write
    let run = runner.run_action(&[("command", "reconcile")]).await;
    assert_eq!(run.step("Run thirdshift-reconciler").code, Some(0));
    assert_eq!(ends(&world, issue).len(), 1, "{:?}", writes(&world));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_step_hands_the_token_to_the_binary_alone() {
    let world = World::new().await;
    // Given a killed Run's Claim for the host's observe to end, when h1's runner uses the Action
    // with every step's processes traced
    let mut runner = Runner::new(&world, "h1");
    let trace = world.dir.path().join("step.trace");
    runner.trace = Some(trace.clone());
    let (issue, _) = killed_run_then_observe_step(&world, &runner, "traced").await;
    assert_eq!(
        ends(&world, issue).len(),
        1,
        "the binary still authenticated"
    );
    // Then in the run step one process alone ever held the token: the step's shell, exec'd
    // into run.sh's, exec'd into the binary; it started no other process
    let dir = trace.parent().unwrap();
    let run_step = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("step."))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .find(|t| t.contains("scripts/action/run.sh"))
        .expect("the run step was traced");
    let execs: Vec<&str> = run_step.lines().filter(|l| l.contains("execve(")).collect();
    let pids: std::collections::BTreeSet<&str> = execs
        .iter()
        .filter(|l| l.contains(BOT_TOKEN))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(pids.len(), 1, "processes holding the token: {execs:#?}");
    let last = execs.last().unwrap();
    assert!(
        last.contains("thirdshift-reconciler") && last.contains("\"observe\""),
        "the binary is the last exec: {last}"
    );
    println!(
        "run step: {} execs, all by one process, the last one the binary",
        execs.len()
    );
}
