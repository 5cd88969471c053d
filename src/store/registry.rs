//! The registry issue: one issue per repository that holds each host's report as a comment (and,
//! later, the live view in its body). It is found again by its label and hidden marker, written by
//! a trusted identity; `config.registry_issue` pins it. When two hosts create it at the same
//! moment, the lowest number wins and the other closes its own, so there is never more than one
//! in use. It holds no decisions about Claims.

use anyhow::Context as _;
use serde_json::json;

use crate::context::Ctx;
use crate::github::Issue;
use crate::protocol::record::{decode, encode, Decoded, Kind, Record};

/// The label that lets hosts find the registry issue without reading every issue.
pub const REGISTRY_LABEL: &str = "thirdshift-registry";

/// Whether `issue` carries the registry's view record (by whoever wrote it).
fn is_marked(issue: &Issue) -> bool {
    matches!(
        decode(issue.body.as_deref().unwrap_or("")),
        Decoded::Record(Record::Other {
            kind: Kind::View,
            ..
        })
    )
}

/// The open registry issues found: by a trusted author (the lowest number is the registry), and
/// by anyone else (never used, never written; reported, so a login that should be trusted is
/// named).
#[derive(Debug, Default)]
pub struct Found {
    pub issue: Option<Issue>,
    pub untrusted: Vec<Issue>,
}

/// The registry issue's number, if there is one (never creates it).
pub async fn find(ctx: &Ctx) -> anyhow::Result<Option<u64>> {
    if let Some(n) = ctx.config.registry_issue {
        return Ok(Some(n));
    }
    Ok(registries(ctx, None).await?.issue.map(|i| i.number))
}

/// The registry issue itself, body included (the live view's last state), if there is one, and
/// the registry issues by authors not trusted. A pinned registry issue costs one read; a found
/// one none beyond the search, read conditionally through `pages` when given (a 304, free of
/// rate budget, when no registry issue changed: an idle pass's case).
pub async fn find_issue_with(
    ctx: &Ctx,
    pages: Option<&mut crate::github::PageCache>,
) -> anyhow::Result<Found> {
    if let Some(n) = ctx.config.registry_issue {
        let issue = ctx.client.get_issue(n).await;
        return match issue {
            Ok(i) => Ok(Found {
                issue: Some(i),
                untrusted: Vec::new(),
            }),
            Err(e) if e.status() == Some(404) || e.status() == Some(410) => Ok(Found::default()),
            Err(e) => Err(e).context("reading the registry issue"),
        };
    }
    registries(ctx, pages).await
}

/// The open registry issues, lowest number first: the first trusted one, and the untrusted ones.
async fn registries(
    ctx: &Ctx,
    pages: Option<&mut crate::github::PageCache>,
) -> anyhow::Result<Found> {
    let listed = match pages {
        Some(p) => {
            let c = &ctx.client;
            c.list_issues_conditional("open", Some(REGISTRY_LABEL), p)
                .await
        }
        None => ctx.client.list_issues("open", Some(REGISTRY_LABEL)).await,
    };
    let mut issues = listed.context("looking for the registry issue")?;
    issues.retain(is_marked);
    issues.sort_by_key(|i| i.number);
    let (trusted, untrusted) = issues
        .into_iter()
        .partition::<Vec<_>, _>(|i| ctx.trust.is_trusted(i.author()));
    Ok(Found {
        issue: trusted.into_iter().next(),
        untrusted,
    })
}

/// The registry issue's number, created on first use. A registry issue by an author not trusted
/// is never used. When its author writes to the repository (`rules::writes_for_the_repository`:
/// most likely a host or workflow writing as another identity) no second one is made beside it:
/// this fails, naming it and the config line that would trust its author. Anyone else may be a
/// stranger, so one is made beside theirs, with a warning saying so.
pub async fn find_or_create(ctx: &Ctx) -> anyhow::Result<u64> {
    if let Some(n) = ctx.config.registry_issue {
        return Ok(n);
    }
    let found = registries(ctx, None).await?;
    if let Some(issue) = found.issue {
        return Ok(issue.number);
    }
    for other in &found.untrusted {
        let author = other.author();
        let role = (ctx.client.role_of(author).await).with_context(|| {
            format!(
                "reading the role of @{author}, who opened #{}",
                other.number
            )
        })?;
        let (n, me) = (other.number, &ctx.me);
        if crate::protocol::rules::writes_for_the_repository(author, role) {
            anyhow::bail!(crate::text::trust::registry_of_an_untrusted_writer(
                n, author, me
            ));
        }
        tracing::warn!("{}", crate::text::trust::untrusted_registry(n, author, me));
    }
    let body = format!(
        "{}\n\n{}",
        crate::text::registry_body(),
        encode(Kind::View, &json!({ "registry": true }))
    );
    let created = match ctx
        .client
        .create_issue(crate::text::REGISTRY_TITLE, &body, &[REGISTRY_LABEL])
        .await
    {
        Ok(issue) => Some(issue.number),
        Err(e) if e.is_uncertain() => None,
        Err(e) => return Err(e).context("creating the registry issue"),
    };
    let winner = find(ctx)
        .await?
        .context("the registry issue was created but cannot be found again")?;
    if let Some(mine) = created.filter(|n| *n != winner) {
        tracing::info!(
            mine,
            winner,
            "another host created the registry first; closing ours"
        );
        ctx.client.close_issue(mine).await?;
    }
    Ok(winner)
}
