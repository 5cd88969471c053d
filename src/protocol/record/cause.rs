//! Why a Run died, as far as its host can know it: the `cause` an end record carries. Each kind
//! names its evidence; `unknown` is said when nothing on the host tells, never a guess stated as
//! fact. The Run decides it when its command dies under it (a signal, or the kernel's OOM killer
//! told by its memory cgroup's `oom_kill` count rising while it lived, `crate::host::oom`); a
//! pass decides it for a Run proven dead (a reboot from the boot id, else unknown), a person's
//! force, and a carried-out cancel. The words are `crate::text`'s. Pure.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::field;

/// Why a Run died.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// The kernel's OOM killer: the `oom_kill` count in `counter` (the Run's memory cgroup's
    /// `memory.events` or `memory.oom_control`) rose from `before` to `after` while the Run
    /// lived, its command died of SIGKILL, and no process but the Run's own was in that cgroup
    /// when it started.
    OomKiller {
        counter: String,
        before: u64,
        after: u64,
    },
    /// The host rebooted: its boot id is not the one the Claim was taken in. `booted_at`: when the
    /// new boot began, as the host reports it.
    Reboot {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        booted_at: Option<DateTime<Utc>>,
    },
    /// The Run's command died of `signal`, sent by someone the host cannot name; `oom` says
    /// what the memory cgroup's count says of the OOM killer.
    Signal { signal: i32, oom: OomSeen },
    /// A cancel request (`by`: who asked).
    Cancel { by: String },
    /// A person ended it by force (`recover --force`).
    Forced { by: String },
    /// Nothing on the host tells why.
    Unknown,
}

/// What the Run's memory cgroup says of the OOM killer for a command that died of a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OomSeen {
    /// Its count did not rise: not the OOM killer.
    NotIt,
    /// Its count rose, but other processes share the cgroup (or it is the root's, the whole
    /// host's): the OOM killer killed one of them, maybe this one. Not stated as the cause.
    Shared,
    /// It could not be read: the OOM killer is neither named nor ruled out.
    Unread,
}

/// An `oom_kill` count read from one counter file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OomMark {
    pub counter: String,
    pub count: u64,
    /// Processes other than the Run's own were in the cgroup (always so for the root's).
    #[serde(default)]
    pub shared: bool,
}

impl Cause {
    /// Why a Run's command that died of `signal` died, from the OOM marks taken when it started
    /// and when it died (the same counter both times, else nothing is concluded from them).
    pub fn of_signal(signal: i32, start: Option<&OomMark>, end: Option<&OomMark>) -> Cause {
        let oom = match (start, end) {
            (Some(s), Some(e)) if s.counter == e.counter => {
                let rose = signal == libc::SIGKILL && e.count > s.count;
                if rose && !s.shared && !e.shared {
                    return Cause::OomKiller {
                        counter: e.counter.clone(),
                        before: s.count,
                        after: e.count,
                    };
                }
                if rose {
                    OomSeen::Shared
                } else {
                    OomSeen::NotIt
                }
            }
            _ => OomSeen::Unread,
        };
        Cause::Signal { signal, oom }
    }

    /// Whether an end of `outcome` with this cause is a command killed under its Run (a signal or
    /// the OOM killer), rather than one that exited, was stopped on request, or a dead Run.
    pub fn killed_the_command(outcome: super::Outcome, cause: Option<&Cause>) -> bool {
        outcome == super::Outcome::Failed
            && matches!(cause, Some(Cause::OomKiller { .. } | Cause::Signal { .. }))
    }

    /// Why a Run its host proved dead for `reason` died: a reboot (the new boot began at
    /// `booted_at`, as the host reports it), else nothing on the host tells.
    pub fn of_death(reason: super::DeathReason, booted_at: Option<DateTime<Utc>>) -> Cause {
        match reason {
            super::DeathReason::Rebooted => Cause::Reboot { booted_at },
            super::DeathReason::PidGone | super::DeathReason::PidReused => Cause::Unknown,
        }
    }

    /// The checks a decoded cause must pass.
    pub(crate) fn validate(&self) -> Result<(), String> {
        match self {
            Cause::OomKiller { counter, .. } => field::path("cause.counter", counter),
            Cause::Cancel { by } | Cause::Forced { by } => field::name("cause.by", by),
            Cause::Reboot { .. } | Cause::Signal { .. } | Cause::Unknown => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(count: u64, shared: bool) -> OomMark {
        OomMark {
            counter: "/sys/fs/cgroup/memory/run/memory.oom_control".into(),
            count,
            shared,
        }
    }

    fn signal(signal: i32, oom: OomSeen) -> Cause {
        Cause::Signal { signal, oom }
    }

    #[test]
    fn a_sigkill_while_its_own_cgroups_oom_count_rose_is_the_oom_killer() {
        let c = Cause::of_signal(9, Some(&mark(1, false)), Some(&mark(2, false)));
        assert!(
            matches!(
                c,
                Cause::OomKiller {
                    before: 1,
                    after: 2,
                    ..
                }
            ),
            "{c:?}"
        );
    }

    #[test]
    fn a_signal_is_only_the_signal_unless_the_count_says_more() {
        let quiet = Cause::of_signal(9, Some(&mark(3, false)), Some(&mark(3, false)));
        assert_eq!(quiet, signal(9, OomSeen::NotIt));
        // a SIGTERM is never the OOM killer's, whatever the count did
        let term = Cause::of_signal(15, Some(&mark(3, false)), Some(&mark(4, false)));
        assert_eq!(term, signal(15, OomSeen::NotIt));
        // a count shared with other processes rose: maybe, never stated as the cause
        let shared = Cause::of_signal(9, Some(&mark(3, true)), Some(&mark(4, true)));
        assert_eq!(shared, signal(9, OomSeen::Shared));
        let unread = Cause::of_signal(9, None, Some(&mark(4, false)));
        assert_eq!(unread, signal(9, OomSeen::Unread));
        let moved = OomMark {
            counter: "/proc/vmstat".into(),
            count: 9,
            shared: true,
        };
        let other = Cause::of_signal(9, Some(&mark(1, false)), Some(&moved));
        assert_eq!(other, signal(9, OomSeen::Unread));
    }

    #[test]
    fn each_cause_reads_back_as_written() {
        let all = [
            Cause::OomKiller {
                counter: "/sys/fs/cgroup/x/memory.events".into(),
                before: 0,
                after: 1,
            },
            Cause::Reboot { booted_at: None },
            signal(9, OomSeen::Shared),
            Cause::Cancel { by: "alice".into() },
            Cause::Forced { by: "bob".into() },
            Cause::Unknown,
        ];
        for c in all {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<Cause>(&json).unwrap(), c, "{json}");
        }
    }
}
