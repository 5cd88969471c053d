//! Where a thirdshift Command worked: its record names no worktree, but its Command log does.
//! thirdshift 0.19.0 makes each Run's worktree a sibling of its launch repository, named
//! `<repo>-<issue branch>` (`src/worktree.rs` `add`, `sibling`), and prints the step
//! `creating worktree <path> on <branch> from <source>` (`progress::step`, kept in the Command log
//! as `thirdshift: HH:MM:SS <message>`, `src/progress.rs`). The Command log lies beside the
//! record, named as the record up to its first `.` with `.log` (`src/logs/owner.rs`
//! `record_log`).
//!
//! A path is believed only when it is a git work tree whose checked-out branch is the Command's
//! Issue branch (`writers::branch_of`): the log is thirdshift's file, but a worktree is committed
//! to and pushed from, so it must be the Command's own. It reads files only.

use std::path::{Path, PathBuf};

/// The Command log beside the record at `record`.
pub fn command_log(record: &Path) -> Option<PathBuf> {
    let name = record.file_name()?.to_str()?;
    let stem = name.split('.').next().filter(|s| !s.is_empty())?;
    Some(record.with_file_name(format!("{stem}.log")))
}

/// What a Command log says of the Command's worktree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// A git work tree on the Command's Issue branch: the Command's own.
    Worktree(PathBuf),
    /// The log names none on the branch (the Command died before making one), or is not there.
    Nothing,
    /// A worktree the log names, or a log, that cannot be believed or read: left alone, with why.
    NotBelieved { path: String, why: String },
}

/// The worktree the Command log at `log` says was made on `branch` (the last one it names),
/// believed only if that path is a git work tree on `branch` now.
pub fn from_log(log: &Path, branch: &str) -> Named {
    let text = match std::fs::read_to_string(log) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Named::Nothing,
        Err(e) => {
            return Named::NotBelieved {
                path: String::new(),
                why: format!("the Command log {} cannot be read: {e}", log.display()),
            }
        }
    };
    let Some(path) = text.lines().filter_map(|l| created(l, branch)).next_back() else {
        return Named::Nothing;
    };
    let why = match super::writers::branch_of(&path) {
        Some(b) if b == branch => return Named::Worktree(path),
        Some(b) => format!("it is on {b}, not the Command's Issue branch {branch}"),
        None => format!("it is not a git work tree on {branch}"),
    };
    Named::NotBelieved {
        why: format!("{} was left alone: {why}", path.display()),
        path: path.display().to_string(),
    }
}

/// The path in a `creating worktree <path> on <branch> from <source>` line, for `branch`.
fn created(line: &str, branch: &str) -> Option<PathBuf> {
    let (_, rest) = line.split_once("creating worktree ")?;
    let (path, _) = rest.rsplit_once(&format!(" on {branch} from "))?;
    Some(PathBuf::from(path)).filter(|p| p.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_log_lies_beside_the_record_named_up_to_its_first_dot() {
        let record = Path::new("/l/a/b/commands/issue/7-20261204T100000+0000~0123.command.json");
        assert_eq!(
            command_log(record).unwrap(),
            Path::new("/l/a/b/commands/issue/7-20261204T100000+0000~0123.log")
        );
        let child = Path::new("/l/p/20261204T100000+0000~ab.issue-7.child.json");
        assert_eq!(
            command_log(child).unwrap(),
            Path::new("/l/p/20261204T100000+0000~ab.log")
        );
    }

    #[test]
    fn a_worktree_line_is_read_for_its_branch_only() {
        let line = "thirdshift: 10:00:03 creating worktree /w/my repo-issue-7 on issue-7 from \
                    origin/main";
        assert_eq!(
            created(line, "issue-7"),
            Some(PathBuf::from("/w/my repo-issue-7"))
        );
        assert_eq!(created(line, "issue-70"), None);
        assert_eq!(
            created(
                "thirdshift: 10:00:03 creating worktree rel on issue-7 from x",
                "issue-7"
            ),
            None,
            "a relative path is not believed"
        );
    }

    #[test]
    fn a_path_not_on_the_branch_is_not_believed() {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("7-x.log");
        let elsewhere = tmp.path().join("plain");
        std::fs::create_dir(&elsewhere).unwrap();
        let line = format!(
            "thirdshift: 10:00:03 creating worktree {} on issue-7 from origin/main\n",
            elsewhere.display()
        );
        std::fs::write(&log, line).unwrap();
        match from_log(&log, "issue-7") {
            Named::NotBelieved { path, why } => {
                assert_eq!(path, elsewhere.display().to_string());
                assert!(
                    why.ends_with("it is not a git work tree on issue-7"),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            from_log(&tmp.path().join("none.log"), "issue-7"),
            Named::Nothing
        );
    }
}
