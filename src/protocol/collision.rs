//! Which Run keeps an issue when several work on it at once, and which collide (docs/thirdshift.md,
//! "Two Runs on one issue"). The Runs still working on an issue are its owning claim of ours (the
//! claim race already settled among ours) and the thirdshift Commands hosts report on it, not
//! proven dead and not ended. Each stands at the comment id of its record on the issue: our claim
//! comment, or the Command's adoption record its host posted when it first saw it alive. The
//! lowest keeps the issue; every other collides with it. A Command whose host has not posted its
//! adoption yet stands after every recorded one (by claim id among themselves), and is never
//! stopped for it: only a recorded place is acted on.
//!
//! So every host and every reader decides the same from the same comments, and no clock is
//! compared. Pure: what the Runs are, and whether they live, is the caller's.

use super::record::Ownership;

/// One Run working on an issue.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Contender {
    pub claim_id: String,
    pub host: String,
}

/// Several Runs on one issue: the one that keeps it and the later ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collision {
    pub owner: Contender,
    /// The later Runs, in order, each with whether its place is recorded on the issue.
    pub later: Vec<(Contender, bool)>,
}

impl Collision {
    /// Whether `claim_id` is one of the later Runs.
    pub fn collides(&self, claim_id: &str) -> bool {
        self.later.iter().any(|(c, _)| c.claim_id == claim_id)
    }

    /// Whether `claim_id` is a later Run whose place is recorded: one its host may stop.
    pub fn recorded_later(&self, claim_id: &str) -> bool {
        self.later
            .iter()
            .any(|(c, recorded)| *recorded && c.claim_id == claim_id)
    }
}

/// The comment id of the record that places `claim_id` on the issue: its claim comment (ours)
/// or its adoption record (a thirdshift Command's).
pub fn place(own: &Ownership, claim_id: &str) -> Option<u64> {
    let claim = own.active().find(|c| c.record.claim_id == claim_id);
    claim
        .map(|c| c.comment_id)
        .or_else(|| own.adoption(claim_id).map(|a| a.comment_id))
}

/// The collision among `runs` on the issue `own` was read from; `None` with fewer than two.
pub fn among(own: &Ownership, runs: Vec<Contender>) -> Option<Collision> {
    let mut placed: Vec<(Option<u64>, Contender)> = runs
        .into_iter()
        .map(|r| (place(own, &r.claim_id), r))
        .collect();
    placed.sort_by(|(a, x), (b, y)| {
        let key = |p: &Option<u64>| p.unwrap_or(u64::MAX);
        key(a)
            .cmp(&key(b))
            .then_with(|| x.claim_id.cmp(&y.claim_id))
    });
    placed.dedup_by(|(_, a), (_, b)| a.claim_id == b.claim_id);
    if placed.len() < 2 {
        return None;
    }
    let mut it = placed.into_iter();
    let (_, owner) = it.next()?;
    Some(Collision {
        owner,
        later: it.map(|(p, c)| (c, p.is_some())).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::adopt::tests::sample_adopt;
    use crate::protocol::record::claim::tests::sample_claim;
    use crate::protocol::record::{RawComment, Trust};
    use crate::text::ToComment;

    fn comment(id: u64, author: &str, body: String) -> RawComment {
        RawComment {
            id,
            author: author.into(),
            body,
        }
    }

    fn adoption(id: u64, claim: &str, host: &str) -> RawComment {
        let mut a = sample_adopt();
        a.claim_id = claim.into();
        a.command.host = host.into();
        comment(id, "bot", a.to_comment())
    }

    fn run(claim: &str, host: &str) -> Contender {
        Contender {
            claim_id: claim.into(),
            host: host.into(),
        }
    }

    #[test]
    fn the_lowest_recorded_place_keeps_the_issue_whatever_order_runs_are_given_in() {
        // given two Commands adopted on issue 42, the one on b first
        let comments = [adoption(7, "ts-b", "b"), adoption(9, "ts-a", "a")];
        let own = Ownership::of(42, &comments, &Trust::new(["bot"]));
        for runs in [
            vec![run("ts-a", "a"), run("ts-b", "b")],
            vec![run("ts-b", "b"), run("ts-a", "a")],
        ] {
            // when the collision is decided, then b keeps it and a collides, recorded
            let c = among(&own, runs).unwrap();
            assert_eq!(c.owner, run("ts-b", "b"));
            assert_eq!(c.later, vec![(run("ts-a", "a"), true)]);
            assert!(c.recorded_later("ts-a") && !c.collides("ts-b"));
        }
    }

    #[test]
    fn an_untrusted_adoption_places_nothing() {
        // given the later Command's host first, and a stranger's forged adoption for the other
        let comments = [
            adoption(5, "ts-a", "a"),
            adoption(7, "ts-b", "b"),
            comment(3, "stranger", {
                let mut a = sample_adopt();
                a.claim_id = "ts-b".into();
                a.to_comment()
            }),
        ];
        let own = Ownership::of(42, &comments, &Trust::new(["bot"]));
        // then the forged one moved nothing
        let c = among(&own, vec![run("ts-a", "a"), run("ts-b", "b")]).unwrap();
        assert_eq!(c.owner.claim_id, "ts-a");
    }

    #[test]
    fn our_claim_and_a_command_are_placed_by_the_same_rule() {
        // given our claim comment after a Command's adoption
        let mut ours = sample_claim();
        ours.issue = 42;
        let comments = [
            adoption(4, "ts-a", "a"),
            comment(6, "bot", ours.to_comment()),
        ];
        let own = Ownership::of(42, &comments, &Trust::new(["bot"]));
        let c = among(
            &own,
            vec![run(&ours.claim_id, &ours.host), run("ts-a", "a")],
        )
        .unwrap();
        // then the Command keeps the issue and our Run collides
        assert_eq!(c.owner.claim_id, "ts-a");
        assert!(c.recorded_later(&ours.claim_id));
    }

    #[test]
    fn an_unrecorded_run_stands_last_and_is_never_a_recorded_later_one() {
        let own = Ownership::of(42, &[adoption(9, "ts-b", "b")], &Trust::new(["bot"]));
        let c = among(&own, vec![run("ts-a", "a"), run("ts-b", "b")]).unwrap();
        assert_eq!(c.owner.claim_id, "ts-b");
        assert!(c.collides("ts-a") && !c.recorded_later("ts-a"));
        // and one Run alone is no collision
        assert_eq!(among(&own, vec![run("ts-b", "b"), run("ts-b", "b")]), None);
    }
}
