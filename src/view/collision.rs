//! Two Runs on one issue, in the view: the Runs still working on an issue
//! (`Snapshot::runs_working_on`, as reconcile and a host's stop see them) are placed by
//! `protocol::collision`, and each row of a later one is shown `colliding`, with the Run that
//! keeps the issue and both hosts in its evidence, under "Needs you" in every renderer. Pure:
//! rows in, rows out; it stops nothing (a host does, under `thirdshift.on_collision: stop`).

use super::row::{RunHealth, RunRow};
use crate::protocol::collision::among;
use crate::snapshot::{IssueSnapshot, Snapshot};

/// Marks the rows of `issue` that collide with the Run that keeps it.
pub fn mark(issue: &IssueSnapshot, snapshot: &Snapshot, rows: &mut [RunRow]) {
    let own = &issue.ownership;
    let Some(collision) = among(own, snapshot.runs_working_on(issue.number, own)) else {
        return;
    };
    for r in rows.iter_mut() {
        let Some(id) = r.claim_id.as_deref() else {
            continue;
        };
        if !collision.collides(id) {
            continue;
        }
        let owner = &collision.owner;
        let host = r.host.as_deref().unwrap_or_default();
        r.health = RunHealth::Colliding;
        r.evidence = crate::text::collision::colliding(host, &owner.claim_id, &owner.host);
        r.collides_with = Some(owner.clone());
    }
}
