//! Driving `pickup` from tests: a config giving hosts their capacity, one pickup pass with a
//! shell script as every Run's command, passes repeated until no Ready issue is left, and
//! reading which host said it took which issue. Used by `tests/it/pickup.rs` and
//! `tests/it/stale_reads.rs`; it asserts nothing about the passes' outcome itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{stdout, World, READY};

/// Given: a config file giving each host its capacity.
pub fn config(world: &World, hosts: &[(&str, u32)]) -> PathBuf {
    let mut text = String::from("hosts:\n");
    for (host, capacity) in hosts {
        text.push_str(&format!("  {host}:\n    capacity: {capacity}\n"));
    }
    let path = world.dir.path().join("thirdshift.yml");
    std::fs::write(&path, text).expect("config written");
    path
}

/// `pickup [extra] -- sh -c script` on `host` with `config`.
pub fn pickup(
    world: &World,
    host: &str,
    config: &Path,
    extra: &[&str],
    script: &str,
) -> tokio::process::Command {
    let mut cmd = world.cli(host);
    cmd.arg("--config")
        .arg(config)
        .arg("pickup")
        .args(extra)
        .args(["--", "sh", "-c", script]);
    cmd
}

/// Open issues still carrying the ready label, as GitHub holds them.
pub fn ready_left(world: &World, issues: &[u64]) -> usize {
    issues
        .iter()
        .filter(|n| world.labels(**n).iter().any(|l| l == READY))
        .count()
}

/// Hosts whose pickup printed `#N: taken`, by issue.
pub fn taken_lines(outs: &[(String, std::process::Output)]) -> BTreeMap<u64, Vec<String>> {
    let mut taken = BTreeMap::<u64, Vec<String>>::new();
    for (host, out) in outs {
        for line in stdout(out).lines() {
            let Some((n, rest)) = line.strip_prefix('#').and_then(|l| l.split_once(':')) else {
                continue;
            };
            if rest.trim_start().starts_with("taken") {
                let n: u64 = n.parse().expect("issue number");
                taken.entry(n).or_default().push(host.clone());
            }
        }
    }
    taken
}

/// Runs pickup on `host` again and again until no Ready issue is left (at most two minutes);
/// returns every pass's output, whatever its exit code.
pub async fn pickup_until_empty(
    world: &World,
    host: &str,
    config: &Path,
    script: &str,
    issues: &[u64],
) -> Vec<(String, std::process::Output)> {
    let mut outs = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while ready_left(world, issues) > 0 {
        assert!(
            Instant::now() < deadline,
            "{host}: Ready issues left after two minutes of pickup passes"
        );
        let out = pickup(world, host, config, &[], script)
            .output()
            .await
            .expect("pickup runs");
        let at_capacity = stdout(&out).contains("at capacity");
        outs.push((host.to_string(), out));
        if at_capacity {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    outs
}
