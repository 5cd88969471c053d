//! The decisions of a reconcile pass, as a pure function of what one read of GitHub saw. No IO,
//! no clock (the time to stamp on records is an input). Commands will be one more input to the
//! same function, so a command and a scheduled pass can never decide differently.

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::record::EndRecord;
use crate::snapshot::Snapshot;

/// One write to GitHub. Within an issue, actions come in the order they must be applied: end
/// records, then labels added, then labels removed, then clean-up.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Post an end record (skipped by apply if one for the claim is already there).
    PostEnd {
        issue: u64,
        end: EndRecord,
    },
    AddLabel {
        issue: u64,
        label: String,
    },
    RemoveLabel {
        issue: u64,
        label: String,
    },
    /// Delete a later duplicate of a record written by a trusted identity.
    DeleteComment {
        issue: u64,
        comment_id: u64,
        reason: String,
    },
}

/// The health of a Claim (or an issue without one) as the pass saw it, for people and the view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// The owning host says the Run lives.
    Alive,
    /// The Run's first process died but these processes of it still run.
    WritersAlive { pids: Vec<u32> },
    /// The owning host has not reported on this Claim since it was taken.
    AwaitingHost,
    /// A host report with the Claim's host name comes from another machine: not evidence.
    HostMismatch,
    /// A later claim while an earlier one owns the issue: ended by this pass.
    Superseded,
    /// `in-progress` without any claim record: left for people.
    Unowned,
    /// Proven dead by its host: ended by this pass.
    Recovered,
    /// Active claim on a closed issue: ended by this pass.
    Swept,
    /// An end record whose labels were not all applied: finished by this pass.
    LabelsFinished,
}

/// What the pass noticed about one issue or Claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub issue: u64,
    pub claim_id: Option<String>,
    pub host: Option<String>,
    pub health: Health,
    /// One sentence of evidence for people.
    pub note: String,
}

/// The decisions of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub actions: Vec<Action>,
    pub findings: Vec<Finding>,
}

/// What `plan` needs besides the snapshot and config.
#[derive(Clone, Debug)]
pub struct PlanInput {
    /// Who ends Claims in this pass, for end records (e.g. `reconcile@HOST`).
    pub actor: String,
    /// The time stamped on end records written by this pass.
    pub now: DateTime<Utc>,
}

/// Decides what one pass does.
pub fn plan(snapshot: &Snapshot, config: &Config, input: &PlanInput) -> Plan {
    let _ = (snapshot, config, input);
    Plan::default()
}
