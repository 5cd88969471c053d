//! The `run:` section of the config: how a Run stops its command when it is asked to stop (a
//! signal to the Run, a cancel carried out by its host): to whom the signal goes
//! ([`Forward`]) and how long the command has before its session is killed, for every Run or per
//! kind of Run (`kinds.ticket`, `kinds.spec`).
//!
//! What thirdshift needs when `run` wraps it (docs/config.md): `forward: leader`, since it stops
//! its Harness with the Harness's own signals (Codex: SIGINT first) and then commits, pushes,
//! turns its pull request to draft and relabels, which takes minutes: a grace of 900 s.
//! It does not send signals (`run.rs`, `host::stop` do).

use serde::{Deserialize, Serialize};

use crate::protocol::record::RunKind;

/// To whom a stop signal goes.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Forward {
    /// Every process of the command's session at once.
    #[default]
    Session,
    /// Only the command (its session's leader), which stops its own children; the rest of the
    /// session is killed only once the grace has passed.
    Leader,
}

impl Forward {
    pub fn as_str(self) -> &'static str {
        match self {
            Forward::Session => "session",
            Forward::Leader => "leader",
        }
    }
}

/// How a Run treats its command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Seconds between forwarding the stop signal and killing what is left of the session.
    pub kill_grace_secs: u64,
    pub forward: Forward,
    /// Per kind of Run, settings that differ from the ones above.
    pub kinds: Kinds,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            kill_grace_secs: 10,
            forward: Forward::Session,
            kinds: Kinds::default(),
        }
    }
}

/// `run.kinds`: one optional override per kind of Run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Kinds {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket: Option<KindRun>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<KindRun>,
}

/// What one kind of Run changes of `run`'s settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct KindRun {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_grace_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward: Option<Forward>,
}

/// The settings that apply to one Run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopPolicy {
    pub forward: Forward,
    pub kill_grace_secs: u64,
}

impl StopPolicy {
    pub fn grace(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.kill_grace_secs)
    }
}

impl RunConfig {
    /// The settings for a Run of `kind`: its kind's, else `run`'s own.
    pub fn for_kind(&self, kind: RunKind) -> StopPolicy {
        let own = match kind {
            RunKind::Ticket => self.kinds.ticket.as_ref(),
            RunKind::Spec => self.kinds.spec.as_ref(),
        };
        StopPolicy {
            forward: own.and_then(|k| k.forward).unwrap_or(self.forward),
            kill_grace_secs: own
                .and_then(|k| k.kill_grace_secs)
                .unwrap_or(self.kill_grace_secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_overrides_only_what_it_names() {
        let run = RunConfig {
            kinds: Kinds {
                spec: Some(KindRun {
                    forward: Some(Forward::Leader),
                    kill_grace_secs: None,
                }),
                ..Kinds::default()
            },
            kill_grace_secs: 30,
            ..RunConfig::default()
        };
        let spec = run.for_kind(RunKind::Spec);
        assert_eq!(spec.forward, Forward::Leader);
        assert_eq!(spec.kill_grace_secs, 30);
        let ticket = run.for_kind(RunKind::Ticket);
        assert_eq!(ticket.forward, Forward::Session);
    }
}
