//! Dispatch: turns a parsed command line into a call of the module that does the work and
//! returns the exit code. It holds no behaviour of its own beyond wiring.

use crate::cli::{ClaimArgs, Cli, Command, Globals, ReleaseArgs, ReleaseOutcome, StageArgs};
use crate::context::Ctx;
use crate::ending::{Ending, Released};
use crate::exit::{Exit, OK};
use crate::host::{ProcessIdentity, StateDir};
use crate::protocol::record::Outcome;
use crate::run::claim::{take, ClaimRequest};
use crate::run::release::release;
use crate::run::stage::{stage, StageUpdate};
use crate::text::for_terminal;

/// Runs one command; returns the process exit code.
pub async fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    let g = cli.globals;
    if let Some(option) = g.unused_by(&cli.command) {
        return Err(Exit::usage(format!(
            "{option} means nothing to this command: sim and demo use none of the repository \
             options"
        ))
        .into());
    }
    match cli.command {
        Command::Run(a) => {
            let ctx = Ctx::connect(&g.options(), None)
                .await
                .map_err(crate::exit::for_run)?;
            let req = ClaimRequest {
                command: a.cmd.clone(),
                ..request(a.claim, ProcessIdentity::current())?
            };
            let exit = crate::run::run(&ctx, &req, &a.cmd, g.quiet)
                .await
                .map_err(crate::exit::for_run)?;
            if let Some(n) = exit.killed_on {
                // A killed command's end, with its cause, must be among the last recoveries.
                let none = crate::reconcile::Plan::default();
                if let Err(err) = crate::view::refresh_after(&ctx, n, &none, &[]).await {
                    tracing::warn!(issue = n, "the live view: {err:#}; the next pass writes it");
                }
            }
            Ok(exit.code)
        }
        Command::Claim(a) => claim(&g, a).await,
        Command::Stage(a) => stage_cmd(&g, a).await,
        Command::Release(a) => release_cmd(&g, a).await,
        Command::Sim { port, seed } => emulator::sim(port, seed).await,
        Command::Demo => emulator::demo().await,
        Command::Completions { shell } => {
            crate::cli::manual::completions(shell, &mut std::io::stdout());
            Ok(OK)
        }
        Command::Man { out_dir: None } => crate::cli::manual::man(&mut std::io::stdout())
            .map(|_| OK)
            .map_err(Into::into),
        Command::Man { out_dir: Some(dir) } => {
            for page in crate::cli::manual::man_pages(&dir)? {
                println!("{}", page.display());
            }
            Ok(OK)
        }
        Command::Companion { claim, run, issue } => {
            let run = crate::context::companion::parse_run(&run)
                .ok_or_else(|| Exit::usage("--run is PID:START_TICKS"))?;
            let ctx = Ctx::connect(&g.options(), None).await?;
            super::companion::watch(&ctx, &claim, run, issue)
                .await
                .map(|_| OK)
        }
        Command::Pickup(a) => {
            let request = crate::pickup::Request {
                max: a.max,
                kind: a.kind.map(crate::protocol::record::RunKind::from),
                harness: a.harness,
                cmd: a.cmd,
            };
            crate::pickup::command(&g.options(), &request).await
        }
        Command::Observe { reconcile } => observe_cmd(&g, reconcile).await,
        Command::Reconcile { dry_run: true } => {
            let ctx = Ctx::connect(&g.options(), None).await?;
            dry_run(&ctx).await
        }
        Command::Reconcile { dry_run: false } => {
            let ctx = Ctx::connect(&g.options(), None).await?;
            reconcile_cmd(&ctx).await
        }
        Command::Cancel {
            issue,
            reason,
            requeue,
        } => {
            if let Some(r) = &reason {
                refuse_text(r, &format!("no cancel is asked on #{issue}"))?;
            }
            let ctx = Ctx::connect(&g.options(), None).await?;
            let asked = crate::observe::Asked { reason, requeue };
            let answer = crate::observe::cancel(&ctx, issue, asked).await?;
            println!("{}", for_terminal(&answer));
            Ok(OK)
        }
        Command::Command { event } => {
            let ctx = Ctx::connect(&g.options(), None).await?;
            let handled = crate::commands::handle(&ctx, &event).await?;
            if let Some(e) = &handled.ended {
                // A recovery answered here must be among the dashboard's last recoveries.
                let published = crate::view::refresh_after(&ctx, e.issue, &e.plan, &e.ended).await;
                if let Err(err) = published {
                    tracing::warn!(
                        issue = e.issue,
                        "the live view: {err:#}; the next pass writes it"
                    );
                }
            }
            println!("{}", for_terminal(&handled.line));
            Ok(OK)
        }
        Command::Status { json, html, issue } => {
            let ctx = Ctx::connect(&g.options(), None).await?;
            let req = crate::view::StatusRequest { json, html, issue };
            crate::view::status(&ctx, &req).await
        }
    }
}

/// The Claim asked for; a usage error when `--branch` is not a branch name git accepts.
fn request(a: ClaimArgs, owner: ProcessIdentity) -> Result<ClaimRequest, Exit> {
    checked_branch(a.branch.as_deref())?;
    Ok(ClaimRequest {
        issue: a.issue,
        kind: a.kind.into(),
        harness: a.harness,
        session: a.session,
        worktree: a.worktree.map(absolute),
        branch: a.branch,
        owner,
        command: Vec::new(),
    })
}

/// A usage error, before anything is written, when `branch` is given and git would refuse it.
fn checked_branch(branch: Option<&str>) -> Result<(), Exit> {
    match branch.map(crate::salvage::valid) {
        Some(Err(why)) => Err(Exit::usage(format!("--branch: {why}; nothing was written"))),
        _ => Ok(()),
    }
}

/// `claim`: the Claim belongs to the calling process (a script), since `claim` itself exits.
async fn claim(g: &Globals, a: ClaimArgs) -> anyhow::Result<i32> {
    let ctx = Ctx::connect(&g.options(), None).await?;
    let owner = ProcessIdentity::parent().unwrap_or_else(ProcessIdentity::current);
    let held = take(&ctx, &request(a, owner)?).await?;
    println!("{}", held.record.claim_id);
    Ok(OK)
}

/// A usage error when a reader would refuse `reason` as a record's reason: `what`, then why.
fn refuse_text(reason: &str, what: &str) -> Result<(), Exit> {
    crate::protocol::record::field::text("reason", reason)
        .map_err(|why| Exit::usage(format!("{what}: {why}; nothing was written")))
}

/// Connects for a command that acts on a Claim this host recorded locally.
async fn connect_for_claim(g: &Globals, claim_id: &str) -> anyhow::Result<Ctx> {
    let local = StateDir::resolve(g.state_dir.as_deref())?.load(claim_id)?;
    Ctx::connect(&g.options(), Some((&local.repo, &local.api_url))).await
}

/// The Claim a `stage` or `release` names: `--claim`, or the `THIRDSHIFT_CLAIM_ID` its Run sets.
fn named_claim(claim: Option<String>, command: &str) -> anyhow::Result<String> {
    let claim = claim.filter(|c| !c.trim().is_empty());
    claim.ok_or_else(|| {
        Exit::usage(format!(
            "{command} runs inside a Run, which sets THIRDSHIFT_CLAIM_ID; outside one, name the \
             Claim with --claim ID (`status` shows each Run's claim id)"
        ))
        .into()
    })
}

async fn stage_cmd(g: &Globals, a: StageArgs) -> anyhow::Result<i32> {
    let claim = named_claim(a.claim, "stage")?;
    checked_branch(a.branch.as_deref())?;
    let worktree = a.worktree.map(absolute);
    let checked_out = worktree
        .as_deref()
        .and_then(|w| crate::salvage::issue_branch_of(std::path::Path::new(w)));
    let update = StageUpdate {
        name: a.name,
        agent_session: a.session,
        log: a.log,
        worktree,
        branch: a.branch.or(checked_out),
        session_id: None,
        session_start_ticks: None,
    };
    if let Some(dir) = crate::run::broker::inside_run(&claim) {
        crate::run::broker::ask(&dir, &update).await?;
        return Ok(OK);
    }
    let ctx = connect_for_claim(g, &claim).await?;
    stage(&ctx, &claim, &update).await?;
    Ok(OK)
}

async fn release_cmd(g: &Globals, a: ReleaseArgs) -> anyhow::Result<i32> {
    let claim = named_claim(a.claim, "release")?;
    if let Some(r) = &a.reason {
        refuse_text(r, &format!("claim {claim} is not released"))?;
    }
    let ctx = connect_for_claim(g, &claim).await?;
    let outcome = match a.outcome {
        ReleaseOutcome::Done => Outcome::Done,
        ReleaseOutcome::Failed => Outcome::Failed,
        ReleaseOutcome::HandedBack => Outcome::HandedBack,
    };
    let reason = a
        .reason
        .unwrap_or_else(|| format!("released by the Run as {}", outcome.as_str()));
    let ending = Ending {
        outcome,
        reason,
        exit_code: None,
        signal: None,
        cause: None,
        kept: None,
        started: true,
    };
    // A Run's own end may use the budget kept in reserve.
    ctx.client.spend_reserve();
    match release(&ctx, &claim, &ending).await? {
        Released::Ended { .. } => println!("claim {claim} ended: {}", outcome.as_str()),
        Released::AlreadyEnded { outcome, by } => {
            println!(
                "claim {claim} was already ended ({}) by @{by}",
                outcome.as_str()
            )
        }
    }
    Ok(OK)
}

async fn observe_cmd(g: &Globals, and_reconcile: bool) -> anyhow::Result<i32> {
    let ctx = Ctx::connect(&g.options(), None).await?;
    let seen = crate::observe::observe(&ctx).await?;
    print!(
        "{}",
        for_terminal(&crate::view::observed(&seen.report, seen.report_written))
    );
    for carried in &seen.cancels {
        println!("{}", for_terminal(&carried.line()));
    }
    for settled in &seen.reservations {
        println!("{}", for_terminal(&settled.line()));
    }
    for stop in &seen.stops {
        println!("{}", for_terminal(&stop.line()));
    }
    for (claim_id, collided) in &seen.collided {
        println!("{}", for_terminal(&collided.line(claim_id)));
    }
    if !and_reconcile {
        print_budget(&ctx);
        return Ok(OK);
    }
    let code = reconcile_pass(&ctx).await;
    if code.is_err() {
        print_budget(&ctx);
        return code;
    }
    // The report is written again from what the pass left, so an idle next pass writes nothing;
    // the dashboard then shows that report too (one more read, only when the report changed).
    let after = crate::observe::observe(&ctx).await?;
    if after.report_written {
        print!(
            "{}",
            for_terminal(&crate::view::observed(&after.report, true))
        );
        let published = crate::view::refresh(&ctx).await?;
        println!("{}", published.line());
    }
    print_budget(&ctx);
    code
}

/// What is left of the rate budget, after every pass's summary.
fn print_budget(ctx: &Ctx) {
    let reserve = ctx.config.budget.reserve;
    println!(
        "{}",
        crate::view::budget(ctx.client.rate_remaining(), reserve)
    );
}

/// `reconcile`: one pass, its summary and what is left of the budget.
async fn reconcile_cmd(ctx: &Ctx) -> anyhow::Result<i32> {
    let code = reconcile_pass(ctx).await;
    print_budget(ctx);
    code
}

/// `reconcile --dry-run`: the pass's reads and plan, printed; nothing is written to GitHub.
async fn dry_run(ctx: &Ctx) -> anyhow::Result<i32> {
    let input = crate::reconcile::PlanInput {
        actor: format!("reconcile@{}", ctx.host.host),
        now: chrono::Utc::now(),
    };
    let (_, plan) = crate::reconcile::read_and_plan(ctx, &input).await?;
    print!("{}", for_terminal(&crate::view::planned(&plan)));
    print_budget(ctx);
    Ok(OK)
}

async fn reconcile_pass(ctx: &Ctx) -> anyhow::Result<i32> {
    let pass = crate::reconcile::pass(ctx).await?;
    print!(
        "{}",
        for_terminal(&crate::view::pass_summary(&pass.plan, &pass.applied))
    );
    let ended = &pass.applied.ended;
    let published = crate::view::publish(ctx, &pass.snapshot, &pass.plan, ended).await?;
    println!("{}", published.line());
    crate::cli::workflow::outputs(&crate::view::action_outputs(&pass));
    for e in &pass.applied.errors {
        crate::cli::workflow::annotate(crate::cli::workflow::Level::Warning, e);
    }
    if pass.applied.errors.is_empty() {
        Ok(OK)
    } else {
        Err(Exit {
            code: crate::exit::ERROR,
            message: format!(
                "reconcile: {} action(s) failed; the next pass retries them",
                pass.applied.errors.len()
            ),
        }
        .into())
    }
}

/// `path` made absolute against the current directory, for records read on other machines.
fn absolute(path: std::path::PathBuf) -> String {
    std::path::absolute(&path)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The `sim` and `demo` commands, which the default `emulator` feature serves; a build without
/// it (`--no-default-features`, a production build) says so instead.
mod emulator {
    use std::path::PathBuf;

    #[cfg(feature = "emulator")]
    pub async fn sim(port: u16, seed: Option<PathBuf>) -> anyhow::Result<i32> {
        github_emulator::run_cli(port, seed).await?;
        Ok(crate::exit::OK)
    }

    #[cfg(feature = "emulator")]
    pub async fn demo() -> anyhow::Result<i32> {
        crate::cli::demo::run().await
    }

    #[cfg(not(feature = "emulator"))]
    pub async fn sim(_port: u16, _seed: Option<PathBuf>) -> anyhow::Result<i32> {
        Err(missing("sim"))
    }

    #[cfg(not(feature = "emulator"))]
    pub async fn demo() -> anyhow::Result<i32> {
        Err(missing("demo"))
    }

    #[cfg(not(feature = "emulator"))]
    fn missing(command: &str) -> anyhow::Error {
        crate::exit::Exit::usage(format!(
            "this build has no GitHub emulator, so no `{command}`: build with the default \
             `emulator` feature (cargo install thirdshift-reconciler)"
        ))
        .into()
    }

    /// Only built without the feature: `.ci/test` runs `cargo test --no-default-features --lib`.
    #[cfg(all(test, not(feature = "emulator")))]
    mod tests {
        use crate::exit::{Exit, USAGE};

        #[tokio::test]
        async fn a_production_build_answers_demo_and_sim_with_a_usage_error_that_says_why() {
            // Given a build without the emulator, when `demo` and `sim` are asked for
            let demo = super::demo().await.unwrap_err();
            let sim = super::sim(0, None).await.unwrap_err();
            // Then each is a usage error naming the command and the feature that serves it
            let demo = demo.downcast_ref::<Exit>().expect("an Exit");
            assert_eq!(demo.code, USAGE);
            assert_eq!(
                demo.message,
                "this build has no GitHub emulator, so no `demo`: build with the default \
                 `emulator` feature (cargo install thirdshift-reconciler)"
            );
            let sim = sim.downcast_ref::<Exit>().expect("an Exit");
            assert!(sim.message.contains("so no `sim`"), "{}", sim.message);
        }
    }
}
