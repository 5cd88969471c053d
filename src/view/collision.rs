//! Two Runs on one issue, in the view: of the rows of one issue, the Runs still working on it
//! (our owning claim, thirdshift Commands alive or with writers alive) are placed by
//! `protocol::collision`, and every later one is shown `colliding`, with the Run that keeps the
//! issue and both hosts in its evidence, under "Needs you" in every renderer. Pure: rows in,
//! rows out; it stops nothing (a host does, under `thirdshift.on_collision: stop`).

use super::row::{RunHealth, RunRow};
use crate::protocol::collision::{among, Contender};
use crate::snapshot::IssueSnapshot;

/// Marks the rows of `issue` that collide with the Run that keeps it.
pub fn mark(issue: &IssueSnapshot, rows: &mut [RunRow]) {
    let owner = issue.ownership.owner.as_ref().map(|c| &c.record.claim_id);
    let working = |r: &RunRow| match r.thirdshift_record {
        Some(_) => matches!(r.health, RunHealth::Alive | RunHealth::WritersAlive),
        None => r.claim_id.as_ref().is_some_and(|id| Some(id) == owner),
    };
    let runs: Vec<Contender> = rows
        .iter()
        .filter(|r| working(r))
        .filter_map(|r| {
            Some(Contender {
                claim_id: r.claim_id.clone()?,
                host: r.host.clone()?,
            })
        })
        .collect();
    let Some(collision) = among(&issue.ownership, runs) else {
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
