//! The identity of this host as a claim record names it: host name (flag, `THIRDSHIFT_HOST` or
//! the system host name), machine id and boot id. A changed boot id is how a reboot is proven.

use std::path::Path;

/// Who this machine is, for claim records and host reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostIdentity {
    pub host: String,
    pub machine_id: String,
    pub boot_id: String,
}

impl HostIdentity {
    /// Detects this machine's identity; `name` (from `--host`/`THIRDSHIFT_HOST`/config) wins over
    /// the system host name.
    pub fn detect(name: Option<&str>) -> HostIdentity {
        let host = name
            .map(str::to_string)
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(system_hostname);
        HostIdentity {
            host,
            machine_id: read_first(&["/etc/machine-id", "/var/lib/dbus/machine-id"])
                .unwrap_or_else(|| "unknown".to_string()),
            boot_id: boot_id().unwrap_or_else(|| "unknown".to_string()),
        }
    }
}

/// The kernel's boot id: a new random value at every boot.
pub fn boot_id() -> Option<String> {
    read_first(&["/proc/sys/kernel/random/boot_id"])
}

/// When this machine booted: `btime` of `/proc/stat` (seconds since the epoch). The kernel
/// derives it from the clock and the uptime, so two reads may differ by a second: callers keep
/// the first value they recorded for a boot id rather than reading it again.
pub fn boot_time() -> Option<chrono::DateTime<chrono::Utc>> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let secs = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse::<i64>()
        .ok()?;
    chrono::DateTime::from_timestamp(secs, 0)
}

pub fn system_hostname() -> String {
    read_first(&["/proc/sys/kernel/hostname", "/etc/hostname"])
        .unwrap_or_else(|| "localhost".into())
}

fn read_first(paths: &[&str]) -> Option<String> {
    paths.iter().find_map(|p| {
        let text = std::fs::read_to_string(Path::new(p)).ok()?;
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_host_name_wins_over_the_system_name() {
        let id = HostIdentity::detect(Some("builder-7"));
        assert_eq!(id.host, "builder-7");
        assert!(!id.boot_id.is_empty());
    }

    #[test]
    fn boot_time_is_in_the_past() {
        let booted = boot_time().expect("this test needs Linux /proc/stat");
        assert!(booted < chrono::Utc::now());
    }

    #[test]
    fn boot_id_is_the_kernels_uuid_for_this_boot() {
        // what another program reads from the kernel for this boot
        let out = std::process::Command::new("cat")
            .arg("/proc/sys/kernel/random/boot_id")
            .output()
            .expect("cat runs");
        let kernel = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let id = boot_id().expect("this test needs Linux /proc");
        assert_eq!(id, kernel);
        let groups: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
    }
}
