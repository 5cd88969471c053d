//! `command --event FILE`: the IO for one `issue_comment` webhook payload. It ignores what is not
//! a new command by a person (edits, deletions, bots, our own identity, ordinary comments),
//! reacts `eyes` on receipt, then reads the issue as a reconcile pass would (`read_issue`), lets
//! the same pure `plan` decide (so the command, and any other command waiting on the issue, is
//! answered exactly as a pass would answer it) and applies the plan: writes, one reply, the final
//! reaction. A command that already has a trusted reply is not handled again.
//!
//! It decides nothing itself, and it never hands comment text to a shell or any process.

use std::path::Path;

use anyhow::Context as _;
use chrono::Utc;
use serde::Deserialize;

use crate::context::Ctx;
use crate::exit::{Exit, USAGE};
use crate::reconcile::{apply, plan, Action, PlanInput};
use crate::snapshot::CommandView;
use crate::store::read::{read_through, Listing};

use crate::protocol::command::{parse, Pending};
use crate::snapshot::is_ignored_author;

/// The parts of an `issue_comment` event we read.
#[derive(Debug, Deserialize)]
struct Event {
    action: String,
    issue: EventIssue,
    comment: EventComment,
}

#[derive(Debug, Deserialize)]
struct EventIssue {
    number: u64,
}

#[derive(Debug, Deserialize)]
struct EventComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: String,
    user: EventUser,
}

#[derive(Debug, Deserialize)]
struct EventUser {
    login: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

/// Reads the payload at `path`; a clear usage error when it is not an `issue_comment` event.
fn read_event(path: &Path) -> anyhow::Result<Event> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the event payload {}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        Exit {
            code: USAGE,
            message: format!(
                "{} is not an issue_comment event payload ({e}); pass the file GitHub \
                 Actions names in GITHUB_EVENT_PATH",
                path.display()
            ),
        }
        .into()
    })
}

/// What handling a command did: the line to print, and the Claims it ended (with the plan that
/// ended them), which the live view must show among its last recoveries: the caller writes it
/// (`view::status::refresh_after`), as the view is another use case.
#[derive(Debug)]
pub struct Handled {
    pub line: String,
    pub ended: Option<Ended>,
}

/// Claims a command ended on `issue`, by `plan`.
#[derive(Debug)]
pub struct Ended {
    pub issue: u64,
    pub plan: crate::reconcile::Plan,
    pub ended: Vec<apply::EndedClaim>,
}

impl From<String> for Handled {
    fn from(line: String) -> Handled {
        Handled { line, ended: None }
    }
}

/// Handles the event at `path`.
pub async fn handle(ctx: &Ctx, path: &Path) -> anyhow::Result<Handled> {
    let event = read_event(path)?;
    let (n, c) = (event.issue.number, &event.comment);
    if event.action != "created" {
        return Ok(format!(
            "comment {} on #{n} was {}: only new comments are commands; ignored",
            c.id, event.action
        )
        .into());
    }
    if is_ignored_author(&c.user.login, c.user.kind.as_deref(), &ctx.me) {
        return Ok(format!(
            "comment {} on #{n} is by @{}, a bot or this tool itself; ignored",
            c.id, c.user.login
        )
        .into());
    }
    let parsed = parse(c.body.as_deref().unwrap_or(""));
    if !parsed.is_addressed() {
        return Ok(format!("comment {} on #{n} is not a /thirdshift command", c.id).into());
    }
    ctx.client.react_to_comment(c.id, "eyes").await?;
    let listing = read_through(ctx, n, c.id).await?;
    let mut snapshot = crate::snapshot::read_issue(ctx, n).await?;
    let waiting = snapshot
        .commands
        .iter()
        .any(|w| w.pending.comment_id == c.id);
    match listing {
        Listing::Gone(_) => {
            return Ok(format!("comment {} on #{n} was deleted; ignored", c.id).into())
        }
        Listing::Fresh(_) if !waiting => {
            return Ok(format!(
                "comment {} on #{n} is already answered; nothing to do",
                c.id
            )
            .into())
        }
        Listing::Stale if !waiting => {
            // GitHub's list does not show the comment yet: take it from the payload.
            let role = ctx.client.role_of(&c.user.login).await?;
            let pending = Pending {
                issue: n,
                comment_id: c.id,
                author: c.user.login.clone(),
                html_url: c.html_url.clone(),
                parsed,
                // The payload holds the comment as its author created it.
                edited: false,
                refused: false,
            };
            snapshot.commands.push(CommandView { pending, role });
        }
        Listing::Fresh(_) | Listing::Stale => {}
    }
    let input = PlanInput {
        actor: format!("command@{}", ctx.host.host),
        now: Utc::now(),
    };
    let plan = plan(&snapshot, &ctx.config, &input);
    let applied = apply::apply(ctx, &plan.actions, &apply::Seen::of(&snapshot)).await;
    if let Some(e) = applied.errors.first() {
        anyhow::bail!("handling comment {} on #{n}: {e}", c.id);
    }
    let line = summary(&plan.actions, n, c.id);
    let ended = (!applied.ended.is_empty()).then(|| Ended {
        issue: n,
        ended: applied.ended.clone(),
        plan,
    });
    Ok(Handled { line, ended })
}

/// One line naming the answer given to comment `id`.
fn summary(actions: &[Action], n: u64, id: u64) -> String {
    let answer = actions.iter().find_map(|a| match a {
        Action::PostReply { reply, .. } if reply.command_comment_id == id => Some(reply.answer),
        _ => None,
    });
    match answer {
        Some(a) => format!(
            "comment {id} on #{n}: {} ({} actions)",
            serde_json::to_value(a)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            actions.len()
        ),
        None => format!("comment {id} on #{n}: no answer planned"),
    }
}
