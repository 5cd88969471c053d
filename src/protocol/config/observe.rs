//! The `observe:` section of the config: how often a host rewrites its report when nothing
//! changed, so that a host whose `observe` stopped (its crontab line gone, its runner down) can
//! be told from a quiet healthy one. The live view shows a host silent after
//! [`SILENT_AFTER_REFRESHES`] refresh intervals; nothing is ever decided on it (a Claim ends on
//! evidence only).

use serde::{Deserialize, Serialize};

/// How many refresh intervals without a report make a host "silent" in the live view.
pub const SILENT_AFTER_REFRESHES: u64 = 3;

/// `observe`'s settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ObserveConfig {
    /// Minutes after which a host rewrites an unchanged report (one edit an hour by default).
    pub refresh_mins: u64,
}

impl Default for ObserveConfig {
    fn default() -> ObserveConfig {
        ObserveConfig { refresh_mins: 60 }
    }
}

impl ObserveConfig {
    pub fn refresh_secs(&self) -> u64 {
        self.refresh_mins.saturating_mul(60)
    }
}
