//! How many processes of this process's memory cgroup the kernel's OOM killer killed: the mark a
//! Run takes when its command starts and again when it dies, so its end can say "the OOM killer"
//! as a fact (`protocol::record::Cause::of_signal`). The counter is the `oom_kill` line of the
//! cgroup's `memory.events` (cgroup v2; it counts processes of the cgroup killed by any OOM
//! killer, whichever limit was hit) or `memory.oom_control` (v1, the `memory` hierarchy), read
//! from `/proc/self/cgroup`; in the root cgroup, `/proc/vmstat`'s `oom_kill`, which then is
//! the same count. The command is CMD's child, so it is in the Run's cgroup unless something
//! moved it; the mark names its file, and marks of two files are never compared.
//!
//! Reads files only; never writes, never decides.

use std::path::{Path, PathBuf};

use crate::protocol::record::OomMark;

/// The OOM-kill count of this process's memory cgroup now, if it can be read. With `own`
/// (the Run's claim id, before its command starts): whether any process but this one and those
/// naming that claim id on their command line (its companion) is in the cgroup, so a count that
/// rises later may be another's kill (always so for the root cgroup's `/proc/vmstat`).
pub fn mark(own: Option<&str>) -> Option<OomMark> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let file = counter_file(&cgroups, Path::new("/sys/fs/cgroup"))?;
    let text = std::fs::read_to_string(&file).ok()?;
    let shared = match own {
        Some(claim_id) => shared(&file, claim_id),
        None => false,
    };
    Some(OomMark {
        count: oom_kill_of(&text)?,
        counter: file.display().to_string(),
        shared,
    })
}

/// Whether the cgroup whose counter is `file` holds a process not of the Run `claim_id`.
fn shared(file: &Path, claim_id: &str) -> bool {
    let Some(procs) = file
        .parent()
        .filter(|_| file != Path::new("/proc/vmstat"))
        .and_then(|dir| std::fs::read_to_string(dir.join("cgroup.procs")).ok())
    else {
        return true;
    };
    let me = std::process::id();
    let ours = |pid: u32| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        pid == me || String::from_utf8_lossy(&cmdline).contains(claim_id)
    };
    procs
        .lines()
        .filter_map(|l| l.trim().parse::<u32>().ok())
        .any(|pid| !ours(pid))
}

/// The file holding the `oom_kill` count of the memory cgroup `/proc/self/cgroup` names
/// (`cgroups`), under the cgroup mount `root`: the v1 `memory` hierarchy when there is one
/// (there the v2 line is an empty hybrid tree), else the v2 line.
pub fn counter_file(cgroups: &str, root: &Path) -> Option<PathBuf> {
    let entries: Vec<(&str, &str)> = cgroups
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some((controllers, path))
        })
        .collect();
    let v1 = entries
        .iter()
        .find(|(c, _)| c.split(',').any(|c| c == "memory"));
    let (path, dir, file) = match v1 {
        Some((_, path)) => (*path, root.join("memory"), "memory.oom_control"),
        None => {
            let (_, path) = entries.iter().find(|(c, _)| c.is_empty())?;
            (*path, root.to_path_buf(), "memory.events")
        }
    };
    let rel = relative(path);
    if rel.as_os_str().is_empty() {
        return Some(PathBuf::from("/proc/vmstat"));
    }
    Some(dir.join(rel).join(file))
}

fn relative(path: &str) -> PathBuf {
    PathBuf::from(path.trim_start_matches('/'))
}

/// The `oom_kill N` line's count in a `memory.events`, `memory.oom_control` or `/proc/vmstat`.
pub fn oom_kill_of(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_of_a_v1_memory_cgroup_a_v2_cgroup_and_the_root() {
        let root = Path::new("/sys/fs/cgroup");
        let v1 = "9:name=systemd:/\n4:memory:/process_api/0eb1\n1:cpu:/\n0::/\n";
        assert_eq!(
            counter_file(v1, root),
            Some(PathBuf::from(
                "/sys/fs/cgroup/memory/process_api/0eb1/memory.oom_control"
            ))
        );
        let v2 = "0::/user.slice/run-42.scope\n";
        assert_eq!(
            counter_file(v2, root),
            Some(PathBuf::from(
                "/sys/fs/cgroup/user.slice/run-42.scope/memory.events"
            ))
        );
        assert_eq!(
            counter_file("0::/\n", root),
            Some(PathBuf::from("/proc/vmstat"))
        );
        assert_eq!(
            counter_file("4:memory:/\n0::/\n", root),
            Some(PathBuf::from("/proc/vmstat"))
        );
        assert_eq!(counter_file("", root), None);
    }

    #[test]
    fn the_oom_kill_count_is_read_from_each_files_shape() {
        let events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(oom_kill_of(events), Some(1));
        let control = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!(oom_kill_of(control), Some(3));
        assert_eq!(oom_kill_of("pgfault 10\noom_kill 7\n"), Some(7));
        assert_eq!(oom_kill_of("oom 1\n"), None);
    }
}
