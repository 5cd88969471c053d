use super::*;
use crate::protocol::config::Preset;
use crate::protocol::record::claim::tests::sample_claim;
use crate::protocol::record::end::tests::sample_end;
use crate::protocol::record::{CancelRecord, CancelView, Salvage};

/// A Claim `id` of host `host`, taken from the ready queue, posted as comment `at`.
fn claim(id: &str, host: &str, at: u64) -> ClaimView {
    ClaimView {
        comment_id: at,
        author: "bot".into(),
        record: ClaimRecord {
            claim_id: id.into(),
            host: host.into(),
            removed_ready: true,
            ..sample_claim()
        },
    }
}

/// Its end with `outcome`, posted right after it.
fn ended(c: &ClaimView, outcome: Outcome) -> (ClaimView, EndView) {
    let record = EndRecord {
        claim_id: c.record.claim_id.clone(),
        labels_after: Some(vec!["ready-for-agent".into()]),
        ..sample_end(outcome)
    };
    let end = EndView {
        comment_id: c.comment_id + 1,
        author: "bot".into(),
        record,
    };
    (c.clone(), end)
}

/// Ended Claims of host h1 with these outcomes, oldest first.
fn history(outcomes: &[Outcome]) -> Vec<(ClaimView, EndView)> {
    outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| ended(&claim(&format!("c-old{i}"), "h1", 10 * i as u64 + 10), *o))
        .collect()
}

fn failing_end(c: &ClaimView) -> EndRecord {
    ended(c, Outcome::Failed).1.record
}

#[test]
fn the_kth_failure_in_a_row_hands_the_issue_to_people_with_the_failures_listed() {
    let labels = Labels::default();
    let now = claim("c-now", "h2", 100);
    // given one earlier failed Run: below a limit of 2 nothing changes
    let mut end = failing_end(&now);
    assert!(hand_to_people(&labels, &[], &now.record, &mut end, 2).is_none());
    assert!(end.failures.is_empty());
    // given a failed Run before it, this second failure reaches the limit
    let before = history(&[Outcome::Done, Outcome::Recovered]);
    let list = hand_to_people(&labels, &before, &now.record, &mut end, 2);
    assert_eq!(list.as_deref(), Some(&["ready-for-human".to_string()][..]));
    let listed: Vec<_> = end.failures.iter().map(|f| f.claim_id.as_str()).collect();
    assert_eq!(listed, ["c-old1", "c-now"]);
    assert_eq!(end.failures[1].host, "h2");
    // and under the thirdshift preset, as thirdshift's own failed run: agent-failed
    let ts = Labels {
        preset: Preset::Thirdshift,
        ..Labels::default()
    };
    let list = hand_to_people(&ts, &before, &now.record, &mut end, 2).unwrap();
    assert_eq!(list, ["in-progress", "agent-failed"]);
}

#[test]
fn a_done_or_handed_back_run_breaks_the_run_of_failures() {
    let now = claim("c-now", "h1", 100);
    for breaker in [Outcome::Done, Outcome::HandedBack] {
        let before = history(&[Outcome::Failed, breaker]);
        assert!(at_limit(&before, &now.record, &failing_end(&now), 2).is_none());
    }
    // a withdrawn or superseded Claim had no Run: it is passed over
    let before = history(&[Outcome::Continued, Outcome::Withdrawn, Outcome::Superseded]);
    let runs = at_limit(&before, &now.record, &failing_end(&now), 2).unwrap();
    assert_eq!(runs[0].outcome, Outcome::Continued);
}

#[test]
fn a_cancel_counts_only_when_nothing_of_the_run_reached_origin() {
    let now = claim("c-now", "h1", 100);
    let before = history(&[Outcome::Failed]);
    let mut cancel = ended(&now, Outcome::Cancelled).1.record;
    assert!(at_limit(&before, &now.record, &cancel, 2).is_some());
    cancel.pull_request = Some(7);
    assert!(at_limit(&before, &now.record, &cancel, 2).is_none());
    cancel.pull_request = None;
    cancel.kept = Some(Salvage {
        pushed: true,
        ..Salvage::untouched("/w".into(), "issue-42".into())
    });
    assert!(!counts(&cancel));
}

/// Ownership with these ended Claims and a cancel request for `c`.
fn own_with(ended: Vec<(ClaimView, EndView)>, c: &ClaimView, requeue: bool) -> Ownership {
    let cancel = CancelView {
        comment_id: c.comment_id + 1,
        author: "bot".into(),
        record: CancelRecord {
            claim_id: c.record.claim_id.clone(),
            requeue,
            ..crate::protocol::record::cancel::tests::sample_cancel()
        },
    };
    Ownership {
        ended,
        cancels: vec![cancel],
        ..Ownership::default()
    }
}

#[test]
fn a_cancel_holds_the_issue_unless_it_asked_requeue() {
    let labels = Labels::default();
    let c = claim("c-now", "h1", 100);
    for requeue in [false, true] {
        let own = own_with(history(&[Outcome::Done]), &c, requeue);
        let mut end = ended(&c, Outcome::Cancelled).1.record;
        // when the cancel's labels are settled
        let list = settle(&labels, &own, &c.record, &mut end, vec![], 3);
        // then the ready label is back only on --requeue
        assert_eq!(list.is_empty(), !requeue, "requeue {requeue}: {list:?}");
        // and pickup holds the issue only without it
        let past = history(&[Outcome::Done, Outcome::Cancelled]);
        let cancelled = past[1].0.clone();
        let own = own_with(past, &cancelled, requeue);
        assert_eq!(
            hold(&own).map(|(h, _)| h),
            (!requeue).then_some(Hold::Cancelled)
        );
    }
}

#[test]
fn a_host_counts_its_own_failures_handed_to_people_not_its_requeued_ones() {
    let labels = Labels::default();
    let mut own = Ownership {
        ended: history(&[Outcome::Failed]),
        ..Ownership::default()
    };
    // a failure put back in the queue does not count
    assert!(!handed_for_failing(&labels, &own, "h1"));
    // one handed to people does, on its own host only
    own.ended[0].1.record.labels_after = Some(vec!["ready-for-human".into()]);
    assert!(handed_for_failing(&labels, &own, "h1"));
    assert!(!handed_for_failing(&labels, &own, "h2"));
    assert_eq!(hold(&own), None);
    // and an end at the failure limit holds the issue and counts, whatever its labels
    own.ended[0].1.record.labels_after = Some(vec!["ready-for-agent".into()]);
    own.ended[0].1.record.failures =
        vec![failed_run(&own.ended[0].0.record, &own.ended[0].1.record)];
    assert!(handed_for_failing(&labels, &own, "h1"));
    assert_eq!(hold(&own).map(|(h, _)| h), Some(Hold::FailureLimit));
}
