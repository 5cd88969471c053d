//! The `labels:` section of the config: the names of the labels the tool manages, and the label
//! conventions — which labels an issue carries once its Claim ends, per way of ending
//! ([`Ending`]). `preset: default` is the tool's own convention, `preset: thirdshift` thirdshift
//! 0.19.0's (`src/claim.rs` there); `after:` overrides any of them one by one.
//!
//! A list names the labels the issue gets; listing the `in_progress` label keeps it on (the
//! Claim's mark stays, as thirdshift keeps it while a pull request waits for review); every
//! other label is left as it is. It does not decide which ending applies (`crate::protocol::rules` does,
//! from the outcome, what reached origin and what was kept).

use serde::{Deserialize, Serialize};

/// The label thirdshift 0.19.0 puts on an issue whose failed run keeps its Claim (its
/// `claim::AGENT_FAILED`); thirdshift's Failure limit counts it and its next Claim takes it off.
pub const AGENT_FAILED: &str = "agent-failed";

/// thirdshift 0.19.0's triage label (`labels::NEEDS_TRIAGE`), which a stopped Command's issue
/// gets.
pub const NEEDS_TRIAGE: &str = "needs-triage";

/// The label names the tool manages, and what an ended Claim leaves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Labels {
    /// Issues a Run may take.
    pub ready: String,
    /// Issues a Run holds a Claim on.
    pub in_progress: String,
    /// Issues handed to people after a Run failed or died.
    pub hand_off: String,
    /// Whose conventions an ended Claim's labels follow, unless `after` says otherwise.
    pub preset: Preset,
    /// Per way of ending, the labels the issue gets (overrides the preset's).
    pub after: After,
}

impl Default for Labels {
    fn default() -> Labels {
        Labels {
            ready: "ready-for-agent".into(),
            in_progress: "in-progress".into(),
            hand_off: "ready-for-human".into(),
            preset: Preset::Default,
            after: After::default(),
        }
    }
}

/// A set of label conventions.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// The tool's own: done and handed-back issues lose `in-progress`; a failed Run's issue
    /// goes back to the queue when nothing of it is anywhere, else to people.
    #[default]
    Default,
    /// thirdshift 0.19.0's: `in-progress` stays while a pull request waits for review and on
    /// a failed Run's issue with work on origin, which is labelled `agent-failed`; a stopped
    /// Run's issue goes to triage (`needs-triage`).
    Thirdshift,
}

/// The ways a Claim ends that its labels depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The Run finished, with no open pull request.
    Done,
    /// The Run finished and its pull request is open, waiting for review.
    DoneWithPullRequest,
    /// The Run failed or died, and something of it is on origin or kept on its host.
    FailedWithWork,
    /// The Run failed or died and left nothing anywhere.
    FailedWithNothing,
    /// The Run was stopped by a signal (SIGINT, SIGTERM, SIGHUP).
    HandedBack,
    /// The Run was stopped on a cancel request. A cancel holds the issue: the ready label is
    /// never put back, unless the request asked `--requeue` (`protocol::failures::settle`).
    Cancelled,
}

/// `labels.after`: an explicit list per way of ending; a missing key takes the preset's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct After {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_with_pull_request: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_with_work: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_with_nothing: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handed_back: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<Vec<String>>,
}

impl After {
    /// Every list given, with its key, for validation.
    pub fn given(&self) -> impl Iterator<Item = (&'static str, &Vec<String>)> {
        [
            ("done", &self.done),
            ("done_with_pull_request", &self.done_with_pull_request),
            ("failed_with_work", &self.failed_with_work),
            ("failed_with_nothing", &self.failed_with_nothing),
            ("handed_back", &self.handed_back),
            ("cancelled", &self.cancelled),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
    }

    fn of(&self, ending: Ending) -> Option<&Vec<String>> {
        match ending {
            Ending::Done => self.done.as_ref(),
            Ending::DoneWithPullRequest => self.done_with_pull_request.as_ref(),
            Ending::FailedWithWork => self.failed_with_work.as_ref(),
            Ending::FailedWithNothing => self.failed_with_nothing.as_ref(),
            Ending::HandedBack => self.handed_back.as_ref(),
            Ending::Cancelled => self.cancelled.as_ref(),
        }
    }
}

impl Labels {
    /// The labels an issue gets when its Claim ends as `ending` (listing `in_progress`: it
    /// stays on), from `after` or else the preset.
    pub fn after(&self, ending: Ending) -> Vec<String> {
        if let Some(list) = self.after.of(ending) {
            return list.clone();
        }
        let (ready, in_progress, hand_off) = (&self.ready, &self.in_progress, &self.hand_off);
        let names: Vec<&str> = match (self.preset, ending) {
            (_, Ending::Done) => vec![],
            (Preset::Default, Ending::DoneWithPullRequest) => vec![],
            (Preset::Thirdshift, Ending::DoneWithPullRequest) => vec![in_progress],
            (Preset::Default, Ending::FailedWithWork) => vec![hand_off],
            (Preset::Thirdshift, Ending::FailedWithWork) => vec![in_progress, AGENT_FAILED],
            (_, Ending::FailedWithNothing) => vec![ready],
            (Preset::Default, Ending::HandedBack) => vec![ready],
            (Preset::Thirdshift, Ending::HandedBack) => vec![NEEDS_TRIAGE],
            (_, Ending::Cancelled) => vec![],
        };
        names.into_iter().map(str::to_string).collect()
    }

    /// Whether `list` puts the issue back in the queue (`ready-for-agent`).
    pub fn queues(&self, list: &[String]) -> bool {
        list.iter().any(|l| l.eq_ignore_ascii_case(&self.ready))
    }

    /// Whether `list` keeps the Claim's label on.
    pub fn keeps_in_progress(&self, list: &[String]) -> bool {
        list.iter()
            .any(|l| l.eq_ignore_ascii_case(&self.in_progress))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_preset_is_todays_convention() {
        let l = Labels::default();
        assert!(l.after(Ending::Done).is_empty());
        assert!(l.after(Ending::DoneWithPullRequest).is_empty());
        assert_eq!(l.after(Ending::FailedWithWork), ["ready-for-human"]);
        assert_eq!(l.after(Ending::FailedWithNothing), ["ready-for-agent"]);
        assert_eq!(l.after(Ending::HandedBack), ["ready-for-agent"]);
        assert!(l.after(Ending::Cancelled).is_empty());
    }

    #[test]
    fn the_thirdshift_preset_keeps_the_claim_while_work_waits_and_marks_failures() {
        let l = Labels {
            preset: Preset::Thirdshift,
            ..Labels::default()
        };
        assert_eq!(l.after(Ending::DoneWithPullRequest), ["in-progress"]);
        assert!(l.keeps_in_progress(&l.after(Ending::DoneWithPullRequest)));
        assert_eq!(
            l.after(Ending::FailedWithWork),
            ["in-progress", "agent-failed"]
        );
        assert_eq!(l.after(Ending::FailedWithNothing), ["ready-for-agent"]);
        assert_eq!(l.after(Ending::HandedBack), ["needs-triage"]);
        assert!(!l.keeps_in_progress(&l.after(Ending::Done)));
    }

    #[test]
    fn an_explicit_list_wins_over_the_preset() {
        let l = Labels {
            after: After {
                failed_with_work: Some(vec!["needs-eyes".into()]),
                ..After::default()
            },
            ..Labels::default()
        };
        assert_eq!(l.after(Ending::FailedWithWork), ["needs-eyes"]);
        assert_eq!(l.after(Ending::HandedBack), ["ready-for-agent"]);
    }
}
