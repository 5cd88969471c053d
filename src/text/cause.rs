//! Why a Run died, in words: the `Cause:` line of an end comment and the cause `status` and the
//! live view show. Rendered from the record (`protocol::record::Cause`); states only what the
//! record's evidence says.

use crate::protocol::record::{Cause, OomSeen};

/// One line saying why the Run died, with its evidence.
pub fn cause_words(c: &Cause) -> String {
    match c {
        Cause::OomKiller {
            counter,
            before,
            after,
        } => format!(
            "the kernel's OOM killer (its memory cgroup's `oom_kill` count in {counter} rose \
             from {before} to {after} while the Run lived, and its command died of SIGKILL)"
        ),
        Cause::Reboot {
            booted_at: Some(at),
        } => format!(
            "the host rebooted (its new boot began at {})",
            super::time(*at)
        ),
        Cause::Reboot { booted_at: None } => "the host rebooted (its boot id changed)".into(),
        Cause::Signal { signal, oom } => {
            let sig = super::signal_name(*signal);
            match oom {
                OomSeen::NotIt => format!(
                    "signal {sig}, sent from outside the Run (not the OOM killer: its memory \
                     cgroup's `oom_kill` count did not rise)"
                ),
                OomSeen::Shared => format!(
                    "signal {sig}; the OOM killer killed a process of its memory cgroup meanwhile, \
                     which other processes share: perhaps this one, perhaps another"
                ),
                OomSeen::Unread => format!(
                    "signal {sig} (whether the OOM killer sent it is unknown: its memory \
                     cgroup's `oom_kill` count could not be read)"
                ),
            }
        }
        Cause::Cancel { by } => format!("a cancel request by @{by}"),
        Cause::Forced { by } => format!("@{by} ended it by force (`recover --force`)"),
        Cause::Unknown => "unknown: nothing on its host says why its process is gone".into(),
    }
}

/// A short name of the cause, for the live view's column and `status --json`.
pub fn cause_kind(c: &Cause) -> &'static str {
    match c {
        Cause::OomKiller { .. } => "OOM killer",
        Cause::Reboot { .. } => "reboot",
        Cause::Signal { .. } => "signal",
        Cause::Cancel { .. } => "cancel",
        Cause::Forced { .. } => "forced",
        Cause::Unknown => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_in_words() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-12-07T03:00:00Z").unwrap();
        let all = [
            Cause::OomKiller {
                counter: "/sys/fs/cgroup/memory/run-7/memory.oom_control".into(),
                before: 0,
                after: 1,
            },
            Cause::Reboot {
                booted_at: Some(at.with_timezone(&chrono::Utc)),
            },
            Cause::Reboot { booted_at: None },
            Cause::Signal {
                signal: 9,
                oom: OomSeen::NotIt,
            },
            Cause::Signal {
                signal: 9,
                oom: OomSeen::Shared,
            },
            Cause::Signal {
                signal: 15,
                oom: OomSeen::Unread,
            },
            Cause::Cancel { by: "alice".into() },
            Cause::Forced { by: "bob".into() },
            Cause::Unknown,
        ];
        let lines: Vec<String> = all
            .iter()
            .map(|c| format!("{}: {}", cause_kind(c), cause_words(c)))
            .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }
}
