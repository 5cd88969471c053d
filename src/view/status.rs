//! The `status` command (IO shell): reads the same snapshot reconcile reads, asks `plan` for its
//! verdicts (applying nothing), and prints the view as a terminal table (colour only on a
//! terminal with `NO_COLOR` unset), JSON (`--json`), a static HTML page (`--html FILE`) or one
//! issue's Claim history (`--issue N`). `refresh` is the same read, published to the dashboard.

use std::io::IsTerminal as _;
use std::path::Path;

use anyhow::Context as _;
use chrono::Utc;

use super::model::{build, Inputs, View};
use super::publish::{publish, Published};
use crate::context::Ctx;
use crate::exit::{Exit, OK};
use crate::reconcile::{plan, Plan, PlanInput};
use crate::snapshot::Snapshot;

/// What `status` prints.
#[derive(Clone, Debug, Default)]
pub struct StatusRequest {
    pub json: bool,
    pub html: Option<std::path::PathBuf>,
    pub issue: Option<u64>,
}

/// Reads and plans without applying: what a pass would see now.
async fn look(ctx: &Ctx, extra: &[u64]) -> anyhow::Result<(Snapshot, Plan)> {
    let snapshot = crate::snapshot::read_any(ctx, extra).await?;
    let input = PlanInput {
        actor: format!("status@{}", ctx.host.host),
        now: Utc::now(),
    };
    let plan = plan(&snapshot, &ctx.config, &input);
    Ok((snapshot, plan))
}

/// Reads again and writes the dashboard if it changed (after a host report changed).
pub async fn refresh(ctx: &Ctx) -> anyhow::Result<Published> {
    let (snapshot, plan) = look(ctx, &[]).await?;
    publish(ctx, &snapshot, &plan, &[]).await
}

/// After a command ended Claims outside a pass (`command --event`): reads again, with the
/// command's issue, and writes the dashboard with those endings among its last recoveries (the
/// issue no longer `in-progress`, nothing else would show them).
pub async fn refresh_after(
    ctx: &Ctx,
    issue: u64,
    command: &Plan,
    ended: &[crate::reconcile::apply::EndedClaim],
) -> anyhow::Result<Published> {
    let (snapshot, mut plan) = look(ctx, &[issue]).await?;
    let ends = command.actions.iter().filter(|a| {
        matches!(a, crate::reconcile::Action::PostEnd { end, .. }
            if ended.iter().any(|e| e.claim_id == end.claim_id))
    });
    plan.actions.extend(ends.cloned());
    publish(ctx, &snapshot, &plan, ended).await
}

/// `status`.
pub async fn status(ctx: &Ctx, req: &StatusRequest) -> anyhow::Result<i32> {
    let extra: Vec<u64> = req.issue.into_iter().collect();
    let (snapshot, plan) = look(ctx, &extra).await?;
    let now = Utc::now();
    if let Some(n) = req.issue {
        let Some(issue) = snapshot.issue(n) else {
            return Err(Exit {
                code: crate::exit::ERROR,
                message: format!("issue #{n} not found in {}", ctx.client.repo()),
            }
            .into());
        };
        let text = super::history::render(issue, &plan, now);
        print!("{}", crate::text::for_terminal(&text));
        return Ok(OK);
    }
    let repository = ctx.client.repo().to_string();
    let view: View = build(&Inputs {
        repository: &repository,
        snapshot: &snapshot,
        plan: &plan,
        ended: &[],
        now,
    });
    if let Some(path) = &req.html {
        write_html(path, &super::html::render(&view, now))?;
        // with --json, stdout holds the JSON alone
        if req.json {
            eprintln!("wrote {}", path.display());
        } else {
            println!("wrote {}", path.display());
        }
    }
    if req.json {
        println!("{}", super::json::render(&view, now));
    } else if req.html.is_none() {
        let color = std::io::stdout().is_terminal() && !no_color();
        print!("{}", super::terminal::render(&view, now, color));
    }
    Ok(OK)
}

/// `NO_COLOR` set to anything but the empty string (no-color.org).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn write_html(path: &Path, page: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))
}
