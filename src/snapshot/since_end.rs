//! What happened to an issue's labels since an end record was posted, from the issue's events:
//! the changes people made (which no pass undoes) and whether the issue was claimed again (then
//! no pass finishes that end's labels). Read by a pass for an end that still has label work, by
//! the label fence before any writer sets an end's labels, and by a carried-out cancel's end.
//!
//! "Since" is told by event ids, never by GitHub's one-second clock: the writer of an end record
//! reads the id of the issue's newest label event just before posting it and keeps it in the
//! record (`events_seen`); the issue's event ids increase, so a label event with a larger id came
//! after the writer's look (docs/reliability.md). Only then can a trusted login be told apart
//! from our writes: a change no step of that end planned (its labels on, `in-progress` off) is a
//! person's, whatever login made it (a host may write with a person's token, and thirdshift's
//! `gh` often holds ours). An end record written before ids were kept is read from its comment's
//! second, counting untrusted logins only, as before.
//!
//! IO only in [`since_end`] and [`newest_label_event`]; [`SinceEnd::of`] is pure.

use chrono::{DateTime, Utc};

use crate::context::Ctx;
use crate::protocol::record::{EndView, Trust};

use super::LabelChange;

/// What happened to an issue's labels since an end record was posted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinceEnd {
    /// The changes people made, oldest first.
    pub people: Vec<LabelChange>,
    /// `in-progress` was taken off and then put on again, by anyone, trusted or not: a new
    /// Claim (thirdshift claims with whatever token its `gh` holds, often our own login), whose
    /// labels no pass finishing that end may touch. Told by the events' order.
    pub claimed_again: bool,
}

/// What the end's own steps plan, so a trusted change that matches it is ours: the labels it
/// puts on, and whether it takes `in-progress` off. `None` for an end read by its second, where
/// a trusted login's change counts as ours (the ended Claim's own may share that second).
#[derive(Clone, Copy, Debug)]
pub struct Planned<'a> {
    pub labels_after: &'a [String],
    pub in_progress: &'a str,
}

impl Planned<'_> {
    fn plans(&self, c: &LabelChange) -> bool {
        let listed = |l: &str| self.labels_after.iter().any(|x| x.eq_ignore_ascii_case(l));
        if c.added {
            listed(&c.label)
        } else {
            c.label.eq_ignore_ascii_case(self.in_progress) && !listed(self.in_progress)
        }
    }
}

impl SinceEnd {
    /// From every label change since the end, oldest first: people's are the untrusted logins'
    /// and, when the end's plan is known (`planned`), a trusted login's that the plan does not
    /// hold.
    pub fn of(
        all: Vec<LabelChange>,
        trust: &Trust,
        in_progress: &str,
        planned: Option<Planned<'_>>,
    ) -> SinceEnd {
        let is = |c: &LabelChange| c.label.eq_ignore_ascii_case(in_progress);
        let off = all.iter().position(|c| is(c) && !c.added);
        let claimed_again = off.is_some_and(|i| all[i..].iter().any(|c| is(c) && c.added));
        let ours = |c: &LabelChange| trust.is_trusted(&c.by) && planned.is_none_or(|p| p.plans(c));
        let people = all.into_iter().filter(|c| !ours(c)).collect();
        SinceEnd {
            people,
            claimed_again,
        }
    }
}

/// What happened to issue `n`'s labels since `end` (an end record stating labels) was posted:
/// the label events after the newest its writer had seen, or, for a record that names none, at
/// or after its comment's second (`posted` when the caller has the comment, else read).
pub async fn since_end(
    ctx: &Ctx,
    n: u64,
    end: &EndView,
    posted: Option<DateTime<Utc>>,
) -> anyhow::Result<SinceEnd> {
    let in_progress = &ctx.config.labels.in_progress;
    let events = ctx.client.issue_events(n).await?;
    let labels = events
        .into_iter()
        .filter(|e| matches!(e.event.as_str(), "labeled" | "unlabeled"));
    let (all, planned): (Vec<_>, _) = match end.record.events_seen {
        Some(seen) => {
            let after = labels.filter(|e| e.id > seen).filter_map(change).collect();
            let labels_after = end.record.labels_after.as_deref().unwrap_or_default();
            let planned = Planned {
                labels_after,
                in_progress,
            };
            (after, Some(planned))
        }
        None => {
            let posted = match posted {
                Some(at) => at,
                None => ctx.client.get_comment(end.comment_id).await?.created_at,
            };
            let from = labels.filter(|e| e.created_at >= posted).filter_map(change);
            (from.collect(), None)
        }
    };
    Ok(SinceEnd::of(all, &ctx.trust, in_progress, planned))
}

/// The id of issue `n`'s newest label event, what a writer has seen when it posts an end record
/// (`None`: the issue has none).
pub async fn newest_label_event(ctx: &Ctx, n: u64) -> anyhow::Result<Option<u64>> {
    let events = ctx.client.issue_events(n).await?;
    let labels = events
        .iter()
        .filter(|e| matches!(e.event.as_str(), "labeled" | "unlabeled"));
    Ok(labels.map(|e| e.id).max())
}

/// Every label change anyone made on issue `n` at or after `since` (GitHub's clock, to the
/// second), oldest first, from the issue's events; `by` is empty for a deleted account.
pub async fn label_changes_since(
    ctx: &Ctx,
    n: u64,
    since: DateTime<Utc>,
) -> anyhow::Result<Vec<LabelChange>> {
    let events = ctx.client.issue_events(n).await?;
    let labels = events
        .into_iter()
        .filter(|e| matches!(e.event.as_str(), "labeled" | "unlabeled"));
    Ok(labels
        .filter(|e| e.created_at >= since)
        .filter_map(change)
        .collect())
}

fn change(e: crate::github::IssueEvent) -> Option<LabelChange> {
    Some(LabelChange {
        added: e.event == "labeled",
        label: e.label?.name,
        by: e.actor.map(|a| a.login).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests;
