//! Finding this host's thirdshift Command records for one repository: thirdshift 0.19.0 keeps
//! each under `<logs dir>/<owner>/<repo>/commands/<kind>/` (`src/logs.rs` `root_under`,
//! `session_dir`; `src/logs/owner.rs` allocates `<subject><stamp>~<random>.log` and its record
//! beside it, `.command.json`, a Pickup's dispatched Runs as `.child.json`), the logs folder
//! `~/.thirdshift/logs` unless its config says otherwise (`src/config.rs`).
//!
//! It reads files and nothing else; a folder that is not there means thirdshift does not run
//! here, which is not an error.

use std::path::{Path, PathBuf};

use crate::protocol::thirdshift::{read, Found};

/// One record file found, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scanned {
    /// The record's path under the logs folder (`acme/widgets/commands/issue/…`): part of the
    /// Command's claim id, the same whichever way the folder is named.
    pub relative: String,
    pub path: PathBuf,
    pub found: Found,
}

/// thirdshift's default logs folder: `~/.thirdshift/logs`.
pub fn default_logs_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".thirdshift/logs"))
}

/// Every Command record of repository `owner/name` under `logs_dir`, by path; none when the
/// folder does not exist. A file that cannot be read is reported as broken.
pub fn commands(logs_dir: &Path, owner: &str, name: &str) -> Vec<Scanned> {
    let root = logs_dir.join(owner).join(name).join("commands");
    let Ok(kinds) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let repo = format!("{owner}/{name}");
    let mut out: Vec<Scanned> = kinds
        .flatten()
        .filter(|k| k.path().is_dir())
        .flat_map(|k| std::fs::read_dir(k.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .filter(|p| is_record(p))
        .map(|path| {
            let found = match std::fs::read(&path) {
                Ok(bytes) => read(&bytes, &repo),
                Err(e) => Found::Broken(format!("unreadable: {e}")),
            };
            let relative = path
                .strip_prefix(logs_dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            Scanned {
                relative,
                path,
                found,
            }
        })
        .collect();
    out.sort_by(|a, b| a.relative.cmp(&b.relative));
    out
}

fn is_record(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".command.json") || name.ends_with(".child.json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::thirdshift::tests::ticket_record;

    #[test]
    fn records_are_found_under_the_repositorys_commands_folders_and_nothing_else() {
        // given a logs folder with a Ticket record, a log beside it, a broken record, and a
        // record of another repository
        let logs = tempfile::tempdir().unwrap();
        let issue = logs.path().join("acme/widgets/commands/issue");
        std::fs::create_dir_all(&issue).unwrap();
        std::fs::write(
            issue.join("7-20261204T100000+0000~ab.command.json"),
            ticket_record(None, ""),
        )
        .unwrap();
        std::fs::write(issue.join("7-20261204T100000+0000~ab.log"), "log").unwrap();
        std::fs::write(issue.join("8-x~cd.command.json"), "{").unwrap();
        let other = logs.path().join("acme/gadgets/commands/issue");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("7-x.command.json"), ticket_record(None, "")).unwrap();
        // when this repository's records are scanned
        let found = commands(logs.path(), "acme", "widgets");
        // then the two records of acme/widgets are found, one a Command, one broken
        let names: Vec<&str> = found.iter().map(|s| s.relative.as_str()).collect();
        assert_eq!(
            names,
            [
                "acme/widgets/commands/issue/7-20261204T100000+0000~ab.command.json",
                "acme/widgets/commands/issue/8-x~cd.command.json"
            ]
        );
        assert!(matches!(found[0].found, Found::Command(_)));
        assert!(matches!(found[1].found, Found::Broken(_)));
        // and a logs folder that is not there is nothing at all
        assert!(commands(&logs.path().join("none"), "acme", "widgets").is_empty());
    }
}
