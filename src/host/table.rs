//! A snapshot of this host's process table, read once per pass, so that every liveness question
//! about every Claim is answered from the same moment and judged without further IO.
//!
//! For each live process it keeps the PID, the exact start time in clock ticks (from
//! `/proc/PID/stat`, which tells a reused PID apart), the session id, the parent PID and the claim
//! id in its environment (`THIRDSHIFT_CLAIM_ID`, from `/proc/PID/environ`), when readable. It
//! reads `/proc` directly (two small files a process; sysinfo read more than that, and took half
//! as long again on a host with 2,000 processes). Zombies are left out: a zombie has exited and
//! writes nothing. [`ProcessTable::read_pids`] reads only some PIDs, without environments;
//! [`ProcessTable::read_environ_from`] reads environments only of processes started at or after
//! a given moment (a Run's marker is carried only by processes started after the Run).
//!
//! It gives facts, not verdicts (`liveness.rs` judges). It never counts the reading process as a
//! member of any session or carrier of any claim, so `observe` run from inside a Run cannot keep
//! that Run "alive". A read that cannot see this process itself is refused rather than returned:
//! an empty table would look like proof that every Run is gone.

use std::collections::BTreeMap;

use anyhow::Context as _;

use super::process::Stat;

/// The environment variable a Run gives CMD (and so every process CMD starts) naming its Claim.
pub const CLAIM_ENV: &str = "THIRDSHIFT_CLAIM_ID";

/// One live process as the table saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessEntry {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/PID/stat` field 22).
    pub start_ticks: u64,
    pub session_id: u32,
    pub parent_pid: u32,
    /// The value of `THIRDSHIFT_CLAIM_ID` in its environment; `None` when absent, empty, or the
    /// environment could not be read (another user's process).
    pub claim_id: Option<String>,
}

/// The live processes of this host at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessTable {
    entries: BTreeMap<u32, ProcessEntry>,
    /// The process that read the table: present in it, but never a writer of anything.
    reader: Option<u32>,
}

impl ProcessTable {
    /// Reads this host's process table straight from `/proc`: for every process its exact start
    /// ticks, state, session and parent (`/proc/PID/stat`) and its environment
    /// (`/proc/PID/environ`); nothing else.
    ///
    /// Fails when the table does not show the reading process itself: `/proc` is then unreadable
    /// or hidden, and nothing read from it could prove a process gone.
    pub fn read() -> anyhow::Result<ProcessTable> {
        Self::read_environ_from(0)
    }

    /// [`ProcessTable::read`], but environments are read only of processes started at or after
    /// `from_ticks` (clock ticks since boot); the others get no claim id. A Claim's marker
    /// (`THIRDSHIFT_CLAIM_ID`) is given only to CMD, which its Run started, and so reaches only
    /// processes started after the Claim's owner: with `from_ticks` at or below the earliest
    /// owner's start, `with_claim_env` answers as from a whole read, and a busy host's older
    /// processes (daemons, shells) cost one small read each instead of two.
    pub fn read_environ_from(from_ticks: u64) -> anyhow::Result<ProcessTable> {
        let reader = std::process::id();
        let dir = std::fs::read_dir("/proc").context("listing /proc")?;
        let entries = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| entry_of(pid, from_ticks))
            .map(|e| (e.pid, e))
            .collect();
        let table = ProcessTable {
            entries,
            reader: Some(reader),
        };
        anyhow::ensure!(
            table.get(reader).is_some(),
            "the process table read from /proc does not show this process (PID {reader}); \
             /proc is unreadable or hidden, so no process can be proven gone"
        );
        Ok(table)
    }

    /// A table of only the processes `pids` (and the reader), from `/proc/PID/stat` directly:
    /// exact start ticks, state, session and parent, but no environments (`claim_id` is `None`),
    /// so it answers "does this Run's process still run" and nothing about its writers. Cheap
    /// whatever the number of processes on the host; `observe` uses it to find live Runs and
    /// reads the whole table only for the others.
    pub fn read_pids(pids: impl IntoIterator<Item = u32>) -> anyhow::Result<ProcessTable> {
        let reader = std::process::id();
        let mut entries = BTreeMap::new();
        for pid in pids.into_iter().chain([reader]) {
            if entries.contains_key(&pid) {
                continue;
            }
            let Some(stat) = Stat::read(pid).filter(|s| !matches!(s.state, 'Z' | 'X' | 'x')) else {
                continue;
            };
            let entry = ProcessEntry {
                pid,
                start_ticks: stat.start_ticks,
                session_id: stat.session,
                parent_pid: stat.ppid,
                claim_id: None,
            };
            entries.insert(pid, entry);
        }
        anyhow::ensure!(
            entries.contains_key(&reader),
            "/proc/{reader}/stat is unreadable; /proc is hidden, so no process can be proven gone"
        );
        Ok(ProcessTable {
            entries,
            reader: Some(reader),
        })
    }

    /// A table built by hand (tests, simulations). No entry is treated as the reader.
    pub fn from_entries(entries: Vec<ProcessEntry>) -> ProcessTable {
        ProcessTable {
            entries: entries.into_iter().map(|e| (e.pid, e)).collect(),
            reader: None,
        }
    }

    /// The live process with this PID, the reader included.
    pub fn get(&self, pid: u32) -> Option<&ProcessEntry> {
        self.entries.get(&pid)
    }

    /// PIDs of the live processes of session `sid`, ascending, without the reader.
    pub fn in_session(&self, sid: u32) -> Vec<u32> {
        self.pids_where(|e| e.session_id == sid)
    }

    /// PIDs of the live processes whose environment names `claim_id`, ascending, without the
    /// reader. An empty `claim_id` matches nothing.
    pub fn with_claim_env(&self, claim_id: &str) -> Vec<u32> {
        if claim_id.is_empty() {
            return Vec::new();
        }
        self.pids_where(|e| e.claim_id.as_deref() == Some(claim_id))
    }

    /// Every live process, by ascending PID.
    pub fn iter(&self) -> impl Iterator<Item = &ProcessEntry> {
        self.entries.values()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn pids_where(&self, keep: impl Fn(&ProcessEntry) -> bool) -> Vec<u32> {
        self.entries
            .values()
            .filter(|e| Some(e.pid) != self.reader && keep(e))
            .map(|e| e.pid)
            .collect()
    }
}

/// The entry for one process, or `None` when it has exited since or is a zombie; its environment
/// is read only when it started at or after `environ_from` ticks.
fn entry_of(pid: u32, environ_from: u64) -> Option<ProcessEntry> {
    let stat = Stat::read(pid)?;
    if matches!(stat.state, 'Z' | 'X' | 'x') {
        return None;
    }
    // Another user's environment is unreadable: no claim id, as documented on the field.
    let environ = if stat.start_ticks >= environ_from {
        std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default()
    } else {
        Vec::new()
    };
    Some(ProcessEntry {
        pid,
        start_ticks: stat.start_ticks,
        session_id: stat.session,
        parent_pid: stat.ppid,
        claim_id: claim_in(&environ),
    })
}

/// The first `THIRDSHIFT_CLAIM_ID=…` of a NUL-separated environment (as `getenv` would see
/// it), if non-empty.
fn claim_in(environ: &[u8]) -> Option<String> {
    let prefix = format!("{CLAIM_ENV}=");
    environ
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
        .filter(|value| !value.is_empty())
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environments_are_read_only_of_processes_started_since_the_given_moment() {
        // given a process carrying a claim marker
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(CLAIM_ENV, "c-marked")
            .spawn()
            .expect("sleep starts");
        let pid = child.id();
        // spawn returns once the child's exec has replaced its memory, which can be before the
        // kernel has set up its new environment block: wait (with a deadline) until it shows
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let marked = |e: Vec<u8>| claim_in(&e).as_deref() == Some("c-marked");
        while !std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(marked) {
            assert!(
                std::time::Instant::now() < deadline,
                "no environment in 10 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let started = Stat::read(pid).expect("it runs").start_ticks;
        // when the table is read with environments from its start, and from just after it
        let from_start = ProcessTable::read_environ_from(started).expect("reads /proc");
        let after = ProcessTable::read_environ_from(started + 1).expect("reads /proc");
        let _ = child.kill();
        let _ = child.wait();
        // then the first finds its marker and the second did not read its environment
        assert_eq!(from_start.with_claim_env("c-marked"), vec![pid]);
        assert_eq!(after.get(pid).map(|e| e.claim_id.clone()), Some(None));
    }

    fn entry(pid: u32, session_id: u32, claim_id: Option<&str>) -> ProcessEntry {
        ProcessEntry {
            pid,
            start_ticks: 1000 + u64::from(pid),
            session_id,
            parent_pid: 1,
            claim_id: claim_id.map(str::to_string),
        }
    }

    #[test]
    fn queries_answer_from_the_entries_in_pid_order() {
        // given a hand-built table with two sessions and one claim carrier
        let table = ProcessTable::from_entries(vec![
            entry(30, 10, Some("c-1")),
            entry(10, 10, None),
            entry(20, 20, Some("c-2")),
        ]);
        // then each query finds exactly its processes, ascending
        assert_eq!(table.get(20).map(|e| e.session_id), Some(20));
        assert_eq!(table.get(99), None);
        assert_eq!(table.in_session(10), vec![10, 30]);
        assert_eq!(table.with_claim_env("c-1"), vec![30]);
        assert_eq!(table.with_claim_env(""), Vec::<u32>::new());
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn the_reader_is_present_but_never_a_writer() {
        // given a table read by PID 10, which is in session 10 and carries claim c-1
        let table = ProcessTable {
            reader: Some(10),
            ..ProcessTable::from_entries(vec![entry(10, 10, Some("c-1")), entry(11, 10, None)])
        };
        // then it can be looked up, but no session or claim counts it
        assert!(table.get(10).is_some());
        assert_eq!(table.in_session(10), vec![11]);
        assert_eq!(table.with_claim_env("c-1"), Vec::<u32>::new());
    }

    #[test]
    fn a_table_of_some_pids_sees_exactly_those_alive_with_their_identity() {
        // given this process and a PID that no process has
        let me = crate::host::ProcessIdentity::current();
        let none = u32::MAX - 7;
        // when only those are read
        let table = ProcessTable::read_pids([me.pid, none, me.pid]).expect("reads /proc");
        // then this process is there with its exact start ticks, and nothing else
        assert_eq!(
            table.get(me.pid).map(|e| e.start_ticks),
            Some(me.start_ticks)
        );
        assert_eq!(table.get(none), None);
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn claim_env_is_the_first_non_empty_exact_key() {
        let env = |vars: &[&str]| vars.join("\0").into_bytes();
        assert_eq!(
            claim_in(&env(&[
                "A=1",
                "THIRDSHIFT_CLAIM_ID=c-9",
                "THIRDSHIFT_CLAIM_ID=c-8"
            ])),
            Some("c-9".into())
        );
        assert_eq!(claim_in(&env(&["THIRDSHIFT_CLAIM_ID_X=c-9"])), None);
        assert_eq!(claim_in(&env(&["XTHIRDSHIFT_CLAIM_ID=c-9"])), None);
        assert_eq!(claim_in(&env(&["THIRDSHIFT_CLAIM_ID="])), None);
        assert_eq!(claim_in(&[]), None);
    }

    #[test]
    fn reading_this_host_sees_this_process_with_its_exact_identity() {
        // when this host's table is read
        let table = ProcessTable::read().expect("reads /proc");
        // then this process is in it with the start ticks /proc/self/stat gives, its session
        // and parent, yet is not counted in its own session
        let me = crate::host::ProcessIdentity::current();
        let stat = Stat::read(me.pid).expect("own stat");
        let entry = table.get(me.pid).expect("sees itself");
        assert_eq!(entry.start_ticks, me.start_ticks);
        assert_eq!(entry.session_id, stat.session);
        assert_eq!(entry.parent_pid, stat.ppid);
        assert!(!table.in_session(stat.session).contains(&me.pid));
        assert!(table.len() > 1, "sees other processes too");
    }
}
