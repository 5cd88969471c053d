//! What a person should do about each Run the view shows: whether it needs someone at all
//! (`Attention`), and for one that does, the next step in one sentence with the exact
//! `/thirdshift` comment to write on its issue or the host to look at. Every renderer shows the
//! Runs that need someone first, under "Needs you", with this step. Pure: it reads a row and
//! decides nothing about a Claim (reconcile does); it says only what commands and hosts can do
//! (docs/commands.md).

use serde::Serialize;

use super::row::{RunHealth, RunRow};

/// Who acts next on a Run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attention {
    /// Nothing ends or carries on without a person: a host to look at, or a command to write.
    NeedsYou,
    /// Reconcile ends it by itself at its next pass (proven dead, superseded, or on a closed
    /// issue); a dead Run's companion may already be at it.
    BeingRecovered,
    /// Running as it should.
    Running,
}

impl Attention {
    /// The section heading of every view.
    pub fn heading(self) -> &'static str {
        match self {
            Attention::NeedsYou => "Needs you",
            Attention::BeingRecovered => "Being recovered",
            Attention::Running => "Running",
        }
    }

    /// In the order the views show them.
    pub const ALL: [Attention; 3] = [
        Attention::NeedsYou,
        Attention::BeingRecovered,
        Attention::Running,
    ];
}

impl RunHealth {
    /// Who acts next on a Run of this health.
    pub fn attention(self) -> Attention {
        match self {
            RunHealth::WritersAlive
            | RunHealth::AwaitingHost
            | RunHealth::HostMismatch
            | RunHealth::HostSilent
            | RunHealth::Unowned
            | RunHealth::Colliding => Attention::NeedsYou,
            RunHealth::Dead | RunHealth::Superseded | RunHealth::IssueClosed => {
                Attention::BeingRecovered
            }
            RunHealth::Alive | RunHealth::Starting => Attention::Running,
        }
    }
}

/// A person's next step for one Run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NextStep {
    /// What to do, one sentence; code (labels, commands) in backticks.
    pub says: String,
    /// The exact comment to write on the Run's issue, when a command does it.
    pub command: Option<String>,
    /// The host to look at, when the step is there.
    pub host: Option<String>,
}

/// The next step for `r`: what a person does for a Run that needs one, what happens by itself
/// for one being recovered; `None` for a Run running as it should.
pub fn of(r: &RunRow) -> Option<NextStep> {
    let host = r.host.clone();
    let on = |h: &Option<String>| h.as_deref().map_or("its host".into(), |h| format!("`{h}`"));
    let step = |says: String, command: Option<&str>, host: Option<String>| NextStep {
        says,
        command: command.map(str::to_string),
        host,
    };
    Some(match r.health {
        RunHealth::WritersAlive if r.thirdshift_record.is_some() => step(
            format!("Its thirdshift Command died but processes of its session still run on {}: let them finish, or stop them there (the next pass then recovers it)", on(&host)),
            None,
            host,
        ),
        RunHealth::WritersAlive => step(
            format!("Its process died but processes of its session still run on {}: let them finish (the next pass then recovers it), or have its host stop them and recover it by commenting", on(&host)),
            Some("/thirdshift recover --kill"),
            host,
        ),
        RunHealth::AwaitingHost => step(
            format!("{} has not named this Run in a report: check that `thirdshift-reconciler observe` runs there; if that machine is gone for good, end the Claim by commenting", capital(&on(&host))),
            Some("/thirdshift recover --force"),
            host,
        ),
        RunHealth::HostMismatch => step(
            format!("Another machine reports under the name {}: give each machine its own host name (docs/operations.md); if the Run's machine is gone for good, end the Claim by commenting", on(&host)),
            Some("/thirdshift recover --force"),
            host,
        ),
        RunHealth::HostSilent => step(
            format!("{} has stopped reporting: start its `thirdshift-reconciler observe` again (docs/operations.md); the Claim ends only on that host's evidence", capital(&on(&host))),
            None,
            host,
        ),
        RunHealth::Colliding => colliding(r, host),
        RunHealth::Unowned => step(
            "`in-progress` with no Claim: if no agent works on it, take `in-progress` off (and put `ready-for-agent` back to queue it again)".into(),
            None,
            None,
        ),
        RunHealth::Dead if r.watched => step(
            "Proven dead: its companion is ending the Claim now (or the next pass does); nothing to do".into(),
            None,
            None,
        ),
        RunHealth::Dead => step(
            "Proven dead by its host: the next reconcile pass ends the Claim; nothing to do".into(),
            None,
            None,
        ),
        RunHealth::Superseded => step(
            "A later claim while an earlier one owns the issue: the next pass ends it; nothing to do".into(),
            None,
            None,
        ),
        RunHealth::IssueClosed => step(
            "Its issue is closed: the next pass sweeps the Claim; nothing to do".into(),
            None,
            None,
        ),
        RunHealth::Alive | RunHealth::Starting => return None,
    })
}

/// A later Run on an issue another keeps: stopped on its own host, never the owner.
fn colliding(r: &RunRow, host: Option<String>) -> NextStep {
    let owner = r.collides_with.as_ref().map_or("another Run".into(), |o| {
        format!("`{}` on `{}`", o.claim_id, o.host)
    });
    let on = host
        .as_deref()
        .map_or("its host".into(), |h| format!("`{h}`"));
    let (says, command) = match &r.thirdshift_record {
        Some(record) => (
            format!("Two Runs work on this issue and {owner}, recorded first, keeps it: on {on}, stop this one with `thirdshift stop` and its record `{record}` (under thirdshift's logs folder there), or set `thirdshift.on_collision: stop` so hosts stop later Runs themselves, their work kept on a branch of their own"),
            None,
        ),
        None => (
            format!("Two Runs work on this issue and {owner}, recorded first, keeps it: stop this Run of ours on {on} by commenting"),
            Some("/thirdshift cancel"),
        ),
    };
    NextStep {
        says,
        command: command.map(str::to_string),
        host,
    }
}

/// `s` with its first letter upper-case (a sentence that starts with a host's name in code
/// starts with the backtick and stays as it is).
fn capital(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().collect::<String>() + chars.as_str()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixture;

    #[test]
    fn every_run_that_needs_a_person_has_a_step_and_every_running_one_none() {
        for r in fixture::view(&[]).runs {
            let step = of(&r);
            match r.health.attention() {
                Attention::Running => assert_eq!(step, None, "{:?}", r.health),
                Attention::NeedsYou | Attention::BeingRecovered => {
                    assert!(step.is_some(), "{:?}", r.health)
                }
            }
        }
    }

    #[test]
    fn a_dead_run_is_being_recovered_not_a_persons_task() {
        assert_eq!(RunHealth::Dead.attention(), Attention::BeingRecovered);
        assert_eq!(RunHealth::HostSilent.attention(), Attention::NeedsYou);
    }

    #[test]
    fn every_step_in_words() {
        let mut out = String::new();
        let base = fixture::view(&[]).runs.remove(0);
        for health in RunHealth::ALL {
            for thirdshift in [false, true] {
                let r = RunRow {
                    health,
                    thirdshift_record: thirdshift.then(|| "/tmp/r.json".to_string()),
                    ..base.clone()
                };
                let both = [RunHealth::WritersAlive, RunHealth::Colliding];
                if thirdshift && !both.contains(&health) {
                    continue;
                }
                let step = of(&r);
                out.push_str(&format!(
                    "{} (thirdshift: {thirdshift}): {step:?}\n",
                    health.word()
                ));
            }
        }
        insta::assert_snapshot!(out);
    }
}
