//! How many Runs this host carries at once (its capacity) and how many it carries now (its live
//! Claims). Capacity is the config's `hosts.NAME.capacity`, or else derived from this machine's
//! cores and memory by [`derived`]. Live Claims are this host's local records, across every
//! repository it serves, whose owning process the process table shows alive (or whose writers
//! still run). No GitHub here: `pickup` decides from this before it sends any request, and
//! `observe` reports it.

use crate::host::liveness::judge;
use crate::host::state::{LocalClaim, LocalStatus, StateDir};
use crate::host::table::ProcessTable;
use crate::protocol::config::Config;
use crate::protocol::record::Verdict;

const GIB: u64 = 1 << 30;
/// Logical CPUs per Run.
pub const CORES_PER_SLOT: usize = 2;
/// GiB of memory per Run.
pub const GIB_PER_SLOT: u64 = 4;

/// The capacity of a machine with `cores` usable CPUs and `mem_bytes` of memory:
/// `max(1, min(cores / 2, round(mem_GiB) / 4))`, divisions rounded down, memory rounded to the
/// nearest GiB first (a machine sold as 8 GiB reports a little less, the kernel keeps some).
/// A 4-core / 8 GB host gets 2.
pub fn derived(cores: usize, mem_bytes: u64) -> u32 {
    let by_cores = u64::try_from(cores / CORES_PER_SLOT).unwrap_or(u64::MAX);
    let gib = mem_bytes.saturating_add(GIB / 2) / GIB;
    let by_memory = gib / GIB_PER_SLOT;
    let slots = by_cores.min(by_memory).max(1);
    u32::try_from(slots).unwrap_or(u32::MAX)
}

/// This host's capacity: `hosts.<host>.capacity` from the config when it names the host, else
/// [`derived`] from this machine.
pub fn capacity(config: &Config, host: &str) -> u32 {
    match config.hosts.get(host) {
        Some(h) => h.capacity,
        None => derived(usable_cores(), total_memory()),
    }
}

/// Where a host's capacity came from, for people.
pub fn capacity_source(config: &Config, host: &str) -> &'static str {
    if config.hosts.contains_key(host) {
        "configured"
    } else {
        "derived from cores and memory"
    }
}

/// CPUs this process may use (affinity and cgroup quotas honoured); 1 when unknown.
fn usable_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The machine's total memory in bytes, or its cgroup's limit when that is lower; 0 when unknown.
fn total_memory() -> u64 {
    let Ok(mut system) = sysinfo::System::new() else {
        return 0;
    };
    system.refresh_memory();
    let total = system.total_memory();
    match system.cgroup_limits() {
        Some(limits) if limits.total_memory > 0 => total.min(limits.total_memory),
        _ => total,
    }
}

/// This host's live Claims: local records (of every repository in the state folder) that are
/// being posted or are active, whose owner `judge` finds alive or whose writers still run.
pub fn live_claims(state: &StateDir, table: &ProcessTable, boot_id: &str) -> Vec<LocalClaim> {
    state
        .all()
        .into_iter()
        .filter(|c| matches!(c.status, LocalStatus::Posting | LocalStatus::Active))
        .filter(|c| {
            matches!(
                judge(&c.record, boot_id, table),
                Verdict::Alive | Verdict::WritersAlive { .. }
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::table::ProcessEntry;
    use crate::protocol::config::HostConfig;
    use crate::protocol::record::claim::tests::sample_claim;

    const GB: u64 = 1_000_000_000;

    #[test]
    fn four_cores_and_eight_gigabytes_give_two_slots() {
        assert_eq!(derived(4, 8 * GIB), 2);
        // the kernel keeps some of an 8 GiB machine for itself
        assert_eq!(derived(4, 8 * GIB - 300 * (1 << 20)), 2);
    }

    #[test]
    fn the_scarcer_of_cores_and_memory_decides_and_never_below_one() {
        assert_eq!(derived(8, 16 * GIB), 4);
        assert_eq!(derived(16, 16 * GIB), 4, "memory-bound");
        assert_eq!(derived(2, 64 * GIB), 1, "core-bound");
        assert_eq!(derived(1, GB), 1, "a small machine still runs one");
        assert_eq!(derived(0, 0), 1, "unknown resources still run one");
        assert_eq!(derived(64, 256 * GIB), 32);
    }

    #[test]
    fn configured_capacity_wins_over_the_derived_one() {
        let mut config = Config::default();
        config.hosts.insert("h1".into(), HostConfig { capacity: 7 });
        assert_eq!(capacity(&config, "h1"), 7);
        assert_eq!(capacity_source(&config, "h1"), "configured");
        assert!(capacity(&config, "h2") >= 1);
        assert_eq!(
            capacity_source(&config, "h2"),
            "derived from cores and memory"
        );
    }

    fn local(claim_id: &str, pid: u32, status: LocalStatus, repo: &str) -> LocalClaim {
        let mut record = sample_claim();
        record.claim_id = claim_id.into();
        record.pid = pid;
        record.start_ticks = 100;
        record.session_id = None;
        record.boot_id = "boot".into();
        LocalClaim {
            repo: repo.into(),
            api_url: "http://x".into(),
            comment_id: None,
            status,
            record,
            salvage: None,
            finished: None,
            command: Vec::new(),
        }
    }

    #[test]
    fn live_claims_are_posting_or_active_records_with_a_live_owner_in_any_repository() {
        // given records in two repositories: live active, live posting, live but lost, live but
        // ended, and active with a dead owner
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::resolve(Some(dir.path())).unwrap();
        for c in [
            local("c-a", 10, LocalStatus::Active, "o/one"),
            local("c-b", 11, LocalStatus::Posting, "o/two"),
            local("c-c", 12, LocalStatus::Lost, "o/one"),
            local("c-d", 13, LocalStatus::Ended, "o/one"),
            local("c-e", 14, LocalStatus::Active, "o/two"),
        ] {
            state.save(&c).unwrap();
        }
        let entry = |pid| ProcessEntry {
            pid,
            start_ticks: 100,
            session_id: pid,
            parent_pid: 1,
            claim_id: None,
        };
        let table = ProcessTable::from_entries((10..=13).map(entry).collect());
        // when the live Claims are counted
        let mut ids: Vec<String> = live_claims(&state, &table, "boot")
            .into_iter()
            .map(|c| c.record.claim_id)
            .collect();
        ids.sort();
        // then only the live posting and active ones count, whatever their repository
        assert_eq!(ids, ["c-a", "c-b"]);
        // and after a reboot none does
        assert!(live_claims(&state, &table, "other-boot").is_empty());
    }
}
